package sim

import (
	"maps"
	"math"
	"slices"
)

// Names of zone variables with a meaning to the simulation.
const (
	VarTemperature      = "Temperature"
	VarIlluminance      = "Illuminance"
	VarVolume           = "Volume"
	VarCOConcentration  = "COConcentration"
	VarCO2Concentration = "CO2Concentration"
)

// Zone is a rectangular area of the plan, usually a room. Coordinates are in
// plan units, edges inclusive.
type Zone struct {
	ID        string             `json:"id"`
	Name      string             `json:"name"`
	IsRoom    bool               `json:"isRoom"`
	LeftX     int                `json:"leftX"`
	TopY      int                `json:"topY"`
	RightX    int                `json:"rightX"`
	BottomY   int                `json:"bottomY"`
	Variables map[string]float64 `json:"variables"`
}

func (z *Zone) clone() Zone {
	c := *z
	c.Variables = maps.Clone(z.Variables)
	if c.Variables == nil {
		c.Variables = map[string]float64{}
	}
	return c
}

// ZoneSpec describes a zone to create.
type ZoneSpec struct {
	// ID is required: see [ValidID].
	ID string
	// Name defaults to the id.
	Name string
	// IsRoom defaults to true.
	IsRoom *bool
	// The edges, each in [-MaxCoordinate, MaxCoordinate], with RightX >= LeftX and
	// BottomY >= TopY.
	LeftX, TopY, RightX, BottomY int
	// Variables are the zone's initial variables; nil means none.
	Variables map[string]float64
}

// ZoneUpdate is a partial change of a zone: a nil field keeps its value.
type ZoneUpdate struct {
	// Name, when set to "", resets the name to the id.
	Name                         *string
	IsRoom                       *bool
	LeftX, TopY, RightX, BottomY *int
	// Variables lists variables to set; a nil value removes the variable.
	Variables map[string]*float64
}

func checkZoneGeometry(z *Zone) error {
	for _, c := range []struct {
		name string
		v    int
	}{{"leftX", z.LeftX}, {"topY", z.TopY}, {"rightX", z.RightX}, {"bottomY", z.BottomY}} {
		if err := checkPosition(c.name, c.v); err != nil {
			return err
		}
	}
	if z.RightX < z.LeftX {
		return invalidf("rightX (%d) must not be less than leftX (%d)", z.RightX, z.LeftX)
	}
	if z.BottomY < z.TopY {
		return invalidf("bottomY (%d) must not be less than topY (%d)", z.BottomY, z.TopY)
	}
	return nil
}

// checkVariable checks a zone variable for a home of that physics model.
func checkVariable(name string, v float64, physics Physics) error {
	if err := checkKey("variable name", name); err != nil {
		return err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return invalidf("variable %q must be a finite number", name)
	}
	if name == VarWindowShare && physics == PhysicsRealistic && (v < 0 || v > 1) { // the contract's variables are any numbers
		return invalidf("variable %q is a share of the floor area: between 0 and 1, not %v", name, v)
	}
	return nil
}

// CreateZone adds a zone and returns it. A missing or malformed id, a
// coordinate out of range or inverted edges are errors of kind [ErrInvalid];
// an id already used by a zone is [ErrConflict]. Devices and persons inside
// the new zone are relocated.
func (h *Home) CreateZone(spec ZoneSpec) (Zone, error) {
	if err := checkID("zone", spec.ID); err != nil {
		return Zone{}, err
	}
	if spec.ID == LocationUnknown {
		return Zone{}, invalidf("zone id %q is reserved: it is the location of persons outside every zone", LocationUnknown)
	}
	z := &Zone{
		ID: spec.ID, Name: spec.Name, IsRoom: true,
		LeftX: spec.LeftX, TopY: spec.TopY, RightX: spec.RightX, BottomY: spec.BottomY,
		Variables: make(map[string]float64, len(spec.Variables)),
	}
	if z.Name == "" {
		z.Name = z.ID
	}
	if err := checkName("zone name", z.Name); err != nil {
		return Zone{}, err
	}
	if spec.IsRoom != nil {
		z.IsRoom = *spec.IsRoom
	}
	if err := checkZoneGeometry(z); err != nil {
		return Zone{}, err
	}
	if n := ownVariables(spec.Variables); n > MaxZoneVariables {
		return Zone{}, invalidf("zone %q would hold %d variables beside those the home sets, more than %d", z.ID, n, MaxZoneVariables)
	}
	for _, k := range slices.Sorted(maps.Keys(spec.Variables)) {
		if err := checkVariable(k, spec.Variables[k], h.physics); err != nil {
			return Zone{}, err
		}
		z.Variables[k] = spec.Variables[k]
	}

	h.lockChange()
	defer h.unlockChange()
	if _, ok := h.zones.get(z.ID); ok {
		return Zone{}, conflictf("zone %q already exists", z.ID)
	}
	if err := full(h.zones.len(), h.maxZones, "zones", "MaxZones", "max-zones"); err != nil {
		return Zone{}, err
	}
	h.zones.add(z.ID, z)
	h.zoneAddedLocked(z)
	h.publishZoneLocked(EventZoneAdded, z, "", nil, nil)
	if h.physics == PhysicsRealistic {
		// Every zone has a temperature and daylight in the realistic model.
		h.ensureTemperatureLocked(z)
		h.relightLocked(z)
	}
	h.relocateLocked(*z)
	return z.clone(), nil
}

// Zone returns the zone with the given id, or an error of kind [ErrNotFound].
func (h *Home) Zone(id string) (Zone, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	z, ok := h.zones.get(id)
	if !ok {
		return Zone{}, notFoundf("zone %q does not exist", truncate(id))
	}
	return z.clone(), nil
}

// Zones returns every zone, in creation order.
func (h *Home) Zones() []Zone {
	h.mu.RLock()
	defer h.mu.RUnlock()
	all := h.zones.all()
	out := make([]Zone, len(all))
	for i, z := range all {
		out[i] = z.clone()
	}
	return out
}

// MaxZoneVariables bounds the variables a zone holds beside those the home
// itself sets (Temperature, Illuminance, Noise and Electricity, which do not
// count): a change of each is an event that carries the whole zone, so an
// update of many on a zone of many would cost their product. A creation or
// an update that would leave a zone with more is an error of kind
// [ErrInvalid]. The home's own do not count, as a kind's properties do not
// for a device, so that a script saved from a home (where they may have
// come before or after the others) restores it whatever their order.
const MaxZoneVariables = 1000

// homeVariable reports whether the home itself sets zone variable name (see
// MaxZoneVariables).
func homeVariable(name string) bool {
	switch name {
	case VarTemperature, VarIlluminance, VarNoise, VarElectricity:
		return true
	}
	return false
}

// ownVariables returns the number of vars that the home does not set itself.
func ownVariables[V any](vars map[string]V) int {
	n := 0
	for k := range vars {
		if !homeVariable(k) {
			n++
		}
	}
	return n
}

// UpdateZone applies a partial change to a zone and returns the zone after
// it. The change is validated in full before anything is applied. Moving or
// resizing the zone relocates the devices and persons in its rectangle
// before or after the change.
func (h *Home) UpdateZone(id string, u ZoneUpdate) (Zone, error) {
	h.lockChange()
	defer h.unlockChange()
	cur, ok := h.zones.get(id)
	if !ok {
		return Zone{}, notFoundf("zone %q does not exist", truncate(id))
	}
	next := cur.clone()
	if u.Name != nil {
		next.Name = *u.Name
		if next.Name == "" {
			next.Name = next.ID
		}
		if err := checkName("zone name", next.Name); err != nil {
			return Zone{}, err
		}
	}
	if u.IsRoom != nil {
		next.IsRoom = *u.IsRoom
	}
	setIf(&next.LeftX, u.LeftX)
	setIf(&next.TopY, u.TopY)
	setIf(&next.RightX, u.RightX)
	setIf(&next.BottomY, u.BottomY)
	if err := checkZoneGeometry(&next); err != nil {
		return Zone{}, err
	}
	names := slices.Sorted(maps.Keys(u.Variables))
	var own int // counted only for a change of variables: moves are frequent
	if len(names) > 0 {
		own = ownVariables(cur.Variables)
	}
	n := own
	for _, k := range names {
		_, had := cur.Variables[k]
		if v := u.Variables[k]; v != nil {
			if err := checkVariable(k, *v, h.physics); err != nil {
				return Zone{}, err
			}
			if !had && !homeVariable(k) {
				n++
			}
		} else if had && !homeVariable(k) {
			n--
		}
	}
	if n > MaxZoneVariables && n > own {
		return Zone{}, invalidf("zone %q would hold %d variables beside those the home sets, more than %d", cur.ID, n, MaxZoneVariables)
	}

	// Valid: apply, then publish what changed.
	moved := next.LeftX != cur.LeftX || next.TopY != cur.TopY
	resized := next.RightX-next.LeftX != cur.RightX-cur.LeftX || next.BottomY-next.TopY != cur.BottomY-cur.TopY
	renamed := next.Name != cur.Name || next.IsRoom != cur.IsRoom
	was := Zone{LeftX: cur.LeftX, TopY: cur.TopY, RightX: cur.RightX, BottomY: cur.BottomY}
	*cur = next
	if renamed {
		h.publishZoneLocked(EventZoneUpdated, cur, "", nil, nil)
	}
	if moved {
		h.publishZoneLocked(EventZoneMoved, cur, "", nil, nil)
	}
	if resized {
		h.publishZoneLocked(EventZoneResized, cur, "", nil, nil)
	}
	for _, k := range names {
		h.setVariableLocked(cur, k, u.Variables[k])
	}
	if moved || resized {
		h.invalidateShapesLocked()
		h.relocateLocked(was, *cur)
		if h.physics == PhysicsRealistic {
			h.relightLocked(cur)
		}
	}
	return cur.clone(), nil
}

// setVariableLocked sets (v != nil) or removes (v == nil) a zone variable and
// publishes the change, if any.
func (h *Home) setVariableLocked(z *Zone, name string, v *float64) {
	old, had := z.Variables[name]
	h.changeVariableLocked(z, name, old, had, v)
}

// changeVariableLocked is setVariableLocked for a variable known to hold
// old (had: to be set at all), as a caller that keeps what it wrote knows
// it: reading the zone's map for it is a cache miss in a large home (see
// keptZones).
func (h *Home) changeVariableLocked(z *Zone, name string, old float64, had bool, v *float64) {
	// Which variable, once: the realistic step sets thousands a minute.
	temperature := name == VarTemperature
	kept := temperature || name == VarIlluminance               // what the realistic step keeps (see keptZones)
	if !kept && (name == VarVolume || name == VarWindowShare) { // see heatCell and stepScratch
		h.volGen++
	}
	switch {
	case v == nil && !had, v != nil && had && old == *v:
		return
	case v == nil:
		delete(z.Variables, name)
	default:
		z.Variables[name] = *v
	}
	if kept && h.scratch != nil {
		h.scratch.writes++ // the zone no longer holds what the realistic step kept
	}
	if temperature && h.physics == PhysicsContract { // only the contract model's heat updates have cells
		if e := h.inZone.lookup(z); e != nil && e.heat != nil {
			e.heat.synced = false // what the zone holds is no longer what its heat cell left it
		}
	}
	if !h.watchedLocked() {
		return // and box nothing: heaters update zones many times a simulated second
	}
	var oldValue any
	if had {
		oldValue = old
	}
	switch {
	case v == nil:
		h.publishZoneLocked(EventZoneVariableRemoved, z, name, nil, oldValue)
	case !had:
		h.publishZoneLocked(EventZoneVariableAdded, z, name, *v, nil)
	default:
		h.publishZoneLocked(EventZoneVariableUpdated, z, name, *v, oldValue)
	}
	h.followsLocked(z, name, oldValue)
}

// DeleteZone removes a zone and relocates every device and person that was in
// it. An unknown id is an error of kind [ErrNotFound].
func (h *Home) DeleteZone(id string) error {
	h.lockChange()
	defer h.unlockChange()
	if _, ok := h.zones.get(id); !ok {
		return notFoundf("zone %q does not exist", truncate(id))
	}
	z, _ := h.zones.get(id)
	h.inZone.retire(z)
	h.zones.remove(id)
	h.invalidateShapesLocked()
	h.publishLocked(Event{Type: EventZoneRemoved, ZoneID: id})
	h.relocateLocked(*z) // its devices leave it one by one, as ever
	h.inZone.forget(z)   // and the zone's chunk of devices with its entry
	return nil
}

func (h *Home) publishZoneLocked(t EventType, z *Zone, variable string, value, old any) {
	e := Event{Type: t, ZoneID: z.ID, Property: variable, Value: value, OldValue: old}
	if h.watchedLocked() {
		c := z.clone()
		e.Zone = &c
	}
	h.publishLocked(e)
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
