package sim

import (
	"cmp"
	"slices"
)

// PlanUnitMeters is the length of one plan unit, in metres.
const PlanUnitMeters = 0.014

// ZoneHeightUnits is the height of every zone, in plan units.
const ZoneHeightUnits = 100

// Contains reports whether the point (x, y) lies inside z. Edges are inclusive.
func (z Zone) Contains(x, y int) bool {
	return z.LeftX <= x && x <= z.RightX && z.TopY <= y && y <= z.BottomY
}

// area returns the zone's area in square plan units.
func (z Zone) area() int64 {
	return int64(z.RightX-z.LeftX) * int64(z.BottomY-z.TopY)
}

// AreaM2 returns the zone's floor area in square metres.
func (z Zone) AreaM2() float64 {
	return float64(z.RightX-z.LeftX) * PlanUnitMeters * float64(z.BottomY-z.TopY) * PlanUnitMeters
}

// VolumeM3 returns the zone's volume in cubic metres: its Volume variable
// when set, else its area times a height of [ZoneHeightUnits] plan units.
func (z Zone) VolumeM3() float64 {
	if v, ok := z.Variables[VarVolume]; ok {
		return v
	}
	return z.AreaM2() * ZoneHeightUnits * PlanUnitMeters
}

// Centre returns the zone's centre, truncated toward zero to plan units
// as positions are (the centre of -11..0 is -5).
func (z Zone) Centre() (x, y int) {
	return (z.LeftX + z.RightX) / 2, (z.TopY + z.BottomY) / 2
}

// smallPlan is the number of zones up to which locateLocked tests every
// zone rather than build a grid.
const smallPlan = 16

// locateLocked returns the zone that holds (x, y): the smallest by area of the
// zones containing it, ties going to the zone created first; nil when no zone
// contains the point.
func (h *Home) locateLocked(x, y int) *Zone {
	if zs := h.zones.all(); len(zs) <= smallPlan {
		var best *Zone
		var bestArea int64
		for _, z := range zs {
			if z.Contains(x, y) {
				if a := z.area(); best == nil || a < bestArea {
					best, bestArea = z, a
				}
			}
		}
		return best
	}
	if h.grid == nil {
		h.grid = new(zoneGrid)
	}
	if !h.grid.valid {
		h.grid.build(h.zones.all())
	}
	return h.grid.locate(x, y)
}

// relocateLocked recomputes, after a zone changed, the location of every
// device and person whose position lies in one of the rectangles (the
// zone's before and after the change: no other point's zone can change, as
// a point's zone is chosen among the zones containing it), in creation
// order, runs the Derive of those devices, settles their zones and
// publishes an event for each that moved between zones. The others are
// not touched: a zone change used to re-derive every device of the home,
// 70 ms a change with 100,000 devices.
func (h *Home) relocateLocked(areas ...Zone) {
	in := func(x, y int) bool {
		for i := range areas {
			if areas[i].Contains(x, y) {
				return true
			}
		}
		return false
	}
	watched := h.watchedLocked()
	for _, p := range h.persons.all() {
		if !in(p.PositionX, p.PositionY) {
			continue
		}
		from := p.Location
		if to, changed := h.placePersonLocked(p); changed {
			fromZ, _ := h.zones.get(from) // nil if it was just deleted
			h.countPersonLocked(fromZ, to)
			if watched {
				h.publishPersonLocked(EventPersonPositionUpdate, p)
			}
			h.personMovedLocked(p, from, fromZ, to, false, false)
		}
	}
	for _, d := range h.devicesNearLocked(areas) {
		if d.unplaced || !in(int(d.PositionX), int(d.PositionY)) {
			continue // outside every zone, whatever the zones
		}
		from := d.zone
		var old Device
		if watched {
			old = d.snapshot(h)
		}
		changed := h.placeDeviceLocked(d)
		d.refresh() // what its Derive set may change what it gives its zone, as after a creation or an update
		h.inZone.moved(d, from)
		if changed && watched {
			h.publishDeviceDiffLocked(old, d)
		}
		h.settleDeviceLocked(d, from, true)
	}
}

// devicesNearLocked returns, in creation order, devices among which are
// all those whose position lies in one of the areas: when every device is
// in a zone, the devices of the zones that meet an area (a device lies in
// its zone; the zone that changed is among them, by its rectangle before
// or after the change, and a deleted zone keeps its devices filed until
// they are relocated); else every device. A home built room by room, a
// zone and then its devices, would otherwise walk every device at each
// zone (1.9 s of a home of 5,000 rooms).
func (h *Home) devicesNearLocked(areas []Zone) []*device {
	var near []*device
	filed := 0
	h.inZone.each(func(o *Zone, e *zoneEntry) {
		filed += len(e.devices)
		for i := range areas {
			if a := &areas[i]; o.LeftX <= a.RightX && a.LeftX <= o.RightX && o.TopY <= a.BottomY && a.TopY <= o.BottomY {
				near = append(near, e.devices...)
				return
			}
		}
	})
	if all := h.devices.all(); filed != len(all) {
		return all // some are outside every zone
	}
	slices.SortFunc(near, func(a, b *device) int { return cmp.Compare(a.n, b.n) })
	return near
}
