package mediation_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pervasim/pervasim/mediation"
)

func nopNew(map[string]any, mediation.Env) (any, error) {
	return mediation.ProcessorFunc(func(string, mediation.Message, mediation.Emitter) error { return nil }), nil
}

func TestRegistryRegister(t *testing.T) {
	in, out := []string{"in"}, []string{"out"}
	tests := []struct {
		name string
		typ  mediation.Type
		want string
	}{
		{"mediator", mediation.Type{Name: "m", Kind: mediation.KindMediator, In: in, Out: out, New: nopNew}, ""},
		{"in-only adapter", mediation.Type{Name: "a", Kind: mediation.KindAdapter, Pattern: mediation.PatternInOnly, Out: out, New: nopNew}, ""},
		{"in-out adapter", mediation.Type{Name: "a", Kind: mediation.KindAdapter, Pattern: mediation.PatternInOut, In: in, Out: out, New: nopNew}, ""},
		{"duplicate of a built-in", mediation.Type{Name: "filter", Kind: mediation.KindMediator, In: in, Out: out, New: nopNew}, "conflict"},
		{"bad name", mediation.Type{Name: "a b", Kind: mediation.KindMediator, New: nopNew}, "invalid"},
		{"no constructor", mediation.Type{Name: "m", Kind: mediation.KindMediator}, "invalid"},
		{"bad kind", mediation.Type{Name: "m", Kind: "gadget", New: nopNew}, "invalid"},
		{"mediator with pattern", mediation.Type{Name: "m", Kind: mediation.KindMediator, Pattern: mediation.PatternInOnly, New: nopNew}, "invalid"},
		{"adapter without pattern", mediation.Type{Name: "a", Kind: mediation.KindAdapter, Out: out, New: nopNew}, "invalid"},
		{"in-only with in port", mediation.Type{Name: "a", Kind: mediation.KindAdapter, Pattern: mediation.PatternInOnly, In: in, Out: out, New: nopNew}, "invalid"},
		{"out-only without in port", mediation.Type{Name: "a", Kind: mediation.KindAdapter, Pattern: mediation.PatternOutOnly, New: nopNew}, "invalid"},
		{"port with colon", mediation.Type{Name: "m", Kind: mediation.KindMediator, In: []string{"a:b"}, New: nopNew}, "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mediation.NewRegistry().Register(tt.typ)
			if diff := cmp.Diff(tt.want, errKind(err)); diff != "" {
				t.Errorf("error kind (-want +got):\n%s (err: %v)", diff, err)
			}
		})
	}
}

// TestRegistryUnregister: an unregistered type makes no new component,
// the components made of it stay, and an unknown name is not found.
func TestRegistryUnregister(t *testing.T) {
	r := mediation.NewRegistry()
	if err := r.Register(mediation.Type{Name: "m", Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"}, New: nopNew}); err != nil {
		t.Fatal(err)
	}
	e := mediation.NewEngine(mediation.Config{Registry: r})
	defer e.Close()
	ch, err := e.CreateChain("c")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.AddMediator("m", "before", nil); err != nil {
		t.Fatal(err)
	}
	if err := r.Unregister("m"); err != nil {
		t.Fatalf("Unregister(m) = %v", err)
	}
	if got := errKind(r.Unregister("m")); got != "not found" {
		t.Errorf("Unregister(m) again: error kind %q, want not found", got)
	}
	if _, err := r.Type("m"); errKind(err) != "not found" {
		t.Errorf("Type(m) after Unregister = %v, want not found", err)
	}
	if _, err := ch.AddMediator("m", "after", nil); errKind(err) != "invalid" {
		t.Errorf("AddMediator of an unregistered type = %v, want invalid", err)
	}
	if c, err := ch.Component("before"); err != nil || c.Type != "m" {
		t.Errorf("the component made before = %+v, %v; want it kept, of type m", c, err)
	}
}

func TestRegistryTypes(t *testing.T) {
	types := mediation.NewRegistry().Types()
	var names []string
	for _, ti := range types {
		names = append(names, string(ti.Kind)+"/"+ti.Name)
	}
	want := []string{
		"adapter/console", "adapter/number-generator", "adapter/rest-in", "adapter/rest-out",
		"mediator/aggregator", "mediator/enricher", "mediator/filter", "mediator/passthrough",
		"mediator/router", "mediator/splitter", "mediator/translator",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("Types() order (-want +got):\n%s", diff)
	}
	byName := map[string]mediation.TypeInfo{}
	for _, ti := range types {
		if ti.Doc == "" {
			t.Errorf("type %s has no doc", ti.Name)
		}
		ti.Doc = ""
		byName[ti.Name] = ti
	}
	tests := []struct {
		name string
		want mediation.TypeInfo
	}{
		{"rest-out", mediation.TypeInfo{Name: "rest-out", Kind: mediation.KindAdapter, Pattern: mediation.PatternOutOnly,
			In: []string{"in"}, Out: []string{}, Properties: map[string]any{"capacity": 100}}},
		{"number-generator", mediation.TypeInfo{Name: "number-generator", Kind: mediation.KindAdapter, Pattern: mediation.PatternInOnly,
			In: []string{}, Out: []string{"out"}, Properties: map[string]any{"period": 5000, "min": 0, "max": 100, "seed": 0}}},
		{"splitter", mediation.TypeInfo{Name: "splitter", Kind: mediation.KindMediator,
			In: []string{"in"}, Out: []string{"out"}, Properties: map[string]any{"separator": ","}}},
		{"passthrough", mediation.TypeInfo{Name: "passthrough", Kind: mediation.KindMediator, Stateless: true,
			In: []string{"in"}, Out: []string{"out"}, Properties: map[string]any{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, byName[tt.name]); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// countingLinker is a custom linker: direct delivery, counting messages.
type countingLinker struct{ n atomic.Int64 }

func (c *countingLinker) NewLink(props map[string]any, to mediation.Receiver) (mediation.Link, error) {
	return &countingLink{c: c, to: to}, nil
}

type countingLink struct {
	c  *countingLinker
	to mediation.Receiver
}

func (l *countingLink) Send(m mediation.Message) error { l.c.n.Add(1); return l.to.Receive(m) }
func (l *countingLink) Start()                         {}
func (l *countingLink) Stop()                          {}
func (l *countingLink) Len() int                       { return 0 }
func (l *countingLink) Close() int                     { return 0 }

func TestRegisterLinker(t *testing.T) {
	r := mediation.NewRegistry()
	cl := &countingLinker{}
	tests := []struct {
		name    string
		linker  string
		l       mediation.Linker
		aliases []string
		want    string
	}{
		{"new", "counting", cl, []string{"tally"}, ""},
		{"taken name", "queue", cl, nil, "conflict"},
		{"taken alias", "other", cl, []string{"JMS-Joram"}, "conflict"},
		{"nil", "nil", nil, nil, "invalid"},
		{"bad name", "a b", cl, nil, "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := r.RegisterLinker(tt.linker, tt.l, tt.aliases...)
			if diff := cmp.Diff(tt.want, errKind(err)); diff != "" {
				t.Errorf("error kind (-want +got):\n%s (err: %v)", diff, err)
			}
		})
	}
	if diff := cmp.Diff([]string{"JMS-Joram", "JMS_Joram", "counting", "direct", "event-admin", "queue", "tally"}, r.Linkers()); diff != "" {
		t.Errorf("Linkers() (-want +got):\n%s", diff)
	}
	e := mediation.NewEngine(mediation.Config{Registry: r})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "a", nil), adp("rest-out", "o", nil))
	bi, err := ch.Bind("a:out", "o:in", "tally", nil)
	if err != nil {
		t.Fatal(err)
	}
	if bi.Linker != "counting" {
		t.Errorf("linker reported as %q, want the canonical name counting", bi.Linker)
	}
	ch.Start()
	ch.Send("a", msg(1, nil))
	ch.Send("a", msg(2, nil))
	if got := cl.n.Load(); got != 2 {
		t.Errorf("custom linker carried %d messages, want 2", got)
	}
	if _, err := ch.Bind("a:out", "o:in", "pigeon", nil); err == nil || !strings.Contains(err.Error(), "counting, direct, event-admin, queue, tally") {
		t.Errorf("unknown linker error %v does not list the linkers", err)
	}
}

// TestCustomComponentInterfaces checks a user adapter using Injector,
// Retainer and Checker, like the built-in REST adapters.
func TestCustomComponentInterfaces(t *testing.T) {
	type box struct {
		mediation.Injector
		mediation.Retainer
		mediation.Checker
	}
	var kept []mediation.Message
	r := mediation.NewRegistry()
	err := r.Register(mediation.Type{
		Name: "loopback", Kind: mediation.KindAdapter, Pattern: mediation.PatternInOnly, Out: []string{"out"},
		New: func(props map[string]any, _ mediation.Env) (any, error) {
			broken := props["broken"] == true
			return box{
				Injector: mediation.InjectorFunc(func(m mediation.Message, out mediation.Emitter) error {
					kept = append(kept, m)
					return nil
				}),
				Retainer: mediation.RetainerFunc(func() []mediation.Message { return kept }),
				Checker: mediation.CheckerFunc(func() error {
					if broken {
						return mediation.ErrInvalid
					}
					return nil
				}),
			}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	e := mediation.NewEngine(mediation.Config{Registry: r})
	defer e.Close()
	ch := build(t, e, "c", adp("loopback", "l", nil), adp("loopback", "bad", props{"broken": true}), start)
	if err := ch.Send("l", msg("x", nil)); err != nil {
		t.Fatal(err)
	}
	ms, err := ch.Messages("l")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"x"}, contents(ms)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for id, want := range map[string]string{"l": mediation.ComponentValid, "bad": mediation.ComponentInvalid} {
		if got := mustComponent(t, ch, id).State; got != want {
			t.Errorf("state of %s = %q, want %q", id, got, want)
		}
	}
}

func TestPanickingProcessor(t *testing.T) {
	r := mediation.NewRegistry()
	r.Register(mediation.Type{Name: "boom", Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"},
		New: func(map[string]any, mediation.Env) (any, error) {
			return mediation.ProcessorFunc(func(string, mediation.Message, mediation.Emitter) error { panic("boom") }), nil
		}})
	e := mediation.NewEngine(mediation.Config{Registry: r})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "a", nil), med("boom", "b", nil), bind("a:out", "b:in", ""), start)
	for range 2 {
		if err := ch.Send("a", msg(1, nil)); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(mediation.Counters{In: 2, Errors: 2}, mustComponent(t, ch, "b").Counters); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestDrainerRestorer: held state handed over by UpdateProperties and
// Replace goes to Restore when the new implementation has it, and is not
// processed again.
func TestDrainerRestorer(t *testing.T) {
	type state struct {
		held      []mediation.Held
		processed int
	}
	type impl struct {
		mediation.Processor
		mediation.Drainer
		mediation.Restorer
	}
	var all []*state
	r := mediation.NewRegistry()
	err := r.Register(mediation.Type{Name: "keeper", Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"},
		New: func(map[string]any, mediation.Env) (any, error) {
			s := &state{}
			all = append(all, s)
			return impl{
				Processor: mediation.ProcessorFunc(func(in string, m mediation.Message, _ mediation.Emitter) error {
					s.processed++
					s.held = append(s.held, mediation.Held{Port: in, Message: m})
					return nil
				}),
				Drainer: mediation.DrainerFunc(func() []mediation.Held { h := s.held; s.held = nil; return h }),
				Restorer: mediation.RestorerFunc(func(h []mediation.Held, _ mediation.Emitter) error {
					s.held = append(s.held, h...)
					return nil
				}),
			}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	e := mediation.NewEngine(mediation.Config{Registry: r})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "a", nil), med("keeper", "k", nil), med("keeper", "k2", nil), bind("a:out", "k:in", ""), start)
	ch.Send("a", msg(1, nil))
	ch.Send("a", msg(2, nil))
	if _, err := ch.UpdateProperties("k", map[string]any{"x": 1}); err != nil {
		t.Fatal(err)
	}
	ch.Send("a", msg(3, nil))
	if err := ch.Replace("k", "k2"); err != nil {
		t.Fatal(err)
	}
	ch.Send("a", msg(4, nil))
	// all: k (first), k2, k (rebuilt by UpdateProperties).
	if len(all) != 3 {
		t.Fatalf("%d instances built, want 3", len(all))
	}
	k2 := all[1]
	var got []any
	for _, h := range k2.held {
		got = append(got, h.Message.Content)
	}
	if diff := cmp.Diff([]any{1, 2, 3, 4}, got); diff != "" {
		t.Errorf("state of the replacement (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{2, 1, 1}, []int{all[0].processed, all[2].processed, k2.processed}); diff != "" {
		t.Errorf("messages processed per instance (-want +got):\n%s", diff)
	}
}

func TestSetLinkerAlias(t *testing.T) {
	r := mediation.NewRegistry()
	other := mediation.LinkerFunc(func(map[string]any, mediation.Receiver) (mediation.Link, error) {
		return nil, errors.New("other")
	})
	if err := r.RegisterLinker("other", other); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		alias, target string
		want          error
	}{
		{"JMS-Joram", "other", nil},
		{"JMS-Joram", "nope", mediation.ErrNotFound},
		{"JMS_Joram", "JMS-Joram", mediation.ErrNotFound}, // an alias is no target
		{"queue", "other", mediation.ErrConflict},
		{"bad name", "other", mediation.ErrInvalid},
	} {
		if err := r.SetLinkerAlias(tt.alias, tt.target); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("SetLinkerAlias(%q, %q) = %v, want %v", tt.alias, tt.target, err, tt.want)
		}
	}
	// JMS-Joram now makes "other" links; JMS_Joram is still the queue.
	e := mediation.NewEngine(mediation.Config{Registry: r})
	defer e.Close()
	ch, _ := e.CreateChain("c")
	ch.AddMediator("passthrough", "a", nil)
	ch.AddMediator("passthrough", "b", nil)
	if _, err := ch.Bind("a:out", "b:in", "JMS-Joram", nil); err == nil || !strings.Contains(err.Error(), "other") {
		t.Errorf("a JMS-Joram binding = %v, want the other linker's error", err)
	}
	if _, err := ch.Bind("a:out", "b:in", "JMS_Joram", nil); err != nil {
		t.Errorf("a JMS_Joram binding = %v", err)
	}
}

// TestEnvCountError: a component counts an error met outside a processing
// call through its Env, in its Errors counter; once it is removed, nothing.
func TestEnvCountError(t *testing.T) {
	r := mediation.NewRegistry()
	var count func()
	if err := r.Register(mediation.Type{Name: "outside", Kind: mediation.KindAdapter, Pattern: mediation.PatternInOnly, Out: []string{"out"},
		New: func(_ map[string]any, env mediation.Env) (any, error) {
			count = env.CountError
			return struct{}{}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	e := mediation.NewEngine(mediation.Config{Registry: r})
	defer e.Close()
	ch, err := e.CreateChain("c")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.AddAdapter("outside", "a", nil); err != nil {
		t.Fatal(err)
	}
	count()
	count()
	info, err := ch.Component("a")
	if err != nil {
		t.Fatal(err)
	}
	if want := (mediation.Counters{Errors: 2}); info.Counters != want {
		t.Errorf("counters %+v, want %+v", info.Counters, want)
	}
	if err := ch.RemoveComponent(mediation.KindAdapter, "a"); err != nil {
		t.Fatal(err)
	}
	count() // the component is gone: nothing to count, no panic
	// Nor on a component given its id later.
	old := count
	if _, err := ch.AddAdapter("outside", "a", nil); err != nil {
		t.Fatal(err)
	}
	old()
	if info := mustComponent(t, ch, "a"); info.Counters.Errors != 0 {
		t.Errorf("the new a counted %d errors of the removed one", info.Counters.Errors)
	}
	count() // the new one's counts
	if info := mustComponent(t, ch, "a"); info.Counters.Errors != 1 {
		t.Errorf("the new a counted %d errors, want 1", info.Counters.Errors)
	}
}

// lossyLink takes every message and loses it, telling its Receiver.
type lossyLink struct{ to mediation.Receiver }

func (l lossyLink) Send(mediation.Message) error {
	l.to.(mediation.Dropper).Drop(1)
	return nil
}
func (lossyLink) Start()     {}
func (lossyLink) Stop()      {}
func (lossyLink) Len() int   { return 0 }
func (lossyLink) Close() int { return 0 }

// TestLinkDropper: the Receiver a linker is given counts what its link
// lost as dropped by the binding's current target, following a Replace.
func TestLinkDropper(t *testing.T) {
	r := mediation.NewRegistry()
	if err := r.RegisterLinker("lossy", mediation.LinkerFunc(func(_ map[string]any, to mediation.Receiver) (mediation.Link, error) {
		if _, ok := to.(mediation.Dropper); !ok {
			return nil, errors.New("the receiver is no Dropper")
		}
		return lossyLink{to}, nil
	})); err != nil {
		t.Fatal(err)
	}
	e := mediation.NewEngine(mediation.Config{Registry: r})
	defer e.Close()
	ch, _ := e.CreateChain("c")
	if _, err := ch.AddAdapter("rest-in", "a", nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"b", "b2"} {
		if _, err := ch.AddMediator("passthrough", id, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ch.Bind("a:out", "b:in", "lossy", nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.Start(); err != nil {
		t.Fatal(err)
	}
	dropped := func(id string) uint64 {
		info, err := ch.Component(id)
		if err != nil {
			t.Fatal(err)
		}
		return info.Counters.Dropped
	}
	send := func(content int) {
		t.Helper()
		if err := ch.Send("a", msg(content, nil)); err != nil {
			t.Fatal(err)
		}
	}
	send(1)
	send(2)
	if err := ch.Replace("b", "b2"); err != nil {
		t.Fatal(err)
	}
	send(3)
	if diff := cmp.Diff([]uint64{0, 2, 1}, []uint64{dropped("a"), dropped("b"), dropped("b2")}); diff != "" {
		t.Errorf("dropped by a, b, b2 (-want +got):\n%s", diff)
	}
}

// TestZeroRegistry checks that the zero Registry is an empty one, as
// NewEmptyRegistry returns: registering a type or a linker in it (or an
// alias) works rather than panicking on a nil map, and an engine can use it.
func TestZeroRegistry(t *testing.T) {
	var r mediation.Registry
	if got := r.Types(); len(got) != 0 {
		t.Errorf("Types of the zero registry = %v", got)
	}
	if _, err := r.Type("x"); !errors.Is(err, mediation.ErrNotFound) {
		t.Errorf("Type on the zero registry = %v, want not found", err)
	}
	if err := r.Register(mediation.Type{Name: "src", Kind: mediation.KindAdapter, Pattern: mediation.PatternInOnly, Out: []string{"out"},
		New: func(map[string]any, mediation.Env) (any, error) {
			return mediation.InjectorFunc(func(m mediation.Message, out mediation.Emitter) error { out.Emit("out", m); return nil }), nil
		}}); err != nil {
		t.Fatal(err)
	}
	var r2 mediation.Registry
	if err := r2.RegisterLinker("direct2", mediation.LinkerFunc(func(map[string]any, mediation.Receiver) (mediation.Link, error) { return nil, nil }), "alias"); err != nil {
		t.Fatal(err)
	}
	if err := r2.SetLinkerAlias("other", "direct2"); err != nil {
		t.Fatal(err)
	}
	if got := r2.Linkers(); len(got) != 3 {
		t.Errorf("Linkers = %v, want three names", got)
	}
	e := mediation.NewEngine(mediation.Config{Registry: &r})
	defer e.Close()
	ch, _ := e.CreateChain("c")
	if _, err := ch.AddAdapter("src", "a", nil); err != nil {
		t.Fatal(err)
	}
}
