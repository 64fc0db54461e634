package sim_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pervasim/pervasim/sim"
)

// dayHome builds the home of BenchmarkSimulatedDay: 50 zones of 100×100 in
// a 10×5 grid, 1,000 devices of mixed kinds (a third heaters and coolers,
// running), and 20 persons.
func dayHome(tb testing.TB, physics sim.Physics) *sim.Home {
	tb.Helper()
	h := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC, Physics: physics})
	for i := range 50 {
		x, y := (i%10)*100, (i/10)*100
		mustZone(tb, h, rect(fmt.Sprintf("z%d", i), x, y, x+99, y+99))
	}
	kinds := []string{"Heater", "Thermometer", "DimmerLight", "Cooler", "PresenceSensor", "Photometer",
		"Heater", "MotionSensor", "BinaryLight"}
	for i := range 1000 {
		k := kinds[i%len(kinds)]
		var props map[string]any
		switch k {
		case "Heater":
			props = map[string]any{"heater.powerLevel": float64(i%10) / 10}
		case "Cooler":
			props = map[string]any{"cooler.powerLevel": float64(i%7) / 10}
		case "DimmerLight":
			props = map[string]any{"power_level": 0.5}
		}
		mustDevice(tb, h, placed(fmt.Sprintf("d%d", i), k, (i*37)%1000, (i*53)%500, props))
	}
	for i := range 20 {
		mustPerson(tb, h, sim.PersonSpec{ID: fmt.Sprintf("p%d", i), Type: "Man", PositionX: ptr(i * 50), PositionY: ptr(i * 25)})
	}
	return h
}

// simulateDay advances h by 24 simulated hours, moving every person once a
// simulated minute.
func simulateDay(tb testing.TB, h *sim.Home) {
	for m := range 24 * 60 {
		if err := h.Advance(time.Minute); err != nil {
			tb.Fatal(err)
		}
		for i := range 20 {
			x, y := (m*7+i*131)%1000, (m*3+i*71)%500
			if _, err := h.UpdatePerson(fmt.Sprintf("p%d", i), sim.PersonUpdate{PositionX: &x, PositionY: &y}); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// BenchmarkSimulatedDay runs one simulated day of a 50-zone, 1,000-device,
// 20-person home per op, in each physics model. Target: at most 1 s per op
// on 2 cores.
func BenchmarkSimulatedDay(b *testing.B) {
	for _, p := range []sim.Physics{sim.PhysicsContract, sim.PhysicsRealistic} {
		b.Run(string(p), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				h := dayHome(b, p)
				b.StartTimer()
				simulateDay(b, h)
			}
		})
	}
}
