package mediation

// Chain states, gates of stateless components, and the striped counters
// they are made of.
//
// Everything a message touches on its way must scale with the number of
// cores sending: a counter or a lock word written by every message, on one
// cache line, would make two cores take turns. So the counts written on the
// hot path are striped: each goroutine walking the chain holds a run (see
// send.go) taken from a sync.Pool, which is P-local in practice, and the run
// carries a stripe index; it adds to its own stripe, padded to its own cache
// lines, and readers sum the stripes. The sums are exact whenever nothing is
// in flight; while messages move they are a moment's view, as any counter
// read concurrently is.

import (
	"runtime"
	"sync"
	"sync/atomic"
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
var errNotStarted = errorf(ErrConflict, "chain is not started")

// stripePad is the size a stripe is padded to: two cache lines, so that the
// adjacent-line prefetcher does not pair two stripes either.
const stripePad = 128

// stripeCount returns how many stripes a striped count gets: twice
// GOMAXPROCS rounded up to a power of two, from 4 to 64.
func stripeCount() int {
	n := 4
	for n < 2*runtime.GOMAXPROCS(0) && n < 64 {
		n *= 2
	}
	return n
}

// stripeSeq numbers the runs, whose number picks their first stripe.
var stripeSeq atomic.Uint32

// bump tries to add one to x, the first count of r's stripe, as LongAdder
// does: when another goroutine changed x between the read and the
// compare-and-swap, which happens when two cores share the stripe, it adds
// nothing, moves r to the next stripe and reports false (the caller then
// adds there). So the runs in use on different cores end on different
// stripes, whatever numbers they were given.
func bump(x *atomic.Uint64, r *run) bool {
	v := x.Load()
	if x.CompareAndSwap(v, v+1) {
		return true
	}
	r.stripe++
	return false
}

// running reports whether the chain accepts new entries (Send, ticks).
func (ch *Chain) running() bool { return ch.state.Load() == stStarted }

// delivering reports whether links may deliver: the chain is started, or
// stopping (a link then finishes its current message).
func (ch *Chain) delivering() bool {
	s := ch.state.Load()
	return s == stStarted || s == stStopping
}

// compStripe is one stripe of a stateless component: its gate counts and
// its counters.
//
// enter counts the calls begun through this stripe (less those turned back
// before they processed anything). A call that ends adds, with one
// compare-and-swap, one to the low half of done (the calls ended: the In
// counter) and the messages it emitted to its high half (Out). Before
// either half reaches 2^32, 2^31 of it moves to endFold or outFold (after
// the swap), so the ended calls are endFold plus done's low half, read in
// that order, and the emitted messages outFold plus its high half. A call
// is in progress while the calls begun outnumber those ended.
type compStripe struct {
	enter   atomic.Uint64
	done    atomic.Uint64
	endFold atomic.Uint64
	outFold atomic.Uint64 // also takes what exclusive calls emit
	dropped atomic.Uint64
	errors  atomic.Uint64
	_       [stripePad - 48]byte
}

// fold is what moves from a half of done to its fold at a time.
const fold = 1 << 31

// end records the end of a call that emitted outs messages.
func (s *compStripe) end(outs uint64) {
	if outs >= fold {
		s.outFold.Add(outs)
		outs = 0
	}
	for {
		v := s.done.Load()
		n := v + 1 + outs<<32 // neither half carries: both stay below 2^31 + 2^31
		var ends, emits uint64
		if uint32(n) >= fold {
			n -= fold
			ends = fold
		}
		if n>>32 >= fold {
			n -= fold << 32
			emits = fold
		}
		if s.done.CompareAndSwap(v, n) {
			if ends != 0 {
				s.endFold.Add(ends)
			}
			if emits != 0 {
				s.outFold.Add(emits)
			}
			return
		}
	}
}

// ended returns the calls ended on s. It may miss 2^31 of them while a
// fold is under way (the swap is made before the fold is added, and the
// fold is read first), never count one too many.
func (s *compStripe) ended() uint64 {
	f := s.endFold.Load()
	return f + uint64(uint32(s.done.Load()))
}

// counts returns the calls ended and the messages emitted on s, exactly:
// it reads again when a fold moved between its reads.
func (s *compStripe) counts() (ended, emitted uint64) {
	for {
		ef, of := s.endFold.Load(), s.outFold.Load()
		d := s.done.Load()
		if s.endFold.Load() == ef && s.outFold.Load() == of {
			return ef + uint64(uint32(d)), of + d>>32
		}
	}
}

// gate lets the calls of Process and Inject of a stateless component run
// concurrently, and gives exclusive access to whoever holds comp.mu with the
// gate shut (reconfiguration, ticks, announcements, hand-over, snapshots of
// a Checker, Messages).
//
// A call adds one to its stripe's enter count and then reads shut; an
// exclusive holder stores shut and then counts the calls in progress. Both
// are sequentially consistent, so either the call sees shut (and turns back,
// waiting on comp.mu) or the holder counts the call (and waits for it to
// end: a call ending while shut is set signals wake). Neither side holds
// anything else while it waits for the other, so every wait ends.
type gate struct {
	shut    atomic.Bool   // an exclusive holder of comp.mu wants or has the component
	mask    uint32        // len(stripes)-1
	wake    chan struct{} // capacity 1: a call ended or turned back while shut
	stripes []compStripe
	_       [stripePad - 40]byte // read by every call: nothing else on its lines
}

func newGate() *gate {
	n := stripeCount()
	return &gate{mask: uint32(n - 1), wake: make(chan struct{}, 1), stripes: make([]compStripe, n)}
}

// signal wakes the exclusive holder waiting in close, if any.
func (g *gate) signal() {
	select {
	case g.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// busy reports whether a call may be in progress. Each stripe's ended
// calls are read before its calls begun, so a call in progress is never
// missed: a call ending between the two reads, or a fold, only makes it
// report one more (and the call that ended, or folded, then signals).
func (g *gate) busy() bool {
	var n uint64
	for i := range g.stripes {
		s := &g.stripes[i]
		x := s.ended()
		n += s.enter.Load() - x
	}
	return n != 0
}

// close shuts the gate and waits for the calls in progress; comp.mu is
// held. A stale wake-up left by an earlier holder only makes it count again.
func (g *gate) close() {
	g.shut.Store(true)
	for g.busy() {
		<-g.wake
	}
}

// counts sums the stripes: calls ended (In), emitted, dropped and failed.
func (g *gate) counts() (in, out, dropped, errs uint64) {
	for i := range g.stripes {
		s := &g.stripes[i]
		e, o := s.counts()
		in += e
		out += o
		dropped += s.dropped.Load()
		errs += s.errors.Load()
	}
	return
}

// lock takes c for exclusive use: no call of its implementation runs until
// unlock. For a stateful component that is c.mu; a stateless one also shuts
// its gate and waits for the calls in progress.
func (c *comp) lock() {
	c.mu.Lock()
	if c.g != nil {
		c.g.close()
	}
}

// unlock ends the exclusive use begun by lock (or a successful tryLock).
func (c *comp) unlock() {
	if c.g != nil {
		c.g.shut.Store(false)
	}
	c.mu.Unlock()
}

// tryLock is lock without waiting: it reports false when c is in use.
func (c *comp) tryLock() bool {
	if !c.mu.TryLock() {
		return false
	}
	if g := c.g; g != nil {
		g.shut.Store(true)
		if g.busy() {
			g.shut.Store(false)
			c.mu.Unlock()
			return false
		}
	}
	return true
}

// acquire takes c for one call of Process or Inject by r: exclusively
// (c.mu) for a stateful component, for which it returns nil; shared, for a
// stateless one, for which it returns r's stripe. End the call with release,
// or with turnBack when it processed nothing.
func (c *comp) acquire(r *run) *compStripe {
	g := c.g
	if g == nil {
		c.mu.Lock()
		return nil
	}
	s := &g.stripes[r.stripe&g.mask]
	bumped := bump(&s.enter, r)
	if bumped && !g.shut.Load() {
		return s // the common case (acquire is still past Go's inlining budget: see binding.deliver)
	}
	return c.acquireSlow(r, s, bumped)
}

// acquireSlow is acquire after a contended stripe (bumped false: r moved to
// another one) or with the gate shut.
func (c *comp) acquireSlow(r *run, s *compStripe, bumped bool) *compStripe {
	g := c.g
	if !bumped {
		s = &g.stripes[r.stripe&g.mask]
		s.enter.Add(1)
	}
	for {
		if !g.shut.Load() {
			return s
		}
		s.enter.Add(^uint64(0))
		g.signal()
		// Wait for the exclusive holder, which holds c.mu while shut is set.
		c.mu.Lock()
		c.mu.Unlock()
		s.enter.Add(1)
	}
}

// release ends a call begun with acquire, which emitted outs messages;
// for a stateless component the call counts as received (In) and outs as
// emitted (Out).
func (c *comp) release(s *compStripe, outs uint64) {
	if s == nil {
		c.mu.Unlock()
		return
	}
	s.end(outs)
	if c.g.shut.Load() {
		c.g.signal()
	}
}

// turnBack ends a call begun with acquire that processed nothing.
func (c *comp) turnBack(s *compStripe) {
	if s == nil {
		c.mu.Unlock()
		return
	}
	s.enter.Add(^uint64(0))
	if c.g.shut.Load() {
		c.g.signal()
	}
}

// ownStripe is the stripe r counts on while it holds c exclusively: nil for
// a stateful component (its counters are guarded by c.mu).
func (c *comp) ownStripe(r *run) *compStripe {
	if c.g == nil {
		return nil
	}
	return &c.g.stripes[r.stripe&c.g.mask]
}

// addDropped counts n dropped messages, on stripe s when not nil.
func (c *comp) addDropped(s *compStripe, n uint64) {
	if s != nil {
		s.dropped.Add(n)
		return
	}
	c.nDropped.Add(n)
}

// addError counts one failed call, on stripe s when not nil.
func (c *comp) addError(s *compStripe) {
	if s != nil {
		s.errors.Add(1)
		return
	}
	c.nErrors.Add(1)
}

// runPool holds the runs between entries. Being P-local in practice, it
// also keeps each core on its own stripes.
var runPool = sync.Pool{New: func() any { return &run{stripe: stripeSeq.Add(1) - 1} }}
