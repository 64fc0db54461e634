package mediation

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Chain states, as reported by Chain.State and ChainInfo.State.
const (
	// StateIdle is the state of a chain that was never started.
	StateIdle = "idle"
	// StateStarted is the state of a running chain.
	StateStarted = "started"
	// StateStopped is the state of a chain stopped after (or instead of)
	// running; it keeps its components, bindings and held messages.
	StateStopped = "stopped"
)

// Internal chain states.
const (
	stIdle int32 = iota
	stStarted
	stStopping // Stop in progress: entries refused, links finish their current message
	stStopped
)

// errNotStarted is returned to links and senders when the chain does not run.
var errNotStarted = fmt.Errorf("%w: chain is not started", ErrConflict)

// enter registers an entry point (Chain.Send, a tick) into the chain. It
// fails unless the chain is started. A successful enter must be paired with
// exit. Entries nest freely.
func (ch *Chain) enter() bool {
	ch.active.Add(1)
	if ch.state.Load() != stStarted {
		ch.exit()
		return false
	}
	return true
}

// enterLink is enter for link deliveries, which are still accepted while the
// chain is stopping (the link is then finishing its current message).
func (ch *Chain) enterLink() bool {
	ch.active.Add(1)
	if s := ch.state.Load(); s != stStarted && s != stStopping {
		ch.exit()
		return false
	}
	return true
}

// exit ends an entry; the last one out wakes a waiting Stop.
func (ch *Chain) exit() {
	if ch.active.Add(-1) == 0 && ch.state.Load() != stStarted {
		ch.gateMu.Lock()
		ch.gateCond.Broadcast()
		ch.gateMu.Unlock()
	}
}

// waitIdle waits until no entry is in progress. The state must not be
// stStarted.
func (ch *Chain) waitIdle() {
	ch.gateMu.Lock()
	for ch.active.Load() != 0 {
		ch.gateCond.Wait()
	}
	ch.gateMu.Unlock()
}

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

	nIn, nOut         uint64 // guarded by mu (they only change while the implementation runs)
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

// fanout hands m to every binding, a copy to each but the last.
func (c *comp) fanout(bs []*binding, m Message) {
	last := len(bs) - 1
	for i, b := range bs {
		mm := m
		if i < last {
			mm = m.Clone()
		}
		if b.direct {
			b.deliver(mm)
		} else if err := b.link.Send(mm); err != nil {
			c.nDropped.Add(1)
		}
	}
}

// deliverLocked processes a message that arrived on port; c.mu is held.
func (c *comp) deliverLocked(port string, m Message) {
	if c.npend.Load() != 0 {
		c.flushLocked()
	}
	c.nIn++
	c.run(port, m)
}

// run calls the processor, counting errors and recovering panics.
func (c *comp) run(port string, m Message) {
	if c.proc == nil {
		c.nDropped.Add(1)
		return
	}
	defer c.recoverPanic()
	if err := c.proc.Process(port, m, c); err != nil {
		c.nErrors.Add(1)
	}
}

func (c *comp) recoverPanic() {
	if r := recover(); r != nil {
		c.nErrors.Add(1)
	}
}

// inject runs the Injector; c.mu is held.
func (c *comp) inject(m Message) (err error) {
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

// flushLocked processes the pending messages; c.mu is held.
func (c *comp) flushLocked() {
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
	direct bool // link is a *directLink: deliver inline
	dead   atomic.Bool
}

// Receive implements Receiver for the binding's link.
func (b *binding) Receive(m Message) error {
	if !b.ch.enterLink() {
		return errNotStarted
	}
	b.deliver(m)
	b.ch.exit()
	return nil
}

// deliver processes m in the binding's current target, following a
// concurrent Replace: the target is re-read once its lock is held.
func (b *binding) deliver(m Message) {
	t := b.target.Load()
	t.mu.Lock()
	for u := b.target.Load(); u != t; u = b.target.Load() {
		t.mu.Unlock()
		t = u
		t.mu.Lock()
	}
	if b.dead.Load() || t.removed {
		t.mu.Unlock()
		t.nDropped.Add(1)
		return
	}
	t.deliverLocked(b.toPort, m)
	t.mu.Unlock()
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
	if c.npend.Load() != 0 {
		c.flushLocked()
	}
	defer c.recoverPanic()
	if err := p.Tick(now, c); err != nil {
		c.nErrors.Add(1)
	}
}

// announce runs an Announcer; ch.mu is held and the chain is started.
func (c *comp) announce() {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.impl.(Announcer)
	if !ok || c.removed {
		return
	}
	if c.npend.Load() != 0 {
		c.flushLocked()
	}
	defer c.recoverPanic()
	if err := a.Announce(c); err != nil {
		c.nErrors.Add(1)
	}
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
