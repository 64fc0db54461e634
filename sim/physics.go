package sim

import "math"

// Physics names a physics model: how devices, persons and the outdoors act
// on the zones. A home has one, chosen with [Config.Physics].
type Physics string

// The physics models.
const (
	// PhysicsContract is the model of the original iCasa REST contract, the
	// default: heaters and coolers change their zone's temperature and
	// nothing else does (no heat is lost), lights give 680 lm per watt, and
	// the outdoors has no effect.
	PhysicsContract Physics = "contract"
	// PhysicsRealistic adds what makes a home behave like one: heat lost to
	// the outdoors and exchanged through shared walls, daylight through the
	// windows, lights with a luminous efficacy, persons and appliances
	// giving off heat, open doors and windows letting heat out. See the
	// README for every formula and constant.
	PhysicsRealistic Physics = "realistic"
)

// Physical constants of the contract model.
const (
	// DefaultTemperature is a zone's temperature, in kelvin, when it is first
	// needed (by a heater, a cooler or a thermometer).
	DefaultTemperature = 293.15
	// MinTemperature and MaxTemperature, in kelvin, are the contract
	// model's clamp: the temperature a heater or cooler update leaves is
	// brought into [MinTemperature, MaxTemperature], as in iCasa, even when
	// the zone stood outside it (a cooler then lifts a 255 K zone to
	// MinTemperature). The realistic model has no such band.
	MinTemperature = 283.16
	MaxTemperature = 303.16
	// HeatCapacityPerM3 is the heat capacity of air, in J/(m³·K): in the
	// contract model a zone's temperature changes by P × Δt /
	// (HeatCapacityPerM3 × volume).
	HeatCapacityPerM3 = 1200.0
	// IlluminancePerWatt is the luminous efficacy of lights in the contract
	// model, in lumen per watt: a zone's illuminance is the lights' power ×
	// IlluminancePerWatt / area.
	IlluminancePerWatt = 680.0
)

// finite returns f, or 0 when a behaviour returned NaN or an infinity.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// refresh recomputes what the physics caches from the device's properties
// and state. Call it after any change to them. It reports whether what its
// zone's sums count of it (see zoneIndex.sumsOf) changed: heat,
// consumption, opening or flux, to the bit.
func (d *device) refresh() (recount bool) {
	was := d.counted()
	d.recompute()
	return d.counted() != was
}

// counted returns what the zone's sums count of the device, as bits.
func (d *device) counted() [5]uint64 {
	return [5]uint64{math.Float64bits(d.heat), math.Float64bits(d.consumption), math.Float64bits(d.opening), math.Float64bits(d.flux), uint64(d.does)}
}

// recompute does the work of refresh.
func (d *device) recompute() {
	d.heat, d.light, d.consumption, d.opening, d.noise = 0, 0, 0, 0, math.Inf(-1)
	d.sensesLight = d.followsVariable(VarIlluminance)
	d.flux = 0
	d.does = 0
	if !d.active {
		return
	}
	b, p := &d.kind.Behavior, Props{d: d}
	if d.props.value(PropAudioSourceIsPlaying) == true {
		d.does |= playsOne
	}
	if b.Water != nil && b.Water(p) {
		d.does |= watersOne
	}
	if b.Heat != nil {
		d.heat = finite(b.Heat(p))
	}
	if b.Light != nil {
		d.light = max(finite(b.Light(p)), 0)
		d.flux = d.light * efficacy(d)
	}
	if b.Consumption != nil {
		d.consumption = max(finite(b.Consumption(p)), 0)
	}
	if b.Opening != nil {
		d.opening = max(finite(b.Opening(p)), 0)
	}
	if b.Noise != nil {
		if n := b.Noise(p); !math.IsNaN(n) && !math.IsInf(n, 1) {
			d.noise = n
		}
	}
}

// period returns the device's heat update period in ms, if the contract
// model updates its zone with it.
func (d *device) period() (int64, bool) {
	b := &d.kind.Behavior
	if b.Heat == nil || b.PeriodProperty == "" {
		return 0, false
	}
	// A kind's range may let the period below 1 ms (or it may be huge):
	// the updates need a whole, positive number of ms.
	v := Props{d: d}.Number(b.PeriodProperty)
	switch {
	case !(v >= 1):
		return 1, true
	case v > maxHeatPeriod:
		return maxHeatPeriod, true
	}
	return int64(v), true
}

// maxHeatPeriod bounds a heat update period, in ms (about 35 years).
const maxHeatPeriod = 1 << 40

// maxHeatStep bounds one heat update's change, in K, so that the sum of an
// instant's updates stays a number: in a zone of almost no volume a step is
// infinite, and +Inf + -Inf would be NaN. Any step past the clamp's range
// has the same effect alone, and the bound is far beyond what any real
// sum of them could cancel.
const maxHeatStep = 1e12

// startTimersLocked schedules what runs on simulated time for a new device:
// in the contract model, the periodic heat update of a heater or cooler, at
// the next beat of its period (see alignedLocked); its behaviour's Tick,
// one Every after now.
func (h *Home) startTimersLocked(d *device) {
	if p, ok := d.period(); ok && h.physics == PhysicsContract {
		d.timer = h.slab.timer()
		now := h.nowLocked()
		*d.timer = timer{period: p, dev: d, from: now}
		h.scheduleLocked(d.timer, h.alignedLocked(now, p))
	}
	if b := &d.kind.Behavior; b.Tick != nil {
		every := max(b.Every.Milliseconds(), 1)
		// The device in the timer rather than a closure holding it: 32
		// bytes less for each ticking device of many small homes.
		d.ticker = &timer{period: every, from: h.nowLocked(), dev: d, tick: true}
		h.scheduleLocked(d.ticker, h.nowLocked()+every)
	}
}

// tickLocked runs the Tick of device d's behaviour, unless d is faulty.
func (h *Home) tickLocked(d *device) {
	if !d.faulty {
		c := h.contextLocked(d, true)
		d.kind.Behavior.Tick(c)
		h.releaseContextLocked(c)
	}
}

// retimeLocked applies a changed update period: the next update comes at
// the new period's first beat after the previous update, or, if that is
// already past, at its first beat from now on; it covers the time since the
// previous update (see tickThermalLocked).
func (h *Home) retimeLocked(d *device) {
	p, ok := d.period()
	if !ok || d.timer == nil || p == d.timer.period {
		return
	}
	next := h.alignedLocked(d.timer.at-d.timer.period, p)
	h.cancelLocked(d.timer)
	if now := h.nowLocked(); next < now {
		next = h.alignedLocked(now-1, p)
	}
	d.timer.period = p
	h.scheduleLocked(d.timer, next)
}

// alignedLocked returns the first beat of period p after t: the first time
// after t that is a whole number of periods from h.beat. Heaters and
// coolers of one period therefore update together, whenever they were
// made, and their updates add up before the clamp (see tickThermalLocked):
// the zone gets its net power, as in iCasa's zone-wide temperature model.
// The first update of a device made between two beats covers the time
// since it was made (timer.from).
func (h *Home) alignedLocked(t, p int64) int64 {
	k := (t - h.beat) / p
	if (t-h.beat)%p < 0 {
		k-- // floor, below the beat too
	}
	return h.beat + (k+1)*p
}

// tickThermalLocked applies one period of a heater's or cooler's power to
// its zone (contract model): ΔT = P × Δt / (1200 × V). The updates that
// fall due at the same simulated instant add up before the result is
// clamped to [MinTemperature, MaxTemperature], so that the clamp applies to
// the zone's net power: a heater and a cooler of equal power leave a zone
// at a bound where it is. A deactivated device, or one outside every zone,
// has no effect.
func (h *Home) tickThermalLocked(t *timer) {
	p := t.heatPower
	if p == 0 {
		return
	}
	c := t.heatCell
	if c == nil {
		// The first update in this zone: the cells are made in the order
		// of the updates, which is the order they are read in.
		if t.dev.zone == nil {
			return
		}
		c = h.heatCellLocked(t.dev.zone)
		t.heatCell = c
	}
	z := c.z
	if c.gen != h.volGen {
		c.gen = h.volGen
		c.capacity = 0 // no effect
		if v := z.VolumeM3(); v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			c.capacity = HeatCapacityPerM3 * v
		}
	}
	if c.capacity == 0 {
		return
	}
	// One period; less for the first update after the device was made or
	// its period changed; more when the live driver coalesces.
	dt := float64(h.span) / 1000
	step := min(max(p*dt/c.capacity, -maxHeatStep), maxHeatStep)
	watched := h.watchedLocked()
	if c.dirty && !watched {
		// In a run of updates nobody watches: the zone's temperature is
		// the cell's.
		if c.at != h.pin {
			c.sum, c.at = c.temp(), h.pin
		}
		c.sum += step
		return
	}
	if watched {
		// Each update is an event: go through the zone itself.
		h.flushHeatLocked()
	}
	// The instant's sum goes on while the zone still has what it left it
	// (the same test as above, where that is always so, so that watched and
	// unwatched runs agree to the bit); a temperature set in between starts
	// it again. While the zone holds what the last flush wrote, it is not
	// read back: in a large home its map is long out of the cache by the
	// next minute's first update.
	cur := c.temp()
	if !c.synced {
		cur = h.ensureTemperatureLocked(z)
	}
	if c.at != h.pin || cur != c.temp() {
		c.sum, c.at = cur, h.pin
	}
	c.sum += step
	if watched {
		t := c.temp()
		h.setVariableLocked(z, VarTemperature, &t)
		return
	}
	c.dirty = true
	h.dirtyHeat = append(h.dirtyHeat, c)
}

// A heatCell is what the contract model's heat updates keep of a zone: its
// heat capacity (valid while gen is h.volGen; worked out once rather than
// checked and multiplied at every update), and the unclamped sum of the
// updates of the instant of the last one. Thousands of heaters fall due at
// the same simulated instant; they add their heat to the cell, one after
// the other, and, while nobody watches, the zone's Temperature variable is
// written once, by flushHeatLocked, before anything else runs or reads it.
type heatCell struct {
	z        *Zone
	gen      uint64
	capacity float64 // J/K: HeatCapacityPerM3 × the volume; 0 when the volume is not a positive finite number (no effect)
	sum      float64 // the zone's temperature before the first update of instant at, plus that instant's updates so far, unclamped
	at       int64   // simulated ms of the last update
	dirty    bool    // temp() is newer than z's Temperature variable
	synced   bool    // z's Temperature variable is temp(), as flushHeatLocked wrote it: no update need read it back
}

// temp returns the temperature the updates leave the zone: the sum,
// clamped.
func (c *heatCell) temp() float64 { return min(max(c.sum, MinTemperature), MaxTemperature) }

// heatCellLocked returns zone z's heat cell, making it if needed. It is
// kept in z's entry of the zone index, and goes with it.
func (h *Home) heatCellLocked(z *Zone) *heatCell {
	e := h.inZone.entry(z)
	if e.heat == nil {
		e.heat = &heatCell{z: z, gen: h.volGen - 1, at: math.MinInt64}
	}
	return e.heat
}

// flushHeatLocked writes the temperatures the heat updates left in their
// cells into the zones: what the updates would have written one by one.
func (h *Home) flushHeatLocked() {
	for _, c := range h.dirtyHeat {
		c.z.Variables[VarTemperature] = c.temp()
		c.dirty, c.synced = false, true
	}
	clear(h.dirtyHeat)
	h.dirtyHeat = h.dirtyHeat[:0]
}

// ensureTemperatureLocked returns z's temperature, first setting it to
// DefaultTemperature when z has none.
func (h *Home) ensureTemperatureLocked(z *Zone) float64 {
	t, ok := z.Variables[VarTemperature]
	if !ok {
		t = DefaultTemperature
		h.setVariableLocked(z, VarTemperature, &t)
	}
	return t
}

// followsVariable reports whether a property of the device's kind follows
// the zone variable v.
func (d *device) followsVariable(v string) bool {
	for _, spec := range d.kind.Properties {
		if spec.Follows == v {
			return true
		}
	}
	return false
}

// lightLux returns the illuminance, in lux, that watts of light device d
// give zone z: watts × 680 / area in the contract model, watts × the
// light's efficacy × the utilisation factor / area in the realistic one.
func (h *Home) lightLux(d *device, z *Zone, watts float64) float64 {
	a := z.AreaM2()
	if a <= 0 {
		return 0
	}
	if h.physics == PhysicsRealistic {
		return watts * efficacy(d) * UtilisationFactor / a
	}
	return watts * IlluminancePerWatt / a
}

// relightLocked recomputes the Illuminance of the given zones (nil entries
// are skipped). In the contract model it is the active lights' power ×
// IlluminancePerWatt / area, 0 with no light on, maintained once a light or
// a photometer has been in the zone (before that, a value set by hand is
// left alone). In the realistic model every zone has it: daylight plus the
// lights' flux.
func (h *Home) relightLocked(zones ...*Zone) { h.relightShapedLocked(zones, nil, nil, nil) }

// relightShapedLocked is relightLocked given the zones' shapes (shapes[i]
// is zones[i]'s) and their entries in the zone index, or nil to work them
// out as needed. kept, unless nil, holds each zone's Illuminance as its
// variables hold it (NaN: not known), and is kept so: a zone whose
// Illuminance stays is not written, nor read (see keptZones.illum), and
// one known to change is written without being read.
func (h *Home) relightShapedLocked(zones []*Zone, shapes []thermalZone, ents []*zoneEntry, kept []float64) {
	realistic := h.physics == PhysicsRealistic
	outdoor := -1.0 // the outdoor illuminance, once read
	for i, z := range zones {
		if z == nil {
			continue
		}
		sum, involved := 0.0, realistic || h.inZone.lit(z)
		switch {
		case realistic && ents != nil:
			sum = ents[i].sumsOf().flux
		case realistic:
			sum = h.inZone.lookup(z).sumsOf().flux
		default:
			for _, d := range h.inZone.in(z) {
				switch {
				case d.kind.Behavior.Light != nil:
					sum += d.light
					involved = true
				case d.sensesLight:
					involved = true
				}
			}
		}
		if !involved {
			continue
		}
		if !realistic { // the realistic model lights every zone
			h.inZone.entry(z).maintains |= maintainsLight
		}
		e := 0.0
		if a := z.AreaM2(); a > 0 {
			if realistic {
				if outdoor < 0 {
					outdoor, _ = h.env.illuminance(h.nowLocked())
				}
				day := 0.0
				switch {
				case outdoor == 0:
				case shapes != nil:
					day = daylightThrough(&shapes[i], outdoor)
				default:
					t := h.shape(z, 0, false) // daylight: the envelope does not count
					day = daylightThrough(&t, outdoor)
				}
				e = sum*UtilisationFactor/a + day
			} else {
				e = sum * IlluminancePerWatt / a
			}
		}
		if kept != nil {
			was := kept[i]
			if was == e {
				continue // the zone holds it already
			}
			kept[i] = e
			if !math.IsNaN(was) {
				h.changeVariableLocked(z, VarIlluminance, was, true, &e) // the zone holds it
				continue
			}
		}
		h.setVariableLocked(z, VarIlluminance, &e)
	}
}

// renoiseLocked recomputes the Noise variable of the given zones where a
// noisy kind stands, or stood: the levels of its active devices added as
// sound powers, 0 when none makes a sound.
func (h *Home) renoiseLocked(zones ...*Zone) {
	for _, z := range zones {
		if z == nil {
			continue
		}
		power, involved := 0.0, h.inZone.noisy(z)
		for _, d := range h.inZone.in(z) {
			if d.kind.Behavior.Noise == nil {
				continue
			}
			involved = true
			if !math.IsInf(d.noise, -1) {
				power += math.Pow(10, d.noise/10)
			}
		}
		if !involved {
			continue
		}
		h.inZone.entry(z).maintains |= maintainsNoise
		db := 0.0
		if power > 0 {
			db = 10 * math.Log10(power)
		}
		h.setVariableLocked(z, VarNoise, &db)
	}
}

// reading returns the live value of a sensor reading: frozen while the
// sensor is faulty, its default outside every zone (-1 for the Thermometer
// and the Photometer, 0 for the gas sensors), else its zone's variable.
func (d *device) reading(spec PropertySpec) any {
	if v, ok := d.frozen[spec.Name]; ok {
		return v
	}
	if d.zone == nil {
		return spec.outside()
	}
	if v, ok := d.zone.Variables[spec.Follows]; ok {
		return v
	}
	return spec.unset()
}

// unset returns what a reading that follows a zone variable reads in a
// zone without that variable.
func (p PropertySpec) unset() any {
	switch p.Follows {
	case VarTemperature:
		return DefaultTemperature
	case VarIlluminance:
		return 0.0
	}
	return p.Default
}

// outside returns what a reading that follows a zone variable reads
// outside every zone: its default, as a number.
func (p PropertySpec) outside() float64 {
	f, _ := toFloat(p.Default)
	return f
}

// freeze keeps the sensor's current readings while it is faulty; thaw lets
// them follow the zone again.
func (d *device) freeze() {
	for _, spec := range d.kind.Properties {
		if spec.Follows != "" {
			if d.frozen == nil {
				d.frozen = map[string]any{}
			}
			d.frozen[spec.Name] = d.reading(spec)
		}
	}
}

func (d *device) thaw() { d.frozen = nil }

// followsLocked publishes the new readings of the sensors that follow the
// variable of z that just changed.
func (h *Home) followsLocked(z *Zone, variable string, old any) {
	if !h.watchedLocked() {
		return
	}
	for _, d := range h.inZone.in(z) {
		for _, spec := range d.kind.Properties {
			if spec.Follows != variable {
				continue
			}
			if _, frozen := d.frozen[spec.Name]; frozen {
				continue
			}
			// The sensor read old, or, when the variable was just
			// added, what it reads without it; a reading that did not
			// change (a Temperature added at the 293.15 it read) is no
			// event.
			was := old
			if was == nil {
				was = spec.unset()
			}
			s := d.snapshot(h)
			v := s.Properties[spec.Name]
			if valueEqual(v, was) {
				continue
			}
			h.publishLocked(Event{Type: EventDevicePropertyUpdated, DeviceID: d.ID, Device: &s,
				Property: spec.Name, Value: v, OldValue: was})
		}
	}
}

// settleDeviceLocked applies the effects of a device that was added, changed
// or moved out of zone from: the zone's temperature appears when a
// thermometer first needs it, and the zones it left and entered are
// relit, renoised and rebalanced. recount is false when the device stayed
// in its zone and what the zone's sums count of it did not change (see
// refresh): the sums are then kept.
func (h *Home) settleDeviceLocked(d *device, from *Zone, recount bool) {
	if t := d.timer; t != nil {
		t.heatPower = d.heat
		if c := t.heatCell; c != nil && c.z != d.zone {
			t.heatCell = nil // found again by the next update
		}
	}
	if d.zone != nil && d.followsVariable(VarTemperature) {
		h.ensureTemperatureLocked(d.zone)
	}
	if from != d.zone {
		recount = true
		h.settleZoneEffectsLocked(d, from, true)
	}
	h.settleZoneEffectsLocked(d, d.zone, recount)
}

// settleZoneEffectsLocked recomputes the variables of zone z that device d
// has a part in, and, with recount, marks its sums to be added up again.
func (h *Home) settleZoneEffectsLocked(d *device, z *Zone, recount bool) {
	if z == nil {
		return
	}
	if recount {
		h.inZone.changed(z)
	}
	b := &d.kind.Behavior
	if b.Light != nil || d.sensesLight {
		h.relightLocked(z)
	}
	if b.Noise != nil {
		h.renoiseLocked(z)
	}
	if b.Consumption != nil && h.physics == PhysicsRealistic && recount {
		// Only when what the device draws, or the zone's devices, may have
		// changed (recount; what refresh compares holds consumption): a
		// Camera counting a person who came in would otherwise add up its
		// whole zone again, for each camera of the zone.
		h.meterLocked(z)
	}
}

// deriveLocked runs the device's Derive behaviour as part of the change in
// progress, unless the device is faulty (and its kind does not say
// DeriveWhenFaulty), and reports whether it changed a property.
func (h *Home) deriveLocked(d *device) bool {
	b := &d.kind.Behavior
	if b.Derive == nil || d.faulty && !b.DeriveWhenFaulty {
		return false
	}
	c := h.contextLocked(d, false)
	b.Derive(c)
	changed := c.changed
	h.releaseContextLocked(c)
	return changed
}

// personMovedLocked tells the devices watching persons in the zones person
// p left and entered what happened, after p moved from zone id from
// (LocationUnknown if none); gone is set when the person was removed.
// fromZ and toZ are the zones left and entered, nil for none (or a zone
// deleted). Only the devices whose behaviour the move concerns are called
// (see personsNeed), in creation order.
func (h *Home) personMovedLocked(p *Person, from string, fromZ, toZ *Zone, moved, gone bool) {
	to := p.Location
	if gone {
		to = LocationUnknown
	}
	crossed := from != to
	if !crossed && !moved || !h.unwatchedMoves && !h.watchedLocked() {
		return
	}
	a, needA := h.moveConcernsLocked(fromZ, crossed, 0)
	var b []watcher
	var needB personsNeed
	if fromZ != toZ {
		b, needB = h.moveConcernsLocked(toZ, crossed, 1)
	}
	for len(a) > 0 || len(b) > 0 {
		// The devices of both zones, in creation order.
		var w watcher
		need := needA
		if len(b) == 0 || len(a) > 0 && a[0].key < b[0].key {
			w, a = a[0], a[1:]
		} else {
			w, b, need = b[0], b[1:], needB
		}
		if w.watch()&need == 0 || w.d.faulty {
			continue
		}
		d := w.d
		motion := MotionMove
		switch {
		case d.zone == fromZ && from != to:
			motion = MotionLeave
		case d.zone == toZ && from != to:
			motion = MotionEnter
		}
		c := h.contextLocked(d, true)
		d.kind.Behavior.Persons(c, PersonMotion{PersonID: p.ID, Motion: motion})
		h.releaseContextLocked(c)
	}
}

// moveConcernsLocked returns the devices of zone z that watch persons, if
// a person's move concerns any of them, and what of theirs it concerns
// (see personsNeed). crossed: the person entered or left z, after which z
// holds occupied persons if it has just become empty (0, for the zone
// left) or occupied (1, for the zone entered).
func (h *Home) moveConcernsLocked(z *Zone, crossed bool, occupied int) ([]watcher, personsNeed) {
	e := h.inZone.lookup(z)
	if e == nil || e.watch == 0 {
		return nil, 0
	}
	need := needEveryMove
	watched := h.watchedLocked()
	if watched {
		need |= needWatched
	}
	if crossed && watched {
		need |= needCount
		if e.watch&needOccupancy != 0 && h.personsInLocked(z) == occupied {
			need |= needOccupancy
		}
	}
	if e.watch&need == 0 {
		return nil, 0
	}
	return e.watchers, need
}
