package sim_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pervasim/pervasim/sim"
)

// smallHome is the home of the many-homes measurements: 4 zones, 20
// devices of the day benchmarks' mix, 2 persons.
var smallHome = homeSize{zones: 4, devices: 20, persons: 2}

// placedHome builds a small home as a user might: 4 rooms of 100 × 100
// in a square, the 20 devices of the day mix all in the rooms, five to a
// room, and 2 persons, with ids longer than the benchmarks' ("device-7-3",
// numbered by home, n).
func placedHome(tb testing.TB, ph sim.Physics, n int) *sim.Home {
	tb.Helper()
	h := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC, Physics: ph})
	for i := range 4 {
		x, y := (i%2)*100, (i/2)*100
		mustZone(tb, h, rect(fmt.Sprintf("room-%d", i), x, y, x+99, y+99))
	}
	for i := range 20 {
		k, props := dayDevice(i)
		room := i % 4
		mustDevice(tb, h, placed(fmt.Sprintf("device-%d-%d", n, i), k, (room%2)*100+10+i*3, (room/2)*100+10+i*2, props))
	}
	for i := range 2 {
		mustPerson(tb, h, sim.PersonSpec{ID: fmt.Sprintf("person-%d-%d", n, i), Type: "Man", PositionX: ptr(20 + i*100), PositionY: ptr(20)})
	}
	return h
}

// manyHomes builds n small homes of the physics model ph (placed: as
// placedHome does, else as the benchmarks' sizedHome), runs each for run
// of simulated time, and returns them with the heap they hold, in bytes,
// measured after a collection.
func manyHomes(tb testing.TB, n int, ph sim.Physics, run time.Duration, placed bool) ([]*sim.Home, uint64) {
	tb.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	homes := make([]*sim.Home, n)
	for i := range homes {
		if placed {
			homes[i] = placedHome(tb, ph, i)
		} else {
			homes[i] = sizedHome(tb, ph, smallHome)
		}
		if run > 0 {
			if err := homes[i].Advance(run); err != nil {
				tb.Fatal(err)
			}
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	return homes, after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)
}

// TestManyHomesHeap guards what a small home weighs: 10,000 of them must
// hold at most 100 MB of heap, 10 KB a home, as built (9.0 KB measured in
// the contract model) and once they have run for a simulated hour (with
// what their physics keeps between steps: 9.3 KB in the contract model,
// 9.4 KB in the realistic one); and homes whose devices all stand in their
// rooms (placedHome: 9.6 KB in the contract model, 9.7 KB in the
// realistic one, once run). See BENCHMARKS.md for where the bytes go.
func TestManyHomesHeap(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what allocations weigh")
	}
	if testing.Short() {
		t.Skip("builds 10,000 homes")
	}
	for _, tc := range []struct {
		ph     sim.Physics
		run    time.Duration
		placed bool
	}{
		{sim.PhysicsContract, 0, false},
		{sim.PhysicsContract, time.Hour, false},
		{sim.PhysicsRealistic, 0, false},
		{sim.PhysicsRealistic, time.Hour, false},
		{sim.PhysicsContract, time.Hour, true},
		{sim.PhysicsRealistic, time.Hour, true},
	} {
		homes, heap := manyHomes(t, 10_000, tc.ph, tc.run, tc.placed)
		mb := float64(heap) / 1e6
		t.Logf("%s model, devices all in rooms %v, run for %v: %.1f MB", tc.ph, tc.placed, tc.run, mb)
		if mb > 100 {
			t.Errorf("10,000 small homes of the %s model (devices all in rooms: %v), run for %v, hold %.1f MB of heap, want at most 100 MB", tc.ph, tc.placed, tc.run, mb)
		}
		runtime.KeepAlive(homes)
	}
}

// BenchmarkManyHomes builds 10,000 small homes per op and reports the heap
// they hold (heap-MB) and what one home holds (B/home).
func BenchmarkManyHomes(b *testing.B) {
	b.ReportAllocs()
	var heap uint64
	for b.Loop() {
		homes, h := manyHomes(b, 10_000, sim.PhysicsContract, 0, false)
		heap = h
		runtime.KeepAlive(homes)
	}
	b.ReportMetric(float64(heap)/1e6, "heap-MB")
	b.ReportMetric(float64(heap)/10_000, "B/home")
}

// BenchmarkHomesParallel simulates small homes on separate goroutines, one
// home each: an op is a simulated hour of one home, its persons moving
// once a simulated minute. Run it with -cpu 1,2 to see the homes scale
// with cores: nothing is shared between homes.
func BenchmarkHomesParallel(b *testing.B) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		h := sizedHome(b, sim.PhysicsContract, smallHome)
		w, ht := smallHome.plan()
		m := 0
		for pb.Next() {
			for range 60 {
				if err := h.Advance(time.Minute); err != nil {
					b.Error(err)
					return
				}
				for i := range smallHome.persons {
					x, y := (m*7+i*131)%w, (m*3+i*71)%ht
					if _, err := h.UpdatePerson(personIDs[i], sim.PersonUpdate{PositionX: &x, PositionY: &y}); err != nil {
						b.Error(err)
						return
					}
				}
				m++
			}
		}
	})
}
