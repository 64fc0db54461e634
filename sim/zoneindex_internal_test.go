package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

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
	// A heater that persons switch on: its behaviour's Set changes what its
	// zone's sums count, where a presence sensor's leaves it unchanged.
	kinds := NewKindRegistry()
	if err := kinds.Register(Kind{Name: "GreetingHeater", Service: "test.GreetingHeater",
		Properties: []PropertySpec{{Name: "power", Type: Number, Default: 0.0, Min: 0, Max: 5000}},
		Behavior: Behavior{
			Heat:    func(p Props) float64 { return p.Number("power") },
			Persons: func(c *DeviceContext, _ PersonMotion) { c.Set("power", 100*float64(c.PersonCount())) },
		}}); err != nil {
		t.Fatal(err)
	}
	h := MustNew(Config{WallClock: clock.NewMock(), Location: time.UTC, Physics: PhysicsRealistic, Kinds: kinds})
	pos := func() *int { v := r.IntN(400); return &v }
	filed := 0   // steps with devices in zones
	counted := 0 // steps with persons counted by the map
	few := 0     // steps with the zones' entries in a list
	check := func(step int) {
		t.Helper()
		h.mu.Lock()
		defer h.mu.Unlock()
		want, wantWatching := map[string][]string{}, map[string][]string{}
		moving := 0 // devices in a zone that a move may concern while the home is not watched
		for _, d := range h.devices.all() {
			if d.zone != nil {
				want[d.zone.ID] = append(want[d.zone.ID], d.ID)
				if d.kind.Behavior.Persons != nil { // by the kind, not by watchesPersons
					wantWatching[d.zone.ID] = append(wantWatching[d.zone.ID], d.ID)
				}
				if d.watch.unwatched() {
					moving++
				}
			}
		}
		if moving > 0 && !h.unwatchedMoves {
			t.Fatalf("step %d: %d devices in a zone that a move concerns while the home is not watched, and the home says none", step, moving)
		}
		got, watching := map[string][]string{}, map[string][]string{}
		h.inZone.each(func(z *Zone, e *zoneEntry) {
			if zz, ok := h.zones.get(z.ID); !ok || zz != z {
				t.Fatalf("step %d: the index holds deleted zone %s", step, z.ID)
			}
			for _, d := range e.devices {
				got[z.ID] = append(got[z.ID], d.ID)
			}
			var need personsNeed
			for _, w := range e.watchers {
				watching[z.ID] = append(watching[z.ID], w.d.ID)
				if w.num() != w.d.n || w.watch() != w.d.watch || w.watch()&^needEveryMove != w.d.entry.persons&^needEveryMove { // RestoreDerived may add needEveryMove
					t.Fatalf("step %d: zone %s files watcher %s as number %d needing %b, not %d needing %b (its kind: %b)",
						step, z.ID, w.d.ID, w.num(), w.watch(), w.d.n, w.d.watch, w.d.entry.persons)
				}
				need |= w.watch()
			}
			if need != e.watch {
				t.Fatalf("step %d: zone %s: its watchers need %b, its entry says %b", step, z.ID, need, e.watch)
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
			if !e.summed {
				return
			}
			cached := e.sums
			e.summed = false
			if fresh := e.sumsOf(); fresh != cached {
				t.Fatalf("step %d: zone %s: sums %+v kept, %+v now", step, z.ID, cached, fresh)
			}
		})
		if !h.personsCounted && len(h.persons.all()) > scanned {
			t.Fatalf("step %d: %d persons not counted by zone: a reader would walk them all", step, len(h.persons.all()))
		}
		if h.personsCounted {
			counted++
		}
		if h.inZone.zones == nil {
			few++
		}
		at, counts := map[string]int{}, map[string]int{}
		nowhere := 0
		for _, p := range h.persons.all() {
			if p.Location != LocationUnknown {
				at[p.Location]++
			} else {
				nowhere++
			}
		}
		for _, z := range h.zones.all() {
			if n := h.personsInLocked(z); n > 0 {
				counts[z.ID] = n
			}
		}
		if n := h.personsInLocked(nil); n != 0 {
			t.Fatalf("step %d: %d persons counted in no zone", step, n)
		}
		for _, z := range h.zones.all() {
			if got := h.personsHereLocked(z); got != at[z.ID] {
				t.Fatalf("step %d: zone %s read as holding %d persons, holds %d", step, z.ID, got, at[z.ID])
			}
		}
		if h.personsCounted {
			kept, total := 0, 0
			h.inZone.each(func(z *Zone, e *zoneEntry) {
				if e.persons != 0 {
					kept++
					total += int(e.persons)
				}
			})
			if kept != len(at) || total != len(h.persons.all())-nowhere {
				t.Fatalf("step %d: counts kept for %d zones (%d persons), %d have persons (%d) (a deleted zone's left?)",
					step, kept, total, len(at), len(h.persons.all())-nowhere)
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
		switch op := r.IntN(15); op {
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
			for _, z := range h.zones.all() {
				h.inZone.lookup(z).sumsOf() // as a step would
			}
			h.mu.Unlock()
		case 0, 1, 2:
			churnZone(h, r, zone, op)
		case 3, 4:
			typ := []string{"Heater", "DimmerLight", "DoorWindowSensor", "Thermometer", "PresenceSensor", "MotionSensor", "GreetingHeater"}[r.IntN(7)]
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

// TestSlabGroupsZones checks that past the first slabAfter devices, the
// watchers of persons of one zone come from chunks of that zone, one after
// the other in memory whatever order the zones' devices (watchers or not)
// were made in, in chunks that double from two, kept in the zones' entries,
// with their values inside; and that a deleted zone, or a reset, leaves no
// entry behind to hold a chunk.
func TestSlabGroupsZones(t *testing.T) {
	h := MustNew(Config{WallClock: clock.NewMock(), Location: time.UTC})
	for _, id := range []string{"a", "b"} {
		x := 0
		if id == "b" {
			x = 100
		}
		if _, err := h.CreateZone(ZoneSpec{ID: id, LeftX: x, TopY: 0, RightX: x + 50, BottomY: 50}); err != nil {
			t.Fatal(err)
		}
	}
	createKind := func(id, kind string, x int) *device {
		t.Helper()
		if _, err := h.CreateDevice(DeviceSpec{ID: id, Type: kind, PositionX: &x, PositionY: new(10)}); err != nil {
			t.Fatal(err)
		}
		d, _ := h.devices.get(id)
		return d
	}
	create := func(id string, x int) *device { return createKind(id, "PresenceSensor", x) }
	for i := range slabAfter {
		create(fmt.Sprintf("out%d", i), 500) // outside every zone, allocated one by one
	}
	var inA []*device
	for i := range 12 { // a and b in turn, watchers of persons among others
		inA = append(inA, create(fmt.Sprintf("a%d", i), 10))
		create(fmt.Sprintf("b%d", i), 110)
		createKind(fmt.Sprintf("t%d", i), "Thermometer", 10)
	}
	size := unsafe.Sizeof(slabDevice{})
	for _, d := range inA {
		sd := (*slabDevice)(unsafe.Pointer(d))
		if len(d.props.vals) == 0 || &d.props.vals[0] != &sd.vals[0] {
			t.Fatalf("device %s keeps its values away from it", d.ID)
		}
	}
	// Values inline, past them on the heap, and on the heap again once the
	// device's names change: all read back as given.
	for _, c := range []struct {
		id   string
		add  map[string]any // created with
		more map[string]any // then updated with
	}{
		{"few", map[string]any{"p0": 1.0, "p1": "x"}, nil},
		{"many", map[string]any{"p0": 1.0, "p1": 2.0, "p2": 3.0, "p3": 4.0, "p4": "y"}, nil},
		{"grown", map[string]any{"p0": 1.0}, map[string]any{"p1": 2.0, "p2": 3.0, "p3": 4.0, "p4": true}},
	} {
		x := 10
		if _, err := h.CreateDevice(DeviceSpec{ID: c.id, Type: "PresenceSensor", PositionX: &x, PositionY: new(10), Properties: c.add}); err != nil {
			t.Fatal(err)
		}
		d, _ := h.devices.get(c.id)
		sd := (*slabDevice)(unsafe.Pointer(d))
		if inline := len(d.props.vals) > 0 && &d.props.vals[0] == &sd.vals[0]; inline != (len(d.props.vals) <= slabVals) {
			t.Errorf("device %s: %d values, inline %v", c.id, len(d.props.vals), inline)
		}
		if c.more != nil {
			if _, err := h.UpdateDevice(c.id, DeviceUpdate{Properties: c.more}); err != nil {
				t.Fatal(err)
			}
		}
		got, _ := h.Device(c.id)
		for _, m := range []map[string]any{c.add, c.more} {
			for k, v := range m {
				if got.Properties[k] != v {
					t.Errorf("device %s: %s = %v, want %v", c.id, k, got.Properties[k], v)
				}
			}
		}
		if got.Properties[PropSensedPresence] != false {
			t.Errorf("device %s: %s = %v, want false", c.id, PropSensedPresence, got.Properties[PropSensedPresence])
		}
	}
	var runs []int // lengths of the runs of a's devices adjacent in memory
	run := 1
	for i := 1; i < len(inA); i++ {
		if uintptr(unsafe.Pointer(inA[i])) == uintptr(unsafe.Pointer(inA[i-1]))+size {
			run++
		} else {
			runs = append(runs, run)
			run = 1
		}
	}
	runs = append(runs, run)
	if diff := gocmp.Diff([]int{2, 4, 6}, runs); diff != "" { // chunks of 2, 4, 8
		t.Errorf("zone a's devices lie in runs (-want +got):\n%s", diff)
	}
	za, _ := h.zones.get("a")
	zb, _ := h.zones.get("b")
	if h.inZone.lookup(za).chunk == nil || h.inZone.lookup(zb).chunk == nil {
		t.Fatal("zones a and b keep no chunk in their entries")
	}
	if err := h.DeleteZone("a"); err != nil {
		t.Fatal(err)
	}
	if h.inZone.lookup(za) != nil || h.inZone.lookup(zb) == nil {
		t.Error("after a's deletion, a still has an entry (and its chunk), or b lost its own")
	}
	h.Reset()
	if len(h.inZone.few) != 0 || h.inZone.zones != nil {
		t.Error("after a reset, the index keeps entries (and their chunks)")
	}
}

// churnZone makes one random change to zone id of h, for the tests that
// drive a home at random: op 0 creates it somewhere, 1 moves it, 2 deletes
// it (a change that cannot be made, such as creating a zone that exists,
// is refused and changes nothing).
func churnZone(h *Home, r *rand.Rand, id string, op int) {
	switch op {
	case 0:
		x, y := r.IntN(300), r.IntN(300)
		h.CreateZone(ZoneSpec{ID: id, LeftX: x, TopY: y, RightX: x + 1 + r.IntN(200), BottomY: y + 1 + r.IntN(200)})
	case 1:
		x, y := r.IntN(400), r.IntN(400)
		h.UpdateZone(id, ZoneUpdate{LeftX: &x, TopY: &y})
	case 2:
		h.DeleteZone(id)
	}
}

// TestDeviceLayout guards what a person's move relies on: the fields it
// reads of each sensor it wakes (kind, zone, creation number, flags,
// properties) lie in the device's first 64 bytes, and a device of a chunk
// takes whole cache lines (256 bytes: its values on a line of their own),
// so that every device of a chunk starts a line as the chunk does.
func TestDeviceLayout(t *testing.T) {
	var d device
	hot := map[string]uintptr{
		"kind": unsafe.Offsetof(d.kind) + unsafe.Sizeof(d.kind), "zone": unsafe.Offsetof(d.zone) + unsafe.Sizeof(d.zone),
		"n": unsafe.Offsetof(d.n) + unsafe.Sizeof(d.n), "props": unsafe.Offsetof(d.props) + unsafe.Sizeof(d.props),
		"active": unsafe.Offsetof(d.active) + 1, "faulty": unsafe.Offsetof(d.faulty) + 1,
		"sensesLight": unsafe.Offsetof(d.sensesLight) + 1, "follows": unsafe.Offsetof(d.follows) + 1,
		"watch": unsafe.Offsetof(d.watch) + 1,
	}
	for name, end := range hot {
		if end > 64 {
			t.Errorf("device.%s ends at byte %d, past the first cache line", name, end)
		}
	}
	if size := unsafe.Sizeof(slabDevice{}); size != 256 {
		t.Errorf("a device of a chunk takes %d bytes, want 256 (four cache lines)", size)
	}
}

// TestHeatCellsGoWithTheirZones runs two contract homes through the same
// random changes (zones deleted and made again under the same id, moved
// and resized, their Volume set; heaters and coolers made, moved, changed
// and deleted; a reset now and then), one of which loses every heat cell
// before each advance, and checks after each that the zones agree to the
// bit, and that the cells kept belong where they are: each entry's cell
// is of the entry's zone, no entry is kept of a deleted zone, and a heat
// update's cell is that of its device's zone.
func TestHeatCellsGoWithTheirZones(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	kept := MustNew(Config{WallClock: clock.NewMock(), Location: time.UTC})
	fresh := MustNew(Config{WallClock: clock.NewMock(), Location: time.UTC})
	recreated := 0
	for step := range 3000 {
		seed := r.Uint64()
		for _, h := range []*Home{kept, fresh} {
			r := rand.New(rand.NewPCG(seed, 1))
			zone := fmt.Sprintf("z%d", r.IntN(6))
			device := fmt.Sprintf("d%d", r.IntN(12))
			x, y := r.IntN(400), r.IntN(400)
			switch op := r.IntN(13); op {
			case 0, 1, 2:
				if _, err := h.CreateZone(ZoneSpec{ID: zone, LeftX: x, TopY: y, RightX: x + r.IntN(200), BottomY: y + r.IntN(200)}); err == nil && h == kept && step > 0 {
					recreated++
				}
			case 3:
				churnZone(h, r, zone, 1)
			case 4:
				h.DeleteZone(zone)
			case 5:
				v := 1 + r.Float64()*100
				h.UpdateZone(zone, ZoneUpdate{Variables: map[string]*float64{VarVolume: &v}})
			case 6, 7:
				kind := []string{"Heater", "Cooler"}[r.IntN(2)]
				h.CreateDevice(DeviceSpec{ID: device, Type: kind, PositionX: &x, PositionY: &y, Properties: map[string]any{
					"heater.powerLevel": r.Float64(), "heater.updaterThread.period": float64(1000 * (1 + r.IntN(3))),
				}})
			case 8:
				h.UpdateDevice(device, DeviceUpdate{PositionX: &x, PositionY: &y})
			case 9:
				h.UpdateDevice(device, DeviceUpdate{Properties: map[string]any{"heater.powerLevel": r.Float64()}})
			case 10:
				h.DeleteDevice(device)
			case 11:
				if r.IntN(20) == 0 {
					h.Reset()
				}
			case 12: // a temperature set by hand or removed: the next update starts from it
				v := 270 + r.Float64()*40
				vars := map[string]*float64{VarTemperature: &v}
				if r.IntN(4) == 0 {
					vars[VarTemperature] = nil
				}
				h.UpdateZone(zone, ZoneUpdate{Variables: vars})
			}
		}
		fresh.mu.Lock()
		fresh.inZone.each(func(_ *Zone, e *zoneEntry) { e.heat = nil })
		for _, d := range fresh.devices.all() {
			if d.timer != nil {
				d.timer.heatCell = nil
			}
		}
		fresh.mu.Unlock()
		adv := time.Duration(1+r.IntN(3)) * time.Second
		for _, h := range []*Home{kept, fresh} {
			if err := h.Advance(adv); err != nil {
				t.Fatal(err)
			}
		}
		want, got := fresh.Zones(), kept.Zones()
		if diff := gocmp.Diff(want, got, gocmp.Comparer(func(a, b float64) bool {
			return math.Float64bits(a) == math.Float64bits(b)
		})); diff != "" {
			t.Fatalf("step %d: the home that kept its heat cells differs (-fresh +kept):\n%s", step, diff)
		}
		h := kept
		h.mu.Lock()
		var bad []string
		h.inZone.each(func(z *Zone, e *zoneEntry) {
			if cur, ok := h.zones.get(z.ID); !ok || cur != z {
				bad = append(bad, fmt.Sprintf("an entry of deleted zone %s", z.ID))
			}
			if e.heat != nil && e.heat.z != z {
				bad = append(bad, fmt.Sprintf("zone %s's entry has the cell of zone %s", z.ID, e.heat.z.ID))
			}
			if c := e.heat; c != nil && c.synced && !c.dirty {
				if v, ok := z.Variables[VarTemperature]; !ok || math.Float64bits(v) != math.Float64bits(c.temp()) {
					bad = append(bad, fmt.Sprintf("zone %s holds %v (set: %t), its cell says it holds %v", z.ID, v, ok, c.temp()))
				}
			}
		})
		for _, d := range h.devices.all() {
			if tm := d.timer; tm != nil && tm.heatCell != nil {
				if e := h.inZone.lookup(d.zone); d.zone == nil || e == nil || e.heat != tm.heatCell {
					bad = append(bad, fmt.Sprintf("device %s's heat update has a cell not its zone's", d.ID))
				}
			}
		}
		h.mu.Unlock()
		if bad != nil {
			t.Fatalf("step %d: %v", step, bad)
		}
	}
	if recreated < 100 {
		t.Fatalf("only %d zones made again", recreated)
	}
}
