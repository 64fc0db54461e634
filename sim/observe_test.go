package sim_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

// TestObserve checks that observers see every event in order, on the
// changing goroutine, may act on the home, and get the events of their
// own reactions after they return.
func TestObserve(t *testing.T) {
	h, _ := newHome(t)
	mustZone(t, h, rect("hall", 0, 0, 100, 100))
	mustDevice(t, h, placed("ps", "PresenceSensor", 10, 10, nil))
	mustDevice(t, h, placed("light", "BinaryLight", 50, 50, nil))
	var seen []string
	depth := 0
	stop := h.Observe(func(e sim.Event) {
		depth++
		defer func() { depth-- }()
		if depth > 1 {
			t.Errorf("observer called re-entrantly with %s", e.Type)
		}
		seen = append(seen, string(e.Type)+" "+e.DeviceID+e.PersonID+" "+e.Property)
		// A tiny application: the light follows the presence sensor.
		if e.DeviceID == "ps" && e.Property == "sensed_presence" {
			if _, err := h.UpdateDevice("light", sim.DeviceUpdate{Properties: map[string]any{"power_status": e.Value}}); err != nil {
				t.Error(err)
			}
		}
	})
	mustPerson(t, h, sim.PersonSpec{ID: "al", Type: "Man", PositionX: ptr(20), PositionY: ptr(20)})
	// Delivered before CreatePerson returned: the light is already on.
	if on := mustGetDevice(t, h, "light").Properties["power_status"]; on != true {
		t.Errorf("light power_status = %v right after the person came in, want true", on)
	}
	want := []string{
		"person-added al ",
		"device-property-updated ps sensed_presence",
		"device-property-updated light power_status", // the reaction, after the observer returned
		"zone-variable-updated  Illuminance",
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	stop()
	stop()
	seen = nil
	mustUpdatePerson(t, h, "al", sim.PersonUpdate{PositionX: ptr(500)})
	if len(seen) != 0 {
		t.Errorf("stopped observer saw %v", seen)
	}
}

// TestObserveDuringAdvance checks that a physics event reaches an observer
// during Advance, at the time of the update that caused it, before later
// updates run.
func TestObserveDuringAdvance(t *testing.T) {
	h, _ := newHome(t)
	mustZone(t, h, sim.ZoneSpec{ID: "room", RightX: 100, BottomY: 100, Variables: map[string]float64{"Volume": 10}})
	mustDevice(t, h, placed("t", "Thermometer", 10, 10, nil))
	mustDevice(t, h, placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0}))
	start := h.Now()
	var offsets []time.Duration
	h.Observe(func(e sim.Event) {
		if e.Type == sim.EventDevicePropertyUpdated && e.DeviceID == "t" {
			offsets = append(offsets, h.Now().Sub(start))
			// Switch the heater off after its second update.
			if len(offsets) == 2 {
				h.UpdateDevice("h", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": 0.0}})
			}
		}
	})
	mustAdvance(t, h, time.Minute)
	if diff := cmp.Diff([]time.Duration{5 * time.Second, 10 * time.Second}, offsets); diff != "" {
		t.Errorf("reading updates seen at (-want +got):\n%s", diff)
	}
}
