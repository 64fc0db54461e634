package sim

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/pervasim/pervasim/internal/xmlcharset"
)

// WriteScript writes the current state of h as a script (see [Script]) that,
// applied to any home, restores h's zones, devices and persons: it starts
// with reset-context, then creates the zones (ids, names, isRoom,
// coordinates), the devices (ids, names, types, positions, width and height,
// state, fault and every property that is neither derived nor Location nor a
// kind property at its default) and the persons (ids, names, types,
// positions), each in creation order, and sets every zone variable last,
// since placing lights, photometers and thermometers sets some of them. Its
// root holds h's clock: startdate is the current simulated time, formatted
// in loc (nil means time.Local) to the second, and factor the clock's
// factor; the pause state is not written.
//
// A faulty sensor keeps the reading it had when it failed, so the script
// fails it where that reading comes back: a sensor reading -1 (or a presence
// sensor sensing nobody) before it is placed; a thermometer, photometer or
// gas sensor in a zone whose variable is set to the reading for the moment
// (its own zone if that has the variable, else the first zone that has it,
// the sensor moving there and back); a presence sensor sensing someone with
// a witness person (id "fault-witness", or the first free "fault-witness-N")
// standing beside it for the moment; a camera counting more persons than
// its zone holds with as many witnesses as it lacks, recording for the
// moment. A medical device (BathroomScale, Sphygmometer,
// MedicalThermometer) that keeps a measurement while faulty or deactivated
// is failed or deactivated beside a witness, and every medical device that
// may measure as the script places persons and witnesses gets its readings
// back last. A camera fails in its own zone, or in the first that holds no
// more persons than it counted, the camera moving there and back; when
// every zone holds more, those it did not count step out of every zone for
// the moment (to a corner of the plan).
//
// A zone that lacks a variable it may gain as the script restores the home
// (every zone's Temperature and Illuminance in the realistic model, the
// variable a thermometer, light, photometer, siren or speaker in it
// maintains, the one a faulty sensor fails in, which removing zone variables
// through the API leads to) loses it again last, with the extension command
// remove-zone-variable. Restoration is exact except where h holds what no
// script can build, which only removing zones through the API leads to.
// State that Zones, Devices and Persons do not show is not written either:
// the schedule of heater and cooler updates, and which zones lights have lit
// before.
//
// The script uses the original iCasa commands wherever they suffice (a device
// is placed with move-device, a person with move-person) and the extension
// attributes only for what they cannot say: a name other than the id, isRoom
// false, a width or height, the type attribute of free properties, which are
// always written with their type (json for arrays and objects, and for
// strings holding characters that XML cannot carry) so that they read back
// exactly, and the witness's position. A name, variable or property name
// that XML cannot carry (a control character, U+FFFE, U+FFFF) or a property
// value with invalid UTF-8 is an error of kind [ErrInvalid], and nothing is
// written.
//
// The zones, devices and persons are read one list at a time: the script is
// a consistent snapshot when nothing else changes h meanwhile.
func WriteScript(w io.Writer, h *Home, loc *time.Location) error {
	if loc == nil {
		loc = time.Local
	}
	c := h.Clock()
	now := time.UnixMilli(c.CurrentTime).In(loc)
	if now.Year() < 1 || now.Year() > 9999 {
		return invalidf("simulated time %v is outside the years 1 to 9999", now)
	}
	zones, devices, persons := h.Zones(), h.Devices(), h.Persons()

	sw := &scriptWriter{zones: zones, persons: persons, kinds: h.kinds, physics: h.physics, unplaced: h.unplacedDevices()}
	sw.buf.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	fmt.Fprintf(&sw.buf, "<behavior startdate=\"%s\" factor=\"%d\">\n", now.Format(DateLayout), c.Factor)
	sw.elem("reset-context")
	if attrs := environmentAttrs(h.Environment()); len(attrs) > 0 {
		sw.elem("set-environment", attrs...)
	}
	if len(zones) > 0 {
		sw.section("Zones")
		for _, z := range zones {
			sw.zone(z)
		}
	}
	var late []lateFault
	var measured []Device // medical devices that may measure anew as persons come
	if len(devices) > 0 {
		sw.section("Devices")
		for _, d := range devices {
			f, remeasured := sw.device(d)
			if f != nil {
				late = append(late, *f)
			}
			if remeasured {
				measured = append(measured, d)
			}
		}
	}
	if len(persons) > 0 {
		sw.section("Persons")
		for _, p := range persons {
			sw.person(p)
		}
	}
	if len(late) > 0 {
		sw.section("Faulty sensors keep the reading they had when they failed: fail them where it comes back")
		for _, f := range late {
			sw.fault(f)
		}
	}
	if len(measured) > 0 {
		sw.section("Medical readings, last: a person coming near measures anew")
		for _, d := range measured {
			sw.readings(d)
		}
	}
	gains := sw.gainedVariables(devices)
	if slices.ContainsFunc(zones, func(z Zone) bool { return len(z.Variables) > 0 || len(gains(z)) > 0 }) {
		sw.section("Zone variables, last: placing lights, photometers and thermometers sets some")
		for _, z := range zones {
			for _, k := range slices.Sorted(maps.Keys(z.Variables)) {
				sw.elem("add-zone-variable", "zoneId", z.ID, "variable", k)
				sw.elem("modify-zone-variable", "zoneId", z.ID, "variable", k, "value", formatNumber(z.Variables[k]))
			}
			for _, k := range gains(z) {
				sw.elem("remove-zone-variable", "zoneId", z.ID, "variable", k)
			}
		}
	}
	sw.buf.WriteString("</behavior>\n")
	if sw.err != nil {
		return sw.err
	}
	_, err := w.Write(sw.buf.Bytes())
	return err
}

// scriptWriter accumulates a script, keeping the first error.
type scriptWriter struct {
	buf      bytes.Buffer
	err      error
	zones    []Zone // the home's zones, in creation order
	persons  []Person
	kinds    *KindRegistry
	physics  Physics
	unplaced map[string]bool // the devices never placed (see DeviceSpec): written without a move
}

// unplacedDevices returns the ids of the devices made without a position
// and not moved since.
func (h *Home) unplacedDevices() map[string]bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := map[string]bool{}
	for _, d := range h.devices.all() {
		if d.unplaced {
			out[d.ID] = true
		}
	}
	return out
}

// environmentAttrs returns the attributes of a set-environment command that
// sets e's settings where they differ from the defaults; none when none do.
func environmentAttrs(e Environment) []string {
	var attrs []string
	num := func(name string, v, def float64) {
		if v != def {
			attrs = append(attrs, name, formatNumber(v))
		}
	}
	if e.OutdoorMin != nil {
		attrs = append(attrs, "outdoorMin", formatNumber(*e.OutdoorMin), "outdoorMax", formatNumber(*e.OutdoorMax))
	} else {
		num("outdoorTemperature", e.OutdoorTemperature, DefaultOutdoorTemperature)
	}
	num("latitude", e.Latitude, DefaultLatitude)
	num("longitude", e.Longitude, DefaultLongitude)
	if e.Sky != DefaultSky {
		attrs = append(attrs, "sky", e.Sky)
	}
	num("windowShare", e.WindowShare, DefaultWindowShare)
	return attrs
}

func (sw *scriptWriter) fail(err error) {
	if sw.err == nil {
		sw.err = err
	}
}

// section starts a commented group of elements.
func (sw *scriptWriter) section(title string) {
	fmt.Fprintf(&sw.buf, "\n\t<!-- %s -->\n", title)
}

// elem writes one element; attrs alternate names and values.
func (sw *scriptWriter) elem(cmd string, attrs ...string) {
	sw.buf.WriteString("\t<")
	sw.buf.WriteString(cmd)
	for i := 0; i+1 < len(attrs); i += 2 {
		if !xmlcharset.Text(attrs[i+1]) {
			sw.fail(invalidf("%s: attribute %s: %q holds a character that XML cannot carry", cmd, attrs[i], truncate(attrs[i+1])))
		}
		sw.buf.WriteString(" ")
		sw.buf.WriteString(attrs[i])
		sw.buf.WriteString("=\"")
		xml.EscapeText(&sw.buf, []byte(attrs[i+1])) // escapes quotes, tabs and line ends too
		sw.buf.WriteString("\"")
	}
	sw.buf.WriteString("/>\n")
}

func (sw *scriptWriter) zone(z Zone) {
	attrs := []string{"id", z.ID, "leftX", itoa(z.LeftX), "topY", itoa(z.TopY),
		"X-Length", itoa(z.RightX - z.LeftX), "Y-Length", itoa(z.BottomY - z.TopY)}
	if z.Name != z.ID {
		attrs = append(attrs, "name", z.Name)
	}
	if !z.IsRoom {
		attrs = append(attrs, "isRoom", "false")
	}
	sw.elem("create-zone", attrs...)
}

// device writes the creation of d and returns its fault (or deactivation)
// when that must wait for the zones' variables or the persons, and whether
// it is a medical device whose readings must be written again once the
// persons are placed.
func (sw *scriptWriter) device(d Device) (late *lateFault, remeasured bool) {
	kind, err := sw.kinds.Lookup(d.Type)
	if err != nil {
		sw.fail(fmt.Errorf("device %q: %w", d.ID, err))
		return nil, false
	}
	kind = kind.forPhysics(sw.physics)
	attrs := []string{"id", d.ID, "type", d.Type}
	if d.Name != d.ID {
		attrs = append(attrs, "name", d.Name)
	}
	if d.Width != 0 {
		attrs = append(attrs, "width", itoa(d.Width))
	}
	if d.Height != 0 {
		attrs = append(attrs, "height", itoa(d.Height))
	}
	sw.elem("create-device", attrs...)
	late, now := sw.planFault(d, kind)
	medical := isMedical(kind)
	held := medical && d.Properties[PropPresenceDetected] == true && (d.Fault == FaultYes || d.State == StateDeactivated)
	if held {
		// It keeps a measurement nobody stands at: fail or deactivate it
		// beside a witness, once placed (in a zone, for a witness to be
		// in its zone: the first one if it now stands outside every zone).
		if _, at, ok := sw.faultZone(d, func(Zone) bool { return true }); ok {
			late, now = &lateFault{id: d.ID, home: point{d.PositionX, d.PositionY}, at: at, witnesses: 1,
				fault: d.Fault == FaultYes, deactivate: d.State == StateDeactivated}, false
		} else {
			held = false
		}
	}
	if now {
		sw.elem("fault-device", "deviceId", d.ID)
	}
	if !sw.unplaced[d.ID] { // placed, at -1,-1 too
		sw.elem("move-device", "deviceId", d.ID, "leftX", itoa(d.PositionX), "topY", itoa(d.PositionY))
	}
	for _, k := range slices.Sorted(maps.Keys(d.Properties)) {
		if k == PropState || k == PropFault || k == PropLocation {
			continue
		}
		v := d.Properties[k]
		spec, defined := kind.Property(k)
		switch {
		case defined && (spec.Derived || v == spec.Default):
			continue
		case defined:
			text, typ, err := kindValueText(spec, v)
			if err != nil {
				sw.fail(fmt.Errorf("device %q: %w", d.ID, err))
				return nil, false
			}
			sw.setProperty(d.ID, k, text, typ)
		default:
			text, typ, err := freeValueText(v)
			if err != nil {
				sw.fail(fmt.Errorf("device %q: property %q: %w", d.ID, k, err))
				return nil, false
			}
			sw.setProperty(d.ID, k, text, typ)
		}
	}
	if d.State == StateDeactivated && !held {
		sw.elem("deactivate-device", "deviceId", d.ID)
	}
	// A medical device that can measure as the persons (or witnesses) come
	// gets its readings back last; one failed or deactivated before they
	// come cannot.
	remeasured = medical && (held || d.Fault != FaultYes && d.State != StateDeactivated)
	return late, remeasured
}

// isMedical reports whether kind measures the persons who come near it, as
// iCasa's medical devices do (see medical).
func isMedical(kind Kind) bool {
	_, detects := kind.Property(PropPresenceDetected)
	_, scoped := kind.Property(PropDetectionScope)
	return detects && scoped
}

// readings writes the readings of medical device d: every property of its
// kind that is neither derived nor its detection_scope, defaults included.
func (sw *scriptWriter) readings(d Device) {
	kind, err := sw.kinds.Lookup(d.Type)
	if err != nil {
		sw.fail(fmt.Errorf("device %q: %w", d.ID, err))
		return
	}
	for _, spec := range kind.forPhysics(sw.physics).Properties {
		if spec.Derived || spec.Name == PropDetectionScope {
			continue
		}
		v, ok := d.Properties[spec.Name]
		if !ok {
			continue
		}
		text, typ, err := kindValueText(spec, v)
		if err != nil {
			sw.fail(fmt.Errorf("device %q: %w", d.ID, err))
			return
		}
		sw.setProperty(d.ID, spec.Name, text, typ)
	}
}

// setProperty writes the setting of device id's property name to the
// value text, of type typ ("": the kind's typing reads it back).
func (sw *scriptWriter) setProperty(id, name, text, typ string) {
	if typ == "" {
		sw.elem("set-device-property", "deviceId", id, "property", name, "value", text)
		return
	}
	sw.elem("set-device-property", "deviceId", id, "property", name, "value", text, "type", typ)
}

func (sw *scriptWriter) person(p Person) {
	attrs := []string{"id", p.ID, "type", p.Type}
	if p.Name != p.ID {
		attrs = append(attrs, "name", p.Name)
	}
	sw.elem("create-person", attrs...)
	if p.PositionX != -1 || p.PositionY != -1 {
		sw.elem("move-person", "personId", p.ID, "newX", itoa(p.PositionX), "newY", itoa(p.PositionY))
	}
}

// point is a position on the plan.
type point struct{ x, y int }

// lateFault is the fault of a sensor that must fail in a zone: at point at,
// once the zone's variables hold its readings, or beside witness persons
// (and, for a medical device, its deactivation).
type lateFault struct {
	id        string
	home, at  point
	zoneID    string
	vars      map[string]float64
	witnesses int
	// fault and deactivate say what happens to the device; recording,
	// that a camera not recording now records while it fails.
	fault, deactivate, recording bool
	// away are the persons that step out to out (a point outside every
	// zone) for the moment, so that a camera counts fewer.
	away []Person
	out  point
}

// planFault decides when d fails: now (before it is placed) or late, as the
// returned fault says.
func (sw *scriptWriter) planFault(d Device, kind Kind) (late *lateFault, now bool) {
	if d.Fault != FaultYes {
		return nil, false
	}
	home := point{d.PositionX, d.PositionY}
	vars := map[string]float64{}
	unplaced := true // every reading is the one of a sensor outside every zone
	for _, spec := range kind.Properties {
		if spec.Follows != "" {
			v, _ := d.Properties[spec.Name].(float64)
			vars[spec.Follows] = v
			unplaced = unplaced && v == spec.outside()
		}
	}
	switch {
	case len(vars) > 0 && !unplaced:
		hasAll := func(z Zone) bool {
			for k := range vars {
				if _, ok := z.Variables[k]; !ok {
					return false
				}
			}
			return true
		}
		if z, at, ok := sw.faultZone(d, hasAll); ok {
			return &lateFault{id: d.ID, home: home, at: at, zoneID: z.ID, vars: vars, fault: true}, false
		}
	case len(vars) == 0 && d.Properties[PropSensedPresence] == true:
		if _, at, ok := sw.faultZone(d, func(Zone) bool { return true }); ok {
			return &lateFault{id: d.ID, home: home, at: at, witnesses: 1, fault: true}, false
		}
	case len(vars) == 0 && kind.Name == "Camera":
		// It counts n persons: as many as the zone it fails in (its own,
		// else the first that will hold no more than n persons once they
		// are placed) holds then, plus witnesses beside it.
		n, _ := d.Properties[PropCameraPersonCount].(float64)
		holds := func(z Zone) (here int) {
			for _, p := range sw.persons {
				if p.Location == z.ID {
					here++
				}
			}
			return here
		}
		// (In the realistic model a camera gives the zone it enters an
		// Electricity variable: see gainedVariables.)
		good := func(z Zone) bool { return float64(holds(z)) <= n }
		if n <= 0 || float64(int(n)) != n {
			break
		}
		recording := d.Properties[PropCameraStatus] != true
		if z, at, ok := sw.faultZone(d, good); ok && good(z) {
			return &lateFault{id: d.ID, home: home, at: at, witnesses: int(n) - holds(z), fault: true,
				recording: recording}, false
		}
		// Every zone it may fail in holds more: the persons it did not
		// count step out of every zone for the moment.
		z, at, ok := sw.faultZone(d, func(Zone) bool { return true })
		out, free := sw.outside()
		if !ok || !free {
			break
		}
		var away []Person
		for _, p := range sw.persons {
			if p.Location == z.ID && len(away) < holds(z)-int(n) {
				away = append(away, p)
			}
		}
		return &lateFault{id: d.ID, home: home, at: at, away: away, out: out, fault: true, recording: recording}, false
	}
	return nil, true
}

// faultZone picks the zone where d fails, and the point there: d's own zone
// if good, else the first good zone, else d's own zone or the first zone.
func (sw *scriptWriter) faultZone(d Device, good func(Zone) bool) (Zone, point, bool) {
	own := slices.IndexFunc(sw.zones, func(z Zone) bool { return z.ID == d.Location })
	home := point{d.PositionX, d.PositionY}
	if own >= 0 && good(sw.zones[own]) {
		return sw.zones[own], home, true
	}
	for _, z := range sw.zones {
		if p, ok := sw.pointIn(z); ok && good(z) {
			return z, p, true
		}
	}
	if own >= 0 {
		return sw.zones[own], home, true
	}
	for _, z := range sw.zones {
		if p, ok := sw.pointIn(z); ok {
			return z, p, true
		}
	}
	return Zone{}, point{}, false
}

// pointIn returns a point that z holds: its centre, a corner or the middle
// of an edge, where no smaller zone (or earlier one of the same area) holds
// it instead. See the Geometry section of the package documentation.
func (sw *scriptWriter) pointIn(z Zone) (point, bool) {
	cx, cy := z.Centre()
	for _, p := range []point{{cx, cy}, {z.LeftX, z.TopY}, {z.RightX, z.TopY}, {z.LeftX, z.BottomY}, {z.RightX, z.BottomY},
		{cx, z.TopY}, {cx, z.BottomY}, {z.LeftX, cy}, {z.RightX, cy}} {
		if sw.locate(p) == z.ID {
			return p, true
		}
	}
	return point{}, false
}

// outside returns a point of the plan that no zone holds, and false when
// the zones cover the plan's corners.
func (sw *scriptWriter) outside() (point, bool) {
	for _, p := range []point{{-MaxCoordinate, -MaxCoordinate}, {MaxCoordinate, MaxCoordinate},
		{-MaxCoordinate, MaxCoordinate}, {MaxCoordinate, -MaxCoordinate}} {
		if sw.locate(p) == "" {
			return p, true
		}
	}
	return point{}, false
}

// locate returns the id of the zone that holds p, as the home does.
func (sw *scriptWriter) locate(p point) string {
	best, bestArea := "", int64(-1)
	for _, z := range sw.zones {
		if !z.Contains(p.x, p.y) {
			continue
		}
		if a := int64(z.RightX-z.LeftX) * int64(z.BottomY-z.TopY); bestArea < 0 || a < bestArea {
			best, bestArea = z.ID, a
		}
	}
	return best
}

// fault writes a late fault.
func (sw *scriptWriter) fault(f lateFault) {
	moved := f.at != f.home
	if moved {
		sw.elem("move-device", "deviceId", f.id, "leftX", itoa(f.at.x), "topY", itoa(f.at.y))
	}
	for _, k := range slices.Sorted(maps.Keys(f.vars)) {
		sw.elem("modify-zone-variable", "zoneId", f.zoneID, "variable", k, "value", formatNumber(f.vars[k]))
	}
	for _, p := range f.away {
		sw.elem("move-person", "personId", p.ID, "newX", itoa(f.out.x), "newY", itoa(f.out.y))
	}
	witnesses := freePersonIDs(sw.persons, "fault-witness", f.witnesses)
	for _, w := range witnesses {
		sw.elem("create-person", "id", w, "type", "Man", "positionX", itoa(f.at.x), "positionY", itoa(f.at.y))
	}
	if f.recording {
		sw.elem("set-device-property", "deviceId", f.id, "property", PropCameraStatus, "value", "true")
	}
	if f.fault {
		sw.elem("fault-device", "deviceId", f.id)
	}
	if f.deactivate {
		sw.elem("deactivate-device", "deviceId", f.id)
	}
	if f.recording {
		sw.elem("set-device-property", "deviceId", f.id, "property", PropCameraStatus, "value", "false")
	}
	for _, w := range witnesses {
		sw.elem("remove-person", "personId", w)
	}
	for _, p := range f.away {
		sw.elem("move-person", "personId", p.ID, "newX", itoa(p.PositionX), "newY", itoa(p.PositionY))
	}
	if moved {
		sw.elem("move-device", "deviceId", f.id, "leftX", itoa(f.home.x), "topY", itoa(f.home.y))
	}
}

// freePersonIDs returns the first n of base, base-2, base-3, … that no
// person of persons uses.
func freePersonIDs(persons []Person, base string, n int) []string {
	var ids []string
	for i := 1; len(ids) < n; i++ {
		id := base
		if i > 1 {
			id = base + "-" + strconv.Itoa(i)
		}
		if !slices.ContainsFunc(persons, func(p Person) bool { return p.ID == id }) {
			ids = append(ids, id)
		}
	}
	return ids
}

// kindValueText returns the text of a kind property's value, and a type
// attribute when the kind's typing of the text would not read it back.
func kindValueText(spec PropertySpec, v any) (text, typ string, err error) {
	switch x := v.(type) {
	case float64:
		return formatNumber(x), "", nil
	case bool:
		return strconv.FormatBool(x), "", nil
	case string:
		if xmlcharset.Text(x) {
			return x, "", nil
		}
		text, err := jsonText(x)
		return text, "json", err
	}
	return "", "", invalidf("property %q holds %s", spec.Name, describe(v))
}

// freeValueText returns the text and type attribute of a free property.
func freeValueText(v any) (text, typ string, err error) {
	switch x := v.(type) {
	case float64:
		return formatNumber(x), "number", nil
	case bool:
		return strconv.FormatBool(x), "boolean", nil
	case string:
		if xmlcharset.Text(x) {
			return x, "string", nil
		}
		text, err := jsonText(x)
		return text, "json", err
	case []any, map[string]any:
		text, err := jsonText(x)
		return text, "json", err
	}
	return "", "", invalidf("value is %s, not a JSON value", describe(v))
}

// jsonText encodes v as JSON that XML can carry (xmlcharset.JSON), refusing
// invalid UTF-8, which could not be read back exactly.
func jsonText(v any) (string, error) {
	if !validUTF8Value(v) {
		return "", invalidf("value holds invalid UTF-8, which cannot be written exactly")
	}
	out, err := xmlcharset.JSON(v)
	if err != nil {
		return "", invalidf("value cannot be written as JSON: %v", err)
	}
	return out, nil
}

// validUTF8Value reports whether every string and key in v is valid UTF-8.
func validUTF8Value(v any) bool {
	switch x := v.(type) {
	case string:
		return utf8.ValidString(x)
	case []any:
		for _, e := range x {
			if !validUTF8Value(e) {
				return false
			}
		}
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) || !validUTF8Value(e) {
				return false
			}
		}
	}
	return true
}

// formatNumber writes f so that strconv.ParseFloat reads it back exactly:
// in decimal notation, or in exponent notation for very large or small
// magnitudes, as JSON does.
func formatNumber(f float64) string {
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func itoa(n int) string { return strconv.Itoa(n) }

// gainedVariables returns a function that lists the variables a zone lacks
// but may gain as the script restores the home, which the script then
// removes, last: those that lights, photometers, thermometers, heaters,
// coolers, sirens and speakers in it maintain, every zone's Temperature and
// Illuminance in the realistic model and, there, the Electricity of a zone
// that holds a device, and the variable a faulty sensor follows (or, in the
// realistic model, the Electricity a faulty device that draws power gives),
// in any zone (it may fail there).
func (sw *scriptWriter) gainedVariables(devices []Device) func(Zone) []string {
	realistic := sw.physics == PhysicsRealistic
	byZone := map[string]map[string]bool{}
	anywhere := map[string]bool{}
	add := func(m map[string]bool, v string) {
		if v != "" {
			m[v] = true
		}
	}
	for _, d := range devices {
		kind, err := sw.kinds.Lookup(d.Type)
		if err != nil {
			continue // WriteScript has failed already
		}
		kind = kind.forPhysics(sw.physics)
		m := byZone[d.Location]
		if m == nil {
			m = map[string]bool{}
			byZone[d.Location] = m
		}
		for _, spec := range kind.Properties {
			add(m, spec.Follows)
			if d.Fault == FaultYes {
				add(anywhere, spec.Follows)
			}
		}
		if realistic && d.Fault == FaultYes && kind.Behavior.Consumption != nil {
			add(anywhere, VarElectricity) // it may fail in another zone, which it gives one
		}
		b := kind.Behavior
		if b.Light != nil {
			add(m, VarIlluminance)
		}
		if b.Heat != nil {
			add(m, VarTemperature)
		}
		if b.Noise != nil {
			add(m, VarNoise)
		}
		if realistic {
			add(m, VarElectricity)
		}
	}
	return func(z Zone) []string {
		var out []string
		cand := map[string]bool{}
		maps.Copy(cand, anywhere)
		maps.Copy(cand, byZone[z.ID])
		if realistic {
			cand[VarTemperature], cand[VarIlluminance] = true, true
		}
		for _, k := range slices.Sorted(maps.Keys(cand)) {
			if _, ok := z.Variables[k]; !ok {
				out = append(out, k)
			}
		}
		return out
	}
}
