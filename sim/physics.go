package sim

import "math"

// Physical constants of the simulation.
const (
	// DefaultTemperature is a zone's temperature, in kelvin, when it is first
	// needed (by a heater, a cooler or a thermometer).
	DefaultTemperature = 293.15
	// MinTemperature and MaxTemperature bound the temperature heaters and
	// coolers can reach, in kelvin.
	MinTemperature = 283.16
	MaxTemperature = 303.16
	// HeatCapacityPerM3 is the heat capacity of air, in J/(m³·K): a zone's
	// temperature changes by P × Δt / (HeatCapacityPerM3 × volume).
	HeatCapacityPerM3 = 1200.0
)

// thermal describes a kind that heats (sign +1) or cools (sign -1) its zone.
type thermal struct {
	sign                     float64
	level, maxLevel, periodP string
}

var thermals = map[string]thermal{
	"Heater": {+1, PropHeaterPowerLevel, PropHeaterMaxPowerLevel, PropHeaterPeriod},
	"Cooler": {-1, PropCoolerPowerLevel, PropCoolerMaxPowerLevel, PropCoolerPeriod},
}

func num(v any) float64 {
	f, _ := toFloat(v)
	return f
}

// period returns the device's update period in ms, if it has one.
func (d *device) period() (int64, bool) {
	th, ok := thermals[d.kind.Name]
	if !ok {
		return 0, false
	}
	return int64(num(d.Properties[th.periodP])), true
}

// startTimerLocked schedules the periodic update of a heater or cooler, one
// period after now.
func (h *Home) startTimerLocked(d *device) {
	p, ok := d.period()
	if !ok {
		return
	}
	d.timer = &timer{period: p, fire: func(h *Home, at int64) { h.tickThermalLocked(d) }}
	h.scheduleLocked(d.timer, h.nowLocked()+p)
}

// retimeLocked applies a changed update period: the next update comes one
// new period after the previous one (or now, if that is already past).
func (h *Home) retimeLocked(d *device) {
	p, ok := d.period()
	if !ok || d.timer == nil || p == d.timer.period {
		return
	}
	next := d.timer.at - d.timer.period + p
	h.cancelLocked(d.timer)
	if now := h.nowLocked(); next < now {
		next = now
	}
	d.timer.period = p
	h.scheduleLocked(d.timer, next)
}

// refresh recomputes what the physics caches from the device's properties
// and state. Call it after any change to them.
func (d *device) refresh() {
	th, ok := thermals[d.kind.Name]
	if !ok {
		return
	}
	d.power = 0
	if d.State == StateActivated {
		d.power = th.sign * num(d.Properties[th.level]) * num(d.Properties[th.maxLevel])
	}
}

// tickThermalLocked applies one period of a heater's or cooler's power to
// its zone: ΔT = ±P × Δt / (1200 × V), clamped to [MinTemperature,
// MaxTemperature]. A deactivated device, or one outside every zone, has no
// effect.
func (h *Home) tickThermalLocked(d *device) {
	z, p := d.zone, d.power
	if z == nil || p == 0 {
		return
	}
	v := z.VolumeM3()
	if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return
	}
	dt := float64(d.timer.period) / 1000
	t := h.ensureTemperatureLocked(z) + p*dt/(HeatCapacityPerM3*v)
	t = min(max(t, MinTemperature), MaxTemperature)
	h.setVariableLocked(z, VarTemperature, &t)
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

// isLight reports whether the device lights its zone.
func (d *device) isLight() bool {
	return d.kind.Name == "DimmerLight" || d.kind.Name == "BinaryLight"
}

// lightPower returns the power, in watts, an active light gives its zone.
func (d *device) lightPower() float64 {
	if d.State != StateActivated {
		return 0
	}
	switch d.kind.Name {
	case "DimmerLight":
		return num(d.Properties[PropPowerLevel]) * num(d.Properties[PropMaxPower])
	case "BinaryLight":
		if on, _ := d.Properties[PropPowerStatus].(bool); on {
			return num(d.Properties[PropMaxPower])
		}
	}
	return 0
}

// relightLocked recomputes the Illuminance of the given zones (nil entries
// are skipped): the active lights' power × IlluminancePerWatt / area, 0 with
// no light on. A zone's Illuminance is maintained once a light or a
// photometer has been in it; before that, a value set by hand is left alone.
func (h *Home) relightLocked(zones ...*Zone) {
	for _, z := range zones {
		if z == nil {
			continue
		}
		sum, involved := 0.0, h.lit[z.ID]
		for _, d := range h.devices.list {
			if d.zone != z {
				continue
			}
			if d.isLight() {
				sum += d.lightPower()
				involved = true
			} else if d.kind.Name == "Photometer" {
				involved = true
			}
		}
		if !involved {
			continue
		}
		h.lit[z.ID] = true
		e := 0.0
		if a := z.AreaM2(); a > 0 {
			e = sum * IlluminancePerWatt / a
		}
		h.setVariableLocked(z, VarIlluminance, &e)
	}
}

// reading returns the live value of a sensor reading: frozen while the
// sensor is faulty, -1 outside every zone, else its zone's variable.
func (d *device) reading(spec PropertySpec) any {
	if v, ok := d.frozen[spec.Name]; ok {
		return v
	}
	if d.zone == nil {
		return -1.0
	}
	if v, ok := d.zone.Variables[spec.Follows]; ok {
		return v
	}
	switch spec.Follows {
	case VarTemperature:
		return DefaultTemperature
	case VarIlluminance:
		return 0.0
	}
	return spec.Default
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
	for _, d := range h.devices.list {
		if d.zone != z {
			continue
		}
		for _, spec := range d.kind.Properties {
			if spec.Follows != variable {
				continue
			}
			if _, frozen := d.frozen[spec.Name]; frozen {
				continue
			}
			s := d.snapshot()
			h.publishLocked(Event{Type: EventDevicePropertyUpdated, DeviceID: d.ID, Device: &s,
				Property: spec.Name, Value: s.Properties[spec.Name], OldValue: old})
		}
	}
}

// settleDeviceLocked applies the effects of a device that was added, changed
// or moved out of zone from: the zone's temperature appears when a
// thermometer first needs it, lights relight the zones they left and
// entered, presence sensors look for persons.
func (h *Home) settleDeviceLocked(d *device, from *Zone) {
	if d.zone != nil {
		for _, spec := range d.kind.Properties {
			if spec.Follows == VarTemperature {
				h.ensureTemperatureLocked(d.zone)
			}
		}
	}
	if d.isLight() || d.kind.Name == "Photometer" {
		if from != d.zone {
			h.relightLocked(from)
		}
		h.relightLocked(d.zone)
	}
	if d.kind.Name == "PresenceSensor" {
		h.sensePresenceLocked(d)
	}
}

// sensePresenceLocked updates a presence sensor: true while any person is
// in its zone.
func (h *Home) sensePresenceLocked(d *device) {
	present := false
	if d.zone != nil {
		for _, p := range h.persons.list {
			if p.Location == d.zone.ID {
				present = true
				break
			}
		}
	}
	if _, frozen := d.frozen[PropSensedPresence]; frozen || d.Fault == FaultYes {
		return
	}
	old := d.Properties[PropSensedPresence]
	if old == present {
		return
	}
	d.Properties[PropSensedPresence] = present
	if h.watchedLocked() {
		s := d.snapshot()
		h.publishLocked(Event{Type: EventDevicePropertyUpdated, DeviceID: d.ID, Device: &s,
			Property: PropSensedPresence, Value: present, OldValue: old})
	}
}

// Motion kinds of the data of a motion sensor's device-event.
const (
	MotionEnter = "enter"
	MotionMove  = "move"
	MotionLeave = "leave"
)

// personMovedLocked updates presence sensors and fires motion sensors after
// person p moved from zone id from (LocationUnknown if none); gone is set
// when the person was removed.
func (h *Home) personMovedLocked(p *Person, from string, moved, gone bool) {
	to := p.Location
	if gone {
		to = LocationUnknown
	}
	fromZ, _ := h.zones.get(from)
	toZ, _ := h.zones.get(to)
	for _, d := range h.sensors {
		if d.zone == nil || d.zone != fromZ && d.zone != toZ {
			continue
		}
		switch d.kind.Name {
		case "PresenceSensor":
			h.sensePresenceLocked(d)
		case "MotionSensor":
			if !h.watchedLocked() || d.Fault == FaultYes {
				continue
			}
			motion := MotionMove
			switch {
			case from == to && !moved:
				continue
			case d.zone == fromZ && from != to:
				motion = MotionLeave
			case d.zone == toZ && from != to:
				motion = MotionEnter
			}
			s := d.snapshot()
			h.publishLocked(Event{Type: EventDeviceEvent, DeviceID: d.ID, Device: &s,
				Value: map[string]any{"personId": p.ID, "motion": motion}})
		}
	}
}
