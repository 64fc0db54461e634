package mediation_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pervasim/pervasim/mediation"
)

// drainPanics is a stateful mediator whose Drain panics.
type drainPanics struct{}

func (drainPanics) Process(_ string, m mediation.Message, out mediation.Emitter) error {
	out.Emit("out", m)
	return nil
}
func (drainPanics) Drain() []mediation.Held { panic("drain") }

// sendWithin sends m through ch and reports whether Send returned before
// the deadline (the goroutine is leaked otherwise).
func sendWithin(ch *mediation.Chain, id string, m mediation.Message, d time.Duration) (error, bool) {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		done <- ch.SendContext(ctx, id, m)
	}()
	select {
	case err := <-done:
		return err, true
	case <-time.After(2 * d):
		return nil, false
	}
}

// TestDrainPanicDuringReplace: a Drain that panics during Replace
// must not leave the chain wedged (Sends never returning, spinning).
func TestDrainPanicDuringReplace(t *testing.T) {
	s := newSink(-1)
	e := newTestEngine(t, s, mediatorType("drainpanic", drainPanics{}))
	ch := build(t, e, "c", adp("rest-in", "src", nil), med("drainpanic", "x", nil), med("passthrough", "y", nil),
		adp("sink", "o", nil), bind("src:out", "x:in", ""), bind("x:out", "o:in", ""), start)
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("Replace panicked: %v", p)
			}
		}()
		must(t, ch.Replace("x", "y"))
	}()
	err, ok := sendWithin(ch, "src", mediation.Message{Content: "after"}, time.Second)
	if !ok {
		t.Fatal("Send does not return after a Drain panicked during Replace")
	}
	must(t, err)
	if c := mustComponent(t, ch, "x").Counters; c.Errors != 1 {
		t.Errorf("x counted %d errors, want 1 (the panic of Drain)", c.Errors)
	}
	if got := contents(s.all()); len(got) != 1 || got[0] != "after" {
		t.Errorf("the sink got %v, want [after] (through y)", got)
	}
}

// periodPanics is a Periodic adapter whose Period panics.
type periodPanics struct{}

func (periodPanics) Period() time.Duration                   { panic("period") }
func (periodPanics) Tick(time.Time, mediation.Emitter) error { return nil }

// TestPeriodPanic: a Period that panics when the chain starts must not
// leave the component held nor the chain half started.
func TestPeriodPanic(t *testing.T) {
	s := newSink(-1)
	e := newTestEngine(t, s, mediation.Type{Name: "periodpanic", Kind: mediation.KindAdapter, Pattern: mediation.PatternInOnly, Out: []string{"out"},
		New: func(map[string]any, mediation.Env) (any, error) { return periodPanics{}, nil }})
	ch := build(t, e, "c", adp("periodpanic", "g", nil), adp("rest-in", "src", nil), adp("sink", "o", nil),
		bind("g:out", "o:in", ""), queueBind("src:out", "o:in", 4))
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("Start panicked: %v", p)
			}
		}()
		must(t, ch.Start())
	}()
	if _, ok := sendWithin(ch, "src", mediation.Message{Content: 1}, time.Second); !ok {
		t.Fatal("Send does not return")
	}
	s.waitN(t, 1)
	if c := mustComponent(t, ch, "g").Counters; c.Errors != 1 {
		t.Errorf("g counted %d errors, want 1", c.Errors)
	}
}

// checkPanics is a stateful mediator whose Check panics.
type checkPanics struct{ arm *atomic.Bool }

func (c checkPanics) Process(_ string, m mediation.Message, out mediation.Emitter) error {
	out.Emit("out", m)
	return nil
}
func (c checkPanics) Check() error {
	if c.arm.Load() {
		panic("check")
	}
	return nil
}

// TestCheckPanic: a Check that panics during a snapshot must not leave
// the component locked for ever.
func TestCheckPanic(t *testing.T) {
	s := newSink(-1)
	var arm atomic.Bool
	e := newTestEngine(t, s, mediatorType("checkpanic", checkPanics{&arm}))
	ch := build(t, e, "c", adp("rest-in", "src", nil), med("checkpanic", "x", nil),
		adp("sink", "o", nil), bind("src:out", "x:in", ""), bind("x:out", "o:in", ""), start)
	arm.Store(true)
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("Component panicked: %v", p)
			}
		}()
		if c := mustComponent(t, ch, "x"); c.State != mediation.ComponentInvalid {
			t.Errorf("state %s, want %s", c.State, mediation.ComponentInvalid)
		}
	}()
	arm.Store(false)
	if _, ok := sendWithin(ch, "src", mediation.Message{Content: "after"}, time.Second); !ok {
		t.Fatal("Send does not return after a Check panicked")
	}
}

// closePanics panics when closed.
type closePanics struct{}

func (closePanics) Process(string, mediation.Message, mediation.Emitter) error { return nil }
func (closePanics) Close() error                                               { panic("close") }

// TestClosePanicEngineClose: a component whose Close panics must not
// keep Engine.Close from freeing the other chains.
func TestClosePanicEngineClose(t *testing.T) {
	before := runtime.NumGoroutine()
	s := newSink(-1)
	r := testRegistry(t, s)
	register(t, r, mediation.Type{Name: "closepanic", Kind: mediation.KindMediator, In: []string{"in"},
		New: func(map[string]any, mediation.Env) (any, error) { return closePanics{}, nil }})
	e := mediation.NewEngine(mediation.Config{Registry: r})
	build(t, e, "a", med("closepanic", "x", nil), start)
	build(t, e, "b", adp("rest-in", "src", nil), adp("sink", "o", nil), queueBind("src:out", "o:in", 8), start)
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("Engine.Close panicked: %v", p)
			}
		}()
		e.Close()
	}()
	ch, _ := e.Chain("b")
	if err := ch.Send("src", mediation.Message{Content: 1}); err == nil {
		t.Error("chain b still accepts messages after Engine.Close")
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left after Engine.Close, %d before", n, before)
	}
}

// retainedPanics is a Retainer whose Retained panics.
type retainedPanics struct{}

func (retainedPanics) Process(string, mediation.Message, mediation.Emitter) error { return nil }
func (retainedPanics) Retained() []mediation.Message                              { panic("retained") }

// TestRetainedPanic: a Retained that panics makes Messages fail (invalid)
// and counts an error, as a panic of Inject does for Send; the panic does
// not reach the caller.
func TestRetainedPanic(t *testing.T) {
	e := newTestEngine(t, newSink(-1), mediatorType("retainedpanic", retainedPanics{}))
	ch := build(t, e, "c", med("retainedpanic", "x", nil), start)
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("Messages panicked: %v", p)
			}
		}()
		if _, err := ch.Messages("x"); errKind(err) != "invalid" {
			t.Errorf("Messages: %v, want invalid", err)
		}
	}()
	if c := mustComponent(t, ch, "x").Counters; c.Errors != 1 {
		t.Errorf("x counted %d errors, want 1", c.Errors)
	}
}
