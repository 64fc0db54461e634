package sim

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Namespace is the canonical namespace of device types: a device's type is
// Namespace + "." + kind name, such as "iCasa.Heater".
const Namespace = "iCasa"

// Service names shared by every simulated device, after the kind's own one.
const (
	ServiceSimulatedDevice = "fr.liglab.adele.icasa.simulator.SimulatedDevice"
	ServiceGenericDevice   = "fr.liglab.adele.icasa.device.GenericDevice"
)

// Property names with a meaning for every device.
const (
	PropState    = "state"
	PropFault    = "fault"
	PropLocation = "Location"
)

// Values of a device's state and fault.
const (
	StateActivated   = "activated"
	StateDeactivated = "deactivated"
	FaultYes         = "yes"
	FaultNo          = "no"
)

// ValueType is the type of a property value.
type ValueType int

// The property value types.
const (
	// Number is a JSON number, held as float64.
	Number ValueType = iota
	// Bool is a JSON boolean.
	Bool
	// String is a JSON string.
	String
)

// String returns the JSON name of the type.
func (t ValueType) String() string {
	switch t {
	case Number:
		return "number"
	case Bool:
		return "boolean"
	default:
		return "string"
	}
}

// PropertySpec describes a property that a device kind defines: its type, its
// default and, for numbers, its inclusive range.
type PropertySpec struct {
	// Name is the property's name, such as "heater.powerLevel".
	Name string
	// Type is the type every value must have.
	Type ValueType
	// Default is the value a new device starts with.
	Default any
	// Min and Max bound a Number, inclusively. Both zero means unbounded.
	Min, Max float64
	// Derived properties are computed by the simulation; a client may send
	// back the current value but never set another.
	Derived bool
	// Follows names the zone variable a sensor reading follows, such as
	// "Temperature"; empty for other properties.
	Follows string
}

// bounded reports whether the spec has a range.
func (p PropertySpec) bounded() bool { return p.Min != 0 || p.Max != 0 }

// check validates v against the spec and returns it normalised (numbers of
// any Go numeric type become float64).
func (p PropertySpec) check(v any) (any, error) {
	switch p.Type {
	case Number:
		f, ok := toFloat(v)
		if !ok {
			return nil, invalidf("property %q must be a number, not %s", p.Name, describe(v))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, invalidf("property %q must be a finite number", p.Name)
		}
		if p.bounded() && (f < p.Min || f > p.Max) {
			return nil, invalidf("property %q must be between %g and %g, not %g", p.Name, p.Min, p.Max, f)
		}
		return f, nil
	case Bool:
		b, ok := v.(bool)
		if !ok {
			return nil, invalidf("property %q must be a boolean, not %s", p.Name, describe(v))
		}
		return b, nil
	default:
		s, ok := v.(string)
		if !ok {
			return nil, invalidf("property %q must be a string, not %s", p.Name, describe(v))
		}
		return s, nil
	}
}

// Kind describes a kind of simulated device.
type Kind struct {
	// Name is the bare kind name, such as "Heater".
	Name string
	// Service is the qualified name of the kind's own interface.
	Service string
	// Properties lists the properties the kind defines, in a fixed order.
	Properties []PropertySpec
}

// Type returns the canonical device type, such as "iCasa.Heater".
func (k Kind) Type() string { return Namespace + "." + k.Name }

// Services returns the three qualified interface names a device of the kind
// offers: the kind's own, the simulated-device one and the generic-device one.
func (k Kind) Services() []string {
	return []string{k.Service, ServiceSimulatedDevice, ServiceGenericDevice}
}

// Property returns the spec of the named property, if the kind defines it.
func (k Kind) Property(name string) (PropertySpec, bool) {
	for _, p := range k.Properties {
		if p.Name == name {
			return p, true
		}
	}
	return PropertySpec{}, false
}

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
)

// maxPeriodMillis bounds update periods: one simulated day.
const maxPeriodMillis = 24 * 60 * 60 * 1000

func thermalSpecs(prefix string) []PropertySpec {
	return []PropertySpec{
		{Name: prefix + ".powerLevel", Type: Number, Default: 0.0, Min: 0, Max: 1},
		{Name: prefix + ".maxPowerLevel", Type: Number, Default: 1000.0, Min: 0, Max: 1e9},
		{Name: prefix + ".updaterThread.period", Type: Number, Default: 5000.0, Min: 1, Max: maxPeriodMillis},
	}
}

// kinds is the registry of built-in device kinds, in the order they are listed.
var kinds = []Kind{
	{Name: "Heater", Service: "fr.liglab.adele.icasa.device.temperature.Heater", Properties: thermalSpecs("heater")},
	{Name: "Cooler", Service: "fr.liglab.adele.icasa.device.temperature.Cooler", Properties: thermalSpecs("cooler")},
	{Name: "Thermometer", Service: "fr.liglab.adele.icasa.device.temperature.Thermometer", Properties: []PropertySpec{
		{Name: PropCurrentTemperature, Type: Number, Default: -1.0, Derived: true, Follows: VarTemperature},
	}},
	{Name: "Photometer", Service: "fr.liglab.adele.icasa.device.light.Photometer", Properties: []PropertySpec{
		{Name: PropCurrentIlluminance, Type: Number, Default: -1.0, Derived: true, Follows: VarIlluminance},
	}},
	{Name: "DimmerLight", Service: "fr.liglab.adele.icasa.device.light.DimmerLight", Properties: []PropertySpec{
		{Name: PropPowerLevel, Type: Number, Default: 0.0, Min: 0, Max: 1},
		{Name: PropMaxPower, Type: Number, Default: 100.0, Min: 0, Max: 1e9},
		{Name: PropMaxIlluminance, Type: Number, Default: 0.0, Derived: true},
	}},
	{Name: "BinaryLight", Service: "fr.liglab.adele.icasa.device.light.BinaryLight", Properties: []PropertySpec{
		{Name: PropPowerStatus, Type: Bool, Default: false},
		{Name: PropMaxPower, Type: Number, Default: 100.0, Min: 0, Max: 1e9},
	}},
	{Name: "PresenceSensor", Service: "fr.liglab.adele.icasa.device.presence.PresenceSensor", Properties: []PropertySpec{
		{Name: PropSensedPresence, Type: Bool, Default: false, Derived: true},
	}},
	{Name: "MotionSensor", Service: "fr.liglab.adele.icasa.device.motion.MotionSensor"},
	{Name: "PushButton", Service: "fr.liglab.adele.icasa.device.button.PushButton", Properties: []PropertySpec{
		{Name: PropPushAndHold, Type: Bool, Default: false},
	}},
	{Name: "ToggleSwitch", Service: "fr.liglab.adele.icasa.device.power.PowerSwitch", Properties: []PropertySpec{
		{Name: PropCurrentStatus, Type: Bool, Default: false},
	}},
	{Name: "Sprinkler", Service: "fr.liglab.adele.icasa.device.sprinkler.Sprinkler", Properties: []PropertySpec{
		{Name: PropPowerStatus, Type: Bool, Default: false},
	}},
	{Name: "COGasSensor", Service: "fr.liglab.adele.icasa.device.gasSensor.CarbonMonoxydeSensor", Properties: []PropertySpec{
		{Name: PropCurrentConcentration, Type: Number, Default: 0.0, Derived: true, Follows: VarCOConcentration},
	}},
	{Name: "CO2GasSensor", Service: "fr.liglab.adele.icasa.device.gasSensor.CarbonDioxydeSensor", Properties: []PropertySpec{
		{Name: PropCurrentConcentration, Type: Number, Default: 0.0, Derived: true, Follows: VarCO2Concentration},
	}},
}

// Kinds returns the built-in device kinds, in a fixed order.
func Kinds() []Kind {
	out := make([]Kind, len(kinds))
	for i, k := range kinds {
		k.Properties = slices.Clone(k.Properties)
		out[i] = k
	}
	return out
}

// LookupKind resolves a device type to its kind. It accepts the canonical
// "iCasa.Heater", any letter case of the namespace or the kind ("ICASA.heater")
// and a bare kind name ("Heater"). An unknown type is an error of kind
// [ErrInvalid] whose message lists the known kinds.
func LookupKind(typ string) (Kind, error) {
	name := typ
	if i := strings.LastIndexByte(typ, '.'); i >= 0 {
		if !strings.EqualFold(typ[:i], Namespace) {
			return Kind{}, unknownKind(typ)
		}
		name = typ[i+1:]
	}
	for _, k := range kinds {
		if strings.EqualFold(k.Name, name) {
			return k, nil
		}
	}
	return Kind{}, unknownKind(typ)
}

func unknownKind(typ string) error {
	if typ == "" {
		return invalidf("device type is missing; known kinds: %s", knownKinds())
	}
	return invalidf("unknown device type %q; known kinds: %s", truncate(typ), knownKinds())
}

func knownKinds() string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}

// toFloat converts any Go number to float64.
func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int8:
		return float64(n), true
	case int16:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint64:
		return float64(n), true
	}
	return 0, false
}

// describe names the JSON type of v for error messages.
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	if _, ok := toFloat(v); ok {
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}
