package sim_test

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

var update = flag.Bool("update", false, "rewrite golden files")

const twoStepScript = `<behavior startdate="01/02/2024-08:00:00" factor="30">
	<create-zone id="hall" leftX="0" topY="0" X-Length="100" Y-Length="100"/>
	<delay value="10" unit="m"/>
	<create-person id="al" type="Man"/>
	<move-person-zone personId="al" zoneId="hall"/>
	<delay value="1" unit="h"/>
	<create-device id="lamp" type="BinaryLight"/>
</behavior>`

func mustAddScript(tb testing.TB, h *sim.Home, id, src string) sim.ScriptInfo {
	tb.Helper()
	s, err := h.AddScript(id, []byte(src))
	if err != nil {
		tb.Fatalf("AddScript(%s) = %v", id, err)
	}
	return s
}

func mustSetScript(tb testing.TB, h *sim.Home, id, state string) sim.ScriptInfo {
	tb.Helper()
	s, err := h.SetScriptState(id, state)
	if err != nil {
		tb.Fatalf("SetScriptState(%s, %s) = %v", id, state, err)
	}
	return s
}

func TestPlayScript(t *testing.T) {
	h, _ := newHome(t)
	info := mustAddScript(t, h, "two.bhv", twoStepScript)
	want := sim.ScriptInfo{ID: "two.bhv", Name: "two", State: "stopped", ActionNumber: 4,
		StartDate: "01/02/2024-08:00:00", Factor: 30, ExecutionTime: (70 * time.Minute).Milliseconds()}
	if diff := cmp.Diff(want, info); diff != "" {
		t.Errorf("AddScript (-want +got):\n%s", diff)
	}
	mustSetScript(t, h, "two.bhv", "started")
	if c := h.Clock(); c.StartDateStr != "01/02/2024-08:00:00" || c.Factor != 30 || c.Pause {
		t.Errorf("clock after start = %+v, want the script's start date and factor, running", c)
	}
	steps := []struct {
		advance time.Duration
		percent float64
		state   string
		zones   int
		persons int
		devices int
	}{
		{0, 25, "started", 1, 0, 0}, // the first action runs when its time comes: at once
		{9 * time.Minute, 25, "started", 1, 0, 0},
		{time.Minute, 75, "started", 1, 1, 0},
		{time.Hour, 100, "stopped", 1, 1, 1},
	}
	for _, s := range steps {
		mustAdvance(t, h, s.advance)
		got, _ := h.Script("two.bhv")
		if got.CompletePercent != s.percent || got.State != s.state ||
			len(h.Zones()) != s.zones || len(h.Persons()) != s.persons || len(h.Devices()) != s.devices {
			t.Errorf("after %v: %v%% %s, %d zones %d persons %d devices; want %v%% %s, %d %d %d", s.advance,
				got.CompletePercent, got.State, len(h.Zones()), len(h.Persons()), len(h.Devices()), s.percent, s.state, s.zones, s.persons, s.devices)
		}
	}
	if p, _ := h.Person("al"); p.Location != "hall" {
		t.Errorf("al is in %q, want hall", p.Location)
	}
}

// TestScriptEndsAtItsLastAction: the player stops a script once its last
// action has run; the delays after it count in ExecutionTime (iCasa's) but
// do not keep it playing, so a script of delays alone stops as it starts.
// (cmd/simulate lets them pass before its next script.)
func TestScriptEndsAtItsLastAction(t *testing.T) {
	for _, tt := range []struct {
		name, src   string
		execution   time.Duration
		atStart     string  // the state SetScriptState answers
		afterAction string  // the state once the action's instant has run
		percent     float64 // then
	}{
		{"trailing delay", `<behavior><create-zone id="a" leftX="0" topY="0" X-Length="10" Y-Length="10"/><delay value="1" unit="h"/></behavior>`,
			time.Hour, "started", "stopped", 100},
		{"delay, action, delay", `<behavior><delay value="1" unit="m"/><create-zone id="a" leftX="0" topY="0" X-Length="10" Y-Length="10"/><delay value="1" unit="h"/></behavior>`,
			61 * time.Minute, "started", "stopped", 100},
		{"delays alone", `<behavior><delay value="1" unit="h"/></behavior>`,
			time.Hour, "stopped", "stopped", 0}, // no action: none done
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			info := mustAddScript(t, h, "s.bhv", tt.src)
			if info.ExecutionTime != tt.execution.Milliseconds() {
				t.Errorf("ExecutionTime = %d, want %d", info.ExecutionTime, tt.execution.Milliseconds())
			}
			if got := mustSetScript(t, h, "s.bhv", "started"); got.State != tt.atStart {
				t.Errorf("started: state %q, want %q", got.State, tt.atStart)
			}
			mustAdvance(t, h, time.Minute)
			got, _ := h.Script("s.bhv")
			if got.State != tt.afterAction || got.CompletePercent != tt.percent {
				t.Errorf("after the last action: %s at %v%%, want %s at %v%%", got.State, got.CompletePercent, tt.afterAction, tt.percent)
			}
		})
	}
}

func TestPauseResumeStopScript(t *testing.T) {
	h, _ := newHome(t)
	mustAddScript(t, h, "two.bhv", twoStepScript)
	mustSetScript(t, h, "two.bhv", "started")
	mustAdvance(t, h, 5*time.Minute)
	if s := mustSetScript(t, h, "two.bhv", "paused"); s.State != "paused" || !h.Clock().Pause {
		t.Fatalf("paused: %+v, clock paused %v", s, h.Clock().Pause)
	}
	mustAdvance(t, h, 3*time.Hour) // time moves, the script waits
	if len(h.Persons()) != 0 {
		t.Fatal("a paused script went on")
	}
	mustSetScript(t, h, "two.bhv", "started") // resume: 5 minutes left before al comes
	fiveMinutesLeft(t, h)
	if s := mustSetScript(t, h, "two.bhv", "stopped"); s.State != "stopped" || s.CompletePercent != 75 {
		t.Errorf("stopped: %+v, want 75%%", s)
	}
	mustAdvance(t, h, 2*time.Hour)
	if len(h.Devices()) != 0 {
		t.Error("a stopped script went on")
	}
	// Started again, it plays from the beginning: reset-context-free, so
	// the zone and the person already exist: those two actions fail and are
	// counted, the rest runs.
	mustSetScript(t, h, "two.bhv", "started")
	mustAdvance(t, h, 2*time.Hour)
	if s, _ := h.Script("two.bhv"); s.State != "stopped" || s.CompletePercent != 100 || s.Errors != 2 || !strings.Contains(s.LastError, "already exists") {
		t.Errorf("second run: %+v", s)
	}
}

// fiveMinutesLeft checks that twoStepScript, resumed 5 minutes into its
// run, brings al in 5 minutes of simulated time later, not before.
func fiveMinutesLeft(t *testing.T, h *sim.Home) {
	t.Helper()
	mustAdvance(t, h, 4*time.Minute)
	if len(h.Persons()) != 0 {
		t.Fatal("the resumed script ran an action early")
	}
	mustAdvance(t, h, time.Minute)
	if len(h.Persons()) != 1 {
		t.Fatal("the resumed script did not go on")
	}
}

// TestScriptFollowsTheClock: pausing and resuming the clock pauses and
// resumes the script that plays, as in iCasa; its timeline waits meanwhile.
func TestScriptFollowsTheClock(t *testing.T) {
	h, _ := newHome(t)
	mustAddScript(t, h, "two.bhv", twoStepScript)
	mustSetScript(t, h, "two.bhv", "started")
	mustAdvance(t, h, 5*time.Minute)
	state := func(want string) {
		t.Helper()
		if s, _ := h.Script("two.bhv"); s.State != want {
			t.Errorf("script state = %q, want %q", s.State, want)
		}
	}
	pause := func(p bool) {
		t.Helper()
		if _, err := h.UpdateClock(sim.ClockUpdate{Pause: &p}); err != nil {
			t.Fatal(err)
		}
	}
	pause(true)
	state("paused")
	mustAdvance(t, h, 3*time.Hour)
	pause(false)
	state("started")
	fiveMinutesLeft(t, h)
	// A factor change leaves it alone; a stopped script stays stopped.
	if _, err := h.UpdateClock(sim.ClockUpdate{Factor: ptr(60)}); err != nil {
		t.Fatal(err)
	}
	state("started")
	mustSetScript(t, h, "two.bhv", "stopped")
	pause(true)
	pause(false)
	state("stopped")
	mustAdvance(t, h, 2*time.Hour)
	if len(h.Devices()) != 0 {
		t.Error("a stopped script went on when the clock ran again")
	}
}

func TestScriptPlayerErrors(t *testing.T) {
	h, _ := newHome(t)
	mustAddScript(t, h, "a.bhv", twoStepScript)
	mustAddScript(t, h, "b.bhv", `<behavior><delay value="1"/><reset-context/></behavior>`)
	tests := []struct {
		name string
		do   func() error
		want error
	}{
		{"bad script", func() error { _, err := h.AddScript("c.bhv", []byte("<behavior>\n<fly>\n</behavior>")); return err }, sim.ErrInvalid},
		{"bad id", func() error { _, err := h.AddScript("a/b", []byte("<behavior/>")); return err }, sim.ErrInvalid},
		{"unknown script", func() error { _, err := h.SetScriptState("nope.bhv", "started"); return err }, sim.ErrNotFound},
		{"unknown state", func() error { _, err := h.SetScriptState("a.bhv", "running"); return err }, sim.ErrInvalid},
		{"pause a stopped script", func() error { _, err := h.SetScriptState("a.bhv", "paused"); return err }, sim.ErrConflict},
		{"two at a time", func() error {
			mustSetScript(t, h, "a.bhv", "started")
			_, err := h.SetScriptState("b.bhv", "started")
			return err
		}, sim.ErrConflict},
		{"replace a running script", func() error { _, err := h.AddScript("a.bhv", []byte("<behavior/>")); return err }, sim.ErrConflict},
	}
	for _, tt := range tests {
		if err := tt.do(); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	// The text it has already is no replacement: nothing changes.
	if info, err := h.AddScript("a.bhv", []byte(twoStepScript)); err != nil || info.State != "started" {
		t.Errorf("AddScript of a running script's own text = %+v, %v; want it as it is, still started", info, err)
	}
	if _, err := h.AddScript("c.bhv", []byte("<behavior>\n<fly>\n</behavior>")); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("a malformed script's error %v does not name its line", err)
	}
	// An action that can never run does not stop the script, as in iCasa:
	// it is listed, and fails (counted) when played.
	info, err := h.AddScript("d.bhv", []byte("<behavior>\n<fly/>\n<delay value=\"2\"/>\n</behavior>"))
	if err != nil || len(info.Problems) != 1 || !strings.HasPrefix(info.Problems[0], "line 2: unknown command fly") || info.ExecutionTime != 120000 {
		t.Errorf("AddScript(an unknown command) = %+v, %v; want it listed as a problem at line 2, and 2 min long", info, err)
	}
}

// TestSaveScriptRestoresTheHome: a home saved as a script and played on
// another home gives the same zones, devices and persons.
func TestSaveScriptRestoresTheHome(t *testing.T) {
	h, _ := newHome(t)
	mustZone(t, h, sim.ZoneSpec{ID: "room", Name: "Room", RightX: 100, BottomY: 80, Variables: map[string]float64{"Volume": 12, "Humidity": 40}})
	mustZone(t, h, sim.ZoneSpec{ID: "porch", IsRoom: ptr(false), LeftX: 200, RightX: 260, BottomY: 50})
	mustDevice(t, h, placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 0.4, "brand": "acme", "tags": []any{"a", 1.0}}))
	mustDevice(t, h, placed("t", "Thermometer", 10, 10, nil))
	mustDevice(t, h, placed("l", "DimmerLight", 220, 20, map[string]any{"power_level": 0.7}))
	mustDevice(t, h, sim.DeviceSpec{ID: "spare", Type: "Sprinkler"})
	mustUpdateDevice(t, h, "l", sim.DeviceUpdate{State: ptr("deactivated"), Width: ptr(30)})
	mustPerson(t, h, sim.PersonSpec{ID: "al", Name: "Al", Type: "Man", PositionX: ptr(30), PositionY: ptr(30)})
	mustAdvance(t, h, 20*time.Second) // warm the room
	if _, err := h.SaveScript("saved.bhv"); err != nil {
		t.Fatal(err)
	}
	src, _ := h.ScriptSource("saved.bhv")

	other, _ := newHome(t)
	mustAddScript(t, other, "saved.bhv", string(src))
	mustSetScript(t, other, "saved.bhv", "started")
	mustAdvance(t, other, time.Millisecond)
	if s, _ := other.Script("saved.bhv"); s.State != "stopped" || s.Errors != 0 {
		t.Fatalf("played the saved script: %+v", s)
	}
	sameHome(t, h, other)
}

// eventLog plays the example house script with Advance and returns the
// whole event log, one JSON event a line.
func eventLog(t *testing.T) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "examples", "scripts", "house.bhv"))
	if err != nil {
		t.Fatal(err)
	}
	h, _ := newHome(t)
	sub := h.Subscribe(1 << 20)
	defer sub.Close()
	mustAddScript(t, h, "house.bhv", string(src))
	s := mustSetScript(t, h, "house.bhv", "started")
	mustAdvance(t, h, time.Duration(s.ExecutionTime)*time.Millisecond+time.Minute)
	if s, _ := h.Script("house.bhv"); s.State != "stopped" || s.Errors != 0 {
		t.Fatalf("house.bhv ended %+v", s)
	}
	var b strings.Builder
	for _, e := range drain(t, sub) {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if sub.Err() != nil {
		t.Fatal(sub.Err())
	}
	return []byte(b.String())
}

// TestScriptDeterminism plays the example house twice: the event logs must
// be byte-identical, and match the golden summary in testdata (its event
// count, digest, and the events that are not physics updates, readable).
// Run with -update to rewrite it after an intended change.
func TestScriptDeterminism(t *testing.T) {
	first, second := eventLog(t), eventLog(t)
	if string(first) != string(second) {
		t.Fatal("two plays of the same script gave different event logs")
	}
	var summary strings.Builder
	lines := strings.Split(strings.TrimSuffix(string(first), "\n"), "\n")
	fmt.Fprintf(&summary, "events: %d\nsha256: %x\n\n", len(lines), sha256.Sum256(first))
	for _, l := range lines {
		var e struct {
			Seq      uint64
			Type     string
			Time     int64
			ZoneID   string
			DeviceID string
			PersonID string
			ScriptID string
			Property string
			Value    any
		}
		json.Unmarshal([]byte(l), &e)
		if e.Type == "zone-variable-updated" && e.Property == "Temperature" ||
			e.Type == "device-property-updated" && e.Property == "current_temperature" {
			continue // physics ticks: counted in the digest
		}
		fmt.Fprintf(&summary, "%d %s %s %s%s%s%s %s %v\n", e.Seq, time.UnixMilli(e.Time).UTC().Format("15:04:05.000"), e.Type,
			e.ZoneID, e.DeviceID, e.PersonID, e.ScriptID, e.Property, e.Value)
	}
	golden := filepath.Join("testdata", "house.events.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(summary.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestScriptDeterminism -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), summary.String()); diff != "" {
		t.Errorf("event log differs from %s (-want +got):\n%s", golden, diff)
	}
}

// TestScriptChangedDuringAnAction changes the script while one of its
// actions applies (an observer of the action's change does it on the
// driving goroutine; a REST call can on another): the action is not
// counted in what follows, which plays and counts as it would alone.
func TestScriptChangedDuringAnAction(t *testing.T) {
	const steps = `<behavior>
	<delay value="1" unit="s"/>
	<modify-zone-variable zoneId="z" variable="Step" value="1" type="Double"/>
	<delay value="1" unit="s"/>
	<modify-zone-variable zoneId="z" variable="Step" value="2" type="Double"/>
	<delay value="1" unit="s"/>
	<modify-zone-variable zoneId="z" variable="Step" value="3" type="Double"/>
</behavior>`
	const one = `<behavior><modify-zone-variable zoneId="z" variable="Other" value="1" type="Double"/></behavior>`
	tests := []struct {
		name   string
		change func(t *testing.T, h *sim.Home)
		want   sim.ScriptInfo // the fields compared: State, CompletePercent, Errors
		vars   map[string]any // the zone's variables Step and Other at the end
	}{
		{"stopped and started again", func(t *testing.T, h *sim.Home) {
			mustSetScript(t, h, "s.bhv", sim.ScriptStopped)
			mustSetScript(t, h, "s.bhv", sim.ScriptStarted)
		}, sim.ScriptInfo{State: sim.ScriptStopped, CompletePercent: 100}, map[string]any{"Step": 3.0}},
		{"stopped and replaced", func(t *testing.T, h *sim.Home) {
			mustSetScript(t, h, "s.bhv", sim.ScriptStopped)
			mustAddScript(t, h, "s.bhv", one)
		}, sim.ScriptInfo{State: sim.ScriptStopped, CompletePercent: 0}, map[string]any{"Step": 1.0}},
		{"replaced and started", func(t *testing.T, h *sim.Home) {
			mustSetScript(t, h, "s.bhv", sim.ScriptStopped)
			mustAddScript(t, h, "s.bhv", one)
			mustSetScript(t, h, "s.bhv", sim.ScriptStarted)
		}, sim.ScriptInfo{State: sim.ScriptStopped, CompletePercent: 100}, map[string]any{"Step": 1.0, "Other": 1.0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			if _, err := h.CreateZone(sim.ZoneSpec{ID: "z", RightX: 10, BottomY: 10}); err != nil {
				t.Fatal(err)
			}
			mustAddScript(t, h, "s.bhv", steps)
			changed := false
			stop := h.Observe(func(e sim.Event) {
				if !changed && e.Type == sim.EventZoneVariableAdded && e.Property == "Step" {
					changed = true // during the first action
					tt.change(t, h)
				}
			})
			defer stop()
			mustSetScript(t, h, "s.bhv", sim.ScriptStarted)
			if err := h.Advance(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			info, err := h.Script("s.bhv")
			if err != nil {
				t.Fatal(err)
			}
			got := sim.ScriptInfo{State: info.State, CompletePercent: info.CompletePercent, Errors: info.Errors}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("script after the change (-want +got):\n%s", diff)
			}
			z, _ := h.Zone("z")
			got2 := map[string]any{}
			for _, v := range []string{"Step", "Other"} {
				if x, ok := z.Variables[v]; ok {
					got2[v] = x
				}
			}
			if diff := cmp.Diff(tt.vars, got2); diff != "" {
				t.Errorf("zone variables (-want +got):\n%s", diff)
			}
		})
	}
}
