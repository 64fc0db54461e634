package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRun checks the example's output, line for line, against a home and
// broker of its own.
func TestRun(t *testing.T) {
	var b strings.Builder
	if err := run(&b, "", "default", "lamp"); err != nil {
		t.Fatal(err)
	}
	want := `subscribed to pervasim/default/#
publish {"properties":{"power_status":true}} on pervasim/default/devices/lamp/set
  pervasim/default/devices/lamp/set (our own request)
  pervasim/default/device-property-updated/lamp: power_status = true
publish {"state":"on fire"} on pervasim/default/devices/lamp/set
  pervasim/default/devices/lamp/set (our own request)
  pervasim/default/devices/lamp/error: state must be "activated" or "deactivated", not "on fire"
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}
