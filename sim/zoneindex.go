package sim

import "slices"

// zoneIndex holds, for each zone, the devices in it in creation order (the
// order of h.devices.list), so that what a zone's devices add up to is
// summed in the same order as a walk of every device would, and costs the
// zone's devices rather than the home's. It is kept by the places that
// commit a device's zone: creation, update, relocation, deletion.
type zoneIndex struct {
	byZone   map[*Zone][]*device
	watchers map[*Zone][]*device // the devices whose behaviour watches persons
	sums     map[*Zone]*zoneSums
	next     uint64 // creation number of the next device
}

// zoneSums is what the realistic model's step adds up over a zone's
// devices, kept between steps and summed again, in creation order, only
// after a device of the zone changed: most zones do not change from one
// step to the next, so a step costs the zones rather than every device.
type zoneSums struct {
	valid   bool
	power   float64 // W: heaters' heat, other devices' consumption
	opening float64 // m² open to the outdoors
	flux    float64 // lm of the lights
}

// sumsOf returns z's sums, adding them up again if a device changed.
func (x *zoneIndex) sumsOf(z *Zone) *zoneSums {
	s := x.sums[z]
	if s == nil {
		if x.sums == nil {
			x.sums = map[*Zone]*zoneSums{}
		}
		s = &zoneSums{}
		x.sums[z] = s
	}
	if !s.valid {
		*s = zoneSums{valid: true}
		for _, d := range x.byZone[z] {
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
		}
	}
	return s
}

// changed notes that a device of z changed, joined or left it.
func (x *zoneIndex) changed(z *Zone) {
	if s := x.sums[z]; s != nil {
		s.valid = false
	}
}

// watching returns the devices in z that watch persons, in creation order.
func (x *zoneIndex) watching(z *Zone) []*device {
	if z == nil {
		return nil
	}
	return x.watchers[z]
}

// in returns the devices in z, in creation order; nil for a nil zone.
func (x *zoneIndex) in(z *Zone) []*device {
	if z == nil {
		return nil
	}
	return x.byZone[z]
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
	if x.byZone == nil {
		x.byZone, x.watchers = map[*Zone][]*device{}, map[*Zone][]*device{}
	}
	insertByN(x.byZone, z, d)
	if d.kind.Behavior.Persons != nil {
		insertByN(x.watchers, z, d)
	}
	x.changed(z)
}

// insertByN inserts d in m[z], kept in creation order.
func insertByN(m map[*Zone][]*device, z *Zone, d *device) {
	list := m[z]
	i, _ := slices.BinarySearchFunc(list, d.n, func(e *device, n uint64) int { return cmpUint(e.n, n) })
	m[z] = slices.Insert(list, i, d)
}

// deleteByN removes d from m[z], and m[z] once empty.
func deleteByN(m map[*Zone][]*device, z *Zone, d *device) {
	list := m[z]
	i, ok := slices.BinarySearchFunc(list, d.n, func(e *device, n uint64) int { return cmpUint(e.n, n) })
	if !ok {
		return
	}
	if list = slices.Delete(list, i, i+1); len(list) == 0 {
		delete(m, z)
	} else {
		m[z] = list
	}
}

func (x *zoneIndex) delete(d *device, z *Zone) {
	if z == nil {
		return
	}
	deleteByN(x.byZone, z, d)
	if d.kind.Behavior.Persons != nil {
		deleteByN(x.watchers, z, d)
	}
	x.changed(z)
}

func (x *zoneIndex) reset() {
	clear(x.byZone)
	clear(x.watchers)
	clear(x.sums)
}

// forget drops what the index keeps of a deleted zone.
func (x *zoneIndex) forget(z *Zone) { delete(x.sums, z) }

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// slab allocates devices and their heat timers in chunks, so that those
// made one after the other lie one after the other in memory: the heat
// updates of a large home walk them in creation order, and a walk through
// contiguous memory is several times faster than one through scattered
// objects once the home outgrows the processor's caches. A chunk stays
// alive while any of its devices does. The first slabAfter devices and
// timers are allocated one by one, so a small home wastes nothing.
type slab struct {
	n       int // allocated so far
	devices []device
	timers  []timer
}

const (
	slabChunk = 64
	slabAfter = 256
)

func (s *slab) device() *device {
	if s.n++; s.n <= slabAfter {
		return new(device)
	}
	if len(s.devices) == 0 {
		s.devices = make([]device, slabChunk)
	}
	d := &s.devices[0]
	s.devices = s.devices[1:]
	return d
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
