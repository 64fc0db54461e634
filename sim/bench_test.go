package sim_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pervasim/pervasim/sim"
)

// benchHome returns a home with a grid of zones (10 columns of 100 × 100
// units) and devices spread over them, cycling through every kind.
func benchHome(b *testing.B, zones, devices int) *sim.Home {
	b.Helper()
	h, _ := newHome(b)
	for i := range zones {
		x, y := (i%10)*100, (i/10)*100
		mustZone(b, h, rect(fmt.Sprint("z", i), x, y, x+99, y+99))
	}
	for i := range devices {
		x, y := (i*37)%1000, (i*53)%((zones/10+1)*100)
		mustDevice(b, h, sim.DeviceSpec{ID: fmt.Sprint("d", i), Type: kindNames[i%len(kindNames)], PositionX: ptr(x), PositionY: ptr(y)})
	}
	return h
}

func BenchmarkDevices(b *testing.B) {
	h := benchHome(b, 50, 1000)
	b.ReportAllocs()
	for b.Loop() {
		if ds := h.Devices(); len(ds) != 1000 {
			b.Fatalf("len(Devices()) = %d, want 1000", len(ds))
		}
	}
}

func BenchmarkUpdateDevicePosition(b *testing.B) {
	h := benchHome(b, 50, 1000)
	points := [][2]int{{50, 50}, {950, 450}} // in z0 and z49
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p := points[i%2]
		i++
		if _, err := h.UpdateDevice("d500", sim.DeviceUpdate{PositionX: &p[0], PositionY: &p[1]}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCreateZoneRelocate(b *testing.B) {
	h := benchHome(b, 0, 1000)
	spec := rect("bench", 0, 0, 500, 500)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.CreateZone(spec); err != nil {
			b.Fatal(err)
		}
		if err := h.DeleteZone("bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdateZone moves one zone of 500 (in a grid, 10 columns of
// 100 × 100 units) by a unit and back, among 1,000 to 100,000 devices: a
// zone change relocates what its rectangle holds before and after, not
// the home.
func BenchmarkUpdateZone(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			h := benchHome(b, 500, n)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				left, right := i%2, 99+i%2
				i++
				if _, err := h.UpdateZone("z0", sim.ZoneUpdate{LeftX: &left, RightX: &right}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBuildRoomByRoom builds a home room by room, as a script that
// describes each room with its devices does: a zone of 100 × 100 units
// (50 to a row), then its 20 devices, for 500 and 5,000 rooms (10,000 and
// 100,000 devices). ns/op is the whole home.
func BenchmarkBuildRoomByRoom(b *testing.B) {
	for _, rooms := range []int{500, 5_000} {
		b.Run(fmt.Sprint(rooms), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				h, _ := newHome(b)
				for i := range rooms {
					x, y := (i%50)*100, (i/50)*100
					mustZone(b, h, rect(fmt.Sprint("z", i), x, y, x+99, y+99))
					for j := range 20 {
						mustDevice(b, h, sim.DeviceSpec{ID: fmt.Sprint("d", i, "-", j), Type: kindNames[j%len(kindNames)],
							PositionX: ptr(x + j*4), PositionY: ptr(y + j*3)})
					}
				}
			}
		})
	}
}

// BenchmarkDeleteDevices deletes every device of a home of 10,000 and
// 100,000 devices (and 500 zones), one by one in creation order; ns/op is
// the whole home's deletions, not its building.
func BenchmarkDeleteDevices(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				b.StopTimer()
				h := benchHome(b, 500, n)
				b.StartTimer()
				for i := range n {
					if err := h.DeleteDevice(fmt.Sprint("d", i)); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkDenseZone runs a simulated hour of 2,000 devices of the usual
// mix in one zone (an open-plan floor): the Speakers and FloodSensors
// look at the others of their zone every simulated second.
func BenchmarkDenseZone(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		h, _ := newHome(b)
		mustZone(b, h, rect("hall", 0, 0, 1000, 1000))
		for i := range 2000 {
			mustDevice(b, h, sim.DeviceSpec{ID: fmt.Sprint("d", i), Type: kindNames[i%len(kindNames)], PositionX: ptr((i * 37) % 1000), PositionY: ptr((i * 53) % 1000)})
		}
		b.StartTimer()
		if err := h.Advance(time.Hour); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDenseZoneCrossing moves a person into a dense zone and out
// again (one op), in the realistic model: 2,000 devices of the usual mix
// in one zone, its cameras recording (each counts the persons of its
// zone).
func BenchmarkDenseZoneCrossing(b *testing.B) {
	h := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC, Physics: sim.PhysicsRealistic})
	mustZone(b, h, rect("hall", 0, 0, 1000, 1000))
	for i := range 2000 {
		spec := sim.DeviceSpec{ID: fmt.Sprint("d", i), Type: kindNames[i%len(kindNames)], PositionX: ptr((i * 37) % 1000), PositionY: ptr((i * 53) % 1000)}
		if spec.Type == "Camera" {
			spec.Properties = map[string]any{"camera.recording": true}
		}
		mustDevice(b, h, spec)
	}
	if _, err := h.CreatePerson(sim.PersonSpec{ID: "walker", Type: "Man", PositionX: ptr(2000), PositionY: ptr(2000)}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, x := range []int{500, 2000} {
			if _, err := h.UpdatePerson("walker", sim.PersonUpdate{PositionX: ptr(x), PositionY: ptr(x)}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
