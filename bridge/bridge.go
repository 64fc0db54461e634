// Package bridge joins a simulated home ([sim.Home]) to a mediation engine
// ([mediation.Engine]): it adds two adapter types to the engine, so that
// sensor readings flow into chains and chains drive actuators.
//
//   - device-in (in-only, out port "out") emits a message for each change
//     of a selected device property. Selection, each optional: "devices"
//     (ids), "kinds" (such as Thermometer), "zone" (a zone id: the device's
//     location), "property" (a property name). The content is {"device",
//     "property", "value"}; the properties are deviceId, type, location,
//     property and time (simulated ms). With "current" true it is level- as
//     well as edge-triggered: it also emits the current value of every
//     selected property of every selected device when its chain starts and
//     when a binding from it is added to a started chain (the message
//     properties then include current=true), so a chain acts on the home
//     as it is (not while [mediation.Engine.Restore] loads the chain again:
//     the home is restored as the chain left it). With "events" true it also emits each event of a selected
//     device (a motion sensor's, its only signal): the content is
//     {"device", "event"} (a motion sensor's event is {"personId",
//     "motion"}), the properties deviceId, type, location, event (true) and
//     time.
//   - device-out (out-only, in port "in") applies each message to a device:
//     the content {"device", "property", "value"}, or else the message's
//     properties of those names. The adapter's own "device", "property" and
//     "value" properties, when set, fix them instead. The change is applied
//     at the current simulated time through the home's scheduler: live, as
//     soon as the driver runs; under [sim.Home.Advance], by the next call to
//     Advance (or RunUntil), not before it.
//
// A change device-out applies may set off another (a device-in sees it,
// its chain sends a message to a device-out), at the same simulated
// instant: at most [MaxCascade] in a row, so that a chain that sets what it
// watches (a switch it turns off when on and on when off) cannot hold
// simulated time at one instant for ever. The change past them is refused,
// an error of its device-out (see Errors of messages). A loop that goes
// through a queue binding is not cut: the queue delivers on a goroutine of
// its own, where the cascade is not seen; it holds no simulated time, but
// runs until its chain is stopped or deleted.
//
// Both validate their properties when created (an unknown device, kind or
// zone, a derived property: an error of kind mediation.ErrInvalid, 400 over
// REST).
//
// # Time
//
// device-in sees the home's events synchronously ([sim.Home.Observe]), and
// device-out checks each message at once but applies it through the home's
// scheduler, at the current simulated time ([sim.Home.After]): under
// [sim.Home.Advance] within the same step, live as soon as the driver runs.
// So a chain that controls devices over direct bindings (the default
// linker) runs the same every time, and never re-enters itself. A queue
// binding hands messages to a goroutine of its own, which runs when the Go
// scheduler lets it, not in simulated time: under Advance its deliveries
// (and so what device-out applies) come late by any amount, and differ
// from run to run.
//
// # Errors of messages
//
// A message device-out cannot apply (an unknown device, a value out of
// range, a derived property) is not an error of the Send that caused it:
// it is counted in the component's Errors counter and written, with the
// chain's and the component's ids, to the engine's output
// (mediation.Config.Output, io.Discard unless set). So is a message checked
// at once but refused when the home applies it (the device deleted
// meanwhile).
//
// # Concurrency
//
// A Bridge is safe for concurrent use.
package bridge

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/pervasim/pervasim/internal/errkind"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

// The adapter type names.
const (
	DeviceIn  = "device-in"
	DeviceOut = "device-out"
)

// Bridge feeds the device-in adapters of an engine from a home. Create it
// with New; Close stops it. A Bridge is safe for concurrent use.
type Bridge struct {
	home   *sim.Home
	engine *mediation.Engine
	stop   func()

	mu     sync.Mutex // guards inputs
	inputs []*deviceIn

	cmu      sync.Mutex // guards applying, depth and sending
	applying int        // device-out changes being applied
	depth    int        // the cascade depth of the one applied last
	sending  int        // observe calls passing a change on to chains
}

// MaxCascade is how many device-out changes, each caused by the one
// before it through the home, one change may set off at the same
// simulated instant: a chain whose device-out sets what its own device-in
// watches (a switch that turns itself off when on and on when off) would
// otherwise loop at that instant for ever, and [sim.Home.Advance] never
// return. The change past it is refused, as an error of its device-out.
const MaxCascade = 1000

// New registers the device-in and device-out types in engine's registry,
// bound to home, and starts feeding device-in adapters. It fails when the
// registry already has types of those names. It panics if home or engine
// is nil: both are required.
func New(home *sim.Home, engine *mediation.Engine) (*Bridge, error) {
	switch {
	case home == nil:
		panic("bridge: New with a nil home")
	case engine == nil:
		panic("bridge: New with a nil engine")
	}
	b := &Bridge{home: home, engine: engine}
	reg := engine.Registry()
	if err := reg.Register(mediation.Type{
		Name: DeviceIn, Kind: mediation.KindAdapter, Pattern: mediation.PatternInOnly, Out: []string{"out"},
		Properties: map[string]any{"devices": []any{}, "kinds": []any{}, "zone": "", "property": "", "current": false, "events": false},
		Doc:        "Emits a message for each change of a selected device property of the simulated home (and, with events, each event of a selected device, such as a motion sensor's).",
		New:        b.newDeviceIn,
	}); err != nil {
		return nil, err
	}
	if err := reg.Register(mediation.Type{
		Name: DeviceOut, Kind: mediation.KindAdapter, Pattern: mediation.PatternOutOnly, In: []string{"in"},
		Properties: map[string]any{"device": "", "property": "", "value": nil},
		Doc:        "Applies each message to a device of the simulated home: {device, property, value}.",
		New:        b.newDeviceOut,
	}); err != nil {
		return nil, err
	}
	b.stop = home.Observe(b.observe)
	return b, nil
}

// Close stops feeding device-in adapters. The types stay registered; their
// adapters emit nothing more. Close is safe to call more than once.
func (b *Bridge) Close() { b.stop() }

// stringList reads a property holding a list: an array of strings, or one
// comma-separated string; either way each entry is trimmed of spaces, and
// an empty one left out.
func stringList(props map[string]any, name string) ([]string, error) {
	switch v := props[name].(type) {
	case nil:
		return nil, nil
	case string:
		var out []string
		for s := range strings.SplitSeq(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, invalidf("property %q must list strings, not %v", name, e)
			}
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	}
	return nil, invalidf("property %q must be a list of strings or a comma-separated string", name)
}

func stringProp(props map[string]any, name string) (string, error) {
	switch v := props[name].(type) {
	case nil:
		return "", nil
	case string:
		return strings.TrimSpace(v), nil
	}
	return "", invalidf("property %q must be a string", name)
}

// selection is what a device-in adapter listens to; empty parts match all.
type selection struct {
	devices  []string
	kinds    []string // canonical types, such as iCasa.Thermometer
	zone     string
	property string
	names    []string // the names the home reports property under (see propertyNames)
	current  bool     // announce the current values too
	events   bool     // carry the selected devices' device-events too
}

func (s selection) matches(e sim.Event) bool {
	if e.Type == sim.EventDeviceEvent {
		return s.events && e.Device != nil && s.selects(e.Device)
	}
	return e.Device != nil && s.selects(e.Device) && (s.property == "" || slices.Contains(s.names, e.Property))
}

// selects reports whether the selection takes device d.
func (s selection) selects(d *sim.Device) bool {
	switch {
	case len(s.devices) > 0 && !slices.Contains(s.devices, d.ID),
		len(s.kinds) > 0 && !slices.Contains(s.kinds, d.Type),
		s.zone != "" && d.Location != s.zone:
		return false
	}
	return true
}

// message makes the message of a device-in adapter for the value of
// property of device d at simulated time t (ms).
func message(d *sim.Device, property string, value any, t int64) mediation.Message {
	return mediation.Message{
		Content: map[string]any{"device": d.ID, "property": property, "value": value},
		Properties: map[string]any{
			"deviceId": d.ID, "type": d.Type, "location": d.Location,
			"property": property, "time": t,
		},
	}
}

// eventMessage makes the message of a device-in adapter for an event of
// device d (data: a motion sensor's {"personId","motion"}) at simulated
// time t (ms).
func eventMessage(d *sim.Device, data any, t int64) mediation.Message {
	return mediation.Message{
		Content: map[string]any{"device": d.ID, "event": data},
		Properties: map[string]any{
			"deviceId": d.ID, "type": d.Type, "location": d.Location,
			"event": true, "time": t,
		},
	}
}

// deviceIn is one device-in adapter.
type deviceIn struct {
	b         *Bridge
	chain, id string
	sel       selection
}

func (b *Bridge) newDeviceIn(props map[string]any, env mediation.Env) (any, error) {
	var sel selection
	var err error
	if sel.devices, err = stringList(props, "devices"); err != nil {
		return nil, err
	}
	var kinds []sim.Kind
	names, err := stringList(props, "kinds")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		k, err := b.home.Kinds().Lookup(n)
		if err != nil {
			return nil, invalidf("property \"kinds\": %v", err)
		}
		kinds = append(kinds, k)
		sel.kinds = append(sel.kinds, k.Type())
	}
	var devices []sim.Device
	for _, id := range sel.devices {
		d, err := b.home.Device(id)
		if err != nil {
			if env.Restoring {
				continue // see below
			}
			return nil, invalidf("property \"devices\": %v", err)
		}
		devices = append(devices, d)
	}
	if sel.zone, err = stringProp(props, "zone"); err != nil {
		return nil, err
	}
	if sel.property, err = stringProp(props, "property"); err != nil {
		return nil, err
	}
	sel.names = b.propertyNames(sel.property, kinds, devices)
	// Restored from a saved state, the adapter names what it named then:
	// a device or zone deleted since (or made again as another kind) is
	// waited for, as it was.
	if env.Restoring {
		return b.addInput(&deviceIn{b: b, chain: env.Chain, id: env.ID, sel: sel}, props)
	}
	if len(sel.kinds) > 0 && len(devices) > 0 && !slices.ContainsFunc(devices, func(d sim.Device) bool { return slices.Contains(sel.kinds, d.Type) }) {
		return nil, invalidf("property \"devices\": none of %v is of the selected kinds: nothing would be selected", sel.devices)
	}
	if sel.zone != "" {
		if _, err := b.home.Zone(sel.zone); err != nil {
			return nil, invalidf("property \"zone\": %v", err)
		}
	}
	if err := checkSelectedProperty(sel.property, sel.names, kinds, devices); err != nil {
		return nil, err
	}
	return b.addInput(&deviceIn{b: b, chain: env.Chain, id: env.ID, sel: sel}, props)
}

// propertyNames returns the names under which the home reports property
// p: p itself (a kind's own name, or a device's own property) and, where p
// is an older name (an alias), the property's own: looked up in the
// selected kinds and the selected devices' kinds, else in every kind (a
// name can be one kind's own and another's alias, as
// powerSwitch.currentStatus is).
func (b *Bridge) propertyNames(p string, kinds []sim.Kind, devices []sim.Device) []string {
	if p == "" {
		return nil
	}
	for _, d := range devices {
		if k, err := b.home.Kinds().Lookup(d.Type); err == nil {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		kinds = b.home.Kinds().Kinds()
	}
	names := []string{p}
	for _, k := range kinds {
		if spec, ok := k.Resolve(p); ok && !slices.Contains(names, spec.Name) {
			names = append(names, spec.Name)
		}
	}
	return names
}

// addInput completes a device-in with its "current" property and registers it.
func (b *Bridge) addInput(in *deviceIn, props map[string]any) (any, error) {
	for _, f := range []struct {
		name string
		flag *bool
	}{{"current", &in.sel.current}, {"events", &in.sel.events}} {
		name, flag := f.name, f.flag
		switch v := props[name].(type) {
		case nil:
		case bool:
			*flag = v
		default:
			return nil, invalidf("property %q must be a boolean", name)
		}
	}
	b.mu.Lock()
	b.inputs = append(b.inputs, in)
	b.mu.Unlock()
	return in, nil
}

// checkSelectedProperty refuses a property that none of the selected kinds
// or devices has.
func checkSelectedProperty(p string, names []string, kinds []sim.Kind, devices []sim.Device) error {
	if p == "" || p == sim.PropState || p == sim.PropFault || p == sim.PropLocation {
		return nil
	}
	if len(kinds) == 0 && len(devices) == 0 {
		return nil
	}
	for _, k := range kinds {
		if _, ok := k.Resolve(p); ok {
			return nil
		}
	}
	for _, d := range devices {
		for _, n := range names {
			if _, ok := d.Properties[n]; ok {
				return nil
			}
		}
	}
	return invalidf("property %q: none of the selected kinds or devices has it", p)
}

// Inject passes on the messages the bridge sends in.
func (in *deviceIn) Inject(m mediation.Message, out mediation.Emitter) error {
	out.Emit("out", m)
	return nil
}

// Announce emits the current value of every selected property of every
// selected device, in the home's order, when the adapter was asked to;
// not while the engine restores saved chains (Engine.Restore): the home is
// restored as it was, with what the chain did to it when it started, and a
// chain saved stopped is started there before it is stopped again.
func (in *deviceIn) Announce(out mediation.Emitter) error {
	if !in.sel.current || in.b.engine.Restoring() {
		return nil
	}
	now := in.b.home.Now().UnixMilli()
	for _, d := range in.b.home.Devices() {
		if !in.sel.selects(&d) {
			continue
		}
		names := in.sel.names
		if in.sel.property == "" {
			names = slices.Sorted(maps.Keys(d.Properties))
		}
		for _, p := range names {
			v, ok := d.Properties[p]
			if !ok {
				continue
			}
			m := message(&d, p, v, now)
			m.Properties["current"] = true
			out.Emit("out", m)
		}
	}
	return nil
}

// Close stops the adapter being fed.
func (in *deviceIn) Close() error {
	in.b.mu.Lock()
	defer in.b.mu.Unlock()
	in.b.inputs = slices.DeleteFunc(in.b.inputs, func(x *deviceIn) bool { return x == in })
	return nil
}

// observe sends each device property change (a removal too, its value
// nil) to the device-in adapters that select it. Chains that are not
// started miss it.
func (b *Bridge) observe(e sim.Event) {
	switch e.Type {
	case sim.EventDevicePropertyAdded, sim.EventDevicePropertyUpdated, sim.EventDevicePropertyRemoved, sim.EventDeviceEvent:
	default:
		return
	}
	b.mu.Lock()
	var targets []*deviceIn
	// While a device-in is reconfigured (UpdateProperties), its new
	// implementation is registered before the old one is closed: the
	// component, which both send to by id, takes the change once.
	var seen map[[2]string]bool
	for _, in := range b.inputs {
		if !in.sel.matches(e) {
			continue
		}
		if len(targets) > 0 {
			if seen == nil {
				seen = map[[2]string]bool{{targets[0].chain, targets[0].id}: true}
			}
			k := [2]string{in.chain, in.id}
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		targets = append(targets, in)
	}
	b.mu.Unlock()
	if len(targets) == 0 {
		return
	}
	// What a device-out processes meanwhile may be caused by this change
	// (see cause).
	b.cmu.Lock()
	b.sending++
	b.cmu.Unlock()
	defer func() {
		b.cmu.Lock()
		b.sending--
		b.cmu.Unlock()
	}()
	for _, in := range targets {
		ch, err := b.engine.Chain(in.chain)
		if err != nil {
			continue
		}
		// Each chain owns its message (a mediator may modify it in place):
		// a value of maps or slices is its own copy (Clone copies the
		// containers only; a scalar, nearly every reading, is as it is).
		v := mediation.Message{Content: e.Value}.Clone().Content
		m := message(e.Device, e.Property, v, e.Time)
		if e.Type == sim.EventDeviceEvent {
			m = eventMessage(e.Device, v, e.Time)
		}
		// The home is not held up by a chain: a reading that finds a full
		// queue ahead is dropped (ErrBusy; TrySend counts it in the
		// device-in's dropped counter), as one for a chain that is not
		// started (ErrConflict) or a removed adapter.
		_ = ch.TrySend(in.id, m)
	}
}

// deviceOut is one device-out adapter.
type deviceOut struct {
	b                *Bridge
	name             string
	output           io.Writer
	countError       func() // counts a change that fails when applied (Env.CountError)
	device, property string
	value            any
	hasValue         bool
}

func (b *Bridge) newDeviceOut(props map[string]any, env mediation.Env) (any, error) {
	o := &deviceOut{b: b, name: env.Chain + "/" + env.ID, output: env.Output, countError: env.CountError}
	var err error
	if o.device, err = stringProp(props, "device"); err != nil {
		return nil, err
	}
	if o.property, err = stringProp(props, "property"); err != nil {
		return nil, err
	}
	o.value, o.hasValue = props["value"], props["value"] != nil
	if o.device == "" && o.property != "" && !env.Restoring {
		// No fixed device: what no device of any kind could take.
		if err := b.home.Kinds().Settable(o.property, o.value, o.hasValue); err != nil {
			return nil, err
		}
	}
	if o.device != "" {
		if _, err := b.home.Device(o.device); err != nil {
			if env.Restoring { // deleted since it was saved: Process refuses until it is back
				return o, nil
			}
			return nil, invalidf("property \"device\": %v", err)
		}
		if o.property != "" {
			if err := b.settable(o.device, o.property); err != nil {
				return nil, err
			}
			if o.hasValue {
				if err := b.home.ValidateDeviceUpdate(o.device, sim.DeviceUpdate{Properties: map[string]any{o.property: o.value}}); err != nil {
					return nil, err
				}
			}
		}
	}
	return o, nil
}

// Process checks the message's update at once and applies it at the current
// simulated time through the home's scheduler. An invalid message is an
// error (counted, and written to the engine's output); nothing of it is
// applied.
func (o *deviceOut) Process(_ string, m mediation.Message, out mediation.Emitter) error {
	id, prop, value, err := o.target(m)
	if err == nil {
		err = o.b.settable(id, prop)
	}
	if err == nil {
		u := sim.DeviceUpdate{Properties: map[string]any{prop: value}}
		depth := o.b.cause()
		if depth >= MaxCascade {
			err = invalidf("%s.%s not set: %d device-out changes in a row, each set off by the one before through the home, at this simulated instant (bridge.MaxCascade): a loop, such as a device-out setting what a device-in of its chain watches, is cut", id, prop, depth)
		} else if err = o.b.home.ValidateDeviceUpdate(id, u); err == nil {
			o.b.home.After(0, func() {
				defer o.b.applied(o.b.apply(depth))
				// The home may have changed since the check (the device
				// deleted, say): the change is then refused, and counted
				// as an error of the component, as one refused at once.
				if _, err := o.b.home.UpdateDevice(id, u); err != nil {
					fmt.Fprintf(o.output, "%s: %v\n", o.name, err)
					if o.countError != nil {
						o.countError()
					}
				}
			})
			return nil
		}
	}
	fmt.Fprintf(o.output, "%s: %v\n", o.name, err)
	return err
}

// cause returns the cascade depth of a change device-out schedules now:
// one more than that of the change being applied, when one is and a
// device-in is passing a change on (the message is then, nearly always,
// one that change caused, on the goroutine that applies it: a message
// from elsewhere that comes at that very moment is taken for one), else 0.
func (b *Bridge) cause() int {
	b.cmu.Lock()
	defer b.cmu.Unlock()
	if b.applying > 0 && b.sending > 0 {
		return b.depth + 1
	}
	return 0
}

// apply records that a change of cascade depth depth is being applied,
// until applied(prev) is called with what it returns.
func (b *Bridge) apply(depth int) (prev int) {
	b.cmu.Lock()
	defer b.cmu.Unlock()
	b.applying++
	prev, b.depth = b.depth, depth
	return prev
}

// applied ends what apply began.
func (b *Bridge) applied(prev int) {
	b.cmu.Lock()
	defer b.cmu.Unlock()
	b.applying--
	b.depth = prev
}

// settable refuses a property the device's kind does not let a client set
// (Location, a derived property): the home would ignore it.
func (b *Bridge) settable(id, prop string) error {
	d, err := b.home.Device(id)
	if err != nil {
		return err
	}
	k, _ := b.home.Kinds().Lookup(d.Type)
	return k.Settable(prop, nil, false)
}

// target works out which device property the message sets, and to what.
func (o *deviceOut) target(m mediation.Message) (id, prop string, value any, err error) {
	content, _ := m.Content.(map[string]any)
	pick := func(fixed string, keys ...string) string {
		if fixed != "" {
			return fixed
		}
		for _, k := range keys {
			if s, ok := content[k].(string); ok && s != "" {
				return s
			}
			if s, ok := m.Properties[k].(string); ok && s != "" {
				return s
			}
		}
		return ""
	}
	id, prop = pick(o.device, "device", "deviceId"), pick(o.property, "property")
	switch {
	case o.hasValue:
		value = o.value
	case content != nil && content["value"] != nil:
		value = content["value"]
	default:
		value = m.Properties["value"]
	}
	switch {
	case id == "":
		return "", "", nil, invalidf("message names no device: send {\"device\", \"property\", \"value\"}")
	case prop == "":
		return "", "", nil, invalidf("message names no property of device %s", id)
	case value == nil:
		return "", "", nil, invalidf("message gives no value for %s.%s", id, prop)
	}
	return id, prop, value, nil
}

// invalidf returns an error of kind mediation.ErrInvalid (sim.ErrInvalid is
// the same) with a formatted message: every error of the bridge is about a
// property or a message it was given.
func invalidf(format string, args ...any) error {
	return errkind.Errorf(mediation.ErrInvalid, format, args...)
}
