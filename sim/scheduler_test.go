package sim_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

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
