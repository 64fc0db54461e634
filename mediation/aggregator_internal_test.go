package mediation

import (
	"strings"
	"testing"
)

// emitted records what a component emits and drops.
type emitted struct {
	msgs    []Message
	dropped int
}

func (e *emitted) Emit(_ string, m Message) { e.msgs = append(e.msgs, m) }
func (e *emitted) Drop(n int)               { e.dropped += n }

// A message the aggregator refuses (over max-bytes) starts no group: an
// empty group would count towards max-groups, and its making evict a group
// under way.
func TestAggregatorRefusedMessageStartsNoGroup(t *testing.T) {
	impl, err := newAggregator(map[string]any{"count": 2, "max-groups": 1, "max-bytes": 1024}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	a := impl.(*aggregator)
	out := &emitted{}
	msg := func(group string, content string) Message {
		return Message{Content: content, Properties: map[string]any{PropCorrelationID: group}}
	}
	if err := a.Process("in", msg("a", "first"), out); err != nil {
		t.Fatal(err)
	}
	if err := a.Process("in", msg("b", strings.Repeat("x", 2048)), out); err == nil {
		t.Fatal("a message over max-bytes was taken")
	}
	if len(a.groups) != 1 || a.groups["a"] == nil {
		t.Errorf("groups after a refused message: %v, want a alone", a.order)
	}
	if err := a.Process("in", msg("a", "second"), out); err != nil {
		t.Fatal(err)
	}
	if len(out.msgs) != 1 || out.dropped != 1 {
		t.Errorf("emitted %d groups and dropped %d messages, want group a whole and the refused message dropped", len(out.msgs), out.dropped)
	}
}
