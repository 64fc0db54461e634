package sim_test

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

// freeProps returns n free properties named <prefix>0 … <prefix>n-1.
func freeProps(prefix string, n int) map[string]any {
	m := make(map[string]any, n)
	for i := range n {
		m[fmt.Sprint(prefix, i)] = float64(i)
	}
	return m
}

// zoneVars returns n variables named <prefix>0 … <prefix>n-1.
func zoneVars(prefix string, n int) map[string]float64 {
	m := make(map[string]float64, n)
	for i := range n {
		m[fmt.Sprint(prefix, i)] = float64(i)
	}
	return m
}

// TestFreePropertiesBounded: a device holds at most MaxFreeProperties
// properties beside its kind's, and a zone at most MaxZoneVariables
// variables. Each change of one is an event carrying the whole device or
// zone, so without a bound one request adding tens of thousands to one of
// tens of thousands held gigabytes. A change past the bound is ErrInvalid
// and changes nothing; one that stays within it, or shrinks, passes.
func TestFreePropertiesBounded(t *testing.T) {
	const maxP, maxV = sim.MaxFreeProperties, sim.MaxZoneVariables
	ptr := func(v float64) *float64 { return &v }
	tests := []struct {
		name    string
		run     func(h *sim.Home) error
		invalid bool
	}{
		{"create device at the bound", func(h *sim.Home) error {
			_, err := h.CreateDevice(sim.DeviceSpec{ID: "new", Type: "Tablet", Properties: freeProps("p", maxP)})
			return err
		}, false},
		{"create device past the bound", func(h *sim.Home) error {
			_, err := h.CreateDevice(sim.DeviceSpec{ID: "new", Type: "Tablet", Properties: freeProps("p", maxP+1)})
			return err
		}, true},
		{"kind's own properties do not count", func(h *sim.Home) error {
			p := freeProps("p", maxP)
			p["heater.powerLevel"] = 0.5
			_, err := h.CreateDevice(sim.DeviceSpec{ID: "new", Type: "Heater", Properties: p})
			return err
		}, false},
		{"update past the bound", func(h *sim.Home) error {
			_, err := h.UpdateDevice("full", sim.DeviceUpdate{Properties: map[string]any{"one-more": 1.0}})
			return err
		}, true},
		{"update past the bound at once", func(h *sim.Home) error {
			_, err := h.UpdateDevice("empty", sim.DeviceUpdate{Properties: freeProps("q", 2*maxP)})
			return err
		}, true},
		{"update replacing one at the bound", func(h *sim.Home) error {
			_, err := h.UpdateDevice("full", sim.DeviceUpdate{Properties: map[string]any{"p0": nil, "other": 1.0}})
			return err
		}, false},
		{"update of a held property at the bound", func(h *sim.Home) error {
			_, err := h.UpdateDevice("full", sim.DeviceUpdate{Properties: map[string]any{"p1": "x"}})
			return err
		}, false},
		{"create zone at the bound", func(h *sim.Home) error {
			_, err := h.CreateZone(sim.ZoneSpec{ID: "new", RightX: 1, BottomY: 1, Variables: zoneVars("v", maxV)})
			return err
		}, false},
		{"create zone past the bound", func(h *sim.Home) error {
			_, err := h.CreateZone(sim.ZoneSpec{ID: "new", RightX: 1, BottomY: 1, Variables: zoneVars("v", maxV+1)})
			return err
		}, true},
		{"zone update past the bound", func(h *sim.Home) error {
			_, err := h.UpdateZone("full", sim.ZoneUpdate{Variables: map[string]*float64{"one-more": ptr(1)}})
			return err
		}, true},
		{"zone update replacing one at the bound", func(h *sim.Home) error {
			_, err := h.UpdateZone("full", sim.ZoneUpdate{Variables: map[string]*float64{"v0": nil, "other": ptr(1)}})
			return err
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Paused: true})
			mustDevice(t, h, sim.DeviceSpec{ID: "full", Type: "Tablet", Properties: freeProps("p", maxP)})
			mustDevice(t, h, sim.DeviceSpec{ID: "empty", Type: "Tablet"})
			if _, err := h.CreateZone(sim.ZoneSpec{ID: "full", RightX: 10, BottomY: 10, Variables: zoneVars("v", maxV)}); err != nil {
				t.Fatal(err)
			}
			devices, zones := h.Devices(), h.Zones()
			err := tt.run(h)
			if got := errors.Is(err, sim.ErrInvalid); got != tt.invalid {
				t.Fatalf("error = %v, want ErrInvalid: %v", err, tt.invalid)
			}
			if !tt.invalid {
				return
			}
			if diff := cmp.Diff(devices, h.Devices()); diff != "" {
				t.Errorf("a refused change changed the devices (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(zones, h.Zones()); diff != "" {
				t.Errorf("a refused change changed the zones (-before +after):\n%s", diff)
			}
		})
	}
}

// TestZoneVariablesBoundRestores: the variables the home sets itself
// (every zone's Temperature and Illuminance in the realistic model) do not
// count against MaxZoneVariables, so a zone at the bound saved as a script
// restores: the script creates the zone, which gains them, before it adds
// the others one by one. Counting them refused the last of those, and a
// -state directory holding such a home could not be opened.
func TestZoneVariablesBoundRestores(t *testing.T) {
	for _, physics := range []sim.Physics{sim.PhysicsContract, sim.PhysicsRealistic} {
		t.Run(string(physics), func(t *testing.T) {
			h := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Paused: true, Physics: physics})
			if _, err := h.CreateZone(sim.ZoneSpec{ID: "z", RightX: 100, BottomY: 100, Variables: zoneVars("v", sim.MaxZoneVariables)}); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := sim.WriteScript(&buf, h, time.UTC); err != nil {
				t.Fatal(err)
			}
			restored := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Paused: true, Physics: physics})
			s, err := restored.ParseLargeScript(&buf)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range s.Actions {
				if err := a.Apply(restored); err != nil {
					t.Fatalf("restoring: %v", err)
				}
			}
			if diff := cmp.Diff(h.Zones(), restored.Zones()); diff != "" {
				t.Errorf("restored zones differ (-saved +restored):\n%s", diff)
			}
			// One more of the zone's own is still refused.
			one := 1.0
			if _, err := restored.UpdateZone("z", sim.ZoneUpdate{Variables: map[string]*float64{"one-more": &one}}); !errors.Is(err, sim.ErrInvalid) {
				t.Errorf("one past the bound: error = %v, want ErrInvalid", err)
			}
		})
	}
}

// TestDeviceChangeEventsShareTheDevice: the events of one change of many
// properties of a big device show the device after the change, and cost
// about one copy of it, not one each: 500 changed properties of a device
// holding 1,000 arrays of 64 numbers made 500 deep copies (some 600 MB).
func TestDeviceChangeEventsShareTheDevice(t *testing.T) {
	h := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Paused: true})
	props := make(map[string]any, sim.MaxFreeProperties)
	for i := range sim.MaxFreeProperties {
		a := make([]any, 64)
		for j := range a {
			a[j] = float64(j)
		}
		props[fmt.Sprint("p", i)] = a
	}
	mustDevice(t, h, sim.DeviceSpec{ID: "big", Type: "Tablet", Properties: props})
	sub := h.Subscribe(1000)
	defer sub.Close()
	change := make(map[string]any, 500)
	for i := range 500 {
		change[fmt.Sprint("p", i)] = float64(i)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := h.UpdateDevice("big", sim.DeviceUpdate{Properties: change}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("one update of 500 properties allocated %d MB, want under 64", n>>20)
	}
	for range 500 {
		e := <-sub.C
		if e.Type != sim.EventDevicePropertyUpdated || e.Value != change[e.Property] {
			t.Fatalf("event %s %s = %v, want %s = %v", e.Type, e.Property, e.Value, sim.EventDevicePropertyUpdated, change[e.Property])
		}
		if e.Device.Properties["p0"] != 0.0 || e.Device.Properties["p499"] != 499.0 {
			t.Fatalf("event %s shows the device before the whole change: p0=%v p499=%v", e.Property, e.Device.Properties["p0"], e.Device.Properties["p499"])
		}
		if got, ok := e.OldValue.([]any); !ok || len(got) != 64 {
			t.Fatalf("event %s: old value %v, want the array", e.Property, e.OldValue)
		}
	}
}
