package sim_test

import (
	"errors"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

// TestActionHook: the script player applies each action through the hook
// SetActionHook set, in order; an error the hook returns without applying
// counts among the script's errors, and the action is not applied.
func TestActionHook(t *testing.T) {
	h := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	var seen []string
	h.SetActionHook(func(a sim.Action, apply func() error) error {
		seen = append(seen, a.Command+" "+a.Args["id"])
		if a.Args["id"] == "refused" {
			return errors.New("no room to keep it")
		}
		return apply()
	})
	src := `<behavior factor="1"><create-zone id="a" leftX="0" topY="0" X-Length="10" Y-Length="10"/>` +
		`<create-zone id="refused" leftX="20" topY="0" X-Length="10" Y-Length="10"/>` +
		`<delay value="1" unit="s"/><create-zone id="b" leftX="40" topY="0" X-Length="10" Y-Length="10"/></behavior>`
	if _, err := h.AddScript("s", []byte(src)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.SetScriptState("s", sim.ScriptStarted); err != nil {
		t.Fatal(err)
	}
	if err := h.Advance(time.Second); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"create-zone a", "create-zone refused", "create-zone b"}, seen); diff != "" {
		t.Errorf("actions through the hook (-want +got):\n%s", diff)
	}
	var zones []string
	for _, z := range h.Zones() {
		zones = append(zones, z.ID)
	}
	if diff := cmp.Diff([]string{"a", "b"}, zones); diff != "" {
		t.Errorf("zones (-want +got):\n%s", diff)
	}
	info, err := h.Script("s")
	if err != nil {
		t.Fatal(err)
	}
	if info.Errors != 1 {
		t.Errorf("script errors %d, want 1 (the refused action)", info.Errors)
	}
}
