package httpapi_test

import (
	"context"
	"errors"
	"fmt"
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

// text returns what the client got so far.
func (w *pacedWriter) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.body.String()
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
		if n := endStream(t, cancel, done, w.text); n != events {
			t.Errorf("the client got %d events of %d", n, events)
		}
	})
}

// TestEventStreamHistoryToASteadyReader: a client coming back with
// Last-Event-ID gets the events it missed, however long writing them takes,
// as long as it takes each well within the write timeout: the deadline is
// renewed before each, as for a burst, not once for the whole history.
func TestEventStreamHistoryToASteadyReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home, resize := burstRoom(t, 50)
		h := httpapi.NewHandler(httpapi.Config{Home: home, EventWriteTimeout: time.Second, KeepAlive: time.Hour})
		defer h.Close()
		// A first client, quick, keeps the home's history going.
		open := make(chan struct{})
		close(open)
		quick := &pacedWriter{deadlined: deadlined{header: http.Header{}}, release: open, wrote: make(chan struct{}, 1)}
		cancelQuick, doneQuick := serveEvents(h, quick)
		<-quick.wrote
		last := home.EventSeq()
		events := resize()
		synctest.Wait() // every event in the history, and written to the first client
		_, id, _ := strings.Cut(quick.text(), "\nid: ")
		run, _, _ := strings.Cut(id, "-") // the stream's ids are <run>-<seq>
		w := &pacedWriter{deadlined: deadlined{header: http.Header{}}, perWrite: 100 * time.Millisecond, release: open, wrote: make(chan struct{}, 1)}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			r := newRequest("GET", "/platform/events", nil).WithContext(ctx)
			r.Header.Set("Last-Event-ID", fmt.Sprint(run, "-", last))
			h.ServeHTTP(w, r)
			close(done)
		}()
		<-time.After(time.Duration(events+10) * w.perWrite) // the bubble's clock: every write made
		synctest.Wait()
		if n := endStream(t, cancel, done, w.text); n != events {
			t.Errorf("the client got %d missed events of %d", n, events)
		}
		cancelQuick()
		<-doneQuick
	})
}
