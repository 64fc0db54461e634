package sim

import (
	"maps"
	"slices"
)

// builtinEntries are the built-in kinds' entries, shared by every registry.
var builtinEntries = func() map[*kindEntry]bool {
	m := map[*kindEntry]bool{}
	for _, e := range builtinSet.kinds {
		m[e] = true
	}
	return m
}()

// OwnDerived returns, for each device of a kind registered in this home,
// or of a built-in kind that reads on a schedule (its behaviour ticks: the
// PowerSwitchMeter, the FloodSensor, the Speaker), its derived properties
// that differ from their default, and, for a kind that reads on a schedule,
// those at their default too (readings that follow a zone variable are not
// stored: the variable is): what the simulation worked out over time,
// such as an energy meter's total, or a power meter's last reading, kept
// while it is faulty, which the home as a script holds it (see
// WriteScript, which leaves derived properties out) cannot give back. A
// saved state keeps it beside the script, and RestoreDerived puts it back.
// Devices with nothing to keep are left out.
func (h *Home) OwnDerived() map[string]map[string]any {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var out map[string]map[string]any
	for _, d := range h.devices.all() {
		if builtinEntries[d.entry] && d.kind.Behavior.Tick == nil {
			continue // the other built-in kinds work their readings out from what the script rebuilds
		}
		for _, spec := range d.kind.Properties {
			if !spec.Derived || spec.Follows != "" {
				continue
			}
			v, ok := d.props.get(spec.Name)
			if !ok || valueEqual(v, spec.Default) && d.kind.Behavior.Tick == nil {
				// A kind that reads on a schedule keeps its defaults
				// too: made anew, after what it reads, it would read
				// otherwise at once (a flood sensor beside a sprinkler
				// turned on since its last reading).
				continue
			}
			if out == nil {
				out = map[string]map[string]any{}
			}
			if out[d.ID] == nil {
				out[d.ID] = map[string]any{}
			}
			out[d.ID][spec.Name] = cloneValue(v)
		}
	}
	return out
}

// RestoreDerived sets derived properties of device id to the values a
// saved state had (see OwnDerived), as the device's own behaviour would,
// events included. It is for restoring a state, not for clients: their
// updates ignore derived properties. A device that does not exist is an
// error of kind [ErrNotFound]; a property its kind does not define as
// derived, or a value its spec refuses, is [ErrInvalid], and nothing is
// set. A built-in watcher of persons given values other than what its
// zone holds is set right at the next move of a person in its zone, as
// its behaviour would.
func (h *Home) RestoreDerived(id string, props map[string]any) error {
	h.lockChange()
	defer h.unlockChange()
	d, err := h.deviceLocked(id)
	if err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(props))
	for _, name := range names { // all checked before any is set
		spec, ok := d.kind.Property(name)
		if !ok || !spec.Derived {
			return invalidf("property %q is not a derived property of %s devices", truncate(name), d.kind.Name)
		}
		if _, err := spec.Check(props[name]); err != nil {
			return err
		}
	}
	c := h.contextLocked(d, true)
	defer h.releaseContextLocked(c)
	for _, name := range names {
		c.Set(name, props[name]) // checked above
	}
	if c.changed && d.watch != 0 && d.watch&needEveryMove == 0 {
		// A built-in watcher of persons is spared the moves that cannot
		// change what it reads, as long as it reads what its zone holds
		// (see personsNeed): what was set here may not be, and its
		// Persons behaviour would set it right at the next move of
		// anyone in its zone. It is told of every move from now on.
		d.watch |= needEveryMove
		h.inZone.rewatch(d)
		h.unwatchedMoves = true
	}
	return nil
}
