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

// TestRestOutKeepsSharedProperties: behind an enricher, a rest-out keeps
// the map of the enricher's entries that the messages without properties
// share, as it is, rather than a copy for each: it never writes to what it
// keeps, and copies what it hands over (TestSharedPropertiesHandedOverByRestOut).
func TestRestOutKeepsSharedProperties(t *testing.T) {
	e := NewEngine(Config{})
	defer e.Close()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	ch, err := e.CreateChain("c")
	must(ch, err)
	must(ch.AddAdapter("rest-in", "src", nil))
	must(ch.AddMediator("enricher", "enrich", map[string]any{"site": "lab"}))
	must(ch.AddAdapter("rest-out", "out", nil))
	must(ch.Bind("src:out", "enrich:in", "direct", nil))
	must(ch.Bind("enrich:out", "out:in", "direct", nil))
	must(nil, ch.Start())
	for i := range 3 {
		must(nil, ch.Send("src", Message{Content: float64(i)}))
	}
	enrich, _ := ch.find("enrich")
	out, _ := ch.find("out")
	shared := mapAddr(enrich.impl.(*enricher).shared)
	for i, m := range out.impl.(*restOut).Retained() {
		if a := mapAddr(m.Properties); a != shared {
			t.Errorf("rest-out keeps message %d's properties at %#x, want the enricher's map at %#x", i, a, shared)
		}
	}
}
