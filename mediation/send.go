package mediation

import "fmt"

// Send injects m into the chain through component id, which must accept
// injection (implement Injector, as rest-in does), and returns once the
// message has been processed as far as direct bindings carry it. Send takes
// ownership of m. Several goroutines may Send concurrently; messages from
// one goroutine keep their order. Send blocks while a queue binding on the
// way is full (backpressure). It fails with ErrNotFound for an unknown
// component, ErrInvalid when the component does not accept injection (or
// its injection fails), and ErrConflict when the chain is not started.
func (ch *Chain) Send(id string, m Message) error {
	if ch.deleted.Load() {
		return ch.gone()
	}
	c, err := ch.find(id)
	if err != nil {
		return err
	}
	if !c.injectable.Load() {
		return fmt.Errorf("%w: component %s (%s) does not accept messages", ErrInvalid, id, c.typ.Name)
	}
	if !ch.enter() {
		return fmt.Errorf("%w: chain %s is not started", ErrConflict, ch.id)
	}
	c.mu.Lock()
	switch {
	case c.removed:
		err = fmt.Errorf("%w: no component %q in chain %s", ErrNotFound, id, ch.id)
	case c.inj == nil:
		err = fmt.Errorf("%w: component %s (%s) does not accept messages", ErrInvalid, id, c.typ.Name)
	default:
		if ierr := c.inject(m); ierr != nil {
			err = fmt.Errorf("%w: component %s rejected the message: %v", ErrInvalid, id, ierr)
		}
	}
	c.mu.Unlock()
	ch.exit()
	return err
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
			return nil, fmt.Errorf("%w: no component %q in chain %s", ErrNotFound, id, ch.id)
		}
		return nil, fmt.Errorf("%w: component %s (%s) retains no messages", ErrInvalid, id, c.typ.Name)
	}
	ms := r.Retained()
	out := make([]Message, len(ms))
	for i, m := range ms {
		out[i] = m.Clone()
	}
	return out, nil
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
