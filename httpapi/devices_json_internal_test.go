package httpapi

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestAppendServices: a services array is written as encoding/json writes
// it, whether it was written before (the same array), is a shorter slice of
// an array written before, or comes after the memory of arrays was reset.
func TestAppendServices(t *testing.T) {
	shared := []string{"fr.liglab.adele.icasa.device.light.BinaryLight", "a \"quoted\" <name>", "é"}
	cases := [][]string{nil, {}, shared, shared, shared[:2], shared[:0], shared[1:], shared}
	for i := range maxServiceArrays + 10 {
		cases = append(cases, []string{fmt.Sprint("s", i)}, shared)
	}
	var lb listBuffer
	for i, ss := range cases {
		want, err := json.Marshal(ss)
		if err != nil {
			t.Fatal(err)
		}
		if got := lb.appendServices([]byte("x"), ss); string(got) != "x"+string(want) {
			t.Fatalf("case %d %q: wrote %s, want x%s", i, ss, got, want)
		}
	}
	if n := len(lb.services); n > maxServiceArrays {
		t.Errorf("%d arrays remembered, want at most %d", n, maxServiceArrays)
	}
}
