package sim_test

import (
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

// TestWriteScriptRemovedVariables checks that a zone whose maintained
// variables (Temperature, Illuminance, Noise, Electricity) were removed
// through the API comes back without them: the state directory restores its
// home from this script, and the variables a zone gains as the script
// creates it (realistic model) or places devices in it must not appear.
func TestWriteScriptRemovedVariables(t *testing.T) {
	for _, c := range []struct {
		name    string
		physics sim.Physics
		devices []sim.DeviceSpec
		remove  []string
		faulty  string // a device to make faulty before the removal
	}{
		{name: "realistic, empty zone, Temperature removed", physics: sim.PhysicsRealistic,
			remove: []string{"Temperature"}},
		{name: "realistic, empty zone, both removed", physics: sim.PhysicsRealistic,
			remove: []string{"Temperature", "Illuminance"}},
		{name: "contract, thermometer and photometer", physics: sim.PhysicsContract,
			devices: []sim.DeviceSpec{placed("t", "Thermometer", 5, 5, nil), placed("ph", "Photometer", 6, 6, nil)},
			remove:  []string{"Temperature", "Illuminance"}},
		{name: "contract, a light", physics: sim.PhysicsContract,
			devices: []sim.DeviceSpec{placed("l", "BinaryLight", 5, 5, map[string]any{"power_status": true})},
			remove:  []string{"Illuminance"}},
		{name: "contract, a siren", physics: sim.PhysicsContract,
			devices: []sim.DeviceSpec{placed("s", "Siren", 5, 5, map[string]any{"siren.status": true})},
			remove:  []string{"Noise"}},
		{name: "realistic, a recording camera", physics: sim.PhysicsRealistic,
			devices: []sim.DeviceSpec{placed("c", "Camera", 5, 5, map[string]any{"camera.recording": true})},
			remove:  []string{"Electricity", "Temperature", "Illuminance"}},
		{name: "contract, a faulty thermometer", physics: sim.PhysicsContract,
			devices: []sim.DeviceSpec{placed("t", "Thermometer", 5, 5, nil)},
			remove:  []string{"Temperature"}, faulty: "t"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC, Physics: c.physics})
			if _, err := h.CreateZone(sim.ZoneSpec{ID: "k", LeftX: 0, TopY: 0, RightX: 10, BottomY: 10}); err != nil {
				t.Fatal(err)
			}
			for _, d := range c.devices {
				if _, err := h.CreateDevice(d); err != nil {
					t.Fatal(err)
				}
			}
			if c.faulty != "" {
				if _, err := h.UpdateDevice(c.faulty, sim.DeviceUpdate{Fault: ptr("yes")}); err != nil {
					t.Fatal(err)
				}
			}
			vars := map[string]*float64{}
			for _, k := range c.remove {
				vars[k] = nil
			}
			if _, err := h.UpdateZone("k", sim.ZoneUpdate{Variables: vars}); err != nil {
				t.Fatal(err)
			}

			restored := replayed(t, h)
			if diff := cmp.Diff(h.Zones(), restored.Zones()); diff != "" {
				t.Errorf("Zones() restored (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(h.Devices(), restored.Devices()); diff != "" {
				t.Errorf("Devices() restored (-want +got):\n%s", diff)
			}
		})
	}
}
