package sim_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

// TestOwnDerivedKeepsDefaultReadings: a built-in kind that reads on a
// schedule and has not read since what it reads changed shows its default
// (no alarm, 0 W, 0 dB), while the same device made anew, after what it
// reads, reads otherwise at once. A saved state (the home as a script, then
// OwnDerived put back) must give back the default it showed: OwnDerived
// keeps it.
func TestOwnDerivedKeepsDefaultReadings(t *testing.T) {
	for _, c := range []struct {
		name    string
		devices []sim.DeviceSpec // in creation order, the reader after its source
		change  string           // the source, turned on after the reader is made
		props   map[string]any
		reader  string
	}{
		{name: "flood sensor", reader: "fs",
			devices: []sim.DeviceSpec{placed("sp", "Sprinkler", 10, 10, nil), placed("fs", "FloodSensor", 20, 10, nil)},
			change:  "sp", props: map[string]any{"power_status": true}},
		{name: "power meter", reader: "m",
			devices: []sim.DeviceSpec{placed("h", "Heater", 10, 10, nil),
				placed("m", "PowerSwitchMeter", 20, 10, map[string]any{"powerSwitch.currentStatus": true})},
			change: "h", props: map[string]any{"heater.powerLevel": 1.0}},
		{name: "speaker", reader: "s",
			devices: []sim.DeviceSpec{placed("a", "AudioSource", 10, 10, nil),
				placed("s", "Speaker", 20, 10, map[string]any{"speaker.volume": 1.0})},
			change: "a", props: map[string]any{"audioSource.isPlaying": true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := scriptHome(t)
			mustZone(t, h, sim.ZoneSpec{ID: "z", RightX: 100, BottomY: 100})
			for _, d := range c.devices {
				mustDevice(t, h, d)
			}
			if _, err := h.UpdateDevice(c.change, sim.DeviceUpdate{Properties: c.props}); err != nil {
				t.Fatal(err)
			}
			restored := replayed(t, h)
			for id, props := range h.OwnDerived() {
				if err := restored.RestoreDerived(id, props); err != nil {
					t.Fatal(err)
				}
			}
			want, err := h.Device(c.reader)
			if err != nil {
				t.Fatal(err)
			}
			got, err := restored.Device(c.reader)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s restored (-want +got):\n%s", c.reader, diff)
			}
		})
	}
}
