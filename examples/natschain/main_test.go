package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRun checks the example's output, line for line.
func TestRun(t *testing.T) {
	var b strings.Builder
	if err := run(&b, ""); err != nil {
		t.Fatal(err)
	}
	want := `the kitchen sends four readings; the office keeps those of 20 °C or more
office received 20 from kitchen (2 properties, among them the NATS id)
office received 23.25 from kitchen (2 properties, among them the NATS id)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}
