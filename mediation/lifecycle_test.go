package mediation_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"github.com/pervasim/pervasim/mediation"
)

// gatedRegistry adds a "gate" mediator whose instances wait for a token on
// tokens before forwarding each message.
func gatedRegistry(t *testing.T, s *sink, tokens chan struct{}) *mediation.Registry {
	r := testRegistry(t, s)
	err := r.Register(mediation.Type{
		Name: "gate", Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"},
		New: func(map[string]any, mediation.Env) (any, error) {
			return mediation.ProcessorFunc(func(_ string, m mediation.Message, out mediation.Emitter) error {
				<-tokens
				out.Emit("out", m)
				return nil
			}), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// stopPastGate stops ch while a delivery waits in a gate of gatedRegistry:
// Stop waits for it, and one token lets it finish. It runs inside a
// synctest bubble.
func stopPastGate(t *testing.T, ch *mediation.Chain, tokens chan struct{}) {
	t.Helper()
	stopped := make(chan error)
	go func() { stopped <- ch.Stop() }()
	synctest.Wait() // Stop waits for the delivery in progress
	tokens <- struct{}{}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}

func TestLifecycleStates(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch := build(t, e, "c")
	steps := []struct {
		name string
		op   func() error
		want string
	}{
		{"new", nil, mediation.StateIdle},
		{"stop idle", ch.Stop, mediation.StateStopped},
		{"stop stopped", ch.Stop, mediation.StateStopped},
		{"start", ch.Start, mediation.StateStarted},
		{"start started", ch.Start, mediation.StateStarted},
		{"stop", ch.Stop, mediation.StateStopped},
		{"restart", ch.Start, mediation.StateStarted},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.op != nil {
				if err := st.op(); err != nil {
					t.Fatal(err)
				}
			}
			info, _ := ch.Info()
			if diff := cmp.Diff(st.want, info.State); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStopKeepsQueuedMessages: stopping lets the queue finish the message
// it is delivering, keeps the others queued, and Start resumes them in order.
func TestStopKeepsQueuedMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tokens := make(chan struct{})
		s := newSink(5)
		e := mediation.NewEngine(mediation.Config{Registry: gatedRegistry(t, s, tokens)})
		defer e.Close()
		ch := build(t, e, "c", adp("rest-in", "a", nil), med("gate", "g", nil), adp("sink", "o", nil),
			bind("a:out", "g:in", "queue"), bind("g:out", "o:in", ""), start)
		for i := range 5 {
			if err := ch.Send("a", msg(i, nil)); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait() // the queue is delivering message 0, blocked in the gate
		stopPastGate(t, ch, tokens)
		if diff := cmp.Diff([]any{0}, contents(s.all())); diff != "" {
			t.Errorf("delivered before the stop completed (-want +got):\n%s", diff)
		}
		if q := mustComponent(t, ch, "g").Counters.Queue; q != 4 {
			t.Errorf("queue of g after Stop = %d, want 4", q)
		}
		if err := ch.Send("a", msg(99, nil)); errKind(err) != "conflict" {
			t.Errorf("Send to a stopped chain: %v, want conflict", err)
		}
		// Structure can change while stopped; the queue stays.
		if _, err := ch.AddAdapter("rest-out", "late", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := ch.Bind("g:out", "late:in", "queue", nil); err != nil {
			t.Fatal(err)
		}
		if err := ch.Start(); err != nil {
			t.Fatal(err)
		}
		for range 4 {
			tokens <- struct{}{}
		}
		s.wait(t)
		if diff := cmp.Diff([]any{0, 1, 2, 3, 4}, contents(s.all())); diff != "" {
			t.Errorf("delivered after restart (-want +got):\n%s", diff)
		}
		synctest.Wait()
		ms, _ := ch.Messages("late")
		if diff := cmp.Diff([]any{1, 2, 3, 4}, contents(ms)); diff != "" {
			t.Errorf("binding added while stopped (-want +got):\n%s", diff)
		}
	})
}

// closeCounter is a passthrough mediator that counts its Close calls.
type closeCounter struct{ closes atomic.Int32 }

func (c *closeCounter) Process(_ string, m mediation.Message, out mediation.Emitter) error {
	out.Emit("out", m)
	return nil
}

func (c *closeCounter) Close() error { c.closes.Add(1); return nil }

// Check fails once the implementation is closed: nobody should ask it.
func (c *closeCounter) Check() error {
	if c.closes.Load() > 0 {
		return errors.New("asked after Close")
	}
	return nil
}

// TestEngineCloseFreesWhatChainsHold: Close discards what queues hold
// (counted as dropped), closes every io.Closer implementation once (not
// again when the chain is deleted afterwards), and leaves the chains to be
// read, not changed.
func TestEngineCloseFreesWhatChainsHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tokens := make(chan struct{})
		s := newSink(0)
		r := gatedRegistry(t, s, tokens)
		closer := &closeCounter{}
		if err := r.Register(mediation.Type{Name: "closer", Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"},
			New: func(map[string]any, mediation.Env) (any, error) { return closer, nil }}); err != nil {
			t.Fatal(err)
		}
		e := mediation.NewEngine(mediation.Config{Registry: r})
		ch := build(t, e, "c", adp("rest-in", "a", nil), med("gate", "g", nil), med("closer", "k", nil), adp("sink", "o", nil),
			bind("a:out", "g:in", "queue"), bind("g:out", "k:in", ""), bind("k:out", "o:in", "queue"), start)
		for i := range 5 {
			if err := ch.Send("a", msg(i, nil)); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait() // message 0 in the gate, 4 queued
		stopPastGate(t, ch, tokens)
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // no goroutine of the engine is left to run
		g := mustComponent(t, ch, "g")
		if g.Counters.Queue != 0 || g.Counters.Dropped != 4 || g.Counters.In != 1 {
			t.Errorf("the gate's counters after Close = %+v, want in 1, queue 0, dropped 4", g.Counters)
		}
		if n := closer.closes.Load(); n != 1 {
			t.Errorf("the closer was closed %d times by Engine.Close, want 1", n)
		}
		if k := mustComponent(t, ch, "k"); k.State != mediation.ComponentStopped {
			t.Errorf("the closed component's state = %q, want stopped (its implementation was asked to check)", k.State)
		}
		changes := map[string]func() error{
			"AddMediator":      func() error { _, err := ch.AddMediator("passthrough", "p", nil); return err },
			"RemoveComponent":  func() error { return ch.RemoveComponent("", "k") },
			"UpdateProperties": func() error { _, err := ch.UpdateProperties("k", map[string]any{"x": 1.0}); return err },
			"SetProperties":    func() error { _, err := ch.SetProperties("k", nil); return err },
			"Copy":             func() error { _, err := ch.Copy("k", "k2"); return err },
			"Bind":             func() error { _, err := ch.Bind("a:out", "k:in", "queue", nil); return err },
			"Unbind":           func() error { return ch.Unbind("k:out", "o:in") },
			"Replace":          func() error { return ch.Replace("g", "k") },
			"Start":            ch.Start,
		}
		for name, change := range changes {
			if err := change(); errKind(err) != "conflict" {
				t.Errorf("%s after Close: %v, want conflict", name, err)
			}
		}
		info, err := ch.Info()
		if err != nil || len(info.Mediators) != 2 || len(info.Bindings) != 3 {
			t.Errorf("Info after Close = %d mediators, %d bindings, %v; want 2, 3, nil", len(info.Mediators), len(info.Bindings), err)
		}
		if err := e.DeleteChain("c"); err != nil {
			t.Fatal(err)
		}
		if n := closer.closes.Load(); n != 1 {
			t.Errorf("the closer was closed %d times after Engine.Close and DeleteChain, want 1", n)
		}
	})
}

// TestBackpressure: a full queue blocks the sender until there is room.
func TestBackpressure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tokens := make(chan struct{})
		s := newSink(4)
		e := mediation.NewEngine(mediation.Config{Registry: gatedRegistry(t, s, tokens)})
		defer e.Close()
		ch := build(t, e, "c", adp("rest-in", "a", nil), med("gate", "g", nil), adp("sink", "o", nil),
			queueBind("a:out", "g:in", 2),
			bind("g:out", "o:in", ""), start)
		// Message 0 is in the gate and still counts, 1 fills the queue: the third Send blocks.
		var returned [4]bool
		go func() {
			for i := range 4 {
				ch.Send("a", msg(i, nil))
				returned[i] = true
			}
		}()
		synctest.Wait()
		if diff := cmp.Diff([4]bool{true, true, false, false}, returned); diff != "" {
			t.Errorf("sends returned (-want +got):\n%s", diff)
		}
		tokens <- struct{}{}
		synctest.Wait()
		if diff := cmp.Diff([4]bool{true, true, true, false}, returned); diff != "" {
			t.Errorf("sends returned after one delivery (-want +got):\n%s", diff)
		}
		for range 3 {
			tokens <- struct{}{}
		}
		s.wait(t)
		synctest.Wait()
		if !returned[3] {
			t.Error("last Send did not return")
		}
	})
}

// TestStopReleasesWaitingSenders: a sender waiting for room in a full queue
// (holding no lock) is released by Stop, its message not taken (conflict:
// the chain no longer runs), and later Sends are refused. What was queued
// stays for the next Start.
func TestStopReleasesWaitingSenders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tokens := make(chan struct{})
		s := newSink(4)
		e := mediation.NewEngine(mediation.Config{Registry: gatedRegistry(t, s, tokens)})
		defer e.Close()
		ch := build(t, e, "c", adp("rest-in", "a", nil), med("passthrough", "p", nil), med("gate", "g", nil), adp("sink", "o", nil),
			bind("a:out", "p:in", ""),
			queueBind("p:out", "g:in", 2),
			bind("g:out", "o:in", ""), start)
		sendErr := make(chan error, 4)
		go func() {
			for i := range 4 {
				sendErr <- ch.Send("a", msg(i, nil))
			}
		}()
		synctest.Wait() // 0 in the gate and 1 queued (capacity 2, the message being delivered counts), Send(2) waiting for room
		stopPastGate(t, ch, tokens)
		synctest.Wait()
		for i, want := range []string{"", "", "conflict", "conflict"} {
			if got := errKind(<-sendErr); got != want {
				t.Errorf("Send(%d) error kind = %q, want %q", i, got, want)
			}
		}
		if q := mustComponent(t, ch, "g").Counters.Queue; q != 1 {
			t.Errorf("queue of g after Stop = %d, want 1", q)
		}
		ch.Start()
		go func() {
			for i := 2; i < 4; i++ {
				if err := ch.Send("a", msg(i, nil)); err != nil { // 3 waits until the queue has room
					t.Error(err)
				}
			}
		}()
		for range 3 {
			tokens <- struct{}{}
		}
		s.wait(t)
		if diff := cmp.Diff([]any{0, 1, 2, 3}, contents(s.all())); diff != "" {
			t.Errorf("delivered (-want +got):\n%s", diff)
		}
	})
}

// TestDeleteStops: deleting a started chain stops its goroutines (synctest
// fails on any goroutine left behind) and discards its queues.
func TestDeleteStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tokens := make(chan struct{})
		s := newSink(1)
		e := mediation.NewEngine(mediation.Config{Registry: gatedRegistry(t, s, tokens)})
		ch := build(t, e, "c", adp("rest-in", "a", nil), med("gate", "g", nil), adp("sink", "o", nil),
			bind("a:out", "g:in", "queue"), bind("g:out", "o:in", "queue"), start)
		for i := range 3 {
			ch.Send("a", msg(i, nil))
		}
		synctest.Wait()
		deleted := make(chan error)
		go func() { deleted <- e.DeleteChain("c") }()
		synctest.Wait()
		tokens <- struct{}{}
		if err := <-deleted; err != nil {
			t.Fatal(err)
		}
		if got := ch.State(); got != mediation.StateStopped {
			t.Errorf("state of a deleted chain = %q, want stopped", got)
		}
		if err := ch.Send("a", msg(9, nil)); errKind(err) != "not found" {
			t.Errorf("Send to a deleted chain: %v, want not found", err)
		}
		if diff := cmp.Diff([]string{}, e.Chains()); diff != "" {
			t.Errorf("chains (-want +got):\n%s", diff)
		}
		e.Close()
	})
}

// TestAddWhileStarted: components and bindings added to a started chain
// work at once; a periodic one starts ticking.
func TestAddWhileStarted(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch := build(t, e, "c", start, adp("rest-in", "a", nil), med("enricher", "e", props{"k": "v"}), adp("rest-out", "o", nil),
		bind("a:out", "e:in", ""), bind("e:out", "o:in", ""))
	if err := ch.Send("a", msg(1, nil)); err != nil {
		t.Fatal(err)
	}
	ms, _ := ch.Messages("o")
	if diff := cmp.Diff([]mediation.Message{msg(1, props{"k": "v"})}, ms); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
