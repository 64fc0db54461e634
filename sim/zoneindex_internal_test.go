package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestZoneIndex checks, after every step of random zone and device
// and person changes (creations, moves, resizes, deletions, a reset), that
// the zone index holds for each zone exactly the devices a walk of every
// device finds there, in the same order, and that the person counts are a
// walk's.
func TestZoneIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	h := MustNew(Config{WallClock: clock.NewMock(), Location: time.UTC, Physics: PhysicsRealistic})
	pos := func() *int { v := r.IntN(400); return &v }
	filed := 0   // steps with devices in zones
	counted := 0 // steps with persons counted by the map
	few := 0     // steps with the zones' entries in a list
	check := func(step int) {
		t.Helper()
		h.mu.Lock()
		defer h.mu.Unlock()
		want, wantWatching := map[string][]string{}, map[string][]string{}
		for _, d := range h.devices.list {
			if d.zone != nil {
				want[d.zone.ID] = append(want[d.zone.ID], d.ID)
				if d.kind.Behavior.Persons != nil {
					wantWatching[d.zone.ID] = append(wantWatching[d.zone.ID], d.ID)
				}
			}
		}
		got, watching := map[string][]string{}, map[string][]string{}
		h.inZone.each(func(z *Zone, e *zoneEntry) {
			if zz, ok := h.zones.get(z.ID); !ok || zz != z {
				t.Fatalf("step %d: the index holds deleted zone %s", step, z.ID)
			}
			for _, d := range e.devices {
				got[z.ID] = append(got[z.ID], d.ID)
			}
			for _, d := range e.watchers {
				watching[z.ID] = append(watching[z.ID], d.ID)
			}
		})
		if diff := gocmp.Diff(wantWatching, watching); diff != "" {
			t.Fatalf("step %d: watchers differ (-walk +index):\n%s", step, diff)
		}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Fatalf("step %d: index differs (-walk +index):\n%s", step, diff)
		}
		if len(want) > 0 {
			filed++
		}
		h.inZone.each(func(z *Zone, e *zoneEntry) {
			s := &e.sums
			if !s.valid {
				return
			}
			cached := *s
			s.valid = false
			if fresh := h.inZone.sumsOf(z); fresh != cached {
				t.Fatalf("step %d: zone %s: sums %+v kept, %+v now", step, z.ID, cached, fresh)
			}
		})
		if h.personsAt != nil {
			counted++
		}
		if h.inZone.zones == nil {
			few++
		}
		at, counts := map[string]int{}, map[string]int{}
		for _, p := range h.persons.list {
			at[p.Location]++
		}
		for loc := range at {
			counts[loc] = h.personsInLocked(loc)
		}
		for _, z := range h.zones.list {
			if n := h.personsInLocked(z.ID); n > 0 {
				counts[z.ID] = n
			}
		}
		if diff := gocmp.Diff(at, counts, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("step %d: person counts differ (-walk +counts):\n%s", step, diff)
		}
	}
	for i := range scanned + 8 { // counted by a map until the first reset
		h.CreatePerson(PersonSpec{ID: fmt.Sprintf("crowd%d", i), Type: "Man", PositionX: pos(), PositionY: pos()})
	}
	for i := range scanned + 8 { // zones past the first 32 with devices: found in a map
		x := 1000 + 20*i
		h.CreateZone(ZoneSpec{ID: fmt.Sprintf("block%d", i), LeftX: x, TopY: 1000, RightX: x + 10, BottomY: 1010})
		x += 5
		h.CreateDevice(DeviceSpec{ID: fmt.Sprintf("lamp%d", i), Type: "DimmerLight", PositionX: &x, PositionY: new(1005)})
	}
	if h.inZone.zones == nil {
		t.Fatalf("%d zones with devices are not found in a map", scanned+8)
	}
	for step := range 3000 {
		zone := fmt.Sprintf("z%d", r.IntN(8))
		dev := fmt.Sprintf("d%d", r.IntN(60))
		person := fmt.Sprintf("p%d", r.IntN(20)) // past scanned: counted by a walk, then by a map
		switch r.IntN(15) {
		case 9:
			h.CreatePerson(PersonSpec{ID: person, Type: "Man", PositionX: pos(), PositionY: pos()})
		case 10:
			h.UpdatePerson(person, PersonUpdate{PositionX: pos(), PositionY: pos()})
		case 11:
			h.DeletePerson(person)
		case 12:
			h.UpdateDevice(dev, DeviceUpdate{Properties: map[string]any{"heater.powerLevel": float64(r.IntN(10)) / 10}})
		case 13:
			h.UpdateDevice(dev, DeviceUpdate{State: new([]string{"activated", "deactivated"}[r.IntN(2)])})
		case 14:
			h.mu.Lock()
			for _, z := range h.zones.list {
				h.inZone.sumsOf(z) // as a step would
			}
			h.mu.Unlock()
		case 0:
			x, y := r.IntN(300), r.IntN(300)
			h.CreateZone(ZoneSpec{ID: zone, LeftX: x, TopY: y, RightX: x + 1 + r.IntN(200), BottomY: y + 1 + r.IntN(200)})
		case 1:
			h.UpdateZone(zone, ZoneUpdate{LeftX: pos(), TopY: pos()})
		case 2:
			h.DeleteZone(zone)
		case 3, 4:
			typ := []string{"Heater", "DimmerLight", "DoorWindowSensor", "Thermometer", "PresenceSensor", "MotionSensor"}[r.IntN(6)]
			h.CreateDevice(DeviceSpec{ID: dev, Type: typ, PositionX: pos(), PositionY: pos()})
		case 5, 6:
			h.UpdateDevice(dev, DeviceUpdate{PositionX: pos(), PositionY: pos()})
		case 7:
			h.DeleteDevice(dev)
		default:
			if r.IntN(50) == 0 {
				h.Reset()
			}
		}
		check(step)
	}
	if few < 100 {
		t.Fatalf("only %d steps of 3000 had the zones' entries in a list", few)
	}
	if counted < 100 {
		t.Fatalf("only %d steps of 3000 counted persons with the map", counted)
	}
	if filed < 1000 {
		t.Fatalf("only %d steps of 3000 had devices in zones", filed)
	}
}
