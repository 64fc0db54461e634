package mediation_test

// Stress tests of the concurrent send path: stateless gates, pooled runs
// and budgets, batched queues, and reconfiguration racing with senders; and
// the bugs a review of it found (a hand-over restored twice, backpressure
// off while Start runs, a race on a binding's source in a busy error).

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pervasim/pervasim/mediation"
)

// registerStatefulPass registers "spass", a stateful passthrough.
func registerStatefulPass(t *testing.T, r *mediation.Registry) {
	register(t, r, mediation.Type{Name: "spass", Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"},
		New: func(map[string]any, mediation.Env) (any, error) {
			return mediation.ProcessorFunc(func(_ string, m mediation.Message, out mediation.Emitter) error {
				out.Emit("out", m)
				return nil
			}), nil
		}})
}

// awaitProgress waits until n() has grown by at least by, yielding; it fails
// the test after its patience.
func awaitProgress(t *testing.T, n func() int64, by int64) {
	t.Helper()
	deadline := time.Now().Add(patience(t))
	for start := n(); n() < start+by; {
		if time.Now().After(deadline) {
			t.Fatal("the senders make no progress")
		}
		runtime.Gosched()
	}
}

// startSenders runs senders goroutines sending stamp{i, seq} to src until stop
// is closed. A Send that fails with ErrConflict (stopped) or ErrBusy (gave
// up waiting for room) did not take its message: the same seq is sent
// again. accepted[i] is how many of sender i's messages were taken.
func startSenders(t *testing.T, ch *mediation.Chain, src string, senders int, stop <-chan struct{}, wg *sync.WaitGroup) (accepted []atomic.Int64, total func() int64) {
	accepted = make([]atomic.Int64, senders)
	for i := range senders {
		wg.Go(func() {
			var ctx context.Context = context.Background()
			if i%2 == 1 { // a context that may end: the cause is shared from the start
				c, cancel := context.WithCancel(context.Background())
				defer cancel()
				ctx = c
			}
			for seq := 0; ; {
				select {
				case <-stop:
					return
				default:
				}
				err := ch.SendContext(ctx, src, msg(stamp{i, seq}, nil))
				switch {
				case err == nil:
					seq++
					accepted[i].Store(int64(seq))
				case errors.Is(err, mediation.ErrConflict), errors.Is(err, mediation.ErrBusy):
					runtime.Gosched()
				default:
					t.Error(err)
					return
				}
			}
		})
	}
	total = func() int64 {
		var n int64
		for i := range accepted {
			n += accepted[i].Load()
		}
		return n
	}
	return accepted, total
}

// TestStressLosslessOrder: senders send without pause through a
// stateless entry, a queue, a stateful mediator, a stateless enricher and a
// second queue into a stateful sink, while the chain is stopped and started,
// both mediators are replaced back and forth between stateless and stateful
// ones and reconfigured, and snapshots are taken. Nothing is unbound, so
// every message a Send took reaches the sink exactly once, and each sender's
// messages arrive in order with no gap; no counter says dropped or failed.
func TestStressLosslessOrder(t *testing.T) {
	const senders, rounds = 4, 200
	s := newSink(-1)
	r := testRegistry(t, s)
	registerStatefulPass(t, r)
	e := mediation.NewEngine(mediation.Config{Registry: r})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "src", nil),
		med("passthrough", "p1", nil), med("spass", "p2", nil),
		med("spass", "s1", nil), med("passthrough", "s2", nil),
		med("enricher", "en", map[string]any{"n": 0.0}), adp("sink", "o", nil),
		bind("src:out", "p1:in", ""), queueBind("p1:out", "s1:in", 16), bind("s1:out", "en:in", ""),
		queueBind("en:out", "o:in", 8), start)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	accepted, total := startSenders(t, ch, "src", senders, stop, &wg)
	var snaps sync.WaitGroup
	snaps.Go(func() { // snapshots try every component while messages flow
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := ch.Components(); err != nil {
				t.Error(err)
				return
			}
			runtime.Gosched()
		}
	})
	p, pOther, q, qOther := "p1", "p2", "s1", "s2"
	for i := range rounds {
		switch i % 5 {
		case 0:
			must(t, ch.Replace(p, pOther))
			p, pOther = pOther, p
		case 1:
			must(t, ch.Stop())
			must(t, ch.Start())
		case 2:
			must(t, ch.Replace(q, qOther))
			q, qOther = qOther, q
		case 3:
			_, err := ch.UpdateProperties("en", map[string]any{"n": float64(i)})
			must(t, err)
		case 4:
			_, err := ch.UpdateProperties(q, map[string]any{"round": float64(i)})
			must(t, err)
		}
		awaitProgress(t, total, 30)
	}
	close(stop)
	wg.Wait()
	snaps.Wait()

	n := int(total())
	got := s.waitN(t, n)
	if len(got) != n {
		t.Errorf("the sink got %d messages, %d were accepted", len(got), n)
	}
	next := make([]int, senders)
	for _, m := range got {
		st := m.Content.(stamp)
		if st.seq != next[st.src] {
			t.Fatalf("sender %d: message %d arrived when %d was due", st.src, st.seq, next[st.src])
		}
		next[st.src]++
	}
	for i := range senders {
		if int64(next[i]) != accepted[i].Load() {
			t.Errorf("sender %d: %d messages arrived, %d accepted", i, next[i], accepted[i].Load())
		}
	}
	for _, id := range []string{"src", "p1", "p2", "s1", "s2", "en", "o"} {
		c := mustComponent(t, ch, id).Counters
		if c.Dropped != 0 || c.Errors != 0 || c.Queue != 0 {
			t.Errorf("counters of %s = %+v, want nothing dropped, failed or queued", id, c)
		}
	}
	if c := mustComponent(t, ch, "o").Counters; c.In != uint64(n) {
		t.Errorf("the sink's In counter is %d, want %d", c.In, n)
	}
	if n == 0 {
		t.Error("nothing was accepted")
	}
}

// TestStressAccounting: while senders send without pause, the chain is
// replaced back and forth between a stateless and a stateful mediator,
// stopped and started, unbound and bound again, its enricher reconfigured,
// and a side branch from the entry to a stateless console removed and added
// again. Nothing panics (under -race nothing races). Every message a
// Send took is received by the sink or counted dropped by one component of
// the main path (the side branch counts its own), and each sender's
// messages reach the sink in increasing order.
func TestStressAccounting(t *testing.T) {
	const senders, rounds = 4, 200
	s := newSink(-1)
	r := testRegistry(t, s)
	registerStatefulPass(t, r)
	e := mediation.NewEngine(mediation.Config{Registry: r})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "src", nil), med("passthrough", "p1", nil), med("spass", "p2", nil),
		med("enricher", "en", map[string]any{"n": 0.0}), adp("sink", "o", nil), adp("console", "x", nil),
		bind("src:out", "p1:in", ""), bind("src:out", "x:in", ""), bind("p1:out", "en:in", ""),
		queueBind("en:out", "o:in", 32), start)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	_, total := startSenders(t, ch, "src", senders, stop, &wg)
	cur, other := "p1", "p2"
	for i := range rounds {
		switch i % 5 {
		case 0:
			must(t, ch.Replace(cur, other))
			cur, other = other, cur
		case 1:
			must(t, ch.Stop())
			must(t, ch.Start())
		case 2:
			must(t, ch.Unbind(cur+":out", "en:in"))
			runtime.Gosched()
			_, err := ch.Bind(cur+":out", "en:in", "", nil)
			must(t, err)
		case 3:
			_, err := ch.UpdateProperties("en", map[string]any{"n": float64(i)})
			must(t, err)
		case 4:
			must(t, ch.RemoveComponent("", "x"))
			runtime.Gosched()
			_, err := ch.AddAdapter("console", "x", nil)
			must(t, err)
			_, err = ch.Bind("src:out", "x:in", "", nil)
			must(t, err)
		}
		awaitProgress(t, total, 30)
	}
	close(stop)
	wg.Wait()

	waitDrained(t, ch, "o")
	dropped := droppedWithoutErrors(t, ch, "src", "p1", "p2", "en", "o")
	got := s.all()
	n := uint64(total())
	if uint64(len(got))+dropped != n {
		t.Errorf("%d messages accepted, but %d reached the sink and %d were dropped", n, len(got), dropped)
	}
	next := make([]int, senders)
	for _, m := range got {
		st := m.Content.(stamp)
		if st.seq < next[st.src] {
			t.Fatalf("sender %d: message %d arrived after %d", st.src, st.seq, next[st.src]-1)
		}
		next[st.src] = st.seq + 1
	}
	if c := mustComponent(t, ch, "src").Counters; c.In != n {
		t.Errorf("src In = %d, want %d accepted", c.In, n)
	}
	if in := mustComponent(t, ch, "o").Counters.In; in != uint64(len(got)) {
		t.Errorf("the sink's In counter is %d, it received %d", in, len(got))
	}
	if len(got) == 0 {
		t.Error("nothing reached the sink")
	}
}

// callTally counts the calls made for each message id.
type callTally struct {
	mu    sync.Mutex
	n     map[int]int
	total atomic.Int64
	want  int64
	all   chan struct{} // closed when total reaches want
}

func (c *callTally) add(id int) {
	c.mu.Lock()
	c.n[id]++
	c.mu.Unlock()
	if c.total.Add(1) == c.want {
		close(c.all)
	}
}

// TestStressBudgetAcrossQueues: MaxDeliveries is 6. A message sent to
// "a" fans out through two queues to two stateless mediators that emit it
// three times each into a stateless counter: 9 deliveries would be made,
// the budget allows exactly 6, spent by three goroutines at once (the
// sender's, then both queues'). A message sent to "b" goes direct to a
// mediator that emits it seven times: 5 reach the counter and Send fails
// with ErrBusy (a budget never shared, reused from the pool). Many senders
// at once; every message must have exactly 6 calls.
func TestStressBudgetAcrossQueues(t *testing.T) {
	const senders, each = 8, 300
	const wantK = senders * each * (3 + 5)
	tally := &callTally{n: map[int]int{}, want: 2 * senders * each * 6, all: make(chan struct{})}
	r := mediation.NewRegistry()
	register(t, r, mediation.Type{Name: "fan", Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"},
		Properties: map[string]any{"n": 1.0}, Stateless: true,
		New: func(p map[string]any, _ mediation.Env) (any, error) {
			n := int(p["n"].(float64))
			return mediation.ProcessorFunc(func(_ string, m mediation.Message, out mediation.Emitter) error {
				tally.add(m.Content.(int))
				for range n - 1 {
					out.Emit("out", m.Clone())
				}
				out.Emit("out", m)
				return nil
			}), nil
		}})
	register(t, r, mediation.Type{Name: "count-calls", Kind: mediation.KindMediator, In: []string{"in"}, Stateless: true,
		New: func(map[string]any, mediation.Env) (any, error) {
			return mediation.ProcessorFunc(func(_ string, m mediation.Message, _ mediation.Emitter) error {
				tally.add(m.Content.(int))
				return nil
			}), nil
		}})
	e := mediation.NewEngine(mediation.Config{Registry: r, MaxDeliveries: 6})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "a", nil), adp("rest-in", "b", nil),
		med("fan", "f0", nil), med("fan", "fa", map[string]any{"n": 3.0}), med("fan", "fb", map[string]any{"n": 3.0}),
		med("fan", "fd", map[string]any{"n": 7.0}), med("count-calls", "k", nil),
		bind("a:out", "f0:in", ""), queueBind("f0:out", "fa:in", 64), queueBind("f0:out", "fb:in", 64),
		bind("fa:out", "k:in", ""), bind("fb:out", "k:in", ""),
		bind("b:out", "fd:in", ""), bind("fd:out", "k:in", ""), start)
	var wg sync.WaitGroup
	for i := range senders {
		wg.Go(func() {
			for j := range each {
				id := 2 * (i*each + j)
				// The queues may spend the budget before Send returns: then
				// it reports ErrBusy, the message being taken all the same.
				if err := ch.Send("a", msg(id, nil)); err != nil && !errors.Is(err, mediation.ErrBusy) {
					t.Errorf("send %d to a: %v", id, err)
					return
				}
				if err := ch.Send("b", msg(id+1, nil)); !errors.Is(err, mediation.ErrBusy) {
					t.Errorf("send %d to b: %v, want ErrBusy (budget)", id+1, err)
					return
				}
			}
		})
	}
	wg.Wait()
	select {
	case <-tally.all:
	case <-time.After(patience(t)):
		t.Fatalf("%d calls, want %d", tally.total.Load(), tally.want)
	}
	// The last calls' emits are dropped after them.
	deadline := time.Now().Add(patience(t))
	for mustComponent(t, ch, "k").Counters.Dropped < senders*each*(3+2) && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if n := tally.total.Load(); n != tally.want {
		t.Errorf("%d calls in all, want %d", n, tally.want)
	}
	tally.mu.Lock()
	defer tally.mu.Unlock()
	if len(tally.n) != 2*senders*each {
		t.Errorf("%d message ids seen, want %d", len(tally.n), 2*senders*each)
	}
	bad := 0
	for id, n := range tally.n {
		if n != 6 {
			if bad++; bad <= 5 {
				t.Errorf("message %d caused %d calls, want exactly 6 (MaxDeliveries)", id, n)
			}
		}
	}
	if c := mustComponent(t, ch, "k").Counters; c.In != wantK || c.Dropped != senders*each*(3+2) {
		t.Errorf("counters of k = %+v, want In %d, Dropped %d", c, wantK, senders*each*5)
	}
}

// TestStopQuiesces: after Stop returns, no Process call runs (none in
// progress, none begun) until Start, with senders sending without pause
// through a stateless probe, a queue and a stateful probe.
func TestStopQuiesces(t *testing.T) {
	const senders, rounds = 4, 150
	var stopped atomic.Bool
	var inside, late atomic.Int64
	probe := func(_ string, m mediation.Message, out mediation.Emitter) error {
		inside.Add(1)
		if stopped.Load() {
			late.Add(1)
		}
		runtime.Gosched()
		inside.Add(-1)
		out.Emit("out", m)
		return nil
	}
	s := newSink(-1)
	r := testRegistry(t, s)
	for _, stateless := range []bool{true, false} {
		register(t, r, mediation.Type{Name: fmt.Sprintf("probe-%v", stateless), Kind: mediation.KindMediator,
			In: []string{"in"}, Out: []string{"out"}, Stateless: stateless,
			New: func(map[string]any, mediation.Env) (any, error) { return mediation.ProcessorFunc(probe), nil }})
	}
	e := mediation.NewEngine(mediation.Config{Registry: r})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "src", nil), med("probe-true", "a", nil), med("probe-false", "b", nil),
		med("probe-true", "c", nil), adp("sink", "o", nil),
		bind("src:out", "a:in", ""), queueBind("a:out", "b:in", 16), queueBind("b:out", "c:in", 4), bind("c:out", "o:in", ""), start)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	_, total := startSenders(t, ch, "src", senders, stop, &wg)
	for range rounds {
		awaitProgress(t, total, 30)
		if err := ch.Stop(); err != nil {
			t.Fatal(err)
		}
		stopped.Store(true)
		if n := inside.Load(); n != 0 {
			t.Fatalf("%d calls in progress after Stop returned", n)
		}
		runtime.Gosched()
		stopped.Store(false)
		if err := ch.Start(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if n := late.Load(); n != 0 {
		t.Errorf("%d calls began while the chain was stopped", n)
	}
	s.waitN(t, int(total()))
}

// TestRestoreOncePerHandOver: a stateful Drainer/Restorer is replaced
// back and forth under load. Each Replace hands over what the old one held;
// Restore is documented to be called once with the handed-over messages.
// Replace's flushNow checks the pending count before it takes the new
// component, and flushLocked does not check it again: when a delivery
// takes the component first (and restores the messages in process), Replace
// then calls Restore again with nothing, which wipes a Restorer that takes
// the messages as its state.
func TestRestoreOncePerHandOver(t *testing.T) {
	const senders, rounds = 4, 300
	var empty, restores atomic.Int64
	type keeper struct {
		mediation.Processor
		mediation.Drainer
		mediation.Restorer
	}
	s := newSink(-1)
	r := testRegistry(t, s)
	register(t, r, mediation.Type{Name: "restore-keeper", Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"},
		New: func(map[string]any, mediation.Env) (any, error) {
			var last []mediation.Held
			return keeper{
				Processor: mediation.ProcessorFunc(func(in string, m mediation.Message, out mediation.Emitter) error {
					last = []mediation.Held{{Port: in, Message: m.Clone()}}
					out.Emit("out", m)
					return nil
				}),
				Drainer: mediation.DrainerFunc(func() []mediation.Held { h := last; last = nil; return h }),
				Restorer: mediation.RestorerFunc(func(h []mediation.Held, _ mediation.Emitter) error {
					restores.Add(1)
					if len(h) == 0 {
						empty.Add(1)
					}
					last = h // the handed-over messages are the state
					return nil
				}),
			}, nil
		}})
	e := mediation.NewEngine(mediation.Config{Registry: r})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "src", nil), med("restore-keeper", "k1", nil), med("restore-keeper", "k2", nil),
		adp("sink", "o", nil), bind("src:out", "k1:in", ""), bind("k1:out", "o:in", ""), start)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	_, total := startSenders(t, ch, "src", senders, stop, &wg)
	cur, other := "k1", "k2"
	for range rounds {
		awaitProgress(t, total, 2)
		if err := ch.Replace(cur, other); err != nil {
			t.Fatal(err)
		}
		cur, other = other, cur
	}
	close(stop)
	wg.Wait()
	if n := empty.Load(); n != 0 {
		t.Errorf("Restore was called %d times (of %d) with no message: a hand-over restored twice", n, restores.Load())
	}
}

// keeper is a stateful mediator that keeps what it receives and hands it
// over (Drain); with "block" set, its Process signals entered and waits for
// release.
type keeper struct {
	kept           []mediation.Held
	block          bool
	entered, relse chan struct{}
}

func (k *keeper) Process(in string, m mediation.Message, _ mediation.Emitter) error {
	if k.block {
		close(k.entered)
		<-k.relse
	}
	k.kept = append(k.kept, mediation.Held{Port: in, Message: m})
	return nil
}

func (k *keeper) Drain() []mediation.Held { return k.kept }

// TestStartHoldsSendersBeforeQueuesRun: Start lets senders in before its
// queue links run (it first processes what components were handed while
// stopped, which may take any time); a full queue must make them wait (or
// TrySend fail) all the same, as it does once the link runs.
func TestStartHoldsSendersBeforeQueuesRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSink(-1)
		tokens := make(chan struct{})
		r := gatedRegistry(t, s, tokens)
		entered, release := make(chan struct{}), make(chan struct{})
		register(t, r, mediation.Type{Name: "keeper", Kind: mediation.KindMediator, In: []string{"in"},
			Properties: map[string]any{"block": false},
			New: func(props map[string]any, _ mediation.Env) (any, error) {
				block, _ := props["block"].(bool)
				return &keeper{block: block, entered: entered, relse: release}, nil
			}})
		e := mediation.NewEngine(mediation.Config{Registry: r})
		defer e.Close()
		// a -queue(2)-> g (takes a token per message) -> o; b -> k.
		ch := build(t, e, "c", adp("rest-in", "a", nil), med("gate", "g", nil), adp("sink", "o", nil),
			adp("rest-in", "b", nil), med("keeper", "k", nil),
			queueBind("a:out", "g:in", 2), bind("g:out", "o:in", ""), bind("b:out", "k:in", ""), start)
		if err := ch.Send("b", msg("kept", nil)); err != nil {
			t.Fatal(err)
		}
		// Fill the queue: message 0 waits in g for a token, message 1 behind it.
		for i := range 2 {
			if err := ch.TrySend("a", msg(i, nil)); err != nil {
				t.Fatalf("TrySend %d: %v", i, err)
			}
		}
		synctest.Wait() // the link is delivering message 0, blocked in g
		if err := ch.TrySend("a", msg(2, nil)); !errors.Is(err, mediation.ErrBusy) {
			t.Fatalf("TrySend into a full queue: %v, want busy", err)
		}
		if got := mustComponent(t, ch, "a").Counters.Dropped; got != 1 {
			t.Errorf("a's dropped counter after a refused TrySend = %d, want 1 (the message is lost)", got)
		}
		// Stop: message 0 gets its token and is done; message 1 stays queued.
		stopPastGate(t, ch, tokens)
		// While stopped, k's kept message is handed to a blocking implementation:
		// Start processes it before it starts the queue links.
		if _, err := ch.UpdateProperties("k", map[string]any{"block": true}); err != nil {
			t.Fatal(err)
		}
		started := make(chan error)
		go func() { started <- ch.Start() }()
		synctest.Wait() // Start is in k's Process, its links not started
		select {
		case <-entered:
		default:
			t.Fatal("Start did not hand k its message")
		}
		took := 0
		for i := 3; i < 8; i++ {
			switch err := ch.TrySend("a", msg(i, nil)); {
			case err == nil:
				took++
			case !errors.Is(err, mediation.ErrBusy):
				t.Fatalf("TrySend %d during Start: %v", i, err)
			}
		}
		close(release)
		if err := <-started; err != nil {
			t.Fatal(err)
		}
		if took != 1 {
			t.Errorf("during Start, TrySend took %d messages into a queue of capacity 2 holding 1; want 1, the rest busy", took)
		}
		for range 1 + took {
			tokens <- struct{}{}
		}
		s.waitN(t, 2+took)
	})
}

// TestBusyErrorDuringReplace: a sender whose queue ahead is full builds
// its ErrBusy message from binding.from, which Replace rewrites under
// Chain.mu; the sender does not hold it. Under -race this is reported as a
// data race (send.go, admit's busy; replace.go, b.from = t).
func TestBusyErrorDuringReplace(t *testing.T) {
	tokens := make(chan struct{})
	s := newSink(-1)
	e := mediation.NewEngine(mediation.Config{Registry: gatedRegistry(t, s, tokens)})
	t.Cleanup(func() { e.Close() })
	t.Cleanup(func() { close(tokens) }) // runs first: the gate lets everything through
	ch := build(t, e, "c", adp("rest-in", "a", nil), med("passthrough", "p1", nil), med("passthrough", "p2", nil),
		med("gate", "g", nil), adp("sink", "o", nil),
		bind("a:out", "p1:in", ""), queueBind("p1:out", "g:in", 1), bind("g:out", "o:in", ""), start)
	// Message 0 waits in the gate and keeps the queue's only place.
	if err := ch.Send("a", msg(0, nil)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 2000 {
			if err := ch.TrySend("a", msg(i+1, nil)); !errors.Is(err, mediation.ErrBusy) {
				t.Errorf("TrySend on a full queue: %v, want ErrBusy", err)
				return
			}
		}
	}()
	cur, other := "p1", "p2"
	for range 200 {
		if err := ch.Replace(cur, other); err != nil {
			t.Fatal(err)
		}
		cur, other = other, cur
	}
	<-done
}
