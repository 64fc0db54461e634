package mediation_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pervasim/pervasim/mediation"
)

func TestMisuse(t *testing.T) {
	s := newSink(-1)
	e := newTestEngine(t, s)
	if _, err := e.CreateChain(""); errKind(err) != "invalid" {
		t.Errorf("empty chain id: %v", err)
	}
	ch := build(t, e, "c", adp("rest-in", "src", nil), med("passthrough", "a", nil), med("passthrough", "b", nil), adp("sink", "o", nil))
	if _, err := e.CreateChain("c"); errKind(err) != "conflict" {
		t.Errorf("dup chain: %v", err)
	}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"empty id", func() error { _, err := ch.AddMediator("passthrough", "", nil); return err }(), "invalid"},
		{"dup id", func() error { _, err := ch.AddMediator("passthrough", "a", nil); return err }(), "conflict"},
		{"dup id other kind", func() error { _, err := ch.AddAdapter("rest-in", "a", nil); return err }(), "conflict"},
		{"unknown type", func() error { _, err := ch.AddMediator("nope", "z", nil); return err }(), "invalid"},
		{"kind mismatch", func() error { _, err := ch.AddMediator("rest-in", "z", nil); return err }(), "invalid"},
		{"missing out port", func() error { _, err := ch.Bind("a:nope", "b:in", "", nil); return err }(), "invalid"},
		{"missing in port", func() error { _, err := ch.Bind("a:out", "b:nope", "", nil); return err }(), "invalid"},
		{"missing comp", func() error { _, err := ch.Bind("zz:out", "b:in", "", nil); return err }(), "not found"},
		{"bad endpoint", func() error { _, err := ch.Bind("a", "b:in", "", nil); return err }(), "invalid"},
		{"empty endpoint", func() error { _, err := ch.Bind("", "", "", nil); return err }(), "invalid"},
		{"unknown linker", func() error { _, err := ch.Bind("a:out", "b:in", "carrier-pigeon", nil); return err }(), "invalid"},
		{"direct with props", func() error { _, err := ch.Bind("a:out", "b:in", "direct", map[string]any{"x": 1}); return err }(), "invalid"},
		{"queue bad capacity", func() error { _, err := ch.Bind("a:out", "b:in", "queue", map[string]any{"capacity": 0}); return err }(), "invalid"},
		{"self loop", func() error { _, err := ch.Bind("a:out", "a:in", "queue", nil); return err }(), "invalid"},
		{"replace self", ch.Replace("a", "a"), "invalid"},
		{"replace missing", ch.Replace("a", "zz"), "not found"},
		{"replace kind", ch.Replace("a", "o"), "invalid"},
		{"unbind missing", ch.Unbind("a:out", "b:in"), "not found"},
		{"remove missing", ch.RemoveComponent("", "zz"), "not found"},
		{"remove wrong kind", ch.RemoveComponent(mediation.KindAdapter, "a"), "not found"},
		{"send not started", ch.Send("src", mediation.Message{}), "conflict"},
		{"send missing", ch.Send("zz", mediation.Message{}), "not found"},
		{"send empty id", ch.Send("", mediation.Message{}), "invalid"},
		{"send non-injectable", ch.Send("a", mediation.Message{}), "invalid"},
		{"messages non-retainer", func() error { _, err := ch.Messages("a"); return err }(), "invalid"},
		{"update missing", func() error { _, err := ch.UpdateProperties("zz", nil); return err }(), "not found"},
		{"copy onto existing", func() error { _, err := ch.Copy("a", "b"); return err }(), "conflict"},
	}
	for _, c := range cases {
		if got := errKind(c.err); got != c.want {
			t.Errorf("%s: %v (%s), want %s", c.name, c.err, got, c.want)
		}
	}
	// Cycle A -> B -> A, through queues too.
	must(t, bind("a:out", "b:in", "queue")(ch))
	if _, err := ch.Bind("b:out", "a:in", "queue", nil); errKind(err) != "invalid" {
		t.Errorf("cycle through queues: %v", err)
	}
	if _, err := ch.Bind("b:out", "a:in", "", nil); errKind(err) != "invalid" {
		t.Errorf("cycle direct: %v", err)
	}
	if _, err := ch.Bind("a:out", "b:in", "", nil); errKind(err) != "conflict" {
		t.Errorf("dup binding other linker: %v", err)
	}
	// nil message parts go through.
	must(t, bind("b:out", "o:in", "")(ch))
	must(t, bind("src:out", "a:in", "")(ch))
	must(t, ch.Start())
	must(t, ch.Send("src", mediation.Message{}))
	s.waitN(t, 1)
	must(t, e.DeleteChain("c"))
	if err := ch.Send("src", mediation.Message{}); errKind(err) != "not found" {
		t.Errorf("send after delete: %v", err)
	}
	if _, err := ch.AddMediator("passthrough", "q", nil); errKind(err) != "not found" {
		t.Errorf("add after delete: %v", err)
	}
}

// TestBackpressureOfAFullQueue: a full queue before a consumer that does not
// consume makes Send wait SendTimeout then fail with ErrBusy, and TrySend
// fail at once, counted as dropped; a context ending frees the sender.
func TestBackpressureOfAFullQueue(t *testing.T) {
	gate := make(chan struct{})
	s := newSink(-1)
	r := testRegistry(t, s)
	register(t, r, mediation.Type{Name: "slow", Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"},
		New: func(map[string]any, mediation.Env) (any, error) {
			return mediation.ProcessorFunc(func(_ string, m mediation.Message, out mediation.Emitter) error {
				<-gate
				out.Emit("out", m)
				return nil
			}), nil
		}})
	e := mediation.NewEngine(mediation.Config{Registry: r, SendTimeout: 50 * time.Millisecond})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "src", nil), med("slow", "x", nil), adp("sink", "o", nil),
		queueBind("src:out", "x:in", 2), bind("x:out", "o:in", ""), start)
	accepted := 0
	var err error
	for range 10 {
		if err = ch.Send("src", mediation.Message{Content: accepted}); err != nil {
			break
		}
		accepted++
	}
	if errKind(err) != "busy" {
		t.Fatalf("send into a full queue: %v", err)
	}
	t.Logf("accepted %d before busy (capacity 2, one in delivery)", accepted)
	if err := ch.TrySend("src", mediation.Message{Content: -1}); errKind(err) != "busy" {
		t.Errorf("TrySend: %v", err)
	}
	if c := mustComponent(t, ch, "src").Counters; c.Dropped != 1 {
		t.Errorf("src dropped %d, want 1 (the TrySend)", c.Dropped)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- ch.SendContext(ctx, "src", mediation.Message{Content: -2}) }()
	cancel()
	if err := <-done; errKind(err) != "busy" {
		t.Errorf("SendContext cancelled: %v", err)
	}
	// What was accepted is delivered, in order, once the consumer runs.
	close(gate)
	got := s.waitN(t, accepted)
	for i, m := range got {
		if m.Content != i {
			t.Fatalf("order: %v", contents(got))
		}
	}
	if len(got) != accepted {
		t.Errorf("got %d, accepted %d", len(got), accepted)
	}
	must(t, ch.Stop())
}

// TestMisbehavingProcess: errors, panics and emits on unknown ports
// are counted; the chain goes on.
func TestMisbehavingProcess(t *testing.T) {
	s := newSink(-1)
	r := testRegistry(t, s)
	for _, st := range []bool{false, true} {
		name := "bad"
		if st {
			name = "bad-stateless"
		}
		register(t, r, mediation.Type{Name: name, Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"}, Stateless: st,
			New: func(map[string]any, mediation.Env) (any, error) {
				return mediation.ProcessorFunc(func(_ string, m mediation.Message, out mediation.Emitter) error {
					switch m.Content {
					case "err":
						return errors.New("boom")
					case "panic":
						out.Emit("out", mediation.Message{Content: "before-panic"})
						panic("boom")
					case "nope":
						out.Emit("nope", m)
						return nil
					}
					out.Emit("out", m)
					return nil
				}), nil
			}})
	}
	e := mediation.NewEngine(mediation.Config{Registry: r})
	defer e.Close()
	for _, typ := range []string{"bad", "bad-stateless"} {
		ch := build(t, e, typ, adp("rest-in", "src", nil), med(typ, "x", nil), adp("sink", "o", nil),
			bind("src:out", "x:in", ""), bind("x:out", "o:in", ""), start)
		for _, c := range []string{"ok", "err", "panic", "nope", "ok"} {
			if err := ch.Send("src", mediation.Message{Content: c}); err != nil {
				t.Errorf("%s: send %s: %v", typ, c, err)
			}
		}
		got := mustComponent(t, ch, "x").Counters
		want := mediation.Counters{In: 5, Out: 3, Dropped: 1, Errors: 2}
		if got != want {
			t.Errorf("%s: counters %+v, want %+v", typ, got, want)
		}
	}
}

// TestQueueOverflowInside: a component emitting past a queue's
// max-bytes: the excess is dropped, counted by the emitter, and Send fails
// with ErrBusy; nothing waits.
func TestQueueOverflowInside(t *testing.T) {
	gate := make(chan struct{})
	s := newSink(-1)
	e := newTestEngine(t, s,
		mediatorType("burst", mediation.ProcessorFunc(func(_ string, m mediation.Message, out mediation.Emitter) error {
			for i := range 100 {
				out.Emit("out", mediation.Message{Content: i})
			}
			return nil
		})),
		mediatorType("hold", mediation.ProcessorFunc(func(_ string, m mediation.Message, out mediation.Emitter) error {
			<-gate
			out.Emit("out", m)
			return nil
		})))
	ch := build(t, e, "c", adp("rest-in", "src", nil), med("burst", "b", nil), med("hold", "h", nil), adp("sink", "o", nil),
		bind("src:out", "b:in", ""), func(ch *mediation.Chain) error {
			_, err := ch.Bind("b:out", "h:in", "queue", map[string]any{"capacity": 200, "max-bytes": 1024})
			return err
		}, bind("h:out", "o:in", ""), start)
	err := ch.Send("src", mediation.Message{Content: "go"})
	if errKind(err) != "busy" {
		t.Errorf("send: %v, want busy", err)
	}
	close(gate)
	bc := mustComponent(t, ch, "b").Counters
	t.Logf("b counters %+v, send: %v", bc, err)
	got := s.waitN(t, int(100-bc.Dropped))
	if uint64(len(got))+bc.Dropped != 100 {
		t.Errorf("delivered %d + dropped %d != 100", len(got), bc.Dropped)
	}
}
