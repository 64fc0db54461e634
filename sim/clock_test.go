package sim_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

func mustUpdateClock(tb testing.TB, h *sim.Home, u sim.ClockUpdate) sim.Clock {
	tb.Helper()
	c, err := h.UpdateClock(u)
	if err != nil {
		tb.Fatalf("UpdateClock(%+v) = %v, want nil error", u, err)
	}
	return c
}

// checkCurrent fails unless the clock's current time is want.
func checkCurrent(tb testing.TB, h *sim.Home, want int64) {
	tb.Helper()
	if got := h.Clock().CurrentTime; got != want {
		tb.Errorf("Clock().CurrentTime = %d, want %d (%+d ms)", got, want, got-want)
	}
	if got := h.Now().UnixMilli(); got != want {
		tb.Errorf("Now() = %d ms, want %d", got, want)
	}
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func TestClockDefaults(t *testing.T) {
	start := time.Date(2024, 5, 1, 8, 30, 0, 0, time.UTC)
	tests := []struct {
		name    string
		advance time.Duration // wall time before New
		cfg     sim.Config    // WallClock and Location are filled in
		want    sim.Clock
		after   int64 // CurrentTime one wall second later
	}{
		{
			name: "zero config: factor 1 from the wall clock's now",
			want: sim.Clock{ID: "default", StartDateStr: "01/01/1970-00:00:00", StartDate: 0,
				CurrentDateStr: "01/01/1970-00:00:00", CurrentTime: 0, Factor: 1},
			after: 1000,
		},
		{
			name:    "wall clock moved before New",
			advance: time.Hour,
			want: sim.Clock{ID: "default", StartDateStr: "01/01/1970-01:00:00", StartDate: 3_600_000,
				CurrentDateStr: "01/01/1970-01:00:00", CurrentTime: 3_600_000, Factor: 1},
			after: 3_601_000,
		},
		{
			name: "start date",
			cfg:  sim.Config{StartDate: start},
			want: sim.Clock{ID: "default", StartDateStr: "01/05/2024-08:30:00", StartDate: ms(start),
				CurrentDateStr: "01/05/2024-08:30:00", CurrentTime: ms(start), Factor: 1},
			after: ms(start) + 1000,
		},
		{
			name: "factor",
			cfg:  sim.Config{StartDate: start, Factor: 60},
			want: sim.Clock{ID: "default", StartDateStr: "01/05/2024-08:30:00", StartDate: ms(start),
				CurrentDateStr: "01/05/2024-08:30:00", CurrentTime: ms(start), Factor: 60},
			after: ms(start) + 60_000,
		},
		{
			name: "paused",
			cfg:  sim.Config{StartDate: start, Factor: 60, Paused: true},
			want: sim.Clock{ID: "default", StartDateStr: "01/05/2024-08:30:00", StartDate: ms(start),
				CurrentDateStr: "01/05/2024-08:30:00", CurrentTime: ms(start), Factor: 60, Pause: true},
			after: ms(start),
		},
		{
			name: "MaxFactor",
			cfg:  sim.Config{Factor: sim.MaxFactor},
			want: sim.Clock{ID: "default", StartDateStr: "01/01/1970-00:00:00",
				CurrentDateStr: "01/01/1970-00:00:00", Factor: sim.MaxFactor},
			after: 1000 * sim.MaxFactor,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mock := clock.NewMock()
			mock.Add(tt.advance)
			cfg := tt.cfg
			cfg.WallClock, cfg.Location = mock, time.UTC
			h, err := sim.New(cfg)
			if err != nil {
				t.Fatalf("New(%+v) = %v, want nil error", cfg, err)
			}
			if diff := cmp.Diff(tt.want, h.Clock()); diff != "" {
				t.Errorf("Clock() (-want +got):\n%s", diff)
			}
			mock.Add(time.Second)
			checkCurrent(t, h, tt.after)
		})
	}
}

func TestNewInvalidConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  sim.Config
	}{
		{"negative factor", sim.Config{Factor: -1}},
		{"factor above MaxFactor", sim.Config{Factor: sim.MaxFactor + 1}},
		{"start date in year 0", sim.Config{StartDate: time.Date(0, 12, 31, 23, 59, 59, 0, time.UTC)}},
		{"start date in year 10000", sim.Config{StartDate: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{"unknown physics", sim.Config{Physics: "weird"}},
		{"bad environment", sim.Config{Environment: &sim.EnvironmentUpdate{Sky: new("foggy")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.WallClock = clock.NewMock()
			h, err := sim.New(tt.cfg)
			if !errors.Is(err, sim.ErrInvalid) {
				t.Errorf("New(%+v) = %v, want an error wrapping %v", tt.cfg, err, sim.ErrInvalid)
			}
			if h != nil {
				t.Errorf("New(%+v) returned a home with its error", tt.cfg)
			}
			defer func() {
				if recover() == nil {
					t.Errorf("MustNew(%+v) did not panic", tt.cfg)
				}
			}()
			sim.MustNew(tt.cfg)
		})
	}
}

func TestClockFactor(t *testing.T) {
	tests := []struct {
		name    string
		factor  int
		advance time.Duration
		want    int64 // simulated ms elapsed
	}{
		{"factor 1, one second", 1, time.Second, 1000},
		{"factor 60, one second is one minute", 60, time.Second, 60_000},
		{"factor 60, one minute is one hour", 60, time.Minute, 3_600_000},
		{"factor 60, half a millisecond", 60, 500 * time.Microsecond, 30},
		{"factor 3, a third of a millisecond rounds down", 3, 333 * time.Microsecond, 0},
		{"MaxFactor, one minute", sim.MaxFactor, time.Minute, 60 * 1000 * sim.MaxFactor},
		{"MaxFactor, one day: simulated time ends with the year 9999", sim.MaxFactor, 24 * time.Hour, ms(time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, mock := newHome(t)
			c := mustUpdateClock(t, h, sim.ClockUpdate{Factor: ptr(tt.factor)})
			if c.Factor != tt.factor || c.CurrentTime != 0 {
				t.Errorf("UpdateClock(factor %d) = %+v, want factor %d at 0", tt.factor, c, tt.factor)
			}
			mock.Add(tt.advance)
			checkCurrent(t, h, tt.want)
		})
	}
}

func TestClockPauseResume(t *testing.T) {
	h, mock := newHome(t)
	mustUpdateClock(t, h, sim.ClockUpdate{Factor: ptr(10)})
	mock.Add(time.Second)
	checkCurrent(t, h, 10_000)

	c := mustUpdateClock(t, h, sim.ClockUpdate{Pause: ptr(true)})
	if !c.Pause || c.CurrentTime != 10_000 {
		t.Errorf("UpdateClock(pause) = %+v, want paused at 10000", c)
	}
	mock.Add(time.Hour)
	checkCurrent(t, h, 10_000)

	c = mustUpdateClock(t, h, sim.ClockUpdate{Pause: ptr(true)}) // pausing twice changes nothing
	if !c.Pause || c.CurrentTime != 10_000 {
		t.Errorf("UpdateClock(pause again) = %+v, want paused at 10000", c)
	}

	mustUpdateClock(t, h, sim.ClockUpdate{Factor: ptr(100)}) // a new factor while paused
	mock.Add(time.Hour)
	checkCurrent(t, h, 10_000)

	c = mustUpdateClock(t, h, sim.ClockUpdate{Pause: ptr(false)})
	if c.Pause || c.CurrentTime != 10_000 || c.Factor != 100 {
		t.Errorf("UpdateClock(resume) = %+v, want running at 10000, factor 100", c)
	}
	mock.Add(time.Second)
	checkCurrent(t, h, 110_000)
}

func TestClockFactorChangeDoesNotJump(t *testing.T) {
	h, mock := newHome(t)
	mock.Add(time.Second)
	checkCurrent(t, h, 1000)
	steps := []struct {
		factor    int
		advance   time.Duration
		wantAfter int64
	}{
		{60, time.Second, 61_000},
		{1, time.Second, 62_000},
		{1000, 1500 * time.Millisecond, 1_562_000},
		{2, time.Second, 1_564_000},
	}
	for _, s := range steps {
		before := h.Clock().CurrentTime
		c := mustUpdateClock(t, h, sim.ClockUpdate{Factor: ptr(s.factor)})
		if c.CurrentTime != before {
			t.Errorf("UpdateClock(factor %d).CurrentTime = %d, want %d (no jump)", s.factor, c.CurrentTime, before)
		}
		checkCurrent(t, h, before)
		mock.Add(s.advance)
		checkCurrent(t, h, s.wantAfter)
	}
	if got := h.Clock().StartDate; got != 0 {
		t.Errorf("Clock().StartDate = %d after factor changes, want 0", got)
	}
}

func TestClockSetStartDate(t *testing.T) {
	date := ms(time.Date(2030, 6, 15, 12, 0, 0, 0, time.UTC))
	tests := []struct {
		name    string
		update  sim.ClockUpdate
		advance time.Duration
		after   int64
	}{
		{"start date only", sim.ClockUpdate{StartDate: ptr(date)}, time.Second, date + 10_000},
		{"start date and factor", sim.ClockUpdate{StartDate: ptr(date), Factor: ptr(60)}, time.Second, date + 60_000},
		{"start date and pause", sim.ClockUpdate{StartDate: ptr(date), Pause: ptr(true)}, time.Hour, date},
		{"start date in the past", sim.ClockUpdate{StartDate: ptr(int64(-1))}, time.Second, -1 + 10_000},
		{"first instant of year 1", sim.ClockUpdate{StartDate: ptr(ms(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)))}, 0, ms(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC))},
		{"last second of year 9999", sim.ClockUpdate{StartDate: ptr(ms(time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC))), Pause: ptr(true)}, 0, ms(time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, mock := newHome(t)
			mustUpdateClock(t, h, sim.ClockUpdate{Factor: ptr(10)})
			mock.Add(5 * time.Second) // simulated time is 50 s past the start
			c := mustUpdateClock(t, h, tt.update)
			if c.StartDate != *tt.update.StartDate || c.CurrentTime != *tt.update.StartDate {
				t.Errorf("UpdateClock(%+v) = %+v, want StartDate and CurrentTime %d", tt.update, c, *tt.update.StartDate)
			}
			checkCurrent(t, h, *tt.update.StartDate)
			mock.Add(tt.advance)
			checkCurrent(t, h, tt.after)
		})
	}
}

func TestUpdateClockInvalidChangesNothing(t *testing.T) {
	year0 := ms(time.Date(0, 12, 31, 23, 59, 59, 999e6, time.UTC))
	year10000 := ms(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))
	tests := []struct {
		name   string
		update sim.ClockUpdate
	}{
		{"factor 0", sim.ClockUpdate{Factor: ptr(0)}},
		{"factor -1", sim.ClockUpdate{Factor: ptr(-1)}},
		{"factor MaxFactor+1", sim.ClockUpdate{Factor: ptr(sim.MaxFactor + 1)}},
		{"factor MinInt", sim.ClockUpdate{Factor: ptr(math.MinInt)}},
		{"start date in year 0", sim.ClockUpdate{StartDate: ptr(year0)}},
		{"start date in year 10000", sim.ClockUpdate{StartDate: ptr(year10000)}},
		{"start date MinInt64", sim.ClockUpdate{StartDate: ptr(int64(math.MinInt64))}},
		{"start date MaxInt64", sim.ClockUpdate{StartDate: ptr(int64(math.MaxInt64))}},
		{"pause + bad factor", sim.ClockUpdate{Pause: ptr(true), Factor: ptr(0)}},
		{"valid start date + bad factor", sim.ClockUpdate{StartDate: ptr(int64(0)), Factor: ptr(-5)}},
		{"valid factor + bad start date", sim.ClockUpdate{Factor: ptr(60), StartDate: ptr(year10000)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, mock := newHome(t)
			mustUpdateClock(t, h, sim.ClockUpdate{Factor: ptr(10)})
			mock.Add(time.Second)
			before := h.Clock()
			got, err := h.UpdateClock(tt.update)
			if !errors.Is(err, sim.ErrInvalid) {
				t.Fatalf("UpdateClock(%+v) = %v, want an error wrapping %v", tt.update, err, sim.ErrInvalid)
			}
			if diff := cmp.Diff(sim.Clock{}, got); diff != "" {
				t.Errorf("UpdateClock returned a clock with its error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, h.Clock()); diff != "" {
				t.Errorf("Clock() after failed update (-want +got):\n%s", diff)
			}
			mock.Add(time.Second)
			checkCurrent(t, h, before.CurrentTime+10_000)
		})
	}
}

func TestClockDateStrings(t *testing.T) {
	start := time.Date(2024, 3, 15, 13, 45, 30, 0, time.UTC)
	tests := []struct {
		name      string
		loc       *time.Location
		wantStart string
		wantLater string // 90 simulated seconds later
	}{
		{"UTC", time.UTC, "15/03/2024-13:45:30", "15/03/2024-13:47:00"},
		{"UTC+2", time.FixedZone("UTC+2", 2*3600), "15/03/2024-15:45:30", "15/03/2024-15:47:00"},
		{"UTC-10", time.FixedZone("UTC-10", -10*3600), "15/03/2024-03:45:30", "15/03/2024-03:47:00"},
		{"UTC+10:30 crosses midnight", time.FixedZone("UTC+10:30", 10*3600+1800), "16/03/2024-00:15:30", "16/03/2024-00:17:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mock := clock.NewMock()
			h, err := sim.New(sim.Config{WallClock: mock, StartDate: start, Location: tt.loc})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			c := h.Clock()
			if c.StartDateStr != tt.wantStart || c.CurrentDateStr != tt.wantStart {
				t.Errorf("Clock() dates = %q, %q, want %q for both", c.StartDateStr, c.CurrentDateStr, tt.wantStart)
			}
			if c.StartDate != ms(start) {
				t.Errorf("Clock().StartDate = %d, want %d whatever the zone", c.StartDate, ms(start))
			}
			mock.Add(90 * time.Second)
			c = h.Clock()
			if c.StartDateStr != tt.wantStart || c.CurrentDateStr != tt.wantLater {
				t.Errorf("Clock() dates 90 s later = %q, %q, want %q, %q", c.StartDateStr, c.CurrentDateStr, tt.wantStart, tt.wantLater)
			}
			if got := h.Now().Location(); got != tt.loc {
				t.Errorf("Now().Location() = %v, want %v", got, tt.loc)
			}
			if got := h.Now().Format(sim.DateLayout); got != tt.wantLater {
				t.Errorf("Now().Format(DateLayout) = %q, want %q", got, tt.wantLater)
			}
		})
	}
}

// TestClockCurrentTime: CurrentTime puts the clock back as it stood (the
// durable state restores it so), keeping the start date; timers move with
// it, and a date outside the years 1 to 9999 is refused.
func TestClockCurrentTime(t *testing.T) {
	h, mock := newHome(t)
	start, at := int64(1_366_279_200_000), int64(1_366_279_200_000+3_600_000)
	c := mustUpdateClock(t, h, sim.ClockUpdate{StartDate: &start, CurrentTime: &at, Factor: ptr(2)})
	if c.StartDate != start || c.CurrentTime != at {
		t.Errorf("clock %+v, want start %d and current %d", c, start, at)
	}
	fired := false
	h.After(time.Second, func() { fired = true })
	later := at + 60_000
	mustUpdateClock(t, h, sim.ClockUpdate{CurrentTime: &later})
	checkCurrent(t, h, later)
	if h.Clock().StartDate != start {
		t.Errorf("the start date moved to %d", h.Clock().StartDate)
	}
	mock.Add(500 * time.Millisecond) // one simulated second at factor 2
	h.RunUntil(h.Now())
	if !fired {
		t.Errorf("a timer one second ahead did not fire one second after the jump")
	}
	bad := int64(math.MaxInt64)
	if _, err := h.UpdateClock(sim.ClockUpdate{CurrentTime: &bad}); !errors.Is(err, sim.ErrInvalid) {
		t.Errorf("currentTime out of range = %v", err)
	}
}
