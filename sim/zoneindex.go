package sim

import "slices"

// zoneIndex holds, for each zone, the devices in it in creation order (the
// order of h.devices.list), so that what a zone's devices add up to is
// summed in the same order as a walk of every device would, and costs the
// zone's devices rather than the home's. It is kept by the places that
// commit a device's zone: creation, update, relocation, deletion.
type zoneIndex struct {
	byZone map[*Zone][]*device
	next   uint64 // creation number of the next device
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
		x.byZone = map[*Zone][]*device{}
	}
	list := x.byZone[z]
	i, _ := slices.BinarySearchFunc(list, d.n, func(e *device, n uint64) int { return cmpUint(e.n, n) })
	x.byZone[z] = slices.Insert(list, i, d)
}

func (x *zoneIndex) delete(d *device, z *Zone) {
	if z == nil {
		return
	}
	list := x.byZone[z]
	i, ok := slices.BinarySearchFunc(list, d.n, func(e *device, n uint64) int { return cmpUint(e.n, n) })
	if !ok {
		return
	}
	list = slices.Delete(list, i, i+1)
	if len(list) == 0 {
		delete(x.byZone, z)
		return
	}
	x.byZone[z] = list
}

func (x *zoneIndex) reset() { clear(x.byZone) }

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
