package sim_test

import (
	"errors"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

// TestReadersDoNotSerialise holds one read open (inside ViewDevice) and
// checks that other reads still complete meanwhile: readers share the
// home's lock. A change, which must wait for the open read, completes once
// it closes.
func TestReadersDoNotSerialise(t *testing.T) {
	h := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	mustZone(t, h, rect("kitchen", 0, 0, 100, 100))
	mustDevice(t, h, placed("heater", "Heater", 10, 10, nil))
	inside, release := make(chan struct{}), make(chan struct{})
	go h.ViewDevice("heater", func(*sim.Device, sim.Props) {
		close(inside)
		<-release
	})
	<-inside
	reads := make(chan error, 1)
	go func() {
		_, err := h.Device("heater")
		if err == nil {
			_, err = h.Zone("kitchen")
		}
		h.Zones()
		h.Devices()
		h.Clock()
		reads <- err
	}()
	select {
	case err := <-reads:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		close(release)
		t.Fatal("reads waited for another read to finish")
	}
	changed := make(chan error, 1)
	go func() {
		_, err := h.UpdateDevice("heater", sim.DeviceUpdate{Name: new("radiator")})
		changed <- err
	}()
	close(release)
	if err := <-changed; err != nil {
		t.Fatal(err)
	}
	if d, _ := h.Device("heater"); d.Name != "radiator" {
		t.Fatalf("name %q after the update", d.Name)
	}
}

// TestViewsShowTheSnapshots checks that EachDevice and ViewDevice show each
// device as Devices and Device return it: its fields, and through Props its
// properties in name order, sensor readings (a faulty sensor's frozen one
// included) in place of the stored values.
func TestViewsShowTheSnapshots(t *testing.T) {
	h := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	mustZone(t, h, sim.ZoneSpec{ID: "kitchen", RightX: 100, BottomY: 100, Variables: map[string]float64{sim.VarTemperature: 295}})
	mustDevice(t, h, placed("heater", "Heater", 10, 10, map[string]any{"A": "first", "zz": []any{1.0, "two"}}))
	mustDevice(t, h, placed("thermo", "Thermometer", 20, 20, nil))
	mustDevice(t, h, placed("frozen", "Thermometer", 30, 30, nil))
	mustDevice(t, h, sim.DeviceSpec{ID: "outside", Type: "Photometer", Properties: map[string]any{"Location0": true}})
	if _, err := h.UpdateDevice("frozen", sim.DeviceUpdate{Fault: ptr(sim.FaultYes)}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.UpdateZone("kitchen", sim.ZoneUpdate{Variables: map[string]*float64{sim.VarTemperature: ptr(300.0)}}); err != nil {
		t.Fatal(err)
	}
	rebuild := func(d *sim.Device, props sim.Props) sim.Device {
		c := *d
		if c.Properties != nil {
			t.Errorf("device %s: the view's Properties is not nil", d.ID)
		}
		c.Properties = map[string]any{}
		last := ""
		for k, v := range props.All() {
			if k <= last && last != "" {
				t.Errorf("device %s: property %q after %q", d.ID, k, last)
			}
			last = k
			c.Properties[k] = v
		}
		return c
	}
	for id, want := range map[string]any{"thermo": 300.0, "frozen": 295.0, "heater": nil} {
		h.ViewDevice(id, func(_ *sim.Device, props sim.Props) {
			if got, _ := props.Get(sim.PropCurrentTemperature); got != want {
				t.Errorf("%s: %s = %v, want %v", id, sim.PropCurrentTemperature, got, want)
			}
		})
	}
	var got []sim.Device
	h.EachDevice(func(d *sim.Device, props sim.Props) {
		got = append(got, rebuild(d, props))
	})
	want := h.Devices()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EachDevice (-Devices +views):\n%s", diff)
	}
	for _, w := range want {
		err := h.ViewDevice(w.ID, func(d *sim.Device, props sim.Props) {
			if diff := cmp.Diff(w, rebuild(d, props)); diff != "" {
				t.Errorf("ViewDevice(%s) (-Device +view):\n%s", w.ID, diff)
			}
		})
		if err != nil {
			t.Errorf("ViewDevice(%s) = %v", w.ID, err)
		}
	}
	if err := h.ViewDevice("nobody", func(*sim.Device, sim.Props) { t.Error("called for an unknown id") }); !errors.Is(err, sim.ErrNotFound) {
		t.Errorf("ViewDevice(nobody) = %v, want an error wrapping %v", err, sim.ErrNotFound)
	}
}
