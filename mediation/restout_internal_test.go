package mediation

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// discard is an Emitter that ignores what it is given.
type discard struct{}

func (discard) Emit(string, Message) {}
func (discard) Drop(int)             {}

// TestRestOutPreview: what preview says a rest-out will keep of messages
// handed over to it is what it keeps once it processes them, for every
// capacity and max-bytes, with messages too large to keep among them.
func TestRestOutPreview(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		capacity, maxBytes := 1+rng.IntN(6), 1024+rng.IntN(4096)
		r := &restOut{buf: make([]Message, capacity), sizes: make([]int, capacity), maxBytes: maxBytes}
		msg := func(i int) Message {
			return Message{Content: map[string]any{"i": i, "pad": strings.Repeat("x", rng.IntN(2*maxBytes/3))}}
		}
		for i := range rng.IntN(8) {
			_ = r.Process("in", msg(i), discard{})
		}
		var hs []Held
		for i := range rng.IntN(8) {
			hs = append(hs, Held{Port: "in", Message: msg(100 + i)})
		}
		want := r.preview(hs)
		for _, h := range hs {
			_ = r.Process("in", h.Message, discard{})
		}
		if diff := cmp.Diff(r.Retained(), want); diff != "" {
			t.Fatalf("capacity %d, max-bytes %d: preview (-kept +previewed):\n%s", capacity, maxBytes, diff)
		}
	}
}
