package sim

import (
	"context"
	"slices"
	"time"

	"github.com/benbjohnson/clock"
)

// A timer is one scheduled thing: a heater's next update, a script action.
// Timers run in the order of (at, scheduling order): equal times run in the
// order they were scheduled, so a run is the same every time.
//
// A timer is 64 bytes, one cache line: a large home's heat updates walk
// tens of thousands of them a simulated second, and a timer spread over two
// lines cost a second miss each.
type timer struct {
	at     int64 // simulated ms since the epoch
	period int64 // > 0: reschedule period ms after at, chained from at, never from "now"
	// dev is the device whose contract-model heat update this is, called
	// directly: there are millions of them a simulated day; with tick, the
	// device whose behaviour's Tick this is. What a heat update
	// needs of its device is kept here, so that it reads the timer alone:
	// the device's power (copied by settleDeviceLocked whenever the device
	// changes), and the heat cell of its zone (found by the first update in
	// the zone, forgotten by settleDeviceLocked when the device moves).
	dev       *device
	heatPower float64
	heatCell  *heatCell
	from      int64 // periodic timers: where the next run's span starts, in simulated ms (the previous run, or when the timer started): see runDueLocked
	// fire is what a timer that is not a heat update runs: with h.mu held,
	// or without it when unlocked (then it may call any Home method).
	fire      func(h *Home, at int64)
	idx       int32 // its index in slot.items
	scheduled bool
	unlocked  bool
	tick      bool // dev's behaviour's Tick, every period: no heat update
}

// The schedule is a calendar: one slot per distinct due time, holding its
// timers in the order they were scheduled (appending keeps that order, since
// every scheduling comes after the previous one), and a min-heap of the
// slots' times. Thousands of devices created together share their due times,
// so a heater's update costs an append to the slot one period ahead instead
// of a trip down a heap of every timer.
type slot struct {
	at    int64
	items []*timer // nil: cancelled
	next  int      // index of the next timer to run
	live  int      // timers in items[next:] not cancelled
	gen   uint64   // bumped when the slot is dropped or reused
}

type calendar struct {
	// slots finds a slot by its time once more than fewSlots are
	// scheduled; nil before: the slots are then found by scanning times
	// (a Go map costs at least a group of 8 entries, about 200 bytes, and
	// a small home has only a few due times).
	slots map[int64]*slot
	times []slotRef // min-heap of the slots by time; may hold stale entries (slot gone)
	stale int       // stale entries in times
	last  *slot     // the slot scheduled into last: the next one usually goes there too
	free  []*slot   // emptied slots, for reuse
}

// slotRef is an entry of the calendar's heap: valid while gen is its
// slot's.
type slotRef struct {
	at  int64
	gen uint64
	s   *slot
}

// fewSlots is the most slots the calendar finds by scanning its heap.
const fewSlots = 16

// slotAt returns the slot of time at, nil if there is none.
func (c *calendar) slotAt(at int64) *slot {
	if c.slots != nil {
		return c.slots[at]
	}
	for _, r := range c.times {
		if r.at == at && r.gen == r.s.gen {
			return r.s
		}
	}
	return nil
}

// live returns how many slots the calendar holds.
func (c *calendar) live() int {
	if c.slots != nil {
		return len(c.slots)
	}
	return len(c.times) - c.stale
}

// forget drops slot s from the index of slots; its heap entry is stale
// once its gen is bumped.
func (c *calendar) forget(s *slot) {
	if c.slots != nil {
		delete(c.slots, s.at)
	}
}

// push adds t to the slot of its due time.
func (c *calendar) push(t *timer) {
	s := c.last
	if s == nil || s.at != t.at {
		s = c.slotAt(t.at)
		if s == nil {
			s = c.newSlot(t.at)
		}
		c.last = s
	}
	t.idx = int32(len(s.items)) // its slot is c.slotAt(t.at) while it waits
	s.items = append(s.items, t)
	s.live++
}

func (c *calendar) newSlot(at int64) *slot {
	var s *slot
	if n := len(c.free); n > 0 {
		s, c.free = c.free[n-1], c.free[:n-1]
		s.at = at
	} else {
		s = &slot{at: at}
	}
	c.times = append(c.times, slotRef{at: at, gen: s.gen, s: s})
	heapUp(c.times, len(c.times)-1)
	switch {
	case c.slots != nil:
		c.slots[at] = s
	case c.live() > fewSlots:
		c.slots = make(map[int64]*slot, c.live())
		for _, r := range c.times {
			if r.gen == r.s.gen {
				c.slots[r.at] = r.s
			}
		}
	}
	return s
}

// remove takes t out of its slot; the slot goes when nothing is left in it.
func (c *calendar) remove(t *timer) {
	s := c.slotAt(t.at)
	s.items[t.idx] = nil
	s.live--
	if s.live == 0 {
		c.drop(s)
	}
}

// drop forgets slot s, leaving its time in the heap as a stale entry, and
// rebuilds the heap once stale entries outnumber the live ones.
func (c *calendar) drop(s *slot) {
	c.forget(s)
	s.gen++
	if c.last == s {
		c.last = nil
	}
	c.stale++
	if c.stale > c.live()+64 {
		c.times = slices.DeleteFunc(c.times, func(r slotRef) bool { return r.gen != r.s.gen })
		for i := len(c.times)/2 - 1; i >= 0; i-- {
			heapDown(c.times, i)
		}
		c.stale = 0
	}
}

// first returns the slot due first, nil when none.
func (c *calendar) first() *slot {
	for len(c.times) > 0 {
		r := c.times[0]
		s := r.s
		if r.gen == s.gen && s.live > 0 {
			return s
		}
		c.popTime()
		if r.gen == s.gen { // emptied by running it
			c.forget(s)
			s.gen++
			if c.last == s {
				c.last = nil
			}
			clear(s.items)
			s.items, s.next, s.live = s.items[:0], 0, 0
			c.free = append(c.free, s)
		} else {
			c.stale--
		}
	}
	return nil
}

func (c *calendar) popTime() {
	n := len(c.times) - 1
	c.times[0] = c.times[n]
	c.times = c.times[:n]
	if n > 0 {
		heapDown(c.times, 0)
	}
}

// take removes and returns the next timer of s, which has one.
func (c *calendar) take(s *slot) *timer {
	for {
		t := s.items[s.next]
		s.items[s.next] = nil
		s.next++
		if t != nil {
			s.live--
			return t
		}
	}
}

// shift moves every due time by d: the order stays the same.
func (c *calendar) shift(d int64) {
	for i := range c.times {
		c.times[i].at += d
		r := c.times[i]
		if r.gen != r.s.gen {
			continue // stale
		}
		s := r.s
		s.at = r.at
		for _, t := range s.items[s.next:] {
			if t != nil {
				t.at += d
				t.from += d
			}
		}
	}
	if c.slots != nil {
		slots := make(map[int64]*slot, len(c.slots))
		for _, s := range c.slots {
			slots[s.at] = s
		}
		c.slots = slots
	}
}

func heapUp(q []slotRef, i int) {
	e := q[i]
	for i > 0 {
		p := (i - 1) / 2
		if e.at >= q[p].at {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = e
}

func heapDown(q []slotRef, i int) {
	n, e := len(q), q[i]
	for {
		m := 2*i + 1
		if m >= n {
			break
		}
		if r := m + 1; r < n && q[r].at < q[m].at {
			m = r
		}
		if q[m].at >= e.at {
			break
		}
		q[i] = q[m]
		i = m
	}
	q[i] = e
}

// scheduleLocked adds t to run at simulated time at.
func (h *Home) scheduleLocked(t *timer, at int64) {
	t.at, t.scheduled = at, true
	h.timers.push(t)
	h.wakeDriver()
}

// cancelLocked removes t if it is scheduled.
func (h *Home) cancelLocked(t *timer) {
	if t == nil || !t.scheduled {
		return
	}
	t.scheduled = false
	h.timers.remove(t)
}

// shiftTimersLocked moves every timer by d ms, when simulated time jumps
// because the start date was set: what was due in 5 s stays due in 5 s.
func (h *Home) shiftTimersLocked(d int64) {
	h.timers.shift(d)
	h.beat += d
	for _, p := range h.scripts.all() {
		p.origin += d
		p.paused += d
	}
}

// runDueLocked runs, in order, every timer due at or before until, at most
// max of them (0: no limit), and reports whether timers due remain. While a
// timer runs, the home's time reads as the timer's time, so what it changes
// is stamped with the time it was scheduled for.
//
// With coalesce (the live driver), a periodic timer that fell due several
// times runs once, at the last of those times, over the whole span (see
// [Home.Run]); otherwise ([Home.Advance]) it runs once per period. h.span is
// the span, in simulated ms, of the periodic run in progress: from the
// timer's previous run (or its start, timer.from) to this one; one period
// but for the first run of a heat update made between two beats, or after a
// period change, and for coalesced runs.
func (h *Home) runDueLocked(until int64, max int, coalesce bool) bool {
	defer func() { h.pinned = false }() // also when a timer or an observer panicked
	defer h.flushHeatLocked()
	// s is the slot of the last timer run while it was a heat update and
	// nothing was delivered: nothing can then have been scheduled before
	// it, so it is still the first slot while it holds timers, due by until.
	var s *slot
	for n := 0; ; n++ {
		if s == nil || s.live == 0 {
			s = h.timers.first()
			if s == nil || s.at > until {
				return false
			}
		}
		if max > 0 && n == max {
			return true
		}
		t := h.timers.take(s)
		at := t.at
		if t.period > 0 {
			if late := until - at; coalesce && late >= t.period {
				at += late / t.period * t.period // the last occurrence due by until
			}
			h.span, t.from = at-t.from, at
			t.at = at + t.period
			h.timers.push(t)
		} else {
			t.scheduled = false
		}
		h.pinned, h.pin = true, at
		switch {
		case t.tick:
			h.flushHeatLocked()
			h.tickLocked(t.dev)
			s = nil
		case t.dev != nil:
			h.tickThermalLocked(t)
		case !t.unlocked:
			h.flushHeatLocked()
			t.fire(h, at)
			s = nil
		default:
			h.flushHeatLocked()
			h.unlocked(func() { t.fire(h, at) })
			s = nil
		}
		if len(h.outbox) > 0 && !h.delivering {
			// Observers react at the timer's time, before later timers run.
			h.flushHeatLocked()
			h.unlocked(h.deliver)
			s = nil
		}
		h.pinned = false
	}
}

// unlocked calls f without the home's lock, which the caller holds, and
// takes it again (as a change) when f returns, panics or ends its
// goroutine, so that the caller's deferred unlock stays right.
func (h *Home) unlocked(f func()) {
	h.mu.Unlock()
	defer h.lockChange()
	f()
}

// Advance moves simulated time forward by d, running every timer that falls
// due on the way, in order, on the caller's goroutine: heater updates,
// script actions, button releases. No real time passes and no real timer is
// involved, so a test can run a simulated day in a fraction of a second, the
// same way every time. Advance works whether the clock is paused or not. A
// negative d is an error of kind [ErrInvalid]. Simulated time ends at
// [Home.End], with the year 9999: Advance stops there, as a running clock
// does. Simulated time counts whole milliseconds: d is truncated to them, so
// that a thousand Advance(999 * time.Microsecond) move time by nothing and a
// thousand Advance(1500 * time.Microsecond) by one second.
//
// Advance holds the home for the whole span, so that it is one change:
// other callers (a reader, a clock setting, another Advance) wait until it
// returns. To let them in along the way, advance in steps, a simulated
// minute at a time, say; the live driver ([Home.Run]) does so by itself.
func (h *Home) Advance(d time.Duration) error {
	if d < 0 {
		return invalidf("cannot advance by a negative duration (%v)", d)
	}
	return h.runTo(func(now int64) (int64, error) { return now + d.Milliseconds(), nil })
}

// RunUntil advances simulated time to t, as [Home.Advance] does, however
// far t is (up to [Home.End]). A time before the current simulated time is
// an error of kind [ErrInvalid].
func (h *Home) RunUntil(t time.Time) error {
	return h.runTo(func(now int64) (int64, error) {
		// Compared as times, not as milliseconds: t.UnixMilli overflows
		// for a time some 292 million years away, which would read as
		// before now.
		if t.Before(time.UnixMilli(now)) {
			return 0, invalidf("cannot run until %v: it is before the current simulated time", t)
		}
		if end := time.UnixMilli(h.clock.end); t.After(end) {
			return h.clock.end, nil
		}
		return t.UnixMilli(), nil
	})
}

// RunDue runs every timer due by the current simulated time as one pass of
// the live driver ([Home.Run]) does: a periodic update that fell due
// several times runs once, at the last of those times, over the whole span;
// one-off timers (script actions, [Home.After]) each run, in order. Time is
// not moved: with the clock running, what falls due is what the time
// reached; paused, what is due at its instant. It suits a program that
// drives the home between other work without a driver running, such as a
// replay of saved changes, where [Home.Advance] would run every period of
// a span a fast clock made long.
func (h *Home) RunDue() {
	h.lockChange()
	defer h.unlockChange()
	h.runDueLocked(min(h.nowLocked(), h.clock.end), 0, true)
}

// runTo runs every timer due up to the instant target returns, given the
// current simulated time, and moves the clock there, stopping at the end of
// simulated time. The home is held throughout.
func (h *Home) runTo(target func(now int64) (int64, error)) error {
	h.lockChange()
	defer h.unlockChange()
	at, err := target(h.nowLocked())
	if err != nil {
		return err
	}
	at = min(at, h.clock.end)
	h.runDueLocked(at, 0, false)
	now := h.wall.Now()
	if cur := h.clock.nowMillis(now); cur < at {
		h.clock.advance(now, at-cur)
	}
	return nil
}

// runBatch is how many timers the live driver runs before letting other
// callers take the lock.
const runBatch = 256

// MinLiveStep is the least real time between two passes of the live driver
// ([Home.Run]) over the timers due.
const MinLiveStep = 5 * time.Millisecond

// Run drives the simulation live until ctx is done: it maps the wall clock
// to simulated time through the clock's factor and pause, and runs each
// timer when simulated time reaches it. It arms one wall-clock timer for the
// next due time (none while paused) and wakes early when the clock or the
// schedule changes, so it never polls. Run returns ctx.Err(). Run at most
// one driver per home; [Home.Advance] may still be called meanwhile.
//
// The step rule: so that simulated time keeps up at any factor on one
// core, the driver passes over the timers at most once every [MinLiveStep]
// of real time, and a periodic update that fell due several times since it
// last ran runs once, at the last of those times, over the whole span
// instead of once per period: a heater or cooler of the contract model
// applies its power over the span (the formula is linear in time), the
// realistic model integrates its exact solution over the span (stable for
// any span), and a behaviour's Tick runs once. One-off timers (script
// actions, [Home.After]) each run, in order. So at a factor of 10⁹ the
// driver does a pass's work every few milliseconds rather than a billion
// updates a second, and once the factor drops or the clock pauses it is
// idle again at the next pass. [Home.Advance] never coalesces: it runs
// every period, the same way every time.
func (h *Home) Run(ctx context.Context) error {
	var last time.Time
	for {
		if !last.IsZero() {
			// At most one pass per MinLiveStep of real time.
			if rest := MinLiveStep - h.wall.Since(last); rest > 0 {
				t := h.wall.Timer(rest)
				select {
				case <-ctx.Done():
					t.Stop()
					return ctx.Err()
				case <-t.C:
				}
			}
		}
		last = h.wall.Now()
		wait, ok, err := h.runDueLive(ctx)
		if err != nil {
			return err
		}

		var fire <-chan time.Time
		var t *clock.Timer
		if ok {
			t = h.wall.Timer(wait)
			fire = t.C
		}
		select {
		case <-ctx.Done():
		case <-h.wake:
		case <-fire:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// runDueLive runs, for Run, the timers due by the clock, runBatch at a
// time, letting other callers take the lock between two batches, and
// returns the wait until the next one (nextWaitLocked); ctx ends it
// between two batches. The deferred unlock releases the lock also when a
// timer or an observer panics or ends the goroutine (t.Fatal).
func (h *Home) runDueLive(ctx context.Context) (wait time.Duration, ok bool, err error) {
	h.lockChange()
	defer h.mu.Unlock()
	for h.runDueLocked(h.clock.nowMillis(h.wall.Now()), runBatch, true) {
		h.unlocked(func() { err = ctx.Err() })
		if err != nil {
			return 0, false, err
		}
	}
	wait, ok = h.nextWaitLocked()
	return wait, ok, nil
}

// nextWaitLocked returns the wall-clock time until the next timer is due;
// false when none is scheduled, the clock is paused, or the next timer falls
// after the end of simulated time, which the clock never reaches.
func (h *Home) nextWaitLocked() (time.Duration, bool) {
	s := h.timers.first()
	if s == nil || h.clock.paused || s.at > h.clock.end {
		return 0, false
	}
	now := h.wall.Now()
	return h.clock.wallUntil(s.at).Sub(now), true
}

// wakeDriver tells a running driver to look at the schedule again.
func (h *Home) wakeDriver() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// After runs fn once d of simulated time has passed; with d zero or
// negative, at the current simulated time, after what is already due. fn
// runs on the goroutine that drives the simulation ([Home.Advance],
// [Home.RunUntil] or [Home.Run]), without the home's lock, so it may call
// any Home method. Nothing runs fn until simulated time is driven.
// After panics if fn is nil, at once, rather than in the driver later.
func (h *Home) After(d time.Duration, fn func()) {
	if fn == nil {
		panic("sim: After with a nil function")
	}
	h.lockChange()
	defer h.mu.Unlock()
	h.scheduleLocked(&timer{unlocked: true, fire: func(*Home, int64) { fn() }}, h.nowLocked()+max(d.Milliseconds(), 0))
}
