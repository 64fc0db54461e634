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
	want := `The console adapter prints sentences as "<chain>/<adapter> <message>";
correlation.id names the sentence a word came from.
send "hello world"
words/print {"content":["bonjour","world"],"properties":{"correlation.id":"words/split.1-1"}}
send "hello"
swap the translator fr for fr2, which also knows world=monde
send "hello world"
words/print {"content":["bonjour","monde"],"properties":{"correlation.id":"words/split.1-3"}}
kept by the rest-out adapter single: bonjour
the chain's bindings now:
  in:out -> split:in (direct)
  split:out -> fr2:in (direct)
  fr2:out -> route:in (direct)
  route:multi -> join:in (direct)
  route:default -> single:in (direct)
  join:out -> print:in (direct)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}
