package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRun checks the example's output, line for line.
func TestRun(t *testing.T) {
	var b strings.Builder
	if err := run(&b); err != nil {
		t.Fatal(err)
	}
	want := `chain sensors: in -> avg (moving-average, window 3) -> out
a moving-average with window 0 is refused: property window: 0: want an integer from 1 to 1000
send 10
send 20
send 30
send 40
widen the window to 4, live: the last 3 values carry over
send 50
what out received, oldest first:
  average 10.0 over 1 values
  average 15.0 over 2 values
  average 20.0 over 3 values
  average 30.0 over 3 values
  average 35.0 over 4 values
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}
