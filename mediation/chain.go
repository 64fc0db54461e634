package mediation

// Locks, and the order in which they are taken. A goroutine holding one may
// take those below it, never those above; every wait ends.
//
//  1. Engine.mu: the map of chains. Never held while a chain lock is taken
//     (DeleteChain and Close let it go before they stop a chain).
//  2. Chain.mu, the structural lock (this file, topology.go, replace.go):
//     serialises Start, Stop, Bind, AddComponent, Replace, … It takes
//     components exclusively (comp.lock), link locks (Start, Stop, Len,
//     Close). Stop waits, holding it, for the links' goroutines and the
//     Sends in progress to finish; both are bounded (see 3). It takes one
//     component at a time.
//  3. Components (comp.go, gate.go). A component is taken in one of two
//     ways:
//     - exclusively, with comp.lock: comp.mu, and for a stateless
//     component its gate shut, after waiting for the calls in progress
//     (those of Process and Inject, which hold the gate shared). Every
//     call of a stateful component's implementation, and the calls of a
//     stateless one other than Process and Inject (ticks, announcements,
//     Drain, Restore, Retained, Check, Close), are made so; so are the
//     changes of the implementation, its removal and the hand-over of
//     messages (Replace, UpdateProperties, RemoveComponent).
//     - shared, for one call of Process or Inject of a stateless
//     component (comp.acquire): an increment of the caller's stripe of
//     the gate, made before the gate is read; a call that finds the gate
//     shut undoes it and waits on comp.mu for the exclusive holder (who
//     counts the stripes after shutting the gate, and waits until the
//     calls it saw end). No mutex is written by such a call, and its
//     counters are on its own stripe.
//     The send path (send.go) takes the components a message goes through,
//     each in its way: along a direct binding the next one is taken while
//     the previous is held, which cannot deadlock because bindings never
//     form a cycle (Bind and Replace refuse one), and an exclusive holder
//     waits only for calls that hold nothing above it. Nothing waits
//     while a component is held but for components further down: queues
//     take what they are given, a message can cause at most the engine's
//     MaxDeliveries deliveries, and Chain.Send waits for room before it
//     takes anything. A shared call that finds handed-over messages turns
//     back and takes the component exclusively to process them first.
//     Snapshots (infoLocked) only try a component (comp.tryLock), so a
//     busy one is not waited for.
//  4. Leaves, which take nothing: a queue link's mutex, comp.pendMu, the
//     engine's output writer.
//
// Stop waits, after setting the state, for the link goroutines (Link.Stop),
// the tick goroutines, and the Sends in progress: each holds the component
// it injects into while it runs, and checks the state once it holds it, so
// taking each injectable component once waits for them.
//
// Helpers that need a lock held say so in their name (…Locked) or in their
// comment.

import (
	"sync"
	"sync/atomic"
)

// Chain is a mediation chain: components (mediators and adapters, one id
// space) connected by bindings. A Chain is safe for concurrent use: message
// operations (Send, Messages) run concurrently with each other and with
// structural operations, which are serialised per chain. Every operation
// validates first and then either applies fully or changes nothing. Once the
// chain is deleted every method fails with ErrNotFound; once its engine is
// closed, changes fail with ErrConflict.
type Chain struct {
	id  string
	eng *Engine

	mu       sync.Mutex // serialises structural operations
	order    []*comp    // creation order; guarded by mu
	bindings []*binding // creation order; guarded by mu
	released bool       // the engine closed and freed what the chain held; guarded by mu

	topo    atomic.Uint64 // version of the topology, odd while it changes (topoBegin, topoEnd): see queuesAhead
	deleted atomic.Bool
	state   atomic.Int32
	comps   atomic.Pointer[map[string]*comp] // copy on write, under mu
}

func newChain(e *Engine, id string) *Chain {
	ch := &Chain{id: id, eng: e}
	ch.comps.Store(&map[string]*comp{})
	return ch
}

// ID returns the chain's id.
func (ch *Chain) ID() string { return ch.id }

// lock takes the structural lock, failing when the chain is deleted.
func (ch *Chain) lock() error {
	ch.mu.Lock()
	if ch.deleted.Load() {
		ch.mu.Unlock()
		return ch.gone()
	}
	return nil
}

func (ch *Chain) gone() error { return errorf(ErrNotFound, "chain %q was deleted", ch.id) }

// lockChange is lock for a change of the chain's components, bindings or
// properties: it also fails, with ErrConflict, once the engine is closed
// (Engine.Close freed what the chain held; nothing would free more).
func (ch *Chain) lockChange() error {
	if err := ch.lock(); err != nil {
		return err
	}
	if ch.released {
		ch.mu.Unlock()
		return errorf(ErrConflict, "engine closed: chain %q can be read, not changed", ch.id)
	}
	return nil
}

// lockFind takes the structural lock (lockChange when change is true) and
// finds component id: on success the caller holds ch.mu and unlocks it; on
// error the lock is not held.
func (ch *Chain) lockFind(id string, change bool) (*comp, error) {
	lock := ch.lock
	if change {
		lock = ch.lockChange
	}
	if err := lock(); err != nil {
		return nil, err
	}
	c, err := ch.find(id)
	if err != nil {
		ch.mu.Unlock()
		return nil, err
	}
	return c, nil
}

// find returns the component of that id; ch.mu is held.
func (ch *Chain) find(id string) (*comp, error) {
	if c := (*ch.comps.Load())[id]; c != nil {
		return c, nil // stored ids were checked when created: no check on the hot path
	}
	if err := checkID("component", id); err != nil {
		return nil, err
	}
	return nil, errorf(ErrNotFound, "no component %q in chain %s", id, ch.id)
}

// stateName maps the internal state to its reported name.
func stateName(s int32) string {
	switch s {
	case stIdle:
		return StateIdle
	case stStarted:
		return StateStarted
	}
	return StateStopped
}

// State returns "idle", "started" or "stopped" (also while a Stop is in
// progress). A deleted chain reports "stopped".
func (ch *Chain) State() string { return stateName(ch.state.Load()) }

// BindingInfo describes one binding. BindingInfo is a plain value, safe for concurrent use as long as nobody modifies it.
type BindingInfo struct {
	// From is the source endpoint, "<component>:<out port>".
	From string `json:"from"`
	// To is the target endpoint, "<component>:<in port>".
	To string `json:"to"`
	// Linker is the canonical name of the linker ("direct", "queue", ...).
	Linker string `json:"linker"`
	// Properties are the binding's properties (a copy).
	Properties map[string]any `json:"properties,omitempty"`
}

// AdapterIDs lists adapter ids by pattern, in creation order. AdapterIDs is
// a plain value, safe for concurrent use as long as nobody modifies it.
type AdapterIDs struct {
	InOnly  []string `json:"in-only"`
	OutOnly []string `json:"out-only"`
	InOut   []string `json:"in-out"`
	// All lists every adapter, whatever its pattern, in creation order
	// (not in Cilia's JSON, which groups them).
	All []string `json:"-"`
}

// ChainInfo is a snapshot of a chain; its slices are copies. ChainInfo is
// a plain value, safe for concurrent use as long as nobody modifies it.
type ChainInfo struct {
	ID string `json:"id"`
	// State is StateIdle, StateStarted or StateStopped.
	State string `json:"state"`
	// Mediators and Adapters list the components' ids, in creation order.
	Mediators []string      `json:"mediators"`
	Adapters  AdapterIDs    `json:"adapters"`
	Bindings  []BindingInfo `json:"bindings"`
}

// Info returns a snapshot of the chain: its state, its component ids and its
// bindings, each in creation order.
func (ch *Chain) Info() (ChainInfo, error) {
	if err := ch.lock(); err != nil {
		return ChainInfo{}, err
	}
	defer ch.mu.Unlock()
	ci := ChainInfo{
		ID: ch.id, State: ch.State(), Mediators: []string{},
		Adapters: AdapterIDs{InOnly: []string{}, OutOnly: []string{}, InOut: []string{}, All: []string{}},
		Bindings: make([]BindingInfo, 0, len(ch.bindings)),
	}
	for _, c := range ch.order {
		if c.typ.Kind != KindMediator {
			ci.Adapters.All = append(ci.Adapters.All, c.id)
		}
		switch {
		case c.typ.Kind == KindMediator:
			ci.Mediators = append(ci.Mediators, c.id)
		case c.typ.Pattern == PatternInOnly:
			ci.Adapters.InOnly = append(ci.Adapters.InOnly, c.id)
		case c.typ.Pattern == PatternOutOnly:
			ci.Adapters.OutOnly = append(ci.Adapters.OutOnly, c.id)
		default:
			ci.Adapters.InOut = append(ci.Adapters.InOut, c.id)
		}
	}
	for _, b := range ch.bindings {
		ci.Bindings = append(ci.Bindings, b.info())
	}
	return ci, nil
}

// info describes b; ch.mu is held.
func (b *binding) info() BindingInfo {
	return BindingInfo{
		From:       b.from.id + ":" + b.fromPort,
		To:         b.target.Load().id + ":" + b.toPort,
		Linker:     b.linker,
		Properties: cloneMap(b.props),
	}
}

// topoBegin marks a change of routes or binding targets under way; ch.mu is
// held. Until topoEnd, queuesAhead does not trust what it reads: a walk
// could see a binding's old target and that target's new routes.
func (ch *Chain) topoBegin() { ch.topo.Add(1) }

// topoEnd ends the change begun by topoBegin.
func (ch *Chain) topoEnd() { ch.topo.Add(1) }

// Start starts the chain: queue links deliver, periodic components tick,
// and Send is accepted. Starting a started chain does nothing. It fails with
// ErrConflict when the engine is closed.
func (ch *Chain) Start() error {
	if err := ch.lock(); err != nil {
		return err
	}
	defer ch.mu.Unlock()
	if ch.state.Load() == stStarted {
		return nil
	}
	if ch.eng.isClosed() {
		return errorf(ErrConflict, "engine closed")
	}
	// Queues are armed first: from the moment Send sees the chain started,
	// a full queue makes it wait for room, even before its link delivers.
	for _, b := range ch.bindings {
		if b.queue != nil {
			b.queue.arm()
		}
	}
	ch.state.Store(stStarted)
	// Components, then links: a queue link starts delivering at once, and
	// startTicker and flushNow take each component exclusively; started
	// first, a link could be inside a component (whose processing may take
	// any time) while Start waits for it. Announcers come last, once every
	// link runs; a component that does not announce is not taken.
	for _, c := range ch.order {
		c.startTicker()
		c.flushNow()
	}
	for _, b := range ch.bindings {
		b.link.Start()
	}
	for _, c := range ch.order {
		c.announce()
	}
	return nil
}

// flushNow processes c's pending messages, if any; ch.mu is held and the
// chain is started.
func (c *comp) flushNow() {
	if c.npend.Load() == 0 {
		return
	}
	r := newRun(c.ch.eng.maxDeliveries)
	c.lock()
	c.flushLocked(r)
	c.unlock()
	r.release()
}

// Stop stops the chain and returns once nothing is processed any more:
// Send is refused, each queue link finishes the message it is delivering,
// periodic components stop ticking. Components, bindings and every held or
// queued message are kept for the next Start. Stopping an idle chain makes
// it stopped; stopping a stopped chain does nothing.
func (ch *Chain) Stop() error {
	if err := ch.lock(); err != nil {
		return err
	}
	defer ch.mu.Unlock()
	ch.stopLocked()
	return nil
}

func (ch *Chain) stopLocked() {
	switch ch.state.Load() {
	case stStopped:
		return
	case stIdle:
		ch.state.Store(stStopped)
		return
	}
	ch.state.Store(stStopping)
	for _, b := range ch.bindings {
		b.link.Stop()
	}
	for _, c := range ch.order {
		c.stopTicker()
		c.stop()
	}
	// What is left in progress are Sends. A Send holds the component it
	// injects into from the moment it checks the state until it is done,
	// downstream deliveries included; taking each injectable component
	// once, after the state says stopping, waits for the Sends in
	// progress, and those that come later see the state and give up.
	for _, c := range ch.order {
		if c.injectable.Load() {
			c.lock()
			c.unlock()
		}
	}
	ch.state.Store(stStopped)
}

// destroy stops the chain, releases everything and marks it deleted
// (DeleteChain).
func (ch *Chain) destroy() {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.releaseLocked()
	ch.deleted.Store(true)
	for _, c := range ch.order {
		c.lock()
		c.removed = true
		c.unlock()
	}
}

// release stops the chain for good and frees what it holds (Engine.Close);
// unlike destroy, the chain stays, to be read.
func (ch *Chain) release() {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if !ch.deleted.Load() {
		ch.releaseLocked()
	}
}

// releaseLocked stops the chain and frees, once, what its links and
// components hold: a link's goroutines and connections (what it held is
// counted as dropped by its target), an io.Closer implementation's
// resources. ch.mu is held.
func (ch *Chain) releaseLocked() {
	if ch.released {
		return
	}
	ch.stopLocked()
	ch.released = true
	for _, b := range ch.bindings {
		ch.dropBinding(b)
	}
	for _, c := range ch.order {
		c.lock()
		closeImpl(c.impl)
		c.unlock()
	}
}
