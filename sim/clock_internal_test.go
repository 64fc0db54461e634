package sim

import (
	"io"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
)

// TestWallUntil checks that wallUntil returns the first wall instant at
// which the clock reads at least the target: the clock reads >= at there,
// and < at one nanosecond before.
func TestWallUntil(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	anchor := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 100000 {
		c := simClock{start: r.Int64N(1e12), elapsed: r.Int64N(1e6), end: endMillis, anchor: anchor, factor: 1 + r.Int64N(MaxFactor)}
		if r.IntN(4) == 0 {
			c.factor = 1 + r.Int64N(100)
		}
		at := c.start + c.elapsed + 1 + r.Int64N(1e7)
		w := c.wallUntil(at)
		if got := c.nowMillis(w); got < at {
			t.Fatalf("%+v: clock at wallUntil(%d) reads %d", c, at, got)
		}
		if got := c.nowMillis(w.Add(-time.Nanosecond)); got >= at {
			t.Fatalf("%+v: clock 1 ns before wallUntil(%d) already reads %d", c, at, got)
		}
	}
}

// TestClockStopsAtTheEnd checks that simulated time ends with the year
// 9999: elapsedAt neither passes endMillis nor overflows, whatever the
// factor and however long the clock runs, and advance stops there too.
func TestClockStopsAtTheEnd(t *testing.T) {
	anchor := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		clock simClock
		real  time.Duration
		want  int64
	}{
		{"ten seconds before, factor 1000", simClock{start: endMillis - 10_000, end: endMillis, anchor: anchor, factor: 1000}, time.Second, endMillis},
		{"before the end, factor 1000", simClock{start: endMillis - 10_000, end: endMillis, anchor: anchor, factor: 1000}, 9 * time.Millisecond, endMillis - 1_000},
		{"at the end", simClock{start: endMillis, end: endMillis, anchor: anchor, factor: 1}, time.Hour, endMillis},
		{"year 1, fastest factor, 290 years of real time", simClock{start: minStartMillis, end: endMillis, anchor: anchor, factor: MaxFactor}, time.Duration(math.MaxInt64), endMillis},
		{"elapsed kept, fastest factor", simClock{start: 0, elapsed: 1e12, end: endMillis, anchor: anchor, factor: MaxFactor}, 100 * 24 * time.Hour, endMillis},
		{"ten and a half ms at factor 1000, ten seconds before", simClock{start: endMillis - 10_000, end: endMillis, anchor: anchor, factor: 1000}, 10*time.Millisecond + 500*time.Microsecond, endMillis},
		{"paused", simClock{start: endMillis - 10_000, end: endMillis, anchor: anchor, factor: 1000, paused: true}, time.Hour, endMillis - 10_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.clock
			if got := c.nowMillis(anchor.Add(tt.real)); got != tt.want {
				t.Errorf("nowMillis after %v = %d, want %d (%+d ms)", tt.real, got, tt.want, got-tt.want)
			}
			c.advance(anchor, math.MaxInt64/2) // paused or not
			if got := c.nowMillis(anchor); got != endMillis {
				t.Errorf("nowMillis after advance = %d, want the end %d", got, endMillis)
			}
		})
	}
}

// TestHomeAtTheEndOfTime checks a home whose clock reaches the end of the
// year 9999: it reads the end, a timer due after it never runs (Advance
// stops there, and the live driver has nothing to wait for rather than
// waking at once, again and again), and its script can still be written.
func TestHomeAtTheEndOfTime(t *testing.T) {
	mock := clock.NewMock()
	h := MustNew(Config{WallClock: mock, Location: time.UTC})
	start := int64(endMillis - 10_000)
	if _, err := h.UpdateClock(ClockUpdate{StartDate: &start, Factor: ptrTo(1000)}); err != nil {
		t.Fatal(err)
	}
	ran := false
	h.After(20*time.Second, func() { ran = true })
	mock.Add(time.Second) // 1,000 simulated seconds: past the end
	if got := h.Clock().CurrentTime; got != endMillis {
		t.Errorf("CurrentTime = %d, want the end %d", got, endMillis)
	}
	if c := h.Clock(); c.CurrentDateStr != "31/12/9999-23:59:59" {
		t.Errorf("CurrentDateStr = %q, want 31/12/9999-23:59:59", c.CurrentDateStr)
	}
	h.mu.Lock()
	wait, ok := h.nextWaitLocked()
	h.mu.Unlock()
	if ok {
		t.Errorf("nextWaitLocked() = %v, true; want nothing to wait for after the end", wait)
	}
	if err := h.Advance(24 * time.Hour); err != nil {
		t.Fatalf("Advance at the end = %v", err)
	}
	if ran {
		t.Error("a timer due after the end of time ran")
	}
	if got := h.Clock().CurrentTime; got != endMillis {
		t.Errorf("CurrentTime after Advance = %d, want the end %d", got, endMillis)
	}
	if err := WriteScript(io.Discard, h, time.UTC); err != nil {
		t.Errorf("WriteScript at the end = %v", err)
	}
}

func ptrTo[T any](v T) *T { return &v }

func TestTimeBounds(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skip(err)
	}
	newYork, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip(err)
	}
	for _, loc := range []*time.Location{time.UTC, tokyo, newYork} {
		first, last := timeBounds(loc)
		for _, at := range []int64{first, last} {
			for _, l := range []*time.Location{time.UTC, loc} {
				if y := time.UnixMilli(at).In(l).Year(); y < 1 || y > 9999 {
					t.Errorf("%v: bound %d is in the year %d in %v", loc, at, y, l)
				}
			}
		}
		if y := time.UnixMilli(last + 1).In(loc).Year(); y <= 9999 && time.UnixMilli(last+1).UTC().Year() <= 9999 {
			t.Errorf("%v: the instant after the last, %d, is still in 9999 both in UTC and in the zone", loc, last+1)
		}
		if y := time.UnixMilli(first - 1).In(loc).Year(); y >= 1 && time.UnixMilli(first-1).UTC().Year() >= 1 {
			t.Errorf("%v: the instant before the first, %d, is still in the year 1 both in UTC and in the zone", loc, first-1)
		}
	}
	if want := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(); minStartMillis != want {
		t.Errorf("minStartMillis = %d, want %d", minStartMillis, want)
	}
	if want := time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC).UnixMilli(); endMillis != want {
		t.Errorf("endMillis = %d, want %d", endMillis, want)
	}
}

// TestEndOfTimeInTheHomesZone: in a home east of UTC, simulated time ends
// with the zone's year 9999, so that its dates print and its script can be
// written; in one west of it, it starts with the zone's year 1.
func TestEndOfTimeInTheHomesZone(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skip(err)
	}
	mock := clock.NewMock()
	h := MustNew(Config{WallClock: mock, Location: tokyo})
	start := time.Date(9999, 12, 31, 23, 0, 0, 0, tokyo).UnixMilli()
	if _, err := h.UpdateClock(ClockUpdate{StartDate: &start, Factor: ptrTo(1000)}); err != nil {
		t.Fatal(err)
	}
	mock.Add(time.Hour)
	if c := h.Clock(); c.CurrentDateStr != "31/12/9999-23:59:59" || h.End().UnixMilli() != c.CurrentTime {
		t.Errorf("clock %+v, End %v; want it stopped at the end of 9999 in Tokyo", c, h.End())
	}
	if err := WriteScript(io.Discard, h, tokyo); err != nil {
		t.Errorf("WriteScript at the end = %v", err)
	}
	utcEnd := int64(endMillis)
	if _, err := h.UpdateClock(ClockUpdate{StartDate: &utcEnd}); err == nil {
		t.Error("a start date in the year 10000 of the home's zone was taken")
	}
	if err := h.RunUntil(time.UnixMilli(utcEnd)); err != nil || h.Now().UnixMilli() != h.End().UnixMilli() {
		t.Errorf("RunUntil past the end = %v, now %v; want nil and the end %v", err, h.Now(), h.End())
	}

	newYork, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip(err)
	}
	h = MustNew(Config{WallClock: mock, Location: newYork})
	first := int64(minStartMillis)
	if _, err := h.UpdateClock(ClockUpdate{StartDate: &first}); err == nil {
		t.Error("a start date in the year 0 of the home's zone was taken")
	}
}

// TestRunUntilFarAway: RunUntil reaches an instant more than 292 years away
// (more than a time.Duration holds).
func TestRunUntilFarAway(t *testing.T) {
	h := MustNew(Config{WallClock: clock.NewMock(), Location: time.UTC, Paused: true})
	to := time.Date(2600, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := h.RunUntil(to); err != nil {
		t.Fatalf("RunUntil(%v) = %v", to, err)
	}
	if !h.Now().Equal(to) {
		t.Errorf("Now() = %v, want %v", h.Now(), to)
	}
}

// TestRunUntilBeyondMillis: RunUntil takes an instant past what int64
// milliseconds hold (t.UnixMilli overflows) as past the end of simulated
// time, not as before now.
func TestRunUntilBeyondMillis(t *testing.T) {
	h := MustNew(Config{WallClock: clock.NewMock(), Location: time.UTC, Paused: true})
	for _, to := range []time.Time{time.Unix(1<<62, 0), time.Unix(math.MaxInt64/1000+1, 0)} {
		if err := h.RunUntil(to); err != nil {
			t.Fatalf("RunUntil(%v) = %v", to, err)
		}
		if !h.Now().Equal(h.End()) {
			t.Errorf("after RunUntil(%v), Now() = %v, want the end %v", to, h.Now(), h.End())
		}
	}
	if err := h.RunUntil(time.Unix(-1<<62, 0)); err == nil {
		t.Error("RunUntil(the far past) = nil, want an error")
	}
}

// TestTimeSpan: TimeSpan gives timeBounds as times in loc, UTC for nil.
func TestTimeSpan(t *testing.T) {
	for _, loc := range []*time.Location{nil, time.UTC, time.FixedZone("east", 14*3600), time.FixedZone("west", -12*3600)} {
		want := loc
		if want == nil {
			want = time.UTC
		}
		f, l := timeBounds(want)
		first, last := TimeSpan(loc)
		if first.UnixMilli() != f || last.UnixMilli() != l || first.Location() != want || last.Location() != want {
			t.Errorf("TimeSpan(%v) = %v, %v; want %d, %d in %v", loc, first, last, f, l, want)
		}
	}
}

// TestLocation: a home's zone is its Config's, time.Local when none.
func TestLocation(t *testing.T) {
	tokyo := time.FixedZone("Tokyo", 9*3600)
	for _, c := range []struct{ given, want *time.Location }{{nil, time.Local}, {time.UTC, time.UTC}, {tokyo, tokyo}} {
		if got := MustNew(Config{WallClock: clock.NewMock(), Location: c.given}).Location(); got != c.want {
			t.Errorf("Location() with Config.Location %v = %v, want %v", c.given, got, c.want)
		}
	}
}
