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
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			r := NewRegistry()
			r.Register(Type{Name: "hold", Kind: KindAdapter, Pattern: PatternOutOnly, In: []string{"in"},
				New: func(map[string]any, Env) (any, error) {
					return ProcessorFunc(func(string, Message, Emitter) error { <-release; return nil }), nil
				}})
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
			defer e.Close()
			defer close(release)
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
			if total == 0 {
				t.Fatal("no message reached the held queues")
			}
		})
	}
}
