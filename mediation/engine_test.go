package mediation_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pervasim/pervasim/mediation"
)

func TestEngineCreateChain(t *testing.T) {
	tests := []struct {
		name string
		id   string
		want string // error kind
	}{
		{"simple", "c1", ""},
		{"all allowed characters", "a-Z_0.9:x", ""},
		{"128 characters", strings.Repeat("x", 128), ""},
		{"empty", "", "invalid"},
		{"129 characters", strings.Repeat("x", 129), "invalid"},
		{"slash", "a/b", "invalid"},
		{"space", "a b", "invalid"},
		{"non-ASCII", "été", "invalid"},
		{"reserved runtime", "runtime", "invalid"},
		{"reserved types", "types", "invalid"},
		{"types in another case is a name", "Types", ""},
		{"duplicate", "dup", "conflict"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mediation.NewEngine(mediation.Config{})
			defer e.Close()
			if _, err := e.CreateChain("dup"); err != nil {
				t.Fatal(err)
			}
			ch, err := e.CreateChain(tt.id)
			if diff := cmp.Diff(tt.want, errKind(err)); diff != "" {
				t.Fatalf("CreateChain(%q) error kind (-want +got):\n%s (err: %v)", tt.id, diff, err)
			}
			if err == nil {
				if ch.ID() != tt.id || ch.State() != mediation.StateIdle {
					t.Errorf("got chain %q in state %q, want %q idle", ch.ID(), ch.State(), tt.id)
				}
			}
		})
	}
}

func TestEngineChainsAndDelete(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	for _, id := range []string{"b", "a", "c"} {
		if _, err := e.CreateChain(id); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"b", "a", "c"}, e.Chains()); diff != "" {
		t.Errorf("Chains() (-want +got):\n%s", diff)
	}
	a, err := e.Chain("a")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		op   func() error
		want string
	}{
		{"get missing", func() error { _, err := e.Chain("zz"); return err }, "not found"},
		{"delete missing", func() error { return e.DeleteChain("zz") }, "not found"},
		{"delete a", func() error { return e.DeleteChain("a") }, ""},
		{"delete a again", func() error { return e.DeleteChain("a") }, "not found"},
		{"get deleted", func() error { _, err := e.Chain("a"); return err }, "not found"},
		{"deleted handle Start", a.Start, "not found"},
		{"deleted handle Info", func() error { _, err := a.Info(); return err }, "not found"},
		{"deleted handle AddMediator", func() error { _, err := a.AddMediator("passthrough", "p", nil); return err }, "not found"},
		{"deleted handle Send", func() error { return a.Send("x", mediation.Message{}) }, "not found"},
		{"deleted handle Messages", func() error { _, err := a.Messages("x"); return err }, "not found"},
		{"recreate a", func() error { _, err := e.CreateChain("a"); return err }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.op()
			if diff := cmp.Diff(tt.want, errKind(err)); diff != "" {
				t.Errorf("error kind (-want +got):\n%s (err: %v)", diff, err)
			}
		})
	}
	if diff := cmp.Diff([]string{"b", "c", "a"}, e.Chains()); diff != "" {
		t.Errorf("Chains() after delete and recreate (-want +got):\n%s", diff)
	}
}

func TestEngineClose(t *testing.T) {
	s := newSink(0)
	e := mediation.NewEngine(mediation.Config{Registry: testRegistry(t, s)})
	ch := build(t, e, "c", adp("rest-in", "in", nil), adp("sink", "out", nil), bind("in:out", "out:in", "queue"), start)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if got := ch.State(); got != mediation.StateStopped {
		t.Errorf("State after Close = %q, want stopped", got)
	}
	if err := ch.Start(); errKind(err) != "conflict" {
		t.Errorf("Start after Close: %v, want conflict", err)
	}
	if _, err := e.CreateChain("d"); errKind(err) != "conflict" {
		t.Errorf("CreateChain after Close: %v, want conflict", err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestValidID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"a", true}, {"A-z_0.9:x", true}, {strings.Repeat("a", 128), true},
		{"", false}, {strings.Repeat("a", 129), false}, {"a b", false}, {"a/b", false}, {"é", false}, {"a\x00", false},
		{".", false}, {"..", false}, {"...", true}, {"a..", true}, {".a", true}, // dot segments name a path's parent
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			if got := mediation.ValidID(tt.id); got != tt.want {
				t.Errorf("ValidID(%q) = %v, want %v", tt.id, got, tt.want)
			}
		})
	}
}

// TestMalformedIDsAreInvalid: a malformed id is invalid, not merely absent,
// wherever the engine looks one up.
func TestMalformedIDsAreInvalid(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch, _ := e.CreateChain("c")
	ch.Start()
	_, errChain := e.Chain("a b")
	_, errComp := ch.Component("a/b")
	_, errMsgs := ch.Messages("")
	for name, err := range map[string]error{
		"Chain": errChain, "Component": errComp, "Messages": errMsgs,
		"Send": ch.Send("a b", mediation.Message{}), "Copy": func() error { _, err := ch.Copy("a b", "x"); return err }(),
	} {
		if !errors.Is(err, mediation.ErrInvalid) {
			t.Errorf("%s with a malformed id = %v, want ErrInvalid", name, err)
		}
	}
	if _, err := ch.Component("absent"); !errors.Is(err, mediation.ErrNotFound) {
		t.Errorf("Component(absent) = %v, want ErrNotFound", err)
	}
}
