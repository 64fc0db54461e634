package dscilia

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pervasim/pervasim/internal/errkind"
	"github.com/pervasim/pervasim/mediation"
)

// PropPorts is the property in which a placeholder keeps its ports, as
// {"in": [...], "out": [...]}: the ports the bindings of the document used,
// so that it can be bound as the original was, and written out and read
// back the same.
const PropPorts = "placeholder.ports"

// placeholderCapacity is how many messages a placeholder adapter keeps.
const placeholderCapacity = 100

// LoadOptions configures [Load]. LoadOptions is a plain value, safe for
// concurrent use as long as nobody modifies it.
type LoadOptions struct {
	// Placeholders, when set, makes a placeholder component for each
	// component whose type the engine does not know, instead of failing.
	// A placeholder keeps the type's name (registered in the engine's
	// registry as a placeholder type), takes its ports from the bindings,
	// and passes messages through unchanged: a mediator emits what it gets
	// on each of its out ports; an adapter keeps what reaches it (its last
	// 100 messages, readable as a rest-out's) and emits on its out ports
	// what is sent into it. So a Cilia application's structure loads, can
	// be inspected, and its placeholders can be replaced one by one with
	// real types (Chain.Replace).
	Placeholders bool
}

// Load creates the chains of d in e, all or nothing, and starts the new
// ones. A chain that exists is a Conflict error, unless the document's
// chain is an extension, which reconfigures the components it names (a
// NotFound error when the chain has no such component) and adds its
// components and bindings to it. An
// unknown type is an Invalid error listing every unknown type (see
// [LoadOptions.Placeholders]). Cilia's default port name, "unique", stands
// for a component's only port on that side when it has no port of that
// name, and for its "in" or "out" port when it has several. A binding without a linker that would close a loop of direct
// bindings through an in-out adapter (such as a Cilia endpoint adapter that
// sends a chain's answer back) is made with the queue linker. Load returns
// the ids of the chains it made or extended. It panics if e or d is nil.
func Load(e *mediation.Engine, d *Document, opts LoadOptions) ([]string, error) {
	switch {
	case e == nil:
		panic("dscilia: Load with a nil engine")
	case d == nil:
		panic("dscilia: Load with a nil document")
	}
	reg := e.Registry()
	// Check everything that can be checked before changing anything.
	var unknown []string
	used := map[string]mediation.Kind{} // unknown type -> kind
	for _, ch := range d.Chains {
		existing, err := e.Chain(ch.ID)
		switch {
		case err == nil && !ch.Extension:
			return nil, errkind.Errorf(errkind.Conflict, "chain %s exists", ch.ID)
		case err != nil && !errors.Is(err, mediation.ErrNotFound):
			return nil, err
		}
		for _, r := range ch.Reconfigurations {
			kind := mediation.KindMediator
			if r.Adapter {
				kind = mediation.KindAdapter
			}
			var info mediation.ComponentInfo
			if existing != nil {
				info, err = existing.Component(r.ID)
			}
			switch {
			case existing == nil || errors.Is(err, mediation.ErrNotFound):
				return nil, errkind.Errorf(errkind.NotFound, "chain %s has no component %s to reconfigure", ch.ID, r.ID)
			case err != nil:
				return nil, err
			case info.Kind != kind:
				return nil, errkind.Errorf(errkind.Invalid, "chain %s: %s is a %s, not a %s", ch.ID, r.ID, info.Kind, kind)
			}
		}
		for _, c := range components(ch) {
			if existing != nil {
				if _, err := existing.Component(c.ID); err == nil {
					return nil, errkind.Errorf(errkind.Conflict, "chain %s: component %s exists", ch.ID, c.ID)
				}
			}
			t, err := reg.Type(c.Type)
			if err != nil {
				if k, ok := used[c.Type]; ok && k != c.kind {
					return nil, errkind.Errorf(errkind.Invalid, "type %s is used both as a mediator and as an adapter", c.Type)
				}
				if _, ok := used[c.Type]; !ok {
					unknown = append(unknown, c.Type)
				}
				used[c.Type] = c.kind
				continue
			}
			if t.Kind != c.kind && !isPlaceholder(t.Doc) {
				return nil, errkind.Errorf(errkind.Invalid, "chain %s: %s is of type %s, a %s, but is listed among the %ss", ch.ID, c.ID, c.Type, t.Kind, c.kind)
			}
		}
	}
	if len(unknown) > 0 && !opts.Placeholders {
		slices.Sort(unknown)
		return nil, errkind.Errorf(errkind.Invalid, "unknown component types: %s (known: %s); load with placeholders to stand in for them",
			strings.Join(unknown, ", "), strings.Join(typeNames(reg), ", "))
	}
	var undo []func()
	rollback := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	for _, name := range unknown {
		made, err := registerPlaceholder(reg, name, used[name])
		if err != nil {
			rollback()
			return nil, err
		}
		if made { // a load that fails leaves no type behind
			undo = append(undo, func() { reg.Unregister(name) })
		}
	}
	var ids []string
	var start []*mediation.Chain
	for _, dc := range d.Chains {
		ch, err := e.Chain(dc.ID)
		if err != nil {
			if ch, err = e.CreateChain(dc.ID); err != nil {
				rollback()
				return nil, err
			}
			id := dc.ID
			undo = append(undo, func() { e.DeleteChain(id) })
			start = append(start, ch)
		}
		ids = append(ids, dc.ID)
		if err := build(reg, ch, dc, &undo); err != nil {
			rollback()
			return nil, fmt.Errorf("chain %s: %w", dc.ID, err)
		}
	}
	for _, ch := range start {
		if err := ch.Start(); err != nil {
			rollback()
			return nil, err
		}
	}
	return ids, nil
}

// component is a component of a document's chain, with its kind.
type component struct {
	Component
	kind mediation.Kind
}

func components(ch Chain) []component {
	var out []component
	for _, c := range ch.Mediators {
		out = append(out, component{c, mediation.KindMediator})
	}
	for _, c := range ch.Adapters {
		out = append(out, component{c, mediation.KindAdapter})
	}
	return out
}

// build reconfigures ch's components as dc says, then adds dc's components
// and bindings to ch, recording how to take each back in undo.
func build(reg *mediation.Registry, ch *mediation.Chain, dc Chain, undo *[]func()) error {
	for _, r := range dc.Reconfigurations {
		before, err := ch.Component(r.ID)
		if err != nil {
			return err
		}
		if _, err := ch.UpdateProperties(r.ID, r.Properties); err != nil {
			return err
		}
		id := r.ID
		*undo = append(*undo, func() { ch.SetProperties(id, before.Properties) })
	}
	ports := portsOf(dc)
	for _, c := range components(dc) {
		props := maps.Clone(c.Properties)
		if t, err := reg.Type(c.Type); err == nil && isPlaceholder(t.Doc) {
			if props == nil {
				props = map[string]any{}
			}
			if _, ok := props[PropPorts]; !ok {
				p := ports[c.ID]
				props[PropPorts] = map[string]any{"in": toAny(p.in), "out": toAny(p.out)}
			}
		}
		if _, err := ch.AddComponent(c.kind, c.Type, c.ID, props); err != nil {
			return err
		}
		kind, id := c.kind, c.ID
		*undo = append(*undo, func() { ch.RemoveComponent(kind, id) })
	}
	for _, b := range dc.Bindings {
		for _, end := range []struct {
			s  string
			in bool
		}{{b.From, false}, {b.To, true}} {
			if err := widen(reg, ch, end.s, end.in, undo); err != nil {
				return err
			}
		}
		from, err := resolve(ch, b.From, false)
		if err != nil {
			return err
		}
		to, err := resolve(ch, b.To, true)
		if err != nil {
			return err
		}
		_, err = ch.Bind(from, to, b.Linker, b.Properties)
		if errors.Is(err, mediation.ErrDirectLoop) && b.Linker == "" {
			_, err = ch.Bind(from, to, "queue", b.Properties)
		}
		if err != nil {
			return err
		}
		*undo = append(*undo, func() { ch.Unbind(from, to) })
	}
	return nil
}

// widen gives a placeholder made earlier (by the chain an extension adds
// to) the port end names, when it lacks it.
func widen(reg *mediation.Registry, ch *mediation.Chain, end string, in bool, undo *[]func()) error {
	id, port := splitEnd(end)
	info, err := ch.Component(id)
	if err != nil {
		return nil // the engine says so when binding
	}
	t, err := reg.Type(info.Type)
	if err != nil || !isPlaceholder(t.Doc) {
		return nil
	}
	port = placeholderPort(port, in)
	list := info.Out
	if in {
		list = info.In
	}
	if slices.Contains(list, port) || port == DefaultPort {
		return nil
	}
	old := info.Properties[PropPorts]
	ports := map[string]any{"in": toAny(info.In), "out": toAny(info.Out)}
	side := "out"
	if in {
		side = "in"
	}
	ports[side] = toAny(append(slices.Clone(list), port))
	if _, err := ch.UpdateProperties(id, map[string]any{PropPorts: ports}); err != nil {
		return err
	}
	*undo = append(*undo, func() { ch.UpdateProperties(id, map[string]any{PropPorts: old}) })
	return nil
}

// resolve maps Cilia's default port to the component's only port on that
// side, when it has no port of that name.
func resolve(ch *mediation.Chain, end string, in bool) (string, error) {
	id, port := splitEnd(end)
	if port != DefaultPort {
		return end, nil
	}
	info, err := ch.Component(id)
	if err != nil {
		return "", err
	}
	list := info.Out
	if in {
		list = info.In
	}
	switch {
	case slices.Contains(list, DefaultPort):
		return end, nil
	case len(list) == 1:
		return id + ":" + list[0], nil
	case slices.Contains(list, placeholderPort(port, in)):
		return id + ":" + placeholderPort(port, in), nil
	}
	return end, nil // as it is: the engine says what is wrong
}

// splitEnd splits an endpoint "<component>:<port>" at its last ':', as
// mediation.ParseEndpoint does: a component id may hold ':', a port never
// does.
func splitEnd(end string) (id, port string) {
	i := strings.LastIndexByte(end, ':')
	if i < 0 {
		return end, ""
	}
	return end[:i], end[i+1:]
}

type portSet struct{ in, out []string }

// placeholderPort is the port a placeholder has for a port of the
// document: Cilia's "unique" becomes pervasim's "in" or "out", so that the
// real types that replace placeholders fit their bindings.
func placeholderPort(port string, in bool) string {
	switch {
	case port != DefaultPort:
		return port
	case in:
		return "in"
	}
	return "out"
}

// portsOf returns, for each component, the ports the chain's bindings use.
func portsOf(dc Chain) map[string]portSet {
	out := map[string]portSet{}
	add := func(end string, in bool) {
		id, port := splitEnd(end)
		port = placeholderPort(port, in)
		p := out[id]
		if in && !slices.Contains(p.in, port) {
			p.in = append(p.in, port)
		}
		if !in && !slices.Contains(p.out, port) {
			p.out = append(p.out, port)
		}
		out[id] = p
	}
	for _, b := range dc.Bindings {
		add(b.From, false)
		add(b.To, true)
	}
	return out
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func typeNames(reg *mediation.Registry) []string {
	var out []string
	for _, t := range reg.Types() {
		out = append(out, t.Name)
	}
	return out
}

// placeholderDoc marks the types registerPlaceholder makes.
const placeholderDoc = "Placeholder for a Cilia type pervasim does not have: passes messages through unchanged"

// isPlaceholder reports whether a type, by its doc, is a placeholder type.
func isPlaceholder(doc string) bool { return strings.HasPrefix(doc, placeholderDoc) }

// registerPlaceholder registers the placeholder type name of kind, and
// reports whether it did (false: registered meanwhile).
func registerPlaceholder(reg *mediation.Registry, name string, kind mediation.Kind) (bool, error) {
	t := mediation.Type{Name: name, Kind: kind, In: []string{"in"}, Out: []string{"out"},
		Properties: map[string]any{}, New: newPlaceholder(kind)}
	if kind == mediation.KindAdapter {
		t.Pattern = mediation.PatternInOut
		t.Doc = placeholderDoc + " (an adapter: it keeps what reaches it and emits what is sent into it)."
	} else {
		t.Doc = placeholderDoc + " (a mediator: it emits each message on each of its out ports)."
	}
	err := reg.Register(t)
	if errors.Is(err, mediation.ErrConflict) { // registered meanwhile
		return false, nil
	}
	return err == nil, err
}

// PrunePlaceholders unregisters, from e's registry, the placeholder types
// (see [LoadOptions.Placeholders]) that no component of e's chains uses any
// more, and returns how many it unregistered. Without it, every document
// loaded with new unknown types adds to the registry for good. It is meant
// for a registry that serves e alone: a component of another engine is not
// seen. Loading and pruning at the same time may leave a load without its
// types (it then fails, changing nothing): callers serialise them.
func PrunePlaceholders(e *mediation.Engine) int {
	reg := e.Registry()
	var placeholders []string
	for _, t := range reg.Types() {
		if isPlaceholder(t.Doc) {
			placeholders = append(placeholders, t.Name)
		}
	}
	if len(placeholders) == 0 {
		return 0
	}
	inUse := map[string]bool{}
	for _, id := range e.Chains() {
		ch, err := e.Chain(id)
		if err != nil {
			continue // deleted meanwhile
		}
		cs, err := ch.Components()
		if err != nil {
			continue
		}
		for _, c := range cs {
			inUse[c.Type] = true
		}
	}
	n := 0
	for _, name := range placeholders {
		if !inUse[name] && reg.Unregister(name) == nil {
			n++
		}
	}
	return n
}

// placeholder stands in for a component of an unknown type.
type placeholder struct {
	adapter bool
	in, out []string
	kept    []mediation.Held // an adapter's, oldest first, with the port each arrived on
}

func newPlaceholder(kind mediation.Kind) mediation.Constructor {
	return func(props map[string]any, _ mediation.Env) (any, error) {
		p := &placeholder{adapter: kind == mediation.KindAdapter}
		if !p.adapter {
			p.in, p.out = []string{"in"}, []string{"out"}
		}
		if v, ok := props[PropPorts]; ok {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("property %s must be {\"in\": [...], \"out\": [...]}", PropPorts)
			}
			in, err := portList(m["in"])
			if err != nil {
				return nil, err
			}
			out, err := portList(m["out"])
			if err != nil {
				return nil, err
			}
			if len(in) > 0 || p.adapter {
				p.in = in
			}
			if len(out) > 0 || p.adapter {
				p.out = out
			}
		}
		return p, nil
	}
}

func portList(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok || s == "" || strings.Contains(s, ":") || !mediation.ValidID(s) {
				return nil, fmt.Errorf("property %s: port %v is no port name", PropPorts, e)
			}
			out = append(out, s)
		}
		return out, nil
	case []string:
		return v, nil
	}
	return nil, fmt.Errorf("property %s: ports must be a list of names", PropPorts)
}

// Ports returns the ports the document's bindings used.
func (p *placeholder) Ports() (in, out []string) { return p.in, p.out }

// Process passes m on (a mediator) or keeps it (an adapter: m leaves the
// chain).
func (p *placeholder) Process(port string, m mediation.Message, out mediation.Emitter) error {
	if p.adapter {
		if len(p.kept) == placeholderCapacity {
			p.kept = p.kept[1:]
			out.Drop(1)
		}
		p.kept = append(p.kept, mediation.Held{Port: port, Message: m})
		return nil
	}
	p.emit(m, out)
	return nil
}

// Inject emits m on every out port.
func (p *placeholder) Inject(m mediation.Message, out mediation.Emitter) error {
	p.emit(m, out)
	return nil
}

func (p *placeholder) emit(m mediation.Message, out mediation.Emitter) {
	if len(p.out) == 0 {
		out.Drop(1)
		return
	}
	for i, port := range p.out {
		if i < len(p.out)-1 {
			out.Emit(port, m.Clone())
		} else {
			out.Emit(port, m)
		}
	}
}

// Retained returns what reached an adapter placeholder.
func (p *placeholder) Retained() []mediation.Message {
	ms := make([]mediation.Message, len(p.kept))
	for i, h := range p.kept {
		ms[i] = h.Message
	}
	return ms
}

// Drain hands what an adapter placeholder keeps to the component that
// takes over (a Replace, or its new implementation when its properties
// change), as a rest-out hands over its messages: none is lost.
func (p *placeholder) Drain() []mediation.Held {
	hs := p.kept
	p.kept = nil
	return hs
}

// Export describes ch as a DSCilia chain: its components with their
// properties and its bindings with their linkers (the default linker
// left out). It panics if ch is nil.
func Export(ch *mediation.Chain) (Chain, error) {
	info, err := ch.Info()
	if err != nil {
		return Chain{}, err
	}
	comps, err := ch.Components()
	if err != nil {
		return Chain{}, err
	}
	out := Chain{ID: info.ID}
	for _, c := range comps {
		x := Component{ID: c.ID, Type: c.Type}
		if len(c.Properties) > 0 {
			x.Properties = c.Properties
		}
		if c.Kind == mediation.KindAdapter {
			out.Adapters = append(out.Adapters, x)
		} else {
			out.Mediators = append(out.Mediators, x)
		}
	}
	for _, b := range info.Bindings {
		x := Binding{From: b.From, To: b.To, Properties: b.Properties}
		if b.Linker != "direct" {
			x.Linker = b.Linker
		}
		if len(x.Properties) == 0 {
			x.Properties = nil
		}
		out.Bindings = append(out.Bindings, x)
	}
	return out, nil
}
