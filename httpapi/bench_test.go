package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
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
