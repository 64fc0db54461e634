package sim

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// The built-in device kinds: the catalogue of the original iCasa simulator,
// each a registration of properties and behaviour like any kind of a user's.

// Property names of the built-in kinds, after the spec's era of the original.
const (
	PropHeaterPowerLevel     = "heater.powerLevel"
	PropHeaterMaxPowerLevel  = "heater.maxPowerLevel"
	PropHeaterPeriod         = "heater.updaterThread.period"
	PropCoolerPowerLevel     = "cooler.powerLevel"
	PropCoolerMaxPowerLevel  = "cooler.maxPowerLevel"
	PropCoolerPeriod         = "cooler.updaterThread.period"
	PropCurrentTemperature   = "current_temperature"
	PropCurrentIlluminance   = "current_illuminance"
	PropPowerLevel           = "power_level"
	PropMaxPower             = "max_power"
	PropMaxIlluminance       = "max_illuminance"
	PropPowerStatus          = "power_status"
	PropSensedPresence       = "sensed_presence"
	PropPushAndHold          = "push_and_hold"
	PropCurrentStatus        = "current_status"
	PropCurrentConcentration = "current_concentration"
	// PropLuminousEfficacy is a light's luminous efficacy, in lm/W, in the
	// realistic model.
	PropLuminousEfficacy = "luminous_efficacy"
)

// maxPeriodMillis bounds update periods: one simulated day.
const maxPeriodMillis = 24 * 60 * 60 * 1000

// maxWatts bounds power properties.
const maxWatts = 1e9

// thermalKind returns a heater (sign +1) or a cooler (sign -1): it adds (or
// removes) powerLevel × maxPowerLevel watts to its zone's heat balance.
func thermalKind(name, prefix string, sign float64) Kind {
	level, maxLevel := prefix+".powerLevel", prefix+".maxPowerLevel"
	power := func(p Props) float64 { return p.Number(level) * p.Number(maxLevel) }
	verb := "heats"
	if sign < 0 {
		verb = "cools"
	}
	return Kind{
		Name:    name,
		Service: "fr.liglab.adele.icasa.device.temperature." + name,
		Doc:     "An electric " + lower(name) + ": " + verb + " its zone with powerLevel × maxPowerLevel watts.",
		Properties: []PropertySpec{
			{Name: level, Type: Number, Default: 0.0, Min: 0, Max: 1, Doc: "share of the maximum power in use"},
			{Name: maxLevel, Type: Number, Default: 1000.0, Min: 0, Max: maxWatts, Unit: "W", Doc: "power at level 1"},
			{Name: prefix + ".updaterThread.period", Type: Number, Default: 5000.0, Min: 1, Max: maxPeriodMillis, Unit: "ms",
				Doc: "how often the contract model applies the power to the zone"},
		},
		Behavior: Behavior{
			Heat:           func(p Props) float64 { return sign * power(p) },
			PeriodProperty: prefix + ".updaterThread.period",
			Consumption:    power,
		},
	}
}

// lower returns s with its first letter in lower case.
func lower(s string) string {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}

// efficacySpec is a light's luminous efficacy, realistic model only.
var efficacySpec = PropertySpec{Name: PropLuminousEfficacy, Type: Number, Default: DefaultEfficacy, Min: 0, Max: 683,
	Unit: "lm/W", Physics: PhysicsRealistic, Doc: "luminous flux per watt drawn"}

// deriveMaxIlluminance sets a light's max_illuminance: what it gives its
// zone at full power.
func deriveMaxIlluminance(c *DeviceContext) {
	c.Set(PropMaxIlluminance, c.Illuminance(c.Props().Number(PropMaxPower)))
}

// followingSensor returns a sensor whose reading follows a zone variable.
func followingSensor(name, service, prop, alias string, def float64, variable, unit, doc string) Kind {
	return Kind{Name: name, Service: service, Doc: doc, Properties: []PropertySpec{
		{Name: prop, Aliases: []string{alias}, Type: Number, Default: def, Derived: true, Follows: variable, Unit: unit,
			Doc: "the zone's " + variable + "; " + strconv.FormatFloat(def, 'g', -1, 64) + " outside every zone; kept while faulty"},
	}}
}

// sensing is how a built-in kind that only counts its zone's persons
// reads them: in which property, and what device d reads there of n
// persons, from what it stores. Its Derive and Persons behaviour set that
// reading (see sense); a home nobody watches works it out when the device
// is read (see device.sensesPersons).
type sensing struct {
	prop string
	read func(d *device, n int) any
}

var (
	// presenceSensing: a PresenceSensor reads whether anyone is in its
	// zone.
	presenceSensing = sensing{PropSensedPresence, func(_ *device, n int) any { return n > 0 }}
	// cameraSensing: a Camera counts the persons in its zone while it
	// records, and reads 0 while it does not.
	cameraSensing = sensing{PropCameraPersonCount, func(d *device, n int) any {
		if d.props.value(PropCameraStatus) != true {
			n = 0
		}
		return countValue(n)
	}}
)

// sense sets the reading s of a device's zone's persons.
func (s *sensing) sense(c *DeviceContext) { c.Set(s.prop, s.read(c.d, c.PersonCount())) }

// counts are the boxed values of the first counts, so that a camera's
// reading allocates nothing.
var counts = func() (c [64]any) {
	for i := range c {
		c[i] = float64(i)
	}
	return c
}()

// countValue returns n as a property value, a float64.
func countValue(n int) any {
	if n < len(counts) {
		return counts[n]
	}
	return float64(n)
}

// builtinKinds are the built-in kinds, in their listing order.
var builtinKinds = []Kind{
	thermalKind("Heater", "heater", +1),
	thermalKind("Cooler", "cooler", -1),
	followingSensor("Thermometer", "fr.liglab.adele.icasa.device.temperature.Thermometer",
		PropCurrentTemperature, "thermometer.currentTemperature", -1.0, VarTemperature, "K", "Reads its zone's temperature."),
	followingSensor("Photometer", "fr.liglab.adele.icasa.device.light.Photometer",
		PropCurrentIlluminance, "photometer.currentIlluminance", -1.0, VarIlluminance, "lx", "Reads its zone's illuminance."),
	{
		Name: "DimmerLight", Service: "fr.liglab.adele.icasa.device.light.DimmerLight",
		Doc: "A dimmable lamp: lights its zone with power_level × max_power watts.",
		Properties: []PropertySpec{
			{Name: PropPowerLevel, Type: Number, Default: 0.0, Min: 0, Max: 1, Doc: "share of the maximum power in use",
				Aliases: []string{"dimmerLight.powerLevel", "light.powerLevel"}},
			{Name: PropMaxPower, Type: Number, Default: 100.0, Min: 0, Max: maxWatts, Unit: "W", Doc: "power at level 1",
				Aliases: []string{"dimmerLight.maxPowerLevel"}},
			{Name: PropMaxIlluminance, Type: Number, Default: 0.0, Derived: true, Unit: "lx", Doc: "what the light gives its zone at full power"},
			efficacySpec,
		},
		Behavior: Behavior{
			Light:       func(p Props) float64 { return p.Number(PropPowerLevel) * p.Number(PropMaxPower) },
			Consumption: func(p Props) float64 { return p.Number(PropPowerLevel) * p.Number(PropMaxPower) },
			Derive:      deriveMaxIlluminance,
			// max_illuminance is what the light would give: not a reading.
			DeriveWhenFaulty: true,
		},
	},
	{
		Name: "BinaryLight", Service: "fr.liglab.adele.icasa.device.light.BinaryLight",
		Doc: "An on/off lamp: lights its zone with max_power watts while on.",
		Properties: []PropertySpec{
			{Name: PropPowerStatus, Type: Bool, Default: false, Doc: "on", Aliases: []string{"binaryLight.powerStatus", "light.powerStatus"}},
			{Name: PropMaxPower, Type: Number, Default: 100.0, Min: 0, Max: maxWatts, Unit: "W", Doc: "power when on",
				Aliases: []string{"binaryLight.maxPowerLevel"}},
			efficacySpec,
		},
		Behavior: Behavior{
			Light:       onPower(PropPowerStatus, PropMaxPower, 0),
			Consumption: onPower(PropPowerStatus, PropMaxPower, 0),
		},
	},
	{
		Name: "PresenceSensor", Service: "fr.liglab.adele.icasa.device.presence.PresenceSensor",
		Doc: "Senses whether anyone is in its zone.",
		Properties: []PropertySpec{
			{Name: PropSensedPresence, Type: Bool, Default: false, Derived: true, Doc: "true while any person is in the zone; kept while faulty",
				Aliases: []string{"presenceSensor.sensedPresence"}},
		},
		Behavior: Behavior{
			Derive:  presenceSensing.sense,
			Persons: func(c *DeviceContext, _ PersonMotion) { presenceSensing.sense(c) },
		},
	},
	{
		Name: "MotionSensor", Service: "fr.liglab.adele.icasa.device.motion.MotionSensor",
		Doc: `Emits a device-event {"personId", "motion": "enter"|"move"|"leave"} when a person enters, moves in or leaves its zone.`,
		Behavior: Behavior{
			Persons: func(c *DeviceContext, m PersonMotion) {
				if !c.h.watchedLocked() {
					return // Emit would drop it: build nothing
				}
				c.Emit(map[string]any{"personId": m.PersonID, "motion": m.Motion})
			},
		},
	},
	{
		Name: "PushButton", Service: "fr.liglab.adele.icasa.device.button.PushButton",
		Doc: "A button, pushed and held while push_and_hold is true.",
		Properties: []PropertySpec{
			{Name: PropPushAndHold, Type: Bool, Default: false, Doc: "held down", Aliases: []string{"pushButton.pushAndHold"}},
		},
	},
	{
		Name: "ToggleSwitch", Service: "fr.liglab.adele.icasa.device.power.PowerSwitch",
		Doc: "A switch, on while current_status is true.",
		Properties: []PropertySpec{
			{Name: PropCurrentStatus, Type: Bool, Default: false, Doc: "on", Aliases: []string{"powerSwitch.currentStatus"}},
		},
	},
	{
		Name: "Sprinkler", Service: "fr.liglab.adele.icasa.device.sprinkler.Sprinkler",
		Doc: "A fire sprinkler, spraying while power_status is true.",
		Properties: []PropertySpec{
			{Name: PropPowerStatus, Type: Bool, Default: false, Doc: "spraying", Aliases: []string{"sprinkler.powerStatus"}},
		},
		Behavior: Behavior{Water: func(p Props) bool { return p.Bool(PropPowerStatus) }},
	},
	followingSensor("COGasSensor", "fr.liglab.adele.icasa.device.gasSensor.CarbonMonoxydeSensor",
		PropCurrentConcentration, "carbonMonoxydeSensor.currentConcentration", 0.0, VarCOConcentration, "ppm", "Reads its zone's carbon monoxide concentration."),
	followingSensor("CO2GasSensor", "fr.liglab.adele.icasa.device.gasSensor.CarbonDioxydeSensor",
		PropCurrentConcentration, "carbonDioxydeSensor.currentConcentration", 0.0, VarCO2Concentration, "ppm", "Reads its zone's carbon dioxide concentration."),
}

// Property names of the kinds beyond the contract's, after iCasa's sources
// (doorWindowSensor.opneningDetection keeps iCasa's spelling, so that its
// scripts and applications work).
const (
	PropAudioSourceIsPlaying      = "audioSource.isPlaying"
	PropSpeakerVolume             = "speaker.volume"
	PropSpeakerNoiseLevel         = "speaker.noiseLevel"
	PropSpeakerMaxNoise           = "speaker.maxNoise"
	PropSpeakerAudioSource        = "speaker.audioSource"
	PropDoorWindowOpening         = "doorWindowSensor.opneningDetection"
	PropDoorWindowOpeningArea     = "doorWindowSensor.openingArea"
	PropFloodSensorAlarm          = "flood.alarm"
	PropSirenStatus               = "siren.status"
	PropSirenNoise                = "siren.noise"
	PropCameraStatus              = "camera.recording"
	PropCameraPersonCount         = "camera.personCount"
	PropPowerSwitchStatus         = "powerSwitch.currentStatus"
	PropPowerSwitchMeterWatts     = "powermeter.currentRating"
	PropBathroomScaleWeight       = "bathroomScale.currentWeight"
	PropSphygmometerSystolic      = "sphygmometer.systolic"
	PropSphygmometerDiastolic     = "sphygmometer.diastolic"
	PropSphygmometerPulse         = "sphygmometer.pulse"
	PropMedicalThermometerReading = "medicalThermometer.currentTemperature"
	PropPresenceDetected          = "presence_detected"
	PropDetectionScope            = "detection_scope"
)

// catalogueKinds are the kinds of iCasa's catalogue beyond the contract's.
var catalogueKinds = []Kind{
	{
		Name: "AudioSource", Service: "fr.liglab.adele.icasa.device.sound.AudioSource",
		Doc: "A music player; the speakers of its zone play what it plays.",
		Properties: []PropertySpec{
			{Name: PropAudioSourceIsPlaying, Type: Bool, Default: false, Doc: "playing"},
		},
		Behavior: Behavior{Consumption: onPower(PropAudioSourceIsPlaying, "", 10)},
	},
	{
		Name: "Speaker", Service: "fr.liglab.adele.icasa.device.sound.Speaker",
		Doc: "A loudspeaker: while an audio source plays (the one it names, else any in its zone) it makes volume × maxNoise dB of noise in its zone; it looks every 250 ms, as iCasa's did.",
		Properties: []PropertySpec{
			{Name: PropSpeakerVolume, Type: Number, Default: 0.0, Min: 0, Max: 1, Doc: "volume"},
			{Name: PropSpeakerMaxNoise, Type: Number, Default: 100.0, Min: 0, Max: 200, Unit: "dB", Doc: "noise at full volume"},
			{Name: PropSpeakerAudioSource, Type: String, Default: "", Doc: "id of the audio source it plays; empty: any in its zone"},
			{Name: PropSpeakerNoiseLevel, Type: Number, Default: 0.0, Derived: true, Unit: "dB", Doc: "noise it makes now"},
		},
		Behavior: Behavior{
			Noise:  silentAtZero(PropSpeakerNoiseLevel),
			Derive: listen,
			Every:  250 * time.Millisecond,
			Tick:   listen,
		},
	},
	{
		Name: "DoorWindowSensor", Service: "fr.liglab.adele.icasa.device.doorWindow.DoorWindowSensor",
		Doc: "A contact on a door or window, open while opneningDetection is true; in the realistic model an open one lets outdoor air in through openingArea m².",
		Properties: []PropertySpec{
			{Name: PropDoorWindowOpening, Type: Bool, Default: false, Doc: "open (iCasa's spelling)"},
			{Name: PropDoorWindowOpeningArea, Type: Number, Default: 1.5, Min: 0, Max: 100, Unit: "m²", Physics: PhysicsRealistic,
				Doc: "area open to the outdoors when open"},
		},
		Behavior: Behavior{Opening: onPower(PropDoorWindowOpening, PropDoorWindowOpeningArea, 0)},
	},
	{
		Name: "FloodSensor", Service: "fr.liglab.adele.icasa.device.security.FloodSensor",
		Doc: "Raises its alarm while water floods its zone: while a sprinkler (or another kind whose behaviour sprays water) there sprays.",
		Properties: []PropertySpec{
			{Name: PropFloodSensorAlarm, Type: Bool, Default: false, Derived: true, Doc: "water detected; kept while faulty"},
		},
		Behavior: Behavior{
			Derive: senseFlood,
			Every:  time.Second,
			Tick:   senseFlood,
		},
	},
	{
		Name: "Siren", Service: "fr.liglab.adele.icasa.device.security.Siren",
		Doc: "An alarm siren: while on it makes noise dB in its zone.",
		Properties: []PropertySpec{
			{Name: PropSirenStatus, Type: Bool, Default: false, Doc: "sounding"},
			{Name: PropSirenNoise, Type: Number, Default: 100.0, Min: 0, Max: 200, Unit: "dB", Doc: "noise while sounding"},
		},
		Behavior: Behavior{
			Noise: func(p Props) float64 {
				if p.Bool(PropSirenStatus) {
					return p.Number(PropSirenNoise)
				}
				return math.Inf(-1)
			},
			Consumption: onPower(PropSirenStatus, "", 20),
		},
	},
	{
		Name: "Camera", Service: "fr.liglab.adele.icasa.device.security.Camera",
		Doc: "A camera: while recording it counts the persons in its zone.",
		Properties: []PropertySpec{
			{Name: PropCameraStatus, Type: Bool, Default: false, Doc: "recording"},
			{Name: PropCameraPersonCount, Type: Number, Default: 0.0, Derived: true, Doc: "persons seen in the zone while recording"},
		},
		Behavior: Behavior{
			Derive:      cameraSensing.sense,
			Persons:     func(c *DeviceContext, _ PersonMotion) { cameraSensing.sense(c) },
			Consumption: onPower(PropCameraStatus, "", 5),
		},
	},
	{
		Name: "PowerSwitchMeter", Service: "fr.liglab.adele.icasa.device.power.PowerSwitchMeter",
		Doc: "A switch that meters the electric power its zone's other devices draw while on, read every 10 s.",
		Properties: []PropertySpec{
			{Name: PropPowerSwitchStatus, Type: Bool, Default: false, Doc: "on"},
			{Name: PropPowerSwitchMeterWatts, Type: Number, Default: 0.0, Derived: true, Unit: "W", Doc: "power drawn in the zone, 0 while off",
				Aliases: []string{"powermeter.currentrating", "powerSwitchMeter.currentConsumption"}},
		},
		Behavior: Behavior{
			Derive: meter,
			Every:  10 * time.Second,
			Tick:   meter,
		},
	},
	{
		Name: "BathroomScale", Service: "fr.liglab.adele.icasa.device.bathroomscale.BathroomScale",
		Doc: "A medical scale: weighs a person who steps near it (55 to 95 kg), back to 0 when nobody is; a scenario may set the reading too.",
		Properties: medicalProperties(
			PropertySpec{Name: PropBathroomScaleWeight, Type: Number, Default: 0.0, Min: 0, Max: 500, Unit: "kg", Doc: "weight measured"}),
		Behavior: medical(func(c *DeviceContext, r *rand.Rand) {
			c.Set(PropBathroomScaleWeight, 55+float64(r.IntN(400))/10)
		}, PropBathroomScaleWeight),
	},
	{
		Name: "Sphygmometer", Service: "fr.liglab.adele.icasa.device.sphygmometer.Sphygmometer",
		Doc: "A blood-pressure monitor: measures a person who comes near it (systolic 110 to 149 mmHg, diastolic 60 to 89, pulse 60 to 99), back to 0 when nobody is; a scenario may set the readings too.",
		Properties: medicalProperties(
			PropertySpec{Name: PropSphygmometerSystolic, Type: Number, Default: 0.0, Min: 0, Max: 300, Unit: "mmHg", Doc: "systolic pressure"},
			PropertySpec{Name: PropSphygmometerDiastolic, Type: Number, Default: 0.0, Min: 0, Max: 300, Unit: "mmHg", Doc: "diastolic pressure"},
			PropertySpec{Name: PropSphygmometerPulse, Type: Number, Default: 0.0, Min: 0, Max: 300, Unit: "bpm", Doc: "pulse"}),
		Behavior: medical(func(c *DeviceContext, r *rand.Rand) {
			c.Set(PropSphygmometerSystolic, float64(110+r.IntN(40)))
			c.Set(PropSphygmometerDiastolic, float64(60+r.IntN(30)))
			c.Set(PropSphygmometerPulse, float64(60+r.IntN(40)))
		}, PropSphygmometerSystolic, PropSphygmometerDiastolic, PropSphygmometerPulse),
	},
	{
		Name: "MedicalThermometer", Service: "fr.liglab.adele.icasa.device.medical.MedicalThermometer",
		Doc: "A clinical thermometer: takes the temperature of a person who comes near it (30 to 40 °C, in K), back to 0 when nobody is; a scenario may set the reading too.",
		Properties: medicalProperties(
			PropertySpec{Name: PropMedicalThermometerReading, Type: Number, Default: 0.0, Min: 0, Max: 400, Unit: "K", Doc: "temperature measured"}),
		Behavior: medical(func(c *DeviceContext, r *rand.Rand) {
			c.Set(PropMedicalThermometerReading, 303.15+float64(r.IntN(100))/10)
		}, PropMedicalThermometerReading),
	},
	{
		Name: "Tablet", Service: "fr.liglab.adele.icasa.device.tablet.Tablet",
		Doc: "A tablet for the occupants; like iCasa's, it has no property but its location.",
	},
}

// silentAtZero returns the noise of a device that makes the level of a
// property, none while it is 0.
func silentAtZero(level string) func(Props) float64 {
	return func(p Props) float64 {
		if l := p.Number(level); l > 0 {
			return l
		}
		return math.Inf(-1)
	}
}

// listen sets a speaker's noise: volume × maxNoise while its audio source
// plays.
func listen(c *DeviceContext) {
	p := c.Props()
	playing := false
	if id := p.Text(PropSpeakerAudioSource); id != "" {
		d, ok := c.Device(id)
		playing = ok && d.State == StateActivated && d.Properties[PropAudioSourceIsPlaying] == true
	} else {
		playing = c.zoneOthersDo(playsOne)
	}
	noise := 0.0
	if playing {
		noise = p.Number(PropSpeakerVolume) * p.Number(PropSpeakerMaxNoise)
	}
	c.Set(PropSpeakerNoiseLevel, noise)
}

// senseFlood sets a flood sensor: true while an active device in its zone
// sprays water (Behavior.Water), as a sprinkler does.
func senseFlood(c *DeviceContext) {
	c.Set(PropFloodSensorAlarm, c.zoneOthersDo(watersOne))
}

// builtinPersonsNeeds are the built-in kinds whose Persons behaviour can
// change nothing on some of the persons' moves (see personsNeed), by name.
// A PresenceSensor sets what it reads to whether anyone is in its zone,
// which is what it holds between two moves while it is not faulty (its
// Derive runs when it is created, moved, changed or mended); a Camera sets
// its count, kept the same way, and reads its zone's count only; neither's
// Persons is called while the home is not watched: they are then read
// from their zone (see device.sensesPersons). A MotionSensor builds
// nothing while the home is not watched. The other built-in watchers of
// persons, the medical devices, look at where the persons are: every
// move.
var builtinPersonsNeeds = map[string]personsNeed{
	"PresenceSensor": needOccupancy,
	"Camera":         needCount,
	"MotionSensor":   needWatched,
}

// meter sets a power meter's reading: what the other devices of its zone
// draw, while it is on.
func meter(c *DeviceContext) {
	w := 0.0
	if c.Props().Bool(PropPowerSwitchStatus) {
		w = c.ZoneConsumption()
	}
	c.Set(PropPowerSwitchMeterWatts, w)
}

// onPower returns the power of a device that draws watts (a property, or
// fixed when the name is empty) while a boolean property is true.
func onPower(on, watts string, fixed float64) func(Props) float64 {
	return func(p Props) float64 {
		switch {
		case !p.Bool(on):
			return 0
		case watts == "":
			return fixed
		}
		return p.Number(watts)
	}
}

// medicalProperties are a medical kind's readings, then the detection
// properties iCasa's medical devices have.
func medicalProperties(readings ...PropertySpec) []PropertySpec {
	return append(readings,
		PropertySpec{Name: PropPresenceDetected, Type: Bool, Default: false, Derived: true, Doc: "a person is within detection_scope; kept while faulty"},
		PropertySpec{Name: PropDetectionScope, Type: Number, Default: 33.0, Min: 0, Max: MaxCoordinate, Unit: "plan units",
			Doc: "how far from the device, along x and along y, a person of its zone is detected"})
}

// medical is the behaviour of iCasa's medical devices. A person of the
// device's zone within detection_scope of it, along both axes (iCasa's
// square "#zone" around the device), is detected: when the first one is,
// measure takes the readings, from a generator seeded by the device, the
// person and the simulated time (the same run gives the same readings);
// when nobody is left, the readings go back to 0. A faulty or deactivated
// device keeps what it shows.
func medical(measure func(c *DeviceContext, r *rand.Rand), readings ...string) Behavior {
	sense := func(c *DeviceContext) {
		if !c.Active() { // a faulty one is not asked (see Behavior.DeriveWhenFaulty)
			return
		}
		near := c.personNear(c.Props().Number(PropDetectionScope))
		was := c.Props().Bool(PropPresenceDetected)
		switch {
		case near != "" && !was:
			c.Set(PropPresenceDetected, true)
			h := fnv.New64a()
			h.Write([]byte(c.ID() + "\x00" + near + "\x00" + strconv.FormatInt(c.h.nowLocked(), 10)))
			seed := h.Sum64()
			measure(c, rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)))
		case near == "" && was:
			c.Set(PropPresenceDetected, false)
			for _, p := range readings {
				c.Set(p, 0.0)
			}
		}
	}
	return Behavior{Derive: sense, Persons: func(c *DeviceContext, _ PersonMotion) { sense(c) }}
}
