package sim_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pervasim/pervasim/sim"
)

// TestRunDrivesTheHomeLive runs the live driver on the real clock inside a
// synctest bubble, where time is fake and moves only when every goroutine
// is blocked: the heater must update exactly when simulated time reaches
// each period, at any factor, never while paused, and never drift.
func TestRunDrivesTheHomeLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := sim.MustNew(sim.Config{Location: time.UTC}) // the real clock, faked by the bubble
		mustZone(t, h, sim.ZoneSpec{ID: "room", RightX: 100, BottomY: 100, Variables: map[string]float64{"Volume": 100}})
		mustDevice(t, h, placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0}))
		mustDevice(t, h, placed("t", "Thermometer", 1, 1, nil))
		step := 1000 * 5 / (1200 * 100.0)
		updates := func() float64 { return (temperature(t, h, "room") - 293.15) / step }
		check := func(what string, want float64) {
			t.Helper()
			synctest.Wait()
			if got := updates(); !near(got, want) {
				t.Errorf("%s: %.6f updates, want %v", what, got, want)
			}
		}

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- h.Run(ctx) }()

		time.Sleep(4999 * time.Millisecond)
		check("4.999 s at factor 1", 0)
		time.Sleep(time.Millisecond)
		check("5 s at factor 1", 1)

		if _, err := h.UpdateClock(sim.ClockUpdate{Factor: ptr(60)}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // 60 simulated seconds
		check("then 1 s at factor 60", 13)

		if _, err := h.UpdateClock(sim.ClockUpdate{Pause: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour)
		check("an hour paused", 13)

		if _, err := h.UpdateClock(sim.ClockUpdate{Pause: ptr(false), Factor: ptr(7)}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Second) // 70 simulated seconds: 14 periods, none lost to rounding
		check("then 10 s at factor 7", 27)

		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	})
}

// TestRunAndAdvanceShareTheSchedule checks that a timer runs once whether
// the live driver or Advance reaches it first.
func TestRunAndAdvanceShareTheSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := sim.MustNew(sim.Config{Location: time.UTC})
		mustZone(t, h, sim.ZoneSpec{ID: "room", RightX: 100, BottomY: 100, Variables: map[string]float64{"Volume": 10}})
		mustDevice(t, h, placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0}))
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go h.Run(ctx)
		mustAdvance(t, h, 5*time.Second) // Advance runs the first update...
		time.Sleep(5 * time.Second)      // ...and the driver, 5 s later, only the second one
		synctest.Wait()
		step := 1000 * 5 / (1200 * 10.0)
		// 5 s advanced + 5 s of (fake) real time at factor 1: 2 updates, not 3.
		if got, want := temperature(t, h, "room"), 293.15+2*step; !near(got, want) {
			t.Errorf("Temperature = %v, want %v", got, want)
		}
	})
}

// TestRunKeepsUpAtAnyFactor: at a factor of a billion, a heater updating
// every simulated millisecond does not pin the driver: it passes over the
// timers at most once per MinLiveStep of real time, each heater update
// covering the span since the last; once the factor drops the work is that
// of the new factor, and paused there is none.
func TestRunKeepsUpAtAnyFactor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := sim.MustNew(sim.Config{Location: time.UTC})
		mustZone(t, h, sim.ZoneSpec{ID: "room", RightX: 100, BottomY: 100, Variables: map[string]float64{"Volume": 100}})
		mustDevice(t, h, placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0, "heater.updaterThread.period": 1.0}))
		sub := h.Subscribe(1 << 20)
		defer sub.Close()
		updates := func() int {
			n := 0
			for {
				select {
				case e := <-sub.C:
					if e.Type == sim.EventZoneVariableUpdated {
						n++
					}
				default:
					return n
				}
			}
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go h.Run(ctx)

		if _, err := h.UpdateClock(sim.ClockUpdate{Factor: ptr(sim.MaxFactor)}); err != nil {
			t.Fatal(err)
		}
		start := h.Now()
		time.Sleep(time.Second)
		synctest.Wait()
		passes := int(time.Second / sim.MinLiveStep)
		if n := updates(); n > passes+1 {
			t.Errorf("%d temperature updates in a real second at factor %d, want at most one per pass (%d)", n, sim.MaxFactor, passes)
		}
		if got := h.Now().Sub(start); got < time.Duration(sim.MaxFactor)*time.Second*9/10 {
			t.Errorf("simulated time moved %v in a real second, want it to keep up with the factor", got)
		}
		if got := temperature(t, h, "room"); got != sim.MaxTemperature {
			t.Errorf("Temperature after days of heating = %v, want the clamp %v", got, sim.MaxTemperature)
		}

		if _, err := h.UpdateClock(sim.ClockUpdate{Factor: ptr(1)}); err != nil {
			t.Fatal(err)
		}
		updates()
		time.Sleep(time.Second)
		synctest.Wait()
		if n := updates(); n > passes+1 {
			t.Errorf("%d updates in a real second back at factor 1, want at most %d", n, passes)
		}
		if _, err := h.UpdateClock(sim.ClockUpdate{Pause: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		updates()
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := updates(); n != 0 {
			t.Errorf("%d updates in an hour paused, want none", n)
		}
	})
}

// TestRunDueAsTheDriver: RunDue runs what is due by the current simulated
// time as a pass of the live driver does: a heater that fell due 12,000
// times under a fast clock updates once, over the whole span (Advance would
// run each period), a one-off timer runs, and time does not move.
func TestRunDueAsTheDriver(t *testing.T) {
	wall := clock.NewMock()
	h := sim.MustNew(sim.Config{Location: time.UTC, WallClock: wall, Factor: 1000})
	mustZone(t, h, sim.ZoneSpec{ID: "room", RightX: 100, BottomY: 100, Variables: map[string]float64{"Volume": 100000}})
	mustDevice(t, h, placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0}))
	sub := h.Subscribe(1 << 20)
	defer sub.Close()
	ran := false
	h.After(0, func() { ran = true })
	wall.Add(time.Minute) // 60,000 simulated seconds: 12,000 periods of 5 s
	before := h.Now()
	h.RunDue()
	if !ran {
		t.Error("the one-off timer due did not run")
	}
	if got := h.Now(); !got.Equal(before) {
		t.Errorf("simulated time moved from %v to %v", before, got)
	}
	n := 0
	for len(sub.C) > 0 {
		if e := <-sub.C; e.Type == sim.EventZoneVariableUpdated && e.ZoneID == "room" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d temperature updates, want 1 over the whole span", n)
	}
	// 1,000 W over 60,000 s into 100,000 m³: P·Δt / (1200·V) = 0.5 K.
	if got, want := temperature(t, h, "room"), 293.15+0.5; !near(got, want) {
		t.Errorf("Temperature = %v, want %v", got, want)
	}
}

// TestAfterNilPanicsAtOnce checks that After and DeviceContext.After given
// a nil function panic when called, as they document, not later in
// whatever drives the home (the panic of a nil call in Home.Run's goroutine
// would end a server, far from the mistake), and leave nothing scheduled.
func TestAfterNilPanicsAtOnce(t *testing.T) {
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock()})
	panics := func(name string, f func()) {
		t.Helper()
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "nil function") {
				t.Errorf("%s: recovered %v, want a panic about a nil function", name, r)
			}
		}()
		f()
	}
	panics("Home.After", func() { home.After(time.Second, nil) })
	called := false
	if err := home.Kinds().Register(sim.Kind{Name: "Timer", Behavior: sim.Behavior{Every: time.Second, Tick: func(c *sim.DeviceContext) {
		called = true
		panics("DeviceContext.After", func() { c.After(time.Second, nil) })
	}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := home.CreateDevice(sim.DeviceSpec{ID: "t", Type: "Timer"}); err != nil {
		t.Fatal(err)
	}
	if err := home.Advance(3 * time.Second); err != nil { // nothing nil left to call
		t.Fatal(err)
	}
	if !called {
		t.Error("the behaviour never ticked")
	}
}
