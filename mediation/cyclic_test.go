package mediation_test

import (
	"testing"

	"github.com/pervasim/pervasim/mediation"
)

// TestCyclicMessage sends, through the Go API, messages whose content and
// properties hold themselves (a map that is a value of its own, a slice
// that is an element of its own), which no JSON can be: copying them
// (Clone, a fan-out to two links, rest-out's Messages) must end, not
// overflow the stack, which no recover catches.
func TestCyclicMessage(t *testing.T) {
	props := map[string]any{"n": 1.0}
	props["self"] = props
	list := make([]any, 2)
	list[0], list[1] = "x", list
	m := mediation.Message{Content: map[string]any{"list": list}, Properties: props}

	c := m.Clone()
	if c.Properties["n"] != 1.0 || c.Content.(map[string]any)["list"].([]any)[0] != "x" {
		t.Fatalf("Clone lost values: %v", c.Printable())
	}
	if c.Properties["self"].(map[string]any)["n"] != 1.0 {
		t.Fatalf("Clone lost the nested map's values")
	}

	s := newSink(-1)
	e := newTestEngine(t, s)
	ch := build(t, e, "c", adp("rest-in", "src", nil), med("passthrough", "a", nil), adp("rest-out", "o1", nil), adp("rest-out", "o2", nil))
	for _, b := range [][2]string{{"src:out", "a:in"}, {"a:out", "o1:in"}, {"a:out", "o2:in"}} {
		if _, err := ch.Bind(b[0], b[1], "", nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := ch.Start(); err != nil {
		t.Fatal(err)
	}
	if err := ch.Send("src", m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	for _, id := range []string{"o1", "o2"} {
		got, err := ch.Messages(id)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Properties["n"] != 1.0 {
			t.Errorf("%s kept %d messages: %v", id, len(got), got)
		}
	}
}
