package mediation

import (
	"runtime"
	"strings"
	"testing"
)

// TestQueueSizesOfForwardedMessages: every message a queue holds counts
// what messageSize says of it, whether its properties were walked or their
// size came from an earlier queue past components that forward them
// (run.propsSize) or enrich them (enricher.Process), through direct
// bindings too, and with fan-out copies.
func TestQueueSizesOfForwardedMessages(t *testing.T) {
	long := strings.Repeat("v", 100)
	messages := []Message{
		{Content: "reading"},
		{Content: "a b x", Properties: map[string]any{"a": 1.0}},
		{Content: map[string]any{"k": []any{1.0, "two"}}, Properties: map[string]any{"a": "x", "site": "old", "n": map[string]any{"k": []any{1.0, "two"}}}},
		{Content: nil, Properties: map[string]any{"site": long}},
	}
	type node struct {
		typ   string
		props map[string]any
		link  string // the linker from the node before
	}
	q := func(typ string, props map[string]any) node { return node{typ, props, "queue"} }
	d := func(typ string, props map[string]any) node { return node{typ, props, "direct"} }
	cases := []struct {
		name  string
		nodes []node
		fan   int // holds bound to the last node (1 by default)
	}{
		{"passthrough", []node{q("passthrough", nil)}, 1},
		{"filter", []node{q("filter", map[string]any{"condition": "(a=*)"})}, 1},
		{"router", []node{q("router", map[string]any{"conditions": map[string]any{"(a=*)": "default"}})}, 1},
		{"translator", []node{q("translator", map[string]any{"dictionary": map[string]any{"x": "longer-word"}})}, 1},
		{"enricher adds and replaces", []node{q("enricher", map[string]any{"site": "lab", "a": long})}, 1},
		{"enricher with a map value", []node{q("enricher", map[string]any{"n": map[string]any{"deep": []any{"x", 2.0}}})}, 1},
		{"enricher without properties", []node{q("enricher", nil)}, 1},
		{"direct after a queue", []node{q("passthrough", nil), d("enricher", map[string]any{"site": "lab"}), d("filter", map[string]any{"condition": "(site=*)"})}, 1},
		{"queue after queue", []node{q("enricher", map[string]any{"site": "lab"}), q("passthrough", nil), q("enricher", map[string]any{"b": 2.0})}, 1},
		{"changed in place", []node{q("mutate", nil)}, 1},
		{"forwarded after a change", []node{q("passthrough", nil), d("mutate", nil), d("passthrough", nil)}, 1},
		{"enriched after a change", []node{q("mutate", nil), q("enricher", map[string]any{"site": "lab"})}, 1},
		{"fan-out", []node{q("enricher", map[string]any{"site": "lab"}), q("filter", map[string]any{"condition": "(site=*)"})}, 3},
		{"a built-in's type copied, with another implementation", []node{q("passthrough", nil), d("grow", nil)}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := sizeEngine(t)
			ch, err := e.CreateChain("sizes")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ch.AddAdapter("rest-in", "src", nil); err != nil {
				t.Fatal(err)
			}
			prev := "src:out"
			for i, n := range tc.nodes {
				id := "n" + string(rune('0'+i))
				if _, err := ch.AddMediator(n.typ, id, n.props); err != nil {
					t.Fatal(err)
				}
				if _, err := ch.Bind(prev, id+":in", n.link, nil); err != nil {
					t.Fatal(err)
				}
				prev = id + ":" + map[bool]string{true: "default", false: "out"}[n.typ == "router"]
			}
			for i := range tc.fan {
				id := "hold" + string(rune('0'+i))
				if _, err := ch.AddAdapter("hold", id, nil); err != nil {
					t.Fatal(err)
				}
				if _, err := ch.Bind(prev, id+":in", "queue", nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := ch.Start(); err != nil {
				t.Fatal(err)
			}
			for _, m := range messages {
				if err := ch.Send("src", m.Clone()); err != nil {
					t.Fatal(err)
				}
			}
			total := checkHeld(t, ch)
			if total == 0 {
				t.Fatal("no message reached the held queues")
			}
		})
	}
}

// checkHeld waits until every message sent into ch has left the queues
// that do not lead to a "hold" component, then checks that each message the
// queues into holds keep counts what messageSize says of it; it returns how
// many they keep.
func checkHeld(t *testing.T, ch *Chain) int {
	t.Helper()
	ch.mu.Lock()
	var ahead, held []*queueLink
	for _, b := range ch.bindings {
		if b.queue == nil {
			continue
		}
		if b.target.Load().typ.Name == "hold" {
			held = append(held, b.queue)
		} else {
			ahead = append(ahead, b.queue)
		}
	}
	ch.mu.Unlock()
	// Messages only move forward, and leave a queue once in the
	// next: all queues ahead seen empty in order, every message
	// that passes is held.
	for i := 0; i < len(ahead); {
		ahead[i].mu.Lock()
		n := ahead[i].n
		ahead[i].mu.Unlock()
		if n != 0 {
			runtime.Gosched()
			i = 0
			continue
		}
		i++
	}
	total := 0
	for _, hq := range held {
		hq.mu.Lock()
		bytes := 0
		for i := range hq.n {
			it := hq.buf[(hq.head+i)%len(hq.buf)]
			if want := messageSize(it.m); it.size != want {
				t.Errorf("message %v counted %d bytes, messageSize says %d", it.m, it.size, want)
			}
			if want := mapSize(it.m.Properties, 0); it.psize != want {
				t.Errorf("message %v: properties counted %d bytes, mapSize says %d", it.m, it.psize, want)
			}
			bytes += it.size
		}
		if hq.bytes != bytes {
			t.Errorf("queue counts %d bytes, its messages %d", hq.bytes, bytes)
		}
		total += hq.n
		hq.mu.Unlock()
	}
	return total
}

// sizeEngine returns an engine whose registry has, beside the built-ins,
// "hold" (an adapter that blocks in Process until the test ends, so the
// queue into it keeps what reaches it), "grow" (a copy of the
// passthrough's type whose implementation adds a property in place) and
// "mutate" (a mediator that changes the properties in place).
func sizeEngine(t *testing.T) *Engine {
	t.Helper()
	long := strings.Repeat("v", 100)
	release := make(chan struct{})
	r := NewRegistry()
	r.Register(Type{Name: "hold", Kind: KindAdapter, Pattern: PatternOutOnly, In: []string{"in"},
		New: func(map[string]any, Env) (any, error) {
			return ProcessorFunc(func(string, Message, Emitter) error { <-release; return nil }), nil
		}})
	// A copy of the passthrough's type, with an implementation
	// that changes the properties: it is not trusted with them.
	grow, err := r.Type("passthrough")
	if err != nil {
		t.Fatal(err)
	}
	grow.Name, grow.New = "grow", func(map[string]any, Env) (any, error) {
		return ProcessorFunc(func(_ string, m Message, out Emitter) error {
			if m.Properties != nil {
				m.Properties["grown"] = long
			}
			out.Emit("out", m)
			return nil
		}), nil
	}
	if err := r.Register(grow); err != nil {
		t.Fatal(err)
	}
	r.Register(Type{Name: "mutate", Kind: KindMediator, In: []string{"in"}, Out: []string{"out"},
		New: func(map[string]any, Env) (any, error) {
			return ProcessorFunc(func(_ string, m Message, out Emitter) error {
				if m.Properties != nil {
					m.Properties["grown"] = long
					delete(m.Properties, "site")
				}
				out.Emit("out", m)
				return nil
			}), nil
		}})
	e := NewEngine(Config{Registry: r})
	t.Cleanup(func() {
		close(release)
		e.Close()
	})
	return e
}

// TestQueueSizesThroughARouter: a router that matches two ports sends a
// copy to the first and the message itself to the last; an enricher on
// either side changes what it got, and the queues after them count it.
func TestQueueSizesThroughARouter(t *testing.T) {
	e := sizeEngine(t)
	ch, err := e.CreateChain("router")
	if err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error { _, err := ch.AddAdapter("rest-in", "src", nil); return err },
		func() error {
			_, err := ch.AddMediator("router", "r", map[string]any{"conditions": map[string]any{"(a=*)": "one", "(b=*)": "two"}})
			return err
		},
		func() error {
			_, err := ch.AddMediator("enricher", "e1", map[string]any{"one": strings.Repeat("x", 50)})
			return err
		},
		func() error { _, err := ch.AddMediator("enricher", "e2", map[string]any{"a": "replaced"}); return err },
		func() error { _, err := ch.AddAdapter("hold", "h1", nil); return err },
		func() error { _, err := ch.AddAdapter("hold", "h2", nil); return err },
		func() error { _, err := ch.AddAdapter("hold", "h3", nil); return err },
		func() error { _, err := ch.Bind("src:out", "r:in", "queue", nil); return err },
		func() error { _, err := ch.Bind("r:one", "e1:in", "direct", nil); return err },
		func() error { _, err := ch.Bind("r:two", "e2:in", "direct", nil); return err },
		func() error { _, err := ch.Bind("r:default", "h3:in", "queue", nil); return err },
		func() error { _, err := ch.Bind("e1:out", "h1:in", "queue", nil); return err },
		func() error { _, err := ch.Bind("e2:out", "h2:in", "queue", nil); return err },
		ch.Start,
	}
	for i, f := range steps {
		if err := f(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	for _, p := range []map[string]any{{"a": 1.0, "b": 2.0}, {"a": "x"}, {"b": "y", "c": []any{"z"}}, {"d": 0.0}} {
		if err := ch.Send("src", Message{Content: "m", Properties: p}); err != nil {
			t.Fatal(err)
		}
	}
	if n := checkHeld(t, ch); n != 5 {
		t.Errorf("%d messages held, want 5 (two for the first, one for each other)", n)
	}
}

// TestQueueReusesCountedSizes: a queue takes the size a queue before it
// counted for properties that reached it through components that keep
// them, or that the enricher changed and counted, without counting them
// again (here from a size no walk would give).
func TestQueueReusesCountedSizes(t *testing.T) {
	for _, tt := range []struct {
		name string
		mid  map[string]any // the enricher's properties; nil: a filter
		want int
	}{
		{"kept by a passthrough and a filter", nil, 12345},
		{"an entry added by the enricher", map[string]any{"site": "lab"}, 12345 + entrySize("site", "lab", 0)},
		{"an entry replaced by the enricher", map[string]any{"a": "longer"}, 12345 - entrySize("a", 1.0, 0) + entrySize("a", "longer", 0)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := sizeEngine(t).CreateChain("reuse")
			if err != nil {
				t.Fatal(err)
			}
			mid := func() error {
				_, err := ch.AddMediator("filter", "f", map[string]any{"condition": "(a=*)"})
				return err
			}
			if tt.mid != nil {
				mid = func() error { _, err := ch.AddMediator("enricher", "f", tt.mid); return err }
			}
			for _, err := range []error{
				func() error { _, err := ch.AddMediator("passthrough", "p", nil); return err }(),
				mid(),
				func() error { _, err := ch.AddAdapter("hold", "h", nil); return err }(),
				func() error { _, err := ch.Bind("p:out", "f:in", "direct", nil); return err }(),
				func() error { _, err := ch.Bind("f:out", "h:in", "queue", nil); return err }(),
				ch.Start(),
			} {
				if err != nil {
					t.Fatal(err)
				}
			}
			// A queue into p, its message saying its properties count
			// 12345 bytes.
			c, err := ch.lockFind("p", false)
			if err != nil {
				t.Fatal(err)
			}
			ch.mu.Unlock()
			in := &binding{ch: ch, toPort: "in"}
			in.target.Store(c)
			l, err := queueLinker{}.NewLink(map[string]any{"capacity": 8.0}, in)
			if err != nil {
				t.Fatal(err)
			}
			q := l.(*queueLink)
			q.Start()
			defer q.Stop()
			if err := q.push(Message{Content: "m", Properties: map[string]any{"a": 1.0}}, nil, 12345, false); err != nil {
				t.Fatal(err)
			}
			ch.mu.Lock()
			held := ch.bindings[len(ch.bindings)-1].queue
			ch.mu.Unlock()
			for {
				held.mu.Lock()
				n := held.n
				var it queued
				if n > 0 {
					it = held.buf[held.head]
				}
				held.mu.Unlock()
				if n == 0 {
					runtime.Gosched()
					continue
				}
				if it.psize != tt.want || it.size != messageBase+valueSize("m", 0)+tt.want {
					t.Errorf("held message counts %d bytes, properties %d; want properties %d, from the size counted before", it.size, it.psize, tt.want)
				}
				return
			}
		})
	}
}

// TestPanicForgetsTheSize: a component that panics may leave the run's
// known size naming a map no longer alive (the enricher sets it around
// its emit); the recovery forgets it.
func TestPanicForgetsTheSize(t *testing.T) {
	r := NewRegistry()
	r.Register(Type{Name: "boom", Kind: KindMediator, In: []string{"in"}, Out: []string{"out"},
		New: func(map[string]any, Env) (any, error) {
			return ProcessorFunc(func(string, Message, Emitter) error { panic("boom") }), nil
		}})
	e := NewEngine(Config{Registry: r})
	defer e.Close()
	ch, err := e.CreateChain("c")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.AddMediator("boom", "b", nil); err != nil {
		t.Fatal(err)
	}
	c, err := ch.find("b")
	if err != nil {
		t.Fatal(err)
	}
	run := newRun(10)
	defer run.release()
	run.frame = frame{c: c}
	run.in, run.inSize = 0xdead, 7
	c.invoke("in", Message{Content: "m"}, run)
	if run.in != 0 {
		t.Errorf("after a panic the run still knows a size for map %#x", run.in)
	}
	if _, _, _, errs := c.counters(); errs != 1 {
		t.Errorf("errors = %d, want the panic counted", errs)
	}
}
