package mediation_test

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/mediation"
)

// peek is an out-only adapter that notes a copy of the properties of each
// message it gets, and the address of their map. Its type may say it is
// ReadOnly: it writes to nothing it gets and keeps no map.
type peek struct {
	mu    sync.Mutex
	props []map[string]any
	addrs []uintptr
}

func (p *peek) Process(_ string, m mediation.Message, _ mediation.Emitter) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.props = append(p.props, maps.Clone(m.Properties))
	p.addrs = append(p.addrs, reflect.ValueOf(m.Properties).Pointer())
	return nil
}

// sawOnly fails the test unless every message p saw had the properties
// want, no more.
func (p *peek) sawOnly(t *testing.T, want map[string]any) {
	t.Helper()
	props, _ := p.seen()
	for i, got := range props {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("message %d: the read-only peek saw properties (-want +got):\n%s", i, diff)
		}
	}
}

func (p *peek) seen() ([]map[string]any, []uintptr) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.props), slices.Clone(p.addrs)
}

// scribble is a mediator that writes its count of messages into the
// properties of each message it gets (as any component may, unless its type
// is ReadOnly) and passes it on.
type scribble struct{ n atomic.Int64 }

func (s *scribble) Process(_ string, m mediation.Message, out mediation.Emitter) error {
	m.Properties["n"] = float64(s.n.Add(1))
	out.Emit("out", m)
	return nil
}

// stampLinker makes links that write into the properties of each message
// they carry, then deliver it at once: a link is code of anyone's, and may.
type stampLinker struct{}

func (stampLinker) NewLink(_ map[string]any, to mediation.Receiver) (mediation.Link, error) {
	return &stampLink{to: to}, nil
}

type stampLink struct {
	to mediation.Receiver
	n  atomic.Int64
}

func (l *stampLink) Send(m mediation.Message) error {
	m.Properties["n"] = float64(l.n.Add(1))
	return l.to.Receive(m)
}
func (l *stampLink) Start()     {}
func (l *stampLink) Stop()      {}
func (l *stampLink) Len() int   { return 0 }
func (l *stampLink) Close() int { return 0 }

// sharedPropsEngine returns an engine whose registry has the "peek"
// (ReadOnly) and "scribble" types, whose instances are p and s, the "sink"
// type of the tests (not ReadOnly) feeding k, and the "stamp" linker.
func sharedPropsEngine(t *testing.T, p *peek, s *scribble, k *sink) *mediation.Engine {
	t.Helper()
	r := testRegistry(t, k)
	must(t, r.Register(mediation.Type{Name: "peek", Kind: mediation.KindAdapter, Pattern: mediation.PatternOutOnly, In: []string{"in"},
		Stateless: true, ReadOnly: true, New: func(map[string]any, mediation.Env) (any, error) { return p, nil }}))
	must(t, r.Register(mediatorType("scribble", s)))
	must(t, r.RegisterLinker("stamp", stampLinker{}))
	e := mediation.NewEngine(mediation.Config{Registry: r})
	t.Cleanup(func() { e.Close() })
	return e
}

// TestSharedPropertiesAreNeverWritten: an enricher gives the messages that
// have no properties one map of its entries, which they share. Whatever
// may write to it gets a copy of its own first: a component of a type that
// is not ReadOnly (a user's, or another enricher, which writes in place),
// reached directly or through a queue, and a link of a linker other than
// the engine's. Each case binds a read-only peek first and the writer last
// (a fan-out copies the message for every binding but the last, so the
// writer gets the very message the enricher emitted): were the shared map
// written to, the peek would see what was written in the next messages,
// and the sink's earlier messages would change under it.
func TestSharedPropertiesAreNeverWritten(t *testing.T) {
	const n = 5
	tests := []struct {
		name   string
		writer step   // component "w", writing into the properties, out to "k"
		linker string // of the binding enrich:out -> w:in
		want   func(i int) map[string]any
	}{
		{"user type, direct", med("scribble", "w", nil), "direct",
			func(i int) map[string]any { return map[string]any{"site": "lab", "n": float64(i + 1)} }},
		{"user type, queue", med("scribble", "w", nil), "queue",
			func(i int) map[string]any { return map[string]any{"site": "lab", "n": float64(i + 1)} }},
		{"enricher, direct", med("enricher", "w", map[string]any{"site": "kitchen", "room": "r1"}), "direct",
			func(int) map[string]any { return map[string]any{"site": "kitchen", "room": "r1"} }},
		{"enricher, queue", med("enricher", "w", map[string]any{"room": "r1"}), "queue",
			func(int) map[string]any { return map[string]any{"site": "lab", "room": "r1"} }},
		{"link of a user's linker", med("passthrough", "w", nil), "stamp",
			func(i int) map[string]any { return map[string]any{"site": "lab", "n": float64(i + 1)} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, s, k := &peek{}, &scribble{}, newSink(0)
			e := sharedPropsEngine(t, p, s, k)
			ch := build(t, e, "c",
				adp("rest-in", "src", nil),
				med("enricher", "enrich", map[string]any{"site": "lab"}),
				adp("peek", "p", nil),
				tc.writer,
				adp("sink", "k", nil),
				bind("src:out", "enrich:in", "direct"),
				bind("enrich:out", "p:in", "direct"),
				func(ch *mediation.Chain) error {
					_, err := ch.Bind("enrich:out", "w:in", tc.linker, nil)
					return err
				},
				bind("w:out", "k:in", "direct"),
				start)
			for i := range n {
				must(t, ch.Send("src", mediation.Message{Content: float64(i)}))
				k.waitN(t, i+1) // the queue's delivery done before the next message
			}
			p.sawOnly(t, map[string]any{"site": "lab"})
			for i, m := range k.all() {
				if diff := cmp.Diff(tc.want(i), m.Properties); diff != "" {
					t.Errorf("message %d: the sink holds properties (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

// TestSharedPropertiesReachReadOnlyTypes: the components of ReadOnly types
// after an enricher (here a filter, then the peek) get the map it shares,
// the same for every message; a component of any other type gets a map of
// its own for each, with the same entries.
func TestSharedPropertiesReachReadOnlyTypes(t *testing.T) {
	const n = 4
	p, s, k := &peek{}, &scribble{}, newSink(n)
	e := sharedPropsEngine(t, p, s, k)
	ch := build(t, e, "c",
		adp("rest-in", "src", nil),
		med("enricher", "enrich", map[string]any{"site": "lab"}),
		med("filter", "f", map[string]any{"condition": "(site=lab)"}),
		adp("peek", "p", nil),
		adp("sink", "k", nil),
		bind("src:out", "enrich:in", "direct"),
		bind("enrich:out", "f:in", "direct"),
		bind("f:out", "k:in", "direct"),
		bind("f:out", "p:in", "direct"),
		start)
	for i := range n {
		must(t, ch.Send("src", mediation.Message{Content: float64(i)}))
	}
	k.wait(t)
	props, addrs := p.seen()
	for i := range n {
		if addrs[i] != addrs[0] {
			t.Fatalf("the read-only peek got maps at %#x, want one map shared by every message", addrs)
		}
		if diff := cmp.Diff(map[string]any{"site": "lab"}, props[i]); diff != "" {
			t.Errorf("message %d: the peek saw (-want +got):\n%s", i, diff)
		}
	}
	own := map[uintptr]bool{}
	for i, m := range k.all() {
		a := reflect.ValueOf(m.Properties).Pointer()
		if a == addrs[0] || own[a] {
			t.Errorf("message %d: the sink got the map at %#x, shared (the peek's is at %#x)", i, a, addrs[0])
		}
		own[a] = true
		if diff := cmp.Diff(map[string]any{"site": "lab"}, m.Properties); diff != "" {
			t.Errorf("message %d: the sink got (-want +got):\n%s", i, diff)
		}
	}
}

// TestSharedPropertiesUnderConcurrentSenders: senders on several
// goroutines through an enricher into a read-only peek and, on another
// binding, a component that writes into what it gets; under -race, a write
// into the map the read-only side shares would be reported.
func TestSharedPropertiesUnderConcurrentSenders(t *testing.T) {
	const senders, each = 4, 50
	p, s, k := &peek{}, &scribble{}, newSink(senders*each)
	e := sharedPropsEngine(t, p, s, k)
	ch := build(t, e, "c",
		adp("rest-in", "src", nil),
		med("enricher", "enrich", map[string]any{"site": "lab"}),
		med("passthrough", "pass", nil),
		med("scribble", "w", nil),
		adp("peek", "p", nil),
		adp("sink", "k", nil),
		bind("src:out", "enrich:in", "direct"),
		bind("enrich:out", "pass:in", "direct"),
		bind("pass:out", "p:in", "direct"),
		bind("pass:out", "w:in", "queue"),
		bind("w:out", "k:in", "direct"),
		start)
	var wg sync.WaitGroup
	for g := range senders {
		wg.Go(func() {
			for i := range each {
				if err := ch.Send("src", mediation.Message{Content: fmt.Sprint(g, i)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	k.wait(t)
	p.sawOnly(t, map[string]any{"site": "lab"})
	seen := map[float64]bool{}
	for _, m := range k.all() {
		seen[m.Properties["n"].(float64)] = true
	}
	if len(seen) != senders*each {
		t.Errorf("the sink's messages hold %d different counts, want %d: some shared one map", len(seen), senders*each)
	}
}

// TestSharedPropertiesHandedOverByRestOut: rest-out keeps the messages it
// gets, shared properties included, as they are (it never writes to
// them); what it hands over when it is replaced goes as copies. Here the
// component that takes its messages over writes into each: were it given
// the enricher's map, the peek would see what it wrote in the enricher's
// next messages.
func TestSharedPropertiesHandedOverByRestOut(t *testing.T) {
	p, s, k := &peek{}, &scribble{}, newSink(0)
	e := sharedPropsEngine(t, p, s, k)
	must(t, e.Registry().Register(mediation.Type{Name: "scribble-sink", Kind: mediation.KindAdapter,
		Pattern: mediation.PatternOutOnly, In: []string{"in"},
		New: func(map[string]any, mediation.Env) (any, error) {
			return mediation.ProcessorFunc(func(port string, m mediation.Message, _ mediation.Emitter) error {
				m.Properties["n"] = float64(s.n.Add(1))
				return k.Process(port, m, nil)
			}), nil
		}}))
	ch := build(t, e, "c",
		adp("rest-in", "src", nil),
		med("enricher", "enrich", map[string]any{"site": "lab"}),
		adp("peek", "p", nil),
		adp("rest-out", "out", nil),
		adp("scribble-sink", "w", nil),
		bind("src:out", "enrich:in", "direct"),
		bind("enrich:out", "p:in", "direct"),
		bind("enrich:out", "out:in", "direct"), // last: rest-out gets the enricher's message itself
		start)
	for i := range 3 {
		must(t, ch.Send("src", mediation.Message{Content: float64(i)}))
	}
	kept, err := ch.Messages("out")
	must(t, err)
	for i, m := range kept {
		if diff := cmp.Diff(map[string]any{"site": "lab"}, m.Properties); diff != "" {
			t.Errorf("rest-out's message %d (-want +got):\n%s", i, diff)
		}
	}
	must(t, ch.Replace("out", "w")) // w takes over the three messages rest-out kept
	for i := 3; i < 6; i++ {
		must(t, ch.Send("src", mediation.Message{Content: float64(i)}))
	}
	p.sawOnly(t, map[string]any{"site": "lab"})
	got := k.all()
	if len(got) != 6 {
		t.Fatalf("the sink got %d messages, want 6 (3 handed over, 3 new)", len(got))
	}
	for i, m := range got {
		want := map[string]any{"site": "lab", "n": float64(i + 1)}
		if diff := cmp.Diff(want, m.Properties); diff != "" || m.Content != float64(i) {
			t.Errorf("the sink's message %d (%v) (-want +got):\n%s", i, m.Content, diff)
		}
	}
}
