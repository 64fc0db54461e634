package sim

import (
	"math"
	"slices"
	"time"
)

// Behavior says what the devices of a kind do in the simulation. Every field
// is optional; the zero Behavior does nothing, and a kind without behaviour
// is a bag of properties that clients read and set.
//
// The functions run while the home is locked, on the goroutine that changes
// the home or drives its time. They must be quick, must not block, and must
// not call the [Home]'s methods (that would deadlock): they see and change
// the home through their [DeviceContext]. Given the same inputs they must do
// the same thing, so that a simulation runs the same way every time.
//
// A deactivated device has no effect on the simulation: Heat, Light,
// Consumption, Opening and Noise count only while it is activated. A faulty
// device keeps its derived properties (a faulty sensor keeps its readings):
// Derive, Persons and Tick do not run while its fault is "yes", unless
// DeriveWhenFaulty says that Derive does.
type Behavior struct {
	// Heat returns the thermal power, in watts, that the device adds to its
	// zone's heat balance; negative removes heat. Heaters and coolers have it.
	Heat func(p Props) float64
	// PeriodProperty names the number property that holds, in
	// milliseconds, how often the contract model applies Heat to the zone.
	// Without it the contract model ignores Heat; the realistic model
	// integrates every zone's heat balance on its own step and ignores it.
	PeriodProperty string
	// Light returns the electric power, in watts, that the device turns into
	// light in its zone. The zone's illuminance follows from it (see the
	// physics models).
	Light func(p Props) float64
	// Consumption returns the electric power, in watts, that the device
	// draws. The realistic model counts it as heat given to the zone, unless
	// the kind has Heat; a zone's Electricity variable sums it there.
	Consumption func(p Props) float64
	// Opening returns the area, in m², of the opening through which the
	// device lets outdoor air into its zone: an open door or window. The
	// realistic model turns it into ventilation heat loss.
	Opening func(p Props) float64
	// Noise returns the sound level, in dB, that the device makes in its
	// zone. A zone where a noisy kind stands has a Noise variable: the
	// levels of its devices added as sound powers, 10·log10(Σ 10^(L/10)),
	// 0 when all are silent.
	Noise func(p Props) float64
	// Water reports whether the device sprays water on its zone now, as a
	// sprinkler does: flood sensors in the zone raise their alarm while
	// an active device of the zone does (they look every simulated second).
	Water func(p Props) bool
	// Derive recomputes the device's derived properties (with
	// [DeviceContext.Set]) from its properties and its zone. It runs when
	// the device is created, changed or moved, and when a zone whose
	// rectangle holds its position, before or after the change, is
	// created, moved, resized or deleted; its changes are part of that
	// change. It does not run when a zone variable changes or a person
	// moves: a reading of a variable is a property that Follows it, and
	// Persons sees persons move.
	Derive func(c *DeviceContext)
	// DeriveWhenFaulty makes Derive run while the device is faulty too:
	// its derived properties are not readings but follow from its own
	// properties and its zone, as a DimmerLight's max_illuminance does (a
	// faulty light still lights its zone).
	DeriveWhenFaulty bool
	// Persons runs when a person enters, moves within or leaves the
	// device's zone, and when a person in it is removed. A registered
	// kind's runs on each of those, whatever it does; three built-in
	// kinds' are skipped where they cannot change anything (a
	// PresenceSensor's while its zone stays as empty or as occupied as it
	// was, a Camera's while its zone's count stays the same, a
	// MotionSensor's while nobody watches the home: no observer, tap or
	// subscription), which spares a large home reading every sensor of a
	// zone at each step of a person; a PresenceSensor's and a Camera's,
	// too, while nobody watches the home: what they sense is then read
	// from their zone when they are read.
	Persons func(c *DeviceContext, m PersonMotion)
	// Changed runs after a client (the API, a script, a chain) changed the
	// device, with its properties before the change.
	Changed func(c *DeviceContext, old Props)
	// Every is the period of Tick, in simulated time; Tick and Every go
	// together. Tick runs every Every while the device exists, the first
	// time Every after it was created.
	Every time.Duration
	Tick  func(c *DeviceContext)
}

// Motion kinds of a [PersonMotion] and of the data of a motion sensor's
// device-event.
const (
	MotionEnter = "enter"
	MotionMove  = "move"
	MotionLeave = "leave"
)

// PersonMotion tells a device's Persons behaviour what a person did in its
// zone.
type PersonMotion struct {
	// PersonID is the person who moved.
	PersonID string
	// Motion is MotionEnter, MotionMove or MotionLeave (also when the
	// person was removed).
	Motion string
}

// DeviceContext is what a kind's [Behavior] sees of its device and of the
// home, for the length of one call: do not keep it. The home is locked
// meanwhile; see [Behavior].
type DeviceContext struct {
	h *Home
	d *device
	// live: changes are published as events of their own; otherwise they
	// join the change in progress, which publishes them.
	live bool
	// changed: a change joined the change in progress.
	changed bool
	// next is the next free context while this one is on the home's
	// free list.
	next *DeviceContext
}

// contextLocked returns a DeviceContext for a call of d's behaviour, from
// the home's free list: a large home calls behaviours millions of times a
// simulated day, and a context each was most of what it allocated. Give
// it back with releaseContextLocked once the call returned (behaviours
// must not keep it, see DeviceContext). Calls nest (a behaviour's change
// can run another's), so the list holds as many as the deepest nesting.
func (h *Home) contextLocked(d *device, live bool) *DeviceContext {
	if d.sensesPersons() && !h.watchedLocked() {
		// What it stores may lag its zone (see device.sensesPersons):
		// its behaviour starts from what it reads, as it would have had
		// the moves called it.
		d.props.set(h.sensedLocked(d))
	}
	if c := h.contexts; c != nil {
		h.contexts = c.next
		*c = DeviceContext{h: h, d: d, live: live}
		return c
	}
	return &DeviceContext{h: h, d: d, live: live}
}

// releaseContextLocked gives c back to the free list.
func (h *Home) releaseContextLocked(c *DeviceContext) {
	*c = DeviceContext{next: h.contexts}
	h.contexts = c
}

// ID returns the device's id.
func (c *DeviceContext) ID() string { return c.d.ID }

// Props returns the device's properties. They are the device's own: read
// them, and change them only with Set.
func (c *DeviceContext) Props() Props { return Props{d: c.d} }

// Active reports whether the device is activated.
func (c *DeviceContext) Active() bool { return c.d.active }

// Faulty reports whether the device's fault is "yes".
func (c *DeviceContext) Faulty() bool { return c.d.faulty }

// Now returns the current simulated time.
func (c *DeviceContext) Now() time.Time { return time.UnixMilli(c.h.nowLocked()).In(c.h.loc) }

// Physics returns the home's physics model.
func (c *DeviceContext) Physics() Physics { return c.h.physics }

// Set sets one of the device's properties. v is checked against the kind's
// spec when it defines the property (derived ones included); an invalid
// value is an error of kind [ErrInvalid] and changes nothing. Setting the
// value a property already has does nothing.
func (c *DeviceContext) Set(name string, v any) error {
	if name == PropState || name == PropFault || name == PropLocation {
		return invalidf("property %q cannot be set by a behaviour", name)
	}
	if spec, ok := c.d.kind.Property(name); ok {
		nv, err := spec.Check(v)
		if err != nil {
			return err
		}
		v = nv
	} else {
		nv, err := normalizeValue(name, v, 0)
		if err != nil {
			return err
		}
		v = nv
	}
	old, had := c.d.props.get(name)
	if had && valueEqual(old, v) {
		return nil
	}
	c.d.props.set(name, v)
	c.changed = true
	if c.live {
		recount := c.d.refresh()
		if c.h.watchedLocked() {
			s := c.d.snapshot(c.h)
			t := EventDevicePropertyUpdated
			if !had {
				t = EventDevicePropertyAdded
			}
			c.h.publishLocked(Event{Type: t, DeviceID: c.d.ID, Device: &s, Property: name, Value: cloneValue(v), OldValue: cloneValue(old)})
		}
		c.h.settleDeviceLocked(c.d, c.d.zone, recount)
	}
	return nil
}

// Zone returns a copy of the zone holding the device; false outside every
// zone.
func (c *DeviceContext) Zone() (Zone, bool) {
	if c.d.zone == nil {
		return Zone{}, false
	}
	return c.d.zone.clone(), true
}

// Persons returns the persons in the device's zone, in creation order; none
// outside every zone.
func (c *DeviceContext) Persons() []Person {
	var out []Person
	if c.d.zone == nil {
		return nil
	}
	for _, p := range c.h.persons.all() {
		if p.Location == c.d.zone.ID {
			out = append(out, *p)
		}
	}
	return out
}

// personNear returns the first person (in creation order) of the device's
// zone within scope plan units of it along both axes; "" when there is
// none, or the device is outside every zone. In a home that counts its
// persons by zone (see Home.personsInLocked), an empty zone answers without
// walking the persons: a zone change relocating many medical devices would
// otherwise walk them once for each.
func (c *DeviceContext) personNear(scope float64) string {
	if c.d.zone == nil {
		return ""
	}
	if c.h.countingPersonsLocked() && c.h.personsInLocked(c.d.zone) == 0 {
		return "" // an empty zone, in a home that counts its persons by zone: no walk
	}
	for _, p := range c.h.persons.all() {
		if p.Location == c.d.zone.ID && math.Abs(float64(p.PositionX)-float64(c.d.PositionX)) <= scope &&
			math.Abs(float64(p.PositionY)-float64(c.d.PositionY)) <= scope {
			return p.ID
		}
	}
	return ""
}

// PersonCount returns how many persons are in the device's zone; 0 outside
// every zone.
func (c *DeviceContext) PersonCount() int {
	return c.h.personsInLocked(c.d.zone)
}

// ZoneConsumption returns the electric power, in watts, that the other
// active devices of the device's zone draw; 0 outside every zone.
func (c *DeviceContext) ZoneConsumption() float64 {
	sum := 0.0
	if c.d.zone != nil {
		for _, d := range c.h.inZone.in(c.d.zone) {
			if d.n != c.d.n { // not by pointer: an update's Derive runs on a working copy of the device filed
				sum += d.consumption
			}
		}
	}
	return sum
}

// zoneOthersDo reports whether a device of the zone, other than this one,
// plays audio (playsOne) or sprays water (watersOne); false outside every
// zone.
func (c *DeviceContext) zoneOthersDo(one uint8) bool {
	if c.d.zone == nil {
		return false
	}
	return c.h.inZone.lookup(c.d.zone).othersDo(c.d, one)
}

// Illuminance returns the illuminance, in lux, that watts of this device's
// light would give its zone under the home's physics model; 0 outside
// every zone.
func (c *DeviceContext) Illuminance(watts float64) float64 {
	if c.d.zone == nil {
		return 0
	}
	return c.h.lightLux(c.d, c.d.zone, watts)
}

// Device returns a copy of another device of the home; false when there is
// none with that id. In a home nobody watches, a PresenceSensor's or a
// Camera's copy reads its zone's persons as they are now: during a
// person's move, the zone as the move left it, whichever of the two
// devices was made first (a watched home's sensors are told of the move
// one after the other, in the order they were made, and one made later
// still reads what it read before); during a zone's deletion, the deleted
// zone, empty, until the sensor is placed again.
func (c *DeviceContext) Device(id string) (Device, bool) {
	d, ok := c.h.devices.get(id)
	if !ok {
		return Device{}, false
	}
	return d.snapshot(c.h), true
}

// Consumption returns the electric power, in watts, that the device with
// the given id draws now: 0 when it does not exist, is deactivated or its
// kind has no Consumption.
func (c *DeviceContext) Consumption(id string) float64 {
	d, ok := c.h.devices.get(id)
	if !ok {
		return 0
	}
	return d.consumption
}

// Emit publishes a device-event of the device carrying data, as a motion
// sensor does when someone moves. A faulty device emits nothing.
func (c *DeviceContext) Emit(data any) {
	if c.d.faulty || !c.h.watchedLocked() {
		return
	}
	s := c.d.snapshot(c.h)
	c.h.publishLocked(Event{Type: EventDeviceEvent, DeviceID: c.d.ID, Device: &s, Value: data})
}

// After runs fn once d of simulated time has passed (at once, after what is
// already due, when d is not positive), with a context of its own, unless
// the device is removed first. It panics if fn is nil, at once, rather
// than when the timer fires.
func (c *DeviceContext) After(d time.Duration, fn func(c *DeviceContext)) {
	if fn == nil {
		panic("sim: DeviceContext.After with a nil function")
	}
	id := c.d.ID
	t := &timer{}
	t.fire = func(h *Home, _ int64) {
		h.dropPendingLocked(id, t)
		if dev, ok := h.devices.get(id); ok {
			c := h.contextLocked(dev, true)
			fn(c)
			h.releaseContextLocked(c)
		}
	}
	if c.h.pending == nil {
		c.h.pending = map[string][]*timer{}
	}
	c.h.pending[id] = append(c.h.pending[id], t)
	c.h.scheduleLocked(t, c.h.nowLocked()+max(d.Milliseconds(), 0))
}

// dropPendingLocked forgets t, a timer of device id that fired.
func (h *Home) dropPendingLocked(id string, t *timer) {
	ts := slices.DeleteFunc(h.pending[id], func(x *timer) bool { return x == t })
	if len(ts) == 0 {
		delete(h.pending, id)
	} else {
		h.pending[id] = ts
	}
}

// cancelDeviceTimersLocked cancels every timer of device d: its heat
// updates, its ticks and what its behaviour scheduled.
func (h *Home) cancelDeviceTimersLocked(d *device) {
	h.cancelLocked(d.timer)
	h.cancelLocked(d.ticker)
	for _, t := range h.pending[d.ID] {
		h.cancelLocked(t)
	}
	delete(h.pending, d.ID)
}
