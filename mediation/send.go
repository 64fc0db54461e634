package mediation

// The send path: a message injected by Chain.Send (or emitted by a tick, an
// announcement or a queue delivery) runs through the components along
// direct bindings on the same goroutine and through queue bindings on
// theirs. Each component is taken for the call (acquire, gate.go): a
// stateful one exclusively, a stateless one through its gate, shared with
// other senders. Nothing on this path waits but for those: a queue takes
// what it is given (up to its hard limit), and the only wait, for room in
// the queues ahead, happens in Chain.Send before anything is taken. Every
// delivery spends one unit of the budget of the message that caused it, so
// that no message can cause an unbounded amount of work.
//
// The goroutine carries a run: the budget, the component it is inside of
// (the run is the Emitter given to the implementation, which makes a call
// allocate nothing), and the stripe it counts on. A direct delivery saves
// the run's frame, runs the target, and restores it.

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
)

// DefaultSendTimeout is how long Chain.Send waits by default for room in
// the queues ahead of its message (Config.SendTimeout).
const DefaultSendTimeout = 2 * time.Second

// DefaultMaxDeliveries is how many deliveries one injected message, tick or
// announcement may cause by default (Config.MaxDeliveries).
const DefaultMaxDeliveries = 100_000

// cause is the budget of the deliveries that one message entering the chain
// (through Send, a tick or an announcement) may cause, and the first bound
// its deliveries reached. It travels with the messages it causes, through
// queues too.
//
// While only the goroutine that made it uses it, left is spent with plain
// arithmetic; once a queue holds a message it caused (or a context may end
// it), shared is set, by that goroutine and before anyone else can see the
// cause, and left is then spent atomically. A shared cause is not reused.
type cause struct {
	left   int64 // atomic once shared
	limit  int64
	err    atomic.Pointer[error]
	shared atomic.Bool
	_      [36]byte // 64 bytes: written by every delivery, on a line of its own
}

// reset makes c a fresh budget of limit deliveries; nobody else uses c.
func (c *cause) reset(limit int) {
	c.left, c.limit = int64(limit), int64(limit)
	if c.err.Load() != nil {
		c.err.Store(nil)
	}
}

// share marks c as used by other goroutines from now on.
func (c *cause) share() {
	if !c.shared.Load() {
		c.shared.Store(true)
	}
}

// spend takes one delivery from the budget and reports whether it was left.
func (c *cause) spend() bool {
	if !c.shared.Load() {
		c.left--
		return c.left >= 0
	}
	return atomic.AddInt64(&c.left, -1) >= 0
}

// fail records err as the bound this cause reached, unless one was already.
func (c *cause) fail(err error) { c.err.CompareAndSwap(nil, &err) }

// failure returns the first bound reached, or nil.
func (c *cause) failure() error {
	if p := c.err.Load(); p != nil {
		return *p
	}
	return nil
}

// frame is what a run is doing inside one component: the component, the
// stripe it counts on (nil for a stateful one) and the messages it emitted
// there so far (added to the stripe when the call ends), and, for an in-out
// adapter inside Process, that its emits are dropped.
type frame struct {
	c          *comp
	s          *compStripe
	outs       uint64
	processing bool
}

// run is one goroutine's walk through a chain, from one entry: the budget
// of what it causes, its current frame, and its stripe. It is the Emitter
// given to the implementations it calls. A run is used by one goroutine at
// a time and is not safe for concurrent use.
type run struct {
	frame
	cz     *cause
	stripe uint32
	spare  *cause // the cause of an earlier entry, not shared: reused
	// The properties of the message a queue delivers, and what the queue
	// counted for them (mapSize), while the components it reaches forward
	// them untouched: their map's address (compared only, while the
	// message is alive; 0: none) and size. See propsSize.
	in     uintptr
	inSize int
	// The address of the properties map the run's current message shares
	// with other messages (an enricher's, see enricher.shared), while it
	// travels along direct bindings and queues on which nobody has written
	// to it; 0: none. Set by whoever hands such a message on (the
	// enricher, a queue's delivery) and restored when the call that set it
	// returns. A component that may write to the map or keep it gets a
	// copy of its own (comp.call), as do links (fanout); rest-out, which
	// keeps it without writing to it, copies it when it hands it over
	// (takeHeldLocked).
	shared uintptr
	_      [stripePad - 80]byte // written by every delivery: nothing else on its lines
}

// A run fills exactly stripePad bytes: these fail to compile when a field
// added to it makes its padding above wrong.
var (
	_ [stripePad - unsafe.Sizeof(run{})]byte
	_ [unsafe.Sizeof(run{}) - stripePad]byte
)

// ownCopy returns a copy of a map of properties that messages share
// (run.shared), for a component or a link that may write to it or keep
// it, and for what rest-out hands over. Such a map holds none of the
// kinds Message.Clone copies (see enricher.shared), so a copy of the map
// alone is a deep one.
func ownCopy(p map[string]any) map[string]any { return maps.Clone(p) }

// newRun returns a run, from the pool, with a budget of limit deliveries.
func newRun(limit int) *run {
	r := runPool.Get().(*run)
	cz := r.spare
	if cz == nil {
		cz = new(cause)
	}
	r.spare = nil
	cz.reset(limit)
	r.cz = cz
	return r
}

// release returns r to the pool, keeping its cause for reuse unless it is
// shared.
func (r *run) release() {
	if cz := r.cz; cz != nil && !cz.shared.Load() {
		r.spare = cz
	}
	r.cz, r.frame, r.in, r.shared = nil, frame{}, 0, 0
	runPool.Put(r)
}

// Emit implements Emitter for the implementation of the run's component.
func (r *run) Emit(port string, m Message) {
	c := r.c
	if r.processing { // an in-out adapter passes nothing from its in side to its out side
		c.addDropped(r.s, 1)
		return
	}
	if rs := c.routes.Load(); rs != nil {
		for i := range *rs {
			if rt := &(*rs)[i]; rt.port == port {
				if r.s != nil {
					r.outs++
				} else {
					c.nOut++
				}
				r.fanout(rt.bs, m)
				return
			}
		}
	}
	c.addDropped(r.s, 1)
}

// bound reports whether Emit on port would reach a binding (Bound).
func (r *run) bound(port string) bool {
	if r.processing || r.c == nil {
		return false
	}
	if rs := r.c.routes.Load(); rs != nil {
		for i := range *rs {
			if rt := &(*rs)[i]; rt.port == port {
				return len(rt.bs) > 0
			}
		}
	}
	return false
}

// Drop implements Emitter.
func (r *run) Drop(n int) {
	if n > 0 {
		r.c.addDropped(r.s, uint64(n))
	}
}

// exhausted is the error of a spent budget.
func (c *cause) exhausted(ch *Chain) error {
	return errorf(ErrBusy, "chain %s: one message caused more than %d deliveries (the engine's MaxDeliveries; the server's -max-deliveries); the rest were dropped", ch.id, c.limit)
}

// Send injects m into the chain through component id, as SendContext does,
// waiting at most the engine's SendTimeout for room in the queues ahead.
func (ch *Chain) Send(id string, m Message) error {
	return ch.SendContext(context.Background(), id, m)
}

// SendContext injects m into the chain through component id, which must
// accept injection (implement Injector, as rest-in does), and returns once
// the message has been processed as far as direct bindings carry it.
// SendContext takes ownership of m. Several goroutines may send
// concurrently; messages from one goroutine keep their order.
//
// Before it takes m in, SendContext waits, holding no lock, while a queue
// binding that m may reach is full (backpressure); when ctx ends first, or
// the engine's SendTimeout passes, it fails with ErrBusy and m is not taken.
// When ctx ends while m is being processed, what m causes from then on is
// dropped. It also fails with ErrBusy when m caused more deliveries than
// the engine's MaxDeliveries or a component it reached refused it for a
// bound (then what was done stays done and the rest is dropped); with
// ErrNotFound for an unknown component, ErrInvalid when the component does
// not accept injection (or its injection fails), and ErrConflict when the
// chain is not started.
func (ch *Chain) SendContext(ctx context.Context, id string, m Message) error {
	return ch.send(ctx, id, m, true)
}

// TrySend is Send without the wait: when a queue ahead of the message is
// full, it fails with ErrBusy at once, m is not taken, and it is counted as
// dropped by component id (the sources that use TrySend, such as the
// readings of a simulated device, must not be held up and do not try
// again: the message is lost, and the counter shows it).
func (ch *Chain) TrySend(id string, m Message) error {
	return ch.send(context.Background(), id, m, false)
}

func (ch *Chain) send(ctx context.Context, id string, m Message, wait bool) error {
	if ch.deleted.Load() {
		return NotTaken(ch.gone())
	}
	c, err := ch.find(id)
	if err != nil {
		return NotTaken(err)
	}
	if !c.injectable.Load() {
		return NotTaken(errorf(ErrInvalid, "component %s (%s) does not accept messages", id, c.typ.Name))
	}
	if ch.state.Load() != stStarted {
		return NotTaken(errorf(ErrConflict, "chain %s is not started", ch.id))
	}
	if err := ch.admit(ctx, c, wait); err != nil {
		if !wait {
			c.nDropped.Add(1)
		}
		return NotTaken(err)
	}
	r := newRun(ch.eng.maxDeliveries)
	defer r.release()
	cz := r.cz
	if ctx.Done() != nil {
		// A client gone mid-send: what the message causes from now on is
		// dropped. The cause is shared (not reused): the callback may run
		// late, on its own goroutine.
		cz.share()
		stop := context.AfterFunc(ctx, func() {
			atomic.StoreInt64(&cz.left, math.MinInt64/2)
			cz.fail(errorf(ErrBusy, "chain %s: the sender went away: %v", ch.id, context.Cause(ctx)))
		})
		defer stop()
	}
	for {
		s := c.acquire(r)
		switch {
		case c.removed:
			err = errorf(ErrNotFound, "no component %q in chain %s", id, ch.id)
		case c.inj == nil:
			err = errorf(ErrInvalid, "component %s (%s) does not accept messages", id, c.typ.Name)
		case !ch.running():
			// Checked holding c: Stop waits for the Sends that found the
			// chain started (see stopLocked).
			err = errorf(ErrConflict, "chain %s is not started", ch.id)
		case s != nil && c.npend.Load() != 0:
			c.turnBack(s)
			c.flushPending(r)
			continue
		default:
			outs, ierr := c.inject(m, r, s)
			if ierr != nil {
				switch {
				case errors.Is(ierr, ErrBusy):
					err = ierr
				case errors.Is(ierr, ErrNotTaken):
					err = NotTaken(errorf(ErrInvalid, "component %s rejected the message: %v", id, ierr))
				default:
					err = errorf(ErrInvalid, "component %s rejected the message: %v", id, ierr)
				}
			}
			c.release(s, outs)
			if err == nil {
				err = cz.failure()
			}
			return err
		}
		c.turnBack(s)
		return NotTaken(err)
	}
}

// admit waits until every queue that a message injected at c may reach has
// room, holding no lock. It gives up with ErrBusy when ctx ends or the
// engine's SendTimeout passes, or at once when wait is false.
//
// The check that finds room (every message, nearly always) is kept apart
// from the wait (waitRoom), so that it has no deferred call: a function
// with a defer in a loop pays for a run through the defer machinery at
// every return, about 3 % of a direct chain's message.
func (ch *Chain) admit(ctx context.Context, c *comp, mayWait bool) error {
	ahead := ch.queuesAhead(c)
	for _, b := range ahead {
		if b.bp.Room() != nil {
			return ch.waitRoom(ctx, ahead, mayWait)
		}
	}
	return nil
}

// waitRoom is admit once a queue ahead was found full.
func (ch *Chain) waitRoom(ctx context.Context, ahead []*binding, mayWait bool) error {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		var wait <-chan struct{}
		var full *binding
		for _, b := range ahead {
			if w := b.bp.Room(); w != nil {
				wait, full = w, b
				break
			}
		}
		if wait == nil {
			return nil
		}
		busy := func(why string) error {
			return errorf(ErrBusy, "chain %s: the queue %s -> %s stays full (%d messages wait); %s", ch.id,
				full.source.Load().id+":"+full.fromPort, full.target.Load().id+":"+full.toPort, full.link.Len(), why)
		}
		if !mayWait {
			return busy("try again later")
		}
		if timer == nil {
			timer = time.NewTimer(ch.eng.sendTimeout)
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return busy("the sender stopped waiting")
		case <-timer.C:
			return busy(fmt.Sprintf("gave up after %v; try again later", ch.eng.sendTimeout))
		}
	}
}

// ahead caches the queue bindings reachable from a component, for one
// version of the chain's topology.
type ahead struct {
	gen uint64
	bs  []*binding
}

// queuesAhead returns the bindings with backpressure that a message leaving
// c may reach, following every binding from c on.
func (ch *Chain) queuesAhead(c *comp) []*binding {
	for {
		gen := ch.topo.Load()
		if gen&1 != 0 {
			runtime.Gosched() // a change under way, of a few pointers
			continue
		}
		if a := c.ahead.Load(); a != nil && a.gen == gen {
			return a.bs
		}
		bs := ch.walkQueues(c)
		if ch.topo.Load() == gen { // no change began meanwhile: bs is whole
			c.ahead.Store(&ahead{gen: gen, bs: bs})
			return bs
		}
	}
}

// walkQueues returns the queue bindings reachable from c.
func (ch *Chain) walkQueues(c *comp) []*binding {
	var bs []*binding
	for b := range downstream(c, func(*binding) bool { return true }) {
		if b.bp != nil {
			bs = append(bs, b)
		}
	}
	return bs
}

// downstream yields the bindings that lead on from c, depth first, each
// once: those of c's out routes for which follow is true, then, from each
// component they reach (once), the same. The chain's topology must not
// change meanwhile (ch.mu held, or a reader that checks its generation).
func downstream(c *comp, follow func(b *binding) bool) iter.Seq[*binding] {
	return func(yield func(*binding) bool) {
		seen := map[*comp]bool{c: true}
		stack := []*comp{c}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, r := range *x.routes.Load() {
				for _, b := range r.bs {
					if !follow(b) {
						continue
					}
					if !yield(b) {
						return
					}
					if t := b.target.Load(); !seen[t] {
						seen[t] = true
						stack = append(stack, t)
					}
				}
			}
		}
	}
}

// Messages returns a copy of the messages retained by component id (which
// must implement Retainer, as rest-out does), oldest first, then those
// handed over to it (by Replace or UpdateProperties) that it has not
// processed yet (a stopped chain processes them at its next Start; a
// rest-out shows what it will keep of them, within its capacity). It
// fails with ErrNotFound for an unknown component and ErrInvalid for one
// that retains nothing (or whose Retained panics, counted as an error). It
// works whatever the chain's state.
func (ch *Chain) Messages(id string) ([]Message, error) {
	if ch.deleted.Load() {
		return nil, ch.gone()
	}
	c, err := ch.find(id)
	if err != nil {
		return nil, err
	}
	c.lock()
	defer c.unlock()
	r, ok := c.impl.(Retainer)
	if !ok || c.removed {
		if c.removed {
			return nil, errorf(ErrNotFound, "no component %q in chain %s", id, ch.id)
		}
		return nil, errorf(ErrInvalid, "component %s (%s) retains no messages", id, c.typ.Name)
	}
	ms, err := c.retained(r)
	if err != nil {
		return nil, err
	}
	c.pendMu.Lock()
	pending := c.pending
	c.pendMu.Unlock()
	if len(pending) > 0 {
		if p, ok := c.impl.(previewer); ok {
			ms = p.preview(pending)
		} else {
			for _, h := range pending {
				ms = append(ms, h.Message)
			}
		}
	}
	out := make([]Message, len(ms))
	for i, m := range ms {
		out[i] = m.Clone()
	}
	return out, nil
}

// previewer is a Retainer that tells what it will retain once it has
// processed messages handed over to it (rest-out: within its capacity).
type previewer interface {
	preview(pending []Held) []Message
}

// fanout hands m to every binding, a copy to each but the last; r's frame
// is the emitting component's.
//
// When m's properties are shared (run.shared), a direct delivery carries
// the mark on the run (each call leaves it as it found it: comp.call), a
// queue keeps it with the message, and any other link gets a copy.
func (r *run) fanout(bs []*binding, m Message) {
	c, s, cz := r.c, r.s, r.cz
	sh := r.shared
	last := len(bs) - 1
	ps := -2 // m's propsSize once a queue needs it (a copy's is the same)
	for i, b := range bs {
		mm := m
		if i < last {
			mm = m.Clone()
		}
		var err error
		switch {
		case b.direct:
			b.deliver(mm, r)
			continue
		case b.queue != nil:
			if ps == -2 {
				ps = r.propsSize(m)
			}
			err = b.queue.push(mm, cz, ps, sh != 0 && mapAddr(mm.Properties) == sh)
		default:
			if sh != 0 && mapAddr(mm.Properties) == sh {
				mm.Properties = ownCopy(mm.Properties) // a link is code of anyone's
			}
			err = b.link.Send(mm)
		}
		if err != nil {
			c.addDropped(s, 1)
			if errors.Is(err, ErrBusy) {
				cz.fail(errorf(ErrBusy, "chain %s: %s -> %s: %v", c.ch.id, c.id+":"+b.fromPort, b.target.Load().id+":"+b.toPort, err))
			}
		}
	}
}

// propsSize returns mapSize(m.Properties) when it is known without walking
// them, else -1: none, or those of the message a queue delivers, still in
// the same map, when every component that it went through since handles
// properties in a way that keeps r.in true (Type.props). A queue counts the
// bytes of every message it holds (max-bytes); walking the same properties
// at each queue of a chain was an eighth of a queued message's cost.
func (r *run) propsSize(m Message) int {
	if m.Properties == nil {
		return 0
	}
	if r.in != 0 && mapAddr(m.Properties) == r.in {
		return r.inSize
	}
	return -1
}

// mapAddr returns the address of map p (0 for nil), for identity.
func mapAddr(p map[string]any) uintptr { return uintptr(*(*unsafe.Pointer)(unsafe.Pointer(&p))) }

// Receive implements Receiver for the binding's link: a delivery with a
// budget of its own.
func (b *binding) Receive(m Message) error {
	if !b.ch.delivering() {
		return errNotStarted
	}
	r := newRun(b.ch.eng.maxDeliveries)
	b.deliver(m, r)
	r.release()
	return nil
}

// Drop implements Dropper: n messages the binding's link lost are counted
// as dropped by its current target.
func (b *binding) Drop(n int) {
	if n > 0 {
		b.target.Load().nDropped.Add(uint64(n))
	}
}

// receiveBatch delivers the messages of a queue link q, in order, each with
// the budget of the message that caused it (a fresh one for a message the
// engine did not queue), on the link's run r, telling q of each (q.deliveredOne).
// It stops early, after a delivery, when q says so (q.next). It delivers
// nothing and fails when the chain is neither started nor stopping.
func (b *binding) receiveBatch(r *run, items batch, q *queueLink) error {
	if !b.ch.delivering() {
		return errNotStarted
	}
	for i := range items.k {
		if !q.next(i) {
			break
		}
		it := items.at(i)
		cz := it.c
		if cz == nil {
			cz = new(cause)
			cz.reset(b.ch.eng.maxDeliveries)
		}
		r.cz = cz
		r.in, r.inSize = mapAddr(it.m.Properties), it.psize
		r.shared = 0
		if it.shared {
			r.shared = r.in
		}
		b.deliver(it.m, r)
		q.deliveredOne()
	}
	r.cz, r.in, r.shared = nil, 0, 0
	return nil
}

// deliver processes m, with r's budget, in the binding's current target,
// following a concurrent Replace: the target is re-read once it is held.
// A delivery past the budget is dropped.
func (b *binding) deliver(m Message, r *run) {
	if !r.cz.spend() {
		b.target.Load().nDropped.Add(1)
		r.cz.fail(r.cz.exhausted(b.ch))
		return
	}
	t := b.target.Load()
	if g := t.g; g != nil {
		// The common case of a stateless target in one piece, without the
		// calls of acquire, process and release (what they do for a
		// stateless target, in the same order): r counted on its stripe,
		// the gate open, the binding's target unchanged and live, nothing
		// handed over. Anything else goes the general way below. The calls
		// saved are about 8 % of a single sender's chain of five.
		s := &g.stripes[r.stripe&g.mask]
		if bump(&s.enter, r) {
			// The general path's checks, in its order: the gate open (no
			// Replace, UpdateProperties, Stop or removal under way), the
			// binding still pointing at t and live, t not removed, and no
			// message handed over to t waiting to be processed first.
			if !g.shut.Load() && b.target.Load() == t && !b.dead.Load() && !t.removed && t.npend.Load() == 0 {
				saved := r.frame
				r.frame = frame{c: t, s: s}
				t.call(b.toPort, m, r)
				outs := r.outs
				r.frame = saved
				s.end(outs)
				if g.shut.Load() {
					g.signal()
				}
				return
			}
			t.turnBack(s) // and the general case below
		}
	}
	for {
		s := t.acquire(r)
		if u := b.target.Load(); u != t {
			t.turnBack(s)
			t = u
			continue
		}
		if b.dead.Load() || t.removed {
			t.turnBack(s)
			t.nDropped.Add(1)
			return
		}
		if s != nil && t.npend.Load() != 0 {
			// Handed-over messages first, processed with t held
			// exclusively (a stateful t does it in process).
			t.turnBack(s)
			t.flushPending(r)
			continue
		}
		t.release(s, t.process(b.toPort, m, r, s))
		return
	}
}
