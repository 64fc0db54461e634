package httpapi_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
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

// BenchmarkGetDeviceRatio compares GET of one device on our server (the
// handler of a 1,000-device home) with a minimal net/http server that
// writes the same bytes from memory, under the same load, in the same run:
// for each server a load generator in a child process, wrk-like (keep-alive
// connections, each sending a request once the last answer is read, over
// raw TCP), limited to one or two threads (GOMAXPROCS) so that it does not
// take the servers' cores. Each sub-benchmark alternates the servers
// rounds times and keeps each one's best rate; it reports both rates and
// their ratio (ours / minimal). b.N is the requests per run; say
// -benchtime 200000x.
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
	for _, load := range []struct{ threads, conns int }{{1, 32}, {2, 64}} {
		b.Run(fmt.Sprintf("threads=%d,conns=%d", load.threads, load.conns), func(b *testing.B) {
			const rounds = 3
			var bareRate, oursRate float64
			for range rounds {
				bareRate = max(bareRate, loadGen(b, bare.Listener.Addr().String(), path, b.N, load.threads, load.conns))
				oursRate = max(oursRate, loadGen(b, ours.Listener.Addr().String(), path, b.N, load.threads, load.conns))
			}
			b.ReportMetric(oursRate, "ours-req/s")
			b.ReportMetric(bareRate, "bare-req/s")
			b.ReportMetric(oursRate/bareRate, "ratio")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// loadGen runs the load generator in a child process (this test binary,
// told so by PERVASIM_LOADGEN) and returns the requests per second it
// measured.
func loadGen(b *testing.B, addr, path string, n, threads, conns int) float64 {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadGenerator$", "-test.count=1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PERVASIM_LOADGEN=%s %s %d %d", addr, path, n, conns),
		fmt.Sprintf("GOMAXPROCS=%d", threads))
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("load generator: %v\n%s", err, out)
	}
	var rate float64
	for _, line := range strings.Split(string(out), "\n") {
		if r, ok := strings.CutPrefix(line, "rate "); ok {
			rate, err = strconv.ParseFloat(r, 64)
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	if rate == 0 {
		b.Fatalf("load generator printed no rate:\n%s", out)
	}
	return rate
}

// TestLoadGenerator is the load generator of BenchmarkGetDeviceRatio when
// PERVASIM_LOADGEN is set ("addr path requests connections"); otherwise it
// checks the generator against a local server. It prints "rate <req/s>".
func TestLoadGenerator(t *testing.T) {
	spec := os.Getenv("PERVASIM_LOADGEN")
	if spec == "" {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Host != "localhost" {
				t.Errorf("host %q", r.Host)
			}
			io.WriteString(w, "ok")
		}))
		defer srv.Close()
		if rate := generateLoad(t, srv.Listener.Addr().String(), "/x", 500, 4); rate <= 0 {
			t.Fatalf("rate %v", rate)
		}
		return
	}
	var addr, path string
	var n, conns int
	if _, err := fmt.Sscan(spec, &addr, &path, &n, &conns); err != nil {
		t.Fatalf("PERVASIM_LOADGEN %q: %v", spec, err)
	}
	fmt.Printf("rate %f\n", generateLoad(t, addr, path, n, conns))
}

// generateLoad sends n GET requests for path to addr over conns keep-alive
// connections, each sending its next request once the answer to the last
// is read, and returns the rate. Every answer must be a 200.
func generateLoad(t *testing.T, addr, path string, n, conns int) float64 {
	req := []byte("GET " + path + " HTTP/1.1\r\nHost: localhost\r\nUser-Agent: loadgen\r\n\r\n")
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range conns {
		wg.Go(func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			r := bufio.NewReaderSize(c, 16<<10)
			for next.Add(1) <= int64(n) {
				if _, err := c.Write(req); err != nil {
					t.Error(err)
					return
				}
				if err := readResponse(r); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds()
}

// readResponse reads one HTTP/1.1 response with a Content-Length body and
// fails unless it is a 200.
func readResponse(r *bufio.Reader) error {
	status, err := r.ReadSlice('\n')
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(status, []byte("HTTP/1.1 200 ")) {
		return fmt.Errorf("status line %q", status)
	}
	length := -1
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) <= 2 {
			break
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && strings.EqualFold(string(k), "Content-Length") {
			if length, err = strconv.Atoi(string(bytes.TrimSpace(v))); err != nil {
				return err
			}
		}
	}
	if length < 0 {
		return fmt.Errorf("no Content-Length")
	}
	_, err = r.Discard(length)
	return err
}

// BenchmarkHomeHeap measures the heap an empty home of /homes holds (its
// simulation, engine, bridge and handler: routes and API document), as
// heap-B/home: the homes a server may hold (-max-homes) multiply it.
func BenchmarkHomeHeap(b *testing.B) {
	f := newHomesFixtureWith(b, 1<<20, nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range b.N {
		if rec := serve(f.handler, "POST", fmt.Sprintf("/homes/h%d", i)); rec.Code != 200 {
			b.Fatal(rec.Body)
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/float64(b.N), "heap-B/home")
}
