package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// Namespace is the namespace of the built-in device kinds: a device's type
// is its kind's namespace + "." + its name, such as "iCasa.Heater".
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
	// Default is the value a new device starts with: a float64, a bool or a
	// string, as Type says.
	Default any
	// Min and Max bound a Number, inclusively. Both zero means unbounded.
	Min, Max float64
	// Derived properties are computed by the simulation; a client may send
	// back the current value but never set another.
	Derived bool
	// Follows names the zone variable a sensor reading follows, such as
	// "Temperature"; empty for other properties. A following property must
	// be a Derived number: it reads the variable of the device's zone, its Default
	// outside every zone, and keeps its last value while the device is
	// faulty.
	Follows string
	// Unit is the property's unit, such as "W" or "K", for people; empty
	// when it has none.
	Unit string
	// Doc says what the property means, for people.
	Doc string
	// Aliases are other names of the property, such as the names iCasa
	// gave it in later versions ("binaryLight.powerStatus" for
	// "power_status"): a value set under an alias is stored under Name.
	Aliases []string
	// Physics, when set, limits the property to homes of that model: a
	// light's luminous efficacy exists only in the realistic model, so that
	// the contract model's devices look exactly as the contract says.
	Physics Physics
}

// bounded reports whether the spec has a range.
func (p PropertySpec) bounded() bool { return p.Min != 0 || p.Max != 0 }

// Check validates v against the spec and returns it normalised (numbers of
// any Go numeric type become float64); an invalid value is an error of
// kind [ErrInvalid].
func (p PropertySpec) Check(v any) (any, error) {
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
		if err := checkText("property "+truncate(p.Name), s, true, MaxStringLength); err != nil {
			return nil, err
		}
		return s, nil
	}
}

// Kind describes a kind of simulated device: its name, the service it
// offers, the properties it defines and what it does in the simulation.
// Register a kind of your own in a home's [KindRegistry] to simulate a
// device that the built-in kinds do not cover.
type Kind struct {
	// Name is the bare kind name, such as "Heater": 1 to 64 letters, digits
	// and underscores, unique in its registry whatever the letter case.
	Name string
	// Namespace prefixes the name in the device type; empty means
	// [Namespace] ("iCasa").
	Namespace string
	// Service is the qualified name of the kind's own interface; empty
	// means Namespace + "." + Name.
	Service string
	// Doc says what the kind simulates, for people.
	Doc string
	// Properties lists the properties the kind defines, in a fixed order.
	Properties []PropertySpec
	// Behavior is what devices of the kind do in the simulation; the zero
	// value does nothing.
	Behavior Behavior
}

// Type returns the canonical device type, such as "iCasa.Heater".
func (k Kind) Type() string { return k.namespace() + "." + k.Name }

func (k Kind) namespace() string {
	if k.Namespace == "" {
		return Namespace
	}
	return k.Namespace
}

// Services returns the three qualified interface names a device of the kind
// offers: the kind's own, the simulated-device one and the generic-device one.
func (k Kind) Services() []string {
	s := k.Service
	if s == "" {
		s = k.Type()
	}
	return []string{s, ServiceSimulatedDevice, ServiceGenericDevice}
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

// Resolve returns the spec of the property the kind knows under name, its
// own name or an alias (the spec's Name is the property's own).
func (k Kind) Resolve(name string) (PropertySpec, bool) {
	for _, p := range k.Properties {
		if p.Name == name || slices.Contains(p.Aliases, name) {
			return p, true
		}
	}
	return PropertySpec{}, false
}

// Settable reports, with an error of kind [ErrInvalid], a property that
// a client cannot give devices of this kind: Location (derived from the
// position), a property the kind derives, or, when hasValue, a value the
// kind's spec (or the rule of state and fault) refuses. A property the kind
// does not define is a device's own: anything goes. Updates ignore
// derived properties silently (a device read can be sent back); a source
// that means to set one, such as a chain's device-out, asks first.
func (k Kind) Settable(name string, value any, hasValue bool) error {
	switch name {
	case PropLocation:
		return invalidf("property %q is derived from the position and cannot be set", name)
	case PropState, PropFault:
		if !hasValue {
			return nil
		}
		s, ok := value.(string)
		if !ok {
			return invalidf("property %q must be a string, not %s", name, describe(value))
		}
		if name == PropState {
			return checkState(s)
		}
		return checkFault(s)
	}
	spec, ok := k.Resolve(name)
	switch {
	case !ok:
		return nil
	case spec.Derived:
		return invalidf("property %q of %s devices is derived by the simulation and cannot be set", truncate(name), k.Name)
	case hasValue:
		_, err := spec.Check(value)
		return err
	}
	return nil
}

// forPhysics returns the kind as homes of model p see it: without the
// properties of the other model.
func (k Kind) forPhysics(p Physics) Kind {
	if !slices.ContainsFunc(k.Properties, func(s PropertySpec) bool { return s.Physics != "" && s.Physics != p }) {
		return k
	}
	k.Properties = slices.DeleteFunc(slices.Clone(k.Properties), func(s PropertySpec) bool {
		return s.Physics != "" && s.Physics != p
	})
	return k
}

// clone returns a copy of k that shares nothing mutable with it.
func (k Kind) clone() Kind {
	k.Properties = slices.Clone(k.Properties)
	for i := range k.Properties {
		k.Properties[i].Aliases = slices.Clone(k.Properties[i].Aliases)
	}
	return k
}

// validate checks a kind before it is registered.
func (k Kind) validate() error {
	if !validKindName(k.Name, 64) {
		return invalidf("kind name %q is not valid: use 1 to 64 letters, digits and _", truncate(k.Name))
	}
	if k.Namespace != "" && !validKindName(strings.ReplaceAll(k.Namespace, ".", "_"), MaxIDLength) {
		return invalidf("kind %s: namespace %q is not valid: use letters, digits, _ and .", k.Name, truncate(k.Namespace))
	}
	if err := checkText("kind "+k.Name+": service", k.Service, true, MaxNameLength); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, p := range k.Properties {
		if err := checkKey("kind "+k.Name+": property name", p.Name); err != nil {
			return err
		}
		switch {
		case p.Name == PropState || p.Name == PropFault || p.Name == PropLocation:
			return invalidf("kind %s: property %q is defined for every device", k.Name, p.Name)
		case seen[p.Name]:
			return invalidf("kind %s: property %q is defined twice", k.Name, p.Name)
		case p.Type < Number || p.Type > String:
			return invalidf("kind %s: property %q has no valid type", k.Name, p.Name)
		case p.Follows != "" && (!p.Derived || p.Type != Number):
			return invalidf("kind %s: property %q follows a zone variable, so it must be a derived number", k.Name, p.Name)
		case p.Physics != "" && p.Physics != PhysicsContract && p.Physics != PhysicsRealistic:
			return invalidf("kind %s: property %q: unknown physics %q", k.Name, p.Name, p.Physics)
		case p.Min > p.Max:
			return invalidf("kind %s: property %q: Min %g is above Max %g", k.Name, p.Name, p.Min, p.Max)
		}
		seen[p.Name] = true
		for _, a := range p.Aliases {
			if err := checkKey("kind "+k.Name+": alias", a); err != nil {
				return err
			}
			if seen[a] || slices.ContainsFunc(k.Properties, func(o PropertySpec) bool { return o.Name == a }) {
				return invalidf("kind %s: alias %q names another property", k.Name, a)
			}
			seen[a] = true
		}
		if _, err := p.Check(p.Default); err != nil {
			return fmt.Errorf("kind %s: default: %w", k.Name, err)
		}
	}
	b := k.Behavior
	if b.PeriodProperty != "" {
		p, ok := k.Property(b.PeriodProperty)
		if !ok || p.Type != Number || p.Min <= 0 {
			return invalidf("kind %s: PeriodProperty %q must name a number property with a positive Min", k.Name, b.PeriodProperty)
		}
	}
	if (b.Tick == nil) != (b.Every == 0) || b.Every < 0 {
		return invalidf("kind %s: Tick and a positive Every go together", k.Name)
	}
	return nil
}

func validKindName(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// KindRegistry holds the device kinds a home can create. Every home has its
// own ([Home.Kinds]), holding the built-in kinds unless [Config.Kinds] gives
// another, so a kind registered for one test does not leak into another.
// The built-in kinds are shared by every registry that holds them, read
// only, so a home costs no copy of the catalogue. A KindRegistry is safe
// for concurrent use; a kind registered while the home runs can be used at
// once. Kinds cannot be removed.
type KindRegistry struct {
	base *kindSet // the built-in kinds, shared; nil for none
	mu   sync.RWMutex
	own  kindSet // registered in this registry, in registration order
}

// A kindSet is kinds in registration order, each with the views the two
// physics models have of it, made once and shared by the devices.
type kindSet struct{ kinds []*kindEntry }

type kindEntry struct {
	k        Kind
	physics  [2]*Kind    // as PhysicsContract and PhysicsRealistic see it
	typ      string      // k.Type()
	services []string    // k.Services(), shared by the devices: read only
	persons  personsNeed // what its devices' Persons must be told of: every move for a kind registered (its behaviour is anyone's, even one copied from a built-in kind), builtinPersonsNeeds for the built-in ones
}

func newKindEntry(k Kind) *kindEntry {
	e := &kindEntry{k: k, typ: k.Type(), services: k.Services()}
	if k.Behavior.Persons != nil {
		e.persons = needEveryMove
	}
	for i, p := range []Physics{PhysicsContract, PhysicsRealistic} {
		v := k.forPhysics(p)
		e.physics[i] = &v
	}
	return e
}

// view returns the kind as the given physics model sees it. The result is
// shared: it must not be changed.
func (e *kindEntry) view(p Physics) *Kind {
	if p == PhysicsRealistic {
		return e.physics[1]
	}
	return e.physics[0]
}

// builtinSet holds the built-in kinds, for every registry.
var builtinSet = func() *kindSet {
	s := &kindSet{}
	for _, k := range append(slices.Clone(builtinKinds), catalogueKinds...) {
		if err := k.validate(); err != nil {
			panic(err) // a bug in this package
		}
		e := newKindEntry(k.clone())
		if need, ok := builtinPersonsNeeds[k.Name]; ok {
			e.persons = need
		}
		s.kinds = append(s.kinds, e)
	}
	return s
}()

// NewKindRegistry returns a registry holding the built-in kinds: the whole
// catalogue of the original iCasa simulator (see [Kinds]).
func NewKindRegistry() *KindRegistry { return &KindRegistry{base: builtinSet} }

// NewEmptyKindRegistry returns a registry with no kind.
func NewEmptyKindRegistry() *KindRegistry { return &KindRegistry{} }

// eachLocked calls f on every kind, built-in ones first, until f returns
// false. r.mu is held for reading at least.
func (r *KindRegistry) eachLocked(f func(e *kindEntry) bool) {
	if r.base != nil {
		for _, e := range r.base.kinds {
			if !f(e) {
				return
			}
		}
	}
	for _, e := range r.own.kinds {
		if !f(e) {
			return
		}
	}
}

// Register adds k. It fails with an error of kind [ErrInvalid] when k is
// malformed (a bad name, a property defined twice or with a default of the
// wrong type or out of its range, a PeriodProperty that names no positive
// number) and of kind [ErrConflict] when a kind of the same name, in any
// letter case, is registered.
func (r *KindRegistry) Register(k Kind) error {
	if err := k.validate(); err != nil {
		return err
	}
	e := newKindEntry(k.clone())
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	r.eachLocked(func(o *kindEntry) bool {
		if strings.EqualFold(o.k.Name, k.Name) {
			err = conflictf("device kind %s is already registered (as %s)", k.Name, o.k.Type())
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	r.own.kinds = append(r.own.kinds, e)
	return nil
}

// Kinds returns the registered kinds, in registration order.
func (r *KindRegistry) Kinds() []Kind {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []Kind
	r.eachLocked(func(e *kindEntry) bool {
		out = append(out, e.k.clone())
		return true
	})
	return out
}

// Settable is [Kind.Settable] for a device of any kind of the registry: it
// refuses what no kind that defines the property lets a client set (a
// property derived in every kind that has it, a value all of them refuse).
// A property no kind defines is a device's own: anything goes. (A device
// may carry, as its own, a property another kind derives.)
func (r *KindRegistry) Settable(name string, value any, hasValue bool) error {
	var refused error
	r.mu.RLock()
	defer r.mu.RUnlock()
	r.eachLocked(func(e *kindEntry) bool {
		if _, ok := e.k.Resolve(name); !ok && name != PropLocation && name != PropState && name != PropFault {
			return true
		}
		err := e.k.Settable(name, value, hasValue)
		if err == nil {
			refused = nil
			return false
		}
		refused = cmp.Or(refused, err)
		return true
	})
	return refused
}

// Lookup resolves a device type to its kind. It accepts the canonical
// "iCasa.Heater", any letter case of the namespace or the name
// ("ICASA.heater") and a bare name ("Heater"). An unknown type is an error
// of kind [ErrInvalid] whose message lists the known kinds.
func (r *KindRegistry) Lookup(typ string) (Kind, error) {
	e, err := r.lookup(typ)
	if err != nil {
		return Kind{}, err
	}
	return e.k.clone(), nil
}

// lookup resolves typ as Lookup does, and returns the registry's entry.
func (r *KindRegistry) lookup(typ string) (*kindEntry, error) {
	ns, name := "", typ
	if i := strings.LastIndexByte(typ, '.'); i >= 0 {
		ns, name = typ[:i], typ[i+1:]
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	var found *kindEntry
	r.eachLocked(func(e *kindEntry) bool {
		k := &e.k
		if strings.EqualFold(k.Name, name) && (ns == "" && !strings.Contains(typ, ".") || strings.EqualFold(k.namespace(), ns)) {
			found = e
		}
		return found == nil
	})
	if found != nil {
		return found, nil
	}
	var names []string
	r.eachLocked(func(e *kindEntry) bool {
		names = append(names, e.k.Name)
		return true
	})
	known := strings.Join(names, ", ")
	if typ == "" {
		return nil, invalidf("device type is missing; known kinds: %s", known)
	}
	return nil, invalidf("unknown device type %q; known kinds: %s", truncate(typ), known)
}

// builtins is a registry of the built-in kinds, for the package-level
// lookups.
var builtins = NewKindRegistry()

// Kinds returns the built-in device kinds, in a fixed order, as a home of
// the contract model sees them: the catalogue of the original iCasa
// simulator. [Home.DeviceKinds] lists the kinds of a home, which may
// include kinds of your own.
func Kinds() []Kind {
	kinds := builtins.Kinds()
	for i, k := range kinds {
		kinds[i] = k.forPhysics(PhysicsContract)
	}
	return kinds
}

// LookupKind resolves a device type among the built-in kinds, as
// [KindRegistry.Lookup] does, and returns the kind as a home of the
// contract model sees it. [Home.Kinds] resolves the kinds of a home,
// including those registered for it.
func LookupKind(typ string) (Kind, error) {
	k, err := builtins.Lookup(typ)
	return k.forPhysics(PhysicsContract), err
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
