package sim_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

// TestFollowingSensorEventsOldValues checks the device-property-updated
// events of a sensor whose reading follows a zone variable when that
// variable appears or goes: each carries the reading the sensor had
// before (not the variable's absence, nil), and a reading that does not
// change is no event (a Thermometer that read the 293.15 of a zone
// without Temperature, when the zone gets its Temperature at 293.15).
func TestFollowingSensorEventsOldValues(t *testing.T) {
	type change struct {
		Property      string
		Value, OldVal any
	}
	tests := []struct {
		name   string
		setup  func(t *testing.T, h *sim.Home)
		change func(t *testing.T, h *sim.Home)
		want   []change
	}{
		{
			name: "a thermometer moved into a zone without Temperature",
			setup: func(t *testing.T, h *sim.Home) {
				mustZone(t, h, rect("z", 0, 0, 100, 100))
				mustDevice(t, h, placed("t", "Thermometer", 150, 50, nil))
			},
			change: func(t *testing.T, h *sim.Home) {
				if _, err := h.UpdateDevice("t", sim.DeviceUpdate{PositionX: ptr(50)}); err != nil {
					t.Fatal(err)
				}
			},
			want: []change{{"current_temperature", 293.15, -1.0}},
		},
		{
			name: "a zone resized over a thermometer",
			setup: func(t *testing.T, h *sim.Home) {
				mustZone(t, h, rect("z", 0, 0, 10, 10))
				mustDevice(t, h, placed("t", "Thermometer", 50, 50, nil))
			},
			change: func(t *testing.T, h *sim.Home) {
				if _, err := h.UpdateZone("z", sim.ZoneUpdate{RightX: ptr(100), BottomY: ptr(100)}); err != nil {
					t.Fatal(err)
				}
			},
			want: []change{{"current_temperature", 293.15, -1.0}},
		},
		{
			name: "an Illuminance set by hand where a photometer read 0",
			setup: func(t *testing.T, h *sim.Home) {
				mustZone(t, h, rect("z", 0, 0, 100, 100))
				mustDevice(t, h, placed("p", "Photometer", 50, 50, nil))
				if _, err := h.UpdateZone("z", sim.ZoneUpdate{Variables: map[string]*float64{"Illuminance": nil}}); err != nil {
					t.Fatal(err)
				}
			},
			change: func(t *testing.T, h *sim.Home) {
				if _, err := h.UpdateZone("z", sim.ZoneUpdate{Variables: map[string]*float64{"Illuminance": ptr(55.0)}}); err != nil {
					t.Fatal(err)
				}
			},
			want: []change{{"current_illuminance", 55.0, 0.0}},
		},
		{
			name: "a Temperature removed",
			setup: func(t *testing.T, h *sim.Home) {
				mustZone(t, h, rect("z", 0, 0, 100, 100))
				mustDevice(t, h, placed("t", "Thermometer", 50, 50, nil))
				if _, err := h.UpdateZone("z", sim.ZoneUpdate{Variables: map[string]*float64{"Temperature": ptr(300.0)}}); err != nil {
					t.Fatal(err)
				}
			},
			change: func(t *testing.T, h *sim.Home) {
				if _, err := h.UpdateZone("z", sim.ZoneUpdate{Variables: map[string]*float64{"Temperature": nil}}); err != nil {
					t.Fatal(err)
				}
			},
			want: []change{{"current_temperature", 293.15, 300.0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			tt.setup(t, h)
			var got []change
			stop := h.Observe(func(e sim.Event) {
				if e.Type == sim.EventDevicePropertyUpdated && e.Property != "Location" {
					got = append(got, change{e.Property, e.Value, e.OldValue})
				}
			})
			defer stop()
			tt.change(t, h)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("device-property-updated events (-want +got):\n%s", diff)
			}
		})
	}
}
