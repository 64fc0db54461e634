package mediation_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pervasim/pervasim/mediation"
)

func TestReplaceErrors(t *testing.T) {
	tests := []struct {
		name     string
		from, to string
		want     string
		msg      string
	}{
		{"ok", "p", "q", "", ""},
		{"missing from", "zz", "q", "not found", "zz"},
		{"missing to", "p", "zz", "not found", "zz"},
		{"itself", "p", "p", "invalid", "itself"},
		{"kind mismatch", "p", "o2", "invalid", "adapter"},
		{"bound port missing on target", "r", "q", "invalid", "hot"},
		{"target already has the binding", "p", "dup", "conflict", "already has"},
		{"direct cycle", "p", "down", "invalid", "cycle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mediation.NewEngine(mediation.Config{})
			defer e.Close()
			ch := build(t, e, "c",
				adp("rest-in", "a", nil), med("passthrough", "p", nil), med("passthrough", "q", nil),
				med("passthrough", "dup", nil), med("passthrough", "down", nil),
				med("router", "r", map[string]any{"conditions": map[string]any{"(k=1)": "hot"}}),
				adp("rest-out", "o", nil), adp("rest-out", "o2", nil),
				bind("a:out", "p:in", ""), bind("p:out", "down:in", ""), bind("down:out", "o:in", ""),
				bind("a:out", "dup:in", ""), bind("a:out", "r:in", ""), bind("r:hot", "o2:in", ""))
			before, _ := ch.Info()
			err := ch.Replace(tt.from, tt.to)
			if diff := cmp.Diff(tt.want, errKind(err)); diff != "" {
				t.Fatalf("error kind (-want +got):\n%s (err: %v)", diff, err)
			}
			after, _ := ch.Info()
			if err != nil {
				if !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("error %q does not mention %q", err, tt.msg)
				}
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("chain changed after a failed Replace (-before +after):\n%s", diff)
				}
				return
			}
			want := []mediation.BindingInfo{
				{From: "a:out", To: "q:in", Linker: "direct"}, {From: "q:out", To: "down:in", Linker: "direct"},
				{From: "down:out", To: "o:in", Linker: "direct"}, {From: "a:out", To: "dup:in", Linker: "direct"},
				{From: "a:out", To: "r:in", Linker: "direct"}, {From: "r:hot", To: "o2:in", Linker: "direct"},
			}
			if diff := cmp.Diff(want, after.Bindings); diff != "" {
				t.Errorf("bindings after Replace (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before.Mediators, after.Mediators); diff != "" {
				t.Errorf("from must stay in the chain (-before +after):\n%s", diff)
			}
		})
	}
}

// TestReplaceAggregatorGroup is the partly-filled-group case: two messages
// into an aggregator expecting three, replace, third message: the aggregate
// of all three comes out of the replacement.
func TestReplaceAggregatorGroup(t *testing.T) {
	for _, linker := range []string{"direct", "queue"} {
		for _, startedDuringReplace := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/started=%v", linker, startedDuringReplace), func(t *testing.T) {
				s := newSink(1)
				e := newTestEngine(t, s)
				ch := build(t, e, "c", adp("rest-in", "a", nil),
					med("aggregator", "g1", map[string]any{"count": 3.0}), med("aggregator", "g2", map[string]any{"count": 3.0}),
					adp("sink", "o", nil), bind("a:out", "g1:in", linker), bind("g1:out", "o:in", linker), start)
				send := func(i int) {
					t.Helper()
					if err := ch.Send("a", msg(i, props{"correlation.id": "x", "correlation.index": i})); err != nil {
						t.Fatal(err)
					}
				}
				send(0)
				send(1)
				for mustComponent(t, ch, "g1").Counters.In < 2 { // let the queue deliver
					runtime.Gosched()
				}
				if !startedDuringReplace {
					ch.Stop()
				}
				if err := ch.Replace("g1", "g2"); err != nil {
					t.Fatal(err)
				}
				if !startedDuringReplace {
					if q := mustComponent(t, ch, "g2").Counters.Queue; q != 2 {
						t.Errorf("g2 queue while stopped = %d, want the 2 handed-over messages", q)
					}
					ch.Start()
				}
				send(2)
				s.wait(t)
				if diff := cmp.Diff([]any{[]any{0, 1, 2}}, contents(s.all())); diff != "" {
					t.Errorf("aggregate (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(mediation.Counters{In: 2}, mustComponent(t, ch, "g1").Counters); diff != "" {
					t.Errorf("g1 counters (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func mustComponent(t testing.TB, ch *mediation.Chain, id string) mediation.ComponentInfo {
	t.Helper()
	c, err := ch.Component(id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// stamp is the content of the messages of the lossless test.
type stamp struct{ src, seq int }

// TestReplaceLossless pushes 100,000 messages from 4 concurrent senders
// through a chain while replacing its middle mediator 100 times (cycling
// through three instances of different types), and checks that every
// message arrives exactly once and in order per source.
func TestReplaceLossless(t *testing.T) {
	const (
		senders  = 4
		total    = 100_000
		replaces = 100
	)
	tests := []struct {
		name       string
		in, out    string // linkers into and out of the replaced mediator
		mediators  [3]string
		queueProps map[string]any
	}{
		{"direct", "direct", "direct", [3]string{"passthrough", "enricher", "passthrough"}, nil},
		{"queue in", "queue", "direct", [3]string{"passthrough", "enricher", "translator"}, map[string]any{"capacity": 16.0}},
		{"queue in and out", "queue", "queue", [3]string{"enricher", "passthrough", "passthrough"}, map[string]any{"capacity": 64.0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSink(total)
			e := newTestEngine(t, s)
			ch := build(t, e, "c", adp("sink", "o", nil))
			ids := []string{"m0", "m1", "m2"}
			for i, typ := range tt.mediators {
				if _, err := ch.AddMediator(typ, ids[i], nil); err != nil {
					t.Fatal(err)
				}
			}
			for i := range senders {
				src := fmt.Sprintf("in%d", i)
				if _, err := ch.AddAdapter("rest-in", src, nil); err != nil {
					t.Fatal(err)
				}
				if _, err := ch.Bind(src+":out", "m0:in", tt.in, linkProps(tt.in, tt.queueProps)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := ch.Bind("m0:out", "o:in", tt.out, linkProps(tt.out, tt.queueProps)); err != nil {
				t.Fatal(err)
			}
			if err := ch.Start(); err != nil {
				t.Fatal(err)
			}

			var sent atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, senders+1)
			for i := range senders {
				wg.Go(func() {
					src := fmt.Sprintf("in%d", i)
					for seq := range total / senders {
						if err := ch.Send(src, msg(stamp{i, seq}, nil)); err != nil {
							errs <- err
							return
						}
						sent.Add(1)
					}
				})
			}
			wg.Go(func() {
				cur := 0
				for r := range replaces {
					for sent.Load() < int64((r+1)*total/(replaces+2)) {
						runtime.Gosched()
					}
					next := (cur + 1) % len(ids)
					if err := ch.Replace(ids[cur], ids[next]); err != nil {
						errs <- err
						return
					}
					cur = next
				}
			})
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			s.wait(t)

			next := make([]int, senders)
			for i, m := range s.all() {
				st := m.Content.(stamp)
				if st.seq != next[st.src] {
					t.Fatalf("message %d: source %d sequence %d, want %d (lost, duplicated or reordered)", i, st.src, st.seq, next[st.src])
				}
				next[st.src]++
			}
			for src, n := range next {
				if n != total/senders {
					t.Errorf("source %d: %d messages arrived, want %d", src, n, total/senders)
				}
			}
			var in uint64
			for _, id := range ids {
				in += mustComponent(t, ch, id).Counters.In
			}
			if in != total {
				t.Errorf("the mediators received %d messages in all, want %d", in, total)
			}
		})
	}
}

// linkProps returns p for the queue linker and nil for others.
func linkProps(linker string, p map[string]any) map[string]any {
	if linker == "queue" {
		return p
	}
	return nil
}

// TestReplaceLosslessAggregator is the load test with held state: 4 senders
// push 100,000 messages, paired by correlation id, into aggregators
// (count 2) that are replaced 100 times while groups are half full; every
// pair must come out complete, once, and in order per source.
func TestReplaceLosslessAggregator(t *testing.T) {
	const (
		senders  = 4
		total    = 100_000
		replaces = 100
	)
	for _, linker := range []string{"direct", "queue"} {
		t.Run(linker, func(t *testing.T) {
			s := newSink(total / 2)
			e := newTestEngine(t, s)
			ch := build(t, e, "c", adp("sink", "o", nil))
			ids := []string{"g0", "g1"}
			for _, id := range ids {
				if _, err := ch.AddMediator("aggregator", id, map[string]any{"count": 2.0}); err != nil {
					t.Fatal(err)
				}
			}
			for i := range senders {
				src := fmt.Sprintf("in%d", i)
				if _, err := ch.AddAdapter("rest-in", src, nil); err != nil {
					t.Fatal(err)
				}
				if _, err := ch.Bind(src+":out", "g0:in", linker, nil); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := ch.Bind("g0:out", "o:in", linker, nil); err != nil {
				t.Fatal(err)
			}
			if err := ch.Start(); err != nil {
				t.Fatal(err)
			}
			var sent atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, senders+1)
			for i := range senders {
				wg.Go(func() {
					src := fmt.Sprintf("in%d", i)
					for seq := range total / senders {
						m := msg(stamp{i, seq}, props{"correlation.id": fmt.Sprint(i, "/", seq/2), "correlation.index": seq % 2})
						if err := ch.Send(src, m); err != nil {
							errs <- err
							return
						}
						sent.Add(1)
					}
				})
			}
			wg.Go(func() {
				for r := range replaces {
					for sent.Load() < int64((r+1)*total/(replaces+2)) {
						runtime.Gosched()
					}
					if err := ch.Replace(ids[r%2], ids[(r+1)%2]); err != nil {
						errs <- err
						return
					}
				}
			})
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			s.wait(t)
			next := make([]int, senders)
			for i, m := range s.all() {
				pair := m.Content.([]any)
				a, b := pair[0].(stamp), pair[1].(stamp)
				if a.src != b.src || a.seq != next[a.src] || b.seq != a.seq+1 {
					t.Fatalf("aggregate %d = %v, want source %d messages %d and %d", i, pair, a.src, next[a.src], next[a.src]+1)
				}
				next[a.src] += 2
			}
		})
	}
}

// TestMessagesHandedOverWhileStopped: the messages a rest-out keeps stay
// visible across UpdateProperties and Replace in a stopped chain, which
// processes them (retains them in the new implementation) only at its
// next Start: Messages gave none until then.
func TestMessagesHandedOverWhileStopped(t *testing.T) {
	e := newTestEngine(t, newSink(-1))
	ch := build(t, e, "c", adp("rest-in", "src", nil), adp("rest-out", "out", nil), adp("rest-out", "out2", nil),
		bind("src:out", "out:in", ""), start)
	for i := range 3 {
		must(t, ch.Send("src", mediation.Message{Content: i}))
	}
	must(t, ch.Stop())
	messages := func(id string) []any {
		t.Helper()
		ms, err := ch.Messages(id)
		must(t, err)
		return contents(ms)
	}
	want := []any{0, 1, 2}
	_, err := ch.UpdateProperties("out", map[string]any{"capacity": 50})
	must(t, err)
	if diff := cmp.Diff(want, messages("out")); diff != "" {
		t.Errorf("after UpdateProperties of a stopped chain (-want +got):\n%s", diff)
	}
	must(t, ch.Replace("out", "out2"))
	if diff := cmp.Diff(want, messages("out2")); diff != "" {
		t.Errorf("after Replace in a stopped chain (-want +got):\n%s", diff)
	}
	must(t, ch.Start())
	if diff := cmp.Diff(want, messages("out2")); diff != "" {
		t.Errorf("after Start (-want +got):\n%s", diff)
	}
	// Within a capacity lowered meanwhile: the newest, as it keeps them.
	must(t, ch.Stop())
	_, err = ch.UpdateProperties("out2", map[string]any{"capacity": 2})
	must(t, err)
	if diff := cmp.Diff([]any{1, 2}, messages("out2")); diff != "" {
		t.Errorf("after lowering the capacity of a stopped chain's rest-out (-want +got):\n%s", diff)
	}
	must(t, ch.Start())
	if diff := cmp.Diff([]any{1, 2}, messages("out2")); diff != "" {
		t.Errorf("after Start (-want +got):\n%s", diff)
	}
}

// slowDrain is a stateful mediator whose Drain waits for release, after
// saying on entered that it began.
type slowDrain struct{ entered, release chan struct{} }

func (slowDrain) Process(_ string, m mediation.Message, out mediation.Emitter) error {
	out.Emit("out", m)
	return nil
}
func (d slowDrain) Drain() []mediation.Held {
	close(d.entered)
	<-d.release
	return nil
}

// TestReplaceWhileDrainIsSlow: while Replace waits for the old
// component's Drain, messages that do not go through it are sent as
// usual; the topology was marked as changing during the Drain, and every
// Send of the chain spun until it returned.
func TestReplaceWhileDrainIsSlow(t *testing.T) {
	s := newSink(-1)
	d := slowDrain{entered: make(chan struct{}), release: make(chan struct{})}
	e := newTestEngine(t, s, mediatorType("slowdrain", d))
	ch := build(t, e, "c", adp("rest-in", "src", nil), med("slowdrain", "x", nil), med("passthrough", "y", nil),
		adp("rest-in", "other", nil), adp("sink", "o", nil),
		bind("src:out", "x:in", ""), bind("x:out", "o:in", ""), bind("other:out", "o:in", ""), start)
	replaced := make(chan error, 1)
	go func() { replaced <- ch.Replace("x", "y") }()
	<-d.entered
	sent := make(chan error, 1)
	go func() { sent <- ch.Send("other", mediation.Message{Content: "meanwhile"}) }()
	select {
	case err := <-sent:
		must(t, err)
	case <-time.After(10 * time.Second): // a hang, not a speed check
		close(d.release)
		t.Fatal("a Send that does not go through the component being replaced waited for its Drain")
	}
	close(d.release)
	must(t, <-replaced)
	if got := contents(s.all()); len(got) != 1 || got[0] != "meanwhile" {
		t.Errorf("the sink got %v, want [meanwhile]", got)
	}
}

// TestReplaceRefusesQueueCycle: a Replace whose result would loop is
// refused whatever the linkers on the loop, a queue binding's included,
// as Bind refuses such a binding.
func TestReplaceRefusesQueueCycle(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch := build(t, e, "c",
		med("passthrough", "p", nil), med("passthrough", "q", nil), med("passthrough", "x", nil),
		bind("p:out", "q:in", ""), bind("x:out", "p:in", "queue"))
	before, _ := ch.Info()
	err := ch.Replace("q", "x") // x would take p:out -> x:in: p -> x -> p
	if errKind(err) != "invalid" || !strings.Contains(err.Error(), "cycle p -> x -> p") {
		t.Fatalf("Replace = %v, want an invalid error naming the cycle p -> x -> p", err)
	}
	if after, _ := ch.Info(); !cmp.Equal(before, after) {
		t.Errorf("chain changed after a refused Replace (-before +after):\n%s", cmp.Diff(before, after))
	}
}
