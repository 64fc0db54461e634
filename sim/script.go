package sim

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pervasim/pervasim/internal/xmlcharset"
)

// MaxScriptSize is the largest script, in bytes, that [ParseScript] reads:
// 1 MiB.
const MaxScriptSize = 1 << 20

// MaxScriptDuration bounds the sum of a script's delays.
const MaxScriptDuration = 100 * 366 * 24 * time.Hour

// Script is a parsed iCasa scenario script (a .bhv file): a root element
//
//	<behavior startdate="dd/MM/yyyy-HH:mm:ss" factor="N"> … </behavior>
//
// (startdate may also read yyyy.MM.dd.HH.mm.ss or yyyy/MM/dd-HH:mm:ss, as some
// of iCasa's own scripts do)
// holding one element per command, in document order. Element names are
// commands and attributes their arguments. <delay value="V" unit="h|m|s"/>
// (unit defaults to minutes; V may have a fraction but must not be negative)
// adds to a running offset; every other element is an [Action] at the offset
// reached so far. Comments, processing instructions and whitespace are
// ignored; text, nested elements and any element after </behavior> are
// errors. A leading UTF-8 byte order mark is skipped; namespaces are not used.
//
// The commands and their attributes ([x] optional; attributes in braces go
// together: all or none):
//
//	create-zone          id leftX topY X-Length Y-Length [{bottomZ Z-Length}] [name] [isRoom]
//	move-zone            zoneId leftX topY [bottomZ]
//	resize-zone          zoneId X-Length Y-Length [Z-Length]
//	add-zone-variable    zoneId variable
//	modify-zone-variable zoneId variable value [type]
//	create-device        id type [name] [{positionX positionY}] [width] [height]
//	remove-device        deviceId
//	move-device          deviceId leftX topY [bottomZ]
//	move-device-zone     deviceId zoneId
//	set-device-property  deviceId property value [type]
//	activate-device, deactivate-device, fault-device, repair-device  deviceId
//	create-person        id type [name] [{positionX positionY}]
//	move-person          personId newX newY [newZ]
//	move-person-zone     personId zoneId
//	remove-person        personId
//	reset-context        (no attribute)
//	set-zone-parent      zone parentZone useParentVariables
//	set-environment      [outdoorTemperature] [outdoorMin] [outdoorMax] [latitude] [longitude] [sky] [windowShare]
//
// The rules, where they differ from or add to the original iCasa:
//
//   - Extensions, so that [WriteScript] can restore a home exactly:
//     create-zone name and isRoom (a boolean as strconv.ParseBool reads it;
//     default true); create-device name, positionX, positionY, width and
//     height; create-person name, positionX and positionY; the "json" type of
//     set-device-property. A name left out or empty defaults to the id.
//   - set-environment, an extension, changes the outdoors as
//     [Home.UpdateEnvironment] does (at least one attribute; numbers as
//     strconv.ParseFloat reads them): outdoorTemperature (K) makes it
//     constant, outdoorMin and outdoorMax (K) a daily curve, latitude and
//     longitude (degrees) place the home, sky is clear, partly-cloudy or
//     overcast, windowShare the default window area per floor area.
//   - Coordinates and lengths are numbers truncated toward zero, as the REST
//     API does. Coordinates and positions lie in [-MaxCoordinate,
//     MaxCoordinate], lengths in [0, 2 × MaxCoordinate] (edge to edge),
//     with leftX + X-Length and topY + Y-Length at most MaxCoordinate. Z coordinates
//     and lengths must be numbers but are ignored: the plan is flat.
//   - Zone variables are numbers. add-zone-variable sets the variable to 0
//     when the zone lacks it and does nothing when it has it;
//     modify-zone-variable sets it, adding it when absent. Its optional type
//     must be number, float, double or int.
//   - move-device-zone and move-person-zone move to the centre of the zone
//     (see [Zone.Centre]), even when already in it; the original chose a
//     random point. Where a smaller zone lies over the centre, the device or
//     person is then located in that smaller zone.
//   - set-device-property types its value by the type attribute: number,
//     float or double (strconv.ParseFloat, finite), int (strconv.ParseInt,
//     base 10), boolean (strconv.ParseBool), string (as is) or json (one JSON
//     value, arrays and objects included; null removes a free property).
//     Type names are matched in any letter case; the Java names of iCasa's
//     scripts are read too (integer, long; B, I, L, F, D and S for boolean,
//     int, long, float, double and string). Without a type, a property
//     the device's kind defines (see [Kind.Property]) takes the spec's type:
//     a Number is read with strconv.ParseFloat, a Bool with strconv.ParseBool
//     and a String as is, and text that does not parse is an error; any other
//     property becomes a number when strconv.ParseFloat reads a finite number,
//     a boolean when it is exactly true or false, and a string otherwise.
//   - A property name may be any of the names iCasa gave it over the years
//     (see [PropertySpec].Aliases): binaryLight.powerStatus sets a
//     BinaryLight's power_status.
//   - The older forms found in iCasa's own scripts are read too: create-zone
//     with zoneId, width and height; deviceID for deviceId; move-device-zone
//     with zone; add-device (deviceID type [description] [room]),
//     configure-device (deviceID room), set-property (deviceID propertyId
//     value), modify-environment (zone variable value) and move (room
//     person), the commands of iCasa's first versions (they become
//     create-device, followed by move-device-zone when a room is given;
//     move-device-zone; set-device-property; modify-zone-variable; and
//     move-person-zone). add-device also reads a type written as the Java
//     class of a simulated device, a.b.SimulatedXImpl, as iCasa.X.
//   - set-zone-parent checks that both zones exist and changes nothing: the
//     plan is flat, a zone inside another already holds what lies in it,
//     and zones never share their variables.
//   - attach-zone-device, attach-device-person, attach-person-zone and
//     execute-script are not supported: each fails when played. The
//     shell-only commands show-zones,
//     show-zone, show-devices, show-device, show-persons, show-person-zones,
//     show-scripts, set-global-property, get-global-property,
//     set-user-property, get-user-property, set-app-property,
//     get-app-property, set-access-right, show-access-right and
//     show-applications take any attributes and do nothing.
//   - Parsing refuses what makes the script unreadable: malformed XML,
//     another root than <behavior>, a bad startdate or factor, a bad delay
//     (the delays add up to at most [MaxScriptDuration]), nested elements,
//     text, an attribute given twice, and input larger than
//     [MaxScriptSize]. An action that can never run (an unknown command or
//     attribute, a missing or malformed attribute, an unknown device or
//     person type) does not stop the script, as in iCasa: it is listed in
//     [Script.Problems] and fails when played, as does what depends on the
//     home's state (a zone that does not exist, an id already taken), in
//     [Action.Apply].
//
// Every error of ParseScript and Apply, and every problem, names the line
// of the element at fault (for a script too large, the line where it
// crosses the limit).
//
// A player sets the clock from StartDate and Factor, then applies each action
// with [Action.Apply] when simulated time reaches the script's start plus the
// action's Offset; actions at the same offset run in document order.
// reset-context keeps the clock and the environment. Script and Action are plain values: once
// built they are safe for concurrent reads.
type Script struct {
	// StartDate is where the script sets simulated time when it starts; zero
	// when the script has none, and the player keeps the clock's time.
	StartDate time.Time
	// Factor is the clock factor the script sets: from 1 to [MaxFactor],
	// 1 when the script has none.
	Factor int
	// Actions are the script's commands in execution (document) order, with
	// non-decreasing offsets.
	Actions []Action
	// Length is the sum of every delay, those after the last action
	// included (iCasa's execution time).
	Length time.Duration
	// Problems lists, with their lines, the actions that cannot run
	// whatever the home holds (an unknown command or attribute, a missing
	// or malformed one): as iCasa did, the script is read all the same and
	// each of them fails when played, counted as an error of the run. At
	// most [MaxScriptProblems] are listed, then "and N more".
	Problems []string
}

// MaxScriptProblems is the most problems [Script.Problems] lists.
const MaxScriptProblems = 20

// Action is one command of a script at its offset from the script's start.
// It is a plain value, safe for concurrent reads.
type Action struct {
	// Offset is the sum of the delays before the action.
	Offset time.Duration
	// Line is the line of the action's element in the script, from 1.
	Line int
	// Command is the element name, such as "create-zone".
	Command string
	// Args holds the element's attributes by name, never nil after parsing.
	Args map[string]string
}

// Duration returns the offset of the last action, 0 when the script has none.
// Delays after the last action do not count.
func (s *Script) Duration() time.Duration {
	if len(s.Actions) == 0 {
		return 0
	}
	return s.Actions[len(s.Actions)-1].Offset
}

// Apply runs the action against h through h's public methods. Its arguments
// are checked again first, so a hand-made Action is safe to apply. Errors keep
// their kind ([ErrNotFound] for an unknown zone, device or person,
// [ErrConflict] for a used id, [ErrInvalid] for a bad argument) and are
// prefixed with the action's line and command. A command does one change of
// h, except create-device with a width or height (a create, then an update)
// and the commands that read h first (move-zone, resize-zone,
// add-zone-variable, move-device-zone, move-person-zone and
// set-device-property without a type). Apply panics if h is nil.
func (a Action) Apply(h *Home) error {
	run, err := prepareAction(a.Command, a.Args, h.kinds)
	if err == nil {
		if err = run(h); err != nil {
			err = fmt.Errorf("%s: %w", a.Command, err)
		}
	}
	if err != nil && a.Line > 0 {
		return fmt.Errorf("line %d: %w", a.Line, err)
	}
	return err
}

// ParseScript reads a .bhv script: see [Script] for the language. Dates are
// read in loc (nil means time.Local). Every error wraps [ErrInvalid] and
// names the line at fault, except a read error of r, which is returned
// wrapped as it is. ParseScript panics if r is nil.
func ParseScript(r io.Reader, loc *time.Location) (*Script, error) {
	return parseScript(r, loc, builtins, MaxScriptSize)
}

// ParseScript reads a .bhv script as the package-level [ParseScript] does,
// in the home's time zone, and knows the kinds registered in the home. It
// panics if r is nil.
func (h *Home) ParseScript(r io.Reader) (*Script, error) {
	return parseScript(r, h.loc, h.kinds, MaxScriptSize)
}

// ParseLargeScript reads a script as [Home.ParseScript] does, of any size:
// for a script a home wrote of itself ([WriteScript]), which grows with its
// zones, devices and persons, or a file the user names, not for text a
// client sends. It panics if r is nil.
func (h *Home) ParseLargeScript(r io.Reader) (*Script, error) {
	return parseScript(r, h.loc, h.kinds, math.MaxInt64-1)
}

func parseScript(r io.Reader, loc *time.Location, kinds *KindRegistry, limit int64) (*Script, error) {
	if r == nil {
		panic("sim: ParseScript with a nil reader")
	}
	if loc == nil {
		loc = time.Local
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading script: %w", err)
	}
	if int64(len(data)) > limit {
		line := bytes.Count(data[:limit], []byte("\n")) + 1
		return nil, invalidf("line %d: script is larger than %d bytes", line, limit)
	}
	if data, err = xmlcharset.ToUTF8(data); err != nil {
		return nil, invalidf("line 1: %v", err)
	}

	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = xmlcharset.Converted
	s := &Script{Factor: 1, Actions: []Action{}}
	const (
		beforeRoot = iota
		inRoot
		inElement
		afterRoot
	)
	state := beforeRoot
	var offset time.Duration
	problems := 0 // actions that cannot run
	element := "" // name of the element open inside the root
	for {
		line, _ := d.InputPos()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return nil, invalidf("line %d: malformed XML: %s", se.Line, se.Msg)
			}
			return nil, invalidf("line %d: malformed XML: %v", line, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := elementName(t.Name)
			switch state {
			case beforeRoot:
				if name != "behavior" {
					return nil, atLine(line, invalidf("the root element is <%s>, want <behavior>", truncate(name)))
				}
				if err := s.parseRoot(t.Attr, loc); err != nil {
					return nil, atLine(line, err)
				}
				state = inRoot
			case inRoot:
				args, err := collectAttrs(t.Attr)
				if err != nil {
					return nil, atLine(line, fmt.Errorf("%s: %w", truncate(name), err))
				}
				if name == "delay" {
					delay, err := parseDelay(args)
					if err != nil {
						return nil, atLine(line, fmt.Errorf("delay: %w", err))
					}
					if offset += delay; offset > MaxScriptDuration {
						return nil, atLine(line, invalidf("delay: the delays add up to more than %v", MaxScriptDuration))
					}
				} else {
					for _, c := range canonical(name, args) {
						if _, err := prepareAction(c.cmd, c.args, kinds); err != nil { // fails again when played
							if problems++; problems <= MaxScriptProblems {
								s.Problems = append(s.Problems, atLine(line, err).Error())
							}
						}
						s.Actions = append(s.Actions, Action{Offset: offset, Line: line, Command: c.cmd, Args: c.args})
					}
				}
				element = name
				state = inElement
			case inElement:
				return nil, atLine(line, invalidf("%s: nested element <%s> is not allowed", element, truncate(name)))
			default:
				return nil, atLine(line, invalidf("element <%s> after </behavior>", truncate(name)))
			}
		case xml.EndElement:
			if state == inElement {
				state = inRoot
			} else {
				state = afterRoot
			}
		case xml.CharData:
			if text := bytes.Trim(t, " \t\r\n"); len(text) > 0 {
				lead := t[:len(t)-len(bytes.TrimLeft(t, " \t\r\n"))]
				return nil, invalidf("line %d: unexpected text %q", line+bytes.Count(lead, []byte("\n")), truncate(string(text)))
			}
		}
	}
	if state == beforeRoot {
		return nil, invalidf("line 1: no <behavior> element")
	}
	s.Length = offset
	if n := problems - MaxScriptProblems; n > 0 {
		s.Problems = append(s.Problems, fmt.Sprintf("and %d more", n))
	}
	return s, nil
}

// atLine prefixes err with a line number.
func atLine(line int, err error) error { return fmt.Errorf("line %d: %w", line, err) }

// elementName returns the name of an element or attribute as written.
func elementName(n xml.Name) string {
	if n.Space != "" {
		return n.Space + ":" + n.Local
	}
	return n.Local
}

// collectAttrs returns the attributes by name, without namespace
// declarations, and rejects an attribute given twice.
func collectAttrs(attrs []xml.Attr) (map[string]string, error) {
	m := make(map[string]string, len(attrs))
	for _, a := range attrs {
		if a.Name.Space == "xmlns" || a.Name.Space == "" && a.Name.Local == "xmlns" {
			continue
		}
		n := elementName(a.Name)
		if _, dup := m[n]; dup {
			return nil, invalidf("attribute %s is given twice", truncate(n))
		}
		m[n] = a.Value
	}
	return m, nil
}

// rootSyntax lists the attributes of <behavior>.
var rootSyntax = scriptCommand{optional: [][]string{{"startdate"}, {"factor"}}}

// parseRoot reads the attributes of <behavior> into s.
func (s *Script) parseRoot(attrs []xml.Attr, loc *time.Location) error {
	args, err := collectAttrs(attrs)
	if err == nil {
		err = rootSyntax.checkAttrs(args)
	}
	if err != nil {
		return fmt.Errorf("behavior: %w", err)
	}
	if v, ok := args["startdate"]; ok {
		t, err := time.ParseInLocation(DateLayout, v, loc)
		for _, layout := range legacyDateLayouts {
			if err == nil {
				break
			}
			t, err = time.ParseInLocation(layout, v, loc)
		}
		if err != nil || t.Year() < 1 {
			return invalidf("behavior: attribute startdate: %q is not a date dd/MM/yyyy-HH:mm:ss from the year 1", truncate(v))
		}
		s.StartDate = t
	}
	if v, ok := args["factor"]; ok {
		f, err := strconv.Atoi(v)
		if err != nil || f < 1 || f > MaxFactor {
			return invalidf("behavior: attribute factor: %q is not an integer from 1 to %d", truncate(v), MaxFactor)
		}
		s.Factor = f
	}
	return nil
}

// delaySyntax lists the attributes of <delay>.
var delaySyntax = scriptCommand{required: []string{"value"}, optional: [][]string{{"unit"}}}

// parseDelay returns the duration of a <delay>.
func parseDelay(args map[string]string) (time.Duration, error) {
	if err := delaySyntax.checkAttrs(args); err != nil {
		return 0, err
	}
	unit := time.Minute
	if u, ok := args["unit"]; ok {
		switch u {
		case "h":
			unit = time.Hour
		case "m":
			unit = time.Minute
		case "s":
			unit = time.Second
		default:
			return 0, invalidf("attribute unit: %q is not h, m or s", truncate(u))
		}
	}
	v, ok := parseNumber(args["value"])
	if !ok {
		return 0, invalidf("attribute value: %q is not a number", truncate(args["value"]))
	}
	if v < 0 {
		return 0, invalidf("attribute value: %q is negative", truncate(args["value"]))
	}
	d := v * float64(unit)
	if d > float64(MaxScriptDuration) {
		return 0, invalidf("attribute value: %q is longer than %v", truncate(args["value"]), MaxScriptDuration)
	}
	return time.Duration(math.Round(d)), nil
}

// parseNumber reads a finite number.
func parseNumber(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// scriptCommand describes a command: its attributes and how it runs.
type scriptCommand struct {
	// required attributes must all be present.
	required []string
	// optional groups of attributes: each group is all present or all absent.
	optional [][]string
	// prepare reads the attributes, recording the first error in p, and
	// returns the change to make.
	prepare func(p *argParser) func(h *Home) error
}

// checkAttrs checks that args holds the required attributes, whole optional
// groups and nothing else.
func (c *scriptCommand) checkAttrs(args map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if !slices.Contains(c.required, k) && !slices.ContainsFunc(c.optional, func(g []string) bool { return slices.Contains(g, k) }) {
			return invalidf("unknown attribute %s", truncate(k))
		}
	}
	for _, k := range c.required {
		if _, ok := args[k]; !ok {
			return invalidf("missing attribute %s", k)
		}
	}
	for _, g := range c.optional {
		n := 0
		for _, k := range g {
			if _, ok := args[k]; ok {
				n++
			}
		}
		if n == 0 || n == len(g) {
			continue
		}
		for _, k := range g {
			if _, ok := args[k]; !ok {
				return invalidf("missing attribute %s (%s go together)", k, strings.Join(g, " and "))
			}
		}
	}
	return nil
}

// Commands of the original iCasa that scripts may not use here.
var unsupportedCommands = []string{
	"attach-zone-device", "attach-device-person", "attach-person-zone", "execute-script",
}

// Shell-only commands of the original iCasa, accepted and ignored.
var shellCommands = []string{
	"show-zones", "show-zone", "show-devices", "show-device", "show-persons", "show-person-zones",
	"show-scripts", "set-global-property", "get-global-property", "set-user-property",
	"get-user-property", "set-app-property", "get-app-property", "set-access-right",
	"show-access-right", "show-applications",
}

// prepareAction checks a command and its attributes and returns the change it
// makes. Errors are of kind ErrInvalid and name the command.
func prepareAction(cmd string, args map[string]string, kinds *KindRegistry) (func(h *Home) error, error) {
	c, ok := scriptCommands[cmd]
	switch {
	case ok:
	case slices.Contains(shellCommands, cmd):
		return func(*Home) error { return nil }, nil
	case slices.Contains(unsupportedCommands, cmd):
		return nil, invalidf("command %s is not supported", cmd)
	case cmd == "delay":
		return nil, invalidf("delay is not an action: delays are folded into the actions' offsets")
	default:
		return nil, invalidf("unknown command %s", truncate(cmd))
	}
	if err := c.checkAttrs(args); err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	p := &argParser{args: args, kinds: kinds}
	run := c.prepare(p)
	if p.err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, p.err)
	}
	return run, nil
}

// argParser reads typed attributes, keeping the first error.
type argParser struct {
	args  map[string]string
	kinds *KindRegistry // the device kinds create-device knows
	err   error
}

func (p *argParser) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

func (p *argParser) has(name string) bool {
	_, ok := p.args[name]
	return ok
}

// id reads an entity id: see [ValidID].
func (p *argParser) id(name string) string {
	v := p.args[name]
	if !ValidID(v) {
		p.fail(invalidf("attribute %s: %q is not a valid id: use 1 to %d letters, digits and -_.:, other than . and ..", name, truncate(v), MaxIDLength))
	}
	return v
}

// nonEmpty reads a name that must not be empty.
func (p *argParser) nonEmpty(name string) string {
	v := p.args[name]
	if v == "" {
		p.fail(invalidf("attribute %s is empty", name))
	}
	return v
}

// number reads a finite number.
func (p *argParser) number(name string) float64 {
	v := p.args[name]
	f, ok := parseNumber(v)
	if !ok {
		p.fail(invalidf("attribute %s: %q is not a number", name, truncate(v)))
	}
	return f
}

// ignored checks an optional number that the flat plan ignores.
func (p *argParser) ignored(name string) {
	if p.has(name) {
		p.number(name)
	}
}

// integer reads a number truncated toward zero, in [min, MaxCoordinate].
func (p *argParser) integer(name string, min int) int { return p.within(name, min, MaxCoordinate) }

// length reads a zone's length: from one edge of the plan to the other at
// most, so that every zone the home holds can be written.
func (p *argParser) length(name string) int { return p.within(name, 0, 2*MaxCoordinate) }

// within reads an integer attribute in [min, max], truncated toward zero.
func (p *argParser) within(name string, min, max int) int {
	f := math.Trunc(p.number(name))
	if f < float64(min) || f > float64(max) {
		p.fail(invalidf("attribute %s must be between %d and %d, not %s", name, min, max, truncate(p.args[name])))
		return 0
	}
	return int(f)
}

// position reads an optional pair of position attributes.
func (p *argParser) position(xName, yName string) (x, y *int) {
	if !p.has(xName) {
		return nil, nil
	}
	vx, vy := p.integer(xName, -MaxCoordinate), p.integer(yName, -MaxCoordinate)
	return &vx, &vy
}

func (p *argParser) boolean(name string) bool {
	v := p.args[name]
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.fail(invalidf("attribute %s: %q is not a boolean", name, truncate(v)))
	}
	return b
}

// typedValue reads the value attribute as the type attribute says.
func (p *argParser) typedValue() any {
	v, err := convertValue(p.args["value"], p.args["type"])
	if err != nil {
		p.fail(err)
	}
	return v
}

// convertValue reads raw as a value of the named type of set-device-property.
func convertValue(raw, typ string) (any, error) {
	switch strings.ToLower(typ) {
	case "number", "float", "double", "f", "d":
		if f, ok := parseNumber(raw); ok {
			return f, nil
		}
		return nil, invalidf("attribute value: %q is not a number", truncate(raw))
	case "int", "integer", "long", "i", "l":
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, invalidf("attribute value: %q is not an integer", truncate(raw))
		}
		return float64(n), nil
	case "boolean", "b":
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, invalidf("attribute value: %q is not a boolean", truncate(raw))
		}
		return b, nil
	case "string", "s":
		return raw, nil
	case "json":
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			return nil, invalidf("attribute value: not JSON: %v", err)
		}
		return v, nil
	}
	return nil, invalidf("attribute type: %q is not number, float, double, int, long, boolean, string or json", truncate(typ))
}

// inferValue types the text of set-device-property without a type attribute,
// by the kind of the device.
func inferValue(h *Home, deviceID, name, raw string) (any, error) {
	d, err := h.Device(deviceID)
	if err != nil {
		return nil, err
	}
	kind, err := h.kinds.Lookup(d.Type)
	if err != nil {
		return nil, err
	}
	if spec, ok := kind.forPhysics(h.physics).Resolve(name); ok {
		switch spec.Type {
		case Number:
			if f, ok := parseNumber(raw); ok {
				return f, nil
			}
			return nil, invalidf("property %q of %s devices is a number, not %q", name, kind.Name, truncate(raw))
		case Bool:
			b, err := strconv.ParseBool(raw)
			if err != nil {
				return nil, invalidf("property %q of %s devices is a boolean, not %q", name, kind.Name, truncate(raw))
			}
			return b, nil
		default:
			return raw, nil
		}
	}
	if f, ok := parseNumber(raw); ok {
		return f, nil
	}
	switch raw {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return raw, nil
}

// zoneCentre returns the centre of the zone with the given id.
func zoneCentre(h *Home, id string) (x, y int, err error) {
	z, err := h.Zone(id)
	if err != nil {
		return 0, 0, err
	}
	x, y = z.Centre()
	return x, y, nil
}

// deviceCommand returns a command that makes one update of a device.
func deviceCommand(u DeviceUpdate) *scriptCommand {
	return &scriptCommand{
		required: []string{"deviceId"},
		prepare: func(p *argParser) func(*Home) error {
			id := p.id("deviceId")
			return func(h *Home) error {
				_, err := h.UpdateDevice(id, u)
				return err
			}
		},
	}
}

func strPtr(s string) *string { return &s }

// zoneVariableCommand is add-zone-variable (add: the variable at 0, when
// the zone lacks it) or remove-zone-variable (when the zone has it): a
// zone already as asked is left alone.
func zoneVariableCommand(add bool) *scriptCommand {
	return &scriptCommand{
		required: []string{"zoneId", "variable"},
		prepare: func(p *argParser) func(*Home) error {
			id, name := p.id("zoneId"), p.nonEmpty("variable")
			return func(h *Home) error {
				z, err := h.Zone(id)
				if err != nil {
					return err
				}
				if _, ok := z.Variables[name]; ok == add {
					return nil
				}
				var v *float64 // removed
				if add {
					v = new(float64)
				}
				_, err = h.UpdateZone(id, ZoneUpdate{Variables: map[string]*float64{name: v}})
				return err
			}
		},
	}
}

// scriptCommands holds the commands a script can run.
var scriptCommands = map[string]*scriptCommand{
	"create-zone": {
		required: []string{"id", "leftX", "topY", "X-Length", "Y-Length"},
		optional: [][]string{{"bottomZ", "Z-Length"}, {"name"}, {"isRoom"}},
		prepare: func(p *argParser) func(*Home) error {
			spec := ZoneSpec{ID: p.id("id"), Name: p.args["name"], LeftX: p.integer("leftX", -MaxCoordinate), TopY: p.integer("topY", -MaxCoordinate)}
			w, l := p.length("X-Length"), p.length("Y-Length")
			p.ignored("bottomZ")
			p.ignored("Z-Length")
			if p.has("isRoom") {
				r := p.boolean("isRoom")
				spec.IsRoom = &r
			}
			if spec.RightX = spec.LeftX + w; spec.RightX > MaxCoordinate {
				p.fail(invalidf("leftX + X-Length must be at most %d, not %d", MaxCoordinate, spec.RightX))
			}
			if spec.BottomY = spec.TopY + l; spec.BottomY > MaxCoordinate {
				p.fail(invalidf("topY + Y-Length must be at most %d, not %d", MaxCoordinate, spec.BottomY))
			}
			return func(h *Home) error {
				_, err := h.CreateZone(spec)
				return err
			}
		},
	},
	"move-zone": {
		required: []string{"zoneId", "leftX", "topY"},
		optional: [][]string{{"bottomZ"}},
		prepare: func(p *argParser) func(*Home) error {
			id, x, y := p.id("zoneId"), p.integer("leftX", -MaxCoordinate), p.integer("topY", -MaxCoordinate)
			p.ignored("bottomZ")
			return func(h *Home) error {
				z, err := h.Zone(id)
				if err != nil {
					return err
				}
				right, bottom := x+z.RightX-z.LeftX, y+z.BottomY-z.TopY
				_, err = h.UpdateZone(id, ZoneUpdate{LeftX: &x, TopY: &y, RightX: &right, BottomY: &bottom})
				return err
			}
		},
	},
	"resize-zone": {
		required: []string{"zoneId", "X-Length", "Y-Length"},
		optional: [][]string{{"Z-Length"}},
		prepare: func(p *argParser) func(*Home) error {
			id, w, l := p.id("zoneId"), p.length("X-Length"), p.length("Y-Length")
			p.ignored("Z-Length")
			return func(h *Home) error {
				z, err := h.Zone(id)
				if err != nil {
					return err
				}
				right, bottom := z.LeftX+w, z.TopY+l
				_, err = h.UpdateZone(id, ZoneUpdate{RightX: &right, BottomY: &bottom})
				return err
			}
		},
	},
	"add-zone-variable": zoneVariableCommand(true),
	// An extension for exact saving: iCasa's scripts cannot remove a
	// variable.
	"remove-zone-variable": zoneVariableCommand(false),
	"modify-zone-variable": {
		required: []string{"zoneId", "variable", "value"},
		optional: [][]string{{"type"}},
		prepare: func(p *argParser) func(*Home) error {
			id, name, v := p.id("zoneId"), p.nonEmpty("variable"), p.number("value")
			if t, ok := p.args["type"]; ok {
				switch strings.ToLower(t) {
				case "number", "float", "double", "int":
				default:
					p.fail(invalidf("attribute type: %q is not number, float, double or int: zone variables are numbers", truncate(t)))
				}
			}
			return func(h *Home) error {
				_, err := h.UpdateZone(id, ZoneUpdate{Variables: map[string]*float64{name: &v}})
				return err
			}
		},
	},
	"create-device": {
		required: []string{"id", "type"},
		optional: [][]string{{"name"}, {"positionX", "positionY"}, {"width"}, {"height"}},
		prepare: func(p *argParser) func(*Home) error {
			spec := DeviceSpec{ID: p.id("id"), Name: p.args["name"], Type: p.args["type"]}
			if _, err := p.kinds.Lookup(spec.Type); err != nil {
				p.fail(fmt.Errorf("attribute type: %w", err))
			}
			spec.PositionX, spec.PositionY = p.position("positionX", "positionY")
			var size DeviceUpdate
			if p.has("width") {
				w := p.integer("width", 0)
				size.Width = &w
			}
			if p.has("height") {
				l := p.integer("height", 0)
				size.Height = &l
			}
			return func(h *Home) error {
				if _, err := h.CreateDevice(spec); err != nil {
					return err
				}
				if size.Width == nil && size.Height == nil {
					return nil
				}
				_, err := h.UpdateDevice(spec.ID, size)
				return err
			}
		},
	},
	"remove-device": {
		required: []string{"deviceId"},
		prepare: func(p *argParser) func(*Home) error {
			id := p.id("deviceId")
			return func(h *Home) error { return h.DeleteDevice(id) }
		},
	},
	"move-device": {
		required: []string{"deviceId", "leftX", "topY"},
		optional: [][]string{{"bottomZ"}},
		prepare: func(p *argParser) func(*Home) error {
			id, x, y := p.id("deviceId"), p.integer("leftX", -MaxCoordinate), p.integer("topY", -MaxCoordinate)
			p.ignored("bottomZ")
			return func(h *Home) error {
				_, err := h.UpdateDevice(id, DeviceUpdate{PositionX: &x, PositionY: &y})
				return err
			}
		},
	},
	"move-device-zone": {
		required: []string{"deviceId", "zoneId"},
		prepare: func(p *argParser) func(*Home) error {
			id, zone := p.id("deviceId"), p.id("zoneId")
			return func(h *Home) error {
				x, y, err := zoneCentre(h, zone)
				if err != nil {
					return err
				}
				_, err = h.UpdateDevice(id, DeviceUpdate{PositionX: &x, PositionY: &y})
				return err
			}
		},
	},
	"set-device-property": {
		required: []string{"deviceId", "property", "value"},
		optional: [][]string{{"type"}},
		prepare: func(p *argParser) func(*Home) error {
			id, name, raw := p.id("deviceId"), p.nonEmpty("property"), p.args["value"]
			typed := p.has("type")
			var v any
			if typed {
				v = p.typedValue()
			}
			return func(h *Home) error {
				// The REST API ignores derived properties sent back; a script
				// that sets one means it, so it is told.
				if name == PropLocation {
					return invalidf("property %q is derived from the position: use move-device or move-device-zone", name)
				}
				if d, err := h.Device(id); err == nil {
					if k, err := h.kinds.Lookup(d.Type); err == nil {
						if spec, ok := k.Resolve(name); ok && spec.Derived {
							return invalidf("property %q is derived by the simulation and cannot be set", name)
						}
					}
				}
				val := v
				if !typed {
					var err error
					if val, err = inferValue(h, id, name, raw); err != nil {
						return err
					}
				}
				_, err := h.UpdateDevice(id, DeviceUpdate{Properties: map[string]any{name: val}})
				return err
			}
		},
	},
	"activate-device":   deviceCommand(DeviceUpdate{State: strPtr(StateActivated)}),
	"deactivate-device": deviceCommand(DeviceUpdate{State: strPtr(StateDeactivated)}),
	"fault-device":      deviceCommand(DeviceUpdate{Fault: strPtr(FaultYes)}),
	"repair-device":     deviceCommand(DeviceUpdate{Fault: strPtr(FaultNo)}),
	"create-person": {
		required: []string{"id", "type"},
		optional: [][]string{{"name"}, {"positionX", "positionY"}},
		prepare: func(p *argParser) func(*Home) error {
			spec := PersonSpec{ID: p.id("id"), Name: p.args["name"], Type: p.args["type"]}
			if !slices.ContainsFunc(PersonTypes(), func(t PersonType) bool { return strings.EqualFold(t.ID, spec.Type) }) {
				var names []string
				for _, t := range PersonTypes() {
					names = append(names, t.ID)
				}
				p.fail(invalidf("attribute type: unknown person type %q; known types: %s", truncate(spec.Type), strings.Join(names, ", ")))
			}
			spec.PositionX, spec.PositionY = p.position("positionX", "positionY")
			return func(h *Home) error {
				_, err := h.CreatePerson(spec)
				return err
			}
		},
	},
	"move-person": {
		required: []string{"personId", "newX", "newY"},
		optional: [][]string{{"newZ"}},
		prepare: func(p *argParser) func(*Home) error {
			id, x, y := p.id("personId"), p.integer("newX", -MaxCoordinate), p.integer("newY", -MaxCoordinate)
			p.ignored("newZ")
			return func(h *Home) error {
				_, err := h.UpdatePerson(id, PersonUpdate{PositionX: &x, PositionY: &y})
				return err
			}
		},
	},
	"move-person-zone": {
		required: []string{"personId", "zoneId"},
		prepare: func(p *argParser) func(*Home) error {
			id, zone := p.id("personId"), p.id("zoneId")
			return func(h *Home) error {
				x, y, err := zoneCentre(h, zone)
				if err != nil {
					return err
				}
				_, err = h.UpdatePerson(id, PersonUpdate{PositionX: &x, PositionY: &y})
				return err
			}
		},
	},
	"remove-person": {
		required: []string{"personId"},
		prepare: func(p *argParser) func(*Home) error {
			id := p.id("personId")
			return func(h *Home) error { return h.DeletePerson(id) }
		},
	},
	"set-environment": {
		optional: [][]string{{"outdoorTemperature"}, {"outdoorMin"}, {"outdoorMax"}, {"latitude"}, {"longitude"}, {"sky"}, {"windowShare"}},
		prepare: func(p *argParser) func(*Home) error {
			var u EnvironmentUpdate
			for name, dst := range map[string]**float64{"outdoorTemperature": &u.OutdoorTemperature,
				"outdoorMin": &u.OutdoorMin, "outdoorMax": &u.OutdoorMax, "latitude": &u.Latitude,
				"longitude": &u.Longitude, "windowShare": &u.WindowShare} {
				if p.has(name) {
					*dst = new(p.number(name))
				}
			}
			if p.has("sky") {
				u.Sky = new(p.args["sky"])
			}
			if len(p.args) == 0 {
				p.fail(invalidf("give at least one of outdoorTemperature, outdoorMin, outdoorMax, latitude, longitude, sky, windowShare"))
			}
			if u.OutdoorTemperature != nil && (u.OutdoorMin != nil || u.OutdoorMax != nil) {
				p.fail(invalidf("give either outdoorTemperature (a constant) or outdoorMin and outdoorMax (a daily curve), not both"))
			}
			if err := u.validate(); err != nil {
				p.fail(err)
			}
			return func(h *Home) error {
				_, err := h.UpdateEnvironment(u)
				return err
			}
		},
	},
	"set-zone-parent": {
		required: []string{"zone", "parentZone", "useParentVariables"},
		prepare: func(p *argParser) func(*Home) error {
			child, parent := p.id("zone"), p.id("parentZone")
			p.boolean("useParentVariables")
			return func(h *Home) error {
				if _, err := h.Zone(child); err != nil {
					return err
				}
				_, err := h.Zone(parent)
				return err
			}
		},
	},
	"reset-context": {
		prepare: func(*argParser) func(*Home) error {
			return func(h *Home) error { h.Reset(); return nil }
		},
	},
}
