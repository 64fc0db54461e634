package sim_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pervasim/pervasim/sim"
)

// TestObserverPanicLeavesHomeUsable checks that an observer that panics,
// or ends its goroutine as t.Fatal does, whether the change came from a
// method or from a timer under Advance, hands its panic to the caller and
// leaves the home usable, rather than kill the process with "Unlock of
// unlocked RWMutex".
func TestObserverPanicLeavesHomeUsable(t *testing.T) {
	for _, tc := range []struct {
		name   string
		goexit bool
		timer  bool
	}{
		{"panic in a method", false, false},
		{"goexit in a method", true, false},
		{"panic under Advance", false, true},
		{"goexit under Advance", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := sim.MustNew(sim.Config{WallClock: clock.NewMock()})
			if !tc.timer {
				stop := home.Observe(func(sim.Event) {
					if tc.goexit {
						runtime.Goexit()
					}
					panic("observer failed")
				})
				change := func() { home.CreateZone(sim.ZoneSpec{ID: "a", RightX: 10, BottomY: 10}) }
				recovered, exited := call(change)
				if tc.goexit != exited || tc.goexit == (recovered != nil) {
					t.Fatalf("recovered %v, goroutine ended %v", recovered, exited)
				}
				stop()
			} else {
				if _, err := home.CreateZone(sim.ZoneSpec{ID: "a", RightX: 10, BottomY: 10}); err != nil {
					t.Fatal(err)
				}
				home.After(time.Minute, func() { home.CreatePerson(sim.PersonSpec{ID: "p", Type: "Man"}) })
				stop := home.Observe(func(e sim.Event) {
					if e.Type != sim.EventPersonAdded {
						return
					}
					if tc.goexit {
						runtime.Goexit()
					}
					panic("observer failed")
				})
				recovered, exited := call(func() { home.Advance(time.Hour) })
				if tc.goexit != exited || tc.goexit == (recovered != nil) {
					t.Fatalf("recovered %v, goroutine ended %v", recovered, exited)
				}
				stop()
			}
			// The home still works, its clock moves, observers are called.
			before := home.Now()
			if err := home.Advance(time.Minute); err != nil {
				t.Fatal(err)
			}
			if got := home.Now().Sub(before); got != time.Minute {
				t.Errorf("after the panic, Advance(1m) moved the clock %v", got)
			}
			seen := 0
			stop := home.Observe(func(sim.Event) { seen++ })
			defer stop()
			if _, err := home.CreateZone(sim.ZoneSpec{ID: "b", RightX: 10, BottomY: 10}); err != nil {
				t.Fatal(err)
			}
			if seen == 0 {
				t.Error("an observer added after the panic saw nothing")
			}
		})
	}
}

// call runs f on a goroutine of its own and returns what it panicked with,
// or whether it ended its goroutine.
func call(f func()) (recovered any, exited bool) {
	done := make(chan struct{})
	normal := false
	go func() {
		defer close(done)
		defer func() { recovered = recover() }()
		f()
		normal = true
	}()
	<-done
	return recovered, !normal && recovered == nil
}

func TestObserveNilPanicsAtOnce(t *testing.T) {
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock()})
	defer func() {
		if recover() == nil {
			t.Error("Observe(nil) did not panic")
		}
	}()
	home.Observe(nil)
}

// TestObserverGoexitUnderRun checks that an observer that ends the live
// driver's goroutine (t.Fatal in an Observe callback, the change made by a
// timer under Run) leaves the home usable: Run used to end with the home's
// lock held, and every later call waited for ever.
func TestObserverGoexitUnderRun(t *testing.T) {
	home := sim.MustNew(sim.Config{})
	home.After(time.Millisecond, func() { home.CreateZone(sim.ZoneSpec{ID: "a", RightX: 10, BottomY: 10}) })
	stop := home.Observe(func(e sim.Event) {
		if e.Type == sim.EventZoneAdded {
			runtime.Goexit()
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		home.Run(ctx)
	}()
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the timer never ran")
	}
	now := make(chan time.Time, 1)
	go func() { now <- home.Now() }()
	select {
	case <-now:
	case <-time.After(10 * time.Second):
		t.Fatal("the home is locked for good after its live driver's goroutine ended")
	}
	stop()
}
