package sim_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

// scriptHome returns an empty home on a mock wall clock, dates in UTC.
func scriptHome(tb testing.TB) *sim.Home {
	tb.Helper()
	h, err := sim.New(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return h
}

func parseScriptString(tb testing.TB, s string) *sim.Script {
	tb.Helper()
	sc, err := sim.ParseScript(strings.NewReader(s), time.UTC)
	if err != nil {
		tb.Fatalf("ParseScript: %v", err)
	}
	return sc
}

func parseScriptFile(tb testing.TB, path string) *sim.Script {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return parseScriptString(tb, string(data))
}

// replayed returns a new home of h's physics model (on a mock wall clock,
// dates in UTC) made by playing h written as a script (WriteScript, in
// UTC).
func replayed(tb testing.TB, h *sim.Home) *sim.Home {
	tb.Helper()
	var b bytes.Buffer
	if err := sim.WriteScript(&b, h, time.UTC); err != nil {
		tb.Fatalf("WriteScript = %v", err)
	}
	s, err := sim.ParseScript(&b, time.UTC)
	if err != nil {
		tb.Fatalf("ParseScript(written script) = %v", err)
	}
	restored, err := sim.New(sim.Config{WallClock: clock.NewMock(), Location: time.UTC, Physics: h.Physics()})
	if err != nil {
		tb.Fatal(err)
	}
	applyScript(tb, restored, s)
	return restored
}

// applyScript applies every action of s to h, ignoring offsets.
func applyScript(tb testing.TB, h *sim.Home, s *sim.Script) {
	tb.Helper()
	for _, a := range s.Actions {
		if err := a.Apply(h); err != nil {
			tb.Fatalf("Apply(%s at line %d) = %v, want nil error", a.Command, a.Line, err)
		}
	}
}

// act builds an action; kv alternates attribute names and values.
func act(offset time.Duration, line int, cmd string, kv ...string) sim.Action {
	args := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		args[kv[i]] = kv[i+1]
	}
	return sim.Action{Offset: offset, Line: line, Command: cmd, Args: args}
}

// setupZone returns the seven actions that create a zone of setup_house.bhv
// from the given line.
func setupZone(line int, id, x, y, w, l, temp, illum string) []sim.Action {
	return []sim.Action{
		act(0, line, "create-zone", "id", id, "leftX", x, "topY", y, "X-Length", w, "Y-Length", l),
		act(0, line+1, "add-zone-variable", "zoneId", id, "variable", "Temperature"),
		act(0, line+2, "add-zone-variable", "zoneId", id, "variable", "Illuminance"),
		act(0, line+3, "add-zone-variable", "zoneId", id, "variable", "Volume"),
		act(0, line+4, "modify-zone-variable", "zoneId", id, "variable", "Temperature", "value", temp),
		act(0, line+5, "modify-zone-variable", "zoneId", id, "variable", "Illuminance", "value", illum),
		act(0, line+6, "modify-zone-variable", "zoneId", id, "variable", "Volume", "value", "10"),
	}
}

func TestParseScript(t *testing.T) {
	m := time.Minute
	cet := time.FixedZone("CET", 3600)
	tests := []struct {
		name  string
		file  string // under testdata/scripts, instead of input
		input string
		loc   *time.Location
		want  *sim.Script
	}{
		{
			name: "setup house",
			file: "setup_house.bhv",
			want: &sim.Script{Factor: 1440, Actions: slices.Concat(
				setupZone(8, "kitchen", "410", "370", "245", "210", "296.15", "0"),
				setupZone(16, "livingroom", "410", "20", "245", "350", "295.15", "5"),
				setupZone(24, "bedroom", "55", "370", "259", "210", "293.15", "0"),
				setupZone(32, "bathroom", "55", "20", "260", "350", "297.15", "0"),
				[]sim.Action{
					act(0, 42, "create-device", "id", "Pres-A1255D-D", "type", "iCasa.PresenceSensor"),
					act(0, 43, "move-device-zone", "deviceId", "Pres-A1255D-D", "zoneId", "kitchen"),
					act(0, 45, "create-device", "id", "Ther-A3654Q-S", "type", "iCASA.Thermometer"),
					act(0, 46, "move-device-zone", "deviceId", "Ther-A3654Q-S", "zoneId", "kitchen"),
					act(0, 48, "create-device", "id", "BiLi-A7496W-S", "type", "iCasa.BinaryLight"),
					act(0, 49, "move-device-zone", "deviceId", "BiLi-A7496W-S", "zoneId", "livingroom"),
					act(0, 51, "create-device", "id", "Heat-A4894S-S", "type", "iCasa.Heater"),
					act(0, 52, "move-device-zone", "deviceId", "Heat-A4894S-S", "zoneId", "livingroom"),
					act(0, 54, "create-device", "id", "Phot-B8932F-D", "type", "iCasa.Photometer"),
					act(0, 55, "move-device-zone", "deviceId", "Phot-B8932F-D", "zoneId", "bedroom"),
					act(0, 57, "create-device", "id", "Ther-C1122A-S", "type", "iCasa.Thermometer"),
					act(0, 58, "move-device-zone", "deviceId", "Ther-C1122A-S", "zoneId", "bathroom"),
					act(0, 62, "create-person", "id", "Paul", "type", "Grandfather"),
					act(0, 63, "move-person-zone", "personId", "Paul", "zoneId", "livingroom"),
					act(0, 65, "create-person", "id", "Alice", "type", "Girl"),
					act(0, 66, "move-person-zone", "personId", "Alice", "zoneId", "bedroom"),
				},
			)},
		},
		{
			name: "scenario with delays",
			file: "scenario.bhv",
			want: &sim.Script{
				StartDate: time.Date(2011, 10, 27, 0, 0, 0, 0, time.UTC),
				Factor:    1440,
				Length:    3*time.Hour + 52*m + 30*time.Second, // the trailing delays too
				Actions: []sim.Action{
					act(0, 5, "create-zone", "id", "kitchen", "leftX", "410", "topY", "370", "bottomZ", "0", "X-Length", "245", "Y-Length", "210", "Z-Length", "300"),
					act(0, 6, "add-zone-variable", "zoneId", "kitchen", "variable", "Temperature"),
					act(0, 7, "modify-zone-variable", "zoneId", "kitchen", "variable", "Temperature", "value", "296.15"),
					act(0, 9, "create-device", "id", "Pres-A1255D-D", "type", "iCasa.PresenceSensor"),
					act(0, 10, "create-device", "id", "BiLi-A7496W-S", "type", "iCasa.BinaryLight"),
					act(0, 11, "move-device-zone", "deviceId", "Pres-A1255D-D", "zoneId", "kitchen"),
					act(0, 12, "move-device-zone", "deviceId", "BiLi-A7496W-S", "zoneId", "kitchen"),
					act(0, 13, "create-person", "id", "Paul", "type", "Grandfather"),
					act(100*m, 16, "move-person-zone", "personId", "Paul", "zoneId", "kitchen"),
					act(220*m, 18, "deactivate-device", "deviceId", "Pres-A1255D-D"),
					act(220*m+30*time.Second, 20, "activate-device", "deviceId", "Pres-A1255D-D"),
					act(221*m, 22, "fault-device", "deviceId", "Pres-A1255D-D"),
					act(222*m+30*time.Second, 24, "repair-device", "deviceId", "Pres-A1255D-D"),
					act(222*m+30*time.Second, 25, "set-device-property", "deviceId", "BiLi-A7496W-S", "property", "power_status", "value", "true"),
					act(222*m+30*time.Second, 26, "move-person", "personId", "Paul", "newX", "100", "newY", "100"),
					act(222*m+30*time.Second, 27, "remove-device", "deviceId", "Pres-A1255D-D"),
				},
			},
		},
		{
			name:  "empty behavior",
			input: `<behavior/>`,
			want:  &sim.Script{Factor: 1, Actions: []sim.Action{}},
		},
		{
			name:  "start date in the given location",
			input: `<behavior startdate="31/12/2023-23:59:59" factor="1000000"/>`,
			loc:   cet,
			want:  &sim.Script{StartDate: time.Date(2023, 12, 31, 23, 59, 59, 0, cet), Factor: 1000000, Actions: []sim.Action{}},
		},
		{
			name: "delay units and fractions",
			input: "<behavior>\n" +
				"<delay value=\"1.5\" unit=\"h\"/><reset-context/>\n" +
				"<delay value=\"0.5\" unit=\"m\"/><reset-context/>\n" +
				"<delay value=\"2.25\" unit=\"s\"/><reset-context/>\n" +
				"<delay value=\"0\"/><delay value=\"1\"/><reset-context/>\n" +
				"<delay value=\"1e1\" unit=\"s\"/>\n" +
				"</behavior>",
			want: &sim.Script{Factor: 1, Actions: []sim.Action{
				act(90*m, 2, "reset-context"),
				act(90*m+30*time.Second, 3, "reset-context"),
				act(90*m+32250*time.Millisecond, 4, "reset-context"),
				act(91*m+32250*time.Millisecond, 5, "reset-context"),
			}, Length: 91*m + 42250*time.Millisecond}, // the trailing 10 s count
		},
		{
			name: "extension attributes and typed values",
			input: `<behavior>
	<create-zone id="garden" leftX="0" topY="600" X-Length="700.9" Y-Length="100" name="The garden" isRoom="false"/>
	<create-device id="d1" type="heater" name="Radiator" positionX="12.7" positionY="-1" width="10" height="20"/>
	<create-person id="p1" type="mother" name="Mum" positionX="5" positionY="6"/>
	<set-device-property deviceId="d1" property="tags" value='["a",{"b":1}]' type="json"/>
	<modify-zone-variable zoneId="garden" variable="Temperature" value="280" type="Double"/>
</behavior>`,
			want: &sim.Script{Factor: 1, Actions: []sim.Action{
				act(0, 2, "create-zone", "id", "garden", "leftX", "0", "topY", "600", "X-Length", "700.9", "Y-Length", "100", "name", "The garden", "isRoom", "false"),
				act(0, 3, "create-device", "id", "d1", "type", "heater", "name", "Radiator", "positionX", "12.7", "positionY", "-1", "width", "10", "height", "20"),
				act(0, 4, "create-person", "id", "p1", "type", "mother", "name", "Mum", "positionX", "5", "positionY", "6"),
				act(0, 5, "set-device-property", "deviceId", "d1", "property", "tags", "value", `["a",{"b":1}]`, "type", "json"),
				act(0, 6, "modify-zone-variable", "zoneId", "garden", "variable", "Temperature", "value", "280", "type", "Double"),
			}},
		},
		{
			name: "shell commands are kept as no-ops",
			input: `<behavior>
<show-zones/><set-global-property name="x" value="1"/>
</behavior>`,
			want: &sim.Script{Factor: 1, Actions: []sim.Action{
				act(0, 2, "show-zones"),
				act(0, 2, "set-global-property", "name", "x", "value", "1"),
			}},
		},
		{
			name: "byte order mark, doctype, comments, instructions and CDATA whitespace",
			input: "\ufeff<?xml version=\"1.0\"?>\n<!DOCTYPE behavior>\n<!-- c -->\n<behavior xmlns:x=\"urn:x\">\n" +
				"<?pi x?><![CDATA[  ]]>\n<remove-device\n   deviceId=\"d\"><!-- c --> </remove-device>\n</behavior>\n<!-- end -->\n",
			want: &sim.Script{Factor: 1, Actions: []sim.Action{act(0, 6, "remove-device", "deviceId", "d")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := tt.input
			if tt.file != "" {
				data, err := os.ReadFile(filepath.Join("testdata", "scripts", tt.file))
				if err != nil {
					t.Fatal(err)
				}
				input = string(data)
			}
			loc := tt.loc
			if loc == nil {
				loc = time.UTC
			}
			got, err := sim.ParseScript(strings.NewReader(input), loc)
			if err != nil {
				t.Fatalf("ParseScript = %v, want nil error", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseScript (-want +got):\n%s", diff)
			}
		})
	}
}

// scriptErrorTests are scripts that must not parse, or whose action must
// fail whenever played (listed in Script.Problems), with the line and a
// part of the message the error must hold.
var scriptErrorTests = []struct {
	name  string
	input string
	line  int
	want  string
}{
	{"unknown command", "<behavior>\n<fly-away id=\"x\"/>\n</behavior>", 2, "unknown command fly-away"},
	{"set-zone-parent without its attributes", "<behavior>\n\n<set-zone-parent zoneId=\"a\" parentId=\"b\"/>\n</behavior>", 3, "set-zone-parent: unknown attribute parentId"},
	{"unsupported attach-zone-device", "<behavior>\n<attach-zone-device/>\n</behavior>", 2, "command attach-zone-device is not supported"},
	{"unsupported attach-device-person", "<behavior>\n<attach-device-person/>\n</behavior>", 2, "command attach-device-person is not supported"},
	{"unsupported attach-person-zone", "<behavior>\n<attach-person-zone/>\n</behavior>", 2, "command attach-person-zone is not supported"},
	{"unsupported execute-script", "<behavior>\n<execute-script file=\"x.bhv\"/>\n</behavior>", 2, "command execute-script is not supported"},
	{"missing attribute", "<behavior>\n<create-zone id=\"k\" leftX=\"1\" X-Length=\"2\" Y-Length=\"3\"/>\n</behavior>", 2, "create-zone: missing attribute topY"},
	{"half of a group", "<behavior>\n<create-zone id=\"k\" leftX=\"1\" topY=\"1\" X-Length=\"2\" Y-Length=\"3\" bottomZ=\"0\"/>\n</behavior>", 2, "missing attribute Z-Length"},
	{"half of a position", "<behavior>\n<create-device id=\"d\" type=\"Heater\" positionY=\"3\"/>\n</behavior>", 2, "missing attribute positionX"},
	{"extra attribute", "<behavior>\n<create-device id=\"d\" type=\"Heater\" colour=\"red\"/>\n</behavior>", 2, "create-device: unknown attribute colour"},
	{"attribute given twice", "<behavior>\n<remove-device deviceId=\"a\" deviceId=\"b\"/>\n</behavior>", 2, "attribute deviceId is given twice"},
	{"missing attribute of a device command", "<behavior>\n<activate-device/>\n</behavior>", 2, "activate-device: missing attribute deviceId"},
	{"reset-context takes no attribute", "<behavior>\n<reset-context all=\"true\"/>\n</behavior>", 2, "unknown attribute all"},
	{"bad number", "<behavior>\n<move-person personId=\"p\" newX=\"ten\" newY=\"1\"/>\n</behavior>", 2, `attribute newX: "ten" is not a number`},
	{"bad ignored Z", "<behavior>\n<move-device deviceId=\"d\" leftX=\"1\" topY=\"1\" bottomZ=\"low\"/>\n</behavior>", 2, "attribute bottomZ"},
	{"coordinate out of range", "<behavior>\n<move-zone zoneId=\"k\" leftX=\"-3e9\" topY=\"1\"/>\n</behavior>", 2, "attribute leftX must be between -1000000000 and 1000000000"},
	{"position out of range", "<behavior>\n<move-device deviceId=\"d\" leftX=\"2e9\" topY=\"1\"/>\n</behavior>", 2, "attribute leftX must be between -1000000000 and 1000000000"},
	{"negative length", "<behavior>\n<resize-zone zoneId=\"k\" X-Length=\"-3\" Y-Length=\"1\"/>\n</behavior>", 2, "attribute X-Length must be between 0 and 2000000000"},
	{"zone beyond the plan", "<behavior>\n<create-zone id=\"k\" leftX=\"999999999\" topY=\"1\" X-Length=\"2\" Y-Length=\"3\"/>\n</behavior>", 2, "leftX + X-Length must be at most 1000000000"},
	{"bad length", "<behavior>\n<resize-zone zoneId=\"k\" X-Length=\"NaN\" Y-Length=\"1\"/>\n</behavior>", 2, "attribute X-Length"},
	{"bad id", "<behavior>\n<create-zone id=\"my kitchen\" leftX=\"1\" topY=\"1\" X-Length=\"2\" Y-Length=\"3\"/>\n</behavior>", 2, "attribute id: \"my kitchen\" is not a valid id"},
	{"empty variable", "<behavior>\n<add-zone-variable zoneId=\"k\" variable=\"\"/>\n</behavior>", 2, "attribute variable is empty"},
	{"bad variable value", "<behavior>\n<modify-zone-variable zoneId=\"k\" variable=\"T\" value=\"warm\"/>\n</behavior>", 2, `attribute value: "warm" is not a number`},
	{"string variable type", "<behavior>\n<modify-zone-variable zoneId=\"k\" variable=\"T\" value=\"1\" type=\"string\"/>\n</behavior>", 2, "zone variables are numbers"},
	{"bad device type", "<behavior>\n<create-device id=\"d\" type=\"iCasa.Toaster\"/>\n</behavior>", 2, "unknown device type"},
	{"bad person type", "<behavior>\n<create-person id=\"p\" type=\"Robot\"/>\n</behavior>", 2, "unknown person type"},
	{"bad isRoom", "<behavior>\n<create-zone id=\"k\" leftX=\"1\" topY=\"1\" X-Length=\"2\" Y-Length=\"3\" isRoom=\"maybe\"/>\n</behavior>", 2, "attribute isRoom"},
	{"bad width", "<behavior>\n<create-device id=\"d\" type=\"Heater\" width=\"-4\"/>\n</behavior>", 2, "attribute width must be between 0"},
	{"bad value type", "<behavior>\n<set-device-property deviceId=\"d\" property=\"p\" value=\"1\" type=\"colour\"/>\n</behavior>", 2, "attribute type"},
	{"bad int value", "<behavior>\n<set-device-property deviceId=\"d\" property=\"p\" value=\"1.5\" type=\"int\"/>\n</behavior>", 2, "is not an integer"},
	{"bad boolean value", "<behavior>\n<set-device-property deviceId=\"d\" property=\"p\" value=\"yes\" type=\"boolean\"/>\n</behavior>", 2, "is not a boolean"},
	{"bad json value", "<behavior>\n<set-device-property deviceId=\"d\" property=\"p\" value=\"[1,\" type=\"json\"/>\n</behavior>", 2, "not JSON"},
	{"bad unit", "<behavior>\n<delay value=\"1\" unit=\"d\"/>\n</behavior>", 2, `delay: attribute unit: "d" is not h, m or s`},
	{"negative delay", "<behavior>\n<reset-context/>\n<delay value=\"-1\"/>\n</behavior>", 3, "is negative"},
	{"delay not a number", "<behavior>\n<delay value=\"soon\"/>\n</behavior>", 2, "delay: attribute value"},
	{"delay without value", "<behavior>\n<delay unit=\"s\"/>\n</behavior>", 2, "delay: missing attribute value"},
	{"delay too long", "<behavior>\n<delay value=\"1e9\" unit=\"h\"/>\n</behavior>", 2, "is longer than"},
	{"delays add up too long", "<behavior>\n<delay value=\"800000\" unit=\"h\"/>\n<delay value=\"800000\" unit=\"h\"/>\n</behavior>", 3, "the delays add up"},
	{"bad startdate", "<?xml version=\"1.0\"?>\n<behavior startdate=\"2011-10-27 00:00\"/>", 2, "attribute startdate"},
	{"startdate in the year 0", "<behavior startdate=\"01/01/0000-00:00:00\"/>", 1, "attribute startdate"},
	{"factor 0", "<behavior factor=\"0\"/>", 1, `attribute factor: "0" is not an integer from 1 to 1000000`},
	{"factor -1", "<behavior factor=\"-1\"/>", 1, "attribute factor"},
	{"factor x", "<behavior factor=\"x\"/>", 1, "attribute factor"},
	{"factor too large", "<behavior factor=\"1000000001\"/>", 1, "attribute factor"},
	{"unknown root attribute", "<behavior speed=\"2\"/>", 1, "behavior: unknown attribute speed"},
	{"malformed XML", "<behavior>\n<reset-context>\n</behavior>", 3, "malformed XML"},
	{"unclosed root", "<behavior>\n<reset-context/>\n", 3, "malformed XML"},
	{"unknown entity", "<behavior>\n\n<create-person id=\"p\" type=\"Boy\" name=\"&nbsp;\"/>\n</behavior>", 3, "malformed XML"},
	{"illegal character", "<behavior>\n<create-person id=\"p\" type=\"Boy\" name=\"&#x1;\"/>\n</behavior>", 2, "malformed XML"},
	{"wrong root", "<?xml version=\"1.0\"?>\n<scenario/>", 2, "the root element is <scenario>, want <behavior>"},
	{"namespaced root", "<x:behavior xmlns:x=\"urn:x\"/>", 1, "want <behavior>"},
	{"nested element", "<behavior>\n<create-device id=\"d\" type=\"Heater\">\n  <name>x</name>\n</create-device>\n</behavior>", 3, "create-device: nested element <name> is not allowed"},
	{"text content", "<behavior>\n\n  hello\n</behavior>", 3, `unexpected text "hello"`},
	{"text in an action", "<behavior>\n<delay value=\"1\">soon</delay>\n</behavior>", 2, `unexpected text "soon"`},
	{"text after the root", "<behavior/>\ntrailing", 2, "unexpected text"},
	{"second root", "<behavior/>\n<behavior/>", 2, "element <behavior> after </behavior>"},
	{"empty input", "", 1, "no <behavior> element"},
	{"only a comment", "<!-- nothing -->", 1, "no <behavior> element"},
}

func TestParseScriptErrors(t *testing.T) {
	for _, tt := range scriptErrorTests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := sim.ParseScript(strings.NewReader(tt.input), time.UTC)
			if err == nil && len(s.Problems) > 0 {
				// Read all the same: the action fails when played, with
				// the same error.
				h := scriptHome(t)
				var applied error
				for _, a := range s.Actions {
					if e := a.Apply(h); e != nil && applied == nil {
						applied = e
					}
				}
				if applied == nil || applied.Error() != s.Problems[0] {
					t.Errorf("played, the script's first error is %v; want its first problem, %q", applied, s.Problems[0])
				}
				err = applied
			}
			if !errors.Is(err, sim.ErrInvalid) {
				t.Fatalf("ParseScript = %+v, %v; want an error wrapping ErrInvalid, or a problem", s, err)
			}
			if line := fmt.Sprintf("line %d: ", tt.line); !strings.HasPrefix(err.Error(), line) {
				t.Errorf("ParseScript error %q does not start with %q", err, line)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseScript error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestParseScriptTooLarge(t *testing.T) {
	tests := []struct {
		name    string
		size    int
		wantErr bool
	}{
		{"at the limit", sim.MaxScriptSize, false},
		{"one byte over", sim.MaxScriptSize + 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Three lines, the limit falling in the third.
			const open, close = "<behavior>\n\n", "</behavior>"
			input := open + strings.Repeat(" ", tt.size-len(open)-len(close)) + close
			_, err := sim.ParseScript(strings.NewReader(input), time.UTC)
			switch {
			case tt.wantErr && !errors.Is(err, sim.ErrInvalid):
				t.Fatalf("ParseScript(%d bytes) = %v, want an error wrapping ErrInvalid", tt.size, err)
			case tt.wantErr && !strings.HasPrefix(err.Error(), fmt.Sprintf("line 3: script is larger than %d bytes", sim.MaxScriptSize)):
				t.Errorf("ParseScript error %q does not say at line 3 that the script is too large", err)
			case !tt.wantErr && err != nil:
				t.Fatalf("ParseScript(%d bytes) = %v, want nil error", tt.size, err)
			}
		})
	}
}

func TestScriptDuration(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  time.Duration
	}{
		{"no action", `<behavior><delay value="5"/></behavior>`, 0},
		{"actions at the start", `<behavior><reset-context/></behavior>`, 0},
		{"trailing delay ignored", `<behavior><delay value="1" unit="h"/><reset-context/><delay value="5"/></behavior>`, time.Hour},
		{"sum of delays", `<behavior><delay value="1" unit="h"/><delay value="2"/><delay value="3" unit="s"/><show-zones/></behavior>`, time.Hour + 2*time.Minute + 3*time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseScriptString(t, tt.input).Duration(); got != tt.want {
				t.Errorf("Duration() = %v, want %v", got, tt.want)
			}
		})
	}
}

// wantDevice returns a device of the given kind as a fresh one is, placed at
// (x, y) in zone loc ("" for none), with extra properties merged over. It
// suits kinds whose properties the simulation does not derive.
func wantDevice(tb testing.TB, id, typ string, x, y int, loc string, extra map[string]any) sim.Device {
	tb.Helper()
	kind, err := sim.LookupKind(typ)
	if err != nil {
		tb.Fatal(err)
	}
	props := map[string]any{"state": "activated", "fault": "no"}
	for _, p := range kind.Properties {
		props[p.Name] = p.Default
	}
	if loc != "" {
		props["Location"] = loc
	}
	for k, v := range extra {
		props[k] = v
	}
	return sim.Device{
		ID: id, Name: id, Type: kind.Type(), Location: loc, PositionX: x, PositionY: y,
		State: "activated", Fault: "no", Services: kind.Services(), Properties: props,
	}
}

func wantZone(id string, x, y, w, l int, vars map[string]float64) sim.Zone {
	return sim.Zone{ID: id, Name: id, IsRoom: true, LeftX: x, TopY: y, RightX: x + w, BottomY: y + l, Variables: vars}
}

// homeCalls makes API calls on a home, failing the test at the first error.
type homeCalls struct {
	tb testing.TB
	h  *sim.Home
}

func (c homeCalls) check(_ any, err error) {
	c.tb.Helper()
	if err != nil {
		c.tb.Fatal(err)
	}
}

func (c homeCalls) zone(id string, x, y, w, l int, vars map[string]float64) {
	c.tb.Helper()
	c.check(c.h.CreateZone(sim.ZoneSpec{ID: id, LeftX: x, TopY: y, RightX: x + w, BottomY: y + l, Variables: vars}))
}

func (c homeCalls) device(id, typ string, x, y int) {
	c.tb.Helper()
	c.check(c.h.CreateDevice(sim.DeviceSpec{ID: id, Type: typ}))
	c.check(c.h.UpdateDevice(id, sim.DeviceUpdate{PositionX: &x, PositionY: &y}))
}

func (c homeCalls) updateDevice(id string, u sim.DeviceUpdate) {
	c.tb.Helper()
	c.check(c.h.UpdateDevice(id, u))
}

func (c homeCalls) person(id, typ string, x, y int) {
	c.tb.Helper()
	c.check(c.h.CreatePerson(sim.PersonSpec{ID: id, Type: typ}))
	c.check(c.h.UpdatePerson(id, sim.PersonUpdate{PositionX: &x, PositionY: &y}))
}

// TestScriptApply applies the sample scripts to a fresh home and compares it
// with a home built by the API calls the scripts stand for: the simulation's
// physics (sensors following their zone, lights setting Illuminance) acts
// the same on both.
func TestScriptApply(t *testing.T) {
	vars := func(temp, illum float64) map[string]float64 {
		return map[string]float64{"Temperature": temp, "Illuminance": illum, "Volume": 10}
	}
	str := func(s string) *string { return &s }
	tests := []struct {
		name  string
		file  string
		build func(c homeCalls)
	}{
		{
			name: "setup house",
			file: "setup_house.bhv",
			build: func(c homeCalls) {
				c.zone("kitchen", 410, 370, 245, 210, vars(296.15, 0))
				c.zone("livingroom", 410, 20, 245, 350, vars(295.15, 5))
				c.zone("bedroom", 55, 370, 259, 210, vars(293.15, 0))
				c.zone("bathroom", 55, 20, 260, 350, vars(297.15, 0))
				c.device("Pres-A1255D-D", "iCasa.PresenceSensor", 532, 475)
				c.device("Ther-A3654Q-S", "iCasa.Thermometer", 532, 475)
				c.device("BiLi-A7496W-S", "iCasa.BinaryLight", 532, 195)
				c.device("Heat-A4894S-S", "iCasa.Heater", 532, 195)
				c.device("Phot-B8932F-D", "iCasa.Photometer", 184, 475)
				c.device("Ther-C1122A-S", "iCasa.Thermometer", 185, 195)
				c.person("Paul", "Grandfather", 532, 195)
				c.person("Alice", "Girl", 184, 475)
			},
		},
		{
			name: "scenario",
			file: "scenario.bhv",
			build: func(c homeCalls) {
				c.zone("kitchen", 410, 370, 245, 210, map[string]float64{"Temperature": 296.15})
				c.device("Pres-A1255D-D", "iCasa.PresenceSensor", 532, 475)
				c.device("BiLi-A7496W-S", "iCasa.BinaryLight", 532, 475)
				c.person("Paul", "Grandfather", 532, 475)
				c.updateDevice("Pres-A1255D-D", sim.DeviceUpdate{State: str("deactivated")})
				c.updateDevice("Pres-A1255D-D", sim.DeviceUpdate{State: str("activated")})
				c.updateDevice("Pres-A1255D-D", sim.DeviceUpdate{Fault: str("yes")})
				c.updateDevice("Pres-A1255D-D", sim.DeviceUpdate{Fault: str("no")})
				c.updateDevice("BiLi-A7496W-S", sim.DeviceUpdate{Properties: map[string]any{"power_status": true}})
				x, y := 100, 100
				c.check(c.h.UpdatePerson("Paul", sim.PersonUpdate{PositionX: &x, PositionY: &y}))
				if err := c.h.DeleteDevice("Pres-A1255D-D"); err != nil {
					c.tb.Fatal(err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := scriptHome(t)
			tt.build(homeCalls{t, want})
			got := scriptHome(t)
			applyScript(t, got, parseScriptFile(t, filepath.Join("testdata", "scripts", tt.file)))
			sameHome(t, want, got)
		})
	}
}

// TestScriptApplyCommands checks each command's effect on a small home.
func TestScriptApplyCommands(t *testing.T) {
	const setup = `<behavior>
	<create-zone id="k" leftX="100" topY="100" X-Length="100" Y-Length="50"/>
	<create-device id="h" type="Heater" positionX="120" positionY="120"/>
	<create-person id="p" type="Boy"/>
</behavior>`
	tests := []struct {
		name    string
		actions string
		check   func(t *testing.T, h *sim.Home)
	}{
		{
			name:    "move-zone keeps the size and relocates",
			actions: `<move-zone zoneId="k" leftX="300" topY="400" bottomZ="7"/>`,
			check: func(t *testing.T, h *sim.Home) {
				z, _ := h.Zone("k")
				if diff := cmp.Diff(wantZone("k", 300, 400, 100, 50, map[string]float64{}), z); diff != "" {
					t.Errorf("Zone(k) (-want +got):\n%s", diff)
				}
				if d, _ := h.Device("h"); d.Location != "" {
					t.Errorf("heater location = %q, want none after the zone moved away", d.Location)
				}
			},
		},
		{
			name:    "resize-zone keeps the corner",
			actions: `<resize-zone zoneId="k" X-Length="10.9" Y-Length="20" Z-Length="3"/>`,
			check: func(t *testing.T, h *sim.Home) {
				z, _ := h.Zone("k")
				if diff := cmp.Diff(wantZone("k", 100, 100, 10, 20, map[string]float64{}), z); diff != "" {
					t.Errorf("Zone(k) (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "add-zone-variable adds 0 and keeps an existing value",
			actions: `<add-zone-variable zoneId="k" variable="A"/>
				<modify-zone-variable zoneId="k" variable="B" value="2.5" type="float"/>
				<add-zone-variable zoneId="k" variable="B"/>`,
			check: func(t *testing.T, h *sim.Home) {
				z, _ := h.Zone("k")
				if diff := cmp.Diff(map[string]float64{"A": 0, "B": 2.5}, z.Variables); diff != "" {
					t.Errorf("variables (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "device state and fault",
			actions: `<deactivate-device deviceId="h"/><fault-device deviceId="h"/>
				<create-device id="h2" type="Heater"/><deactivate-device deviceId="h2"/><activate-device deviceId="h2"/>
				<fault-device deviceId="h2"/><repair-device deviceId="h2"/>`,
			check: func(t *testing.T, h *sim.Home) {
				d, _ := h.Device("h")
				d2, _ := h.Device("h2")
				got := []string{d.State, d.Fault, d2.State, d2.Fault}
				if diff := cmp.Diff([]string{"deactivated", "yes", "activated", "no"}, got); diff != "" {
					t.Errorf("state and fault (-want +got):\n%s", diff)
				}
			},
		},
		{
			name:    "move-device and remove-device",
			actions: `<move-device deviceId="h" leftX="-1" topY="-1"/><create-device id="x" type="Cooler"/><remove-device deviceId="x"/>`,
			check: func(t *testing.T, h *sim.Home) {
				if diff := cmp.Diff([]sim.Device{wantDevice(t, "h", "Heater", -1, -1, "", nil)}, h.Devices()); diff != "" {
					t.Errorf("Devices() (-want +got):\n%s", diff)
				}
			},
		},
		{
			name:    "move-device-zone goes to the centre even from inside",
			actions: `<move-device-zone deviceId="h" zoneId="k"/><move-person-zone personId="p" zoneId="k"/>`,
			check: func(t *testing.T, h *sim.Home) {
				d, _ := h.Device("h")
				p, _ := h.Person("p")
				got := []int{d.PositionX, d.PositionY, p.PositionX, p.PositionY}
				if diff := cmp.Diff([]int{150, 125, 150, 125}, got); diff != "" {
					t.Errorf("positions (-want +got):\n%s", diff)
				}
			},
		},
		{
			name:    "create-device width and height",
			actions: `<create-device id="w" type="MotionSensor" width="30" height="40.5"/>`,
			check: func(t *testing.T, h *sim.Home) {
				d, _ := h.Device("w")
				if d.Width != 30 || d.Height != 40 {
					t.Errorf("size = %d×%d, want 30×40", d.Width, d.Height)
				}
			},
		},
		{
			name:    "move-person and remove-person",
			actions: `<move-person personId="p" newX="150" newY="150" newZ="0"/><create-person id="q" type="Girl"/><remove-person personId="q"/>`,
			check: func(t *testing.T, h *sim.Home) {
				want := []sim.Person{{ID: "p", Name: "p", Type: "Boy", Location: "k", PositionX: 150, PositionY: 150}}
				if diff := cmp.Diff(want, h.Persons()); diff != "" {
					t.Errorf("Persons() (-want +got):\n%s", diff)
				}
			},
		},
		{
			name:    "reset-context empties the home",
			actions: `<reset-context/><show-devices/>`,
			check: func(t *testing.T, h *sim.Home) {
				if n := len(h.Zones()) + len(h.Devices()) + len(h.Persons()); n != 0 {
					t.Errorf("after reset-context: %d entities, want 0", n)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := scriptHome(t)
			applyScript(t, h, parseScriptString(t, setup))
			applyScript(t, h, parseScriptString(t, "<behavior>"+tt.actions+"</behavior>"))
			tt.check(t, h)
		})
	}
}

func TestScriptApplyErrors(t *testing.T) {
	const setup = `<behavior>
	<create-zone id="k" leftX="0" topY="0" X-Length="100" Y-Length="100"/>
	<create-device id="light" type="DimmerLight"/>
	<create-device id="heater" type="Heater"/>
</behavior>`
	tests := []struct {
		name   string
		action sim.Action
		want   error
		text   string
	}{
		{"unknown zone", act(0, 7, "move-device-zone", "deviceId", "light", "zoneId", "attic"), sim.ErrNotFound, "line 7: move-device-zone: "},
		{"unknown device", act(0, 8, "set-device-property", "deviceId", "lamp", "property", "power_level", "value", "1"), sim.ErrNotFound, "line 8: set-device-property: "},
		{"unknown person", act(0, 9, "remove-person", "personId", "nobody"), sim.ErrNotFound, "line 9: remove-person: "},
		{"unknown zone of a variable", act(0, 3, "add-zone-variable", "zoneId", "attic", "variable", "T"), sim.ErrNotFound, "line 3: add-zone-variable: "},
		{"zone id taken", act(0, 4, "create-zone", "id", "k", "leftX", "0", "topY", "0", "X-Length", "1", "Y-Length", "1"), sim.ErrConflict, "line 4: create-zone: "},
		{"reserved zone id", act(0, 4, "create-zone", "id", "unknown", "leftX", "0", "topY", "0", "X-Length", "1", "Y-Length", "1"), sim.ErrInvalid, "line 4: create-zone: "},
		{"kind property not a number", act(0, 5, "set-device-property", "deviceId", "heater", "property", "heater.powerLevel", "value", "high"), sim.ErrInvalid, `line 5: set-device-property: property "heater.powerLevel" of Heater devices is a number`},
		{"kind property out of range", act(0, 5, "set-device-property", "deviceId", "heater", "property", "heater.powerLevel", "value", "2"), sim.ErrInvalid, "line 5: set-device-property: "},
		{"typed value of the wrong type", act(0, 5, "set-device-property", "deviceId", "heater", "property", "heater.powerLevel", "value", "1", "type", "string"), sim.ErrInvalid, "line 5: "},
		{"derived property", act(0, 6, "set-device-property", "deviceId", "light", "property", "max_illuminance", "value", "3"), sim.ErrInvalid, "line 6: "},
		{"kind property removed", act(0, 6, "set-device-property", "deviceId", "light", "property", "max_power", "value", "null", "type", "json"), sim.ErrInvalid, "line 6: "},
		{"bad state", act(0, 6, "set-device-property", "deviceId", "light", "property", "state", "value", "on"), sim.ErrInvalid, "line 6: "},
		{"hand-made action missing an attribute", act(0, 0, "create-zone", "id", "z"), sim.ErrInvalid, "create-zone: missing attribute leftX"},
		{"hand-made unknown command", sim.Action{Line: 2, Command: "explode"}, sim.ErrInvalid, "line 2: unknown command explode"},
		{"hand-made delay", act(0, 2, "delay", "value", "1"), sim.ErrInvalid, "delay is not an action"},
		{"hand-made unsupported command", act(0, 2, "execute-script", "file", "x"), sim.ErrInvalid, "not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := scriptHome(t)
			applyScript(t, h, parseScriptString(t, setup))
			before := [3]any{h.Zones(), h.Devices(), h.Persons()}
			err := tt.action.Apply(h)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Apply = %v, want an error wrapping %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Errorf("Apply error %q does not contain %q", err, tt.text)
			}
			if diff := cmp.Diff(before, [3]any{h.Zones(), h.Devices(), h.Persons()}); diff != "" {
				t.Errorf("a failed Apply changed the home (-before +after):\n%s", diff)
			}
		})
	}
}

func TestSetDevicePropertyTyping(t *testing.T) {
	tests := []struct {
		name     string
		device   string // id in the setup below
		property string
		value    string
		typ      string // "" for none
		want     any    // nil: the property is absent
	}{
		{"kind number", "heater", "heater.powerLevel", "0.5", "", 0.5},
		{"kind number in exponent form", "heater", "heater.maxPowerLevel", "1.5e3", "", 1500.0},
		{"kind boolean", "switch", "current_status", "true", "", true},
		{"kind boolean as ParseBool reads it", "switch", "current_status", "1", "", true},
		{"free number", "heater", "x", "42", "", 42.0},
		{"free negative fraction", "heater", "x", "-0.25", "", -0.25},
		{"free true", "heater", "x", "true", "", true},
		{"free false", "heater", "x", "false", "", false},
		{"free capitalised True stays text", "heater", "x", "True", "", "True"},
		{"free text", "heater", "x", "hello world", "", "hello world"},
		{"free NaN stays text", "heater", "x", "NaN", "", "NaN"},
		{"free padded number stays text", "heater", "x", " 12", "", " 12"},
		{"free empty text", "heater", "x", "", "", ""},
		{"state as a property", "heater", "state", "deactivated", "", "deactivated"},
		{"typed string keeps digits", "heater", "x", "42", "string", "42"},
		{"typed number", "heater", "x", "7", "number", 7.0},
		{"typed double, any case", "heater", "x", "7.5", "DOUBLE", 7.5},
		{"typed int", "heater", "x", "-12", "int", -12.0},
		{"typed boolean", "heater", "x", "false", "boolean", false},
		{"typed json array", "heater", "x", `[1,"a",{"b":null,"c":[true]}]`, "json", []any{1.0, "a", map[string]any{"b": nil, "c": []any{true}}}},
		{"typed json object", "heater", "x", `{}`, "json", map[string]any{}},
		{"typed json string", "heater", "x", `"\u0001"`, "json", "\x01"},
		{"typed json null removes", "heater", "old", "null", "json", nil},
		{"typed kind number", "heater", "heater.powerLevel", "0.75", "float", 0.75},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := scriptHome(t)
			applyScript(t, h, parseScriptString(t, `<behavior>
				<create-device id="heater" type="Heater"/>
				<create-device id="switch" type="ToggleSwitch"/>
				<set-device-property deviceId="heater" property="old" value="1"/>
			</behavior>`))
			a := act(0, 1, "set-device-property", "deviceId", tt.device, "property", tt.property, "value", tt.value)
			if tt.typ != "" {
				a.Args["type"] = tt.typ
			}
			if err := a.Apply(h); err != nil {
				t.Fatalf("Apply = %v, want nil error", err)
			}
			d, err := h.Device(tt.device)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := d.Properties[tt.property]
			if tt.want == nil {
				if ok {
					t.Errorf("property %q = %#v, want it absent", tt.property, got)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("property %q (-want +got):\n%s", tt.property, diff)
			}
		})
	}
}

// sameHome reports, as test errors, how got's zones, devices and persons
// differ from want's.
func sameHome(t *testing.T, want, got *sim.Home) {
	t.Helper()
	if diff := cmp.Diff(want.Zones(), got.Zones()); diff != "" {
		t.Errorf("Zones() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Devices(), got.Devices()); diff != "" {
		t.Errorf("Devices() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Persons(), got.Persons()); diff != "" {
		t.Errorf("Persons() (-want +got):\n%s", diff)
	}
}

// variedHome builds a home with a bit of everything a script must restore,
// physics included: readings frozen by faults, Illuminance set by hand over
// what the lights give, Temperature added by thermometers.
func variedHome(tb testing.TB) *sim.Home {
	tb.Helper()
	h, err := sim.New(sim.Config{
		WallClock: clock.NewMock(),
		StartDate: time.Date(2024, 3, 10, 8, 15, 42, 500e6, time.UTC),
		Factor:    7,
		Location:  time.UTC,
	})
	if err != nil {
		tb.Fatal(err)
	}
	c := homeCalls{tb, h}
	ip := func(v int) *int { return &v }
	fp := func(v float64) *float64 { return &v }
	bp := func(v bool) *bool { return &v }
	sp := func(v string) *string { return &v }
	at := func(x, y int) sim.DeviceUpdate { return sim.DeviceUpdate{PositionX: &x, PositionY: &y} }
	yes, no := sim.DeviceUpdate{Fault: sp("yes")}, sim.DeviceUpdate{Fault: sp("no")}
	walk := func(id string, x, y int) {
		tb.Helper()
		c.check(h.UpdatePerson(id, sim.PersonUpdate{PositionX: &x, PositionY: &y}))
	}

	c.check(h.CreateZone(sim.ZoneSpec{ID: "kitchen", Name: "Kitchen", LeftX: 410, TopY: 370, RightX: 655, BottomY: 580,
		Variables: map[string]float64{"Temperature": 293.15, "Volume": 12, "tiny": 1e-7, "huge": -1e22}}))
	c.check(h.CreateZone(sim.ZoneSpec{ID: "pantry", LeftX: 600, TopY: 500, RightX: 650, BottomY: 570}))
	c.check(h.CreateZone(sim.ZoneSpec{ID: "garden", Name: "Bob's \"garden\" <1> & co\n\tline 2 ☃", IsRoom: bp(false),
		LeftX: 0, TopY: 600, RightX: 1000, BottomY: 900, Variables: map[string]float64{"CO2 (ppm) <&>": 415.5}}))
	c.check(h.CreateZone(sim.ZoneSpec{ID: "point", LeftX: 5, TopY: 5, RightX: 5, BottomY: 5}))
	c.check(h.CreateZone(sim.ZoneSpec{ID: "twin", LeftX: 0, TopY: 600, RightX: 1000, BottomY: 900})) // same area as garden: garden wins
	c.check(h.CreateZone(sim.ZoneSpec{ID: "cellar", LeftX: 2000, TopY: 0, RightX: 2100, BottomY: 100,
		Variables: map[string]float64{"CO2Concentration": 900}}))

	c.check(h.CreateDevice(sim.DeviceSpec{ID: "heater-1", Name: "Radiator", Type: "heater", PositionX: ip(420), PositionY: ip(380),
		Properties: map[string]any{"heater.powerLevel": 0.25, "heater.maxPowerLevel": 1500.0}}))
	c.updateDevice("heater-1", sim.DeviceUpdate{State: sp("deactivated")})
	c.check(h.CreateDevice(sim.DeviceSpec{ID: "cooler", Type: "Cooler", PositionX: ip(700), PositionY: ip(700)}))
	c.updateDevice("cooler", sim.DeviceUpdate{Fault: sp("yes"), State: sp("deactivated"), Height: ip(12)})
	c.check(h.CreateDevice(sim.DeviceSpec{ID: "dimmer", Type: "DimmerLight", PositionX: ip(500), PositionY: ip(400),
		Properties: map[string]any{"power_level": 0.6, "max_power": 60.0}}))
	c.check(h.CreateDevice(sim.DeviceSpec{ID: "dimmer-faulty", Type: "DimmerLight", PositionX: ip(620), PositionY: ip(520)}))
	c.updateDevice("dimmer-faulty", yes) // a faulty light still works: its max_illuminance follows its zone
	c.check(h.CreateDevice(sim.DeviceSpec{ID: "binary", Type: "BinaryLight", Properties: map[string]any{"power_status": true}}))
	c.check(h.CreateDevice(sim.DeviceSpec{ID: "motion", Name: "Hall motion", Type: "MotionSensor", PositionX: ip(5), PositionY: ip(5)}))
	c.updateDevice("motion", sim.DeviceUpdate{Width: ip(30), Height: ip(0)})

	// Thermometers: one frozen in the pantry at 291.4 while the pantry warms
	// up; one frozen in the kitchen, then moved out of every zone; one
	// frozen before it was placed; one faulty and repaired.
	c.check(h.CreateDevice(sim.DeviceSpec{ID: "thermo-pantry", Type: "Thermometer", PositionX: ip(610), PositionY: ip(510)}))
	c.check(h.UpdateZone("pantry", sim.ZoneUpdate{Variables: map[string]*float64{"Temperature": fp(291.4)}}))
	c.updateDevice("thermo-pantry", yes)
	c.check(h.UpdateZone("pantry", sim.ZoneUpdate{Variables: map[string]*float64{"Temperature": fp(295)}}))
	c.check(h.CreateDevice(sim.DeviceSpec{ID: "thermo-away", Type: "Thermometer", PositionX: ip(420), PositionY: ip(560)}))
	c.updateDevice("thermo-away", yes)
	c.updateDevice("thermo-away", at(3000, 3000))
	c.check(h.CreateDevice(sim.DeviceSpec{ID: "thermo-unplaced", Type: "Thermometer"}))
	c.updateDevice("thermo-unplaced", yes)
	c.updateDevice("thermo-unplaced", at(430, 560))
	c.check(h.CreateDevice(sim.DeviceSpec{ID: "thermo-repaired", Type: "Thermometer", PositionX: ip(440), PositionY: ip(560)}))
	c.updateDevice("thermo-repaired", yes)
	c.updateDevice("thermo-repaired", no)

	// A photometer frozen in the kitchen, lit by the dimmer, then unplaced;
	// a gas sensor frozen in the cellar, then moved to the garden.
	c.check(h.CreateDevice(sim.DeviceSpec{ID: "photo", Type: "Photometer", PositionX: ip(450), PositionY: ip(450)}))
	c.updateDevice("photo", yes)
	c.updateDevice("photo", at(-1, -1))
	c.check(h.CreateDevice(sim.DeviceSpec{ID: "co2", Type: "CO2GasSensor", PositionX: ip(2050), PositionY: ip(50)}))
	c.updateDevice("co2", yes)
	c.updateDevice("co2", at(500, 800))

	// Presence sensors: one that saw the cook before failing, one that
	// failed in an empty room the cook then entered, one with nobody, half
	// placed.
	c.check(h.CreatePerson(sim.PersonSpec{ID: "cook", Type: "Woman", PositionX: ip(420), PositionY: ip(420)}))
	c.check(h.CreateDevice(sim.DeviceSpec{ID: "presence-saw", Type: "PresenceSensor", PositionX: ip(415), PositionY: ip(375)}))
	c.updateDevice("presence-saw", yes)
	walk("cook", 640, 560) // into the pantry
	c.check(h.CreateDevice(sim.DeviceSpec{ID: "presence-blind", Type: "PresenceSensor", PositionX: ip(605), PositionY: ip(505)}))
	c.check(h.CreatePerson(sim.PersonSpec{ID: "fault-witness", Type: "Man", PositionX: ip(2000), PositionY: ip(2000)}))
	walk("cook", 420, 420)
	c.updateDevice("presence-blind", yes)
	walk("cook", 620, 520) // back into the pantry
	c.check(h.CreateDevice(sim.DeviceSpec{ID: "presence-half", Type: "PresenceSensor", PositionX: ip(-1), PositionY: ip(50)}))

	c.check(h.CreateDevice(sim.DeviceSpec{ID: "free", Type: "PushButton", Properties: map[string]any{
		"number":      3.5,
		"big":         1e300,
		"negative":    -0.001,
		"flag":        false,
		"text":        "say \"hi\" & <bye>\r\n\tend 'quoted' ☃ 😀",
		"digits":      "42",
		"truth":       "true",
		"empty":       "",
		"control":     "bell\x07 and \x00",
		"nonchar":     "x\uFFFEy",
		"list":        []any{1.0, "two", false, nil, []any{}, map[string]any{"k": "v\x01"}},
		"object":      map[string]any{"a": map[string]any{"b": []any{1.5e-9}}, "<&>": "\"", "": "empty key"},
		"empty list":  []any{},
		"empty obj":   map[string]any{},
		"weird <key>": "v",
	}}))

	c.check(h.CreatePerson(sim.PersonSpec{ID: "mother", Name: "Mum", Type: "mother", PositionX: ip(520), PositionY: ip(700)}))
	c.check(h.CreatePerson(sim.PersonSpec{ID: "boy", Type: "Boy", PositionX: ip(2000), PositionY: ip(2000)}))
	c.check(h.CreatePerson(sim.PersonSpec{ID: "ghost", Type: "Old man"}))

	// Illuminance set by hand over what the dimmer gives.
	c.check(h.UpdateZone("kitchen", sim.ZoneUpdate{Variables: map[string]*float64{"Illuminance": fp(0.1 + 0.2)}}))
	return h
}

func TestWriteScriptRoundTrip(t *testing.T) {
	orig := variedHome(t)
	var first bytes.Buffer
	if err := sim.WriteScript(&first, orig, time.UTC); err != nil {
		t.Fatalf("WriteScript = %v, want nil error", err)
	}
	s, err := sim.ParseScript(bytes.NewReader(first.Bytes()), time.UTC)
	if err != nil {
		t.Fatalf("ParseScript(written script) = %v, want nil error; script:\n%s", err, first.String())
	}
	// The home holds readings that differ from what the sensors would now
	// read, and hand-set variables: the script must reproduce them.
	for _, c := range []struct {
		device, property string
		want             any
	}{
		{"thermo-pantry", "current_temperature", 291.4}, // the pantry is at 295
		{"thermo-away", "current_temperature", 293.15},  // outside every zone
		{"thermo-unplaced", "current_temperature", -1.0},
		{"thermo-repaired", "current_temperature", 293.15},
		{"photo", "current_illuminance", 2427.559945260903}, // the dimmer's light; unplaced now
		{"co2", "current_concentration", 900.0},             // the cellar's; the garden has none
		{"presence-saw", "sensed_presence", true},           // nobody in the kitchen now
		{"presence-blind", "sensed_presence", false},        // the cook is in the pantry
	} {
		d, err := orig.Device(c.device)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Properties[c.property]; got != c.want {
			t.Errorf("original %s %s = %v, want %v", c.device, c.property, got, c.want)
		}
	}

	if want := time.Date(2024, 3, 10, 8, 15, 42, 0, time.UTC); !s.StartDate.Equal(want) || s.Factor != 7 {
		t.Errorf("script clock = %v factor %d, want %v factor 7", s.StartDate, s.Factor, want)
	}

	// Restore into a home that is not empty: reset-context clears it.
	restored := scriptHome(t)
	applyScript(t, restored, parseScriptFile(t, filepath.Join("testdata", "scripts", "setup_house.bhv")))
	applyScript(t, restored, s)
	ms, factor := s.StartDate.UnixMilli(), s.Factor
	if _, err := restored.UpdateClock(sim.ClockUpdate{StartDate: &ms, Factor: &factor}); err != nil {
		t.Fatal(err)
	}

	sameHome(t, orig, restored)

	var second bytes.Buffer
	if err := sim.WriteScript(&second, restored, time.UTC); err != nil {
		t.Fatalf("WriteScript(restored) = %v, want nil error", err)
	}
	if diff := cmp.Diff(first.String(), second.String()); diff != "" {
		t.Errorf("script of the restored home (-first +second):\n%s", diff)
	}
}

func TestWriteScriptFormat(t *testing.T) {
	h, err := sim.New(sim.Config{WallClock: clock.NewMock(), StartDate: time.Date(2024, 1, 15, 6, 30, 0, 0, time.UTC), Factor: 60})
	if err != nil {
		t.Fatal(err)
	}
	ip := func(v int) *int { return &v }
	if _, err := h.CreateZone(sim.ZoneSpec{ID: "kitchen", LeftX: 410, TopY: 370, RightX: 655, BottomY: 580,
		Variables: map[string]float64{"Temperature": 293.15}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CreateDevice(sim.DeviceSpec{ID: "heater-1", Type: "Heater", PositionX: ip(500), PositionY: ip(400),
		Properties: map[string]any{"heater.powerLevel": 0.5, "note": "north wall"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CreatePerson(sim.PersonSpec{ID: "Paul", Name: "Paul D.", Type: "Grandfather", PositionX: ip(450), PositionY: ip(400)}); err != nil {
		t.Fatal(err)
	}
	// A thermometer that failed at 290 K; the kitchen is at 293.15 K again.
	c := homeCalls{t, h}
	fp := func(v float64) *float64 { return &v }
	yes := "yes"
	c.check(h.CreateDevice(sim.DeviceSpec{ID: "thermo", Type: "Thermometer", PositionX: ip(600), PositionY: ip(380)}))
	c.check(h.UpdateZone("kitchen", sim.ZoneUpdate{Variables: map[string]*float64{"Temperature": fp(290)}}))
	c.updateDevice("thermo", sim.DeviceUpdate{Fault: &yes})
	c.check(h.UpdateZone("kitchen", sim.ZoneUpdate{Variables: map[string]*float64{"Temperature": fp(293.15)}}))
	var b strings.Builder
	// In CET, an hour ahead of the UTC start date.
	if err := sim.WriteScript(&b, h, time.FixedZone("CET", 3600)); err != nil {
		t.Fatal(err)
	}
	want := `<?xml version="1.0" encoding="UTF-8"?>
<behavior startdate="15/01/2024-07:30:00" factor="60">
	<reset-context/>

	<!-- Zones -->
	<create-zone id="kitchen" leftX="410" topY="370" X-Length="245" Y-Length="210"/>

	<!-- Devices -->
	<create-device id="heater-1" type="iCasa.Heater"/>
	<move-device deviceId="heater-1" leftX="500" topY="400"/>
	<set-device-property deviceId="heater-1" property="heater.powerLevel" value="0.5"/>
	<set-device-property deviceId="heater-1" property="note" value="north wall" type="string"/>
	<create-device id="thermo" type="iCasa.Thermometer"/>
	<move-device deviceId="thermo" leftX="600" topY="380"/>

	<!-- Persons -->
	<create-person id="Paul" type="Grandfather" name="Paul D."/>
	<move-person personId="Paul" newX="450" newY="400"/>

	<!-- Faulty sensors keep the reading they had when they failed: fail them where it comes back -->
	<modify-zone-variable zoneId="kitchen" variable="Temperature" value="290"/>
	<fault-device deviceId="thermo"/>

	<!-- Zone variables, last: placing lights, photometers and thermometers sets some -->
	<add-zone-variable zoneId="kitchen" variable="Temperature"/>
	<modify-zone-variable zoneId="kitchen" variable="Temperature" value="293.15"/>
</behavior>
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("WriteScript (-want +got):\n%s", diff)
	}
}

// TestNamesAScriptCanCarry: names and keys hold only what a script (XML)
// can carry, so that every home can be written as one; tabs and line ends
// are text like any other and come back from a script as they were, and so
// does a zone from one edge of the plan to the other.
func TestNamesAScriptCanCarry(t *testing.T) {
	refused := []struct {
		name  string
		build func(h *sim.Home) error
	}{
		{"zone name with a control character", func(h *sim.Home) error {
			_, err := h.CreateZone(sim.ZoneSpec{ID: "z", Name: "bell\x07"})
			return err
		}},
		{"zone renamed with a control character", func(h *sim.Home) error {
			if _, err := h.CreateZone(sim.ZoneSpec{ID: "z"}); err != nil {
				return err
			}
			_, err := h.UpdateZone("z", sim.ZoneUpdate{Name: ptr("a\x01b")})
			return err
		}},
		{"variable name with U+FFFF", func(h *sim.Home) error {
			_, err := h.CreateZone(sim.ZoneSpec{ID: "z", Variables: map[string]float64{"v\uFFFF": 1}})
			return err
		}},
		{"device name with NUL", func(h *sim.Home) error {
			_, err := h.CreateDevice(sim.DeviceSpec{ID: "d", Name: "a\x00b", Type: "Heater"})
			return err
		}},
		{"property name with a control character", func(h *sim.Home) error {
			_, err := h.CreateDevice(sim.DeviceSpec{ID: "d", Type: "Heater", Properties: map[string]any{"p\x1b": 1.0}})
			return err
		}},
		{"person name with a control character", func(h *sim.Home) error {
			_, err := h.CreatePerson(sim.PersonSpec{ID: "p", Name: "\x01", Type: "Boy"})
			return err
		}},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			h := scriptHome(t)
			if err := tt.build(h); !errors.Is(err, sim.ErrInvalid) {
				t.Fatalf("err = %v, want an error wrapping ErrInvalid", err)
			}
			var b bytes.Buffer
			if err := sim.WriteScript(&b, h, time.UTC); err != nil {
				t.Fatalf("WriteScript after the refusal = %v, want nil error", err)
			}
		})
	}

	// Tabs, line ends and other odd but legal text round-trip.
	h := scriptHome(t)
	odd := "tab\tline\nreturn\r end  \u00e9\U0001F600 <&\"'>"
	mustZone(t, h, sim.ZoneSpec{ID: "z", Name: odd, RightX: 10, BottomY: 10, Variables: map[string]float64{"v " + odd: 1}})
	mustDevice(t, h, sim.DeviceSpec{ID: "d", Name: odd, Type: "Heater", Properties: map[string]any{"k " + odd: odd}})
	mustPerson(t, h, sim.PersonSpec{ID: "p", Name: odd, Type: "Boy"})
	// So does a zone as wide as the plan.
	mustZone(t, h, rect("wide", -sim.MaxCoordinate, -sim.MaxCoordinate, sim.MaxCoordinate, sim.MaxCoordinate))
	sameHome(t, h, replayed(t, h))
}

// TestWriteScriptUnwritable: what a Go caller can give a home and a script
// cannot carry (invalid UTF-8 inside a property value) fails the writing,
// which writes nothing.
func TestWriteScriptUnwritable(t *testing.T) {
	h := scriptHome(t)
	if _, err := h.CreateDevice(sim.DeviceSpec{ID: "d", Type: "Heater", Properties: map[string]any{"p": map[string]any{"\xff": 1.0}}}); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	err := sim.WriteScript(&b, h, time.UTC)
	if !errors.Is(err, sim.ErrInvalid) {
		t.Fatalf("WriteScript = %v, want an error wrapping ErrInvalid", err)
	}
	if b.Len() != 0 {
		t.Errorf("WriteScript wrote %d bytes on error, want none", b.Len())
	}
}

func TestHouseExample(t *testing.T) {
	path := filepath.Join("..", "examples", "scripts", "house.bhv")
	s := parseScriptFile(t, path)
	if want := time.Date(2024, 1, 15, 6, 30, 0, 0, time.UTC); !s.StartDate.Equal(want) {
		t.Errorf("StartDate = %v, want %v", s.StartDate, want)
	}
	if got, want := s.Duration(), 5*time.Hour; got != want {
		t.Errorf("Duration() = %v, want %v", got, want)
	}
	h := scriptHome(t)
	applyScript(t, h, s)

	var rooms []string
	for _, z := range h.Zones() {
		rooms = append(rooms, z.ID)
	}
	if diff := cmp.Diff([]string{"kitchen", "livingroom", "bedroom", "bathroom"}, rooms); diff != "" {
		t.Errorf("zones (-want +got):\n%s", diff)
	}
	// Every device lies in the room its id names.
	for _, d := range h.Devices() {
		if room, _, _ := strings.Cut(d.ID, "-"); d.Location != room {
			t.Errorf("device %s is in %q, want %q", d.ID, d.Location, room)
		}
	}
	want := []sim.Person{{ID: "mother", Name: "Mother", Type: "Mother", Location: "unknown", PositionX: 720, PositionY: 100}}
	if diff := cmp.Diff(want, h.Persons()); diff != "" {
		t.Errorf("Persons() at the end (-want +got):\n%s", diff)
	}
}

// knownCommands are the commands a parsed script may hold.
var knownCommands = []string{
	"create-zone", "move-zone", "resize-zone", "add-zone-variable", "modify-zone-variable",
	"create-device", "remove-device", "move-device", "move-device-zone", "set-device-property",
	"activate-device", "deactivate-device", "fault-device", "repair-device",
	"create-person", "move-person", "move-person-zone", "remove-person", "reset-context",
	"show-zones", "show-zone", "show-devices", "show-device", "show-persons", "show-person-zones",
	"show-scripts", "set-global-property", "get-global-property", "set-user-property",
	"get-user-property", "set-app-property", "get-app-property", "set-access-right",
	"show-access-right", "show-applications",
}

func FuzzParseScript(f *testing.F) {
	for _, tt := range scriptErrorTests {
		f.Add([]byte(tt.input))
	}
	for _, s := range []string{
		`<behavior/>`,
		`<behavior><delay value="1.5" unit="h"/><reset-context/></behavior>`,
		`<behavior><create-zone id="z" leftX="0" topY="0" X-Length="9" Y-Length="9" name="n" isRoom="0"/><create-device id="d" type="heater" positionX="1" positionY="2" width="3"/><set-device-property deviceId="d" property="p" value='{"a":[1]}' type="json"/><move-device-zone deviceId="d" zoneId="z"/></behavior>`,
	} {
		f.Add([]byte(s))
	}
	for _, path := range []string{
		filepath.Join("testdata", "scripts", "setup_house.bhv"),
		filepath.Join("testdata", "scripts", "scenario.bhv"),
		filepath.Join("..", "examples", "scripts", "house.bhv"),
	} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := sim.ParseScript(bytes.NewReader(data), time.UTC)
		if err != nil {
			if !errors.Is(err, sim.ErrInvalid) || !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("ParseScript error %q: want ErrInvalid with a line", err)
			}
			return
		}
		for i, p := range s.Problems {
			if !strings.HasPrefix(p, "line ") && !(i == sim.MaxScriptProblems && strings.HasPrefix(p, "and ")) {
				t.Fatalf("problem %q: want a line", p)
			}
		}
		capped := len(s.Problems) > sim.MaxScriptProblems // the rest are only counted
		var last time.Duration
		for _, a := range s.Actions {
			if !slices.Contains(knownCommands, a.Command) && !capped && !slices.ContainsFunc(s.Problems, func(p string) bool { return strings.HasPrefix(p, fmt.Sprintf("line %d: ", a.Line)) }) {
				t.Fatalf("action %q at line %d is not a known command, nor listed as a problem", a.Command, a.Line)
			}
			if a.Offset < last || a.Line < 1 || a.Args == nil {
				t.Fatalf("action %+v: offset below %v, no line or nil args", a, last)
			}
			last = a.Offset
		}
		// Applying never panics and keeps the error kinds; whatever home
		// results, its script restores it.
		h := scriptHome(t)
		for _, a := range s.Actions {
			if err := a.Apply(h); err != nil && !errors.Is(err, sim.ErrInvalid) && !errors.Is(err, sim.ErrNotFound) && !errors.Is(err, sim.ErrConflict) {
				t.Fatalf("Apply(%+v) = %v: no error kind", a, err)
			}
		}
		var b bytes.Buffer
		if err := sim.WriteScript(&b, h, time.UTC); err != nil {
			t.Fatalf("WriteScript = %v", err)
		}
		restored := scriptHome(t)
		applyScript(t, restored, parseScriptString(t, b.String()))
		if diff := cmp.Diff([3]any{h.Zones(), h.Devices(), h.Persons()}, [3]any{restored.Zones(), restored.Devices(), restored.Persons()}); diff != "" {
			t.Fatalf("restored home (-original +restored):\n%s\nscript:\n%s", diff, b.String())
		}
	})
}

// TestScriptProblemsBounded: a script of many bad actions is read, and
// lists the first MaxScriptProblems of them, then how many more.
func TestScriptProblemsBounded(t *testing.T) {
	src := "<behavior>\n" + strings.Repeat("<fly/>\n", sim.MaxScriptProblems+5) + "</behavior>"
	s, err := sim.ParseScript(strings.NewReader(src), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.Problems); n != sim.MaxScriptProblems+1 || s.Problems[0] != "line 2: unknown command fly" || s.Problems[n-1] != "and 5 more" {
		t.Errorf("Problems = %q, want %d, then \"and 5 more\"", s.Problems, sim.MaxScriptProblems)
	}
	if len(s.Actions) != sim.MaxScriptProblems+5 {
		t.Errorf("%d actions, want all %d", len(s.Actions), sim.MaxScriptProblems+5)
	}
}

// TestParseScriptEncodings: scripts declaring ISO-8859-1 or Windows-1252,
// as Java tools wrote them, read as their text; another encoding is an
// error naming it.
func TestParseScriptEncodings(t *testing.T) {
	for _, enc := range []string{"ISO-8859-1", "windows-1252"} {
		src := "<?xml version=\"1.0\" encoding=\"" + enc + "\"?>\n<behavior>\n" +
			"<create-zone id=\"salon\" name=\"S\xe9jour\" leftX=\"0\" topY=\"0\" X-Length=\"10\" Y-Length=\"10\"/>\n</behavior>\n"
		s, err := sim.ParseScript(strings.NewReader(src), time.UTC)
		if err != nil {
			t.Fatalf("%s: %v", enc, err)
		}
		h := scriptHome(t)
		applyScript(t, h, s)
		if z, err := h.Zone("salon"); err != nil || z.Name != "Séjour" {
			t.Errorf("%s: zone %+v, %v; want the name Séjour", enc, z, err)
		}
	}
	_, err := sim.ParseScript(strings.NewReader(`<?xml version="1.0" encoding="EBCDIC-US"?><behavior/>`), time.UTC)
	if !errors.Is(err, sim.ErrInvalid) || !strings.Contains(err.Error(), "line 1: ") || !strings.Contains(err.Error(), "EBCDIC-US") {
		t.Errorf("an unknown encoding: %v, want ErrInvalid on line 1 naming it", err)
	}
}

// TestParseScriptNilReader: a nil reader is a programming error, and the
// panic says so.
func TestParseScriptNilReader(t *testing.T) {
	defer func() {
		if got, want := recover(), "sim: ParseScript with a nil reader"; got != want {
			t.Errorf("panic %v, want %q", got, want)
		}
	}()
	sim.ParseScript(nil, time.UTC)
}
