package sim_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

// playFile adds the script at path to h's player, plays it to its end and
// returns what the player says of it.
func playFile(t *testing.T, h *sim.Home, path string) sim.ScriptInfo {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	id := filepath.Base(path)
	info, err := h.AddScript(id, src)
	if err != nil {
		t.Fatalf("AddScript(%s) = %v", id, err)
	}
	mustSetScript(t, h, id, "started")
	mustAdvance(t, h, time.Duration(info.ExecutionTime)*time.Millisecond+time.Second)
	got, err := h.Script(id)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != "stopped" || got.Errors != 0 {
		t.Fatalf("%s after its end: state %s, %d errors (last: %s); want stopped without an error", id, got.State, got.Errors, got.LastError)
	}
	return got
}

// TestICasaDialects plays, in order on one home, scripts written in each
// language iCasa's own scripts use: the first versions' commands
// (add-device, set-property, modify-environment, move, configure-device),
// zoneId/width/height and deviceID, dates as yyyy.MM.dd.HH.mm.ss and
// yyyy/MM/dd-HH:mm:ss, an XML declaration, Z coordinates, spaces around =,
// Java type letters, the shell-only preference commands, set-zone-parent,
// every kind of the catalogue in both spellings of its namespace, and
// reset-context. Each must play to its end without an error, and do what
// it says.
func TestICasaDialects(t *testing.T) {
	h := scriptHome(t)
	dir := filepath.Join("testdata", "scripts", "icasa")

	info := playFile(t, h, filepath.Join(dir, "1_legacy_house.bhv"))
	if info.StartDate != "14/03/2012-06:30:00" || info.Factor != 720 {
		t.Errorf("1_legacy_house.bhv: start %s factor %d, want 14/03/2012-06:30:00 and 720", info.StartDate, info.Factor)
	}
	for _, tt := range []struct{ id, typ, zone string }{
		{"Lamp-Q1-hall", "iCasa.BinaryLight", "hall"},
		{"Dimm-Q2-study", "iCasa.DimmerLight", "study"},
		{"Pres-Q5-hall", "iCasa.PresenceSensor", "hall"},
		{"Pres-Q6-study", "iCasa.PresenceSensor", "study"},
	} {
		d, err := h.Device(tt.id)
		if err != nil || d.Type != tt.typ || d.Location != tt.zone {
			t.Errorf("Device(%s) = %s in %q, %v; want %s in %s", tt.id, d.Type, d.Location, err, tt.typ, tt.zone)
		}
	}
	if z, _ := h.Zone("study"); z.Variables[sim.VarTemperature] != 293.65 {
		t.Errorf("study's Temperature = %v, want 293.65 (modify-environment)", z.Variables[sim.VarTemperature])
	}
	if _, err := h.Zone("desk"); err != nil {
		t.Errorf("Zone(desk) = %v", err)
	}

	playFile(t, h, filepath.Join(dir, "2_legacy_day.bhv"))
	props := func(id string) map[string]any {
		d, err := h.Device(id)
		if err != nil {
			t.Fatalf("Device(%s) = %v", id, err)
		}
		return d.Properties
	}
	if p := props("Lamp-Q1-hall"); p[sim.PropPowerStatus] != false {
		t.Errorf("lamp power_status = %v, want false (light.powerStatus, then binaryLight.powerStatus)", p[sim.PropPowerStatus])
	}
	if p := props("Dimm-Q2-study"); p[sim.PropPowerLevel] != 0.4 || p["state"] != "activated" {
		t.Errorf("dimmer power_level %v state %v, want 0.4 (light.powerLevel) and activated", p[sim.PropPowerLevel], p["state"])
	}
	if p := props("Pres-Q5-hall"); p["fault"] != "no" {
		t.Errorf("presence sensor fault = %v, want no (repaired)", p["fault"])
	}
	if p, _ := h.Person("Odile"); p.Location != "study" {
		t.Errorf("Odile is in %q, want study (move room person)", p.Location)
	}

	playFile(t, h, filepath.Join(dir, "3_medical.bhv"))
	if p, _ := h.Person("Marcel"); p.Location != "landing" {
		t.Errorf("Marcel is in %q, want landing", p.Location)
	}
	if d, _ := h.Device("MotionSensor-7c32"); d.Location != "landing" {
		t.Errorf("motion sensor is in %q, want landing (move-device)", d.Location)
	}
	want := map[string]any{"sensor.note": 42.0, "sensor.label": "landing"}
	got := map[string]any{}
	for k := range want {
		got[k] = props("MotionSensor-7c32")[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("typed free properties (-want +got):\n%s", diff)
	}
	if p := props("PushButton-7c31"); p[sim.PropPushAndHold] != false {
		t.Errorf("push_and_hold = %v, want false (pushButton.pushAndHold, type B)", p[sim.PropPushAndHold])
	}
	if p := props("Dimm-Q2-study"); p[sim.PropPowerLevel] != 1.0 {
		t.Errorf("dimmer power_level = %v, want 1 (type F)", p[sim.PropPowerLevel])
	}

	info = playFile(t, h, filepath.Join(dir, "4_catalogue.bhv"))
	if info.StartDate != "06/03/2013-17:05:59" || info.ActionNumber != 30 {
		t.Errorf("4_catalogue.bhv: start %s, %d actions; want 06/03/2013-17:05:59 and 30", info.StartDate, info.ActionNumber)
	}
	if n := len(h.Zones()) + len(h.Devices()) + len(h.Persons()); n != 0 {
		t.Errorf("after reset-context: %d zones, devices and persons, want none", n)
	}
}

// TestLegacyForms checks each older form against the command it becomes.
func TestLegacyForms(t *testing.T) {
	tests := []struct {
		name, element string
		want          []sim.Action
	}{
		{"create-zone zoneId width height", `<create-zone zoneId="k" leftX="1" topY="2" width="3" height="4"/>`,
			[]sim.Action{act(0, 2, "create-zone", "id", "k", "leftX", "1", "topY", "2", "X-Length", "3", "Y-Length", "4")}},
		{"add-device", `<add-device deviceID="d" type="iCASA.Heater" description="x"/>`,
			[]sim.Action{act(0, 2, "create-device", "id", "d", "type", "iCASA.Heater")}},
		{"add-device room", `<add-device room="k" deviceID="d" type="a.b.SimulatedPresenceSensorImpl"/>`,
			[]sim.Action{act(0, 2, "create-device", "id", "d", "type", "iCasa.PresenceSensor"),
				act(0, 2, "move-device-zone", "deviceId", "d", "zoneId", "k")}},
		{"configure-device", `<configure-device deviceID="d" room="k"/>`,
			[]sim.Action{act(0, 2, "move-device-zone", "deviceId", "d", "zoneId", "k")}},
		{"move-device-zone zone", `<move-device-zone deviceID="d" zone="k"/>`,
			[]sim.Action{act(0, 2, "move-device-zone", "deviceId", "d", "zoneId", "k")}},
		{"set-property", `<set-property deviceID="d" propertyId="light.powerStatus" value="true"/>`,
			[]sim.Action{act(0, 2, "set-device-property", "deviceId", "d", "property", "light.powerStatus", "value", "true")}},
		{"modify-environment", `<modify-environment zone="k" variable="temperature" value="290"/>`,
			[]sim.Action{act(0, 2, "modify-zone-variable", "zoneId", "k", "variable", "Temperature", "value", "290")}},
		{"modify-environment unknown variable", `<modify-environment zone="k" variable="humidity" value="40"/>`,
			[]sim.Action{act(0, 2, "modify-zone-variable", "zoneId", "k", "variable", "humidity", "value", "40")}},
		{"move", `<move room="k" person="p"/>`,
			[]sim.Action{act(0, 2, "move-person-zone", "zoneId", "k", "personId", "p")}},
		{"deviceID everywhere", `<fault-device deviceID="d"/>`,
			[]sim.Action{act(0, 2, "fault-device", "deviceId", "d")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := parseScriptString(t, "<behavior>\n"+tt.element+"\n</behavior>")
			if diff := cmp.Diff(tt.want, s.Actions); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLegacyFormsChecked checks that the older forms are held to the same
// rules as the commands they become: an action that breaks them is listed
// as a problem and fails when played.
func TestLegacyFormsChecked(t *testing.T) {
	for _, element := range []string{
		`<add-device deviceID="d" type="a.b.PresenceSensor"/>`,       // a Java class not named SimulatedXImpl
		`<add-device deviceID="d" type="a.b.SimulatedImpl"/>`,        // no kind in the class name
		`<add-device deviceID="d" type="a.b.SimulatedToasterImpl"/>`, // no such kind
		`<add-device room="k" type="iCasa.Heater"/>`,                 // no id
		`<configure-device deviceID="d"/>`,                           // no room
		`<set-property deviceID="d" propertyId="p"/>`,                // no value
		`<move room="k"/>`, // no person
		`<modify-environment zone="k" variable="temperature" value="x"/>`, // not a number
	} {
		s, err := sim.ParseScript(strings.NewReader("<behavior>\n"+element+"\n</behavior>"), time.UTC)
		if err != nil || len(s.Problems) == 0 || !strings.HasPrefix(s.Problems[0], "line 2: ") {
			t.Errorf("%s: %v, %v; want the script read and a problem at line 2", element, s, err)
			continue
		}
		if err := s.Actions[0].Apply(scriptHome(t)); !errors.Is(err, sim.ErrInvalid) || err.Error() != s.Problems[0] {
			t.Errorf("%s: played, error %v; want ErrInvalid, as listed", element, err)
		}
	}
}

// TestLegacyScriptWithBadActionsPlays: scripts of iCasa's demo
// configurations hold actions iCasa itself skipped (an attribute it did
// not know, a device without a type); they are read, the bad actions
// listed and failing when played, and the rest plays.
func TestLegacyScriptWithBadActionsPlays(t *testing.T) {
	src := `<behavior startdate="27/10/2011-00:00:00" factor="1440">
	<create-zone id="kitchen" leftX="0" topY="0" X-Length="100" Y-Length="100"/>
	<add-device deviceID="1234"/>
	<fault-device room="kitchen" delay="50" deviceID="1234"/>
	<create-person id="paul" type="Man"/>
	<delay value="10"/>
	<move-person-zone personId="paul" zoneId="kitchen"/>
</behavior>`
	s, err := sim.ParseScript(strings.NewReader(src), time.UTC)
	if err != nil {
		t.Fatalf("ParseScript = %v, want the script read", err)
	}
	want := []string{"line 3: create-device: missing attribute type", "line 4: fault-device: unknown attribute delay"}
	if diff := cmp.Diff(want, s.Problems, cmp.Comparer(func(a, b string) bool { return strings.HasPrefix(b, a) || strings.HasPrefix(a, b) })); diff != "" {
		t.Errorf("Problems (-want +got):\n%s", diff)
	}
	h := scriptHome(t)
	failed := 0
	for _, a := range s.Actions {
		if a.Apply(h) != nil {
			failed++
		}
	}
	if p := mustGetPerson(t, h, "paul"); failed != 2 || p.Location != "kitchen" {
		t.Errorf("played: %d actions failed, paul in %q; want 2 and the kitchen", failed, p.Location)
	}
}
