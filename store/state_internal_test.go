package store

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

// TestSnapshotPause: snapshots come every SnapshotEvery while they are
// quick, and take at most a tenth of the time once they are not: a large
// home's snapshots (changes wait while one captures the state) came every
// second whatever they took.
func TestSnapshotPause(t *testing.T) {
	for _, tt := range []struct {
		every, took, want time.Duration
	}{
		{time.Second, 0, time.Second},
		{time.Second, 30 * time.Millisecond, 970 * time.Millisecond},
		{time.Second, 100 * time.Millisecond, 900 * time.Millisecond},
		{time.Second, 200 * time.Millisecond, 1800 * time.Millisecond},
		{time.Second, 2 * time.Second, 18 * time.Second},
		{time.Hour, time.Minute, 59 * time.Minute},
	} {
		if got := snapshotPause(tt.every, tt.took); got != tt.want {
			t.Errorf("snapshotPause(%v, %v) = %v, want %v", tt.every, tt.took, got, tt.want)
		}
	}
}

// TestScriptActionsJournaled: a playing script's actions are journaled,
// as changes, in the order they are applied among the requests: they take
// no snapshot (each change after an action took one, 30 ms at 10,000
// devices), and a restart replays them before the changes that came after
// them.
func TestScriptActionsJournaled(t *testing.T) {
	dir := t.TempDir()
	mock := clock.NewMock()
	home := sim.MustNew(sim.Config{WallClock: mock, Location: time.UTC})
	engine := mediation.NewEngine(mediation.Config{Clock: mock})
	defer engine.Close()
	api := httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine})
	s := New(Config{Dir: dir, Home: home, Engine: engine, Location: time.UTC, SnapshotEvery: time.Hour})
	if _, err := s.Open(api); err != nil {
		t.Fatal(err)
	}
	src := `<behavior factor="1"><create-zone id="a" leftX="0" topY="0" X-Length="10" Y-Length="10"/><delay value="1" unit="s"/><create-zone id="b" leftX="20" topY="0" X-Length="10" Y-Length="10"/><delay value="1" unit="s"/><create-zone id="c" leftX="40" topY="0" X-Length="10" Y-Length="10"/></behavior>`
	if _, err := home.AddScript("s", []byte(src)); err != nil {
		t.Fatal(err)
	}
	if _, err := home.SetScriptState("s", sim.ScriptStarted); err != nil {
		t.Fatal(err)
	}
	gen := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.gen
	}
	before := gen()
	if err := home.Advance(time.Second); err != nil { // zones a and b
		t.Fatal(err)
	}
	if got := len(home.Zones()); got != 2 {
		t.Fatalf("%d zones after the script's actions, want 2", got)
	}
	if after := gen(); after != before {
		t.Errorf("the actions took snapshots: generation %d to %d", before, after)
	}
	var actions []string
	if _, _, _, err := Scan(s.journalPath(gen()), func(_ uint64, payload []byte) error {
		var r record
		if err := json.Unmarshal(payload, &r); err != nil {
			return err
		}
		if r.Action != nil {
			actions = append(actions, r.Action.Command+" "+r.Action.Args["id"])
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"create-zone a", "create-zone b"}, actions); diff != "" {
		t.Errorf("actions journaled (-want +got):\n%s", diff)
	}
	// Closed, the state hands the actions back to the player: they apply
	// as without a state, not refused by a closed journal.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := home.Advance(time.Second); err != nil { // zone c
		t.Fatal(err)
	}
	if info, _ := home.Script("s"); len(home.Zones()) != 3 || info.Errors != 0 {
		t.Errorf("after Close: %d zones, %d script errors (%s); want 3 and none", len(home.Zones()), info.Errors, info.LastError)
	}
}
