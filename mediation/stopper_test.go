package mediation_test

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/mediation"
)

// listener is an in-only adapter that says when it is told to take in
// (Announce) and to stop taking in (Stop), as a subscription would.
type listener struct {
	id  string
	log *[]string
	mu  *sync.Mutex
}

func (l *listener) Inject(m mediation.Message, out mediation.Emitter) error {
	out.Emit("out", m)
	return nil
}

func (l *listener) Announce(mediation.Emitter) error { l.note("listen"); return nil }
func (l *listener) Stop() error                      { l.note("stop"); return nil }

func (l *listener) note(what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	*l.log = append(*l.log, l.id+" "+what)
}

// TestStopperFollowsTheChain: a Stopper is stopped when its chain stops
// and when it is left without an out binding; it is told to take in
// again when its chain starts with it bound, when it is bound, and after
// its properties change; an unbound one is never told to take in.
func TestStopperFollowsTheChain(t *testing.T) {
	var mu sync.Mutex
	var log []string
	r := mediation.NewRegistry()
	register(t, r, mediation.Type{Name: "listener", Kind: mediation.KindAdapter, Pattern: mediation.PatternInOnly, Out: []string{"out"},
		New: func(_ map[string]any, env mediation.Env) (any, error) {
			return &listener{id: env.ID, log: &log, mu: &mu}, nil
		}})
	e := mediation.NewEngine(mediation.Config{Registry: r})
	defer e.Close()
	ch := build(t, e, "c",
		adp("listener", "a", nil), adp("listener", "spare", nil), adp("listener", "idle", nil),
		adp("rest-out", "out", nil), adp("rest-out", "out2", nil),
		bind("a:out", "out:in", ""), start)
	step := func(what string, f func() error, want ...string) {
		t.Helper()
		mu.Lock()
		log = nil
		mu.Unlock()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if d := cmp.Diff(want, log); d != "" {
			t.Errorf("%s (-want +got):\n%s", what, d)
		}
	}
	step("stop", ch.Stop, "a stop", "spare stop", "idle stop")
	step("start", ch.Start, "a listen")
	step("replace a by spare", func() error { return ch.Replace("a", "spare") }, "a stop", "spare listen")
	step("bind idle", func() error { _, err := ch.Bind("idle:out", "out2:in", "", nil); return err }, "idle listen")
	step("update idle", func() error { _, err := ch.UpdateProperties("idle", map[string]any{"x": 1.0}); return err }, "idle listen")
	step("unbind idle", func() error { return ch.Unbind("idle:out", "out2:in") }, "idle stop")
	step("remove what spare feeds", func() error { return ch.RemoveComponent(mediation.KindAdapter, "out") }, "spare stop")
}

// TestIdentities: the engine counts the components it makes, tells the
// identities of those made after a count, and a component takes back the
// identity it had.
func TestIdentities(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "a", nil))
	before := e.Made()
	if _, err := ch.AddComponent(mediation.KindAdapter, "rest-out", "b", nil); err != nil {
		t.Fatal(err)
	}
	ids := e.Identities(before)
	if len(ids) != 1 || ids[0].Chain != "c" || ids[0].ID != "b" || ids[0].UUID == "" {
		t.Fatalf("Identities after one more = %+v, want b's", ids)
	}
	if n := len(e.Identities(0)); n != 2 {
		t.Errorf("Identities(0) has %d, want both", n)
	}
	when := time.Date(2013, 4, 18, 10, 0, 0, 0, time.UTC)
	if err := ch.SetIdentity("a", "c/a/kept", when); err != nil {
		t.Fatal(err)
	}
	info, _ := ch.Component("a")
	if info.UUID != "c/a/kept" || !info.Created.Equal(when) {
		t.Errorf("after SetIdentity: %s %v", info.UUID, info.Created)
	}
	if err := ch.SetIdentity("nope", "x", when); errKind(err) != "not found" {
		t.Errorf("SetIdentity of an unknown component = %v, want not found", err)
	}
	if err := ch.SetIdentity("a", "", when); errKind(err) != "invalid" {
		t.Errorf("SetIdentity without a UUID = %v, want invalid", err)
	}
}

// TestSetIdentityIsAChange checks that SetIdentity, which changes what a
// component reports, fails as every change does on a chain of a closed
// engine (ErrConflict, the identity kept) and on a deleted chain
// (ErrNotFound, whatever the UUID).
func TestSetIdentityIsAChange(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	ch := build(t, e, "c", adp("rest-in", "a", nil))
	gone := build(t, e, "d", adp("rest-in", "a", nil))
	if err := e.DeleteChain("d"); err != nil {
		t.Fatal(err)
	}
	when := time.Date(2013, 4, 18, 10, 0, 0, 0, time.UTC)
	if err := gone.SetIdentity("a", "", when); errKind(err) != "not found" {
		t.Errorf("SetIdentity on a deleted chain = %v, want not found", err)
	}
	before, _ := ch.Component("a")
	e.Close()
	if err := ch.SetIdentity("a", "c/a/kept", when); errKind(err) != "conflict" {
		t.Errorf("SetIdentity after Close = %v, want conflict", err)
	}
	if after, _ := ch.Component("a"); after.UUID != before.UUID || !after.Created.Equal(before.Created) {
		t.Errorf("SetIdentity after Close changed the identity: %s %v, was %s %v", after.UUID, after.Created, before.UUID, before.Created)
	}
}
