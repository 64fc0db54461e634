package mediation

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Registry holds the component types and the linkers an Engine can create.
// A Registry is safe for concurrent use; types and linkers registered while
// engines run are usable at once. Several engines may share one registry.
// The zero value is an empty registry, as NewEmptyRegistry returns.
type Registry struct {
	mu      sync.RWMutex
	types   map[string]*Type
	linkers map[string]linkerEntry // by name and by alias
}

// linkerEntry is a registered linker under its canonical name.
type linkerEntry struct {
	name   string
	linker Linker
}

// NewRegistry returns a registry holding the built-in types (passthrough,
// enricher, filter, router, splitter, aggregator, translator, rest-in,
// rest-out, console, number-generator) and linkers (direct; queue, also
// known as JMS-Joram and JMS_Joram, and as event-admin, Cilia's
// asynchronous in-process linker).
func NewRegistry() *Registry {
	r := NewEmptyRegistry()
	for _, t := range builtinTypes() {
		if err := r.register(t, true); err != nil {
			panic(err) // a bug in this package
		}
	}
	if err := r.RegisterLinker("direct", directLinker{}); err != nil {
		panic(err)
	}
	if err := r.RegisterLinker("queue", queueLinker{}, "JMS-Joram", "JMS_Joram", "event-admin"); err != nil {
		panic(err)
	}
	return r
}

// NewEmptyRegistry returns a registry with no type and no linker.
func NewEmptyRegistry() *Registry {
	return &Registry{types: map[string]*Type{}, linkers: map[string]linkerEntry{}}
}

// Register adds t. It fails with ErrInvalid when t is incomplete (bad name,
// unknown kind, nil constructor, invalid port names, or a pattern that
// disagrees with the ports: in-only adapters have out ports only, out-only
// ones in ports only, in-out ones both; mediators have no pattern) and with
// ErrConflict when a type of that name exists.
func (r *Registry) Register(t Type) error { return r.register(t, false) }

// register is Register; builtin keeps what t says of the properties it
// receives (Type.props), which a type registered by anyone else, a copy of
// a built-in's made with Type included, may not say: its implementation
// is not the built-in's (it says ReadOnly instead).
func (r *Registry) register(t Type, builtin bool) error {
	if !builtin {
		t.props = propsChanged
		if t.ReadOnly {
			t.props = propsKept
		}
	}
	if err := checkID("type", t.Name); err != nil {
		return err
	}
	if t.New == nil {
		return errorf(ErrInvalid, "type %s: nil constructor", t.Name)
	}
	for _, p := range slices.Concat(t.In, t.Out) {
		if !validPort(p) {
			return errorf(ErrInvalid, "type %s: port name %q: want 1 to 128 letters, digits or -_.", t.Name, p)
		}
	}
	switch t.Kind {
	case KindMediator:
		if t.Pattern != "" {
			return errorf(ErrInvalid, "type %s: a mediator has no pattern", t.Name)
		}
	case KindAdapter:
		var ok bool
		switch t.Pattern {
		case PatternInOnly:
			ok = len(t.In) == 0 && len(t.Out) > 0
		case PatternOutOnly:
			ok = len(t.In) > 0 && len(t.Out) == 0
		case PatternInOut:
			ok = len(t.In) > 0 && len(t.Out) > 0
		default:
			return errorf(ErrInvalid, "type %s: adapter pattern %q: want in-only, out-only or in-out", t.Name, t.Pattern)
		}
		if !ok {
			return errorf(ErrInvalid, "type %s: ports in=%v out=%v do not fit pattern %s", t.Name, t.In, t.Out, t.Pattern)
		}
	default:
		return errorf(ErrInvalid, "type %s: kind %q: want mediator or adapter", t.Name, t.Kind)
	}
	c := t
	c.In = slices.Clone(t.In)
	c.Out = slices.Clone(t.Out)
	c.Properties = cloneMap(t.Properties)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.types[t.Name]; dup {
		return errorf(ErrConflict, "type %s is already registered", t.Name)
	}
	if r.types == nil { // the zero Registry
		r.types = map[string]*Type{}
	}
	r.types[t.Name] = &c
	return nil
}

// Unregister removes the type registered under name, or fails with an
// error wrapping ErrNotFound. Components already made of it keep working
// (and keep their type's name); new ones can no longer be made.
func (r *Registry) Unregister(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.types[name]; !ok {
		return errorf(ErrNotFound, "type %q does not exist", name)
	}
	delete(r.types, name)
	return nil
}

// Type returns a copy of the type registered under name, or an error
// wrapping ErrNotFound.
func (r *Registry) Type(name string) (Type, error) {
	r.mu.RLock()
	t := r.types[name]
	r.mu.RUnlock()
	if t == nil {
		return Type{}, errorf(ErrNotFound, "type %q does not exist", name)
	}
	c := *t
	c.In, c.Out, c.Properties = slices.Clone(t.In), slices.Clone(t.Out), cloneMap(t.Properties)
	return c, nil
}

// lookup returns the registered type of that kind; the error lists the
// known types of the kind. kind "" accepts any kind.
func (r *Registry) lookup(kind Kind, name string) (*Type, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t := r.types[name]
	if t != nil && (kind == "" || t.Kind == kind) {
		return t, nil
	}
	var known []string
	for n, u := range r.types {
		if kind == "" || u.Kind == kind {
			known = append(known, n)
		}
	}
	slices.Sort(known)
	what := "component"
	if kind != "" {
		what = string(kind)
	}
	if t != nil {
		return nil, errorf(ErrInvalid, "type %s is of kind %s, not %s (known %s types: %s)", name, t.Kind, kind, what, strings.Join(known, ", "))
	}
	return nil, errorf(ErrInvalid, "unknown %s type %q (known: %s)", what, name, strings.Join(known, ", "))
}

// Types describes every registered type, sorted by kind ("adapter" before
// "mediator") and then by name. The result is a fresh copy.
func (r *Registry) Types() []TypeInfo {
	r.mu.RLock()
	out := make([]TypeInfo, 0, len(r.types))
	for _, t := range r.types {
		props := cloneMap(t.Properties)
		if props == nil {
			props = map[string]any{}
		}
		out = append(out, TypeInfo{
			Name:       t.Name,
			Kind:       t.Kind,
			Pattern:    t.Pattern,
			In:         append([]string{}, t.In...),
			Out:        append([]string{}, t.Out...),
			Properties: props,
			Doc:        t.Doc,
			Stateless:  t.Stateless,
		})
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b TypeInfo) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// RegisterLinker adds l under name and the given aliases. Bindings made
// with an alias report the canonical name. It fails with ErrInvalid for a
// nil linker or a bad name, and with ErrConflict when a name is taken.
func (r *Registry) RegisterLinker(name string, l Linker, aliases ...string) error {
	if l == nil {
		return errorf(ErrInvalid, "linker %s: nil linker", name)
	}
	names := append([]string{name}, aliases...)
	for _, n := range names {
		if err := checkID("linker", n); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, n := range names {
		if _, dup := r.linkers[n]; dup || slices.Contains(names[:i], n) {
			return errorf(ErrConflict, "linker %s is already registered", n)
		}
	}
	if r.linkers == nil { // the zero Registry
		r.linkers = map[string]linkerEntry{}
	}
	for _, n := range names {
		r.linkers[n] = linkerEntry{name: name, linker: l}
	}
	return nil
}

// SetLinkerAlias makes alias another name of the linker registered as
// target, in place of what alias named before, if anything: for example
// pointing Cilia's JMS-Joram at a broker-backed linker instead of the
// in-process queue. Bindings made earlier keep their links. It fails with
// ErrNotFound when target is not a linker's canonical name, with
// ErrConflict when alias is a canonical name itself, and with ErrInvalid
// for a bad alias.
func (r *Registry) SetLinkerAlias(alias, target string) error {
	if err := checkID("linker", alias); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.linkers[target]
	if !ok || t.name != target {
		return errorf(ErrNotFound, "linker %s is not registered", target)
	}
	if e, ok := r.linkers[alias]; ok && e.name == alias {
		return errorf(ErrConflict, "linker %s is a linker's own name, not an alias", alias)
	}
	r.linkers[alias] = t
	return nil
}

// Linkers returns the names (canonical names and aliases) of the registered
// linkers, sorted.
func (r *Registry) Linkers() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.linkers))
}

// linker resolves a linker name; "" is "direct".
func (r *Registry) linker(name string) (linkerEntry, error) {
	if name == "" {
		name = "direct"
	}
	r.mu.RLock()
	e, ok := r.linkers[name]
	r.mu.RUnlock()
	if !ok {
		return linkerEntry{}, errorf(ErrInvalid, "unknown linker %q (known: %s)", name, strings.Join(r.Linkers(), ", "))
	}
	return e, nil
}
