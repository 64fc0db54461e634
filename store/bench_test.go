package store_test

import (
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pervasim/pervasim/sim"
)

// BenchmarkDurableUpdate measures a device update through the journal: on
// disk (fsynced) before it is applied and answered. With one client it
// reports the latency's p50 and p99; with 32 concurrent clients, whose
// updates share fsyncs, the updates per second.
func BenchmarkDurableUpdate(b *testing.B) {
	for _, clients := range []int{1, 32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			s, _ := open(b, b.TempDir())
			defer s.st.Close()
			for c := range clients {
				if rec := s.do(b, "POST", "/platform/devices/device", "application/json", fmt.Sprintf(`{"deviceId":"d%d","type":"iCasa.Heater"}`, c)); rec.Code != 200 {
					b.Fatal(rec.Body)
				}
			}
			var mu sync.Mutex
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			per := (b.N + clients - 1) / clients
			for c := range clients {
				wg.Go(func() {
					path := fmt.Sprintf("/platform/devices/device/d%d", c)
					for i := range per {
						body := fmt.Sprintf(`{"properties":{"heater.powerLevel":%g}}`, float64(i%10)/10)
						start := time.Now()
						req := httptest.NewRequest("PUT", path, strings.NewReader(body))
						req.Host = "localhost"
						req.Header.Set("Content-Type", "application/json")
						rec := httptest.NewRecorder()
						s.handler.ServeHTTP(rec, req)
						d := time.Since(start)
						if rec.Code != 200 {
							b.Error(rec.Body)
							return
						}
						mu.Lock()
						lat = append(lat, d)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			slices.Sort(lat)
			if len(lat) > 0 {
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(len(lat))/b.Elapsed().Seconds(), "updates/s")
			}
		})
	}
}

// BenchmarkSnapshot measures a snapshot of a home of 1,000 and 10,000
// devices: changes wait while it captures the state, and snapshots come
// less often once one takes more than a tenth of SnapshotEvery.
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("devices=%d", n), func(b *testing.B) {
			s, _ := open(b, b.TempDir())
			defer s.st.Close()
			for i := range n {
				x, y := i%100*10, i/100*10
				if _, err := s.home.CreateDevice(sim.DeviceSpec{ID: fmt.Sprintf("d%d", i), Type: "iCasa.Heater", PositionX: &x, PositionY: &y}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := s.st.Snapshot(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
