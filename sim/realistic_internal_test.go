package sim

import (
	"cmp"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/benbjohnson/clock"
	gocmp "github.com/google/go-cmp/cmp"
)

// TestStepShapesKept checks, after each of many random changes and a
// realistic step, that the zones' thermal shapes the step keeps from one
// step to the next (while the home's volume generation stands) are those a
// fresh computation gives: every change a shape depends on (geometry,
// Volume and WindowShare variables, the environment's window share, the
// zones and their shared walls) must make the step compute them again.
// It also checks the entries the step keeps (see stepScratch.entries) and
// the decay factors it keeps, with windows opening and shutting so that
// conductances change from step to step.
func TestStepShapesKept(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	h := MustNew(Config{WallClock: clock.NewMock(), Location: time.UTC, Physics: PhysicsRealistic})
	num := func(lo, hi float64) *float64 { v := lo + r.Float64()*(hi-lo); return &v }
	kept, keptEntries, decays := 0, 0, 0
	for step := range 2000 {
		zone := fmt.Sprintf("z%d", r.IntN(8))
		switch op := r.IntN(10); op {
		case 0, 1, 2:
			churnZone(h, r, zone, op)
		case 3:
			h.UpdateZone(zone, ZoneUpdate{Variables: map[string]*float64{VarVolume: num(10, 200)}})
		case 4:
			h.UpdateZone(zone, ZoneUpdate{Variables: map[string]*float64{VarWindowShare: num(0, 1)}})
		case 5:
			h.UpdateZone(zone, ZoneUpdate{Variables: map[string]*float64{VarWindowShare: nil, VarVolume: nil}})
		case 6:
			h.UpdateEnvironment(EnvironmentUpdate{WindowShare: num(0, 1)})
		case 7: // a device somewhere: a zone it falls in gets an entry
			x, y := r.IntN(400), r.IntN(400)
			h.CreateDevice(DeviceSpec{ID: fmt.Sprintf("d%d", r.IntN(20)), Type: "Heater", PositionX: &x, PositionY: &y})
		case 8:
			h.DeleteDevice(fmt.Sprintf("d%d", r.IntN(20)))
		case 9: // a window opened or shut somewhere: the zone's conductance follows its temperature
			x, y := r.IntN(400), r.IntN(400)
			id := fmt.Sprintf("w%d", r.IntN(6))
			open := map[string]any{PropDoorWindowOpening: r.IntN(2) == 0}
			if _, err := h.UpdateDevice(id, DeviceUpdate{Properties: open}); err != nil {
				h.CreateDevice(DeviceSpec{ID: id, Type: "DoorWindowSensor", PositionX: &x, PositionY: &y, Properties: open})
			}
		}
		if err := h.Advance(time.Minute); err != nil {
			t.Fatal(err)
		}
		h.mu.Lock()
		if sc := h.scratch; sc != nil && len(sc.shapes) == len(h.zones.all()) && sc.shapesGen == h.volGen {
			kept++
			zs := h.zones.all()
			want := make([]thermalZone, len(zs))
			h.shapesLocked(want, make([]float64, len(zs)), zs, h.wallsLocked())
			if diff := gocmp.Diff(want, sc.shapes, gocmp.AllowUnexported(thermalZone{})); diff != "" {
				h.mu.Unlock()
				t.Fatalf("step %d: kept shapes differ from fresh ones (-fresh +kept):\n%s", step, diff)
			}
		}
		if sc := h.scratch; sc != nil && len(sc.decay) == len(h.zones.all()) {
			// Each zone's kept decay factor is that of this step's x.
			dt := float64(RealisticStep) / 1000
			for i := range h.zones.all() {
				if sc.g[i] <= 0 || sc.shapes[i].capacity <= 0 {
					continue
				}
				decays++
				x := sc.g[i] * dt / sc.shapes[i].capacity
				if sc.decayOf[i] != x || sc.decay[i] != math.Exp(-x) {
					h.mu.Unlock()
					t.Fatalf("step %d: zone %d's decay is exp(-%v) = %v, this step's exp(-%v) = %v", step, i, sc.decayOf[i], sc.decay[i], x, math.Exp(-x))
				}
			}
		}
		if sc := h.scratch; sc != nil && len(sc.entries) == len(h.zones.all()) && sc.entriesVol == h.volGen && sc.entriesIndex == h.inZone.gen {
			keptEntries++
			for i, z := range h.zones.all() {
				if want := h.inZone.lookup(z); sc.entries[i] != want {
					h.mu.Unlock()
					t.Fatalf("step %d: zone %s's kept entry is %p, its entry %p", step, z.ID, sc.entries[i], want)
				}
			}
		}
		h.mu.Unlock()
	}
	if kept < 500 || keptEntries < 500 || decays < 2000 {
		t.Fatalf("only %d of 2000 steps kept their shapes, %d their entries; %d decays checked", kept, keptEntries, decays)
	}
}

// TestWallsOfNarrowZones: a zone no wider than WallContactGap shares the
// wall along its top or bottom with the zone above or below it. Its left
// and right sides are then both within the gap of the other zone's, and the
// wall was looked for only there, where the sides overlap by nothing.
func TestWallsOfNarrowZones(t *testing.T) {
	cases := []struct {
		name   string
		a, b   ZoneSpec
		length float64 // m
	}{
		{"narrow over narrow", ZoneSpec{ID: "a", RightX: 10, BottomY: 100}, ZoneSpec{ID: "b", TopY: 100, RightX: 10, BottomY: 200}, 10 * PlanUnitMeters},
		{"narrow over wide", ZoneSpec{ID: "a", RightX: 20, BottomY: 100}, ZoneSpec{ID: "b", TopY: 100, RightX: 300, BottomY: 300}, 20 * PlanUnitMeters},
		{"wide over wide", ZoneSpec{ID: "a", RightX: 300, BottomY: 100}, ZoneSpec{ID: "b", TopY: 100, RightX: 300, BottomY: 200}, 300 * PlanUnitMeters},
		{"flat beside flat", ZoneSpec{ID: "a", RightX: 100, BottomY: 10}, ZoneSpec{ID: "b", LeftX: 100, RightX: 200, BottomY: 10}, 10 * PlanUnitMeters},
	}
	for _, c := range cases {
		h := MustNew(Config{WallClock: clock.NewMock(), Physics: PhysicsRealistic})
		for _, z := range []ZoneSpec{c.a, c.b} {
			if _, err := h.CreateZone(z); err != nil {
				t.Fatal(err)
			}
		}
		h.mu.Lock()
		contacts := h.wallsLocked().contacts
		h.mu.Unlock()
		if len(contacts) != 1 || math.Abs(contacts[0].length-c.length) > 1e-12 {
			t.Errorf("%s: walls %+v, want one of %v m", c.name, contacts, c.length)
		}
	}
}

// allPairs yields every pair (i, j), i < j, of n zones, in order.
func allPairs(n int) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for i := range n {
			for j := i + 1; j < n; j++ {
				if !yield(i, j) {
					return
				}
			}
		}
	}
}

// pairList collects what pairs yields.
func pairList(pairs iter.Seq2[int, int]) [][2]int {
	var l [][2]int
	for i, j := range pairs {
		l = append(l, [2]int{i, j})
	}
	return l
}

// TestNearPairs compares the walls worked out from nearPairs with those of
// every pair, on random plans of 1 to 400 zones: rooms side by side, a gap
// or two apart, overlapping, nested, zones of equal size, lines and points,
// zones spanning the plan, far-off zones, coordinates near the bounds. The
// contacts (in order) and parents must be the same, and every pair that
// nests or shares a wall must be among the near ones.
func TestNearPairs(t *testing.T) {
	gap := int(math.Floor(WallContactGap / PlanUnitMeters))
	sizes := []int{1, 2, smallPlan, smallPlan + 1, 40, 120, 400}
	grids, wides := 0, 0
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 11))
		n := sizes[int(seed)%len(sizes)]
		farOff := seed%3 == 0 // a plan with far-off zones has huge cells: no zone spans many
		zs := make([]*Zone, n)
		for i := range zs {
			var x, y, w, h int
			kind := r.IntN(8)
			if kind == 6 && !farOff {
				kind = 5
			}
			switch kind {
			case 0, 1, 2: // rooms of a grid, some a gap or so apart
				x, y = 100*r.IntN(12)+r.IntN(2*gap+2), 100*r.IntN(12)+r.IntN(2*gap+2)
				w, h = 100, 100
			case 3: // a part of a room
				x, y, w, h = r.IntN(1200), r.IntN(1200), r.IntN(60), r.IntN(60)
			case 4: // lines and points
				x, y = r.IntN(1200), r.IntN(1200)
				if r.IntN(2) == 0 {
					w = r.IntN(300)
				} else {
					h = r.IntN(300)
				}
			case 5: // across the plan
				x, y, w, h = r.IntN(100), r.IntN(1200), 1200+r.IntN(100), 20+r.IntN(100)
			case 6: // far off
				x, y, w, h = MaxCoordinate-r.IntN(1000), -MaxCoordinate+r.IntN(1000), r.IntN(500), r.IntN(500)
			default: // the same as another
				if i > 0 {
					o := zs[r.IntN(i)]
					x, y, w, h = o.LeftX, o.TopY, o.RightX-o.LeftX, o.BottomY-o.TopY
				}
			}
			zs[i] = &Zone{ID: fmt.Sprint(i), LeftX: x, TopY: y, RightX: x + w, BottomY: y + h}
		}
		pairs := nearPairs(zs, gap)
		got, want := wallsOf(zs, pairs, gap), wallsOf(zs, allPairs(n), gap)
		near := pairList(pairs)
		if again := pairList(pairs); !slices.Equal(near, again) {
			t.Fatalf("seed %d: a second walk of the near pairs gave %d pairs, the first %d", seed, len(again), len(near))
		}
		if diff := gocmp.Diff(want, got, gocmp.AllowUnexported(walls{}, contact{})); diff != "" {
			t.Fatalf("seed %d, %d zones: walls differ (-every pair +near pairs):\n%s", seed, n, diff)
		}
		if !slices.IsSortedFunc(near, func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) }) ||
			slices.ContainsFunc(near, func(p [2]int) bool { return p[0] >= p[1] }) || len(slices.Compact(slices.Clone(near))) != len(near) {
			t.Fatalf("seed %d: the near pairs are not distinct, ordered pairs i < j: %v", seed, near)
		}
		if n > smallPlan {
			grids++
			if len(near) >= n*(n-1)/2 {
				t.Errorf("seed %d: %d zones gave %d near pairs, as many as there are pairs", seed, n, len(near))
			}
		}
		if n > smallPlan && hasWideZone(zs, gap) {
			wides++
		}
	}
	if grids < 100 || wides < 40 {
		t.Fatalf("%d plans went through the grid, %d had a zone of more than maxZoneCells cells", grids, wides)
	}
}

// hasWideZone reports whether nearPairs' grid of the zones zs, grown by
// gap, has a zone spanning more than maxZoneCells of its cells, paired
// with every zone rather than through the cells.
func hasWideZone(zs []*Zone, gap int) bool {
	var f cellFile
	f.file(len(zs), 4, func(i int) (l, t, r, b int) {
		z := zs[i]
		return z.LeftX - gap, z.TopY - gap, z.RightX + gap, z.BottomY + gap
	})
	return len(f.wide) > 0
}

// BenchmarkWalls works out the walls of the day benchmarks' plans (rooms
// of 100 × 100 in rows of 10) of 500 and 5,000 zones, as a step after a
// change to the zones does. The cost grows with the zones, not with their
// pairs.
func BenchmarkWalls(b *testing.B) {
	for _, n := range []int{500, 5000} {
		b.Run(fmt.Sprintf("zones=%d", n), func(b *testing.B) {
			h := MustNew(Config{WallClock: clock.NewMock(), Physics: PhysicsRealistic})
			for i := range n {
				x, y := (i%10)*100, (i/10)*100
				if _, err := h.CreateZone(ZoneSpec{ID: fmt.Sprint("z", i), LeftX: x, TopY: y, RightX: x + 99, BottomY: y + 99}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			h.mu.Lock()
			defer h.mu.Unlock()
			for b.Loop() {
				h.walls = nil
				if len(h.wallsLocked().contacts) == 0 {
					b.Fatal("no walls")
				}
			}
		})
	}
}

// TestStepKeepsNothingItShouldNot runs two realistic homes through the same
// random changes, one of which loses its step's scratch before every step,
// and checks that their zones agree to the bit after each step: what the
// step keeps from one step to the next (shapes, entries, decay factors,
// conductances, the temperatures it starts from, the slices of a home of
// more than stackZones zones, the illuminances it left) must never change
// a result, whatever is set between two steps (temperatures and
// illuminances set by hand, some temperatures out of the model's bounds,
// either removed, lamps switched). The zones come and go so that the homes cross
// stackZones (a small home's slices on the stack, a larger one's kept)
// and smallPlan (every pair of zones, or the near ones, for the walls)
// both ways between two steps.
func TestStepKeepsNothingItShouldNot(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	kept := MustNew(Config{WallClock: clock.NewMock(), Location: time.UTC, Physics: PhysicsRealistic})
	fresh := MustNew(Config{WallClock: clock.NewMock(), Location: time.UTC, Physics: PhysicsRealistic})
	counts := map[int]bool{}
	keptSteps, heldZones := 0, 0
	for step := range 1500 {
		// The same change in both homes: the same random numbers for each.
		seed := r.Uint64()
		for _, h := range []*Home{kept, fresh} {
			r := rand.New(rand.NewPCG(seed, 1))
			num := func(lo, hi float64) *float64 { v := lo + r.Float64()*(hi-lo); return &v }
			zone := fmt.Sprintf("z%d", r.IntN(24))
			switch op := r.IntN(10); op {
			case 0, 1, 2, 3:
				// 150 steps creating more zones than deleting, then 150
				// deleting more: the homes grow and shrink across both bounds.
				ops := []int{0, 0, 1, 2}
				if step/150%2 == 1 {
					ops = []int{0, 2, 1, 2}
				}
				churnZone(h, r, zone, ops[op])
			case 4: // now and then no area nor volume: a zone the steps leave as it is, at a temperature set by hand
				u := ZoneUpdate{Variables: map[string]*float64{VarVolume: num(10, 200)}}
				if z, err := h.Zone(zone); err == nil && r.IntN(5) == 0 {
					u.RightX, u.Variables[VarVolume] = &z.LeftX, new(float64)
				}
				h.UpdateZone(zone, u)
			case 5:
				x, y := r.IntN(400), r.IntN(400)
				h.CreateDevice(DeviceSpec{ID: fmt.Sprintf("d%d", r.IntN(20)), Type: "Heater", PositionX: &x, PositionY: &y})
			case 6:
				h.DeleteDevice(fmt.Sprintf("d%d", r.IntN(20)))
			case 7:
				x, y := r.IntN(400), r.IntN(400)
				id := fmt.Sprintf("w%d", r.IntN(6))
				open := map[string]any{PropDoorWindowOpening: r.IntN(2) == 0}
				if _, err := h.UpdateDevice(id, DeviceUpdate{Properties: open}); err != nil {
					h.CreateDevice(DeviceSpec{ID: id, Type: "DoorWindowSensor", PositionX: &x, PositionY: &y, Properties: open})
				}
			case 8: // a temperature or an illuminance set by hand, a temperature now and then out of the model's bounds
				if r.IntN(2) == 0 {
					h.UpdateZone(zone, ZoneUpdate{Variables: map[string]*float64{VarTemperature: num(150, 450)}})
				} else {
					h.UpdateZone(zone, ZoneUpdate{Variables: map[string]*float64{VarIlluminance: num(0, 1000)}})
				}
			case 9:
				switch r.IntN(4) {
				case 0:
					h.UpdateZone(zone, ZoneUpdate{Variables: map[string]*float64{VarTemperature: nil}})
				case 1:
					h.UpdateZone(zone, ZoneUpdate{Variables: map[string]*float64{VarIlluminance: nil}})
				default: // a lamp switched, made or moved: the zones it lights are lit again between two steps
					x, y := r.IntN(400), r.IntN(400)
					id := fmt.Sprintf("l%d", r.IntN(6))
					on := map[string]any{PropPowerStatus: r.IntN(2) == 0}
					if _, err := h.UpdateDevice(id, DeviceUpdate{Properties: on, PositionX: &x, PositionY: &y}); err != nil {
						h.CreateDevice(DeviceSpec{ID: id, Type: "BinaryLight", PositionX: &x, PositionY: &y, Properties: on})
					}
				}
			}
		}
		fresh.mu.Lock()
		fresh.scratch = nil
		fresh.mu.Unlock()
		for _, h := range []*Home{kept, fresh} {
			if err := h.Advance(time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		want, got := fresh.Zones(), kept.Zones()
		counts[len(got)] = true
		kept.mu.Lock()
		held := kept.scratch != nil && kept.scratch.work != nil
		if sc := kept.scratch; sc != nil && sc.kept != nil && sc.kept.at == sc.writes && sc.kept.vol == kept.volGen && len(sc.kept.temps) == len(kept.zones.all()) {
			k := sc.kept
			// What the step kept is what the zones hold.
			for i, z := range kept.zones.all() {
				tv, il := z.Variables[VarTemperature], z.Variables[VarIlluminance]
				if k.temps[i] != min(max(tv, MinRealisticTemperature), MaxRealisticTemperature) || math.Float64bits(k.illum[i]) != math.Float64bits(il) {
					kept.mu.Unlock()
					t.Fatalf("step %d: zone %s holds %v K, %v lx; the step kept %v K, %v lx", step, z.ID, tv, il, k.temps[i], k.illum[i])
				}
				if k.held[i] && math.Float64bits(k.temps[i]) != math.Float64bits(tv) {
					kept.mu.Unlock()
					t.Fatalf("step %d: zone %s holds %v K, the step kept %v K as what it holds", step, z.ID, tv, k.temps[i])
				}
				if k.held[i] {
					heldZones++
				}
			}
			keptSteps++
		}
		kept.mu.Unlock()
		if held && len(got) <= stackZones {
			t.Fatalf("step %d: a home of %d zones keeps the slices of a larger one", step, len(got))
		}
		if diff := gocmp.Diff(want, got, gocmp.Comparer(func(a, b float64) bool {
			return math.Float64bits(a) == math.Float64bits(b)
		})); diff != "" {
			t.Fatalf("step %d (%d zones): the home that kept its scratch differs (-fresh +kept):\n%s", step, len(got), diff)
		}
	}
	for _, n := range []int{stackZones, stackZones + 1, smallPlan, smallPlan + 1} {
		if !counts[n] {
			t.Errorf("no step with %d zones", n)
		}
	}
	if keptSteps < 300 {
		t.Errorf("only %d steps kept the zones' temperatures and illuminances", keptSteps)
	}
	if heldZones < 1000 {
		t.Errorf("only %d zones written without reading their temperature", heldZones)
	}
}

// TestNearPairsHoldLittle: zones that all overlap make as many near pairs
// as any walk (2,000 zones: about two million), and working out their
// walls must not hold them all at once: it allocates what the grid and one
// zone's partners take, not what the pairs would.
func TestNearPairsHoldLittle(t *testing.T) {
	gap := int(math.Floor(WallContactGap / PlanUnitMeters))
	zs := make([]*Zone, 2000)
	for i := range zs {
		zs[i] = &Zone{ID: fmt.Sprint(i), LeftX: i % 7, TopY: i % 5, RightX: 500 + i%7, BottomY: 400 + i%5}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	w := wallsOf(zs, nearPairs(zs, gap), gap)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Errorf("the walls of %d overlapping zones allocated %d bytes, want at most 4 MiB", len(zs), got)
	}
	if len(w.parents) != len(zs) {
		t.Fatalf("walls of %d zones: %d parents", len(zs), len(w.parents))
	}
}

// TestStepScratchLetGo: a realistic home that shrinks lets go of what its
// step kept for more zones (the conductances, decay factors, shapes and
// entries, each as long as the zones), and a home left without zones, by
// deletions or a Reset, keeps nothing of its steps: the entries it kept
// would otherwise hold the zone index's entries of the zones gone, with
// their devices.
func TestStepScratchLetGo(t *testing.T) {
	type caps struct{ G, Decay, DecayOf, Shapes, Entries int }
	capsOf := func(h *Home) *caps {
		h.mu.Lock()
		defer h.mu.Unlock()
		sc := h.scratch
		if sc == nil {
			return nil
		}
		return &caps{cap(sc.g), cap(sc.decay), cap(sc.decayOf), cap(sc.shapes), cap(sc.entries)}
	}
	for _, reset := range []bool{false, true} {
		h := MustNew(Config{WallClock: clock.NewMock(), Location: time.UTC, Physics: PhysicsRealistic})
		zone := func(i int) string { return fmt.Sprint("z", i) }
		for i := range 100 {
			x, y := (i%10)*100, (i/10)*100
			if _, err := h.CreateZone(ZoneSpec{ID: zone(i), LeftX: x, TopY: y, RightX: x + 99, BottomY: y + 99}); err != nil {
				t.Fatal(err)
			}
			if _, err := h.CreateDevice(DeviceSpec{ID: fmt.Sprint("d", i), Type: "Heater", PositionX: &x, PositionY: &y}); err != nil {
				t.Fatal(err)
			}
		}
		step := func() {
			t.Helper()
			if err := h.Advance(time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		step()
		if diff := gocmp.Diff(&caps{100, 100, 100, 100, 100}, capsOf(h)); diff != "" {
			t.Fatalf("100 zones: the scratch's capacities (-want +got):\n%s", diff)
		}
		for i := 2; i < 100; i++ {
			if err := h.DeleteZone(zone(i)); err != nil {
				t.Fatal(err)
			}
		}
		step()
		if diff := gocmp.Diff(&caps{2, 2, 2, 2, 2}, capsOf(h)); diff != "" {
			t.Fatalf("down to 2 zones: the scratch's capacities (-want +got):\n%s", diff)
		}
		if reset {
			h.Reset()
		} else {
			for i := range 2 {
				if err := h.DeleteZone(zone(i)); err != nil {
					t.Fatal(err)
				}
			}
		}
		step()
		if c := capsOf(h); c != nil {
			t.Fatalf("no zone left (reset %v): the step's scratch is kept, %+v", reset, *c)
		}
	}
}

// TestStepScratchFitsItsSizeClass guards the realistic step's scratch,
// which every realistic home with zones allocates: at 192 bytes or fewer
// it takes the 192-byte size class; what only a large home keeps lies
// apart (keptZones), 48 bytes less for each of many small homes.
func TestStepScratchFitsItsSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(stepScratch{}); n > 192 {
		t.Errorf("a stepScratch is %d bytes, want at most 192", n)
	}
}
