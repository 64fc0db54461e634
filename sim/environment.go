package sim

import (
	"math"
	"time"
)

// Environment is the outdoors of a home and what its physics model makes of
// it: the outdoor temperature (constant or a daily curve), the place on
// Earth that sets the sun's course, the sky, and the windows rooms have by
// default. In the contract model it is kept and reported but acts on
// nothing.
type Environment struct {
	// Physics is the home's model; it is chosen when the home is made.
	Physics Physics `json:"physics"`
	// OutdoorTemperature is the outdoor temperature now, in kelvin: the
	// constant, or the daily curve's value at the current simulated time.
	OutdoorTemperature float64 `json:"outdoorTemperature"`
	// OutdoorMin and OutdoorMax, in kelvin, are the daily curve's minimum
	// (at 05:00 local mean solar time) and maximum (at 15:00); nil while
	// the outdoor temperature is constant.
	OutdoorMin *float64 `json:"outdoorMin,omitempty"`
	OutdoorMax *float64 `json:"outdoorMax,omitempty"`
	// Latitude and Longitude, in degrees (north and east positive), place
	// the home for the sun's course and the local solar time.
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	// Sky is "clear", "partly-cloudy" or "overcast".
	Sky string `json:"sky"`
	// WindowShare is the window area of a zone as a share of its floor
	// area, for zones without a WindowShare variable of their own.
	WindowShare float64 `json:"windowShare"`
	// SunElevation is the sun's elevation now, in degrees above the
	// horizon (negative at night).
	SunElevation float64 `json:"sunElevation"`
	// OutdoorIlluminance is the daylight now on a horizontal surface
	// outdoors, in lux.
	OutdoorIlluminance float64 `json:"outdoorIlluminance"`
}

// EnvironmentUpdate is a partial change of the environment: a nil field
// keeps its value.
type EnvironmentUpdate struct {
	// Physics cannot change: it may only repeat the home's model.
	Physics *Physics
	// OutdoorTemperature makes the outdoor temperature constant, replacing
	// a daily curve. Sent together with OutdoorMin or OutdoorMax it must
	// equal the current outdoor temperature (so that an Environment read
	// earlier can be sent back) and the curve wins.
	OutdoorTemperature *float64
	// OutdoorMin and OutdoorMax set the daily curve; both are needed to
	// start one (from a constant), either changes one. Min must not exceed
	// Max.
	OutdoorMin, OutdoorMax *float64
	// Latitude in [-90, 90] and Longitude in [-180, 180], degrees.
	Latitude, Longitude *float64
	// Sky is "clear", "partly-cloudy" or "overcast".
	Sky *string
	// WindowShare is in [0, 1].
	WindowShare *float64
	// SunElevation and OutdoorIlluminance are derived: what is sent for
	// them is ignored.
	SunElevation, OutdoorIlluminance *float64
}

// Defaults of the environment: Grenoble, where iCasa was written, on a mild
// day under a clear sky, with windows of 15 % of the floor area.
const (
	DefaultLatitude           = 45.19
	DefaultLongitude          = 5.72
	DefaultOutdoorTemperature = 283.15
	DefaultSky                = "clear"
	DefaultWindowShare        = 0.15
)

// Bounds of the outdoor temperature, in kelvin (-100 °C to 70 °C).
const (
	MinOutdoorTemperature = 173.15
	MaxOutdoorTemperature = 343.15
)

// outdoors is a home's environment settings.
type outdoors struct {
	constant    float64
	curve       bool // the daily curve min..max instead of the constant
	min, max    float64
	lat, lon    float64
	sky         sky
	windowShare float64
}

func defaultOutdoors() outdoors {
	return outdoors{constant: DefaultOutdoorTemperature, lat: DefaultLatitude, lon: DefaultLongitude,
		sky: DefaultSky, windowShare: DefaultWindowShare}
}

// temperature returns the outdoor temperature at simulated time t (ms).
func (o *outdoors) temperature(t int64) float64 {
	if !o.curve {
		return o.constant
	}
	return outdoorTemperature(meanSolarHour(time.UnixMilli(t), o.lon), o.min, o.max)
}

// illuminance returns the outdoor daylight at simulated time t (ms), in lux,
// and the sun's elevation in degrees.
func (o *outdoors) illuminance(t int64) (lux, elevation float64) {
	at := time.UnixMilli(t).UTC()
	elevation = sunElevation(at, o.lat, o.lon)
	return outdoorIlluminance(elevation, at.YearDay(), o.sky), elevation
}

// Environment returns the home's environment now.
func (h *Home) Environment() Environment {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.environmentLocked()
}

func (h *Home) environmentLocked() Environment {
	now := h.nowLocked()
	o := &h.env
	e := Environment{Physics: h.physics, OutdoorTemperature: o.temperature(now), Latitude: o.lat, Longitude: o.lon,
		Sky: string(o.sky), WindowShare: o.windowShare}
	if o.curve {
		e.OutdoorMin, e.OutdoorMax = new(o.min), new(o.max)
	}
	e.OutdoorIlluminance, e.SunElevation = o.illuminance(now)
	return e
}

// UpdateEnvironment applies a partial change to the environment and returns
// it after the change. A bad value is an error of kind [ErrInvalid] and
// changes nothing. In the realistic model the change acts at once on the
// daylight and from the next step on the temperatures.
func (h *Home) UpdateEnvironment(u EnvironmentUpdate) (Environment, error) {
	h.lockChange()
	defer h.unlockChange()
	next, err := h.env.apply(u, h.physics, h.env.temperature(h.nowLocked()))
	if err != nil {
		return Environment{}, err
	}
	if next != h.env {
		h.env = next
		h.volGen++ // the zones' shapes use the window share (see stepScratch)
		e := h.environmentLocked()
		h.publishLocked(Event{Type: EventEnvironmentModified, Environment: &e})
		if h.physics == PhysicsRealistic {
			h.relightLocked(h.zones.all()...)
		}
	}
	return h.environmentLocked(), nil
}

// validate checks what can be checked of u alone: ranges and names.
func (u EnvironmentUpdate) validate() error {
	for _, f := range []struct {
		name     string
		v        *float64
		min, max float64
	}{
		{"outdoorTemperature", u.OutdoorTemperature, MinOutdoorTemperature, MaxOutdoorTemperature},
		{"outdoorMin", u.OutdoorMin, MinOutdoorTemperature, MaxOutdoorTemperature},
		{"outdoorMax", u.OutdoorMax, MinOutdoorTemperature, MaxOutdoorTemperature},
		{"latitude", u.Latitude, -90, 90},
		{"longitude", u.Longitude, -180, 180},
		{"windowShare", u.WindowShare, 0, 1},
	} {
		if f.v != nil && (math.IsNaN(*f.v) || *f.v < f.min || *f.v > f.max) {
			return invalidf("%s must be between %g and %g, not %g", f.name, f.min, f.max, *f.v)
		}
	}
	if u.OutdoorMin != nil && u.OutdoorMax != nil && *u.OutdoorMin > *u.OutdoorMax {
		return invalidf("outdoorMin (%g) must not exceed outdoorMax (%g)", *u.OutdoorMin, *u.OutdoorMax)
	}
	if u.Sky != nil {
		switch sky(*u.Sky) {
		case skyClear, skyPartlyCloudy, skyOvercast:
		default:
			return invalidf("sky must be %q, %q or %q, not %q", skyClear, skyPartlyCloudy, skyOvercast, truncate(*u.Sky))
		}
	}
	return nil
}

// apply returns o changed by u, or an error; now is the outdoor temperature
// at present.
func (o outdoors) apply(u EnvironmentUpdate, physics Physics, now float64) (outdoors, error) {
	if err := u.validate(); err != nil {
		return o, err
	}
	if u.Physics != nil && *u.Physics != physics {
		return o, invalidf("physics is %q: the model is chosen when the home is made, not changed", physics)
	}
	switch {
	case u.OutdoorMin != nil || u.OutdoorMax != nil:
		// With the curve it has, as read, a sent temperature is what the
		// curve gave when it was read: ignored, whenever that was.
		sentBack := o.curve && u.OutdoorMin != nil && u.OutdoorMax != nil && *u.OutdoorMin == o.min && *u.OutdoorMax == o.max
		if u.OutdoorTemperature != nil && *u.OutdoorTemperature != now && !sentBack {
			return o, invalidf("send either outdoorTemperature (a constant) or outdoorMin and outdoorMax (a daily curve), not both")
		}
		if !o.curve && (u.OutdoorMin == nil || u.OutdoorMax == nil) {
			return o, invalidf("a daily curve needs both outdoorMin and outdoorMax")
		}
		o.curve = true
		setIf(&o.min, u.OutdoorMin)
		setIf(&o.max, u.OutdoorMax)
		if o.min > o.max {
			return o, invalidf("outdoorMin (%g) must not exceed outdoorMax (%g)", o.min, o.max)
		}
	case u.OutdoorTemperature != nil:
		o.curve, o.min, o.max = false, 0, 0
		o.constant = *u.OutdoorTemperature
	}
	setIf(&o.lat, u.Latitude)
	setIf(&o.lon, u.Longitude)
	setIf(&o.windowShare, u.WindowShare)
	if u.Sky != nil {
		o.sky = sky(*u.Sky)
	}
	return o, nil
}
