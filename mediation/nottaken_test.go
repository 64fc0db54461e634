package mediation_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pervasim/pervasim/mediation"
)

// TestErrNotTaken: the errors of Send that came before the message was
// taken in wrap ErrNotTaken beside their kind; those that came after it
// entered the chain (a bound reached on the way) do not, nor does an
// Injector's refusal unless it says so.
func TestErrNotTaken(t *testing.T) {
	refuse := func(err error) mediation.Type {
		return mediation.Type{Name: "refuse", Kind: mediation.KindAdapter, Pattern: mediation.PatternInOnly, Out: []string{"out"},
			New: func(map[string]any, mediation.Env) (any, error) {
				return mediation.InjectorFunc(func(mediation.Message, mediation.Emitter) error { return err }), nil
			}}
	}
	tests := []struct {
		name     string
		types    []mediation.Type
		steps    []step
		send     string
		kind     string
		notTaken bool
	}{
		{"sent", nil, []step{adp("rest-in", "in", nil), adp("rest-out", "out", nil), bind("in:out", "out:in", ""), start}, "in", "", false},
		{"no such component", nil, []step{adp("rest-in", "in", nil), start}, "nope", "not found", true},
		{"not injectable", nil, []step{adp("rest-out", "out", nil), start}, "out", "invalid", true},
		{"chain not started", nil, []step{adp("rest-in", "in", nil)}, "in", "conflict", true},
		{"a bound reached on the way", nil, []step{adp("rest-in", "in", nil), med("passthrough", "p", nil), med("passthrough", "q", nil),
			adp("rest-out", "out", nil), bind("in:out", "p:in", ""), bind("p:out", "q:in", ""), bind("q:out", "out:in", ""), start}, "in", "busy", false},
		{"refused, not taken", []mediation.Type{refuse(mediation.NotTaken(errors.New("later")))},
			[]step{adp("refuse", "r", nil), start}, "r", "invalid", true},
		{"refused", []mediation.Type{refuse(errors.New("no"))}, []step{adp("refuse", "r", nil), start}, "r", "invalid", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := mediation.NewRegistry()
			for _, typ := range tt.types {
				if err := reg.Register(typ); err != nil {
					t.Fatal(err)
				}
			}
			e := mediation.NewEngine(mediation.Config{Registry: reg, MaxDeliveries: 2})
			defer e.Close()
			ch := build(t, e, "c", tt.steps...)
			err := ch.Send(tt.send, mediation.Message{Content: 1})
			got := struct {
				Kind     string
				NotTaken bool
			}{errKind(err), errors.Is(err, mediation.ErrNotTaken)}
			want := struct {
				Kind     string
				NotTaken bool
			}{tt.kind, tt.notTaken}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Send = %v (-want +got):\n%s", err, diff)
			}
		})
	}
	// A queue ahead that stays full (TrySend), its consumer held; then a
	// deleted chain.
	hold := make(chan struct{})
	e := newTestEngine(t, nil, mediatorType("block", mediation.ProcessorFunc(func(string, mediation.Message, mediation.Emitter) error {
		<-hold
		return nil
	})))
	ch := build(t, e, "q", adp("rest-in", "in", nil), med("block", "b", nil), queueBind("in:out", "b:in", 2), start)
	var err error
	for i := 0; err == nil && i < 10; i++ {
		err = ch.TrySend("in", mediation.Message{Content: i})
	}
	close(hold)
	if errKind(err) != "busy" || !errors.Is(err, mediation.ErrNotTaken) {
		t.Errorf("TrySend into a full queue = %v, want busy and not taken", err)
	}
	must(t, e.DeleteChain("q"))
	if err := ch.Send("in", mediation.Message{}); !errors.Is(err, mediation.ErrNotTaken) {
		t.Errorf("Send into a deleted chain = %v, want not taken", err)
	}
}
