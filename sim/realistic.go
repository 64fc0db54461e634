package sim

import (
	"iter"
	"math"
	"slices"
)

// Constants of the realistic model. The README gives the source of each.
const (
	// RealisticStep is how often, in simulated milliseconds, the realistic
	// model integrates every zone's heat balance and daylight.
	RealisticStep = 60_000
	// CeilingHeight is a zone's height, in metres, in the realistic model,
	// unless its Volume variable says otherwise (height = Volume / area).
	CeilingHeight = 2.5
	// Thermal transmittances, in W/(m²·K), of the envelope of a house of the
	// 1980s–1990s: outer walls, windows (double glazing), the roof above
	// every zone and the floor below it (a single storey).
	UWall   = 0.6
	UWindow = 2.8
	URoof   = 0.4
	UFloor  = 0.6
	// AirChangesPerHour is the infiltration of outdoor air, closed windows.
	AirChangesPerHour = 0.6
	// WallConductance is the heat transfer coefficient, in W/(m²·K), of the
	// wall between two zones that touch (iCasa 1.2.5's K).
	WallConductance = 0.724
	// WallContactGap is the widest gap, in metres, between two zones' facing
	// sides for them to share a wall (iCasa 1.2.5).
	WallContactGap = 0.3
	// ThermalMassPerM2 is the internal heat capacity of a room, in
	// J/(m²·K) of floor: walls, floor slab and furniture (ISO 13790's
	// "medium" class), added to the air's HeatCapacityPerM3 × volume.
	ThermalMassPerM2 = 165_000.0
	// PersonHeat is the sensible heat, in watts, that a person gives off.
	PersonHeat = 75.0
	// DefaultEfficacy is a light's default luminous efficacy, in lm/W: an
	// LED bulb of today.
	DefaultEfficacy = 100.0
	// UtilisationFactor is the share of a lamp's flux that reaches the
	// working plane (lumen method).
	UtilisationFactor = 0.6
	// Glazing and daylight: visible transmittance, solar heat gain
	// coefficient, the angle of sky seen from a window (degrees), the mean
	// reflectance of a room's surfaces, the luminous efficacy of daylight
	// (lm/W) and the share of the horizontal irradiance that a window of
	// unknown orientation receives.
	GlazingTransmittance = 0.7
	GlazingSolarGain     = 0.6
	WindowSkyAngle       = 80.0
	SurfaceReflectance   = 0.5
	DaylightEfficacy     = 110.0
	WindowIrradiance     = 0.5
	// Openings (BS 5925, single-sided, stack-driven): discharge coefficient
	// and the height of an opening, in metres.
	OpeningDischarge = 0.61
	OpeningHeight    = 1.5
	// Gravity, in m/s².
	Gravity = 9.81
	// Bounds of a zone's temperature in the realistic model, in kelvin, so
	// that absurd settings stay finite: -100 °C to 100 °C.
	MinRealisticTemperature = 173.15
	MaxRealisticTemperature = 373.15
)

// Zone variables with a meaning to the simulation, beyond the contract's.
const (
	// VarNoise is a zone's sound level, in dB, where noisy devices stand.
	VarNoise = "Noise"
	// VarElectricity is the electric power, in watts, that a zone's devices
	// draw (realistic model).
	VarElectricity = "Electricity"
	// VarWindowShare sets a zone's window area as a share of its floor area
	// (realistic model); without it the environment's WindowShare applies.
	VarWindowShare = "WindowShare"
)

// efficacy returns a light's luminous efficacy, lm/W.
func efficacy(d *device) float64 {
	if v, ok := toFloat(d.props.value(PropLuminousEfficacy)); ok {
		return v
	}
	return DefaultEfficacy
}

// thermalZone is what the realistic model computes of a zone's shape.
type thermalZone struct {
	area, height, volume float64 // m², m, m³
	windows              float64 // window area, m²
	envelope             float64 // conductance to the outdoors, W/K: walls, windows, roof, floor, infiltration
	capacity             float64 // J/K
	surfaces             float64 // area of floor, ceiling and walls, m²
	daylightFactor       float64 // average daylight factor of windows and surfaces
}

// shape returns the thermal shape of z, whose sides shared with other zones
// measure shared metres. A nested zone (see inside) has no envelope: its
// container's walls, windows, roof and floor are the building's.
func (h *Home) shape(z *Zone, shared float64, nested bool) thermalZone {
	t := thermalZone{area: z.AreaM2(), height: CeilingHeight}
	if v, ok := z.Variables[VarVolume]; ok && t.area > 0 && v > 0 {
		t.height = v / t.area
	}
	t.volume = t.area * t.height
	share := h.env.windowShare
	if s, ok := z.Variables[VarWindowShare]; ok && s >= 0 && s <= 1 { // see checkVariable: a value set in a contract home is ignored
		share = s
	}
	t.windows = share * t.area
	w := float64(z.RightX-z.LeftX) * PlanUnitMeters
	l := float64(z.BottomY-z.TopY) * PlanUnitMeters
	outer := max(2*(w+l)-shared, 0) * t.height
	opaque := max(outer-t.windows, 0)
	t.envelope = UWall*opaque + UWindow*t.windows + (URoof+UFloor)*t.area +
		HeatCapacityPerM3*AirChangesPerHour*t.volume/3600
	if nested {
		t.envelope = 0
	}
	t.capacity = HeatCapacityPerM3*t.volume + ThermalMassPerM2*t.area
	t.surfaces = 2*t.area + 2*(w+l)*t.height
	t.daylightFactor = averageDaylightFactor(t.windows, t.surfaces, GlazingTransmittance, WindowSkyAngle, SurfaceReflectance)
	return t
}

// shapesLocked works out the thermal shapes of the zones zs into shapes,
// with ws their walls and shared (zeroed, as long as zs) for the lengths
// of wall each shares. A nested zone's heat capacity is taken out of its
// container's (its floor, walls' share and air are the container's), down
// to a quarter of the container's own, so that the room does not hold the
// heat of its parts twice.
func (h *Home) shapesLocked(shapes []thermalZone, shared []float64, zs []*Zone, ws *walls) {
	for _, c := range ws.contacts {
		shared[c.a] += c.length
		shared[c.b] += c.length
	}
	for i, z := range zs {
		shapes[i] = h.shape(z, shared[i], ws.parents[i] >= 0)
	}
	var own []float64
	for i, p := range ws.parents {
		if p < 0 {
			continue
		}
		if len(own) == 0 {
			own = make([]float64, len(zs))
			for j := range shapes {
				own[j] = shapes[j].capacity
			}
		}
		shapes[p].capacity -= own[i]
	}
	for i := range own {
		shapes[i].capacity = max(shapes[i].capacity, own[i]/4)
	}
}

// contact is a wall two zones share.
type contact struct {
	a, b   int     // indexes in h.zones.list
	length float64 // m
}

// walls are the walls the zones share and how they nest, indexed as
// h.zones.list.
type walls struct {
	contacts []contact
	// parents holds the index of the smallest zone holding each zone
	// inside it (see inside), -1 for none.
	parents []int
}

// wallsLocked returns the walls the zones share (facing sides at most
// WallContactGap apart, over the length they overlap) and their nesting.
// It looks only at the pairs of zones that come within WallContactGap of
// each other (see nearPairs), in the order of a walk of every pair, so
// that nesting ties and the contacts' order are those of that walk.
func (h *Home) wallsLocked() *walls {
	if h.walls == nil {
		gap := int(math.Floor(WallContactGap / PlanUnitMeters))
		zs := h.zones.all()
		h.walls = wallsOf(zs, nearPairs(zs, gap), gap)
	}
	return h.walls
}

// wallsOf returns the walls of the zones zs as wallsLocked defines them,
// looking at the pairs (i, j) of indexes in zs that pairs yields, twice:
// they must hold every pair that nests or shares a wall, i < j, in order
// of i, then j.
func wallsOf(zs []*Zone, pairs iter.Seq2[int, int], gap int) *walls {
	var out []contact
	parents := make([]int, len(zs))
	for i := range parents {
		parents[i] = -1
	}
	for i, j := range pairs {
		switch a, b := zs[i], zs[j]; {
		case inside(a, b):
			nestIn(parents, zs, i, j)
		case inside(b, a):
			nestIn(parents, zs, j, i)
		}
	}
	// Walls: a nested zone has none (its container's are the walls).
	overlap := func(a0, a1, b0, b1 int) int { return min(a1, b1) - max(a0, b0) }
	for i, j := range pairs {
		a, b := zs[i], zs[j]
		if parents[i] >= 0 || parents[j] >= 0 {
			continue
		}
		// Side by side, else one above the other: a zone at most gap
		// wide has its left and right sides both near a zone above or
		// below it, where the sides overlap by nothing, and must still
		// share the wall along its top or bottom.
		n := 0
		if abs(a.RightX-b.LeftX) <= gap || abs(b.RightX-a.LeftX) <= gap {
			n = overlap(a.TopY, a.BottomY, b.TopY, b.BottomY)
		}
		if n <= 0 && (abs(a.BottomY-b.TopY) <= gap || abs(b.BottomY-a.TopY) <= gap) {
			n = overlap(a.LeftX, a.RightX, b.LeftX, b.RightX)
		}
		if n > 0 {
			out = append(out, contact{a: i, b: j, length: float64(n) * PlanUnitMeters})
		}
	}
	return &walls{contacts: out, parents: parents}
}

// nearPairs returns the pairs of zones (i, j), i < j, indexes in zs,
// whose rectangles grown by gap on every side meet (edges included), in
// order of i, then j: every pair of zones that may nest (they overlap) or
// share a wall (facing sides at most gap apart, overlapping), and a few
// more. A home of up to smallPlan zones gets every pair. A larger one's
// are found through a grid of about four cells per zone (zoneGrid's has
// one a zone: see zoneGrid.build): each grown rectangle is filed in the cells it covers (or, covering more
// than maxZoneCells, with the wide ones, paired with every zone), and a
// pair is taken in the one cell that holds the corner of where the two
// grown rectangles meet, so that the cost follows the pairs that come
// near each other rather than every pair (5,000 zones: 12.5 million pairs,
// 0.19 s a rebuild of the walls before). The pairs are made as they are
// walked, a zone's at a time, never all at once: zones that all overlap
// have as many pairs as any walk, but hold no more memory than their
// grid.
func nearPairs(zs []*Zone, gap int) iter.Seq2[int, int] {
	if len(zs) <= smallPlan {
		return func(yield func(int, int) bool) {
			for i := range zs {
				for j := i + 1; j < len(zs); j++ {
					if !yield(i, j) {
						return
					}
				}
			}
		}
	}
	type grown struct{ l, t, r, b int }
	rects := make([]grown, len(zs))
	for i, z := range zs {
		rects[i] = grown{z.LeftX - gap, z.TopY - gap, z.RightX + gap, z.BottomY + gap}
	}
	var f cellFile
	f.file(len(zs), 4, func(i int) (l, t, r, b int) { g := rects[i]; return g.l, g.t, g.r, g.b })
	isWide := make([]bool, len(zs))
	for _, i := range f.wide {
		isWide[i] = true
	}
	meet := func(i, j int32) (x, y int, ok bool) {
		a, b := rects[i], rects[j]
		x, y = max(a.l, b.l), max(a.t, b.t)
		return x, y, x <= min(a.r, b.r) && y <= min(a.b, b.b)
	}
	return func(yield func(int, int) bool) {
		var js []int32 // zone i's partners after it
		for i := range int32(len(zs)) {
			js = js[:0]
			if isWide[i] {
				for j := i + 1; j < int32(len(zs)); j++ {
					if _, _, ok := meet(i, j); ok {
						js = append(js, j)
					}
				}
			} else {
				g := rects[i]
				x0, x1, y0, y1 := f.span(g.l, g.t, g.r, g.b)
				for y := y0; y <= y1; y++ {
					for x := x0; x <= x1; x++ {
						c := y*f.nx + x
						list := f.at[f.start[c]:f.start[c+1]]
						k, _ := slices.BinarySearch(list, i)
						for _, j := range list[k+1:] {
							// Taken in the one cell holding the corner of where the two meet.
							if x, y, ok := meet(i, j); ok && f.index(x, y) == c {
								js = append(js, j)
							}
						}
					}
				}
				for _, j := range f.wide {
					if _, _, ok := meet(i, j); ok && j > i {
						js = append(js, j)
					}
				}
				slices.Sort(js)
			}
			for _, j := range js {
				if !yield(int(i), int(j)) {
					return
				}
			}
		}
	}
}

// inside reports whether zone in is a part of zone out's room (a sofa's
// corner, a bathroom scale's area), not a room of its own: smaller than
// out, not empty, and at least half of it within out (a zone drawn a
// little past its room's wall is still in the room). Zones of the same
// size are not nested.
func inside(in, out *Zone) bool {
	a := in.AreaM2()
	if a <= 0 || a >= out.AreaM2() {
		return false
	}
	w := min(in.RightX, out.RightX) - max(in.LeftX, out.LeftX)
	h := min(in.BottomY, out.BottomY) - max(in.TopY, out.TopY)
	return w > 0 && h > 0 && 2*float64(w)*float64(h) >= float64(in.RightX-in.LeftX)*float64(in.BottomY-in.TopY)
}

// nestIn makes zone j zone i's parent, unless i has a smaller one.
func nestIn(parents []int, zs []*Zone, i, j int) {
	if p := parents[i]; p < 0 || zs[j].AreaM2() < zs[p].AreaM2() {
		parents[i] = j
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// invalidateShapesLocked forgets the shared walls and the zone grid after
// zones changed. A home back to smallPlan zones or fewer, which scans its
// zones, lets its grid go, and the zones it filed.
func (h *Home) invalidateShapesLocked() {
	h.forgetWallsLocked()
	switch {
	case len(h.zones.all()) <= smallPlan:
		h.grid = nil
	case h.grid != nil:
		h.grid.valid = false
	}
}

// zoneAddedLocked is invalidateShapesLocked after zone z was created, the
// last of h.zones.list, except that a valid zone grid keeps z apart, up to
// as many zones as the square root of the home's, rather than being
// rebuilt at the next lookup: a home built room by room, a zone and then
// its devices, rebuilt its grid for every zone, the square of its zones in
// all (5,000 rooms of 20 devices: 2.7 s of rebuilds).
func (h *Home) zoneAddedLocked(z *Zone) {
	n := len(h.zones.all())
	if g := h.grid; g != nil && g.valid && len(g.added) < max(smallPlan, isqrt(n)) {
		h.forgetWallsLocked()
		g.add(z, n-1)
		return
	}
	h.invalidateShapesLocked()
}

// forgetWallsLocked forgets the shared walls and the zones' thermal shapes
// after zones changed.
func (h *Home) forgetWallsLocked() {
	h.walls = nil
	h.volGen++
}

// daylightThrough returns the daylight that reaches a zone of shape t
// through its windows, in lux, when the outdoor illuminance is lux: lux ×
// the zone's average daylight factor.
func daylightThrough(t *thermalZone, lux float64) float64 {
	if lux == 0 {
		return 0
	}
	return lux * t.daylightFactor
}

// meterLocked recomputes the Electricity variable of zone z: what its
// active devices draw, in watts.
func (h *Home) meterLocked(z *Zone) {
	sum := 0.0
	for _, d := range h.inZone.in(z) {
		sum += d.consumption
	}
	h.setVariableLocked(z, VarElectricity, &sum)
}

// stackZones is the most zones whose step works on slices on the stack:
// the step of a small home then keeps only what it caches (10,000 small
// homes of the realistic model, once run, hold 3 MB less).
const stackZones = 8

// stepScratch holds what stepLocked keeps between steps: the slices a step
// of a large home would otherwise allocate, as long as its zones, 1,440
// times a simulated day, and what it caches.
type stepScratch struct {
	// work holds the step's q, opening, shared, temps and gt of a home of
	// more than stackZones zones (a smaller home's are on the stack), and
	// g the zones' conductances of the last step (its decay factors are
	// of them).
	work, g []float64
	// decay[i] is zone i's last decay factor exp(-x), and decayOf[i] its
	// x: most zones' conductance, capacity and step stay the same from one
	// step to the next, and the same x gives the same factor.
	decay, decayOf []float64
	// shapes are the zones' thermal shapes, kept from one step to the next
	// while shapesGen is h.volGen: they change only with the zones'
	// geometry, their Volume and WindowShare variables, the environment's
	// window share and the walls they share, all of which bump volGen.
	// (Before the first step they are none, fewer than the zones.)
	shapes    []thermalZone
	shapesGen uint64
	// entries are the zones' entries in the zone index (nil: none), kept
	// while the zones (volGen) and the index's entries (its gen) stay as
	// they were.
	entries                  []*zoneEntry
	entriesVol, entriesIndex uint64
	// kept is what a home of more than stackZones zones keeps of its
	// zones' variables from one step to the next; nil in a smaller home
	// (many small homes: the Home's scratch stays in a smaller size class).
	kept *keptZones
	// writes counts the Temperature and Illuminance variables set
	// (setVariableLocked), by the step or anyone else.
	writes uint64
}

// keptZones is what a step of a large home keeps of its zones' variables.
// temps are the zones' temperatures as the next step starts from them
// (what the last step wrote, or found and clamped), and illum their
// Illuminance as the last step left it, kept while the zones are the same
// (vol is h.volGen) and neither variable was set since (at is the
// scratch's writes): reading thousands of zones' variables maps, each out
// of the cache by the next step, took a sixth of the step, and an
// Illuminance that stays (all night) need not be read to be found the
// same.
type keptZones struct {
	temps, illum []float64
	vol, at      uint64
	// held[i] reports that zone i's variables hold temps[i] to the bit
	// (what a step wrote there, or read and found within the bounds), so
	// that a step writes its new temperature without reading the old one
	// (see changeVariableLocked); valid with temps.
	held []bool
}

// entriesLocked returns the entries of the zones zs, h.zones.list, in
// the zone index (see stepScratch.entries).
func (h *Home) entriesLocked(sc *stepScratch, zs []*Zone) []*zoneEntry {
	if sc.entriesVol != h.volGen || sc.entriesIndex != h.inZone.gen || len(sc.entries) != len(zs) {
		ents := grown(&sc.entries, len(zs))
		for i, z := range zs {
			ents[i] = h.inZone.lookup(z)
		}
		sc.entriesVol, sc.entriesIndex = h.volGen, h.inZone.gen
	}
	return sc.entries
}

// grown returns *s resized to n zero entries, reusing its array when it can
// and it is at most four times as long as needed: a home that shrinks lets
// the longer arrays of its step go.
func grown[T any](s *[]T, n int) []T {
	if c := cap(*s); c < n || c > 4*n {
		*s = make([]T, n)
	}
	*s = (*s)[:n]
	clear(*s)
	return *s
}

// startRealisticLocked schedules the realistic model's step.
func (h *Home) startRealisticLocked() {
	now := h.nowLocked()
	t := &timer{period: RealisticStep, from: now}
	t.fire = func(h *Home, at int64) { h.stepLocked(at) }
	h.scheduleLocked(t, now+RealisticStep)
}

// stepLocked integrates one step of the realistic model at simulated time at
// (ms): every zone's heat balance over the step that ends, then daylight.
//
// For each zone, with the other zones' temperatures as they were at the
// start of the step, the balance C·dT/dt = Q + G_out·(T_out − T) +
// Σ K·S·(T_n − T) has the exact solution T' = T_eq + (T − T_eq)·e^(−G·Δt/C),
// where G = G_out + Σ K·S and T_eq = (Q + G_out·T_out + Σ K·S·T_n) / G: stable
// for any step and any power. A nested zone and its container exchange, as
// a power in Q, the heat their mixing moves over the step (bounded by what
// evens them out); a nested zone has no G: T' = T + Q·Δt/C.
func (h *Home) stepLocked(at int64) {
	zs := h.zones.all()
	if len(zs) == 0 {
		h.scratch = nil // a home without zones keeps nothing of its steps (its entries would hold the zones' devices)
		return
	}
	out := h.env.temperature(at)
	outLux, _ := h.env.illuminance(at)
	n := len(zs)
	if h.scratch == nil {
		h.scratch = new(stepScratch)
	}
	sc := h.scratch
	var small [5 * stackZones]float64 // a small home's slices: it keeps none between steps
	work := small[:5*min(n, stackZones)]
	if n > stackZones {
		work = grown(&sc.work, 5*n)
	} else if sc.work != nil {
		sc.work = nil // a home back to stackZones zones or fewer keeps none
	}
	q := work[:n]                        // W into each zone
	opening := work[n : 2*n]             // m² open to the outdoors
	shared := work[2*n : 3*n]            // wall each zone shares, when its shape is worked out
	temps := work[3*n : 4*n]             // temperatures at the start of the step
	gt := work[4*n : 5*n]                // Σ conductance × temperature on the other side, W
	counted := h.countingPersonsLocked() // before the entries: counting may make some
	ents := h.entriesLocked(sc, zs)
	for i, z := range zs {
		s := ents[i].sumsOf()
		q[i], opening[i] = s.power, s.opening
		persons := 0
		if counted {
			persons = ents[i].personCount()
		} else {
			persons = h.personsInLocked(z)
		}
		for range persons {
			q[i] += PersonHeat // one at a time, as a walk of the persons adds them
		}
	}
	ws := h.wallsLocked()
	contacts, parents := ws.contacts, ws.parents
	if sc.shapesGen != h.volGen || len(sc.shapes) != n {
		h.shapesLocked(grown(&sc.shapes, n), shared, zs, ws)
		sc.shapesGen = h.volGen
	}
	shapes := sc.shapes
	var k *keptZones
	if n > stackZones {
		if sc.kept == nil {
			sc.kept = new(keptZones)
		}
		k = sc.kept
	} else {
		sc.kept = nil // a home back to stackZones zones or fewer keeps none
	}
	kept := k != nil && k.at == sc.writes && k.vol == h.volGen && len(k.temps) == n && len(k.illum) == n && len(k.held) == n
	var held []bool
	if k != nil {
		held = k.held
	}
	if kept {
		copy(temps, k.temps) // the same bits as the maps hold, clamped
	} else {
		if k != nil {
			held = grown(&k.held, n)
		}
		for i, z := range zs {
			// A Temperature set outside the model's bounds (below absolute
			// zero, say) starts the step from the nearest bound: the opening
			// and mixing flows take its square root, and a NaN would leave the
			// zone where it was for good.
			v := h.ensureTemperatureLocked(z)
			temps[i] = min(max(v, MinRealisticTemperature), MaxRealisticTemperature)
			if held != nil {
				held[i] = temps[i] == v
			}
		}
	}
	g := grown(&sc.g, n) // total conductance, W/K
	for i := range zs {
		s := &shapes[i]
		gOut := s.envelope
		if opening[i] > 0 {
			dT := math.Abs(temps[i] - out)
			flow := OpeningDischarge * opening[i] / 3 * math.Sqrt(Gravity*OpeningHeight*dT/((temps[i]+out)/2))
			gOut += HeatCapacityPerM3 * flow
		}
		sun := outLux / DaylightEfficacy * s.windows * GlazingSolarGain * WindowIrradiance
		if parents[i] >= 0 {
			sun = 0 // through its container's windows
		}
		g[i] += gOut
		gt[i] += gOut*out + q[i] + sun
	}
	for _, c := range contacts {
		k := WallConductance * c.length * min(shapes[c.a].height, shapes[c.b].height)
		g[c.a] += k
		gt[c.a] += k * temps[c.b]
		g[c.b] += k
		gt[c.b] += k * temps[c.a]
	}
	dt := float64(h.span) / 1000 // one step, or more when the live driver coalesces
	// A nested zone is a part of its container's room: they mix through
	// the whole boundary, an opening its perimeter long and its height
	// high, with the exchange of a large doorway (Brown and Solvason), a
	// flow of Cd·A/3·√(g·H·ΔT/T̄) each way: a conductance k. Over the step
	// the pair alone would close its gap by (1 − e^(−k·Δt·(1/C_i + 1/C_p))):
	// that heat moves from the warmer to the other as a power, so that the
	// strong mixing never carries one past the other.
	for i, p := range parents {
		ci, cp := shapes[i].capacity, 0.0
		if p >= 0 {
			cp = shapes[p].capacity
		}
		if ci <= 0 || cp <= 0 {
			continue
		}
		z := zs[i]
		height := min(shapes[i].height, shapes[p].height)
		area := float64(2*((z.RightX-z.LeftX)+(z.BottomY-z.TopY))) * PlanUnitMeters * height
		gap := temps[i] - temps[p]
		k := HeatCapacityPerM3 * OpeningDischarge * area / 3 * math.Sqrt(Gravity*height*math.Abs(gap)/((temps[i]+temps[p])/2))
		inv := 1/ci + 1/cp
		if power := gap * -math.Expm1(-k*dt*inv) / inv / dt; power != 0 && !math.IsNaN(power) && !math.IsInf(power, 0) {
			gt[i] -= power
			gt[p] += power
		}
	}
	if len(sc.decay) != n {
		grown(&sc.decay, n)
		for i := range grown(&sc.decayOf, n) {
			sc.decayOf[i] = math.NaN() // equal to no x: worked out at the first step
		}
	}
	decay, decayOf := sc.decay, sc.decayOf
	for i, z := range zs {
		if shapes[i].capacity <= 0 {
			continue
		}
		var t float64
		if g[i] <= 0 {
			// No conductance (a nested zone): the power alone. With none,
			// the zone stays (setVariableLocked then does nothing), but
			// for a Temperature brought within the bounds above.
			t = temps[i] + gt[i]*dt/shapes[i].capacity
		} else {
			eq := gt[i] / g[i]
			x := g[i] * dt / shapes[i].capacity
			if x != decayOf[i] {
				decay[i], decayOf[i] = math.Exp(-x), x
			}
			t = eq + (temps[i]-eq)*decay[i]
		}
		if math.IsNaN(t) {
			continue // absurd settings (a Volume of 1e308 m³: infinite walls, Inf/Inf) leave the zone as it was
		}
		t = min(max(t, MinRealisticTemperature), MaxRealisticTemperature)
		if kept && held[i] {
			h.changeVariableLocked(z, VarTemperature, temps[i], true, &t) // the zone holds it (see keptZones.held)
		} else {
			h.setVariableLocked(z, VarTemperature, &t)
		}
		if held != nil {
			held[i] = true
		}
		temps[i] = t // what the next step starts from (a zone left as it was starts from what it started from)
	}
	var illum []float64
	if k != nil {
		illum = k.illum
		if !kept {
			illum = grown(&k.illum, n)
			for i := range illum {
				illum[i] = math.NaN() // not known: written
			}
		}
	}
	h.relightShapedLocked(zs, shapes, h.entriesLocked(sc, zs), illum)
	if k != nil {
		copy(grown(&k.temps, n), temps)
		k.vol, k.at = h.volGen, sc.writes
	}
}
