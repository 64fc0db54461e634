package mediation

// The send path: a message injected by Chain.Send (or emitted by a tick, an
// announcement or a queue delivery) runs through the components, each under
// its own lock, along direct bindings on the same goroutine and through
// queue bindings on theirs. Nothing on this path waits: a queue takes what
// it is given (up to its hard limit), and the only wait, for room in the
// queues ahead, happens in Chain.Send before any lock is taken. Every
// delivery spends one unit of the budget of the message that caused it, so
// that no message can cause an unbounded amount of work.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
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
type cause struct {
	left     atomic.Int64
	limit    int64
	err      atomic.Pointer[error]
	retained atomic.Bool // a queue holds a message it caused: not reusable
}

var causePool = sync.Pool{New: func() any { return new(cause) }}

// newCause returns a budget of limit deliveries.
func newCause(limit int) *cause {
	c := causePool.Get().(*cause)
	c.left.Store(int64(limit))
	c.limit = int64(limit)
	c.err.Store(nil)
	c.retained.Store(false)
	return c
}

// release returns c to the pool unless a queue still holds a message it
// caused.
func (c *cause) release() {
	if !c.retained.Load() {
		causePool.Put(c)
	}
}

// spend takes one delivery from the budget and reports whether it was left.
func (c *cause) spend() bool { return c.left.Add(-1) >= 0 }

// fail records err as the bound this cause reached, unless one was already.
func (c *cause) fail(err error) { c.err.CompareAndSwap(nil, &err) }

// failure returns the first bound reached, or nil.
func (c *cause) failure() error {
	if p := c.err.Load(); p != nil {
		return *p
	}
	return nil
}

// exhausted is the error of a spent budget.
func (c *cause) exhausted(ch *Chain) error {
	return errorf(ErrBusy, "chain %s: one message caused more than %d deliveries (the engine's MaxDeliveries); the rest were dropped", ch.id, c.limit)
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
// full, it fails with ErrBusy at once and m is not taken. Sources that must
// not be held up, such as the readings of a simulated device, use it.
func (ch *Chain) TrySend(id string, m Message) error {
	return ch.send(context.Background(), id, m, false)
}

func (ch *Chain) send(ctx context.Context, id string, m Message, wait bool) error {
	if ch.deleted.Load() {
		return ch.gone()
	}
	c, err := ch.find(id)
	if err != nil {
		return err
	}
	if !c.injectable.Load() {
		return errorf(ErrInvalid, "component %s (%s) does not accept messages", id, c.typ.Name)
	}
	if ch.state.Load() != stStarted {
		return errorf(ErrConflict, "chain %s is not started", ch.id)
	}
	if err := ch.admit(ctx, c, wait); err != nil {
		return err
	}
	if !ch.enter() {
		return errorf(ErrConflict, "chain %s is not started", ch.id)
	}
	cz := newCause(ch.eng.maxDeliveries)
	reusable := true
	if ctx.Done() != nil {
		// A client gone mid-send: what the message causes from now on is
		// dropped. The cause is not reused: the callback may run late.
		reusable = false
		stop := context.AfterFunc(ctx, func() {
			cz.left.Store(math.MinInt64 / 2)
			cz.fail(errorf(ErrBusy, "chain %s: the sender went away: %v", ch.id, context.Cause(ctx)))
		})
		defer stop()
	}
	c.mu.Lock()
	switch {
	case c.removed:
		err = errorf(ErrNotFound, "no component %q in chain %s", id, ch.id)
	case c.inj == nil:
		err = errorf(ErrInvalid, "component %s (%s) does not accept messages", id, c.typ.Name)
	default:
		if ierr := c.inject(m, cz); ierr != nil {
			if errors.Is(ierr, ErrBusy) {
				err = ierr
			} else {
				err = errorf(ErrInvalid, "component %s rejected the message: %v", id, ierr)
			}
		}
	}
	c.mu.Unlock()
	ch.exit()
	if err == nil {
		err = cz.failure()
	}
	if reusable {
		cz.release()
	}
	return err
}

// admit waits until every queue that a message injected at c may reach has
// room, holding no lock. It gives up with ErrBusy when ctx ends or the
// engine's SendTimeout passes, or at once when wait is false.
func (ch *Chain) admit(ctx context.Context, c *comp, mayWait bool) error {
	ahead := ch.queuesAhead(c)
	if len(ahead) == 0 {
		return nil
	}
	var timer *time.Timer
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
				full.from.id+":"+full.fromPort, full.target.Load().id+":"+full.toPort, full.link.Len(), why)
		}
		if !mayWait {
			return busy("try again later")
		}
		if timer == nil {
			timer = time.NewTimer(ch.eng.sendTimeout)
			defer timer.Stop()
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
	gen := ch.topo.Load()
	if a := c.ahead.Load(); a != nil && a.gen == gen {
		return a.bs
	}
	var bs []*binding
	seen := map[*comp]bool{c: true}
	stack := []*comp{c}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, r := range *x.routes.Load() {
			for _, b := range r.bs {
				if b.bp != nil && !slices.Contains(bs, b) {
					bs = append(bs, b)
				}
				if t := b.target.Load(); !seen[t] {
					seen[t] = true
					stack = append(stack, t)
				}
			}
		}
	}
	c.ahead.Store(&ahead{gen: gen, bs: bs})
	return bs
}

// Messages returns a copy of the messages retained by component id (which
// must implement Retainer, as rest-out does), oldest first. It fails with
// ErrNotFound for an unknown component and ErrInvalid for one that retains
// nothing. It works whatever the chain's state.
func (ch *Chain) Messages(id string) ([]Message, error) {
	if ch.deleted.Load() {
		return nil, ch.gone()
	}
	c, err := ch.find(id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.impl.(Retainer)
	if !ok || c.removed {
		if c.removed {
			return nil, errorf(ErrNotFound, "no component %q in chain %s", id, ch.id)
		}
		return nil, errorf(ErrInvalid, "component %s (%s) retains no messages", id, c.typ.Name)
	}
	ms := r.Retained()
	out := make([]Message, len(ms))
	for i, m := range ms {
		out[i] = m.Clone()
	}
	return out, nil
}

// fanout hands m to every binding, a copy to each but the last; c.mu is
// held and c.cur is the cause of what c is doing.
func (c *comp) fanout(bs []*binding, m Message) {
	cz := c.cur
	last := len(bs) - 1
	for i, b := range bs {
		mm := m
		if i < last {
			mm = m.Clone()
		}
		var err error
		switch {
		case b.direct:
			b.deliver(mm, cz)
			continue
		case b.queue != nil:
			err = b.queue.push(mm, cz)
		default:
			err = b.link.Send(mm)
		}
		if err != nil {
			c.nDropped.Add(1)
			if errors.Is(err, ErrBusy) {
				cz.fail(errorf(ErrBusy, "chain %s: %s -> %s: %v", c.ch.id, c.id+":"+b.fromPort, b.target.Load().id+":"+b.toPort, err))
			}
		}
	}
}

// Receive implements Receiver for the binding's link: a delivery with a
// budget of its own.
func (b *binding) Receive(m Message) error {
	cz := newCause(b.ch.eng.maxDeliveries)
	err := b.receive(m, cz)
	cz.release()
	return err
}

// receive delivers m, caused by cz, from the binding's link.
func (b *binding) receive(m Message, cz *cause) error {
	if !b.ch.enterLink() {
		return errNotStarted
	}
	if cz == nil {
		cz = newCause(b.ch.eng.maxDeliveries)
		defer cz.release()
	}
	b.deliver(m, cz)
	b.ch.exit()
	return nil
}

// deliver processes m, caused by cz, in the binding's current target,
// following a concurrent Replace: the target is re-read once its lock is
// held. A delivery past cz's budget is dropped.
func (b *binding) deliver(m Message, cz *cause) {
	if !cz.spend() {
		b.target.Load().nDropped.Add(1)
		cz.fail(cz.exhausted(b.ch))
		return
	}
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
	t.deliverLocked(b.toPort, m, cz)
	t.mu.Unlock()
}
