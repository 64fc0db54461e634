package mediation

// Replace makes component to take over every binding of component from, on
// the same port names, and every message from holds: the queues of its
// incoming bindings (which now feed to), its held messages (partial
// aggregation groups, retained messages, ...), which to processes before
// anything newer. from stays in the chain, unbound. The switch is lossless
// under load: no message is lost or duplicated and the order per source is
// kept, whatever the linkers.
//
// Both must exist (ErrNotFound) and be distinct and of the same kind, and to
// must have every bound port of from; otherwise, and when the result would
// contain a cycle (whatever its linkers) or a loop of direct bindings through
// an in-out adapter, it fails with ErrInvalid. It fails with
// ErrConflict when to already has one of the bindings it would take over.
// On error nothing changes.
func (ch *Chain) Replace(from, to string) error {
	if err := ch.lockChange(); err != nil {
		return err
	}
	defer ch.mu.Unlock()
	f, err := ch.find(from)
	if err != nil {
		return err
	}
	t, err := ch.find(to)
	if err != nil {
		return err
	}
	if f == t {
		return errorf(ErrInvalid, "cannot replace %s by itself", from)
	}
	if f.typ.Kind != t.typ.Kind {
		return errorf(ErrInvalid, "cannot replace %s %s by %s %s", f.typ.Kind, from, t.typ.Kind, to)
	}
	if err := ch.checkBoundPorts(f, t, t.in, t.out); err != nil {
		return err
	}
	sub := func(c *comp) *comp {
		if c == f {
			return t
		}
		return c
	}
	var edges []edge
	seen := map[string]bool{}
	for _, b := range ch.bindings {
		e := edge{from: sub(b.from), fromPort: b.fromPort, to: sub(b.target.Load()), toPort: b.toPort, direct: b.direct}
		k := e.key()
		if seen[k] {
			return errorf(ErrConflict, "%s already has the binding %s -> %s", to, e.from.id+":"+e.fromPort, e.to.id+":"+e.toPort)
		}
		seen[k] = true
		edges = append(edges, e)
	}
	if cyc := findCycle(edges); cyc != nil {
		return errorf(ErrInvalid, "replacing %s by %s would close the cycle %s", from, to, cycleString(cyc))
	}
	if loop := findDirectLoop(edges); loop != nil {
		return directLoopf("replacing %s by %s would close the loop %s of direct bindings through an in-out adapter, which would deadlock", from, to, cycleString(loop))
	}

	// Apply. Holding f exclusively, no message is being processed by f;
	// deliveries waiting for f re-read their binding's target once they
	// have it, and go to t. t is
	// made ready (out routes, handed-over messages) before any binding
	// targets it: a delivery that sees t as its target finds it complete.
	f.lock()
	held := f.takeHeldLocked() // before the topology changes: Drain may take its time
	ch.topoBegin()
	for _, b := range ch.bindings {
		if b.from == f {
			b.from = t
			b.source.Store(t)
		}
	}
	ch.rebuildRoutes(t)
	t.addPending(held)
	for _, b := range ch.bindings {
		if b.target.Load() == f {
			b.target.Store(t)
		}
	}
	ch.rebuildRoutes(f)
	ch.topoEnd()
	f.unlock()
	f.unbound() // it takes nothing in any more
	if ch.state.Load() == stStarted {
		t.flushNow()
		t.announce() // t has f's bindings, as if they were added
	}
	return nil
}
