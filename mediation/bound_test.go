package mediation_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pervasim/pervasim/mediation"
)

// fakeEmitter is an Emitter that is not the runtime's.
type fakeEmitter struct{}

func (fakeEmitter) Emit(string, mediation.Message) {}
func (fakeEmitter) Drop(int)                       {}

// TestBound: what mediation.Bound answers inside a component's call, for
// a port with and without bindings, after Replace handed them over and
// after Unbind took them, on the in side of an in-out adapter, and for an
// Emitter of the caller's.
func TestBound(t *testing.T) {
	var got []bool
	probe := func(out mediation.Emitter) { got = append(got, mediation.Bound(out, "out")) }
	reg := mediation.NewRegistry()
	err := reg.Register(mediation.Type{Name: "probe", Kind: mediation.KindAdapter, Pattern: mediation.PatternInOut, In: []string{"in"}, Out: []string{"out"},
		New: func(map[string]any, mediation.Env) (any, error) {
			return struct {
				mediation.ProcessorFunc
				mediation.InjectorFunc
			}{
				func(_ string, _ mediation.Message, out mediation.Emitter) error { probe(out); return nil },
				func(_ mediation.Message, out mediation.Emitter) error { probe(out); return nil },
			}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	e := mediation.NewEngine(mediation.Config{Registry: reg})
	defer e.Close()
	ch := build(t, e, "c",
		adp("probe", "old", nil), adp("probe", "new", nil), adp("probe", "lone", nil), adp("rest-in", "src", nil),
		med("passthrough", "p", nil),
		bind("old:out", "p:in", ""), bind("src:out", "lone:in", ""), start)
	send := func(id string) {
		t.Helper()
		if err := ch.Send(id, mediation.Message{Content: 1}); err != nil {
			t.Fatalf("send to %s: %v", id, err)
		}
	}
	send("old")  // bound
	send("lone") // no binding from its out port
	send("src")  // reaches lone's in side: its emits are dropped
	must(t, ch.Replace("old", "new"))
	send("old") // handed its binding over
	send("new")
	must(t, ch.Unbind("new:out", "p:in"))
	send("new")
	if diff := cmp.Diff([]bool{true, false, false, false, true, false}, got); diff != "" {
		t.Errorf("Bound in each call (-want +got):\n%s", diff)
	}
	if !mediation.Bound(fakeEmitter{}, "out") {
		t.Error("Bound(an Emitter of the caller's) = false, want true")
	}
}
