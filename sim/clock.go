package sim

import (
	"math"
	"time"
)

// ClockID is the id of the one simulation clock.
const ClockID = "default"

// MaxFactor is the largest accepted acceleration factor.
const MaxFactor = 1_000_000_000

// DateLayout is the layout of the clock's date strings, dd/MM/yyyy-HH:mm:ss.
const DateLayout = "02/01/2006-15:04:05"

// Bounds of simulated time, in ms since the epoch: the years 1 to 9999, in
// UTC and in the home's time zone (see timeBounds).
const (
	minStartMillis = -62135596800000 // 0001-01-01T00:00:00Z
	endMillis      = 253402300799999 // 9999-12-31T23:59:59.999Z
)

// timeBounds returns the first and the last instant of simulated time in a
// home whose dates print in loc, in ms since the epoch: the years 1 to 9999
// both in UTC and in loc, so that every date prints in [DateLayout] (and a
// home's script can be written). A start date or current time outside them
// is refused; a running clock, [Home.Advance] and [Home.RunUntil] stop at
// the last.
func timeBounds(loc *time.Location) (first, last int64) {
	first = max(minStartMillis, time.Date(1, 1, 1, 0, 0, 0, 0, loc).UnixMilli())
	last = min(endMillis, time.Date(9999, 12, 31, 23, 59, 59, 999e6, loc).UnixMilli())
	return first, last
}

// TimeSpan returns the first and the last instant of simulated time in a
// home whose dates print in loc (nil means UTC): the years 1 to 9999, both
// in UTC and in loc. A start date or current time outside them is refused;
// the clock stops at the last (see [Home.End]).
func TimeSpan(loc *time.Location) (first, last time.Time) {
	if loc == nil {
		loc = time.UTC
	}
	f, l := timeBounds(loc)
	return time.UnixMilli(f).In(loc), time.UnixMilli(l).In(loc)
}

// Clock is the state of the simulation clock as clients see it.
type Clock struct {
	// ID is the clock's id, "default".
	ID string `json:"id"`
	// StartDate is where simulated time started, in ms since the epoch;
	// StartDateStr is the same in [DateLayout], in the home's time zone.
	StartDateStr string `json:"startDateStr"`
	StartDate    int64  `json:"startDate"`
	// CurrentTime is the simulated time now, in ms since the epoch;
	// CurrentDateStr is the same in [DateLayout].
	CurrentDateStr string `json:"currentDateStr"`
	CurrentTime    int64  `json:"currentTime"`
	// Factor is how many times faster than the wall clock simulated time
	// runs live.
	Factor int `json:"factor"`
	// Pause is set while the clock is paused.
	Pause bool `json:"pause"`
}

// ClockUpdate is a partial change of the clock: a nil field keeps its value.
type ClockUpdate struct {
	// Pause pauses (true) or resumes (false) simulated time.
	Pause *bool
	// StartDate, in milliseconds since the Unix epoch, restarts simulated
	// time there: the current time becomes the start date.
	StartDate *int64
	// Factor is how many simulated milliseconds pass per real millisecond,
	// from 1 to [MaxFactor].
	Factor *int
	// CurrentTime, in milliseconds since the Unix epoch, moves simulated
	// time to that instant and keeps the start date (applied after
	// StartDate when both are given). It restores a clock as it stood;
	// the REST API does not offer it.
	CurrentTime *int64
}

// simClock maps wall time to simulated time. Simulated time is counted in
// milliseconds: current = start + elapsed, where elapsed is folded at the
// wall instant anchor and grows by factor × (wall − anchor) while running.
// Every change first folds the elapsed time up to now and re-anchors, so a
// change of factor or a pause never makes the current time jump.
type simClock struct {
	start   int64     // start date, ms since the epoch
	end     int64     // the last instant of simulated time (timeBounds)
	elapsed int64     // simulated ms elapsed at anchor
	anchor  time.Time // wall instant elapsed was folded at
	factor  int64
	paused  bool
}

// elapsedAt returns the simulated milliseconds elapsed at wall instant now;
// simulated time stops at the end of the year 9999.
func (c *simClock) elapsedAt(now time.Time) int64 {
	if c.paused {
		return c.elapsed
	}
	real := now.Sub(c.anchor)
	if real <= 0 {
		return c.elapsed
	}
	rest := c.rest()
	ns := int64(real)
	// factor × ns / 1e6, without overflowing: below safeMs any factor
	// fits; past it (over 53 days since the anchor), a product above rest
	// is not computed, the end being reached.
	const msNs = int64(time.Millisecond)
	const safeMs = math.MaxInt64 / MaxFactor / 2
	ms := ns / msNs
	if ms >= safeMs && ms > rest/c.factor {
		return c.elapsed + rest
	}
	return c.elapsed + min(ms*c.factor+(ns%msNs)*c.factor/msNs, rest)
}

// rest returns the simulated milliseconds left before the end of simulated
// time, from the anchor.
func (c *simClock) rest() int64 { return c.end - c.start - c.elapsed }

// wallUntil returns the first wall instant at which the running clock reads
// at least simulated time at. It is computed from the anchor, not from now,
// so that successive waits do not accumulate rounding.
func (c *simClock) wallUntil(at int64) time.Time {
	sim := at - c.start - c.elapsed
	if sim <= 0 {
		return c.anchor
	}
	ms := int64(time.Millisecond)
	// Smallest real ns with factor × ns / 1e6 >= sim: ceil(sim × 1e6 / factor).
	ns := (sim/c.factor)*ms + ((sim%c.factor)*ms+c.factor-1)/c.factor
	return c.anchor.Add(time.Duration(ns))
}

// nowMillis returns the simulated time at wall instant now.
func (c *simClock) nowMillis(now time.Time) int64 { return c.start + c.elapsedAt(now) }

// fold records the elapsed time up to now and re-anchors there.
func (c *simClock) fold(now time.Time) {
	c.elapsed = c.elapsedAt(now)
	c.anchor = now
}

// advance moves simulated time forward by d milliseconds, whatever the wall
// clock does, up to the end of simulated time.
func (c *simClock) advance(now time.Time, d int64) {
	c.fold(now)
	c.elapsed += min(d, c.rest())
}

func (c *simClock) snapshot(now time.Time, loc *time.Location) Clock {
	cur := c.nowMillis(now)
	return Clock{
		ID:             ClockID,
		StartDateStr:   time.UnixMilli(c.start).In(loc).Format(DateLayout),
		StartDate:      c.start,
		CurrentDateStr: time.UnixMilli(cur).In(loc).Format(DateLayout),
		CurrentTime:    cur,
		Factor:         int(c.factor),
		Pause:          c.paused,
	}
}

// validate checks u for a home whose dates print in loc.
func (u ClockUpdate) validate(loc *time.Location) error {
	first, last := timeBounds(loc)
	if u.Factor != nil && (*u.Factor < 1 || *u.Factor > MaxFactor) {
		return invalidf("factor must be an integer from 1 to %d, not %d", MaxFactor, *u.Factor)
	}
	if u.StartDate != nil && (*u.StartDate < first || *u.StartDate > last) {
		return invalidf("startDate %d is outside the years 1 to 9999", *u.StartDate)
	}
	if u.CurrentTime != nil && (*u.CurrentTime < first || *u.CurrentTime > last) {
		return invalidf("currentTime %d is outside the years 1 to 9999", *u.CurrentTime)
	}
	return nil
}

// apply changes the clock; u must be valid.
func (c *simClock) apply(now time.Time, u ClockUpdate) {
	c.fold(now)
	if u.StartDate != nil {
		c.start = *u.StartDate
		c.elapsed = 0
	}
	if u.CurrentTime != nil {
		c.elapsed = *u.CurrentTime - c.start
	}
	if u.Factor != nil {
		c.factor = int64(*u.Factor)
	}
	if u.Pause != nil {
		c.paused = *u.Pause
	}
}
