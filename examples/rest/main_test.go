package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRunTwice runs the example twice against one server: it cleans up
// after itself, so the second run prints the same as the first.
func TestRunTwice(t *testing.T) {
	base := startServer()
	want := `create the kitchen, a heater in it at power 0.8, and alice
heater-1 is in kitchen at power 0.8
alice is in kitchen
a power level of 2 is refused: 400 {"error":"property \"heater.powerLevel\" must be between 0 and 1, not 2","code":"invalid"}
chain demo: in -> tag (enricher, site=lab) -> out
send {"temperature":21.5} into in
out of the chain: {"messages":[{"content":{"temperature":21.5},"properties":{"site":"lab"}}]}
`
	for i := range 2 {
		var b strings.Builder
		if err := run(&b, base); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		if diff := cmp.Diff(want, b.String()); diff != "" {
			t.Errorf("run %d output (-want +got):\n%s", i+1, diff)
		}
	}
}
