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

// manyHomes builds n small homes and returns them with the heap they
// hold, in bytes, measured after a collection.
func manyHomes(tb testing.TB, n int) ([]*sim.Home, uint64) {
	tb.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	homes := make([]*sim.Home, n)
	for i := range homes {
		homes[i] = sizedHome(tb, sim.PhysicsContract, smallHome)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	return homes, after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)
}

// TestManyHomesHeap guards what a small home weighs: 10,000 of them must
// hold at most 100 MB of heap, 10 KB a home (9.3 KB measured). See
// BENCHMARKS.md for where the bytes go.
func TestManyHomesHeap(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what allocations weigh")
	}
	if testing.Short() {
		t.Skip("builds 10,000 homes")
	}
	homes, heap := manyHomes(t, 10_000)
	if mb := float64(heap) / 1e6; mb > 100 {
		t.Errorf("10,000 small homes hold %.1f MB of heap, want at most 100 MB", mb)
	}
	runtime.KeepAlive(homes)
}

// BenchmarkManyHomes builds 10,000 small homes per op and reports the heap
// they hold (heap-MB) and what one home holds (B/home).
func BenchmarkManyHomes(b *testing.B) {
	b.ReportAllocs()
	var heap uint64
	for b.Loop() {
		homes, h := manyHomes(b, 10_000)
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
