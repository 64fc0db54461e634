package mediation_test

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pervasim/pervasim/mediation"
)

// waitDrained waits, up to the test's patience, until nothing is queued
// ahead of component id.
func waitDrained(t *testing.T, ch *mediation.Chain, id string) {
	t.Helper()
	deadline := time.Now().Add(patience(t))
	for mustComponent(t, ch, id).Counters.Queue != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the queue to %s does not drain", id)
		}
		runtime.Gosched()
	}
}

// droppedWithoutErrors returns the messages the components ids dropped,
// and fails the test for any error they counted.
func droppedWithoutErrors(t *testing.T, ch *mediation.Chain, ids ...string) uint64 {
	t.Helper()
	var dropped uint64
	for _, id := range ids {
		c := mustComponent(t, ch, id).Counters
		dropped += c.Dropped
		if c.Errors != 0 {
			t.Errorf("%s counted %d errors", id, c.Errors)
		}
	}
	return dropped
}

// patience is how long a test waits for something that should happen at
// once: half the time left before the test's deadline, at most 30 s.
func patience(t *testing.T) time.Duration {
	d := 30 * time.Second
	if dl, ok := t.Deadline(); ok {
		d = min(d, time.Until(dl)/2)
	}
	return d
}

// register registers t in r, failing the test on error.
func register(tb testing.TB, r *mediation.Registry, t mediation.Type) {
	tb.Helper()
	if err := r.Register(t); err != nil {
		tb.Fatal(err)
	}
}

// TestStatelessRunsConcurrently: a stateless component has two senders
// inside Process at once. Each call waits, up to the test's patience, until
// two calls are inside; serialised calls would each wait in vain.
func TestStatelessRunsConcurrently(t *testing.T) {
	var inside atomic.Int32
	both := make(chan struct{})
	timeout := time.After(patience(t))
	var timedOut atomic.Bool
	r := mediation.NewRegistry()
	register(t, r, mediation.Type{Name: "meet", Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"},
		Stateless: true,
		New: func(map[string]any, mediation.Env) (any, error) {
			return mediation.ProcessorFunc(func(_ string, m mediation.Message, out mediation.Emitter) error {
				if inside.Add(1) == 2 {
					close(both)
				}
				select {
				case <-both:
				case <-timeout:
					timedOut.Store(true)
					return errors.New("alone in Process")
				}
				out.Emit("out", m)
				return nil
			}), nil
		}})
	e := mediation.NewEngine(mediation.Config{Registry: r})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "a", nil), adp("rest-in", "b", nil), med("meet", "m", nil), adp("rest-out", "o", nil),
		bind("a:out", "m:in", ""), bind("b:out", "m:in", ""), bind("m:out", "o:in", ""), start)
	var wg sync.WaitGroup
	for _, src := range []string{"a", "b"} {
		wg.Go(func() {
			if err := ch.Send(src, msg(src, nil)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if timedOut.Load() {
		t.Fatal("a call of the stateless component's Process waited alone: calls were serialised")
	}
	if c := mustComponent(t, ch, "m").Counters; c.In != 2 || c.Out != 2 || c.Errors != 0 {
		t.Errorf("counters of m = %+v, want 2 in, 2 out, no error", c)
	}
}

// TestStatefulNeverConcurrent: many senders, through stateless components,
// into a stateful one (the default) and the built-in stateful ones: never
// two calls inside at once, every message processed once.
func TestStatefulNeverConcurrent(t *testing.T) {
	const senders, each = 8, 2_000
	var inside, most, calls atomic.Int64
	r := mediation.NewRegistry()
	register(t, r, mediation.Type{Name: "solo", Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"},
		New: func(map[string]any, mediation.Env) (any, error) {
			return mediation.ProcessorFunc(func(_ string, m mediation.Message, out mediation.Emitter) error {
				n := inside.Add(1)
				for {
					x := most.Load()
					if n <= x || most.CompareAndSwap(x, n) {
						break
					}
				}
				calls.Add(1)
				runtime.Gosched() // give another sender every chance to come in
				inside.Add(-1)
				out.Emit("out", m)
				return nil
			}), nil
		}})
	e := mediation.NewEngine(mediation.Config{Registry: r})
	defer e.Close()
	ch := build(t, e, "c", med("passthrough", "p", nil), med("solo", "s", nil),
		adp("rest-out", "o", map[string]any{"capacity": float64(senders * each)}),
		bind("p:out", "s:in", ""), bind("s:out", "o:in", ""))
	for i := range senders {
		src := fmt.Sprintf("in%d", i)
		if _, err := ch.AddAdapter("rest-in", src, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := ch.Bind(src+":out", "p:in", "", nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := ch.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range senders {
		wg.Go(func() {
			for j := range each {
				if err := ch.Send(fmt.Sprintf("in%d", i), msg(stamp{i, j}, nil)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if m := most.Load(); m != 1 {
		t.Errorf("%d calls were inside the stateful component at once, want 1", m)
	}
	if n := calls.Load(); n != senders*each {
		t.Errorf("%d calls, want %d", n, senders*each)
	}
	// rest-out, stateful, kept every message, and those of each sender in order.
	ms, err := ch.Messages("o")
	if err != nil {
		t.Fatal(err)
	}
	next := make([]int, senders)
	for _, m := range ms {
		st := m.Content.(stamp)
		if st.seq != next[st.src] {
			t.Fatalf("sender %d: message %d arrived when %d was due", st.src, st.seq, next[st.src])
		}
		next[st.src]++
	}
	if len(ms) != senders*each {
		t.Errorf("rest-out kept %d messages, want %d", len(ms), senders*each)
	}
}

// TestCountersExactUnderParallelSends: the counters of stateless and
// stateful components add up exactly after many parallel senders.
func TestCountersExactUnderParallelSends(t *testing.T) {
	const senders, each = 8, 5_000
	s := newSink(-1)
	e := newTestEngine(t, s)
	ch := build(t, e, "c", adp("rest-in", "src", nil), med("passthrough", "p", nil),
		med("filter", "f", map[string]any{"condition": "(even=true)"}),
		med("enricher", "en", map[string]any{"site": "lab"}),
		med("router", "r", map[string]any{"conditions": map[string]any{"(site=lab)": "lab"}}),
		adp("sink", "o", nil),
		bind("src:out", "p:in", ""), bind("p:out", "f:in", ""), bind("f:out", "en:in", ""),
		bind("en:out", "r:in", ""), bind("r:lab", "o:in", ""), start)
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for j := range each {
				if err := ch.Send("src", msg(j, props{"even": j%2 == 0})); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	const total, even = senders * each, senders * each / 2
	want := map[string]mediation.Counters{
		"src": {In: total, Out: total},
		"p":   {In: total, Out: total},
		"f":   {In: total, Out: even, Dropped: total - even},
		"en":  {In: even, Out: even},
		"r":   {In: even, Out: even},
		"o":   {In: even},
	}
	for id, w := range want {
		if diff := cmp.Diff(w, mustComponent(t, ch, id).Counters); diff != "" {
			t.Errorf("counters of %s (-want +got):\n%s", id, diff)
		}
	}
	if n := len(s.all()); n != even {
		t.Errorf("the sink got %d messages, want %d", n, even)
	}
}

// TestQueueFIFOParallelSenders: senders in parallel, through a stateless
// mediator, into one queue with little room: each sender's messages reach
// the sink in order, none lost, and the queue never held more than its
// capacity plus what the senders let in at once.
func TestQueueFIFOParallelSenders(t *testing.T) {
	const senders, each = 4, 5_000
	s := newSink(senders * each)
	e := newTestEngine(t, s)
	ch := build(t, e, "c", adp("rest-in", "src", nil), med("passthrough", "p", nil), adp("sink", "o", nil),
		bind("src:out", "p:in", ""),
		queueBind("p:out", "o:in", 8), start)
	var wg sync.WaitGroup
	var most atomic.Int64
	for i := range senders {
		wg.Go(func() {
			for j := range each {
				if err := ch.Send("src", msg(stamp{i, j}, nil)); err != nil {
					t.Error(err)
					return
				}
				if q := int64(mustComponent(t, ch, "o").Counters.Queue); q > most.Load() {
					most.Store(q) // racy maximum: good enough for a bound
				}
			}
		})
	}
	wg.Wait()
	s.wait(t)
	next := make([]int, senders)
	for _, m := range s.all() {
		st := m.Content.(stamp)
		if st.seq != next[st.src] {
			t.Fatalf("sender %d: message %d arrived when %d was due", st.src, st.seq, next[st.src])
		}
		next[st.src]++
	}
	if m := most.Load(); m > 8+senders {
		t.Errorf("the queue held %d messages, more than its capacity 8 and one per sender", m)
	}
}

// TestQueueRoomInSteps: while a sender waits for room in a queue of
// capacity 16, the delivering goroutine gives room back every two messages
// (capacity/8) of its batch, not every one; the queue's length counts the
// message being delivered and not those delivered. Stop and Start make the
// batch: after a restart the goroutine takes all 15 queued messages at once.
func TestQueueRoomInSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tokens := make(chan struct{})
		s := newSink(18)
		e := mediation.NewEngine(mediation.Config{Registry: gatedRegistry(t, s, tokens)})
		defer e.Close()
		ch := build(t, e, "c", adp("rest-in", "a", nil), med("gate", "g", nil), adp("sink", "o", nil),
			queueBind("a:out", "g:in", 16),
			bind("g:out", "o:in", ""), start)
		send := func(i int) {
			t.Helper()
			if err := ch.Send("a", msg(i, nil)); err != nil {
				t.Fatal(err)
			}
		}
		queue := func() int { return mustComponent(t, ch, "g").Counters.Queue }
		send(0)
		synctest.Wait() // message 0 in the gate
		for i := 1; i < 16; i++ {
			send(i)
		}
		stopPastGate(t, ch, tokens)
		if q := queue(); q != 15 {
			t.Fatalf("queue = %d after the stop, want 15", q)
		}
		if err := ch.Start(); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // one batch of 15, message 1 in the gate
		send(16)        // the queue is full
		returned := make(chan error)
		go func() { returned <- ch.Send("a", msg(17, nil)) }()
		synctest.Wait()
		if q := queue(); q != 16 {
			t.Errorf("queue = %d, want 16", q)
		}
		tokens <- struct{}{}
		synctest.Wait()
		select {
		case err := <-returned:
			t.Fatalf("the waiting Send returned after one delivery (%v), want after two", err)
		default:
		}
		if q := queue(); q != 15 {
			t.Errorf("queue = %d after one delivery, want 15", q)
		}
		tokens <- struct{}{}
		synctest.Wait()
		select {
		case err := <-returned:
			if err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatal("the waiting Send did not return after two deliveries")
		}
		if q := queue(); q != 15 {
			t.Errorf("queue = %d after two deliveries and one more message, want 15", q)
		}
		for range 15 {
			tokens <- struct{}{}
		}
		s.wait(t)
		want := make([]any, 18)
		for i := range want {
			want[i] = i
		}
		if diff := cmp.Diff(want, contents(s.all())); diff != "" {
			t.Errorf("order through the queue (-want +got):\n%s", diff)
		}
	})
}
