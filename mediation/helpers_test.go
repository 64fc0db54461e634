package mediation_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/pervasim/pervasim/mediation"
)

// sink collects every message it receives, for tests.
type sink struct {
	mu     sync.Mutex
	msgs   []mediation.Message
	want   int
	done   chan struct{}
	notify chan struct{} // gets a value after each message, if not full
}

func newSink(want int) *sink {
	return &sink{want: want, done: make(chan struct{}), notify: make(chan struct{}, 1)}
}

func (s *sink) Process(_ string, m mediation.Message, _ mediation.Emitter) error {
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	if len(s.msgs) == s.want {
		close(s.done)
	}
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
	return nil
}

func (s *sink) all() []mediation.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]mediation.Message(nil), s.msgs...)
}

// wait waits until the sink has its wanted number of messages.
func (s *sink) wait(t testing.TB) {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("sink got %d messages, want %d", len(s.all()), s.want)
	}
}

// waitN waits until the sink has at least n messages.
func (s *sink) waitN(t testing.TB, n int) []mediation.Message {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if ms := s.all(); len(ms) >= n {
			return ms
		}
		select {
		case <-s.notify:
		case <-deadline:
			t.Fatalf("sink got %d messages, want %d", len(s.all()), n)
		}
	}
}

// testRegistry returns the built-in registry plus a "sink" adapter type
// whose instances all feed s.
func testRegistry(t testing.TB, s *sink) *mediation.Registry {
	t.Helper()
	r := mediation.NewRegistry()
	err := r.Register(mediation.Type{
		Name: "sink", Kind: mediation.KindAdapter, Pattern: mediation.PatternOutOnly, In: []string{"in"},
		Doc: "Collects messages for tests.",
		New: func(map[string]any, mediation.Env) (any, error) { return s, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// newTestEngine returns an engine with the test registry and types, closed
// at cleanup.
func newTestEngine(t testing.TB, s *sink, types ...mediation.Type) *mediation.Engine {
	t.Helper()
	r := testRegistry(t, s)
	for _, typ := range types {
		if err := r.Register(typ); err != nil {
			t.Fatal(err)
		}
	}
	e := mediation.NewEngine(mediation.Config{Registry: r})
	t.Cleanup(func() { e.Close() })
	return e
}

// mediatorType is a mediator type name, in port "in" and out port "out",
// whose every instance is impl.
func mediatorType(name string, impl any) mediation.Type {
	return mediation.Type{Name: name, Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"},
		New: func(map[string]any, mediation.Env) (any, error) { return impl, nil }}
}

// step is one chain-building operation for must.
type step func(ch *mediation.Chain) error

func med(typ, id string, props map[string]any) step {
	return func(ch *mediation.Chain) error { _, err := ch.AddMediator(typ, id, props); return err }
}

func adp(typ, id string, props map[string]any) step {
	return func(ch *mediation.Chain) error { _, err := ch.AddAdapter(typ, id, props); return err }
}

func bind(from, to, linker string) step {
	return func(ch *mediation.Chain) error { _, err := ch.Bind(from, to, linker, nil); return err }
}

func start(ch *mediation.Chain) error { return ch.Start() }

// queueBind binds from to to with a queue of the given capacity.
func queueBind(from, to string, capacity float64) step {
	return func(ch *mediation.Chain) error {
		_, err := ch.Bind(from, to, "queue", map[string]any{"capacity": capacity})
		return err
	}
}

// must fails the test on err.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// build creates chain id and applies the steps, failing the test on error.
func build(t testing.TB, e *mediation.Engine, id string, steps ...step) *mediation.Chain {
	t.Helper()
	ch, err := e.CreateChain(id)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		if err := s(ch); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	return ch
}

// errKind names the sentinel err wraps, for comparisons.
func errKind(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, mediation.ErrNotFound):
		return "not found"
	case errors.Is(err, mediation.ErrInvalid):
		return "invalid"
	case errors.Is(err, mediation.ErrConflict):
		return "conflict"
	case errors.Is(err, mediation.ErrBusy):
		return "busy"
	}
	return "unwrapped: " + err.Error()
}

// contents returns the contents of ms.
func contents(ms []mediation.Message) []any {
	out := make([]any, len(ms))
	for i, m := range ms {
		out[i] = m.Content
	}
	return out
}
