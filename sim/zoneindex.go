package sim

import (
	"cmp"
	"slices"
)

// zoneIndex holds, for each zone, the devices in it in creation order (the
// order of h.devices.list), so that what a zone's devices add up to is
// summed in the same order as a walk of every device would, and costs the
// zone's devices rather than the home's. It is kept by the places that
// commit a device's zone: creation, update, relocation, deletion. It also
// keeps what the physics notes of each zone (see zoneEntry). While few
// zones have an entry, it finds them by scanning a list, as ordered does.
type zoneIndex struct {
	few   []zoneRef            // the entries, while at most scanned
	zones map[*Zone]*zoneEntry // the entries, once more than scanned; nil before
	next  uint64               // creation number of the next device
	gen   uint64               // bumped when an entry is made or dropped (see stepScratch)
}

// zoneRef is a zone and its entry.
type zoneRef struct {
	z *Zone
	e *zoneEntry
}

// zoneEntry is what the index keeps of a zone. An entry stays while its
// zone exists, empty or not, so that its flags outlive its devices.
type zoneEntry struct {
	devices   []*device // in creation order
	watchers  []watcher // the devices whose behaviour watches persons, in creation order
	sums      zoneSums
	summed    bool        // sums and others hold what the devices add up to now
	maintains uint8       // which of the zone's Illuminance (maintainsLight) and Noise (maintainsNoise) its devices maintain
	watch     personsNeed // what its watchers need to be told of, together (see personsNeed)
	others    uint8       // which of playing and spraying one device of the zone does, and which two do (see othersDo), with the sums
	persons   int32       // persons in the zone, once the home counts them (see Home.personsInLocked)
	chunk     *zoneChunk  // where the zone's next devices come from in a large home (see slab); nil before
	heat      *heatCell   // the contract model's heat cell (see Home.heatCellLocked); nil before the zone's first heat update
}

// zoneSums is what the realistic model's step adds up over a zone's
// devices, kept between steps and summed again, in creation order, only
// after a device of the zone changed: most zones do not change from one
// step to the next, so a step costs the zones rather than every device.
type zoneSums struct {
	power   float64 // W: heaters' heat, other devices' consumption
	opening float64 // m² open to the outdoors
	flux    float64 // lm of the lights
}

// lookup returns z's entry, nil if it has none.
func (x *zoneIndex) lookup(z *Zone) *zoneEntry {
	if x.zones != nil {
		return x.zones[z]
	}
	for _, r := range x.few {
		if r.z == z {
			return r.e
		}
	}
	return nil
}

// entry returns z's entry, made if it has none.
func (x *zoneIndex) entry(z *Zone) *zoneEntry {
	if e := x.lookup(z); e != nil {
		return e
	}
	e := &zoneEntry{}
	x.gen++
	switch {
	case x.zones != nil:
		x.zones[z] = e
	case len(x.few) < scanned:
		x.few = append(x.few, zoneRef{z, e})
	default:
		x.zones = make(map[*Zone]*zoneEntry, len(x.few)+1)
		for _, r := range x.few {
			x.zones[r.z] = r.e
		}
		x.zones[z] = e
		x.few = nil
	}
	return e
}

// each calls fn with every zone that has an entry, and its entry.
func (x *zoneIndex) each(fn func(z *Zone, e *zoneEntry)) {
	for _, r := range x.few {
		fn(r.z, r.e)
	}
	for z, e := range x.zones {
		fn(z, e)
	}
}

// sumsOf returns the sums of e's zone, adding them up again if a device
// changed: zero for a zone without devices (e nil).
func (e *zoneEntry) sumsOf() zoneSums {
	if e == nil {
		return zoneSums{}
	}
	s := &e.sums
	if !e.summed {
		*s, e.summed, e.others = zoneSums{}, true, 0
		for _, d := range e.devices {
			b := &d.kind.Behavior
			if b.Heat != nil {
				s.power += d.heat
			} else {
				s.power += d.consumption
			}
			s.opening += d.opening
			if b.Light != nil {
				s.flux += d.flux
			}
			e.others |= e.others&d.does<<1 | d.does // a second one sets the Two bit
		}
	}
	return *s
}

// What device.does notes (playsOne, watersOne) and what zoneEntry.others
// notes: one device of the zone plays audio, two do; one sprays water, two
// do. Each Two bit is its One bit shifted by one.
const (
	playsOne uint8 = 1 << iota
	playsTwo
	watersOne
	watersTwo
)

// othersDo reports whether a device of e's zone other than d plays audio
// (one is playsOne) or sprays water (watersOne), as their last refresh
// found: a Speaker and a FloodSensor ask every simulated second, and a
// walk of the zone's devices for each of them cost the square of a big
// zone's devices (2,000 devices in one zone: 20 s a simulated hour). e may
// be nil.
//
// d counts itself out only as the zone counted it: d may not be filed in
// e (a device being created, or relocated into the zone, runs its Derive
// before it is filed) or be the working copy of the device filed (an
// update's), so the device filed with d's creation number is looked up
// rather than d's own bits trusted.
func (e *zoneEntry) othersDo(d *device, one uint8) bool {
	if e == nil {
		return false
	}
	e.sumsOf()
	switch {
	case e.others&(one<<1) != 0:
		return true
	case e.others&one == 0:
		return false
	}
	i, ok := findByN(e.devices, d.n)
	return !ok || e.devices[i].does&one == 0 // d not filed here, or not the one that does
}

// changed notes that a device of z changed, joined or left it.
func (x *zoneIndex) changed(z *Zone) {
	if e := x.lookup(z); e != nil {
		e.summed = false
	}
}

// in returns the devices in z, in creation order; nil for a nil zone.
func (x *zoneIndex) in(z *Zone) []*device {
	if e := x.lookup(z); e != nil {
		return e.devices
	}
	return nil
}

// What zoneEntry.maintains notes: the zone's lights maintain its
// Illuminance; its devices maintain its Noise.
const (
	maintainsLight uint8 = 1 << iota
	maintainsNoise
)

// lit reports whether the lights maintain z's Illuminance.
func (x *zoneIndex) lit(z *Zone) bool {
	e := x.lookup(z)
	return e != nil && e.maintains&maintainsLight != 0
}

// noisy reports whether the devices maintain z's Noise.
func (x *zoneIndex) noisy(z *Zone) bool {
	e := x.lookup(z)
	return e != nil && e.maintains&maintainsNoise != 0
}

// add numbers a new device and files it under its zone.
func (x *zoneIndex) add(d *device) {
	x.next++
	d.n = x.next
	x.insert(d, d.zone)
}

// moved files d under its zone after it left from.
func (x *zoneIndex) moved(d *device, from *Zone) {
	if from == d.zone {
		return
	}
	x.delete(d, from)
	x.insert(d, d.zone)
}

func (x *zoneIndex) insert(d *device, z *Zone) {
	if z == nil {
		return
	}
	e := x.entry(z)
	e.devices = insertByN(e.devices, d)
	if d.watchesPersons() {
		e.watchers = insertByN(e.watchers, watcherOf(d))
		e.watch |= d.watch
	}
	e.summed = false
}

// watchesPersons reports whether d's behaviour is told of persons' moves:
// the zone's watchers list holds it, and it comes from the zone's chunk of
// watchers (see zoneChunk).
func (d *device) watchesPersons() bool { return d.watch != 0 }

// watcher is a device that watches persons, as its zone's entry files it:
// with what a person's move reads of it before it calls it (its creation
// number, for the order of the calls, and what it needs to be told of),
// so that a move reads no device it does not call. Both share one word,
// so that a watcher takes 16 bytes, as many small homes keep some.
type watcher struct {
	d   *device
	key uint64 // d.n<<8 | d.watch: ordered as the creation numbers
}

// watcherOf returns what a zone files of d.
func watcherOf(d *device) watcher { return watcher{d: d, key: d.n<<8 | uint64(d.watch)} }

// num returns the watcher's creation number.
func (w watcher) num() uint64 { return w.key >> 8 }

// watch returns what the watcher needs to be told of.
func (w watcher) watch() personsNeed { return personsNeed(w.key) }

// personsNeed says which of the persons' moves in its zone a device's
// Persons behaviour must be told of; 0 for a device that watches no
// persons. Any Persons behaviour is told of every move, but three
// built-in ones, which read only how many persons the zone holds, or only
// whether it holds anyone, or only emit an event, can change nothing on
// the other moves: their devices are not called, nor read, then. A move
// within a zone of a large home called every sensor of the zone, each
// read from memory, to set what it already read. A zone's entry keeps the
// needs of its watchers together, so that a move reads no device of a
// zone where none is concerned.
type personsNeed uint8

const (
	needEveryMove personsNeed = 1 << iota // every move: any behaviour but the three below
	needWatched                           // while the home is watched: emits an event only (MotionSensor)
	needCount                             // while the home is watched, when a person entered or left: reads the zone's count (Camera; see device.sensesPersons)
	needOccupancy                         // while the home is watched, when the zone became empty or occupied: reads whether anyone is in it (PresenceSensor; see device.sensesPersons)
)

// unwatched reports whether a move may concern a watcher needing n in a
// home nobody watches. Until the home has had such a device (see
// Home.unwatchedMoves), a move in a home not watched reads no zone's entry
// of the zone index: a cache miss each in a large home.
func (n personsNeed) unwatched() bool { return n&needEveryMove != 0 }

// sensesPersons reports whether what the device senses of persons is read
// from its zone when it is read while nobody watches the home, not from
// what it stores (a watched home's readings are what it stores, as its
// events are: see Props.stored): it is a built-in PresenceSensor (its
// sensed presence is whether anyone is in its zone) or Camera (its count,
// how many are, while it records; 0 while it does not), both of which read
// no one outside every zone; not faulty (a faulty one keeps what it
// sensed); told only when its zone becomes empty or occupied, or gains or
// loses a person (one that RestoreDerived set to other than what its zone
// holds is told of every move, and reads what it stores). A home nobody
// watches does not call it at its zone's moves: what it stores may lag
// until a behaviour call (see Home.contextLocked) or an observer (see
// Home.syncSensedLocked) brings it up to date. See Home.sensedLocked.
func (d *device) sensesPersons() bool { return d.sensing() != nil && !d.faulty }

// sensing returns how the device reads its zone's persons, if it is a
// built-in PresenceSensor or Camera told only when its zone becomes empty
// or occupied, or gains or loses a person; nil otherwise.
func (d *device) sensing() *sensing {
	switch d.watch {
	case needOccupancy:
		return &presenceSensing
	case needCount:
		return &cameraSensing
	}
	return nil
}

// rewatch files anew what d, a watcher of persons, needs to be told of,
// after it changed (see Home.RestoreDerived).
func (x *zoneIndex) rewatch(d *device) {
	e := x.lookup(d.zone)
	if e == nil {
		return
	}
	if i, ok := findByN(e.watchers, d.n); ok {
		e.watchers[i] = watcherOf(d)
		e.watch |= d.watch
	}
}

// numbered is what a zone's entry files in creation order: its devices,
// its watchers.
type numbered interface{ num() uint64 }

// num returns the device's creation number.
func (d *device) num() uint64 { return d.n }

// findByN returns where the entity of creation number n is, or would be,
// in list, kept in creation order, and whether it is there.
func findByN[T numbered](list []T, n uint64) (int, bool) {
	return slices.BinarySearchFunc(list, n, func(e T, n uint64) int { return cmp.Compare(e.num(), n) })
}

// insertByN inserts v in list, kept in creation order.
func insertByN[T numbered](list []T, v T) []T {
	i, _ := findByN(list, v.num())
	return slices.Insert(list, i, v)
}

// deleteByN removes the entity of creation number n from list, kept in
// creation order, and reports whether it was there.
func deleteByN[T numbered](list []T, n uint64) ([]T, bool) {
	i, ok := findByN(list, n)
	if !ok {
		return list, false
	}
	list = slices.Delete(list, i, i+1)
	if len(list) == 0 {
		return nil, true // the array goes
	}
	return list, true
}

// delete removes d from z; nothing when z has no entry (it was deleted).
func (x *zoneIndex) delete(d *device, z *Zone) {
	e := x.lookup(z)
	if e == nil {
		return
	}
	e.devices, _ = deleteByN(e.devices, d.n)
	var ok bool
	if e.watchers, ok = deleteByN(e.watchers, d.n); ok {
		e.watch = 0
		for _, w := range e.watchers {
			e.watch |= w.watch()
		}
	}
	e.summed = false
}

func (x *zoneIndex) reset() {
	x.gen++
	clear(x.few)
	x.few, x.zones = x.few[:0], nil
}

// retire forgets what the physics noted of a zone being deleted (its
// lit and noisy flags, its sums, its persons: they are placed again from no
// zone), keeping its devices until they leave.
func (x *zoneIndex) retire(z *Zone) {
	if e := x.lookup(z); e != nil {
		e.maintains, e.summed, e.persons = 0, false, 0
	}
}

// personCount returns the persons counted in e's zone; e may be nil.
func (e *zoneEntry) personCount() int {
	if e == nil {
		return 0
	}
	return int(e.persons)
}

// forget drops what the index keeps of a deleted zone.
func (x *zoneIndex) forget(z *Zone) {
	x.gen++
	x.few = slices.DeleteFunc(x.few, func(r zoneRef) bool { return r.z == z })
	delete(x.zones, z)
}

// slab allocates devices and their heat timers in chunks, so that those
// made one after the other lie one after the other in memory: the heat
// updates of a large home walk the timers in creation order, and a walk
// through contiguous memory is several times faster than one through
// scattered objects once the home outgrows the processor's caches. A
// device placed in a zone comes from a chunk of that zone's, so that the
// devices of a zone lie together whatever order they were made in: what
// visits a zone (a person's move, its sums, its light) then reads a few
// pages instead of one per device. A zone has two chunks at a time (its
// watchers of persons, its other devices: see zoneChunk); each starts at
// two devices and doubles up to slabChunk, so that the slots it holds
// unused are fewer than its devices plus two, and fewer than slabChunk.
// A device of a chunk keeps its stored property values next to it (up to
// slabVals of them), so that reading a sensor's reading costs no second
// trip to memory. A chunk stays alive while any of its devices does. The
// first slabAfter devices and timers are allocated one by one, so a small
// home wastes nothing.
type slab struct {
	n       int // allocated so far
	devices []slabDevice
	timers  []timer
}

// slabDevice is a device of a chunk, with room for its stored property
// values: its props.vals point there while they fit (a device whose names
// change later gets its values from the heap, as any other).
type slabDevice struct {
	device
	vals [slabVals]any
}

// zoneChunk is what is left of a zone's current chunks of devices, and the
// sizes of its next ones: one for the devices that watch persons ([1]),
// one for the others ([0]), so that a person's move, which calls the
// watchers of two zones, reads a few adjacent ones of each.
type zoneChunk [2]struct {
	free []slabDevice
	next int
}

const (
	slabChunk    = 64
	slabAfter    = 256
	zoneChunkMin = 2
	slabVals     = 4 // as many as a built-in kind stores: a slabDevice is 256 bytes, four cache lines
)

// device returns the device to keep for src, a device being created (a
// heap copy the caller gives up), placed for the zone of entry e (nil:
// none): src itself in a small home, else a copy in a chunk with its
// stored values next to it. A zone's chunk is kept in its entry, and goes
// with it.
func (s *slab) device(e *zoneEntry, src *device) *device {
	if s.n++; s.n <= slabAfter {
		return src // the creation's own copy, on the heap and the device's from now on
	}
	free := &s.devices
	size := slabChunk
	if e != nil {
		if e.chunk == nil {
			e.chunk = new(zoneChunk)
		}
		c := &e.chunk[0]
		if src.watchesPersons() {
			c = &e.chunk[1]
		}
		free = &c.free
		if len(c.free) == 0 {
			c.next = max(c.next, zoneChunkMin)
			size, c.next = c.next, min(2*c.next, slabChunk)
		}
	}
	if len(*free) == 0 {
		*free = make([]slabDevice, size)
	}
	d := &(*free)[0]
	*free = (*free)[1:]
	d.device = *src
	if n := len(src.props.vals); n <= slabVals {
		d.props.vals = d.vals[:n:n]
		copy(d.vals[:], src.props.vals)
	}
	return &d.device
}

func (s *slab) timer() *timer {
	if s.n <= slabAfter {
		return new(timer)
	}
	if len(s.timers) == 0 {
		s.timers = make([]timer, slabChunk)
	}
	t := &s.timers[0]
	s.timers = s.timers[1:]
	return t
}
