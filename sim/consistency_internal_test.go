package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	gocmp "github.com/google/go-cmp/cmp"
)

// TestHomeConsistent runs random homes (zones nested and overlapping,
// created, moved, resized and deleted; devices of every built-in kind
// created, some unplaced, moved, switched, faulted, given property values
// and deleted; persons coming, moving and going; zone volumes and window
// shares set; the sky changing; the clock advanced by a fraction of a
// second to minutes), of both physics models, watched by an observer or
// not, and checks that what the home keeps is what working it out from
// scratch gives (see consistencyProblems): after every operation, what
// must hold at once; settled (past every tick, at a realistic step),
// everything. The home keeps a lot (each device's zone and what it gives
// its zone, the zone index and its sums, the zones' Noise, Illuminance and
// Electricity, the sensors' readings, the derived properties), each kept up
// by the code paths of the changes that may change it; a path that
// forgets one leaves a home that looks fine and reads wrong: a device
// relocated by a zone change kept what it gave its zone before its Derive
// ran, and the zone of a playing Speaker stayed silent.
func TestHomeConsistent(t *testing.T) {
	steps, seeds := 500, uint64(16)
	if testing.Short() {
		steps, seeds = 200, 4
	}
	kinds := map[string]int{} // devices of each kind in a zone at the end of a scenario
	gridSteps, heard := 0, 0  // steps with more zones than smallPlan; Speakers making a noise at the end
	for m, physics := range []Physics{PhysicsContract, PhysicsRealistic} {
		for seed := range seeds {
			watched := seed%2 == 0
			dark := seed%3 == 2        // polar night: the realistic Illuminance is checked after every operation too
			manyZones := seed%4 >= 2   // enough for the zone grid; else a few rooms, each with a few devices
			neighbourly := seed%3 == 1 // only the kinds that look at the others of their zone and some they look at, so that they meet often
			t.Run(fmt.Sprintf("%s/%d", physics, seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, 41+uint64(m))) // the models' scenarios differ
				start := time.Date(2024, 6, 21, 0, 0, 0, 0, time.UTC).Add(time.Duration(seed%4*5) * time.Hour)
				cfg := Config{WallClock: clock.NewMock(), Location: time.UTC, Physics: physics, StartDate: start}
				if dark {
					lat := -89.0
					cfg.Environment = &EnvironmentUpdate{Latitude: &lat}
				}
				h := MustNew(cfg)
				if watched {
					h.Observe(func(Event) {})
				}
				maxZones := 6
				if manyZones {
					maxZones = 3 * smallPlan
				}
				g := newScenario(r, h, maxZones, neighbourly)
				for step := range steps {
					op := g.step()
					if bad := consistencyProblems(h, false, start); len(bad) > 0 {
						t.Fatalf("step %d (%s): the home differs from its recomputation:\n%s", step, op, strings.Join(bad, "\n"))
					}
					if len(g.zoneIDs) > smallPlan {
						gridSteps++
					}
				}
				// Settle: past every tick (the Speaker's, the FloodSensor's,
				// the PowerSwitchMeter's), then to a realistic step, which
				// works out the daylight.
				if err := h.Advance(2 * time.Minute); err != nil {
					t.Fatal(err)
				}
				if rest := h.Now().Sub(start).Milliseconds() % RealisticStep; rest != 0 {
					if err := h.Advance(time.Duration(RealisticStep-rest) * time.Millisecond); err != nil {
						t.Fatal(err)
					}
				}
				if bad := consistencyProblems(h, true, start); len(bad) > 0 {
					t.Fatalf("settled after %d steps: the home differs from its recomputation:\n%s", steps, strings.Join(bad, "\n"))
				}
				if g.failed*4 > steps {
					t.Fatalf("a weak scenario: %d of %d operations failed: %v", g.failed, steps, g.errs)
				}
				for _, d := range h.Devices() {
					if d.Location != LocationUnknown {
						kinds[d.Type]++
					}
					if v, _ := d.Properties[PropSpeakerNoiseLevel].(float64); v > 0 {
						heard++
					}
				}
			})
		}
	}
	if t.Failed() || testing.Short() {
		return
	}
	for _, k := range Kinds() {
		if kinds[k.Type()] == 0 {
			t.Errorf("a weak test: no %s ends in a zone", k.Name)
		}
	}
	if gridSteps < steps || heard == 0 {
		t.Errorf("a weak test: %d steps with more than %d zones, %d Speakers making a noise", gridSteps, smallPlan, heard)
	}
}

// consistencyProblems returns one line for each thing home h keeps that
// differs from what working it out again gives:
//   - each device's and person's zone, against a search of every zone;
//   - the zone index, against the devices' zones;
//   - what each device gives its zone (heat, light, consumption, opening,
//     noise, flux: see device.recompute), against its properties, and its
//     heat update timer's power and cell;
//   - each zone's sums and person count;
//   - each zone's Noise, Illuminance and Electricity, against its devices,
//     as renoiseLocked, relightShapedLocked and meterLocked define them;
//   - each working sensor's readings, against its zone's variables, and
//     what a presence sensor or a camera stores of its zone's persons in a
//     watched home;
//   - the derived properties: running every device's Derive again must
//     change nothing.
//
// Unless settled, what legitimately lags is left out: the realistic
// Illuminance while there is daylight (the realistic step works the
// daylight out, and between two steps it is the last step's), and the
// derived properties of the kinds that look at their zone on a tick
// (Speaker, FloodSensor, PowerSwitchMeter: between two ticks they may lag
// it). h is left as it was, unless a Derive changed it; start is the
// home's StartDate, from which the realistic steps count.
func consistencyProblems(h *Home, settled bool, start time.Time) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var bad []string
	report := func(f string, a ...any) { bad = append(bad, fmt.Sprintf(f, a...)) }
	near := func(a, b float64) bool {
		return a == b || !math.IsInf(a, 0) && !math.IsInf(b, 0) && math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b))
	}
	id := func(z *Zone) string {
		if z == nil {
			return LocationUnknown
		}
		return z.ID
	}
	zones := h.zones.all()
	search := func(x, y int) *Zone { // the smallest zone holding (x, y), the first made of those as small
		var best *Zone
		for _, z := range zones {
			if z.Contains(x, y) && (best == nil || z.area() < best.area()) {
				best = z
			}
		}
		return best
	}

	// What each device gives its zone, worked out again.
	type gives struct{ heat, light, consumption, opening, noise, flux float64 }
	fresh := map[*device]gives{}
	freshDoes := map[*device]uint8{} // playsOne, watersOne, by a look at each device
	members := map[*Zone][]*device{}
	for _, d := range h.devices.all() {
		var want *Zone
		if !d.unplaced {
			want = search(int(d.PositionX), int(d.PositionY))
		}
		if d.zone != want {
			report("device %s (%s) at (%d, %d) is in %s, want %s", d.ID, d.entry.typ, d.PositionX, d.PositionY, id(d.zone), id(want))
		}
		if d.zone != nil {
			members[d.zone] = append(members[d.zone], d)
		}
		kept, keptSenses := gives{d.heat, d.light, d.consumption, d.opening, d.noise, d.flux}, d.sensesLight
		keptDoes := d.does
		d.recompute()
		now := gives{d.heat, d.light, d.consumption, d.opening, d.noise, d.flux}
		if !near(now.heat, kept.heat) || !near(now.light, kept.light) || !near(now.consumption, kept.consumption) ||
			!near(now.opening, kept.opening) || !near(now.noise, kept.noise) || !near(now.flux, kept.flux) {
			report("device %s (%s) gives its zone (-recomputed +kept):\n%s", d.ID, d.entry.typ, gocmp.Diff(now, kept, gocmp.AllowUnexported(gives{})))
		}
		if d.sensesLight != keptSenses {
			report("device %s (%s) senses light: %v kept, %v recomputed", d.ID, d.entry.typ, keptSenses, d.sensesLight)
		}
		// As the walk that the zone's notes replaced defined them, not as
		// recompute does: a recompute that kept a bit it should have
		// cleared would agree with itself.
		var does uint8
		if d.active && d.props.value(PropAudioSourceIsPlaying) == true {
			does |= playsOne
		}
		if water := d.kind.Behavior.Water; d.active && water != nil && water(Props{d: d}) {
			does |= watersOne
		}
		freshDoes[d] = does
		if does != keptDoes {
			report("device %s (%s) plays and sprays: %02b kept, %02b by a look at it", d.ID, d.entry.typ, keptDoes, does)
		}
		d.heat, d.light, d.consumption, d.opening, d.noise, d.flux = kept.heat, kept.light, kept.consumption, kept.opening, kept.noise, kept.flux
		d.sensesLight, d.does = keptSenses, keptDoes
		fresh[d] = now
		if d.timer != nil && h.physics != PhysicsContract {
			report("device %s (%s): a heat update timer in the %s model", d.ID, d.entry.typ, h.physics) // setVariableLocked tells heat cells in the contract model only
		}
		if t := d.timer; t != nil {
			if !near(t.heatPower, now.heat) {
				report("device %s (%s): its heat updates apply %v W, its heat is %v W", d.ID, d.entry.typ, t.heatPower, now.heat)
			}
			if t.heatCell != nil && t.heatCell.z != d.zone {
				report("device %s (%s): its heat updates go to zone %s, it is in %s", d.ID, d.entry.typ, id(t.heatCell.z), id(d.zone))
			}
		}
	}
	persons := map[string]int{}
	for _, p := range h.persons.all() {
		want := id(search(p.PositionX, p.PositionY))
		if p.Location != want {
			report("person %s at (%d, %d) is in %s, want %s", p.ID, p.PositionX, p.PositionY, p.Location, want)
		}
		persons[want]++
	}

	realistic := h.physics == PhysicsRealistic
	now := h.nowLocked()
	outdoor, _ := h.env.illuminance(now)
	lastStep, _ := h.env.illuminance(now - (now-start.UnixMilli())%RealisticStep)
	daylit := realistic && (outdoor != 0 || lastStep != 0)
	for _, z := range zones {
		ms := members[z]
		var indexed []string
		for _, d := range h.inZone.in(z) {
			indexed = append(indexed, d.ID)
		}
		var walked []string
		for _, d := range ms {
			walked = append(walked, d.ID)
		}
		if !slices.Equal(walked, indexed) {
			report("zone %s: the index differs (-walk +index):\n%s", z.ID, gocmp.Diff(walked, indexed))
		}
		e := h.inZone.lookup(z)
		if e != nil && e.summed {
			var s zoneSums
			for _, d := range ms {
				if d.kind.Behavior.Heat != nil {
					s.power += fresh[d].heat
				} else {
					s.power += fresh[d].consumption
				}
				s.opening += fresh[d].opening
				s.flux += fresh[d].flux
			}
			if !near(s.power, e.sums.power) || !near(s.opening, e.sums.opening) || !near(s.flux, e.sums.flux) {
				report("zone %s: sums %+v kept, %+v recomputed", z.ID, e.sums, s)
			}
			var others uint8
			for _, d := range ms {
				if does := freshDoes[d]; does&playsOne != 0 {
					others |= others&playsOne<<1 | playsOne
				}
				if does := freshDoes[d]; does&watersOne != 0 {
					others |= others&watersOne<<1 | watersOne
				}
			}
			if others != e.others {
				report("zone %s: playing and spraying %04b kept, %04b recomputed", z.ID, e.others, others)
			}
		}
		if h.personsCounted && e != nil && int(e.persons) != persons[z.ID] {
			report("zone %s: %d persons counted, %d in it", z.ID, e.persons, persons[z.ID])
		}

		// Noise: the noisy devices' levels added as sound powers.
		power, noisy := 0.0, false
		for _, d := range ms {
			if d.kind.Behavior.Noise != nil {
				noisy = true
				if !math.IsInf(fresh[d].noise, -1) {
					power += math.Pow(10, fresh[d].noise/10)
				}
			}
		}
		want := 0.0
		if power > 0 {
			want = 10 * math.Log10(power)
		}
		if v, ok := z.Variables[VarNoise]; ok && !near(v, want) || !ok && noisy {
			report("zone %s: Noise %v (set %v), want %v", z.ID, v, ok, want)
		}

		// Illuminance: the lights' (and, realistic, the daylight's).
		lights, lit := 0.0, realistic
		for _, d := range ms {
			switch {
			case d.kind.Behavior.Light != nil && realistic:
				lights += fresh[d].flux
				lit = true
			case d.kind.Behavior.Light != nil:
				lights += fresh[d].light
				lit = true
			case d.sensesLight:
				lit = true
			}
		}
		want = 0
		if a := z.AreaM2(); a > 0 {
			if realistic {
				day := 0.0
				if outdoor != 0 {
					t := h.shape(z, 0, false)
					day = daylightThrough(&t, outdoor)
				}
				want = lights*UtilisationFactor/a + day
			} else {
				want = lights * IlluminancePerWatt / a
			}
		}
		if settled || !daylit {
			if v, ok := z.Variables[VarIlluminance]; ok && !near(v, want) || !ok && lit {
				report("zone %s: Illuminance %v (set %v), want %v (lights %v)", z.ID, v, ok, want, lights)
			}
		}

		// Electricity, realistic: what its devices consume.
		if realistic {
			sum, metered := 0.0, false
			for _, d := range ms {
				sum += fresh[d].consumption
				metered = metered || d.kind.Behavior.Consumption != nil
			}
			if v, ok := z.Variables[VarElectricity]; ok && !near(v, sum) || !ok && metered {
				report("zone %s: Electricity %v (set %v), want %v", z.ID, v, ok, sum)
			}
		}
	}
	// The readings of the working sensors, as a client sees them.
	for _, d := range h.devices.all() {
		if d.faulty {
			continue
		}
		var props map[string]any
		for _, spec := range d.kind.Properties {
			if spec.Follows == "" {
				continue
			}
			if props == nil {
				props = d.snapshot(h).Properties
			}
			var want any = spec.outside()
			if d.zone != nil {
				v, ok := d.zone.Variables[spec.Follows]
				if !ok {
					continue // the reading's default: nothing to compare
				}
				want = v
			}
			if !gocmp.Equal(props[spec.Name], want) {
				report("device %s (%s): %s reads %v, its zone %s's %s is %v", d.ID, d.entry.typ, spec.Name, props[spec.Name], id(d.zone), spec.Follows, want)
			}
		}
	}
	// What a presence sensor or a camera that reads its zone's persons
	// stores, while the home is watched: what its zone holds, which its
	// next event starts from (see syncSensedLocked).
	for _, d := range h.devices.all() {
		if !d.sensesPersons() || !h.watchedLocked() {
			continue
		}
		name, want := h.sensedLocked(d)
		if v, _ := d.props.get(name); !valueEqual(v, want) {
			report("device %s (%s) in %s: stores %s %v in a watched home, its zone gives %v", d.ID, d.entry.typ, id(d.zone), name, v, want)
		}
	}
	// The derived properties: running Derive again changes nothing.
	for _, d := range h.devices.all() {
		if !settled && d.kind.Behavior.Tick != nil {
			continue // it may lag its zone until its next tick
		}
		before := d.snapshot(h).Properties
		if h.deriveLocked(d) {
			report("device %s (%s) in %s: Derive changes its properties (-kept +derived):\n%s", d.ID, d.entry.typ, id(d.zone),
				gocmp.Diff(before, d.snapshot(h).Properties))
		}
	}
	return bad
}

// scenario makes random changes to a home through its API, keeping what
// it needs to make them mostly valid.
type scenario struct {
	r        *rand.Rand
	h        *Home
	kinds    []Kind                    // the built-in kinds it makes
	specs    map[string][]PropertySpec // the settable properties of each kind, as the home's physics has them
	zones    map[string]Zone           // the zones' rectangles
	zoneIDs  []string                  // in creation order
	devices  map[string]string         // the devices' types
	devIDs   []string
	persons  []string
	maxZones int            // the zones it makes at most at once
	n        int            // operations made
	failed   int            // operations the home refused
	errs     map[string]int // refused operations, by name
}

// newScenario returns a scenario changing h, with at most maxZones zones
// at once; a neighbourly one makes only the kinds that look at the others
// of their zone (Speaker, FloodSensor, PowerSwitchMeter) and some of those
// they look at.
func newScenario(r *rand.Rand, h *Home, maxZones int, neighbourly bool) *scenario {
	g := &scenario{r: r, h: h, maxZones: maxZones, specs: map[string][]PropertySpec{},
		zones: map[string]Zone{}, devices: map[string]string{}, errs: map[string]int{}}
	for _, k := range Kinds() {
		switch k.Name {
		case "Speaker", "AudioSource", "FloodSensor", "Sprinkler", "PowerSwitchMeter", "Siren":
		default:
			if neighbourly {
				continue
			}
		}
		g.kinds = append(g.kinds, k)
	}
	for _, k := range h.DeviceKinds() {
		for _, s := range k.Properties {
			if !s.Derived {
				g.specs[k.Name] = append(g.specs[k.Name], s)
			}
		}
	}
	return g
}

// pos returns a position: two times in three in a zone, or on or just
// past its edges, else anywhere.
func (g *scenario) pos() (x, y *int) {
	r := g.r
	if len(g.zoneIDs) > 0 && r.IntN(3) > 0 {
		z := g.zones[g.zoneIDs[r.IntN(len(g.zoneIDs))]]
		x, y := z.LeftX+r.IntN(z.RightX-z.LeftX+1), z.TopY+r.IntN(z.BottomY-z.TopY+1)
		if r.IntN(2) == 0 {
			xs := []int{z.LeftX, z.RightX, z.LeftX - 1, z.RightX + 1, x}
			ys := []int{z.TopY, z.BottomY, z.TopY - 1, z.BottomY + 1, y}
			x, y = xs[r.IntN(len(xs))], ys[r.IntN(len(ys))]
		}
		return &x, &y
	}
	a, b := r.IntN(1100)-50, r.IntN(1100)-50
	return &a, &b
}

// rect returns a zone's rectangle: half the time in (or overlapping)
// another zone, else anywhere.
func (g *scenario) rect() Zone {
	r := g.r
	if len(g.zoneIDs) > 0 && r.IntN(2) == 0 {
		z := g.zones[g.zoneIDs[r.IntN(len(g.zoneIDs))]]
		w, h := z.RightX-z.LeftX, z.BottomY-z.TopY
		l := z.LeftX + r.IntN(w/2+1) - r.IntN(3)*r.IntN(20)
		t := z.TopY + r.IntN(h/2+1) - r.IntN(3)*r.IntN(20)
		return Zone{LeftX: l, TopY: t, RightX: l + 1 + r.IntN(w/2+30), BottomY: t + 1 + r.IntN(h/2+30)}
	}
	l, t := r.IntN(1100)-50, r.IntN(1100)-50
	return Zone{LeftX: l, TopY: t, RightX: l + r.IntN(450), BottomY: t + r.IntN(450)}
}

// props returns random valid values of some of a kind's settable
// properties (each half the time, at least one): numbers in their range
// (often at its top), booleans mostly true (so that lights shine and
// sources play), strings naming a device (a Speaker's audio source) or
// empty.
func (g *scenario) props(typ string) map[string]any {
	r, specs := g.r, g.specs[typ]
	if len(specs) == 0 {
		return nil
	}
	m := map[string]any{}
	for i, s := range specs {
		if r.IntN(2) == 0 && (len(m) > 0 || i < len(specs)-1) {
			continue
		}
		switch s.Type {
		case Bool:
			m[s.Name] = r.IntN(3) > 0
		case Number:
			lo, hi := s.Min, s.Max
			if !s.bounded() {
				hi = 100
			}
			hi = min(hi, lo+10000)
			v := lo + r.Float64()*(hi-lo)
			if r.IntN(4) == 0 {
				v = hi
			}
			m[s.Name] = math.Trunc(v*100) / 100
		default:
			m[s.Name] = ""
			if ids := g.named(s.Name); len(ids) > 0 && r.IntN(2) == 0 {
				m[s.Name] = ids[r.IntN(len(ids))]
			}
		}
	}
	return m
}

// named returns the ids a property naming a device may take: the audio
// sources, for a Speaker's, else any device.
func (g *scenario) named(prop string) []string {
	if prop != PropSpeakerAudioSource || g.r.IntN(4) == 0 {
		return g.devIDs
	}
	var ids []string
	for _, id := range g.devIDs {
		if g.devices[id] == "AudioSource" {
			ids = append(ids, id)
		}
	}
	return ids
}

// step makes one random change and says which.
// deleteOne deletes an entity of ids, chosen at random, with del, and
// takes it out of ids if del did; it returns what it did and del's error.
func (g *scenario) deleteOne(ids *[]string, kind string, del func(id string) error) (string, error) {
	i := g.r.IntN(len(*ids))
	id := (*ids)[i]
	err := del(id)
	if err == nil {
		*ids = slices.Delete(*ids, i, i+1)
	}
	return "delete " + kind + " " + id, err
}

func (g *scenario) step() string {
	r, h := g.r, g.h
	step := g.n
	g.n++
	var err error
	var what string
	defer func() {
		if err != nil {
			g.failed++
			g.errs[strings.Fields(what)[0]]++
		}
	}()
	switch op := r.IntN(100); {
	case op < 11 && len(g.zoneIDs) < g.maxZones || len(g.zoneIDs) == 0:
		id, z := fmt.Sprint("z", step), g.rect()
		what = fmt.Sprintf("create zone %s %s", id, rectString(z))
		if _, err = h.CreateZone(ZoneSpec{ID: id, LeftX: z.LeftX, TopY: z.TopY, RightX: z.RightX, BottomY: z.BottomY}); err == nil {
			g.zones[id] = z
			g.zoneIDs = append(g.zoneIDs, id)
		}
	case op < 20:
		id := g.zoneIDs[r.IntN(len(g.zoneIDs))]
		z := g.zones[id]
		if r.IntN(2) == 0 { // moved
			dx, dy := r.IntN(201)-100, r.IntN(201)-100
			z = Zone{LeftX: z.LeftX + dx, TopY: z.TopY + dy, RightX: z.RightX + dx, BottomY: z.BottomY + dy}
		} else { // moved and resized
			z = g.rect()
		}
		what = fmt.Sprintf("update zone %s to %s", id, rectString(z))
		if _, err = h.UpdateZone(id, ZoneUpdate{LeftX: &z.LeftX, TopY: &z.TopY, RightX: &z.RightX, BottomY: &z.BottomY}); err == nil {
			g.zones[id] = z
		}
	case op < 23:
		i := r.IntN(len(g.zoneIDs))
		id := g.zoneIDs[i]
		what = "delete zone " + id
		if err = h.DeleteZone(id); err == nil {
			g.zoneIDs = slices.Delete(g.zoneIDs, i, i+1)
			delete(g.zones, id)
		}
	case op < 26:
		id := g.zoneIDs[r.IntN(len(g.zoneIDs))]
		vars := map[string]*float64{}
		for _, v := range []string{VarVolume, VarWindowShare} {
			switch r.IntN(3) {
			case 0:
				x := math.Trunc(r.Float64()*100) / 100
				if v == VarVolume {
					x = 1 + r.Float64()*200
				}
				vars[v] = &x
			case 1:
				vars[v] = nil
			}
		}
		what = fmt.Sprintf("set zone %s's variables", id)
		for _, v := range []string{VarVolume, VarWindowShare} {
			if x, ok := vars[v]; ok {
				what += fmt.Sprintf(" %s=%v", v, deref(x))
			}
		}
		_, err = h.UpdateZone(id, ZoneUpdate{Variables: vars})
	case op < 27:
		sky := []string{"clear", "partly-cloudy", "overcast"}[r.IntN(3)]
		what = "set the sky " + sky
		_, err = h.UpdateEnvironment(EnvironmentUpdate{Sky: &sky})
	case op < 41:
		k := g.kinds[r.IntN(len(g.kinds))]
		id := fmt.Sprint("d", step)
		spec := DeviceSpec{ID: id, Type: k.Name}
		if r.IntN(12) > 0 { // else unplaced
			spec.PositionX, spec.PositionY = g.pos()
		}
		if r.IntN(4) > 0 {
			spec.Properties = g.props(k.Name)
		}
		what = fmt.Sprintf("create device %s %s unplaced with %v", id, k.Name, spec.Properties)
		if spec.PositionX != nil {
			what = fmt.Sprintf("create device %s %s at %d %d with %v", id, k.Name, *spec.PositionX, *spec.PositionY, spec.Properties)
		}
		if _, err = h.CreateDevice(spec); err == nil {
			g.devices[id] = k.Name
			g.devIDs = append(g.devIDs, id)
		}
	case op < 63 && len(g.devIDs) > 0:
		id := g.devIDs[r.IntN(len(g.devIDs))]
		var u DeviceUpdate
		what = fmt.Sprintf("update device %s (%s): ", id, g.devices[id])
		switch r.IntN(10) {
		case 0, 1:
			u.PositionX, u.PositionY = g.pos()
			what += fmt.Sprintf("move to %d %d", *u.PositionX, *u.PositionY)
		case 2:
			zone := g.zoneIDs[r.IntN(len(g.zoneIDs))]
			u.Location = &zone
			what += "move to zone " + zone
		case 3:
			state := []string{StateActivated, StateDeactivated}[r.IntN(2)]
			u.State = &state
			what += "state " + state
		case 4:
			fault := []string{"yes", "no", "no"}[r.IntN(3)]
			u.Fault = &fault
			what += "fault " + fault
		default:
			u.Properties = g.props(g.devices[id])
			what += fmt.Sprint("properties ", u.Properties)
		}
		_, err = h.UpdateDevice(id, u)
	case op < 65 && len(g.devIDs) > 0:
		what, err = g.deleteOne(&g.devIDs, "device", h.DeleteDevice)
	case op < 71:
		id := fmt.Sprint("p", step)
		spec := PersonSpec{ID: id, Type: "Man"}
		spec.PositionX, spec.PositionY = g.pos()
		what = fmt.Sprintf("create person %s at %d %d", id, *spec.PositionX, *spec.PositionY)
		if _, err = h.CreatePerson(spec); err == nil {
			g.persons = append(g.persons, id)
		}
	case op < 78 && len(g.persons) > 0:
		id := g.persons[r.IntN(len(g.persons))]
		var u PersonUpdate
		u.PositionX, u.PositionY = g.pos()
		what = fmt.Sprintf("move person %s to %d %d", id, *u.PositionX, *u.PositionY)
		_, err = h.UpdatePerson(id, u)
	case op < 80 && len(g.persons) > 0:
		what, err = g.deleteOne(&g.persons, "person", h.DeletePerson)
	default:
		var d time.Duration
		switch r.IntN(4) {
		case 0:
			d = time.Duration(r.Int64N(1_000_000)) * time.Microsecond // under a second
		case 1:
			d = time.Duration(r.Int64N(3_000_000)) * time.Microsecond
		case 2:
			d = time.Duration(r.Int64N(15_000_000)) * time.Microsecond
		default:
			d = time.Duration(r.Int64N(120_000_000)) * time.Microsecond // up to 2 minutes
		}
		what = fmt.Sprintf("advance %v", d)
		err = h.Advance(d)
	}
	if err != nil {
		what += fmt.Sprintf(": %v", err)
	}
	return what
}

// deref returns what p points to, or nil.
func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// rectString returns z's rectangle as left,top-right,bottom.
func rectString(z Zone) string {
	return fmt.Sprintf("%d,%d-%d,%d", z.LeftX, z.TopY, z.RightX, z.BottomY)
}
