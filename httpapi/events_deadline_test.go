package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/sim"
)

// pacedWriter is a client that reads steadily: each write takes perWrite
// (of the bubble's clock), and fails once the write deadline passed, as a
// connection's does. Its first write waits for release.
type pacedWriter struct {
	h        http.Header
	perWrite time.Duration
	release  chan struct{}
	wrote    chan struct{}

	mu       sync.Mutex
	deadline time.Time
	body     strings.Builder
	first    bool
}

func (w *pacedWriter) Header() http.Header { return w.h }
func (w *pacedWriter) WriteHeader(int)     {}
func (w *pacedWriter) Flush()              {}
func (w *pacedWriter) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deadline = t
	return nil
}
func (w *pacedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	first := !w.first
	w.first = true
	w.mu.Unlock()
	if first {
		w.wrote <- struct{}{}
		<-w.release
	}
	<-time.After(w.perWrite) // the bubble's clock
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.deadline.IsZero() && time.Now().After(w.deadline) {
		return 0, errors.New("i/o timeout")
	}
	return w.body.Write(p)
}

// TestEventStreamBurstToASteadyReader: a client that takes each write well
// within the write timeout gets a burst whole, however long the burst takes
// to write: the deadline is renewed before each write, as documented, not
// once for everything that waited.
func TestEventStreamBurstToASteadyReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
		h := httpapi.NewHandler(httpapi.Config{Home: home, EventWriteTimeout: time.Second, KeepAlive: time.Hour})
		defer h.Close()
		if _, err := home.CreateZone(sim.ZoneSpec{ID: "room", RightX: 10, BottomY: 10}); err != nil {
			t.Fatal(err)
		}
		at, size := 50, 100
		for i := range 50 {
			if _, err := home.CreateDevice(sim.DeviceSpec{ID: fmt.Sprint("t", i), Type: "Thermometer", PositionX: &at, PositionY: &at}); err != nil {
				t.Fatal(err)
			}
		}
		w := &pacedWriter{h: http.Header{}, perWrite: 100 * time.Millisecond, release: make(chan struct{}), wrote: make(chan struct{}, 1)}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			h.ServeHTTP(w, newRequest("GET", "/platform/events", nil).WithContext(ctx))
			close(done)
		}()
		<-w.wrote
		before := home.EventSeq()
		if _, err := home.UpdateZone("room", sim.ZoneUpdate{RightX: &size, BottomY: &size}); err != nil {
			t.Fatal(err)
		}
		events := int(home.EventSeq() - before)
		synctest.Wait() // every event handed on
		close(w.release)
		<-time.After(time.Duration(events+10) * w.perWrite) // the bubble's clock: every write made
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("the client was dropped")
		default:
		}
		cancel()
		<-done
		w.mu.Lock()
		defer w.mu.Unlock()
		if n := strings.Count(w.body.String(), "event: "); n != events {
			t.Errorf("the client got %d events of %d", n, events)
		}
	})
}
