package sim_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/pervasim/pervasim/sim"
)

// smallHome is the home of the many-homes measurements: 4 zones, 20
// devices of the day benchmarks' mix, 2 persons.
var smallHome = homeSize{zones: 4, devices: 20, persons: 2}

// manyHomes builds n small homes of the physics model ph, runs each for
// run of simulated time, and returns them with the heap they hold, in
// bytes, measured after a collection.
func manyHomes(tb testing.TB, n int, ph sim.Physics, run time.Duration) ([]*sim.Home, uint64) {
	tb.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	homes := make([]*sim.Home, n)
	for i := range homes {
		homes[i] = sizedHome(tb, ph, smallHome)
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
// 9.4 KB in the realistic one). See BENCHMARKS.md for where the bytes go.
func TestManyHomesHeap(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what allocations weigh")
	}
	if testing.Short() {
		t.Skip("builds 10,000 homes")
	}
	for _, tc := range []struct {
		ph  sim.Physics
		run time.Duration
	}{
		{sim.PhysicsContract, 0},
		{sim.PhysicsContract, time.Hour},
		{sim.PhysicsRealistic, 0},
		{sim.PhysicsRealistic, time.Hour},
	} {
		homes, heap := manyHomes(t, 10_000, tc.ph, tc.run)
		if mb := float64(heap) / 1e6; mb > 100 {
			t.Errorf("10,000 small homes of the %s model, run for %v, hold %.1f MB of heap, want at most 100 MB", tc.ph, tc.run, mb)
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
		homes, h := manyHomes(b, 10_000, sim.PhysicsContract, 0)
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
