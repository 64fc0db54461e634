package mediation_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pervasim/pervasim/mediation"
)

// TestQueueCycleLockUpRefused replays the chain that locked up for good:
// in -> a, a -> b, a -> c (direct), then b -> a and c -> a over queues of
// capacity 16. The loop is refused at bind time, naming the cycle, and the
// chain that remains sends, stops, is deleted and its engine closes.
func TestQueueCycleLockUpRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSink(2)
		e := newTestEngine(t, s)
		ch := build(t, e, "c", adp("rest-in", "in", nil), med("passthrough", "a", nil), med("passthrough", "b", nil),
			med("passthrough", "c", nil), adp("sink", "out", nil),
			bind("in:out", "a:in", ""), bind("a:out", "b:in", ""), bind("a:out", "c:in", ""), bind("b:out", "out:in", ""))
		for _, from := range []string{"b:out", "c:out"} {
			_, err := ch.Bind(from, "a:in", "queue", map[string]any{"capacity": 16.0})
			if errKind(err) != "invalid" || !strings.Contains(err.Error(), "cycle a -> ") {
				t.Fatalf("Bind(%s, a:in, queue) = %v, want invalid naming the cycle", from, err)
			}
		}
		if err := ch.Start(); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if err := ch.Send("in", msg(i, nil)); err != nil {
				t.Fatal(err)
			}
		}
		s.wait(t)
		if err := ch.Stop(); err != nil {
			t.Fatal(err)
		}
		if err := e.DeleteChain("c"); err != nil {
			t.Fatal(err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// slowChain is in -> slow (a gate that waits for tokens) -> out, the gate
// behind a queue of capacity 1.
func slowChain(t *testing.T, cfg mediation.Config, tokens chan struct{}) (*mediation.Engine, *mediation.Chain) {
	s := newSink(100)
	cfg.Registry = gatedRegistry(t, s, tokens)
	e := mediation.NewEngine(cfg)
	ch := build(t, e, "c", adp("rest-in", "in", nil), med("gate", "g", nil), adp("sink", "out", nil),
		queueBind("in:out", "g:in", 1),
		bind("g:out", "out:in", ""), start)
	return e, ch
}

// TestFullQueueSendGivesUp: a send held back by a full queue gives up after
// the engine's SendTimeout, or when its context ends, with ErrBusy; its
// message is not taken, and it held no lock meanwhile: the chain answers,
// stops, is deleted and its engine closes while senders wait.
func TestFullQueueSendGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tokens := make(chan struct{})
		e, ch := slowChain(t, mediation.Config{SendTimeout: 3 * time.Second}, tokens)
		if err := ch.Send("in", msg(0, nil)); err != nil { // in the gate, and counted in the queue: full
			t.Fatal(err)
		}
		start := time.Now()
		err := ch.Send("in", msg(1, nil))
		if errKind(err) != "busy" || !strings.Contains(err.Error(), "stays full") {
			t.Fatalf("Send to a full queue = %v, want busy", err)
		}
		if waited := time.Since(start); waited != 3*time.Second {
			t.Errorf("Send gave up after %v, want the SendTimeout, 3s", waited)
		}

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- ch.SendContext(ctx, "in", msg(2, nil)) }()
		synctest.Wait()
		if _, err := ch.Info(); err != nil { // structural calls are not held up by the waiting sender
			t.Fatal(err)
		}
		cancel()
		if err := <-done; errKind(err) != "busy" {
			t.Errorf("SendContext after cancel = %v, want busy", err)
		}
		if q := mustComponent(t, ch, "g").Counters.Queue; q != 1 {
			t.Errorf("queue = %d, want 1: refused messages are not taken", q)
		}

		// Senders waiting while the chain stops, is deleted, the engine closes.
		for range 3 {
			go func() { done <- ch.Send("in", msg(3, nil)) }()
		}
		synctest.Wait()
		stopPastGate(t, ch, tokens)
		for range 3 {
			if err := <-done; errKind(err) != "conflict" {
				t.Errorf("a sender waiting when the chain stopped = %v, want conflict", err)
			}
		}
		if err := e.DeleteChain("c"); err != nil {
			t.Fatal(err)
		}
		e.Close()
	})
}

// TestFullQueueCloseWhileWaiting: Engine.Close finishes while a sender
// waits for room and a delivery is held in a component.
func TestFullQueueCloseWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tokens := make(chan struct{})
		e, ch := slowChain(t, mediation.Config{}, tokens)
		if err := ch.Send("in", msg(0, nil)); err != nil {
			t.Fatal(err)
		}
		sent := make(chan error)
		go func() { sent <- ch.Send("in", msg(1, nil)) }()
		synctest.Wait()
		closed := make(chan error)
		go func() { closed <- e.Close() }()
		synctest.Wait()
		tokens <- struct{}{}
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		if err := <-sent; errKind(err) != "conflict" {
			t.Errorf("Send waiting when the engine closed = %v, want conflict", err)
		}
	})
}

// diamonds builds n chained diamonds of direct bindings: in -> d0, then
// each di -> li, ri -> d(i+1); a message entering makes 2^n deliveries to
// the last.
func diamonds(t *testing.T, e *mediation.Engine, n int, linker string) *mediation.Chain {
	steps := []step{adp("rest-in", "in", nil), med("passthrough", "d0", nil), bind("in:out", "d0:in", "")}
	for i := range n {
		d, l, r, next := fmt.Sprint("d", i), fmt.Sprint("l", i), fmt.Sprint("r", i), fmt.Sprint("d", i+1)
		steps = append(steps, med("passthrough", l, nil), med("passthrough", r, nil), med("passthrough", next, nil),
			bind(d+":out", l+":in", linker), bind(d+":out", r+":in", linker), bind(l+":out", next+":in", linker), bind(r+":out", next+":in", linker))
	}
	steps = append(steps, adp("rest-out", "out", nil), bind(fmt.Sprint("d", n, ":out"), "out:in", ""), start)
	return build(t, e, "c", steps...)
}

// TestFanOutBomb: 26 chained diamonds would make 67 million deliveries of
// one message; the engine's MaxDeliveries stops them, Send says so with
// ErrBusy, and the work done is bounded.
func TestFanOutBomb(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{MaxDeliveries: 10_000})
	defer e.Close()
	ch := diamonds(t, e, 26, "")
	before := heapAfter()
	err := ch.Send("in", msg(1, nil))
	if grown := int64(heapAfter()) - int64(before); grown > 16<<20 {
		t.Errorf("the heap grew by %d bytes, want under 16 MiB", grown)
	}
	if errKind(err) != "busy" || !strings.Contains(err.Error(), "more than 10000 deliveries") {
		t.Fatalf("Send into 26 diamonds = %v, want busy", err)
	}
	var in uint64
	infos, _ := ch.Components()
	for _, c := range infos {
		in += c.Counters.In
	}
	if in > 10_001 {
		t.Errorf("the components received %d messages, want at most MaxDeliveries (+1 injected)", in)
	}
	// The chain still works for a message that stays within the bound.
	small := mediation.NewEngine(mediation.Config{MaxDeliveries: 1 << 13})
	defer small.Close()
	if err := diamonds(t, small, 10, "").Send("in", msg(1, nil)); err != nil {
		t.Errorf("Send into 10 diamonds (about 6000 deliveries) = %v, want nil", err)
	}
}

// TestFanOutBombThroughQueues: the bound follows the messages through queue
// bindings, so the deliveries stop there too, after Send has returned.
func TestFanOutBombThroughQueues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := mediation.NewEngine(mediation.Config{MaxDeliveries: 5_000})
		defer e.Close()
		ch := diamonds(t, e, 20, "queue")
		// The queues deliver while Send returns: the budget may be spent
		// by then (busy) or only after (nil).
		if err := ch.Send("in", msg(1, nil)); err != nil && errKind(err) != "busy" {
			t.Fatal(err)
		}
		synctest.Wait() // every queue goroutine is idle again: the work stopped
		var in uint64
		infos, _ := ch.Components()
		for _, c := range infos {
			in += c.Counters.In
		}
		if in > 5_001 {
			t.Errorf("the components received %d messages, want at most MaxDeliveries (+1 injected)", in)
		}
		if in < 4_500 { // 20 diamonds make a million deliveries: the fan-out runs until the bound (5,001 here)
			t.Errorf("the components received %d messages, want about MaxDeliveries", in)
		}
	})
}

// heapAfter returns the live heap after a collection.
func heapAfter() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestSplitterBomb: a separator that matches the empty string is refused;
// a message of more parts than max-parts is refused whole, with ErrBusy,
// without the memory of a million parts.
func TestSplitterBomb(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch, _ := e.CreateChain("c")
	for _, sep := range []string{"x*", "", "(?:)", "a?"} {
		if _, err := ch.AddMediator("splitter", "s", map[string]any{"separator": sep}); errKind(err) != "invalid" {
			t.Errorf("splitter with separator %q = %v, want invalid", sep, err)
		}
	}
	ch = build(t, e, "d", adp("rest-in", "in", nil), med("splitter", "s", map[string]any{"separator": ","}),
		adp("rest-out", "out", nil), bind("in:out", "s:in", ""), bind("s:out", "out:in", ""), start)
	before := heapAfter()
	err := ch.Send("in", msg(strings.Repeat("x,", 1<<20), nil))
	if errKind(err) != "busy" || !strings.Contains(err.Error(), "more than 10000 parts") {
		t.Fatalf("Send of a million parts = %v, want busy", err)
	}
	if grown := int64(heapAfter()) - int64(before); grown > 16<<20 {
		t.Errorf("the heap grew by %d bytes, want under 16 MiB", grown)
	}
	if ms, _ := ch.Messages("out"); len(ms) != 0 {
		t.Errorf("rest-out got %d parts, want none: the message is refused whole", len(ms))
	}
	if err := ch.Send("in", msg("a,b,c", nil)); err != nil {
		t.Errorf("Send of three parts = %v", err)
	}
}

// TestAggregatorBomb: a count larger than max-messages is refused; a group
// that never completes cannot hold more than max-messages messages or
// max-bytes bytes.
func TestAggregatorBomb(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch, _ := e.CreateChain("c")
	if _, err := ch.AddMediator("aggregator", "a", map[string]any{"count": 1e9}); errKind(err) != "invalid" {
		t.Errorf("aggregator with count 1e9 = %v, want invalid", err)
	}
	ch = build(t, e, "d", adp("rest-in", "in", nil), med("aggregator", "a", map[string]any{"max-bytes": 1 << 20}),
		adp("rest-out", "out", nil), bind("in:out", "a:in", ""), bind("a:out", "out:in", ""), start)
	props := func(id string, total int) map[string]any {
		return map[string]any{"correlation.id": id, "correlation.total": total}
	}
	if err := ch.Send("in", msg("x", props("huge", 1_000_000_000))); errKind(err) != "busy" {
		t.Errorf("a group of a billion = %v, want busy", err)
	}
	before := heapAfter()
	big := strings.Repeat("x", 64<<10)
	for i := range 200 { // 200 × 64 KiB = 12.5 MiB into groups that never complete
		if err := ch.Send("in", msg(big, props(fmt.Sprint("g", i), 2))); err != nil {
			t.Fatal(err)
		}
	}
	if grown := int64(heapAfter()) - int64(before); grown > 4<<20 {
		t.Errorf("the aggregator holds %d bytes more, want about its max-bytes, 1 MiB", grown)
	}
	if c := mustComponent(t, ch, "a").Counters; c.Dropped < 150 {
		t.Errorf("dropped = %d, want the oldest groups dropped", c.Dropped)
	}
}

// TestRestOutBomb: rest-out keeps at most max-bytes of messages.
func TestRestOutBomb(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "in", nil), adp("rest-out", "out", map[string]any{"capacity": 1000, "max-bytes": 1 << 20}),
		bind("in:out", "out:in", ""), start)
	before := heapAfter()
	big := strings.Repeat("y", 256<<10)
	for range 100 { // 25 MiB
		if err := ch.Send("in", msg(big, nil)); err != nil {
			t.Fatal(err)
		}
	}
	if grown := int64(heapAfter()) - int64(before); grown > 4<<20 {
		t.Errorf("rest-out holds %d bytes more, want about its max-bytes, 1 MiB", grown)
	}
	if ms, _ := ch.Messages("out"); len(ms) != 3 {
		t.Errorf("rest-out keeps %d messages of 256 KiB, want 3 within 1 MiB", len(ms))
	}
	if err := ch.Send("in", msg(strings.Repeat("z", 2<<20), nil)); errKind(err) != "busy" {
		t.Errorf("a message larger than max-bytes = %v, want busy", err)
	}
}

// TestStructureBounds: chains per engine, components and bindings per
// chain.
func TestStructureBounds(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{MaxChains: 2, MaxComponents: 3, MaxBindings: 1})
	defer e.Close()
	ch := build(t, e, "a", med("passthrough", "p", nil), med("passthrough", "q", nil), med("passthrough", "r", nil), bind("p:out", "q:in", ""))
	if _, err := ch.AddMediator("passthrough", "s", nil); errKind(err) != "busy" {
		t.Errorf("a fourth component = %v, want busy", err)
	}
	if _, err := ch.Copy("p", "s"); errKind(err) != "busy" {
		t.Errorf("a copy as fourth component = %v, want busy", err)
	}
	if _, err := ch.Bind("q:out", "r:in", "", nil); errKind(err) != "busy" {
		t.Errorf("a second binding = %v, want busy", err)
	}
	if _, err := e.CreateChain("b"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateChain("c"); errKind(err) != "busy" {
		t.Errorf("a third chain = %v, want busy", err)
	}
	if err := e.DeleteChain("b"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateChain("c"); err != nil {
		t.Errorf("a chain after one was deleted = %v", err)
	}
}

// TestBoundsAfterValidity: at a bound, what could never be added is
// invalid, not busy: busy asks the client to try again later.
func TestBoundsAfterValidity(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{MaxComponents: 2, MaxBindings: 1})
	defer e.Close()
	ch := build(t, e, "a", med("passthrough", "p", nil), med("passthrough", "q", nil), bind("p:out", "q:in", ""))
	if _, err := ch.AddAdapter("rest-out", "r", map[string]any{"capacity": -1.0}); errKind(err) != "invalid" {
		t.Errorf("a component with a bad property at the bound = %v, want invalid", err)
	}
	if _, err := ch.AddMediator("passthrough", "s", nil); errKind(err) != "busy" {
		t.Errorf("a valid third component = %v, want busy", err)
	}
	if _, err := ch.Bind("q:out", "p:in", "", nil); errKind(err) != "invalid" {
		t.Errorf("a binding closing a loop at the bound = %v, want invalid", err)
	}
	if _, err := ch.Bind("q:out", "p:in", "queue", map[string]any{"capacity": -1.0}); errKind(err) != "invalid" {
		t.Errorf("a binding with a bad property at the bound = %v, want invalid", err)
	}
	if info, err := ch.Info(); err != nil || len(info.Bindings) != 1 {
		t.Errorf("bindings after refusals = %v, %v; want 1", info.Bindings, err)
	}
}

// TestInOutAdapterIsTwoBorders: a chain may run out of an in-out adapter
// and back into it (Cilia's gui-adapter and endpoint adapters do): what
// reaches its in side leaves the chain, and what it emits while
// processing is dropped, so nothing loops; a loop of mediators behind it
// is still refused.
func TestInOutAdapterIsTwoBorders(t *testing.T) {
	reg := mediation.NewRegistry()
	got := make(chan mediation.Message, 10)
	err := reg.Register(mediation.Type{Name: "gui", Kind: mediation.KindAdapter, Pattern: mediation.PatternInOut, In: []string{"in"}, Out: []string{"out"},
		New: func(map[string]any, mediation.Env) (any, error) {
			return struct {
				mediation.ProcessorFunc
				mediation.InjectorFunc
			}{
				func(_ string, m mediation.Message, out mediation.Emitter) error {
					out.Emit("out", m) // would loop; dropped
					got <- m
					return nil
				},
				func(m mediation.Message, out mediation.Emitter) error { out.Emit("out", m); return nil },
			}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	e := mediation.NewEngine(mediation.Config{Registry: reg})
	defer e.Close()
	ch, _ := e.CreateChain("c")
	ch.AddAdapter("gui", "entry", nil)
	ch.AddMediator("passthrough", "hello", nil)
	ch.AddMediator("passthrough", "p2", nil)
	if _, err := ch.Bind("entry:out", "hello:in", "", nil); err != nil {
		t.Fatal(err)
	}
	// All direct, the loop would deadlock on the adapter: refused.
	if _, err := ch.Bind("hello:out", "entry:in", "", nil); !errors.Is(err, mediation.ErrDirectLoop) || !errors.Is(err, mediation.ErrInvalid) ||
		!strings.Contains(err.Error(), "loop entry -> hello -> entry") {
		t.Fatalf("a direct loop through the adapter = %v, want refused", err)
	}
	for _, b := range [][3]string{{"hello:out", "entry:in", "queue"}, {"hello:out", "p2:in", ""}} {
		if _, err := ch.Bind(b[0], b[1], b[2], nil); err != nil {
			t.Fatalf("Bind(%s, %s) = %v", b[0], b[1], err)
		}
	}
	if _, err := ch.Bind("p2:out", "hello:in", "", nil); err == nil || !strings.Contains(err.Error(), "cycle hello -> p2 -> hello") {
		t.Errorf("a loop of mediators behind the adapter = %v, want refused", err)
	}
	ch.Start()
	if err := ch.Send("entry", mediation.Message{Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if m.Content != "hi" {
			t.Errorf("the adapter's in side got %v", m)
		}
	case <-time.After(10 * time.Second): // a hang, not a speed check
		t.Fatal("the message did not come back to the adapter")
	}
	ch.Stop()
	if len(got) != 0 {
		t.Errorf("the adapter's in side got %d more messages: a loop", len(got))
	}
	info, _ := ch.Component("entry")
	if info.Counters.In != 2 || info.Counters.Out != 1 || info.Counters.Dropped != 1 {
		t.Errorf("entry's counters %+v, want in 2 (injected, returned), out 1, dropped 1 (its emit while processing)", info.Counters)
	}
}
