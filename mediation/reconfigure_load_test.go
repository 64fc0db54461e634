package mediation_test

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pervasim/pervasim/mediation"
)

// senderStamp identifies one message: its sender and sequence number.
type senderStamp struct{ src, seq int }

// probe is a stateful mediator that detects overlapping calls, per-sender
// disorder and calls after its removal.
type probe struct {
	active    atomic.Int32
	overlaps  *atomic.Int64
	afterDead *atomic.Int64
	dead      atomic.Bool
	last      map[int]int
	disorder  *atomic.Int64
}

func (p *probe) Process(_ string, m mediation.Message, out mediation.Emitter) error {
	if p.active.Add(1) > 1 {
		p.overlaps.Add(1)
	}
	defer p.active.Add(-1)
	if p.dead.Load() {
		p.afterDead.Add(1)
	}
	st := m.Content.(senderStamp)
	if l, ok := p.last[st.src]; ok && st.seq <= l {
		p.disorder.Add(1)
	}
	p.last[st.src] = st.seq
	runtime.Gosched() // widen the window for overlaps
	out.Emit("out", m)
	return nil
}

type probeStats struct {
	overlaps, afterDead, disorder atomic.Int64
	mu                            sync.Mutex
	made                          []*probe
}

// probeType is the stateful mediator type "probe", whose instances report
// into ps.
func probeType(ps *probeStats) mediation.Type {
	return mediation.Type{Name: "probe", Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"},
		New: func(map[string]any, mediation.Env) (any, error) {
			p := &probe{overlaps: &ps.overlaps, afterDead: &ps.afterDead, disorder: &ps.disorder, last: map[int]int{}}
			ps.mu.Lock()
			ps.made = append(ps.made, p)
			ps.mu.Unlock()
			return p, nil
		}}
}

// TestRemoveWhileSending: 16 senders; the stateful probe between the
// entry and the sink is removed and added again in a loop. No call of a
// removed probe happens after RemoveComponent returned; no call overlaps.
func TestRemoveWhileSending(t *testing.T) {
	const senders = 16
	s := newSink(-1)
	var ps probeStats
	e := newTestEngine(t, s, probeType(&ps))
	ch := build(t, e, "c", adp("rest-in", "src", nil), med("probe", "p", nil), adp("sink", "o", nil),
		bind("src:out", "p:in", ""), queueBind("p:out", "o:in", 8), start)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent atomic.Int64
	for i := range senders {
		wg.Go(func() {
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := ch.Send("src", mediation.Message{Content: senderStamp{i, seq}}); err != nil {
					t.Errorf("send: %v", err)
					return
				}
				sent.Add(1)
			}
		})
	}
	for round := range 15 {
		ps.mu.Lock()
		cur := ps.made[len(ps.made)-1]
		ps.mu.Unlock()
		must(t, ch.RemoveComponent("", "p"))
		cur.dead.Store(true)
		_, err := ch.AddMediator("probe", "p", nil)
		must(t, err)
		must(t, bind("src:out", "p:in", "")(ch))
		if round%2 == 0 {
			must(t, bind("p:out", "o:in", "")(ch))
		} else {
			must(t, queueBind("p:out", "o:in", 8)(ch))
		}
		for n := sent.Load(); sent.Load() < n+20; {
			runtime.Gosched()
		}
	}
	close(stop)
	wg.Wait()
	if n := ps.afterDead.Load(); n != 0 {
		t.Errorf("%d calls of removed components after RemoveComponent returned", n)
	}
	if n := ps.overlaps.Load(); n != 0 {
		t.Errorf("%d overlapping calls of stateful components", n)
	}
	if n := ps.disorder.Load(); n != 0 {
		t.Errorf("%d messages out of per-sender order", n)
	}
}

// TestReconfigureWhileSending: 16 senders through a stateful probe,
// replaced by another probe, reconfigured, and its out binding's linker
// changed (Unbind + Bind) in a loop. Each accepted message reaches the
// sink at most once, in per-sender order; those that do not are counted as
// dropped; no call overlaps.
func TestReconfigureWhileSending(t *testing.T) {
	const senders = 16
	s := newSink(-1)
	var ps probeStats
	e := newTestEngine(t, s, probeType(&ps))
	ch := build(t, e, "c", adp("rest-in", "src", nil), med("probe", "p1", nil), med("probe", "p2", nil),
		med("passthrough", "pt", nil), adp("sink", "o", nil),
		bind("src:out", "p1:in", ""), queueBind("p1:out", "pt:in", 8), bind("pt:out", "o:in", ""), start)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	accepted := make([]atomic.Int64, senders)
	var total atomic.Int64
	for i := range senders {
		wg.Go(func() {
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				err := ch.Send("src", mediation.Message{Content: senderStamp{i, seq}})
				if errors.Is(err, mediation.ErrConflict) { // stopped for a moment
					runtime.Gosched()
					continue
				}
				if err != nil {
					t.Errorf("send: %v", err)
					return
				}
				accepted[i].Add(1)
				total.Add(1)
			}
		})
	}
	cur, other := "p1", "p2"
	linker := "queue"
	for round := range 120 {
		switch round % 4 {
		case 0:
			must(t, ch.Replace(cur, other))
			cur, other = other, cur
		case 1:
			_, err := ch.UpdateProperties(cur, map[string]any{"round": round})
			must(t, err)
		case 2:
			must(t, ch.Unbind(cur+":out", "pt:in"))
			if linker == "queue" {
				linker = "direct"
			} else {
				linker = "queue"
			}
			_, err := ch.Bind(cur+":out", "pt:in", linker, nil)
			must(t, err)
		case 3:
			must(t, ch.Stop())
			must(t, ch.Start())
		}
		for n := total.Load(); total.Load() < n+20; {
			runtime.Gosched()
		}
	}
	close(stop)
	wg.Wait()
	waitDrained(t, ch, "pt")
	waitDrained(t, ch, "o")
	var dropped uint64
	for _, id := range []string{"src", "p1", "p2", "pt", "o"} {
		c := mustComponent(t, ch, id).Counters
		dropped += c.Dropped
		if c.Errors != 0 {
			t.Errorf("%s: %d errors", id, c.Errors)
		}
	}
	got := s.all()
	seen := map[senderStamp]bool{}
	last := make([]int, senders)
	for i := range last {
		last[i] = -1
	}
	for _, m := range got {
		st := m.Content.(senderStamp)
		if seen[st] {
			t.Fatalf("duplicate %v", st)
		}
		seen[st] = true
		if st.seq <= last[st.src] {
			t.Fatalf("sender %d: %d after %d", st.src, st.seq, last[st.src])
		}
		last[st.src] = st.seq
	}
	if uint64(len(got))+dropped != uint64(total.Load()) {
		t.Errorf("accepted %d, delivered %d + dropped %d", total.Load(), len(got), dropped)
	}
	if c := mustComponent(t, ch, "o").Counters; c.In != uint64(len(got)) {
		t.Errorf("sink In %d, got %d", c.In, len(got))
	}
	if n := ps.overlaps.Load(); n != 0 {
		t.Errorf("%d overlapping calls", n)
	}
	if n := ps.disorder.Load(); n != 0 {
		t.Errorf("%d out of order at the probe", n)
	}
	t.Logf("accepted %d delivered %d dropped %d", total.Load(), len(got), dropped)
}

// TestCloseNoLeak: Engine.Close with ticking generators, pending
// queue messages and a stopped chain leaves no goroutine behind.
func TestCloseNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	s := newSink(-1)
	e := mediation.NewEngine(mediation.Config{Registry: testRegistry(t, s)})
	for i := range 5 {
		ch := build(t, e, fmt.Sprint("c", i), adp("number-generator", "g", map[string]any{"period": 1}),
			adp("rest-in", "src", nil), med("passthrough", "p", nil), adp("sink", "o", nil),
			queueBind("g:out", "p:in", 4), queueBind("src:out", "p:in", 4), queueBind("p:out", "o:in", 4), start)
		for j := range 3 {
			_ = ch.TrySend("src", mediation.Message{Content: j})
		}
		if i%2 == 0 {
			must(t, ch.Stop())
		}
	}
	must(t, e.Close())
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after Close, %d before\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
	if _, err := e.CreateChain("x"); !errors.Is(err, mediation.ErrConflict) {
		t.Errorf("CreateChain after Close: %v", err)
	}
}
