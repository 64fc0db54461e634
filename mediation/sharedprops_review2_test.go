package mediation_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pervasim/pervasim/mediation"
)

// TestRestOutHandsOverPropertiesAsKept: what a rest-out hands over when it
// is replaced has a properties map of its own (an enricher's shared map
// must not leave it as it is), but its values are those rest-out kept, as
// before rest-out kept shared maps: a copy of the map alone, not a deep
// one, which would turn a nil list into an empty one (printed [] rather
// than null by a console taking over), cost a walk of every value under
// the chain's lock, and never end on a map that holds itself.
func TestRestOutHandsOverPropertiesAsKept(t *testing.T) {
	var out bytes.Buffer
	e := mediation.NewEngine(mediation.Config{Output: &out})
	t.Cleanup(func() { e.Close() })
	ch := build(t, e, "c",
		adp("rest-in", "src", nil),
		adp("rest-out", "out", nil),
		adp("console", "con", nil),
		bind("src:out", "out:in", "direct"),
		start)
	must(t, ch.Send("src", mediation.Message{Content: "x", Properties: map[string]any{"list": []any(nil)}}))
	must(t, ch.Replace("out", "con")) // the console prints what rest-out kept
	if got, want := strings.TrimSpace(out.String()), `c/con {"content":"x","properties":{"list":null}}`; got != want {
		t.Errorf("the console took over and printed\n%s\nwant\n%s", got, want)
	}
}
