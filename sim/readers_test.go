package sim_test

import (
	"testing"
	"time"

	"github.com/benbjohnson/clock"

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
	go h.ViewDevice("heater", func(*sim.Device, sim.Props, []sim.Reading) {
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
