package sim

import (
	"context"
	"time"

	"github.com/benbjohnson/clock"
)

// A timer is one scheduled thing: a heater's next update, a script action.
// Timers are ordered by (at, seq): equal times run in the order they were
// scheduled, so a run is the same every time.
type timer struct {
	at        int64 // simulated ms since the epoch
	seq       uint64
	scheduled bool
	period    int64 // > 0: reschedule period ms after at, chained from at, never from "now"
	// fire runs with h.mu held; run runs without it, so it may call any
	// Home method. Exactly one is set.
	fire func(h *Home, at int64)
	run  func()
}

// timerHeap is a binary min-heap of timers by (at, seq). The keys are
// copied into the entries so that comparisons touch only the slice.
type timerHeap []heapEntry

type heapEntry struct {
	at  int64
	seq uint64
	t   *timer
}

func (a *heapEntry) before(b *heapEntry) bool {
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}

// up and down move entry i to its place, shifting the others over the
// hole rather than swapping.
func (q timerHeap) up(i int) {
	e := q[i]
	for i > 0 {
		p := (i - 1) / 2
		if !e.before(&q[p]) {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = e
}

func (q timerHeap) down(i int) {
	n, e := len(q), q[i]
	for {
		m := 2*i + 1
		if m >= n {
			break
		}
		if r := m + 1; r < n && q[r].before(&q[m]) {
			m = r
		}
		if !q[m].before(&e) {
			break
		}
		q[i] = q[m]
		i = m
	}
	q[i] = e
}

// scheduleLocked adds t to run at simulated time at.
func (h *Home) scheduleLocked(t *timer, at int64) {
	h.timerSeq++
	t.at, t.seq, t.scheduled = at, h.timerSeq, true
	h.timers = append(h.timers, heapEntry{at: at, seq: t.seq, t: t})
	h.timers.up(len(h.timers) - 1)
	h.wakeDriver()
}

// cancelLocked removes t if it is scheduled. It is rare (a device removed,
// a period changed), so it finds t by scanning rather than have every move
// in the heap keep an index up to date.
func (h *Home) cancelLocked(t *timer) {
	if t == nil || !t.scheduled {
		return
	}
	t.scheduled = false
	last := len(h.timers) - 1
	for i := range h.timers {
		if h.timers[i].t != t {
			continue
		}
		h.timers[i] = h.timers[last]
		h.timers[last] = heapEntry{}
		h.timers = h.timers[:last]
		if i < last {
			h.timers.down(i)
			h.timers.up(i)
		}
		return
	}
}

// shiftTimersLocked moves every timer by d ms, when simulated time jumps
// because the start date was set: what was due in 5 s stays due in 5 s.
func (h *Home) shiftTimersLocked(d int64) {
	for i := range h.timers {
		h.timers[i].at += d
		h.timers[i].t.at += d
	}
	for _, p := range h.scripts.list {
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
// the span, in simulated ms, of the periodic run in progress.
func (h *Home) runDueLocked(until int64, max int, coalesce bool) bool {
	for n := 0; len(h.timers) > 0 && h.timers[0].at <= until; n++ {
		if max > 0 && n == max {
			return true
		}
		t := h.timers[0].t
		at := t.at
		if t.period > 0 {
			h.span = t.period
			if late := until - at; coalesce && late >= t.period {
				k := late / t.period // further occurrences due by until
				at += k * t.period
				h.span = (k + 1) * t.period
			}
			h.timerSeq++
			t.at, t.seq = at+t.period, h.timerSeq
			h.timers[0].at, h.timers[0].seq = t.at, t.seq
			h.timers.down(0)
		} else {
			h.cancelLocked(t) // the top: found at once
		}
		h.pinned, h.pin = true, at
		if t.fire != nil {
			t.fire(h, at)
		} else {
			h.mu.Unlock()
			t.run()
			h.mu.Lock()
		}
		if len(h.outbox) > 0 && !h.delivering {
			// Observers react at the timer's time, before later timers run.
			h.mu.Unlock()
			h.deliver()
			h.mu.Lock()
		}
		h.pinned = false
	}
	return false
}

// Advance moves simulated time forward by d, running every timer that falls
// due on the way, in order, on the caller's goroutine: heater updates,
// script actions, button releases. No real time passes and no real timer is
// involved, so a test can run a simulated day in a fraction of a second, the
// same way every time. Advance works whether the clock is paused or not. A
// negative d is an error of kind [ErrInvalid].
func (h *Home) Advance(d time.Duration) error {
	if d < 0 {
		return invalidf("cannot advance by a negative duration (%v)", d)
	}
	defer h.deliver()
	h.mu.Lock()
	defer h.mu.Unlock()
	target := h.nowLocked() + d.Milliseconds()
	h.runDueLocked(target, 0, false)
	now := h.wall.Now()
	if cur := h.clock.nowMillis(now); cur < target {
		h.clock.advance(now, target-cur)
	}
	return nil
}

// RunUntil advances simulated time to t, as [Home.Advance] does. A time
// before the current simulated time is an error of kind [ErrInvalid].
func (h *Home) RunUntil(t time.Time) error {
	d := time.Duration(t.UnixMilli()-h.Now().UnixMilli()) * time.Millisecond
	if d < 0 {
		return invalidf("cannot run until %v: it is before the current simulated time", t)
	}
	return h.Advance(d)
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
		h.mu.Lock()
		for h.runDueLocked(h.clock.nowMillis(h.wall.Now()), runBatch, true) {
			h.mu.Unlock()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			h.mu.Lock()
		}
		wait, ok := h.nextWaitLocked()
		h.mu.Unlock()

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

// nextWaitLocked returns the wall-clock time until the next timer is due;
// false when none is scheduled or the clock is paused.
func (h *Home) nextWaitLocked() (time.Duration, bool) {
	if len(h.timers) == 0 || h.clock.paused {
		return 0, false
	}
	now := h.wall.Now()
	return h.clock.wallUntil(h.timers[0].at).Sub(now), true
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
func (h *Home) After(d time.Duration, fn func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.scheduleLocked(&timer{run: fn}, h.nowLocked()+max(d.Milliseconds(), 0))
}
