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
	uuid    string
	created time.Time

	// Guarded by ch.mu.
	props map[string]any
	in    []string
	out   []string
	tick  *tickRun

	// mu serialises everything the implementation does.
	mu      sync.Mutex
	impl    any       // guarded by mu
	proc    Processor // guarded by mu; nil without in ports
	inj     Injector  // guarded by mu; nil when not injectable
	removed bool      // guarded by mu

	injectable atomic.Bool // inj != nil, readable without mu
	routes     atomic.Pointer[[]route]

	// Messages handed over by Replace or UpdateProperties, processed
	// before anything else. pendMu is a leaf lock.
	pendMu  sync.Mutex
	pending []Held
	npend   atomic.Int64

	// cur is the budget of what the component is doing (see cause);
	// guarded by mu.
	cur *cause
	// ahead caches the queues a message leaving the component may reach.
	ahead atomic.Pointer[ahead]

	// border is set for in-out adapters: what reaches their in ports
	// leaves the chain, what they emit otherwise enters it; processing
	// (guarded by mu) is set while Process runs, when their emits are
	// dropped. So a chain may run through such an adapter both ways
	// without looping.
	border, processing bool

	nIn, nOut uint64 // guarded by mu (they only change while the implementation runs)
	// What the last snapshot saw of the above and of Check; guarded by
	// ch.mu (snapshots do not wait for a busy component).
	seenIn, seenOut   uint64
	seenInvalid       bool
	nDropped, nErrors atomic.Uint64
}

// setImpl installs a new implementation; c.mu is held (or c is unpublished).
func (c *comp) setImpl(impl any) {
	c.impl = impl
	c.proc, _ = impl.(Processor)
	c.inj, _ = impl.(Injector)
	c.injectable.Store(c.inj != nil)
}

// Emit implements Emitter for the component's implementation.
func (c *comp) Emit(port string, m Message) {
	if c.processing { // an in-out adapter passes nothing from its in side to its out side
		c.nDropped.Add(1)
		return
	}
	if rs := c.routes.Load(); rs != nil {
		for i := range *rs {
			if r := &(*rs)[i]; r.port == port {
				c.nOut++
				c.fanout(r.bs, m)
				return
			}
		}
	}
	c.nDropped.Add(1)
}

// Drop implements Emitter.
func (c *comp) Drop(n int) {
	if n > 0 {
		c.nDropped.Add(uint64(n))
	}
}

// deliverLocked processes a message that arrived on port, caused by cz;
// c.mu is held.
func (c *comp) deliverLocked(port string, m Message, cz *cause) {
	prev := c.cur
	c.cur = cz
	if c.npend.Load() != 0 {
		c.flushLocked()
	}
	c.nIn++
	c.run(port, m)
	c.cur = prev
}

// run calls the processor, counting errors and recovering panics. An error
// of kind ErrBusy (a bound the component reached) is also the cause's.
func (c *comp) run(port string, m Message) {
	if c.proc == nil {
		c.nDropped.Add(1)
		return
	}
	if c.border {
		c.processing = true
		defer func() { c.processing = false }()
	}
	defer c.recoverPanic()
	if err := c.proc.Process(port, m, c); err != nil {
		c.nErrors.Add(1)
		if errors.Is(err, ErrBusy) && c.cur != nil {
			c.cur.fail(errorf(ErrBusy, "chain %s: component %s: %v", c.ch.id, c.id, err))
		}
	}
}

func (c *comp) recoverPanic() {
	if r := recover(); r != nil {
		c.nErrors.Add(1)
	}
}

// inject runs the Injector on m, caused by cz; c.mu is held.
func (c *comp) inject(m Message, cz *cause) (err error) {
	prev := c.cur
	c.cur = cz
	defer func() { c.cur = prev }()
	if c.npend.Load() != 0 {
		c.flushLocked()
	}
	c.nIn++
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
		if err != nil {
			c.nErrors.Add(1)
		}
	}()
	return c.inj.Inject(m, c)
}

// withCause runs f with a fresh budget as c's cause, unless c already has
// one; c.mu is held. Ticks, announcements and flushes start here.
func (c *comp) withCause(f func()) {
	if c.cur != nil {
		f()
		return
	}
	cz := newCause(c.ch.eng.maxDeliveries)
	c.cur = cz
	f()
	c.cur = nil
	cz.release()
}

// flushLocked processes the pending messages; c.mu is held.
func (c *comp) flushLocked() {
	if c.cur == nil {
		c.withCause(c.flushLocked)
		return
	}
	c.pendMu.Lock()
	p := c.pending
	c.pending = nil
	c.npend.Store(0)
	c.pendMu.Unlock()
	if r, ok := c.impl.(Restorer); ok {
		c.restore(r, p)
		return
	}
	for _, h := range p {
		c.run(h.Port, h.Message)
	}
}

// restore hands held messages to a Restorer; c.mu is held.
func (c *comp) restore(r Restorer, p []Held) {
	defer c.recoverPanic()
	if err := r.Restore(p, c); err != nil {
		c.nErrors.Add(1)
	}
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
// held messages, then its pending ones; c.mu is held.
func (c *comp) takeHeldLocked() []Held {
	var hs []Held
	if d, ok := c.impl.(Drainer); ok {
		hs = d.Drain()
	}
	c.pendMu.Lock()
	hs = append(hs, c.pending...)
	c.pending = nil
	c.npend.Store(0)
	c.pendMu.Unlock()
	return hs
}

// closeImpl closes an implementation that is an io.Closer.
func closeImpl(impl any) {
	if cl, ok := impl.(io.Closer); ok {
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
	c.mu.Lock()
	p, ok := c.impl.(Periodic)
	var d time.Duration
	if ok {
		d = p.Period()
	}
	c.mu.Unlock()
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

// onTick runs one tick.
func (c *comp) onTick(now time.Time) {
	if !c.ch.enter() {
		return
	}
	defer c.ch.exit()
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.impl.(Periodic)
	if !ok || c.removed {
		return
	}
	c.withCause(func() {
		if c.npend.Load() != 0 {
			c.flushLocked()
		}
		defer c.recoverPanic()
		if err := p.Tick(now, c); err != nil {
			c.nErrors.Add(1)
		}
	})
}

// announce runs an Announcer; ch.mu is held and the chain is started.
func (c *comp) announce() {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.impl.(Announcer)
	if !ok || c.removed {
		return
	}
	c.withCause(func() {
		if c.npend.Load() != 0 {
			c.flushLocked()
		}
		defer c.recoverPanic()
		if err := a.Announce(c); err != nil {
			c.nErrors.Add(1)
		}
	})
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
