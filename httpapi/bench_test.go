package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchHome builds a home of 50 zones in a 10×5 grid and n devices of mixed
// kinds spread over it.
func benchHome(b *testing.B, n int) *fixture {
	b.Helper()
	f := newFixture(b)
	for i := range 50 {
		x, y := (i%10)*100, (i/10)*100
		f.mustDo(b, "POST", "/platform/zones/zone", fmt.Sprintf(`{"id":"z%d","leftX":%d,"topY":%d,"rightX":%d,"bottomY":%d}`, i, x, y, x+99, y+99))
	}
	kinds := []string{"Heater", "Cooler", "Thermometer", "DimmerLight", "BinaryLight", "PresenceSensor", "Photometer"}
	for i := range n {
		f.mustDo(b, "POST", "/platform/devices/device", fmt.Sprintf(`{"id":"d%d","type":"%s","positionX":%d,"positionY":%d}`, i, kinds[i%len(kinds)], (i*37)%1000, (i*53)%500))
	}
	return f
}

// BenchmarkListDevices measures GET /devices/devices with 1,000 devices,
// through the handler (routing, snapshot, JSON encoding).
func BenchmarkListDevices(b *testing.B) {
	f := benchHome(b, 1000)
	req := newRequest("GET", "/platform/devices/devices", nil)
	b.ReportAllocs()
	for b.Loop() {
		w := discardWriter{h: http.Header{}}
		f.handler.ServeHTTP(&w, req)
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
	}
}

// BenchmarkUpdateDevice measures PUT /devices/device/{id} moving a heater
// and setting its power level, among 1,000 devices and 50 zones.
func BenchmarkUpdateDevice(b *testing.B) {
	f := benchHome(b, 1000)
	bodies := []string{
		`{"positionX":150,"positionY":250,"properties":{"heater.powerLevel":0.5}}`,
		`{"positionX":850,"positionY":50,"properties":{"heater.powerLevel":0.25}}`,
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		req := newRequest("PUT", "/platform/devices/device/d7", strings.NewReader(bodies[i%2]))
		i++
		w := discardWriter{h: http.Header{}}
		f.handler.ServeHTTP(&w, req)
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
	}
}

// discardWriter is a ResponseWriter that keeps only the status, so the
// benchmarks measure the server rather than a recorder's buffer.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(s int)   { w.status = s }
func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return io.Discard.Write(p)
}

// BenchmarkGetDeviceRatio compares GET of one device on our server with a
// minimal net/http server that writes the same bytes from memory, under
// the same load: clients goroutines over keep-alive connections, b.N
// requests to each server, in the same run. It reports each server's
// requests per second and their ratio (ours / minimal). Run it with
// -cpu to see how the ratio holds as cores grow; -benchtime sets the
// requests (say 200000x).
func BenchmarkGetDeviceRatio(b *testing.B) {
	f := benchHome(b, 1000)
	ours := httptest.NewServer(f.handler)
	defer ours.Close()
	path := "/platform/devices/device/d7"
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, newRequest("GET", path, nil))
	body := rec.Body.Bytes()
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(body)
	}))
	defer bare.Close()
	const clients = 32
	load := func(base string) float64 {
		tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
		defer tr.CloseIdleConnections()
		client := &http.Client{Transport: tr}
		// Ours answers only to a host it knows: localhost, as a browser
		// on the machine would say.
		url := strings.Replace(base, "127.0.0.1", "localhost", 1) + path
		var next atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for range clients {
			wg.Go(func() {
				for next.Add(1) <= int64(b.N) {
					res, err := client.Get(url)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != http.StatusOK {
						b.Errorf("status %d", res.StatusCode)
						return
					}
				}
			})
		}
		wg.Wait()
		return float64(b.N) / time.Since(start).Seconds()
	}
	b.ReportAllocs()
	b.ResetTimer()
	bareRate := load(bare.URL)
	oursRate := load(ours.URL)
	b.StopTimer()
	b.ReportMetric(oursRate, "ours-req/s")
	b.ReportMetric(bareRate, "bare-req/s")
	b.ReportMetric(oursRate/bareRate, "ratio")
}
