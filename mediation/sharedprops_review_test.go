package mediation_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/mediation"
)

// boomLinker makes links that panic on a message whose content is "boom"
// and deliver any other at once: a user's link may fail that way, and the
// panic is counted as an error of the component that emitted.
type boomLinker struct{}

func (boomLinker) NewLink(_ map[string]any, to mediation.Receiver) (mediation.Link, error) {
	return &boomLink{to: to}, nil
}

type boomLink struct{ to mediation.Receiver }

func (l *boomLink) Send(m mediation.Message) error {
	if m.Content == "boom" {
		panic("boom")
	}
	return l.to.Receive(m)
}
func (l *boomLink) Start()     {}
func (l *boomLink) Stop()      {}
func (l *boomLink) Len() int   { return 0 }
func (l *boomLink) Close() int { return 0 }

// handOver is a mediator that holds one message without properties
// (handed over by Replace) and, when Replace leaves it unbound and stops
// it, runs hook: a Stopper may do anything, a Send included.
type handOver struct {
	held atomic.Bool
	hook atomic.Pointer[func()]
}

func (h *handOver) Process(string, mediation.Message, mediation.Emitter) error { return nil }

func (h *handOver) Drain() []mediation.Held {
	if h.held.Swap(false) {
		return []mediation.Held{{Port: "in", Message: mediation.Message{Content: "boom"}}}
	}
	return nil
}

func (h *handOver) Stop() error {
	if f := h.hook.Swap(nil); f != nil {
		(*f)()
	}
	return nil
}

// TestSharedPropertiesMarkSurvivesAPanic: a component's panic must not
// leave the run marking another map as shared than the one its message
// carries. Here enricher w has a message handed over (by Replace) without
// properties when a message of enricher e1, with e1's shared map, reaches
// it: w first processes the handed-over one, giving it w's own shared map,
// and its link panics on it; w then gets e1's message, and, an enricher
// writing in place, must get a copy of e1's map. Were the run still to
// mark w's map as the shared one, w would write into e1's, and every later
// message of e1 would carry w's entries.
func TestSharedPropertiesMarkSurvivesAPanic(t *testing.T) {
	p, s, k := &peek{}, &scribble{}, newSink(0)
	e := sharedPropsEngine(t, p, s, k)
	r := e.Registry()
	h := &handOver{}
	must(t, r.Register(mediatorType("hand-over", h)))
	must(t, r.RegisterLinker("boom", boomLinker{}))
	ch := build(t, e, "c",
		adp("rest-in", "src", nil),
		med("enricher", "e1", map[string]any{"site": "lab"}),
		adp("peek", "p", nil),
		med("enricher", "w", map[string]any{"room": "r1"}),
		med("hand-over", "h", nil),
		adp("sink", "k", nil),
		bind("src:out", "e1:in", "direct"),
		bind("e1:out", "p:in", "direct"),
		bind("e1:out", "w:in", "direct"), // last: w gets e1's message itself
		bind("w:out", "k:in", "boom"),
		start)
	h.held.Store(true)
	var sendErr error
	hook := func() { sendErr = ch.Send("src", mediation.Message{Content: "first"}) }
	h.hook.Store(&hook)
	must(t, ch.Replace("h", "w")) // w gets h's held message; h, unbound, is stopped
	if h.hook.Load() != nil {
		t.Fatal("the hand-over was not stopped by Replace: the test does not test what it says")
	}
	must(t, sendErr)
	must(t, ch.Send("src", mediation.Message{Content: "second"}))
	p.sawOnly(t, map[string]any{"site": "lab"})
	for i, m := range k.all() {
		if diff := cmp.Diff(map[string]any{"site": "lab", "room": "r1"}, m.Properties); diff != "" {
			t.Errorf("message %d (%v): the sink got (-want +got):\n%s", i, m.Content, diff)
		}
	}
	if n := len(k.all()); n != 2 {
		t.Errorf("the sink got %d messages, want 2", n)
	}
}

// emitOnStop is a read-only mediator that, given a message, has the chain
// stopped (on another goroutine) and, once the chain's components are
// being stopped (its links stopped before them), emits n messages without
// properties: they are queued on the stopped chain's queue ahead.
type emitOnStop struct {
	ch      *mediation.Chain
	n       int
	stopped chan struct{}
	done    chan error
}

func (e *emitOnStop) Process(_ string, _ mediation.Message, out mediation.Emitter) error {
	go func() { e.done <- e.ch.Stop() }()
	<-e.stopped
	for i := range e.n {
		out.Emit("out", mediation.Message{Content: float64(i)})
	}
	return nil
}

// stopSignal is a component outside the messages' way that tells when the
// chain stops it (Stopper), which Stop does once its links are stopped.
type stopSignal struct {
	once    sync.Once
	stopped chan struct{}
}

func (s *stopSignal) Process(string, mediation.Message, mediation.Emitter) error { return nil }
func (s *stopSignal) Stop() error {
	s.once.Do(func() { close(s.stopped) })
	return nil
}

// TestSharedPropertiesQueuedThroughReplace: messages queued with an
// enricher's shared map keep the mark while the chain is stopped and the
// queue's target, read-only when they were queued, is replaced by a
// component that writes into what it gets: at the next Start that component
// gets a copy of its own for each. A mark decided by the target at the
// time of the push (none for a read-only one) would hand the writer the
// shared map, and the enricher's later messages would carry its writes.
func TestSharedPropertiesQueuedThroughReplace(t *testing.T) {
	const n = 3
	p, s, k := &peek{}, &scribble{}, newSink(n)
	e := sharedPropsEngine(t, p, s, k)
	r := e.Registry()
	sig := &stopSignal{stopped: make(chan struct{})}
	trig := &emitOnStop{n: n, stopped: sig.stopped, done: make(chan error, 1)}
	ro := mediatorType("emit-on-stop", trig)
	ro.ReadOnly, ro.Stateless = true, true
	must(t, r.Register(ro))
	must(t, r.Register(mediatorType("stop-signal", sig)))
	ch := build(t, e, "c",
		adp("rest-in", "src", nil),
		med("emit-on-stop", "trig", nil),
		med("enricher", "e1", map[string]any{"site": "lab"}),
		adp("peek", "p", nil),
		med("passthrough", "ro", nil),
		med("scribble", "w", nil),
		med("stop-signal", "sig", nil),
		adp("sink", "k", nil),
		bind("src:out", "trig:in", "direct"),
		bind("trig:out", "e1:in", "direct"),
		bind("e1:out", "p:in", "direct"),
		bind("e1:out", "ro:in", "queue"), // last: the queue gets e1's messages themselves
		bind("ro:out", "k:in", "direct"),
		start)
	trig.ch = ch
	must(t, ch.Send("src", mediation.Message{Content: "go"}))
	must(t, <-trig.done)
	if got := len(k.all()); got != 0 {
		t.Fatalf("the sink got %d messages before the Replace: the queue did not keep them", got)
	}
	must(t, ch.Replace("ro", "w"))
	must(t, ch.Start())
	k.wait(t)
	must(t, ch.Unbind("src:out", "trig:in"))
	must(t, bind("src:out", "e1:in", "direct")(ch))
	must(t, ch.Send("src", mediation.Message{Content: "after"}))
	props, _ := p.seen()
	if len(props) != n+1 {
		t.Fatalf("the peek saw %d messages, want %d", len(props), n+1)
	}
	for i, got := range props {
		if diff := cmp.Diff(map[string]any{"site": "lab"}, got); diff != "" {
			t.Errorf("message %d: the read-only peek saw (-want +got):\n%s", i, diff)
		}
	}
	for i, m := range k.all()[:n] {
		if diff := cmp.Diff(map[string]any{"site": "lab", "n": float64(i + 1)}, m.Properties); diff != "" {
			t.Errorf("message %d: the sink got (-want +got):\n%s", i, diff)
		}
	}
}
