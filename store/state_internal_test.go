package store

import (
	"testing"
	"time"

	"github.com/benbjohnson/clock"

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

// TestScriptedChangesShareASnapshot: a change that waited for the snapshot
// of another (both came after a script action) takes none of its own when
// that snapshot holds the actions it found begun, though the script acted
// again since. Each took its own while a script kept acting, so that
// concurrent changes (device updates over MQTT, say) went one snapshot
// after another.
func TestScriptedChangesShareASnapshot(t *testing.T) {
	mock := clock.NewMock()
	home := sim.MustNew(sim.Config{WallClock: mock, Location: time.UTC})
	engine := mediation.NewEngine(mediation.Config{Clock: mock})
	defer engine.Close()
	api := httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine})
	s := New(Config{Dir: t.TempDir(), Home: home, Engine: engine, Location: time.UTC, SnapshotEvery: time.Hour})
	if _, err := s.Open(api); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	src := `<behavior factor="1"><create-zone id="a" leftX="0" topY="0" X-Length="10" Y-Length="10"/><delay value="1" unit="s"/><create-zone id="b" leftX="20" topY="0" X-Length="10" Y-Length="10"/></behavior>`
	if _, err := home.AddScript("s", []byte(src)); err != nil {
		t.Fatal(err)
	}
	if _, err := home.SetScriptState("s", sim.ScriptStarted); err != nil {
		t.Fatal(err)
	}
	if err := home.Advance(0); err != nil { // zone a
		t.Fatal(err)
	}
	found, _ := home.ScriptActions() // what a change finds as it comes
	if found == 0 {
		t.Fatal("the script's first action did not run")
	}
	// Another change's snapshot, while this one waits for snapMu; then the
	// script acts again.
	if err := s.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if err := home.Advance(time.Second); err != nil { // zone b
		t.Fatal(err)
	}
	gen := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.gen
	}
	before := gen()
	if err := s.keepBegun(found); err != nil {
		t.Fatal(err)
	}
	if after := gen(); after != before {
		t.Errorf("the change took a snapshot of its own (generation %d to %d), though the last one holds what it found", before, after)
	}
	// One that finds the second action begun needs a snapshot.
	if err := s.keepScripted(); err != nil {
		t.Fatal(err)
	}
	if after := gen(); after != before+1 {
		t.Errorf("a change after the second action: generation %d to %d, want one snapshot", before, after)
	}
}
