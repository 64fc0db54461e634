package sim

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
func followingSensor(name, service, prop string, def float64, variable, unit, doc string) Kind {
	return Kind{Name: name, Service: service, Doc: doc, Properties: []PropertySpec{
		{Name: prop, Type: Number, Default: def, Derived: true, Follows: variable, Unit: unit,
			Doc: "the zone's " + variable + "; -1 outside every zone; kept while faulty"},
	}}
}

// sensePresence sets a presence sensor: true while anyone is in its zone.
func sensePresence(c *DeviceContext) { c.Set(PropSensedPresence, c.PersonCount() > 0) }

// builtinKinds are the built-in kinds, in their listing order.
var builtinKinds = []Kind{
	thermalKind("Heater", "heater", +1),
	thermalKind("Cooler", "cooler", -1),
	followingSensor("Thermometer", "fr.liglab.adele.icasa.device.temperature.Thermometer",
		PropCurrentTemperature, -1.0, VarTemperature, "K", "Reads its zone's temperature."),
	followingSensor("Photometer", "fr.liglab.adele.icasa.device.light.Photometer",
		PropCurrentIlluminance, -1.0, VarIlluminance, "lx", "Reads its zone's illuminance."),
	{
		Name: "DimmerLight", Service: "fr.liglab.adele.icasa.device.light.DimmerLight",
		Doc: "A dimmable lamp: lights its zone with power_level × max_power watts.",
		Properties: []PropertySpec{
			{Name: PropPowerLevel, Type: Number, Default: 0.0, Min: 0, Max: 1, Doc: "share of the maximum power in use"},
			{Name: PropMaxPower, Type: Number, Default: 100.0, Min: 0, Max: maxWatts, Unit: "W", Doc: "power at level 1"},
			{Name: PropMaxIlluminance, Type: Number, Default: 0.0, Derived: true, Unit: "lx", Doc: "what the light gives its zone at full power"},
			efficacySpec,
		},
		Behavior: Behavior{
			Light:       func(p Props) float64 { return p.Number(PropPowerLevel) * p.Number(PropMaxPower) },
			Consumption: func(p Props) float64 { return p.Number(PropPowerLevel) * p.Number(PropMaxPower) },
			Derive:      deriveMaxIlluminance,
		},
	},
	{
		Name: "BinaryLight", Service: "fr.liglab.adele.icasa.device.light.BinaryLight",
		Doc: "An on/off lamp: lights its zone with max_power watts while on.",
		Properties: []PropertySpec{
			{Name: PropPowerStatus, Type: Bool, Default: false, Doc: "on"},
			{Name: PropMaxPower, Type: Number, Default: 100.0, Min: 0, Max: maxWatts, Unit: "W", Doc: "power when on"},
			efficacySpec,
		},
		Behavior: Behavior{
			Light:       onPower(PropPowerStatus, PropMaxPower),
			Consumption: onPower(PropPowerStatus, PropMaxPower),
		},
	},
	{
		Name: "PresenceSensor", Service: "fr.liglab.adele.icasa.device.presence.PresenceSensor",
		Doc: "Senses whether anyone is in its zone.",
		Properties: []PropertySpec{
			{Name: PropSensedPresence, Type: Bool, Default: false, Derived: true, Doc: "true while any person is in the zone; kept while faulty"},
		},
		Behavior: Behavior{
			Derive:  sensePresence,
			Persons: func(c *DeviceContext, _ PersonMotion) { sensePresence(c) },
		},
	},
	{
		Name: "MotionSensor", Service: "fr.liglab.adele.icasa.device.motion.MotionSensor",
		Doc: `Emits a device-event {"personId", "motion": "enter"|"move"|"leave"} when a person enters, moves in or leaves its zone.`,
		Behavior: Behavior{
			Persons: func(c *DeviceContext, m PersonMotion) {
				c.Emit(map[string]any{"personId": m.PersonID, "motion": m.Motion})
			},
		},
	},
	{
		Name: "PushButton", Service: "fr.liglab.adele.icasa.device.button.PushButton",
		Doc: "A button, pushed and held while push_and_hold is true.",
		Properties: []PropertySpec{
			{Name: PropPushAndHold, Type: Bool, Default: false, Doc: "held down"},
		},
	},
	{
		Name: "ToggleSwitch", Service: "fr.liglab.adele.icasa.device.power.PowerSwitch",
		Doc: "A switch, on while current_status is true.",
		Properties: []PropertySpec{
			{Name: PropCurrentStatus, Type: Bool, Default: false, Doc: "on"},
		},
	},
	{
		Name: "Sprinkler", Service: "fr.liglab.adele.icasa.device.sprinkler.Sprinkler",
		Doc: "A fire sprinkler, spraying while power_status is true.",
		Properties: []PropertySpec{
			{Name: PropPowerStatus, Type: Bool, Default: false, Doc: "spraying"},
		},
	},
	followingSensor("COGasSensor", "fr.liglab.adele.icasa.device.gasSensor.CarbonMonoxydeSensor",
		PropCurrentConcentration, 0.0, VarCOConcentration, "ppm", "Reads its zone's carbon monoxide concentration."),
	followingSensor("CO2GasSensor", "fr.liglab.adele.icasa.device.gasSensor.CarbonDioxydeSensor",
		PropCurrentConcentration, 0.0, VarCO2Concentration, "ppm", "Reads its zone's carbon dioxide concentration."),
}

// onPower returns the power of a device that draws watts (a property) while
// a boolean property is true.
func onPower(on, watts string) func(Props) float64 {
	return func(p Props) float64 {
		if p.Bool(on) {
			return p.Number(watts)
		}
		return 0
	}
}
