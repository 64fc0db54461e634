package mediation

import "time"

// Identity is what tells a component from another of the same id made at
// another time: its UUID and creation time, as ComponentInfo shows them.
// A store that restores chains keeps them, so that a restored component is
// the same one (Engine.Identities, Chain.SetIdentity). Identity is a plain
// value, safe for concurrent use as long as nobody modifies it.
type Identity struct {
	Chain   string    `json:"chain"`
	ID      string    `json:"id"`
	UUID    string    `json:"uuid"`
	Created time.Time `json:"created"`
}

// Made returns how many components the engine has made so far, a count
// that only grows: the components made by a change are those Identities
// returns for the count before it.
func (e *Engine) Made() uint64 { return e.made.Load() }

// Identities returns the identities of the engine's components that are
// among those made after the first since (all of them for 0), chains in
// creation order and their components in order.
func (e *Engine) Identities(since uint64) []Identity {
	e.mu.Lock()
	chains := make([]*Chain, 0, len(e.order))
	for _, id := range e.order {
		chains = append(chains, e.chains[id])
	}
	e.mu.Unlock()
	var out []Identity
	for _, ch := range chains {
		if ch.lock() != nil {
			continue // deleted meanwhile
		}
		for _, c := range ch.order {
			if c.made > since {
				out = append(out, Identity{Chain: ch.id, ID: c.id, UUID: c.uuid, Created: c.created})
			}
		}
		ch.mu.Unlock()
	}
	return out
}

// SetIdentity gives component id the UUID and creation time it had, as a
// store restoring the chain recorded them (see Identity). It fails with
// ErrNotFound for an unknown component, ErrInvalid for an empty UUID, and,
// as every change, ErrConflict once the engine is closed.
func (ch *Chain) SetIdentity(id, uuid string, created time.Time) error {
	c, err := ch.lockFind(id, true)
	if err != nil {
		return err
	}
	defer ch.mu.Unlock()
	if uuid == "" {
		return errorf(ErrInvalid, "component %s: an identity needs a UUID", id)
	}
	c.uuid, c.created = uuid, created
	return nil
}
