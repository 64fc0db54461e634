package sim

import (
	"maps"
	"math"
	"reflect"
	"slices"
	"sync"
)

// Device is a simulated device as clients see it.
type Device struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Type is the canonical type, such as "iCasa.Heater".
	Type string `json:"type"`
	// Location is the id of the zone holding the device; empty when the
	// device lies outside every zone.
	Location string `json:"location,omitempty"`
	// PositionX and PositionY are -1 while the device is not placed: a
	// device created without a position is outside every zone, even one
	// that covers -1,-1, until it is given a position or a location.
	PositionX int `json:"positionX"`
	PositionY int `json:"positionY"`
	// Width and Height are the device's size on the plan, if set.
	Width  int    `json:"width,omitempty"`
	Height int    `json:"height,omitempty"`
	State  string `json:"state"`
	Fault  string `json:"fault"`
	// Services holds the three qualified interface names the device offers.
	Services []string `json:"services"`
	// Properties holds the kind's properties, any free ones, state, fault
	// and, while the device is in a zone, Location.
	Properties map[string]any `json:"properties"`
}

// device is a Device as the home keeps it, with its kind and simulation
// state. It holds what a Device holds without repeating what its kind
// knows (type, services) or what its properties say: the home keeps many.
type device struct {
	// What a person's move reads of each sensor it wakes, on the first
	// cache line: the kind, the zone, the creation number, the flags and
	// the properties.
	kind        *Kind       // as the home's physics sees it; shared, read only
	zone        *Zone       // the zone holding the device; nil outside every zone
	n           uint64      // creation number: its place in h.devices.list (see zoneIndex)
	props       props       // all but state, fault and Location (see Props)
	active      bool        // state is "activated"
	faulty      bool        // fault is "yes"
	sensesLight bool        // a property follows the zone's Illuminance
	follows     bool        // a property follows a zone variable: see Props.stored
	unplaced    bool        // created without a position and not moved since: outside every zone, even one covering -1,-1
	does        uint8       // playsOne: active, audioSource.isPlaying (what a Speaker of its zone hears); watersOne: active, Behavior.Water (what a FloodSensor senses); see refresh
	watch       personsNeed // what its Persons behaviour must be told of (see personsNeed); 0 if none

	// What the physics caches of an active device, from its behaviour
	// (zero, or -Inf for noise, while deactivated): see refresh.
	heat        float64 // W added to (+) or removed from (-) the zone
	light       float64 // W turned into light
	consumption float64 // W drawn
	opening     float64 // m² open to the outdoors
	noise       float64 // dB
	flux        float64 // light × its efficacy: lm, in the realistic model

	entry  *kindEntry     // the kind as registered: type and services
	timer  *timer         // the contract model's periodic heat update
	ticker *timer         // the behaviour's Tick
	frozen map[string]any // readings kept while the sensor is faulty

	ID, Name             string
	PositionX, PositionY int32 // within ±MaxCoordinate
	Width, Height        int32
}

// location returns the id of the zone holding the device, "" outside
// every zone.
func (d *device) location() string {
	if d.zone == nil {
		return ""
	}
	return d.zone.ID
}

// state returns the device's state property.
func (d *device) state() string {
	if d.active {
		return StateActivated
	}
	return StateDeactivated
}

// fault returns the device's fault property.
func (d *device) fault() string {
	if d.faulty {
		return FaultYes
	}
	return FaultNo
}

// view sets v to the device but for its properties, which it leaves nil;
// v shares the services.
func (d *device) view(v *Device) {
	*v = Device{
		ID: d.ID, Name: d.Name, Type: d.entry.typ, Location: d.location(),
		PositionX: int(d.PositionX), PositionY: int(d.PositionY), Width: int(d.Width), Height: int(d.Height),
		State: d.state(), Fault: d.fault(), Services: d.entry.services,
	}
}

// snapshot returns the device of home h as clients see it, with its live
// readings.
func (d *device) snapshot(h *Home) Device {
	var c Device
	d.view(&c)
	c.Services = slices.Clone(c.Services)
	c.Properties = d.snapshotProperties(h)
	return c
}

// snapshotProperties returns the properties of the device of home h as
// clients see them, with its live readings: a deep copy.
func (d *device) snapshotProperties(h *Home) map[string]any {
	p := Props{d, h}
	m := make(map[string]any, p.Len())
	for i := range p.Len() {
		k, v := p.At(i)
		m[k] = cloneValue(v)
	}
	return m
}

// withReadings returns a copy of d whose properties hold its live readings
// (as a snapshot's do): what a Changed behaviour sees of the device before
// a change. (A device that reads its zone's persons has no Changed.)
func (d *device) withReadings() *device {
	c := *d
	c.props = d.props.clone()
	for _, spec := range d.kind.Properties {
		if spec.Follows != "" {
			c.props.set(spec.Name, d.reading(spec))
		}
	}
	return &c
}

// clone returns a working copy for an update; it shares the timer and
// the services, which never change.
func (d *device) clone() *device {
	c := *d
	c.props = d.props.clone()
	c.frozen = maps.Clone(d.frozen)
	return &c
}

// DeviceSpec describes a device to create.
type DeviceSpec struct {
	// ID is required: see [ValidID].
	ID string
	// Name defaults to the id.
	Name string
	// Type names the kind: see [LookupKind].
	Type string
	// PositionX and PositionY place the device; nil leaves it at -1.
	PositionX, PositionY *int
	// Properties are merged over the kind's defaults, as in an update, except
	// state and fault: a new device is activated and not faulty.
	Properties map[string]any
}

// DeviceUpdate is a partial change of a device: a nil field keeps its value.
type DeviceUpdate struct {
	// Name, when set to "", resets the name to the id.
	Name *string
	// Type may only name the device's own kind; it cannot change.
	Type *string
	// PositionX and PositionY move the device.
	PositionX, PositionY *int
	// Location, when no position is given and it names another zone than
	// the device's, moves the device to the centre of that zone.
	Location *string
	// Width and Height set the device's size on the plan.
	Width, Height *int
	// State is "activated" or "deactivated"; Fault is "yes" or "no".
	State, Fault *string
	// Properties are merged into the device's: the kind's properties are
	// type- and range-checked, a nil value removes a free property, and
	// values sent for derived properties (Location, sensor readings,
	// max_illuminance) are ignored, so a device read earlier can be sent
	// back as it is.
	Properties map[string]any
}

// CreateDevice adds a device and returns it. A bad id, an unknown type or a
// bad property is an error of kind [ErrInvalid]; a used id is [ErrConflict].
func (h *Home) CreateDevice(spec DeviceSpec) (Device, error) {
	if err := checkID("device", spec.ID); err != nil {
		return Device{}, err
	}
	entry, err := h.kinds.lookup(spec.Type)
	if err != nil {
		return Device{}, err
	}
	kind := entry.view(h.physics)
	d := &device{entry: entry, kind: kind, ID: spec.ID, Name: spec.Name,
		PositionX: -1, PositionY: -1, active: true, watch: entry.persons}
	for _, p := range kind.Properties {
		d.follows = d.follows || p.Follows != ""
	}
	initial := make(map[string]any, len(kind.Properties))
	for _, p := range kind.Properties {
		initial[p.Name] = p.Default
	}
	d.props = newProps(initial)
	if d.Name == "" {
		d.Name = d.ID
	}
	if err := checkName("device name", d.Name); err != nil {
		return Device{}, err
	}
	x, y := -1, -1
	if err := setPosition(&x, &y, spec.PositionX, spec.PositionY); err != nil {
		return Device{}, err
	}
	d.PositionX, d.PositionY = int32(x), int32(y) // checked: within ±MaxCoordinate
	d.unplaced = spec.PositionX == nil && spec.PositionY == nil

	h.lockChange()
	defer h.unlockChange()
	if _, ok := h.devices.get(d.ID); ok {
		return Device{}, conflictf("device %q already exists", d.ID)
	}
	if err := full(h.devices.len(), h.maxDevices, "devices", "MaxDevices", "max-devices"); err != nil {
		return Device{}, err
	}
	h.placeDeviceLocked(d)
	// A new device is activated and not faulty, whatever its properties say.
	props := maps.Clone(spec.Properties)
	delete(props, PropState)
	delete(props, PropFault)
	if err := applyProperties(d, props); err != nil {
		return Device{}, err
	}
	h.placeDeviceLocked(d)
	d.refresh()
	// Valid: it moves to the slab (a failed creation takes no room there).
	var e *zoneEntry
	if d.zone != nil {
		e = h.inZone.entry(d.zone)
	}
	d = h.slab.device(e, d)
	h.devices.add(d.ID, d)
	h.inZone.add(d)
	h.unwatchedMoves = h.unwatchedMoves || d.watch.unwatched()
	h.publishDeviceLocked(EventDeviceAdded, d)
	h.startTimersLocked(d)
	h.settleDeviceLocked(d, nil, true)
	return d.snapshot(h), nil
}

// Device returns the device with the given id, or an error of kind
// [ErrNotFound].
func (h *Home) Device(id string) (Device, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	d, err := h.deviceLocked(id)
	if err != nil {
		return Device{}, err
	}
	return d.snapshot(h), nil
}

// deviceLocked returns device id, or an error of kind [ErrNotFound]; h.mu
// is held.
func (h *Home) deviceLocked(id string) (*device, error) {
	d, ok := h.devices.get(id)
	if !ok {
		return nil, notFoundf("device %q does not exist", truncate(id))
	}
	return d, nil
}

// Devices returns every device, in creation order.
func (h *Home) Devices() []Device {
	h.mu.RLock()
	defer h.mu.RUnlock()
	all := h.devices.all()
	out := make([]Device, len(all))
	for i, d := range all {
		out[i] = d.snapshot(h)
	}
	return out
}

// EachDevice calls fn with each device, in creation order, as [Home.Devices]
// would return it, without copying it: d holds the device but for its
// properties (d.Properties is nil), props its properties in name order, as
// a snapshot shows them (sensor readings included). fn runs under the
// home's lock: it must not keep d, props or anything they hold, nor call
// the home. The lock is shared with other readers: many may run at once.
// It serves the encoders that write every device, where copying each was
// most of the cost.
func (h *Home) EachDevice(fn func(d *Device, props Props)) {
	v := views.Get().(*Device)
	defer putView(v)
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, d := range h.devices.all() {
		d.view(v)
		fn(v, Props{d, h})
	}
}

// views keeps the Devices that EachDevice and ViewDevice fill, between
// calls.
var views = sync.Pool{New: func() any { return new(Device) }}

// putView returns v to views, holding nothing of a home.
func putView(v *Device) {
	*v = Device{}
	views.Put(v)
}

// ViewDevice calls fn with the device id as [Home.Device] would return it,
// without copying it, as [Home.EachDevice] does; it returns an error of kind
// [ErrNotFound] (fn is not called) for an unknown id. fn runs under the
// home's lock: it must not keep d, props or anything they hold, nor call
// the home.
func (h *Home) ViewDevice(id string, fn func(d *Device, props Props)) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	d, err := h.deviceLocked(id)
	if err != nil {
		return err
	}
	v := views.Get().(*Device)
	defer putView(v)
	d.view(v)
	fn(v, Props{d, h})
	return nil
}

// UpdateDevice applies a partial change to a device and returns the device
// after it. The change is validated in full before anything is applied: a
// bad value is an error of kind [ErrInvalid], a location naming no zone
// [ErrNotFound], and either leaves the device as it was.
func (h *Home) UpdateDevice(id string, u DeviceUpdate) (Device, error) {
	h.lockChange()
	defer h.unlockChange()
	cur, next, err := h.prepareDeviceUpdateLocked(id, u)
	if err != nil {
		return Device{}, err
	}
	h.placeDeviceLocked(next)
	next.refresh()

	old, from := cur.snapshot(h), cur.zone
	changed := cur.kind.Behavior.Changed
	var before *device
	if changed != nil {
		before = cur.withReadings()
	}
	*cur = *next
	h.inZone.moved(cur, from)
	h.publishDeviceDiffLocked(old, cur)
	h.retimeLocked(cur)
	h.settleDeviceLocked(cur, from, true)
	if changed != nil {
		c := h.contextLocked(cur, true)
		changed(c, Props{d: before})
		h.releaseContextLocked(c)
	}
	return cur.snapshot(h), nil
}

// ValidateDeviceUpdate reports the error UpdateDevice(id, u) would return
// now, without changing anything.
func (h *Home) ValidateDeviceUpdate(id string, u DeviceUpdate) error {
	h.lockChange()
	defer h.mu.Unlock()
	_, _, err := h.prepareDeviceUpdateLocked(id, u)
	return err
}

// prepareDeviceUpdateLocked validates u against device id and returns the
// device and its updated working copy.
func (h *Home) prepareDeviceUpdateLocked(id string, u DeviceUpdate) (cur, next *device, err error) {
	cur, err = h.deviceLocked(id)
	if err != nil {
		return nil, nil, err
	}
	next = cur.clone()
	if u.Type != nil {
		k, err := h.kinds.Lookup(*u.Type)
		if err != nil {
			return nil, nil, err
		}
		if k.Name != cur.kind.Name {
			return nil, nil, invalidf("device type cannot change from %s to %s", cur.entry.typ, k.Type())
		}
	}
	if u.Name != nil {
		next.Name = *u.Name
		if next.Name == "" {
			next.Name = next.ID
		}
		if err := checkName("device name", next.Name); err != nil {
			return nil, nil, err
		}
	}
	for _, s := range []struct {
		name string
		dst  *int32
		v    *int
	}{{"width", &next.Width, u.Width}, {"height", &next.Height, u.Height}} {
		if s.v == nil {
			continue
		}
		if *s.v < 0 || *s.v > MaxCoordinate {
			return nil, nil, invalidf("%s must be between 0 and %d, not %d", s.name, MaxCoordinate, *s.v)
		}
		*s.dst = int32(*s.v)
	}
	x, y := int(next.PositionX), int(next.PositionY)
	moved, err := h.moveLocked(&x, &y, u.PositionX, u.PositionY, u.Location)
	if err != nil {
		return nil, nil, err
	}
	next.PositionX, next.PositionY = int32(x), int32(y) // checked: within ±MaxCoordinate
	next.unplaced = next.unplaced && !moved
	// Placed now, so that a Location sent with a move is checked against
	// the new one.
	h.placeDeviceLocked(next)
	if err := applyProperties(next, u.Properties); err != nil {
		return nil, nil, err
	}
	if u.State != nil {
		if err := setState(next, *u.State); err != nil {
			return nil, nil, err
		}
	}
	if u.Fault != nil {
		if err := setFault(next, *u.Fault); err != nil {
			return nil, nil, err
		}
	}
	return cur, next, nil
}

// DeleteDevice removes a device. An unknown id is an error of kind
// [ErrNotFound].
func (h *Home) DeleteDevice(id string) error {
	h.lockChange()
	defer h.unlockChange()
	d, err := h.deviceLocked(id)
	if err != nil {
		return err
	}
	h.devices.remove(id)
	h.inZone.delete(d, d.zone)
	h.cancelDeviceTimersLocked(d)
	h.publishLocked(Event{Type: EventDeviceRemoved, DeviceID: id})
	h.settleZoneEffectsLocked(d, d.zone, true)
	return nil
}

// setPosition validates and stores the sent coordinates.
func setPosition(x, y *int, nx, ny *int) error {
	if nx != nil {
		if err := checkPosition("positionX", *nx); err != nil {
			return err
		}
	}
	if ny != nil {
		if err := checkPosition("positionY", *ny); err != nil {
			return err
		}
	}
	setIf(x, nx)
	setIf(y, ny)
	return nil
}

// moveLocked applies a position change, or else a move to the centre of the
// zone named by location (the current one too), and reports whether either
// was asked for (a device so moved is placed). A location that names no
// zone ("" and "unknown" included) is an error of kind ErrNotFound.
func (h *Home) moveLocked(x, y *int, nx, ny *int, location *string) (moved bool, err error) {
	if nx != nil || ny != nil {
		return true, setPosition(x, y, nx, ny)
	}
	if location == nil {
		return false, nil
	}
	z, ok := h.zones.get(*location)
	if !ok {
		return false, notFoundf("location: zone %q does not exist", truncate(*location))
	}
	*x, *y = z.Centre()
	return true, nil
}

// applyProperties merges props into d, validating each. d is a working copy:
// on error the caller drops it.
func applyProperties(d *device, props map[string]any) error {
	var changes []propChange // applied together at the end
	free := false            // whether a property the kind does not define is set
	for _, k := range slices.Sorted(maps.Keys(props)) {
		v := props[k]
		if err := checkKey("property name", k); err != nil {
			return err
		}
		switch k {
		case PropState:
			s, ok := v.(string)
			if !ok {
				return invalidf("property %q must be a string, not %s", k, describe(v))
			}
			if err := setState(d, s); err != nil {
				return err
			}
			continue
		case PropFault:
			s, ok := v.(string)
			if !ok {
				return invalidf("property %q must be a string, not %s", k, describe(v))
			}
			if err := setFault(d, s); err != nil {
				return err
			}
			continue
		case PropLocation:
			continue // derived from the position; see below
		}
		spec, defined := d.kind.Resolve(k)
		if defined {
			k = spec.Name // an alias sets the property itself
		}
		switch {
		case defined && spec.Derived:
			// Derived properties (Location, sensor readings, max_illuminance)
			// are read-only: what is sent for them is ignored, so a client
			// can send back a device it read earlier, stale values included.
			continue
		case defined:
			if v == nil {
				return invalidf("property %q is defined by %s devices and cannot be removed", k, d.kind.Name)
			}
			nv, err := spec.Check(v)
			if err != nil {
				return err
			}
			changes = append(changes, propChange{name: k, value: nv})
		case v == nil:
			changes = append(changes, propChange{name: k, remove: true})
		default:
			nv, err := normalizeValue(k, v, 0)
			if err != nil {
				return err
			}
			changes = append(changes, propChange{name: k, value: nv})
			free = true
		}
	}
	if len(changes) == 0 {
		return nil
	}
	if !free {
		d.props.apply(changes)
		return nil
	}
	before := d.freeProperties()
	d.props.apply(changes)
	if n := d.freeProperties(); n > MaxFreeProperties && n > before {
		return invalidf("device %q would hold %d properties beside its kind's, more than %d", truncate(d.ID), n, MaxFreeProperties)
	}
	return nil
}

func setState(d *device, s string) error {
	if err := checkState(s); err != nil {
		return err
	}
	d.active = s == StateActivated
	return nil
}

func checkState(s string) error {
	if s != StateActivated && s != StateDeactivated {
		return invalidf("state must be %q or %q, not %q", StateActivated, StateDeactivated, truncate(s))
	}
	return nil
}

func checkFault(s string) error {
	if s != FaultYes && s != FaultNo {
		return invalidf("fault must be %q or %q, not %q", FaultYes, FaultNo, truncate(s))
	}
	return nil
}

func setFault(d *device, s string) error {
	if err := checkFault(s); err != nil {
		return err
	}
	switch {
	case s == FaultYes && !d.faulty:
		d.freeze()
	case s == FaultNo:
		d.thaw()
	}
	d.faulty = s == FaultYes
	return nil
}

// placeDeviceLocked recomputes the device's location and derived properties
// from its position. It reports whether any of them changed.
func (h *Home) placeDeviceLocked(d *device) bool {
	var z *Zone
	if !d.unplaced {
		z = h.locateLocked(int(d.PositionX), int(d.PositionY))
	}
	changed := z != d.zone
	d.zone = z
	if h.deriveLocked(d) {
		changed = true
	}
	return changed
}

func (h *Home) publishDeviceLocked(t EventType, d *device) {
	e := Event{Type: t, DeviceID: d.ID}
	if h.watchedLocked() {
		s := d.snapshot(h)
		e.Device = &s
	}
	h.publishLocked(e)
}

// publishDeviceDiffLocked publishes the events that turn old into d; old
// is a snapshot the events may keep.
func (h *Home) publishDeviceDiffLocked(old Device, d *device) {
	if !h.watchedLocked() {
		return
	}
	// The events of one change show the same device after it: they share
	// one snapshot, and their values are its and old's (events are
	// read-only, see Event), so that a change of k properties of a device
	// of n costs k + n, not k times n.
	cur := d.snapshot(h)
	if old.PositionX != int(d.PositionX) || old.PositionY != int(d.PositionY) {
		h.publishLocked(Event{Type: EventDevicePositionUpdate, DeviceID: d.ID, Device: &cur})
	}
	if old.Name != d.Name || old.Width != int(d.Width) || old.Height != int(d.Height) {
		h.publishLocked(Event{Type: EventDeviceUpdated, DeviceID: d.ID, Device: &cur})
	}
	keys := slices.Sorted(maps.Keys(old.Properties))
	for k := range cur.Properties {
		if _, ok := old.Properties[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		ov, had := old.Properties[k]
		nv, has := cur.Properties[k]
		var t EventType
		switch {
		case had && !has:
			t = EventDevicePropertyRemoved
		case !had && has:
			t = EventDevicePropertyAdded
		case !valueEqual(ov, nv):
			t = EventDevicePropertyUpdated
		default:
			continue
		}
		h.publishLocked(Event{Type: t, DeviceID: d.ID, Device: &cur, Property: k, Value: nv, OldValue: ov})
	}
}

// MaxFreeProperties bounds the properties a device holds beside its kind's
// own (free properties, set by an update or a script): a change of each is
// an event that carries the whole device, so an update of many on a device
// of many would cost their product. An update or a creation that would
// leave a device with more is an error of kind [ErrInvalid].
const MaxFreeProperties = 1000

// freeProperties returns the number of d's properties that its kind does
// not define.
func (d *device) freeProperties() int {
	if d.props.names == nil {
		return 0
	}
	n := 0
	for _, name := range d.props.names.s {
		if _, ok := d.kind.Resolve(name); !ok {
			n++
		}
	}
	return n
}

// maxValueDepth bounds the nesting of free property values.
const maxValueDepth = 32

// normalizeValue checks that v is a JSON value (nil, bool, string, number,
// []any, map[string]any), turns every number into a finite float64 and
// returns a deep copy.
func normalizeValue(name string, v any, depth int) (any, error) {
	if depth > maxValueDepth {
		return nil, invalidf("property %q is nested deeper than %d levels", name, maxValueDepth)
	}
	switch x := v.(type) {
	case nil, bool:
		return x, nil
	case string:
		if err := checkText("property "+truncate(name), x, true, MaxStringLength); err != nil {
			return nil, err
		}
		return x, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := normalizeValue(name, e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			n, err := normalizeValue(name, e, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	}
	f, ok := toFloat(v)
	if !ok {
		return nil, invalidf("property %q holds %s, which is not a JSON value", name, describe(v))
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, invalidf("property %q must be a finite number", name)
	}
	return f, nil
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	case map[string]any:
		return cloneProps(x)
	}
	return v
}

func cloneProps(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

func valueEqual(a, b any) bool {
	switch a.(type) {
	case []any, map[string]any:
		return reflect.DeepEqual(a, b)
	}
	switch b.(type) {
	case []any, map[string]any:
		return false
	}
	return a == b
}
