package httpapi_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pervasim/pervasim/httpapi"
)

// pacedWriter is a client that reads steadily: each write takes perWrite
// (of the bubble's clock), and fails once the write deadline passed, as a
// connection's does. Its first write waits for release.
type pacedWriter struct {
	deadlined
	perWrite time.Duration
	release  chan struct{}
	wrote    chan struct{}
	body     strings.Builder // guarded by mu
	first    bool            // guarded by mu
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
		home, resize := burstRoom(t, 50)
		h := httpapi.NewHandler(httpapi.Config{Home: home, EventWriteTimeout: time.Second, KeepAlive: time.Hour})
		defer h.Close()
		w := &pacedWriter{deadlined: deadlined{header: http.Header{}}, perWrite: 100 * time.Millisecond, release: make(chan struct{}), wrote: make(chan struct{}, 1)}
		cancel, done := serveEvents(h, w)
		<-w.wrote
		events := resize()
		synctest.Wait() // every event handed on
		close(w.release)
		<-time.After(time.Duration(events+10) * w.perWrite) // the bubble's clock: every write made
		synctest.Wait()
		body := func() string {
			w.mu.Lock()
			defer w.mu.Unlock()
			return w.body.String()
		}
		if n := endStream(t, cancel, done, body); n != events {
			t.Errorf("the client got %d events of %d", n, events)
		}
	})
}
