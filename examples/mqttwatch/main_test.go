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
publish {"properties":{"power_status":false}} on pervasim/default/devices/lamp/set
publish {"properties":{"power_status":true}} on pervasim/default/devices/lamp/set
  pervasim/default/devices/lamp/set (our own request)
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

// TestRunTwice runs the example twice against one broker, as against a
// running server: the second run finds the lamp already on, and must still
// see it turned on.
func TestRunTwice(t *testing.T) {
	stop, addr, err := startHome("default", "lamp")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for i := range 2 {
		var b strings.Builder
		if err := run(&b, addr, "default", "lamp"); err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, b.String())
		}
	}
}

// TestRunUnknownDevice checks that a device the home does not have is an
// error at once, not a wait for an event that cannot come.
func TestRunUnknownDevice(t *testing.T) {
	stop, addr, err := startHome("default", "lamp")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var b strings.Builder
	err = run(&b, addr, "default", "nosuch")
	if err == nil || !strings.Contains(err.Error(), `device "nosuch" does not exist`) {
		t.Fatalf("run = %v, want the home's error", err)
	}
}
