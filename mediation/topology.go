package mediation

import (
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
)

// AddMediator creates a mediator of type typ (see AddComponent).
func (ch *Chain) AddMediator(typ, id string, props map[string]any) (ComponentInfo, error) {
	return ch.AddComponent(KindMediator, typ, id, props)
}

// AddAdapter creates an adapter of type typ (see AddComponent).
func (ch *Chain) AddAdapter(typ, id string, props map[string]any) (ComponentInfo, error) {
	return ch.AddComponent(KindAdapter, typ, id, props)
}

// AddComponent creates component id of type typ with props merged over
// the type's defaults, and returns its snapshot. kind must be the type's
// kind ("" accepts any). It fails with ErrInvalid for a malformed id, an
// unknown type or one of another kind (the message lists the known types of
// the kind), or properties the type rejects; with ErrConflict when the id is
// taken. A component added to a started chain runs at once.
func (ch *Chain) AddComponent(kind Kind, typ, id string, props map[string]any) (ComponentInfo, error) {
	if err := ch.lockChange(); err != nil {
		return ComponentInfo{}, err
	}
	defer ch.mu.Unlock()
	if err := checkID("component", id); err != nil {
		return ComponentInfo{}, err
	}
	if err := checkProps(props); err != nil {
		return ComponentInfo{}, err
	}
	t, err := ch.eng.registry.lookup(kind, typ)
	if err != nil {
		return ComponentInfo{}, err
	}
	c, err := ch.addLocked(t, id, withDefaults(t, props))
	if err != nil {
		return ComponentInfo{}, err
	}
	return ch.infoLocked(c), nil
}

// withDefaults returns a copy of props with t's default properties merged
// under it.
func withDefaults(t *Type, props map[string]any) map[string]any {
	merged := cloneMap(t.Properties)
	if merged == nil {
		merged = map[string]any{}
	}
	maps.Copy(merged, cloneMap(props))
	return merged
}

// addLocked builds and adds a component; ch.mu is held.
func (ch *Chain) addLocked(t *Type, id string, props map[string]any) (*comp, error) {
	if _, err := ch.find(id); err == nil {
		return nil, errorf(ErrConflict, "component %s already exists in chain %s", id, ch.id)
	}
	owner := new(atomic.Pointer[comp]) // set once c exists: see countError
	impl, in, out, err := ch.build(t, id, props, owner)
	if err != nil {
		return nil, err
	}
	// The bound is checked once the component is known to be valid: what
	// can never be added is invalid, not busy (which asks to try again).
	if len(ch.order) >= ch.eng.maxComponents {
		closeImpl(impl)
		return nil, errorf(ErrBusy, "chain %s has %d components, the most it may have (the engine's MaxComponents; the server's -max-components)", ch.id, len(ch.order))
	}
	c := &comp{ch: ch, id: id, typ: t, uuid: ch.id + "/" + id + "/" + newUUID(), created: ch.eng.clock.Now(), made: ch.eng.made.Add(1),
		props: props, in: in, out: out, border: t.Kind == KindAdapter && t.Pattern == PatternInOut}
	if t.Stateless {
		c.g = newGate()
	}
	c.setImpl(impl)
	owner.Store(c)
	c.routes.Store(&[]route{})
	next := maps.Clone(*ch.comps.Load())
	next[id] = c
	ch.comps.Store(&next)
	ch.order = append(ch.order, c)
	if ch.state.Load() == stStarted {
		c.startTicker()
	}
	return c, nil
}

// build runs t's constructor on a copy of props and works out the ports.
// owner is, or will be, the component the implementation belongs to (see
// countError).
func (ch *Chain) build(t *Type, id string, props map[string]any, owner *atomic.Pointer[comp]) (impl any, in, out []string, err error) {
	impl, err = t.New(cloneMap(props), Env{Chain: ch.id, ID: id, Clock: ch.eng.clock, Output: ch.eng.output,
		Restoring: ch.eng.restoring.Load() > 0, CountError: func() { ch.countError(owner) }, splitters: &ch.eng.splitters})
	if err != nil {
		if !errors.Is(err, ErrInvalid) {
			err = errorf(ErrInvalid, "%s %s: %v", t.Kind, t.Name, err)
		}
		return nil, nil, nil, err
	}
	in, out = slices.Clone(t.In), slices.Clone(t.Out)
	if p, ok := impl.(Porter); ok {
		in, out = p.Ports()
		in, out = slices.Clone(in), slices.Clone(out)
	}
	for _, p := range slices.Concat(in, out) {
		if !validPort(p) {
			closeImpl(impl)
			return nil, nil, nil, errorf(ErrInvalid, "%s %s: port name %q: want 1 to 128 letters, digits or -_.", t.Kind, t.Name, p)
		}
	}
	if _, ok := impl.(Processor); !ok && len(in) > 0 {
		closeImpl(impl)
		return nil, nil, nil, errorf(ErrInvalid, "type %s has in ports but its constructor returned %T, not a Processor", t.Name, impl)
	}
	return impl, in, out, nil
}

// countError counts one error of the component in owner, the one made
// with an Env's CountError (its implementation may have changed since,
// UpdateProperties keeping the counters), while the chain still has it: once
// it is removed, nothing is counted, not even on another component given its
// id later.
func (ch *Chain) countError(owner *atomic.Pointer[comp]) {
	if c := owner.Load(); c != nil && (*ch.comps.Load())[c.id] == c {
		c.addError(nil)
	}
}

// newUUID returns a random RFC 4122 version 4 UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Component returns a snapshot of component id, or an error wrapping
// ErrNotFound (ErrInvalid for a malformed id; as every method naming a
// component).
func (ch *Chain) Component(id string) (ComponentInfo, error) {
	c, err := ch.lockFind(id, false)
	if err != nil {
		return ComponentInfo{}, err
	}
	defer ch.mu.Unlock()
	return ch.infoLocked(c), nil
}

// Components returns snapshots of every component, in creation order.
func (ch *Chain) Components() ([]ComponentInfo, error) {
	if err := ch.lock(); err != nil {
		return nil, err
	}
	defer ch.mu.Unlock()
	out := make([]ComponentInfo, 0, len(ch.order))
	for _, c := range ch.order {
		out = append(out, ch.infoLocked(c))
	}
	return out, nil
}

// infoLocked builds c's snapshot; ch.mu is held.
func (ch *Chain) infoLocked(c *comp) ComponentInfo {
	state := ComponentStopped
	if ch.state.Load() == stStarted {
		state = ComponentValid
	}
	// A component busy processing is not waited for: its check (and, for
	// a stateful one, its In and Out) are then those of the last
	// snapshot. A stateless component's counters are its stripes' sums.
	// c.impl only changes under ch.mu, which is held.
	_, checks := c.impl.(Checker)
	if (c.g == nil || checks) && c.tryLock() {
		c.seenInvalid = false
		if k, ok := c.impl.(Checker); ok && !ch.released && checkFails(k) { // a closed implementation is not asked
			c.seenInvalid = true
		}
		if c.g == nil {
			c.seenIn, c.seenOut = c.nIn, c.nOut
		}
		c.unlock()
	}
	if c.seenInvalid {
		state = ComponentInvalid
	}
	nIn, nOut, nDropped, nErrors := c.counters()
	q := int(c.npend.Load())
	for _, b := range ch.bindings {
		if b.target.Load() == c {
			q += b.link.Len()
		}
	}
	return ComponentInfo{
		ID: c.id, Kind: c.typ.Kind, Type: c.typ.Name, Namespace: Namespace, UUID: c.uuid, State: state,
		Created: c.created, Properties: cloneMap(c.props), Pattern: c.typ.Pattern,
		In: append([]string{}, c.in...), Out: append([]string{}, c.out...),
		Counters: Counters{In: nIn, Out: nOut, Dropped: nDropped, Errors: nErrors, Queue: q},
	}
}

// checkFails reports whether k.Check fails or panics; a panic is recovered
// because the caller holds the component (see comp.drain).
func checkFails(k Checker) (failed bool) {
	defer func() {
		if recover() != nil {
			failed = true
		}
	}()
	return k.Check() != nil
}

// RemoveComponent removes component id and all its bindings. kind, when
// not "", must be the component's kind (otherwise ErrNotFound, as for a
// missing component). The messages it held, and those queued on its
// bindings, are discarded and counted as dropped; a message in flight
// towards it is dropped too.
func (ch *Chain) RemoveComponent(kind Kind, id string) error {
	c, err := ch.lockFind(id, true)
	if err != nil {
		return err
	}
	defer ch.mu.Unlock()
	if kind != "" && c.typ.Kind != kind {
		return errorf(ErrNotFound, "no %s %q in chain %s (it is a %s)", kind, id, ch.id, c.typ.Kind)
	}
	c.stopTicker()
	var sources []*comp
	ch.bindings = slices.DeleteFunc(ch.bindings, func(b *binding) bool {
		t := b.target.Load()
		if b.from != c && t != c {
			return false
		}
		ch.dropBinding(b)
		if b.from != c {
			sources = append(sources, b.from)
		}
		return true
	})
	ch.topoBegin()
	for _, s := range sources {
		ch.rebuildRoutes(s)
	}
	c.routes.Store(&[]route{})
	ch.topoEnd()
	c.lock()
	c.removed = true
	c.nDropped.Add(uint64(len(c.takeHeldLocked())))
	closeImpl(c.impl)
	c.unlock()
	next := maps.Clone(*ch.comps.Load())
	delete(next, id)
	ch.comps.Store(&next)
	ch.order = slices.DeleteFunc(ch.order, func(x *comp) bool { return x == c })
	for _, s := range sources {
		s.unbound()
	}
	return nil
}

// dropBinding kills b and discards what its link holds, counted as dropped
// by the target; ch.mu is held. The caller removes b from ch.bindings.
func (ch *Chain) dropBinding(b *binding) {
	b.dead.Store(true)
	if n := b.link.Close(); n > 0 {
		b.target.Load().nDropped.Add(uint64(n))
	}
}

// rebuildRoutes recomputes c's out routes from ch.bindings; ch.mu is held.
func (ch *Chain) rebuildRoutes(c *comp) {
	var rs []route
	for _, b := range ch.bindings {
		if b.from != c {
			continue
		}
		i := slices.IndexFunc(rs, func(r route) bool { return r.port == b.fromPort })
		if i < 0 {
			rs = append(rs, route{port: b.fromPort})
			i = len(rs) - 1
		}
		rs[i].bs = append(rs[i].bs, b)
	}
	c.routes.Store(&rs)
}

// UpdateProperties merges props into component id's properties and
// reconfigures it: the type's constructor validates the merged properties
// and builds a new implementation, which takes over the messages the old one
// held and serves from the next message on. It fails with ErrNotFound for
// an unknown id, and with ErrInvalid, changing nothing, when the merged
// properties are rejected or would remove a port that is bound.
func (ch *Chain) UpdateProperties(id string, props map[string]any) (ComponentInfo, error) {
	return ch.reconfigure(id, props, true)
}

// SetProperties is UpdateProperties with props in place of component id's
// properties rather than merged into them (the type's defaults are merged
// under them, as at creation): what a Properties read earlier gives back,
// to undo an update.
func (ch *Chain) SetProperties(id string, props map[string]any) (ComponentInfo, error) {
	return ch.reconfigure(id, props, false)
}

// reconfigure is UpdateProperties (merge) or SetProperties.
func (ch *Chain) reconfigure(id string, props map[string]any, merge bool) (ComponentInfo, error) {
	c, err := ch.lockFind(id, true)
	if err != nil {
		return ComponentInfo{}, err
	}
	defer ch.mu.Unlock()
	if err := checkProps(props); err != nil {
		return ComponentInfo{}, err
	}
	var merged map[string]any
	if merge {
		merged = cloneMap(c.props)
		maps.Copy(merged, cloneMap(props))
	} else {
		merged = withDefaults(c.typ, props)
	}
	owner := new(atomic.Pointer[comp])
	owner.Store(c)
	impl, in, out, err := ch.build(c.typ, id, merged, owner)
	if err != nil {
		return ComponentInfo{}, err
	}
	if err := ch.checkBoundPorts(c, c, in, out); err != nil {
		closeImpl(impl)
		return ComponentInfo{}, err
	}
	started := ch.state.Load() == stStarted
	c.stopTicker()
	c.lock()
	held := c.takeHeldLocked()
	closeImpl(c.impl)
	c.setImpl(impl)
	c.in, c.out, c.props = in, out, merged
	c.addPending(held)
	if started {
		r := newRun(ch.eng.maxDeliveries)
		c.flushLocked(r)
		r.release()
	}
	c.unlock()
	if started {
		c.startTicker()
		c.announce() // the new implementation, as if just bound
	}
	return ch.infoLocked(c), nil
}

// checkBoundPorts verifies that every bound port of c exists among in/out
// (the ports of to); ch.mu is held.
func (ch *Chain) checkBoundPorts(c, to *comp, in, out []string) error {
	for _, b := range ch.bindings {
		if b.target.Load() == c && !slices.Contains(in, b.toPort) {
			return errorf(ErrInvalid, "in port %q of %s is bound but %s has no such in port (in ports: %s)",
				b.toPort, c.id, to.id, listPorts(in))
		}
		if b.from == c && !slices.Contains(out, b.fromPort) {
			return errorf(ErrInvalid, "out port %q of %s is bound but %s has no such out port (out ports: %s)",
				b.fromPort, c.id, to.id, listPorts(out))
		}
	}
	return nil
}

func listPorts(ps []string) string {
	if len(ps) == 0 {
		return "none"
	}
	return strings.Join(ps, ", ")
}

// Copy creates component to with from's kind, type and properties, and no
// binding. It fails with ErrNotFound when from does not exist, ErrInvalid
// for a malformed id, and ErrConflict when to exists.
func (ch *Chain) Copy(from, to string) (ComponentInfo, error) {
	c, err := ch.lockFind(from, true)
	if err != nil {
		return ComponentInfo{}, err
	}
	defer ch.mu.Unlock()
	if err := checkID("component", to); err != nil {
		return ComponentInfo{}, err
	}
	n, err := ch.addLocked(c.typ, to, cloneMap(c.props))
	if err != nil {
		return ComponentInfo{}, err
	}
	return ch.infoLocked(n), nil
}

// edge is a binding as seen by validation.
type edge struct {
	from     *comp
	fromPort string
	to       *comp
	toPort   string
	direct   bool
}

func (e edge) key() string { return e.from.id + ":" + e.fromPort + "\x00" + e.to.id + ":" + e.toPort }

// findCycle returns a cycle of the edges, as the components along it (the
// first repeated at the end), or nil when there is none. Chains must not
// loop: a message going round would cause work without end (direct
// bindings would also deadlock on the components' locks). An in-out
// adapter is two nodes: its in side, where edges end and none starts
// (what reaches it leaves the chain), and its out side, where they start.
func findCycle(edges []edge) []*comp { return cycleOf(edges, true, false) }

// findDirectLoop returns a loop of direct bindings through an in-out
// adapter, or nil. Such a loop is no cycle (the adapter's in side ends it)
// but would deadlock: the message comes back to the adapter while the
// adapter's own call still holds its lock. One binding of the loop must be
// asynchronous (queue, nats).
func findDirectLoop(edges []edge) []*comp { return cycleOf(edges, false, true) }

// cycleOf finds a cycle of edges; split makes two nodes of each in-out
// adapter, directOnly keeps the direct edges only.
func cycleOf(edges []edge, split, directOnly bool) []*comp {
	type node struct {
		c  *comp
		in bool // the in side of an in-out adapter
	}
	next := map[node][]node{}
	var nodes []node
	for _, e := range edges {
		if directOnly && !e.direct {
			continue
		}
		from, to := node{c: e.from}, node{c: e.to, in: split && e.to.border}
		if _, ok := next[from]; !ok {
			nodes = append(nodes, from)
		}
		next[from] = append(next[from], to)
	}
	const (
		white = iota
		grey
		black
	)
	color := map[node]int{}
	var path []node
	var visit func(n node) []*comp
	visit = func(n node) []*comp {
		color[n] = grey
		path = append(path, n)
		for _, x := range next[n] {
			switch color[x] {
			case grey:
				i := slices.Index(path, x)
				var cyc []*comp
				for _, p := range path[i:] {
					cyc = append(cyc, p.c)
				}
				return append(cyc, x.c)
			case white:
				if cyc := visit(x); cyc != nil {
					return cyc
				}
			}
		}
		path = path[:len(path)-1]
		color[n] = black
		return nil
	}
	for _, n := range nodes { // in binding order, so that the message is stable
		if color[n] == white {
			if cyc := visit(n); cyc != nil {
				return cyc
			}
		}
	}
	return nil
}

// cycleString writes a cycle as "a -> b -> a".
func cycleString(cyc []*comp) string {
	ids := make([]string, len(cyc))
	for i, c := range cyc {
		ids[i] = c.id
	}
	return strings.Join(ids, " -> ")
}

// Endpoint is one end of a binding: a component id and one of its ports.
// Endpoint is a plain value, safe for concurrent use as long as nobody modifies it.
type Endpoint struct {
	Component string
	Port      string
}

// String returns "<component>:<port>".
func (e Endpoint) String() string { return e.Component + ":" + e.Port }

// ParseEndpoint parses "<component>:<port>"; the port is what follows the
// last colon (ports have no colon, component ids may). Both parts must be
// non-empty and the component a valid id (one a component can have),
// otherwise it fails with ErrInvalid.
func ParseEndpoint(s string) (Endpoint, error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || i == len(s)-1 {
		return Endpoint{}, errorf(ErrInvalid, "endpoint %q: want <component>:<port>", s)
	}
	if err := checkID("component", s[:i]); err != nil {
		return Endpoint{}, err
	}
	return Endpoint{Component: s[:i], Port: s[i+1:]}, nil
}

// Bind connects out port from ("<component>:<port>") to in port to with the
// named linker ("" is "direct"; "queue" and its aliases event-admin,
// JMS-Joram and JMS_Joram report as "queue") configured by props, and returns
// the binding's description. It fails with ErrInvalid for a malformed
// endpoint, a port the component does not have (the message lists its
// ports), an unknown linker (the message lists them), properties the linker
// rejects, a cycle (whatever the linkers on it: a chain must not loop), or a
// loop of direct bindings through an in-out adapter (ErrDirectLoop); with
// ErrNotFound for an unknown component; and
// with ErrConflict when the same from/to binding exists. A binding added to a
// started chain works at once.
func (ch *Chain) Bind(from, to, linker string, props map[string]any) (BindingInfo, error) {
	fe, err := ParseEndpoint(from)
	if err != nil {
		return BindingInfo{}, err
	}
	te, err := ParseEndpoint(to)
	if err != nil {
		return BindingInfo{}, err
	}
	if err := checkProps(props); err != nil {
		return BindingInfo{}, err
	}
	if err := ch.lockChange(); err != nil {
		return BindingInfo{}, err
	}
	defer ch.mu.Unlock()
	fc, err := ch.find(fe.Component)
	if err != nil {
		return BindingInfo{}, err
	}
	tc, err := ch.find(te.Component)
	if err != nil {
		return BindingInfo{}, err
	}
	if !slices.Contains(fc.out, fe.Port) {
		return BindingInfo{}, errorf(ErrInvalid, "%s has no out port %q (out ports: %s)", fc.id, fe.Port, listPorts(fc.out))
	}
	if !slices.Contains(tc.in, te.Port) {
		return BindingInfo{}, errorf(ErrInvalid, "%s has no in port %q (in ports: %s)", tc.id, te.Port, listPorts(tc.in))
	}
	le, err := ch.eng.registry.linker(linker)
	if err != nil {
		return BindingInfo{}, err
	}
	if ch.findBinding(fe, te) != nil {
		return BindingInfo{}, errorf(ErrConflict, "binding %s -> %s already exists", from, to)
	}
	b := &binding{ch: ch, from: fc, fromPort: fe.Port, toPort: te.Port, linker: le.name, props: cloneMap(props)}
	b.source.Store(fc)
	b.target.Store(tc)
	link, err := le.linker.NewLink(cloneMap(props), b)
	if err == nil && link == nil {
		err = fmt.Errorf("linker %s returned a nil link", le.name)
	}
	if err != nil {
		if !errors.Is(err, ErrInvalid) {
			err = errorf(ErrInvalid, "linker %s: %v", le.name, err)
		}
		return BindingInfo{}, err
	}
	b.link = link
	_, b.direct = link.(*directLink)
	b.queue, _ = link.(*queueLink)
	b.bp, _ = link.(Backpressure)
	// The chain has neither cycle nor direct loop (every Bind and Replace
	// checks): the new binding closes one only if its source is reachable
	// from its target, which walks what lies downstream of the target only.
	// Only then are all the bindings searched, for the cycle the message
	// names, as before.
	cycle := ch.reachesLocked(tc, fc, true, false)
	loop := b.direct && !cycle && ch.reachesLocked(tc, fc, false, true)
	if cycle || loop {
		edges := make([]edge, 0, len(ch.bindings)+1)
		for _, x := range ch.bindings {
			edges = append(edges, edge{from: x.from, to: x.target.Load(), direct: x.direct})
		}
		edges = append(edges, edge{from: fc, to: tc, direct: b.direct})
		if cyc := findCycle(edges); cyc != nil {
			link.Close()
			return BindingInfo{}, errorf(ErrInvalid, "binding %s -> %s would close the cycle %s: a chain must not loop, whatever its linkers", from, to, cycleString(cyc))
		}
		if loop := findDirectLoop(edges); loop != nil {
			link.Close()
			return BindingInfo{}, directLoopf("binding %s -> %s would close the loop %s of direct bindings through an in-out adapter, which would deadlock: bind one of them with linker=queue", from, to, cycleString(loop))
		}
	}
	// The bound is checked last: a binding that can never be made (bad
	// properties, a loop) is invalid, not busy (which asks to try again).
	if len(ch.bindings) >= ch.eng.maxBindings {
		link.Close()
		return BindingInfo{}, errorf(ErrBusy, "chain %s has %d bindings, the most it may have (the engine's MaxBindings; the server's -max-bindings)", ch.id, len(ch.bindings))
	}
	ch.bindings = append(ch.bindings, b)
	ch.topoBegin()
	ch.rebuildRoutes(fc)
	ch.topoEnd()
	if ch.state.Load() == stStarted {
		link.Start()
		fc.announce()
	}
	return b.info(), nil
}

// reachesLocked reports whether the bindings lead from component from to
// component to, following each component's out routes: a binding from to
// to from would then close a cycle (split, as findCycle: a path that
// enters an in-out adapter ends there) or a loop of direct bindings
// (directOnly, as findDirectLoop). It visits what lies downstream of from
// only. ch.mu is held.
func (ch *Chain) reachesLocked(from, to *comp, split, directOnly bool) bool {
	if split && from.border {
		return false // the in side of an in-out adapter: nothing leaves it
	}
	if from == to {
		return true
	}
	follow := func(b *binding) bool {
		// Not the in side of an in-out adapter: a dead end, whether or not it is to.
		return (!directOnly || b.direct) && !(split && b.target.Load().border)
	}
	for b := range downstream(from, follow) {
		if b.target.Load() == to {
			return true
		}
	}
	return false
}

// findBinding returns the binding between the two endpoints; ch.mu is held.
func (ch *Chain) findBinding(from, to Endpoint) *binding {
	for _, b := range ch.bindings {
		if b.from.id == from.Component && b.fromPort == from.Port && b.target.Load().id == to.Component && b.toPort == to.Port {
			return b
		}
	}
	return nil
}

// Unbind removes the binding from -> to. Messages queued on it are
// discarded and counted as dropped by the target. It fails with ErrInvalid
// for a malformed endpoint (see ParseEndpoint) and ErrNotFound when there
// is no such binding.
func (ch *Chain) Unbind(from, to string) error {
	fe, err := ParseEndpoint(from)
	if err != nil {
		return err
	}
	te, err := ParseEndpoint(to)
	if err != nil {
		return err
	}
	if err := ch.lockChange(); err != nil {
		return err
	}
	defer ch.mu.Unlock()
	b := ch.findBinding(fe, te)
	if b == nil {
		return errorf(ErrNotFound, "no binding %s -> %s in chain %s", from, to, ch.id)
	}
	ch.bindings = slices.DeleteFunc(ch.bindings, func(x *binding) bool { return x == b })
	ch.topoBegin()
	ch.rebuildRoutes(b.from)
	ch.topoEnd()
	ch.dropBinding(b)
	b.from.unbound()
	return nil
}
