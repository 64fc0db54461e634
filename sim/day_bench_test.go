package sim_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

// homeSize is the size of a benchmark home: zones of 100×100 plan units in
// a grid 10 zones wide, devices of mixed kinds placed over it (a third
// heaters and coolers, running), and persons who move once a simulated
// minute.
type homeSize struct{ zones, devices, persons int }

// The homes of the day benchmarks: the same mix at three sizes, one zone
// per 20 devices and one person per 50.
var (
	homeDay   = homeSize{50, 1000, 20}
	homeLarge = homeSize{500, 10_000, 200}
	homeHuge  = homeSize{5000, 100_000, 2000}
	dayKinds  = []string{"Heater", "Thermometer", "DimmerLight", "Cooler", "PresenceSensor", "Photometer", "Heater", "MotionSensor", "BinaryLight"}
	personIDs = func() []string {
		s := make([]string, homeHuge.persons)
		for i := range s {
			s[i] = "p" + strconv.Itoa(i)
		}
		return s
	}()
)

// plan returns the width and height of the plan of a home of n zones.
func (s homeSize) plan() (w, h int) { return 1000, (s.zones + 9) / 10 * 100 }

// dayDevice returns the kind and the properties of the i-th device of the
// day mix: heaters and coolers running at various power levels, dimmers
// at half.
func dayDevice(i int) (kind string, props map[string]any) {
	kind = dayKinds[i%len(dayKinds)]
	switch kind {
	case "Heater":
		props = map[string]any{"heater.powerLevel": float64(i%10) / 10}
	case "Cooler":
		props = map[string]any{"cooler.powerLevel": float64(i%7) / 10}
	case "DimmerLight":
		props = map[string]any{"power_level": 0.5}
	}
	return kind, props
}

// sizedHome builds a home of the given size.
func sizedHome(tb testing.TB, physics sim.Physics, size homeSize) *sim.Home {
	tb.Helper()
	h := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC, Physics: physics})
	for i := range size.zones {
		x, y := (i%10)*100, (i/10)*100
		mustZone(tb, h, rect(fmt.Sprintf("z%d", i), x, y, x+99, y+99))
	}
	w, ht := size.plan()
	for i := range size.devices {
		k, props := dayDevice(i)
		mustDevice(tb, h, placed(fmt.Sprintf("d%d", i), k, (i*37)%w, (i*53)%ht, props))
	}
	for i := range size.persons {
		mustPerson(tb, h, sim.PersonSpec{ID: personIDs[i], Type: "Man", PositionX: ptr((i * 50) % w), PositionY: ptr((i * 25) % ht)})
	}
	return h
}

// simulateSizedDay advances h, a home of the given size, by 24 simulated
// hours, moving every person once a simulated minute.
func simulateSizedDay(tb testing.TB, h *sim.Home, size homeSize) {
	w, ht := size.plan()
	for m := range 24 * 60 {
		if err := h.Advance(time.Minute); err != nil {
			tb.Fatal(err)
		}
		for i := range size.persons {
			x, y := (m*7+i*131)%w, (m*3+i*71)%ht
			if _, err := h.UpdatePerson(personIDs[i], sim.PersonUpdate{PositionX: &x, PositionY: &y}); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// benchDay runs one simulated day of a home of the given size per op, in
// each physics model.
func benchDay(b *testing.B, size homeSize) {
	for _, p := range []sim.Physics{sim.PhysicsContract, sim.PhysicsRealistic} {
		b.Run(string(p), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				h := sizedHome(b, p, size)
				b.StartTimer()
				simulateSizedDay(b, h, size)
			}
		})
	}
}

// BenchmarkSimulatedDay runs one simulated day of a 50-zone, 1,000-device,
// 20-person home per op, in each physics model. Target: at most 0.2 s per
// op on 2 cores.
func BenchmarkSimulatedDay(b *testing.B) { benchDay(b, homeDay) }

// BenchmarkSimulatedDayLarge is BenchmarkSimulatedDay for a home ten times
// larger: 500 zones, 10,000 devices, 200 persons. Target: at most 2 s per
// op.
func BenchmarkSimulatedDayLarge(b *testing.B) { benchDay(b, homeLarge) }

// BenchmarkSimulatedDayScaling runs a simulated day of the same mix at
// 1,000, 10,000 and 100,000 devices, to show how the cost grows.
func BenchmarkSimulatedDayScaling(b *testing.B) {
	for _, size := range []homeSize{homeDay, homeLarge, homeHuge} {
		b.Run(fmt.Sprintf("devices=%d", size.devices), func(b *testing.B) { benchDay(b, size) })
	}
}

// TestWatchedDaySameAsUnwatched runs a simulated day of the benchmark home
// twice in each physics model, once watched by an observer (every heater
// update is an event) and once not (updates nobody sees are batched), and
// checks that the zones are the same, to the last bit, all along, with
// temperatures set by hand now and then.
func TestWatchedDaySameAsUnwatched(t *testing.T) {
	for _, p := range []sim.Physics{sim.PhysicsContract, sim.PhysicsRealistic} {
		t.Run(string(p), func(t *testing.T) {
			size := homeSize{zones: 12, devices: 240, persons: 6}
			var zones [2][][]sim.Zone
			events := 0
			for i, watched := range []bool{false, true} {
				h := sizedHome(t, p, size)
				if watched {
					stop := h.Observe(func(e sim.Event) {
						if e.Type == sim.EventZoneVariableUpdated {
							events++
						}
					})
					defer stop()
				}
				// Every 10 s for the first hour (before heaters reach their
				// bounds), then every hour for a day.
				for step := range 360 + 23 {
					d := 10 * time.Second
					if step >= 360 {
						d = time.Hour
					}
					if err := h.Advance(d); err != nil {
						t.Fatal(err)
					}
					if step%37 == 5 { // a temperature set by hand, which the heaters go on from
						v := 280 + float64(step%20)
						if _, err := h.UpdateZone(fmt.Sprintf("z%d", step%size.zones), sim.ZoneUpdate{Variables: map[string]*float64{sim.VarTemperature: &v}}); err != nil {
							t.Fatal(err)
						}
					}
					zones[i] = append(zones[i], h.Zones())
				}
			}
			if events == 0 {
				t.Fatal("the watched run saw no zone variable change")
			}
			if diff := cmp.Diff(zones[0], zones[1]); diff != "" {
				t.Errorf("zones differ (-unwatched +watched):\n%s", diff)
			}
		})
	}
}
