package natsbus

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/nats-io/nuid"
)

// BenchmarkSeenAdd measures what a nats-in's memory of ids costs per
// message, once its window is full (ids as nats-out makes them), and
// reports the heap the full window holds.
func BenchmarkSeenAdd(b *testing.B) {
	for _, window := range []int{DefaultDedupWindow, 10_000} {
		b.Run("window="+strconv.Itoa(window), func(b *testing.B) {
			ids := make([]string, 2*window)
			for i := range ids {
				ids[i] = nuid.Next()
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			s := newSeen(window)
			for _, id := range ids[:window] {
				s.add(id)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				s.add(ids[i%len(ids)])
			}
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "window-MB")
			runtime.KeepAlive(ids)
		})
	}
}
