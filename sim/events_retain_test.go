package sim_test

import (
	"runtime"
	"testing"
	"weak"

	"github.com/benbjohnson/clock"

	"github.com/pervasim/pervasim/sim"
)

// The queue of events for the observers, whose array the home keeps
// between changes, holds no event once they are delivered, even when a
// change an observer made grew it onto another array while events still
// waited in the first: their snapshots (a device's may be megabytes) are
// let go.
func TestObserverQueueKeepsNoEvent(t *testing.T) {
	h := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Paused: true})
	if _, err := h.CreateZone(sim.ZoneSpec{ID: "kitchen", RightX: 10, BottomY: 10}); err != nil {
		t.Fatal(err)
	}
	var zones []weak.Pointer[sim.Zone]
	made := false
	defer h.Observe(func(e sim.Event) {
		if e.Zone != nil {
			zones = append(zones, weak.Make(e.Zone))
		}
		if made {
			return
		}
		made = true
		for _, id := range []string{"a", "b", "c"} { // the queue grows while two events wait
			if _, err := h.CreateZone(sim.ZoneSpec{ID: id, RightX: 1, BottomY: 1}); err != nil {
				t.Error(err)
			}
		}
	})()
	one, two := 1.0, 2.0
	if _, err := h.UpdateZone("kitchen", sim.ZoneUpdate{Variables: map[string]*float64{"Temperature": &one, "Illuminance": &two, "Pressure": &one}}); err != nil {
		t.Fatal(err)
	}
	if len(zones) < 5 {
		t.Fatalf("the observer saw %d zone snapshots", len(zones))
	}
	runtime.GC()
	for i, z := range zones {
		if z.Value() != nil {
			t.Errorf("the snapshot of event %d is kept", i)
		}
	}
	runtime.KeepAlive(h)
}
