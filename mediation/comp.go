package mediation

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// route is the list of bindings of one out port.
type route struct {
	port string
	bs   []*binding
}

// comp is the runtime state of one component.
type comp struct {
	ch      *Chain
	id      string
	typ     *Type
	uuid    string    // guarded by ch.mu (SetIdentity)
	created time.Time // as uuid
	made    uint64    // the engine's count of components made, this one included

	// Guarded by ch.mu.
	props map[string]any
	in    []string
	out   []string
	tick  *tickRun

	// mu gives exclusive use of the implementation (see lock and acquire
	// in gate.go): for a stateful component every call is made holding
	// it; a stateless one (g != nil) runs Process and Inject through its
	// gate instead, concurrently, and every other call holding mu with
	// the gate shut.
	mu      sync.Mutex
	g       *gate     // nil for a stateful component; set at creation
	impl    any       // written under lock(); read under acquire() or lock()
	proc    Processor // as impl; nil without in ports
	inj     Injector  // as impl; nil when not injectable
	removed bool      // as impl

	injectable atomic.Bool // inj != nil, readable without mu
	routes     atomic.Pointer[[]route]

	// Messages handed over by Replace or UpdateProperties, processed
	// before anything else. pendMu is a leaf lock.
	pendMu  sync.Mutex
	pending []Held
	npend   atomic.Int64

	// ahead caches the queues a message leaving the component may reach.
	ahead atomic.Pointer[ahead]

	// border is set for in-out adapters: what reaches their in ports
	// leaves the chain, what they emit otherwise enters it; while Process
	// runs their emits are dropped (frame.processing). So a chain may run
	// through such an adapter both ways without looping.
	border bool

	// Counters of a stateful component, guarded by mu (they only change
	// while the implementation runs); a stateless one counts on its
	// gate's stripes. nDropped and nErrors also take what is counted
	// outside any call (a delivery to a removed component, a discarded
	// queue), for both.
	nIn, nOut         uint64
	nDropped, nErrors atomic.Uint64
	// What the last snapshot saw of In, Out and Check; guarded by ch.mu
	// (snapshots do not wait for a busy component).
	seenIn, seenOut uint64
	seenInvalid     bool
}

// setImpl installs a new implementation; c is held with lock (or c is
// unpublished).
func (c *comp) setImpl(impl any) {
	c.impl = impl
	c.proc, _ = impl.(Processor)
	c.inj, _ = impl.(Injector)
	c.injectable.Store(c.inj != nil)
}

// counters returns c's In, Out, Dropped and Errors; In and Out of a stateful
// component are those the last snapshot saw (see Chain.infoLocked).
func (c *comp) counters() (in, out, dropped, errs uint64) {
	in, out = c.seenIn, c.seenOut
	dropped, errs = c.nDropped.Load(), c.nErrors.Load()
	if c.g != nil {
		var d, e uint64
		in, out, d, e = c.g.counts()
		dropped += d
		errs += e
	}
	return in, out, dropped, errs
}

// enter makes r's frame c's for a call of Process or Inject, and returns
// the frame to restore after it. A stateful component (s is nil, c held
// exclusively) first processes what was handed to it, and counts the call.
func (r *run) enter(c *comp, s *compStripe) frame {
	saved := r.frame
	r.frame = frame{c: c, s: s}
	if s == nil {
		if c.npend.Load() != 0 {
			c.flushLocked(r)
		}
		c.nIn++
	}
	return saved
}

// process runs c's Processor on a message that arrived on port; r holds c
// (acquire), s is what acquire returned. It returns how many messages c
// emitted, for release.
func (c *comp) process(port string, m Message, r *run, s *compStripe) uint64 {
	saved := r.enter(c, s)
	c.call(port, m, r)
	outs := r.outs
	r.frame = saved
	return outs
}

// call calls the processor, counting errors and recovering panics; r's
// frame is c's. A component that may change the properties of what it
// receives does not see the size a queue counted for them (run.in), nor
// do the components it emits to; nor does it get properties that other
// messages share (run.shared), but a copy of its own. The call leaves
// run.shared as it found it, even when the processor panicked (an
// enricher's own mark, set while it emits, would otherwise outlive it and
// hide the mark of the message its caller goes on with, such as the one
// that made it process what was handed over to it).
func (c *comp) call(port string, m Message, r *run) {
	sh := r.shared
	if sh != 0 && !c.typ.props.reads() && mapAddr(m.Properties) == sh {
		m.Properties = ownCopy(m.Properties)
	}
	if r.in != 0 && c.typ.props == propsChanged {
		in := r.in
		r.in = 0
		c.invoke(port, m, r)
		r.in = in
	} else {
		c.invoke(port, m, r)
	}
	r.shared = sh
}

// invoke is call. An error of kind ErrBusy (a bound the component reached)
// is also the cause's.
func (c *comp) invoke(port string, m Message, r *run) {
	s := r.s
	if c.proc == nil {
		c.addDropped(s, 1)
		return
	}
	if c.border {
		r.processing = true
		defer func() { r.processing = false }()
	}
	defer c.recoverProcess(r, s)
	if err := c.proc.Process(port, m, r); err != nil {
		c.addError(s)
		if errors.Is(err, ErrBusy) {
			r.cz.fail(errorf(ErrBusy, "chain %s: component %s: %v", c.ch.id, c.id, err))
		}
	}
}

// recoverProcess is recoverPanic for a call of Process on r: a panic also
// forgets the properties' size r knew (run.in), since the component that
// panicked may have left it naming a map no longer alive.
func (c *comp) recoverProcess(r *run, s *compStripe) {
	if p := recover(); p != nil {
		r.in = 0
		c.addError(s)
	}
}

// recoverPanic counts a panic of the implementation as an error.
func (c *comp) recoverPanic(s *compStripe) {
	if r := recover(); r != nil {
		c.addError(s)
	}
}

// inject runs the Injector on m; r holds c (acquire), s is what acquire
// returned. It returns how many messages c emitted, for release.
func (c *comp) inject(m Message, r *run, s *compStripe) (outs uint64, err error) {
	saved := r.enter(c, s)
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
		if err != nil {
			c.addError(s)
		}
		outs = r.outs
		r.frame = saved
	}()
	return 0, c.inj.Inject(m, r)
}

// flushPending processes the messages handed over to a stateless component
// holding it exclusively, for a call that found some (and turned back).
func (c *comp) flushPending(r *run) {
	c.lock()
	if !c.removed && c.npend.Load() != 0 {
		c.flushLocked(r)
	}
	c.unlock()
}

// flushLocked processes the pending messages with r's budget, handing
// them to a Restorer or else processing them in order; c is held
// exclusively (lock, or acquire of a stateful component).
func (c *comp) flushLocked(r *run) {
	c.pendMu.Lock()
	p := c.pending
	c.pending = nil
	c.npend.Store(0)
	c.pendMu.Unlock()
	if len(p) == 0 {
		return // another call took them first (callers check npend before they hold c)
	}
	if rs, ok := c.impl.(Restorer); ok {
		c.inFrame(r, func() error { return rs.Restore(p, r) })
		return
	}
	c.inFrame(r, func() error {
		for _, h := range p {
			c.call(h.Port, h.Message, r)
		}
		return nil
	})
}

// addPending appends hs after the pending messages.
func (c *comp) addPending(hs []Held) {
	if len(hs) == 0 {
		return
	}
	c.pendMu.Lock()
	c.pending = append(c.pending, hs...)
	c.npend.Store(int64(len(c.pending)))
	c.pendMu.Unlock()
}

// takeHeldLocked removes and returns what c holds: its implementation's
// held messages, then its pending ones; c is held with lock. The
// properties of what a type that keeps shared maps (propsHeld) held are
// copies: they may be maps other messages share, which nobody the
// messages go to next may be given as they are. A copy of the map alone
// (ownCopy), as comp.call gives: the values stay those kept (a deep copy
// would make a nil list an empty one, and never end on a map holding
// itself).
func (c *comp) takeHeldLocked() []Held {
	var hs []Held
	if d, ok := c.impl.(Drainer); ok {
		hs = c.drain(d)
		if c.typ.props == propsHeld {
			for i := range hs {
				hs[i].Message.Properties = ownCopy(hs[i].Message.Properties) // nil stays nil
			}
		}
	}
	c.pendMu.Lock()
	hs = append(hs, c.pending...)
	c.pending = nil
	c.npend.Store(0)
	c.pendMu.Unlock()
	return hs
}

// drain calls d.Drain; a panic counts as an error of c and hands nothing
// over. It is recovered here, as the panics of the other calls of an
// implementation are, because its callers hold c and the chain's topology
// mid-change: a panic passing through them would leave c held and the
// chain wedged for good.
func (c *comp) drain(d Drainer) []Held {
	defer c.recoverPanic(nil)
	return d.Drain()
}

// retained calls r.Retained; a panic counts as an error of c and fails
// with ErrInvalid, as one of Inject does for Send.
func (c *comp) retained(r Retainer) (ms []Message, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.addError(nil)
			err = errorf(ErrInvalid, "component %s (%s) failed to give its messages: panic: %v", c.id, c.typ.Name, p)
		}
	}()
	return r.Retained(), nil
}

// closeImpl closes an implementation that is an io.Closer. A panic of Close
// is ignored, as its error is: its callers hold the component (and close
// the rest of the chain, or of the engine, after it).
func closeImpl(impl any) {
	if cl, ok := impl.(io.Closer); ok {
		defer func() { _ = recover() }()
		_ = cl.Close()
	}
}

// binding is the runtime state of one binding.
type binding struct {
	ch *Chain

	// Guarded by ch.mu.
	from     *comp
	fromPort string
	toPort   string // the target keeps this port name across Replace
	linker   string // canonical name
	props    map[string]any

	target atomic.Pointer[comp] // moved by Replace
	source atomic.Pointer[comp] // from, for readers without ch.mu (set with it)
	link   Link
	direct bool         // link is a *directLink: deliver inline
	queue  *queueLink   // link is a *queueLink: push with the cause
	bp     Backpressure // link bounds what it holds; nil otherwise
	dead   atomic.Bool
}

// tickRun is the goroutine driving a Periodic component.
type tickRun struct {
	stop chan struct{}
	done chan struct{}
}

// startTicker starts the ticks of a Periodic component; ch.mu is held and
// the chain is started.
func (c *comp) startTicker() {
	if c.tick != nil {
		return
	}
	c.lock()
	p, ok := c.impl.(Periodic)
	var d time.Duration
	if ok {
		d = c.period(p)
	}
	c.unlock()
	if d <= 0 {
		return
	}
	t := c.ch.eng.clock.Ticker(d)
	tr := &tickRun{stop: make(chan struct{}), done: make(chan struct{})}
	c.tick = tr
	go func() {
		defer close(tr.done)
		defer t.Stop()
		for {
			select {
			case <-tr.stop:
				return
			case now := <-t.C:
				c.onTick(now)
			}
		}
	}()
}

// period returns p.Period(); a panic counts as an error of c and disables
// the ticks (c is held: see drain).
func (c *comp) period(p Periodic) (d time.Duration) {
	defer c.recoverPanic(nil)
	return p.Period()
}

// onTick runs one tick, with a budget of its own.
func (c *comp) onTick(now time.Time) {
	r := newRun(c.ch.eng.maxDeliveries)
	defer r.release()
	c.lock()
	defer c.unlock()
	p, ok := c.impl.(Periodic)
	if !ok || c.removed || !c.ch.running() {
		return
	}
	c.exclusive(r, func() error { return p.Tick(now, r) })
}

// exclusive runs f, a call of c's implementation other than Process and
// Inject, with r's budget, after the pending messages; c is held with lock.
func (c *comp) exclusive(r *run, f func() error) {
	if c.npend.Load() != 0 {
		c.flushLocked(r)
	}
	c.inFrame(r, f)
}

// inFrame runs f, calls of c's implementation made holding c exclusively,
// in a frame of c's with r's budget; f's error or panic counts as an error
// of c, and what c emits is counted once f returns.
func (c *comp) inFrame(r *run, f func() error) {
	saved := r.frame
	r.frame = frame{c: c, s: c.ownStripe(r)}
	defer func() {
		if r.s != nil && r.outs != 0 { // a stateless c: no call end to add them to
			r.s.outFold.Add(r.outs)
		}
		r.frame = saved
	}()
	defer c.recoverPanic(r.s)
	if err := f(); err != nil {
		c.addError(r.s)
	}
}

// bound reports whether c has an out binding; ch.mu is held.
func (c *comp) bound() bool {
	rs := c.routes.Load()
	return rs != nil && len(*rs) > 0
}

// announce runs an Announcer that has an out binding (an unbound one has
// no one to tell); ch.mu is held and the chain is started.
func (c *comp) announce() {
	// c.impl only changes under ch.mu: a component that does not announce
	// is not taken at all.
	a, ok := c.impl.(Announcer)
	if !ok || !c.bound() {
		return
	}
	c.holding(func(r *run) { c.exclusive(r, func() error { return a.Announce(r) }) })
}

// unbound stops c if the chain is started and c has no out binding any
// more (a binding removed, what it fed removed, its bindings handed to
// another by Replace): see Stopper. ch.mu is held.
func (c *comp) unbound() {
	if c.ch.state.Load() == stStarted && !c.bound() {
		c.stop()
	}
}

// stop runs a Stopper (the chain stops, or c was left without an out
// binding); ch.mu is held.
func (c *comp) stop() {
	if st, ok := c.impl.(Stopper); ok {
		c.holding(func(r *run) { c.inFrame(r, st.Stop) })
	}
}

// holding runs f holding c exclusively, with a budget of its own, unless c
// was removed; ch.mu is held.
func (c *comp) holding(f func(r *run)) {
	c.lock()
	defer c.unlock()
	if c.removed {
		return
	}
	r := newRun(c.ch.eng.maxDeliveries)
	defer r.release()
	f(r)
}

// stopTicker stops the ticks and waits for the goroutine; ch.mu is held.
func (c *comp) stopTicker() {
	if c.tick == nil {
		return
	}
	close(c.tick.stop)
	<-c.tick.done
	c.tick = nil
}
