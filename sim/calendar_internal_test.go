package sim

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/benbjohnson/clock"
	gocmp "github.com/google/go-cmp/cmp"
)

// A schedule is what TestCalendarOrder drives: timers numbered in the order
// they are scheduled, some periodic, some scheduling another timer when
// they run (spawning, decided by the timer's number), cancellations and
// advances. Each run appends (number, time) to its log.
type schedule interface {
	add(at, period int64) int
	cancel(id int)
	scheduled(id int) bool
	advance(until int64)
	log() [][2]int64
}

// Both runs implement schedule.
var (
	_ schedule = (*calendarRun)(nil)
	_ schedule = (*referenceRun)(nil)
)

// spawns says whether timer id schedules another when it runs, and how
// long after: 0 (at the time being run) or a little later.
func spawns(id int) (bool, int64) { return id%4 == 1, int64(id%3) * 10 }

// heats says whether periodic timer id is a heat update (of no power: it
// changes nothing and logs nothing), which runDueLocked runs in a way of
// its own: the runs of the others must keep their order around them.
func heats(id int, period int64) bool { return period > 0 && id%3 == 2 }

// calendarRun is the schedule on a Home's calendar.
type calendarRun struct {
	h      *Home
	timers []*timer
	runs   [][2]int64
}

func (c *calendarRun) add(at, period int64) int {
	id := len(c.timers)
	tm := &timer{period: period}
	tm.fire = func(h *Home, at int64) {
		c.runs = append(c.runs, [2]int64{int64(id), at})
		if ok, d := spawns(id); ok && period == 0 && len(c.timers) < 500 {
			c.addLocked(at+d, 0)
		}
	}
	if heats(id, period) {
		tm.fire, tm.dev = nil, &device{}
	}
	c.timers = append(c.timers, tm)
	c.h.scheduleLocked(tm, at)
	return id
}

func (c *calendarRun) addLocked(at, period int64) { c.add(at, period) }

func (c *calendarRun) cancel(id int)         { c.h.cancelLocked(c.timers[id]) }
func (c *calendarRun) scheduled(id int) bool { return c.timers[id].scheduled }
func (c *calendarRun) log() [][2]int64       { return c.runs }
func (c *calendarRun) advance(until int64)   { c.h.runDueLocked(until, 0, false) }
func (c *calendarRun) shift(d int64)         { c.h.shiftTimersLocked(d) }
func (r *referenceRun) shift(d int64)        { shiftRef(r, d) }
func shiftRef(r *referenceRun, d int64) {
	for i := range r.q {
		r.q[i].at += d
	}
}
func (r *referenceRun) log() [][2]int64 { return r.runs }
func (r *referenceRun) scheduled(id int) bool {
	return slices.ContainsFunc(r.q, func(x refTimer) bool { return x.id == id })
}

// referenceRun is the schedule on the reference: every timer ordered by
// (time, scheduling number), as the binary heap the calendar replaced.
type referenceRun struct {
	q    []refTimer
	seq  int64
	n    int
	runs [][2]int64
}

type refTimer struct {
	id      int
	at, seq int64
	period  int64
}

func (r *referenceRun) add(at, period int64) int {
	id := r.n
	r.n++
	r.seq++
	r.q = append(r.q, refTimer{id: id, at: at, seq: r.seq, period: period})
	return id
}

func (r *referenceRun) cancel(id int) {
	r.q = slices.DeleteFunc(r.q, func(x refTimer) bool { return x.id == id })
}

func (r *referenceRun) advance(until int64) {
	for {
		slices.SortFunc(r.q, func(a, b refTimer) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq)) })
		if len(r.q) == 0 || r.q[0].at > until {
			return
		}
		x := r.q[0]
		if x.period > 0 {
			r.seq++
			r.q[0].at, r.q[0].seq = x.at+x.period, r.seq
		} else {
			r.q = r.q[1:]
		}
		if !heats(x.id, x.period) {
			r.runs = append(r.runs, [2]int64{int64(x.id), x.at})
		}
		if ok, d := spawns(x.id); ok && x.period == 0 && r.n < 500 {
			r.add(x.at+d, 0)
		}
	}
}

// checkSlots checks the calendar's index of its slots against its heap:
// each live slot (an entry of the heap whose gen is its slot's) is found
// by its time, stale entries are counted, and once there is a map it holds
// the live slots and nothing else.
func checkSlots(c *calendar) string {
	live := 0
	for _, r := range c.times {
		if r.gen != r.s.gen {
			continue
		}
		live++
		if r.s.at != r.at {
			return fmt.Sprintf("a slot of time %d in the heap at %d", r.s.at, r.at)
		}
		if s := c.slotAt(r.at); s != r.s {
			return fmt.Sprintf("time %d finds slot %p, the heap's is %p", r.at, s, r.s)
		}
	}
	if len(c.times)-c.stale != live || c.live() != live {
		return fmt.Sprintf("%d entries, %d stale, live() %d: %d live", len(c.times), c.stale, c.live(), live)
	}
	if c.slots != nil && len(c.slots) != live {
		return fmt.Sprintf("the map holds %d slots, %d live", len(c.slots), live)
	}
	return ""
}

// TestCalendarOrder drives the calendar and the reference with the same
// random schedules, cancellations, periodic timers (heat updates among
// them), timers scheduled by running timers (also at the very time being
// run) and time shifts, and
// checks that they run the same timers in the same order at the same times,
// and that the calendar's slots are found, whether it scans its heap for
// them (fewSlots or fewer) or keeps a map.
func TestCalendarOrder(t *testing.T) {
	scanned, mapped := 0, 0
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		h := MustNew(Config{WallClock: clock.NewMock(), Location: time.UTC})
		h.mu.Lock()
		c := &calendarRun{h: h}
		ref := &referenceRun{}
		now := int64(0)
		spread := int64(20) // due times: a few (the calendar scans), or many (it keeps a map)
		if seed%2 == 1 {
			spread = 200
		}
		for range 20 + r.IntN(400) {
			switch op := r.IntN(12); {
			case op < 6:
				at := now + 10*r.Int64N(spread)
				var period int64
				if r.IntN(3) == 0 {
					period = 10 * (1 + r.Int64N(5))
				}
				c.add(at, period)
				ref.add(at, period)
			case op < 8 && len(c.timers) > 0:
				id := r.IntN(len(c.timers))
				if c.scheduled(id) != ref.scheduled(id) {
					t.Fatalf("seed %d: timer %d scheduled: calendar %v, reference %v", seed, id, c.scheduled(id), ref.scheduled(id))
				}
				c.cancel(id)
				ref.cancel(id)
			case op < 9:
				d := 1000 * r.Int64N(3)
				c.shift(d)
				ref.shift(d)
				now += d
			default:
				now += 10 * r.Int64N(15)
				c.advance(now)
				ref.advance(now)
			}
			if msg := checkSlots(&h.timers); msg != "" {
				h.mu.Unlock()
				t.Fatalf("seed %d: %s", seed, msg)
			}
		}
		if h.timers.slots == nil {
			scanned++
		} else {
			mapped++
		}
		now += 1000
		c.advance(now)
		ref.advance(now)
		h.mu.Unlock()
		if diff := gocmp.Diff(ref.log(), c.log()); diff != "" {
			t.Fatalf("seed %d: runs differ (-reference +calendar):\n%s", seed, diff)
		}
		if len(c.log()) == 0 {
			t.Fatalf("seed %d: nothing ran", seed)
		}
	}
	if scanned < 30 || mapped < 30 {
		t.Errorf("%d calendars scanned their heap for slots and %d kept a map: want both often", scanned, mapped)
	}
}

// TestCalendarDropsStaleEntries: timers scheduled at times of their own
// and cancelled leave stale entries in the heap, which is rebuilt once they
// outnumber the live slots by 64, whether the calendar scans its heap for
// slots or keeps a map; the slots left are found all along.
func TestCalendarDropsStaleEntries(t *testing.T) {
	for _, kept := range []int{1, fewSlots - 1, fewSlots, 100} {
		h := MustNew(Config{WallClock: clock.NewMock(), Location: time.UTC})
		h.mu.Lock()
		for i := range kept {
			h.scheduleLocked(&timer{fire: func(*Home, int64) {}}, int64(1_000_000+i))
		}
		longest := 0
		for i := range 1000 {
			tm := &timer{fire: func(*Home, int64) {}}
			h.scheduleLocked(tm, int64(i))
			h.cancelLocked(tm)
			if msg := checkSlots(&h.timers); msg != "" {
				h.mu.Unlock()
				t.Fatalf("%d slots kept, %d cancelled: %s", kept, i+1, msg)
			}
			longest = max(longest, len(h.timers.times))
		}
		mapped := h.timers.slots != nil
		h.mu.Unlock()
		if want := 2*kept + 65; longest > want {
			t.Errorf("%d slots kept: the heap grew to %d entries, want at most %d", kept, longest, want)
		}
		if want := kept+1 > fewSlots; mapped != want { // the kept ones and one more at a time
			t.Errorf("%d slots kept: a map is %v, want %v", kept, mapped, want)
		}
	}
}

// TestTimerFitsALine guards the timer's size: a large home's heat updates
// walk tens of thousands of timers, one cache line each.
func TestTimerFitsALine(t *testing.T) {
	if n := unsafe.Sizeof(timer{}); n != 64 {
		t.Errorf("a timer is %d bytes, want 64 (one cache line)", n)
	}
}

// TestHomeFitsItsSizeClass guards the Home's size: with the 8-byte header
// the allocator gives objects of more than 512 bytes with pointers, a Home
// of more than 760 bytes takes the 896-byte size class instead of the
// 768-byte one, 128 bytes more for each of many small homes.
func TestHomeFitsItsSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(Home{}); n > 760 {
		t.Errorf("a Home is %d bytes, want at most 760 (768 with the allocator's header)", n)
	}
}

// TestZoneEntryFitsItsSizeClass guards the zone index's entry: at 96
// bytes it fills the 96-byte size class, and one byte more takes the
// 112-byte one, 64 bytes more for each small home of four zones. Its
// watchers take 16 bytes each (a small home keeps a few).
func TestZoneEntryFitsItsSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(zoneEntry{}); n > 96 {
		t.Errorf("a zoneEntry is %d bytes, want at most 96", n)
	}
	if n := unsafe.Sizeof(watcher{}); n > 16 {
		t.Errorf("a watcher is %d bytes, want at most 16", n)
	}
}

// TestAlignedLocked: the first beat of a period strictly after a time,
// beats counted from h.beat, below it (times before the epoch) too.
func TestAlignedLocked(t *testing.T) {
	for _, tt := range []struct{ beat, t, p, want int64 }{
		{0, 0, 5000, 5000},
		{0, 1, 5000, 5000},
		{0, 4999, 5000, 5000},
		{0, 5000, 5000, 10000},
		{0, -1, 5000, 0},
		{0, -5000, 5000, 0},
		{0, -5001, 5000, -5000},
		{1234, 1234, 1000, 2234},
		{1234, 0, 1000, 234},
		{-7, -8, 3, -7},
	} {
		h := &Home{beat: tt.beat}
		if got := h.alignedLocked(tt.t, tt.p); got != tt.want {
			t.Errorf("beat %d: alignedLocked(%d, %d) = %d, want %d", tt.beat, tt.t, tt.p, got, tt.want)
		}
	}
}
