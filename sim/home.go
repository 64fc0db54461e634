package sim

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pervasim/pervasim/internal/errkind"
)

// Config configures a [Home]. The zero value is ready to use.
type Config struct {
	// WallClock is the real-time clock that simulated time follows while the
	// simulation runs live. Nil means the machine's clock; tests pass
	// clock.NewMock().
	WallClock clock.Clock
	// StartDate is where simulated time starts. The zero value means the
	// wall clock's current time.
	StartDate time.Time
	// Factor is the initial acceleration factor. Zero means 1.
	Factor int
	// Paused starts the clock paused.
	Paused bool
	// Location is the time zone of the clock's date strings. Nil means
	// time.Local.
	Location *time.Location
	// Physics is the physics model; empty means [PhysicsContract].
	Physics Physics
	// Environment, when set, changes the default environment (see
	// [Home.UpdateEnvironment]).
	Environment *EnvironmentUpdate
	// Kinds is the registry of the device kinds the home can create. Nil
	// means a new [NewKindRegistry], the home's own: kinds registered in it
	// through [Home.Kinds] reach no other home.
	Kinds *KindRegistry
	// MaxZones, MaxDevices and MaxPersons bound the zones, devices and
	// persons the home holds at once: a creation past one (a script's
	// too) is an error of kind [ErrBusy]. Zero means no bound; a negative
	// value is an error of kind [ErrInvalid].
	MaxZones, MaxDevices, MaxPersons int
}

// Home is a simulated home: zones, devices, persons and one clock. Every
// method is safe for concurrent use; the values returned are copies that the
// caller owns, but for [Home.Kinds] (the home's own registry) and the devices
// [Home.EachDevice] and [Home.ViewDevice] lend their fn under the home's lock.
// A method that fails changes nothing. Methods that only read
// (Device, Zones, Clock, ...) share the home's lock and run at once; a
// change takes it alone, so a read waits at most for the change under way.
//
// The zero value is not usable (it has no clock, kinds or schedule, and
// some methods panic on it): create a Home with [New], or [MustNew].
type Home struct {
	wall    clock.Clock
	loc     *time.Location
	physics Physics
	kinds   *KindRegistry

	gen     atomic.Uint64 // see Generation
	mu      sync.RWMutex  // guards everything below; readers share it
	clock   simClock
	zones   ordered[Zone, *Zone]
	devices ordered[device, *device]
	persons ordered[Person, *Person]
	subs    []*Subscription
	seq     uint64 // number of the last event

	span   int64 // simulated ms covered by the periodic timer running (see runDueLocked)
	beat   int64 // simulated ms the heat updates are aligned on (see alignedLocked); moves with the timers
	timers calendar
	pinned bool // while a timer runs, the time reads as pin
	// Two flags of the groups below, kept here beside pinned: bools
	// apart cost 16 bytes of padding, and a Home of more than 760 bytes
	// takes the next size class of the allocator (896 bytes with its
	// header, instead of 768): 128 bytes more for every small home.
	delivering     bool   // an observer delivery loop is running
	personsCounted bool   // the zone index counts each zone's persons (see personsInLocked)
	unwatchedMoves bool   // since the last Reset, a device was made, or RestoreDerived set one, that a move may concern while nobody watches (see personsNeed.unwatched)
	taps           uint32 // how many of the observers are taps (see Tap)
	maxZones       int32  // Config.MaxZones, MaxDevices and MaxPersons; 0: no bound
	maxDevices     int32
	maxPersons     int32
	pin            int64               // simulated ms
	inZone         zoneIndex           // the devices of each zone, and what the physics notes of it
	volGen         uint64              // bumped when a zone's shape may have changed: geometry, zones, Volume, WindowShare, the environment's window share
	grid           *zoneGrid           // finds the zone of a point in a plan of more than smallPlan zones; nil until then
	slab           slab                // where devices and their heat timers are allocated
	dirtyHeat      []*heatCell         // cells whose temperature is not yet in their zone
	pending        map[string][]*timer // timers the devices' behaviours scheduled, by device id; nil until one
	contexts       *DeviceContext      // the first free DeviceContext, linked by next (see contextLocked): a slice's 24 bytes took Home past its size class
	scratch        *stepScratch        // the realistic step's slices; nil until a step
	scripts        *scriptPlayer

	env   outdoors
	walls *walls // the walls the zones share and their nesting (realistic model); nil: to be worked out

	observers []*observer    // and taps; replaced on change, never changed in place
	outbox    []pendingEvent // events not yet delivered to observers; see delivering

	wake chan struct{} // wakes the live driver; never closed
}

// New returns an empty home configured by cfg. It returns an error of kind
// [ErrInvalid] when cfg holds an unknown physics model, an environment that
// [Home.UpdateEnvironment] would refuse, or an out-of-range factor or start
// date.
func New(cfg Config) (*Home, error) {
	h := &Home{wall: cfg.WallClock, loc: cfg.Location, wake: make(chan struct{}, 1),
		physics: cfg.Physics, kinds: cfg.Kinds, env: defaultOutdoors()}
	switch h.physics {
	case "":
		h.physics = PhysicsContract
	case PhysicsContract, PhysicsRealistic:
	default:
		return nil, invalidf("unknown physics %q: use %q or %q", cfg.Physics, PhysicsContract, PhysicsRealistic)
	}
	for _, b := range []struct {
		name string
		n    int
		to   *int32
	}{{"MaxZones", cfg.MaxZones, &h.maxZones}, {"MaxDevices", cfg.MaxDevices, &h.maxDevices}, {"MaxPersons", cfg.MaxPersons, &h.maxPersons}} {
		if b.n < 0 {
			return nil, invalidf("%s %d: want 0 (no bound) or more", b.name, b.n)
		}
		*b.to = int32(min(b.n, math.MaxInt32)) // more than a home can hold anyway
	}
	if h.kinds == nil {
		h.kinds = NewKindRegistry()
	}
	if cfg.Environment != nil {
		env, err := h.env.apply(*cfg.Environment, h.physics, h.env.temperature(0))
		if err != nil {
			return nil, err
		}
		h.env = env
	}
	if h.wall == nil {
		h.wall = clock.New()
	}
	if h.loc == nil {
		h.loc = time.Local
	}
	factor := cfg.Factor
	if factor == 0 {
		factor = 1
	}
	now := h.wall.Now()
	start := cfg.StartDate
	if start.IsZero() {
		start = now
	}
	ms := start.UnixMilli()
	u := ClockUpdate{Factor: &factor, StartDate: &ms}
	if err := u.validate(h.loc); err != nil {
		return nil, err
	}
	_, end := timeBounds(h.loc)
	h.clock = simClock{start: ms, end: end, anchor: now, factor: int64(factor), paused: cfg.Paused}
	if h.physics == PhysicsRealistic {
		h.startRealisticLocked()
	}
	return h, nil
}

// Physics returns the home's physics model.
func (h *Home) Physics() Physics { return h.physics }

// Kinds returns the registry of the device kinds the home can create.
// Register a kind in it to create devices of that kind in this home.
func (h *Home) Kinds() *KindRegistry { return h.kinds }

// DeviceKinds returns the kinds the home can create, in registration order,
// as its physics model sees them (without the other model's properties).
func (h *Home) DeviceKinds() []Kind {
	kinds := h.kinds.Kinds()
	for i, k := range kinds {
		kinds[i] = k.forPhysics(h.physics)
	}
	return kinds
}

// MustNew is like [New] but panics on a bad config. It suits tests and
// programs with a fixed config.
func MustNew(cfg Config) *Home {
	h, err := New(cfg)
	if err != nil {
		panic(err)
	}
	return h
}

// nowLocked returns the current simulated time in ms since the epoch; while
// a timer runs, the time it was due.
func (h *Home) nowLocked() int64 {
	if h.pinned {
		return h.pin
	}
	return h.clock.nowMillis(h.wall.Now())
}

// lockChange takes the home's lock for a change: it counts one more
// generation first, so a copy made at the previous one is known stale.
// End the change with unlockChange, which delivers its events.
func (h *Home) lockChange() {
	h.mu.Lock()
	h.gen.Add(1)
}

// Generation returns a number that changes whenever the home may change:
// when two calls return the same number, no zone, device, person, clock,
// script or environment changed in between (it may change without a
// visible change). A reader can keep what it derived from the home (an
// encoded device, say) with the generation read while it read the home,
// under the same lock (inside [Home.ViewDevice]'s fn, for instance), and
// use it for as long as Generation returns that number.
func (h *Home) Generation() uint64 { return h.gen.Load() }

// SetActionHook makes the script player apply each action of its scripts
// through hook: hook(a, apply) must call apply, at most once, which applies
// a and returns its error, and return that error, or another without
// calling it (the action is then not applied, and counts among the
// script's errors). The player calls it without the home's lock, from the
// goroutine that runs the home's timers (the live driver, or a caller of
// [Home.Advance]), so hook may call the home's methods, and wait for other
// goroutines that do; it must not wait for that goroutine. A durable
// store uses it to keep the actions with the changes it keeps, in the
// order they are applied. A nil hook applies the actions directly, as
// without a hook. SetActionHook is safe for concurrent use; actions begun
// before it returns use the hook they found.
func (h *Home) SetActionHook(hook func(a Action, apply func() error) error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.scripts == nil {
		if hook == nil {
			return
		}
		h.scripts = new(scriptPlayer)
	}
	h.scripts.hook = hook
}

// Now returns the current simulated time.
func (h *Home) Now() time.Time {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return time.UnixMilli(h.nowLocked()).In(h.loc)
}

// Location returns the home's time zone (Config.Location; time.Local
// when it was nil): the zone of its date strings and of the scripts it
// writes.
func (h *Home) Location() *time.Location { return h.loc }

// End returns the last instant of simulated time in the home: the last
// millisecond of the year 9999, in UTC or in the home's time zone,
// whichever comes first. A running clock, [Home.Advance] and
// [Home.RunUntil] stop there, so that every date prints in [DateLayout].
func (h *Home) End() time.Time { return time.UnixMilli(h.clock.end).In(h.loc) }

// Clock returns the state of the simulation clock.
func (h *Home) Clock() Clock {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.clock.snapshot(h.wall.Now(), h.loc)
}

// UpdateClock applies a partial change to the clock and returns the clock
// after it. Pausing or resuming the clock pauses or resumes the script that
// plays, if any (see [Home.SetScriptState]). An out-of-range factor or start
// date (outside the years 1 to 9999, in UTC or in the home's time zone) is
// an error of kind [ErrInvalid] and changes nothing. A running clock stops
// at the last millisecond of the year 9999 (the earlier of UTC's and the
// zone's: see [Home.End]) and reads it from then on, whatever its factor.
func (h *Home) UpdateClock(u ClockUpdate) (Clock, error) {
	if err := u.validate(h.loc); err != nil {
		return Clock{}, err
	}
	h.lockChange()
	defer h.unlockChange()
	return h.setClockLocked(u), nil
}

// setClockLocked applies a valid change to the clock: the schedule moves
// with a new start date, clock-modified is published when anything changed
// (setting the start date always restarts time), the playing script pauses
// or resumes with the clock, and the live driver looks again. It returns the
// clock after the change.
func (h *Home) setClockLocked(u ClockUpdate) Clock {
	now := h.wall.Now()
	before, beforeNow := h.clock, h.clock.nowMillis(now)
	defer func() {
		if h.clock.paused != before.paused {
			h.scriptFollowsClockLocked() // after clock-modified, as the events have always come
		}
	}()
	h.clock.apply(now, u)
	if u.StartDate != nil || u.CurrentTime != nil {
		h.shiftTimersLocked(h.clock.nowMillis(now) - beforeNow)
	}
	h.wakeDriver()
	c := h.clock.snapshot(now, h.loc)
	if h.clock.start != before.start || h.clock.factor != before.factor || h.clock.paused != before.paused || u.StartDate != nil || u.CurrentTime != nil {
		h.publishLocked(Event{Type: EventClockModified, Clock: &c})
	}
	return c
}

// Reset removes every zone, device and person, each with its removal event
// (the persons', then the devices', then the zones'). It keeps the clock,
// the environment, the script player's scripts (one that plays plays on,
// as a script's reset-context needs) and what [Home.After] scheduled.
func (h *Home) Reset() {
	h.lockChange()
	defer h.unlockChange()
	// Each list is emptied at once, after its events: removing its entities
	// one by one would shift the rest of the list at each, a quadratic
	// reset of a big home.
	for _, p := range h.persons.all() {
		h.publishLocked(Event{Type: EventPersonRemoved, PersonID: p.ID})
	}
	h.persons.clear()
	h.inZone.reset()
	for _, d := range h.devices.all() {
		h.cancelDeviceTimersLocked(d)
		h.publishLocked(Event{Type: EventDeviceRemoved, DeviceID: d.ID})
	}
	h.devices.clear()
	h.unwatchedMoves = false
	for _, z := range h.zones.all() {
		h.publishLocked(Event{Type: EventZoneRemoved, ZoneID: z.ID})
	}
	h.zones.clear()
	h.invalidateShapesLocked() // once the zones are gone: the grid goes with them
}

// entityID is the id an ordered files an entity under.
func (z *Zone) entityID() string         { return z.ID }
func (d *device) entityID() string       { return d.ID }
func (p *Person) entityID() string       { return p.ID }
func (p *playerScript) entityID() string { return p.id }

// ordered holds entities by id and in creation order. While it holds few,
// it finds them by scanning the list: a map costs more than its entities
// in a small home.
//
// Removing an entity from a long list (one with a map) leaves it in the
// list, noted in gone, until the next call of all takes every entity noted
// out at once: shifting the rest of a list of 100,000 devices at each
// removal made removing them one by one quadratic (3.4 s). all is safe
// under the home's read lock, with other readers: a removal takes the
// write lock, so the readers that find entities to take out all come
// after it and before the next writer, and take turns on gone's own lock;
// a reader that finds none reads a list nobody changes before the next
// writer. Everything else needs the write lock.
type ordered[T any, P interface {
	*T
	entityID() string
}] struct {
	byID map[string]*T // nil while the list is short (see scanned)
	list []*T          // in creation order, with the entities noted in gone: read it through all
	gone *removals[T]  // nil until an entity is removed from a long list
}

// removals are the entities removed from an ordered but still in its list.
type removals[T any] struct {
	mu      sync.Mutex  // held to take them out of the list
	pending atomic.Bool // set holds some: read without mu
	set     map[*T]struct{}
}

// scanned is the most entities an ordered finds without a map.
const scanned = 32

func (o *ordered[T, P]) get(id string) (*T, bool) {
	if o.byID != nil {
		v, ok := o.byID[id]
		return v, ok
	}
	for _, v := range o.list { // a short list holds no removed entity
		if P(v).entityID() == id {
			return v, true
		}
	}
	return nil, false
}

// all returns the entities, in creation order; the caller must not modify
// the slice.
func (o *ordered[T, P]) all() []*T {
	if g := o.gone; g != nil && g.pending.Load() {
		g.mu.Lock()
		if len(g.set) > 0 {
			o.list = slices.DeleteFunc(o.list, func(v *T) bool {
				_, ok := g.set[v]
				return ok
			})
			g.set = nil // not kept: it may have held every entity of a big home
			g.pending.Store(false)
		}
		g.mu.Unlock()
	}
	return o.list
}

// len returns the number of entities.
func (o *ordered[T, P]) len() int {
	if o.byID != nil {
		return len(o.byID)
	}
	return len(o.list) // a short list holds no removed entity
}

// full returns an error of kind ErrBusy when a home holding n entities
// (of kind what, bounded by field of Config and the server's flag) is at
// its bound max (0: no bound), else nil.
func full(n int, max int32, what, field, flag string) error {
	if max == 0 || n < int(max) {
		return nil
	}
	return errkind.Errorf(ErrBusy, "the home has %d %s, the most it may hold (the home's Config.%s; the server's -%s); delete one first", n, what, field, flag)
}

func (o *ordered[T, P]) add(id string, v *T) {
	o.list = append(o.list, v)
	switch {
	case o.byID != nil:
		o.byID[id] = v
	case len(o.list) > scanned:
		o.byID = make(map[string]*T, len(o.list))
		for _, x := range o.list {
			o.byID[P(x).entityID()] = x
		}
	}
}

// clear removes every entity.
func (o *ordered[T, P]) clear() {
	clear(o.list)
	o.list, o.byID, o.gone = o.list[:0], nil, nil
}

func (o *ordered[T, P]) remove(id string) {
	v, ok := o.get(id)
	if !ok {
		return
	}
	if o.byID == nil {
		i := slices.Index(o.list, v)
		o.list = slices.Delete(o.list, i, i+1)
		return
	}
	delete(o.byID, id)
	if o.gone == nil {
		o.gone = new(removals[T])
	}
	if o.gone.set == nil {
		o.gone.set = make(map[*T]struct{})
	}
	o.gone.set[v] = struct{}{}
	o.gone.pending.Store(true)
}
