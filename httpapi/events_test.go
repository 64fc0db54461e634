package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

// sseEvent is one parsed Server-Sent Event.
type sseEvent struct {
	id, event string
	data      map[string]any
}

// stream connects to the event stream and returns a reader of its events;
// it returns once the server has registered the client.
func stream(t *testing.T, url string) (next func() (sseEvent, bool), stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"/platform/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /events = %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	if !sc.Scan() || sc.Text() != "retry: 2000" {
		t.Fatalf("first line = %q, want retry", sc.Text())
	}
	next = func() (sseEvent, bool) {
		var e sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "" && e.event != "":
				return e, true
			case strings.HasPrefix(line, "id: "):
				e.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				e.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(line[6:]), &e.data); err != nil {
					t.Errorf("data %q is not JSON: %v", line, err)
				}
			}
		}
		return e, false
	}
	return next, func() { cancel(); res.Body.Close() }
}

func TestEventStream(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(f.handler)
	defer srv.Close()
	defer f.handler.Close()
	next, stop := stream(t, srv.URL)
	defer stop()

	f.mustDo(t, "POST", "/platform/zones/zone", `{"id":"room","leftX":0,"topY":0,"rightX":100,"bottomY":100,"variables":{"Volume":10}}`)
	f.mustDo(t, "POST", "/platform/devices/device", `{"id":"t","type":"Thermometer","positionX":5,"positionY":5}`)
	f.mustDo(t, "POST", "/platform/devices/device", `{"id":"h","type":"Heater","positionX":50,"positionY":50,"properties":{"heater.powerLevel":1}}`)
	if err := f.home.Advance(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	f.mustDo(t, "PUT", "/platform/clocks/clock/default", `{"factor":10}`)
	f.mustDo(t, "DELETE", "/platform/zones/zone/room", "")

	var got []string
	for len(got) < 10 {
		e, ok := next()
		if !ok {
			t.Fatalf("stream ended after %v", got)
		}
		if e.data["eventType"] != e.event || seqOf(e.id) != e.data["id"] {
			t.Errorf("envelope %v does not match event %q id %q", e.data, e.event, e.id)
		}
		if _, ok := e.data["time"].(float64); !ok {
			t.Errorf("envelope %v has no time", e.data)
		}
		desc := e.event
		for _, k := range []string{"zoneId", "deviceId", "variable", "property"} {
			if v, ok := e.data[k]; ok {
				desc += " " + k + "=" + fmt.Sprint(v)
			}
		}
		for _, k := range []string{"zone", "device", "clock"} {
			if _, ok := e.data[k].(map[string]any); ok {
				desc += " +" + k
			}
		}
		got = append(got, desc)
		if e.event == "zone-removed" {
			break
		}
	}
	want := []string{
		"zone-added zoneId=room +zone",
		"device-added deviceId=t +device",
		"zone-variable-added zoneId=room variable=Temperature +zone", // the thermometer needs it; it read 293.15 already: no device-property-updated
		"device-added deviceId=h +device",
		"zone-variable-updated zoneId=room variable=Temperature +zone", // the heater, 5 s later
		"device-property-updated deviceId=t property=current_temperature +device",
		"clock-modified +clock",
		"zone-removed zoneId=room",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestEventStreamManySubscribers: 100 subscribers each receive every one of
// 1,000 changes, in order, with none dropped.
func TestEventStreamManySubscribers(t *testing.T) {
	const clients, changes = 100, 1000
	f := newFixture(t)
	srv := httptest.NewServer(f.handler)
	defer srv.Close()
	defer f.handler.Close()
	f.mustDo(t, "POST", "/platform/zones/zone", `{"id":"room","leftX":0,"topY":0,"rightX":100,"bottomY":100}`)

	var wg sync.WaitGroup
	counts := make([]int, clients)
	for i := range clients {
		next, stop := stream(t, srv.URL)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer stop()
			last := -1.0
			for counts[i] < changes {
				e, ok := next()
				if !ok {
					return
				}
				v, _ := e.data["value"].(float64)
				if e.event != "zone-variable-updated" && e.event != "zone-variable-added" || v != last+1 {
					t.Errorf("client %d: event %q value %v after %v", i, e.event, v, last)
					return
				}
				last = v
				counts[i]++
			}
		}()
	}
	for v := range changes {
		f.mustDo(t, "PUT", "/platform/zones/zone/room", fmt.Sprintf(`{"variables":{"n":%d}}`, v))
	}
	wg.Wait()
	for i, n := range counts {
		if n != changes {
			t.Errorf("client %d received %d events, want %d", i, n, changes)
		}
	}
}

// blockingWriter is a ResponseWriter whose writes wait until released,
// like a client that does not read.
type blockingWriter struct {
	h       http.Header
	release chan struct{}
	wrote   chan struct{}
	mu      sync.Mutex
	body    strings.Builder
}

// stalledStream opens an event stream of h for a client that does not
// read: it returns once the client is registered and stuck writing its
// first bytes, with done closed when the stream ends.
func stalledStream(h http.Handler) (slow *blockingWriter, done chan struct{}) {
	slow, done = newBlockingWriter(), make(chan struct{})
	go func() {
		h.ServeHTTP(slow, newRequest("GET", "/platform/events", nil))
		close(done)
	}()
	<-slow.wrote
	return slow, done
}

func newBlockingWriter() *blockingWriter {
	return &blockingWriter{h: http.Header{}, release: make(chan struct{}), wrote: make(chan struct{}, 1)}
}
func (w *blockingWriter) Header() http.Header { return w.h }
func (w *blockingWriter) WriteHeader(int)     {}
func (w *blockingWriter) Flush()              {}
func (w *blockingWriter) Write(p []byte) (int, error) {
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.body.Write(p)
}

// TestSlowSubscriberIsDisconnected: a client that does not read is dropped
// once it is 16,384 events behind, the home never waits for it, and the
// others go on.
func TestSlowSubscriberIsDisconnected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home := newRoom(t)
		h := httpapi.NewHandler(httpapi.Config{Home: home})
		defer h.Close()
		slow, done := stalledStream(h)
		const events = 17_000
		for v := range events {
			x := float64(v)
			if _, err := home.UpdateZone("room", sim.ZoneUpdate{Variables: map[string]*float64{"n": &x}}); err != nil {
				t.Fatal(err)
			}
			if v%1000 == 0 {
				synctest.Wait() // the hub hands on what came: it is not behind, the client is
			}
		}
		synctest.Wait() // the hub has handed on every event: the client's queue overflowed
		close(slow.release)
		<-done // the handler ends: it was dropped
		if n := strings.Count(slow.body.String(), "event: "); n >= events {
			t.Errorf("the slow client got all %d events; it should have been dropped", n)
		}
		// A new client still works.
		rec := newBlockingWriter()
		close(rec.release)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			synctest.Wait()
			x := 1.0
			home.UpdateZone("room", sim.ZoneUpdate{Variables: map[string]*float64{"m": &x}})
			synctest.Wait()
			cancel()
		}()
		h.ServeHTTP(rec, newRequest("GET", "/platform/events", nil).WithContext(ctx))
		if !strings.Contains(rec.body.String(), "event: zone-variable-added") {
			t.Errorf("new client got %q", rec.body.String())
		}
	})
}

// burstRoom returns a room (see newRoom) with n thermometers just outside
// it, and a change that resizes the room over them, which returns how many
// events it made: two a thermometer at least.
func burstRoom(t *testing.T, n int) (*sim.Home, func() int) {
	t.Helper()
	home := newRoom(t)
	at, size := 50, 100
	for i := range n {
		if _, err := home.CreateDevice(sim.DeviceSpec{ID: fmt.Sprint("t", i), Type: "Thermometer", PositionX: &at, PositionY: &at}); err != nil {
			t.Fatal(err)
		}
	}
	return home, func() int {
		before := home.EventSeq()
		if _, err := home.UpdateZone("room", sim.ZoneUpdate{RightX: &size, BottomY: &size}); err != nil {
			t.Fatal(err)
		}
		events := int(home.EventSeq() - before)
		if events < 2*n {
			t.Fatalf("the change made %d events, want at least two a thermometer", events)
		}
		return events
	}
}

// serveEvents serves the event stream of h to w on a goroutine of its
// own, until cancel is called; done is closed once the handler returned.
func serveEvents(h http.Handler, w http.ResponseWriter) (cancel func(), done chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	done = make(chan struct{})
	go func() {
		h.ServeHTTP(w, newRequest("GET", "/platform/events", nil).WithContext(ctx))
		close(done)
	}()
	return cancel, done
}

// endStream checks that the stream served to w is still open, ends it,
// and returns how many events it got.
func endStream(t *testing.T, cancel func(), done chan struct{}, body func() string) int {
	t.Helper()
	select {
	case <-done:
		t.Fatal("the client was dropped")
	default:
	}
	cancel()
	<-done
	return strings.Count(body(), "event: ")
}

// TestEventStreamTakesABurst: the thousands of events of one change (a
// zone resized over 3,000 thermometers) reach a client that had not read
// them yet when they came: a client is dropped 8 MiB or 16,384 events
// behind, not for a burst.
func TestEventStreamTakesABurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home, resize := burstRoom(t, 3000)
		h := httpapi.NewHandler(httpapi.Config{Home: home})
		defer h.Close()
		w := newBlockingWriter()
		cancel, done := serveEvents(h, w)
		<-w.wrote // joined, and held up writing its first bytes
		events := resize()
		synctest.Wait() // every event handed on
		close(w.release)
		synctest.Wait() // and written
		if n := endStream(t, cancel, done, w.body.String); n != events {
			t.Errorf("the client got %d events of %d", n, events)
		}
	})
}

// TestSlowSubscriberOfBigEventsIsDisconnected: a client that does not read
// is dropped once the frames queued for it pass a bound in bytes, long
// before it is 16,384 events behind: an event carries the whole
// device, and a device may be a megabyte, so a bound in events alone let
// one stalled client hold a gigabyte until its write timed out.
func TestSlowSubscriberOfBigEventsIsDisconnected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
		h := httpapi.NewHandler(httpapi.Config{Home: home})
		defer h.Close()
		big := map[string]any{}
		for i := range 16 {
			big[fmt.Sprintf("big%d", i)] = strings.Repeat("x", 60000)
		}
		if _, err := home.CreateDevice(sim.DeviceSpec{ID: "d", Type: "Heater", Properties: big}); err != nil {
			t.Fatal(err)
		}
		slow, done := stalledStream(h)
		const events = 40 // about 1 MB each: 40 MB, far from 16,384 events
		for v := range events {
			if _, err := home.UpdateDevice("d", sim.DeviceUpdate{Properties: map[string]any{"n": float64(v)}}); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait() // the hub has handed on every event it could
		close(slow.release)
		synctest.Wait() // the client wrote what it was handed
		select {
		case <-done: // dropped
		default:
			t.Fatal("the client that stopped reading while 40 MB of events came is still connected")
		}
		if n := strings.Count(slow.body.String(), "event: "); n >= events {
			t.Errorf("the slow client got all %d events; it should have been dropped", n)
		}
	})
}

// TestEventStreamKeepAliveAndClose: an idle stream gets a comment every
// keep-alive period, and Close ends it.
func TestEventStreamKeepAliveAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
		h := httpapi.NewHandler(httpapi.Config{Home: home, KeepAlive: 10 * time.Second})
		w := newBlockingWriter()
		close(w.release)
		done := make(chan struct{})
		go func() {
			h.ServeHTTP(w, newRequest("GET", "/platform/events", nil))
			close(done)
		}()
		time.Sleep(35 * time.Second) // fake time: three keep-alives
		synctest.Wait()
		w.mu.Lock()
		n := strings.Count(w.body.String(), ": keep-alive\n\n")
		w.mu.Unlock()
		if n != 3 {
			t.Errorf("%d keep-alives in 35 s at 10 s, want 3", n)
		}
		h.Close()
		<-done
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, newRequest("GET", "/platform/events", nil))
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET /events after Close = %d, want 404", rec.Code)
		}
	})
}

// deadlined is the part of a test client that keeps the write deadline
// the handler sets (through http.ResponseController), as a connection
// does.
type deadlined struct {
	header   http.Header
	mu       sync.Mutex
	deadline time.Time
}

func (w *deadlined) Header() http.Header { return w.header }
func (w *deadlined) WriteHeader(int)     {}
func (w *deadlined) Flush()              {}
func (w *deadlined) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deadline = t
	return nil
}

// stuckWriter is a client that never reads: a write waits until the write
// deadline the handler set, then fails, as a connection's would.
type stuckWriter struct{ deadlined }

func (w *stuckWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	d := w.deadline
	w.mu.Unlock()
	if d.IsZero() {
		select {} // no deadline: stuck for good (the bug this guards against)
	}
	time.Sleep(time.Until(d))
	return 0, os.ErrDeadlineExceeded
}

// TestStuckReaderIsDropped: a client that stops reading is dropped once a
// write has waited the EventWriteTimeout; its stream ends and no longer
// counts.
func TestStuckReaderIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
		h := httpapi.NewHandler(httpapi.Config{Home: home, EventWriteTimeout: 5 * time.Second})
		defer h.Close()
		done := make(chan struct{})
		start := time.Now()
		go func() {
			h.ServeHTTP(&stuckWriter{deadlined{header: http.Header{}}}, newRequest("GET", "/platform/events", nil))
			close(done)
		}()
		synctest.Wait()
		if n := h.EventStreams(); n != 1 {
			t.Fatalf("EventStreams = %d, want 1", n)
		}
		<-done
		if took := time.Since(start); took != 5*time.Second {
			t.Errorf("the stuck client was dropped after %v, want the write timeout, 5s", took)
		}
		if n := h.EventStreams(); n != 0 {
			t.Errorf("EventStreams after the drop = %d, want 0", n)
		}
	})
}

// TestEventStreamCap opens 10,000 event streams against a cap of 5: the
// first five stream, every other one is 503 busy at once, and a place
// freed is taken again.
func TestEventStreamCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
		h := httpapi.NewHandler(httpapi.Config{Home: home, MaxEventClients: 5})
		defer h.Close()
		ctx, cancel := context.WithCancel(context.Background())
		var open sync.WaitGroup
		for range 5 {
			w := newBlockingWriter()
			close(w.release)
			open.Go(func() { h.ServeHTTP(w, newRequest("GET", "/platform/events", nil).WithContext(ctx)) })
		}
		synctest.Wait()
		busy := 0
		for range 10_000 {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, newRequest("GET", "/platform/events", nil))
			if rec.Code == http.StatusServiceUnavailable && rec.Header().Get("Retry-After") != "" && strings.Contains(rec.Body.String(), `"busy"`) {
				busy++
			}
		}
		if busy != 10_000 || h.EventStreams() != 5 {
			t.Errorf("%d of 10000 refused with 503 busy, %d streams open; want all refused and 5 open", busy, h.EventStreams())
		}
		cancel()
		open.Wait()
		w := newBlockingWriter()
		close(w.release)
		ctx2, cancel2 := context.WithCancel(context.Background())
		go func() { synctest.Wait(); cancel2() }()
		h.ServeHTTP(w, newRequest("GET", "/platform/events", nil).WithContext(ctx2))
		if !strings.Contains(w.body.String(), "retry:") {
			t.Errorf("a stream after the others closed got %q", w.body.String())
		}
	})
}

// streamOnce opens the event stream with the given Last-Event-ID (none when
// empty), lets fn make changes while it is open, and returns what it got.
func streamOnce(t *testing.T, h http.Handler, lastID string, fn func()) string {
	t.Helper()
	return streamAt(t, h, "/platform/events", lastID, fn)
}

// streamAt is streamOnce for the event stream at path.
func streamAt(t *testing.T, h http.Handler, path, lastID string, fn func()) string {
	t.Helper()
	w := newBlockingWriter()
	close(w.release)
	ctx, cancel := context.WithCancel(context.Background())
	r := newRequest("GET", path, nil).WithContext(ctx)
	if lastID != "" {
		r.Header.Set("Last-Event-ID", lastID)
	}
	done := make(chan struct{})
	go func() { h.ServeHTTP(w, r); close(done) }()
	synctest.Wait()
	fn()
	synctest.Wait()
	cancel()
	<-done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.body.String()
}

// ids returns the event ids of a stream, in order.
func ids(stream string) []string {
	var out []string
	for _, l := range strings.Split(stream, "\n") {
		if id, ok := strings.CutPrefix(l, "id: "); ok {
			out = append(out, id)
		}
	}
	return out
}

// seqOf returns the sequence number an event id ends with (run-seq).
func seqOf(id string) string {
	return id[strings.LastIndexByte(id, '-')+1:]
}

// eventsOf returns the event names of a stream, in order, each with the
// sequence number of its id: "reset 4", "zone-variable-updated 5".
func eventsOf(stream string) []string {
	var out []string
	id := ""
	for _, l := range strings.Split(stream, "\n") {
		if v, ok := strings.CutPrefix(l, "id: "); ok {
			id = seqOf(v)
		}
		if v, ok := strings.CutPrefix(l, "event: "); ok {
			out = append(out, v+" "+id)
		}
	}
	return out
}

// increasing reports whether the sequence numbers of a stream's ids
// increase.
func increasing(stream string) bool {
	var seqs []uint64
	for _, id := range ids(stream) {
		n, err := strconv.ParseUint(seqOf(id), 10, 64)
		if err != nil || len(seqs) > 0 && n <= seqs[len(seqs)-1] {
			return false
		}
		seqs = append(seqs, n)
	}
	return true
}

// TestEventStreamResume: a client that reconnects with Last-Event-ID gets
// what it missed, then the live events; one whose id is too old, or of
// another run, gets a reset event instead.
func TestEventStreamResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home := newRoom(t)
		h := httpapi.NewHandler(httpapi.Config{Home: home})
		defer h.Close()
		set := func(v float64) {
			if _, err := home.UpdateZone("room", sim.ZoneUpdate{Variables: map[string]*float64{"n": &v}}); err != nil {
				t.Fatal(err)
			}
		}
		first := ids(streamOnce(t, h, "", func() { set(1); set(2) }))
		if len(first) != 2 {
			t.Fatalf("first stream ids = %v, want 2", first)
		}
		run, _, _ := strings.Cut(first[0], "-") // the stream's run: random
		if len(run) != 16 || first[0] != run+"-2" {
			t.Fatalf("first stream ids = %v, want the run (16 hex digits), a dash and the sequence number", first)
		}
		set(3) // while nobody listens
		set(4)
		got := streamOnce(t, h, first[1], func() { set(5) })
		if diff := cmp.Diff([]string{run + "-4", run + "-5", run + "-6"}, ids(got)); diff != "" || strings.Contains(got, "event: reset") {
			t.Errorf("resumed stream ids (-want +got):\n%s\n%s", diff, got)
		}
		// Nothing missed: only what comes next.
		got = streamOnce(t, h, run+"-6", func() { set(6) })
		if strings.Contains(got, "event: reset") {
			t.Errorf("a client that missed nothing got a reset: %q", got)
		}
		if diff := cmp.Diff([]string{run + "-7"}, ids(got)); diff != "" {
			t.Errorf("stream resumed at the last event (-want +got):\n%s", diff)
		}
		// Not an id of this run: a number alone (the ids of old), one the
		// run has not reached, another run's, none of ours.
		for _, old := range []string{"0", "6", run + "-999", "0123456789abcdef-6", "not-a-number"} {
			seq, now := home.EventSeq(), home.Now().UnixMilli()
			got = streamOnce(t, h, old, func() { set(7) })
			// The reset has the envelope of an event: the last change
			// and the simulated time when it was sent.
			want := `id: ` + run + "-" + strconv.FormatUint(seq, 10) + "\n" + `event: reset` + "\n" + `data: {"eventType":"reset","id":"` + strconv.FormatUint(seq, 10) + `","time":` +
				strconv.FormatInt(now, 10) + `,"reason":"the events since Last-Event-ID are no longer kept: read the state again"}` + "\n\n"
			if !strings.Contains(got, want) {
				t.Errorf("Last-Event-ID %s: no reset event %q in %q", old, want, got)
			}
		}
		// Long after the last client left, the history is gone: a reset.
		last := ids(streamOnce(t, h, "", func() { set(8) }))
		time.Sleep(2 * time.Minute)
		set(9)
		got = streamOnce(t, h, last[len(last)-1], func() {})
		if !strings.Contains(got, "event: reset") {
			t.Errorf("resuming after the history was dropped: no reset in %q", got)
		}
	})
}

// TestEventStreamResetInOrder: a reset comes before the events that follow
// it on the stream and has a lower id, so that a client that drops right
// after it resumes from the reset and misses none of them; here the events
// come while the reset is on its way (the client's first write waits).
func TestEventStreamResetInOrder(t *testing.T) {
	for _, lastID := range []string{"abc", "99999999", "0"} {
		t.Run(lastID, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				home := newRoom(t)
				h := httpapi.NewHandler(httpapi.Config{Home: home})
				defer h.Close()
				// Numbered: a stream has been watching the home.
				streamOnce(t, h, "", func() { setN(t, home, 1) })
				seq := home.EventSeq()
				w := newBlockingWriter()
				ctx, cancel := context.WithCancel(context.Background())
				r := newRequest("GET", "/platform/events", nil).WithContext(ctx)
				r.Header.Set("Last-Event-ID", lastID)
				done := make(chan struct{})
				go func() { h.ServeHTTP(w, r); close(done) }()
				<-w.wrote // joined, and writing "retry"
				for v := range 3 {
					setN(t, home, float64(v+2))
				}
				synctest.Wait() // the hub handed the three on
				close(w.release)
				synctest.Wait()
				cancel()
				<-done
				got := w.body.String()
				want := []string{fmt.Sprint("reset ", seq)}
				for i := range 3 {
					want = append(want, fmt.Sprint("zone-variable-updated ", seq+uint64(i)+1))
				}
				if diff := cmp.Diff(want, eventsOf(got)); diff != "" || !increasing(got) {
					t.Errorf("Last-Event-ID %s: events (-want +got):\n%s\n%s", lastID, diff, got)
				}
				// A client that dropped right after the reset resumes
				// from it: it gets the three, no other reset.
				again := streamOnce(t, h, ids(got)[0], func() {})
				if diff := cmp.Diff(want[1:], eventsOf(again)); diff != "" {
					t.Errorf("resumed from the reset: events (-want +got):\n%s\n%s", diff, again)
				}
			})
		})
	}
}

// setN sets the variable n of the zone room.
func setN(t *testing.T, home *sim.Home, v float64) {
	t.Helper()
	if _, err := home.UpdateZone("room", sim.ZoneUpdate{Variables: map[string]*float64{"n": &v}}); err != nil {
		t.Fatal(err)
	}
}

// eventRun is a home and the handler that serves its event stream at path;
// lab, when set, returns the home /homes/lab is now.
type eventRun struct {
	h    http.Handler
	path string
	home *sim.Home
	lab  func() *sim.Home
}

// newRoom returns a new home with the zone room, as a server restarted
// from a -state directory rebuilds it: numbering its events from 1 again.
func newRoom(t *testing.T) *sim.Home {
	t.Helper()
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	if _, err := home.CreateZone(sim.ZoneSpec{ID: "room", RightX: 10, BottomY: 10}); err != nil {
		t.Fatal(err)
	}
	return home
}

// roomRun serves the event stream of a new room of its own.
func roomRun(t *testing.T) eventRun {
	home := newRoom(t)
	h := httpapi.NewHandler(httpapi.Config{Home: home})
	t.Cleanup(h.Close)
	return eventRun{h: h, path: "/platform/events", home: home}
}

// TestEventStreamIDOfAnotherRun: a client whose Last-Event-ID an earlier
// run of the server gave (event numbers start again with every run), or an
// earlier home of the same name, or an earlier subscription of the stream
// (changes made while nobody watched have no number), gets a reset, even
// once this run's numbers passed its id: never the events after it, which
// would silently miss what came between.
func TestEventStreamIDOfAnotherRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		// first starts the first run; next, called once a client has
		// its last id, the one that follows it.
		first func(t *testing.T) eventRun
		next  func(t *testing.T, first eventRun) eventRun
	}{{
		name:  "the server restarted",
		first: roomRun,
		next: func(t *testing.T, first eventRun) eventRun {
			first.h.(*httpapi.Handler).Close()
			return roomRun(t)
		},
	}, {
		name: "the home deleted and created again",
		first: func(t *testing.T) eventRun {
			var mu sync.Mutex
			var last *sim.Home
			homes := httpapi.NewHomes(func(name string, spec httpapi.HomeSpec) (httpapi.HomeParts, error) {
				home := newRoom(t)
				mu.Lock()
				last = home
				mu.Unlock()
				return httpapi.HomeParts{Home: home, Engine: mediation.NewEngine(mediation.Config{})}, nil
			}, 0)
			t.Cleanup(homes.Close)
			h := httpapi.NewHandler(httpapi.Config{Home: sim.MustNew(sim.Config{}), Homes: homes})
			t.Cleanup(h.Close)
			if rec := serve(h, "POST", "/homes/lab"); rec.Code != http.StatusOK {
				t.Fatalf("POST /homes/lab = %d %s", rec.Code, rec.Body)
			}
			lab := func() *sim.Home {
				mu.Lock()
				defer mu.Unlock()
				return last
			}
			return eventRun{h: h, path: "/homes/lab/platform/events", home: lab(), lab: lab}
		},
		next: func(t *testing.T, first eventRun) eventRun {
			for _, method := range []string{"DELETE", "POST"} {
				if rec := serve(first.h, method, "/homes/lab"); rec.Code != http.StatusOK {
					t.Fatalf("%s /homes/lab = %d %s", method, rec.Code, rec.Body)
				}
			}
			if first.lab() == first.home {
				t.Fatal("the home created again is the first one")
			}
			return eventRun{h: first.h, path: first.path, home: first.lab()}
		},
	}, {
		name:  "the stream's subscription ended",
		first: roomRun,
		next: func(t *testing.T, first eventRun) eventRun {
			time.Sleep(2 * time.Minute) // the hub stops, nobody watches
			setN(t, first.home, -1)     // a change with no number
			return first
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := tc.first(t)
				got := streamAt(t, a.h, a.path, "", func() { setN(t, a.home, 1); setN(t, a.home, 2) })
				old := ids(got)
				if len(old) != 2 {
					t.Fatalf("first run: ids %v in %q, want 2", old, got)
				}
				b := tc.next(t, a)
				// This run's numbers pass the old id while a client
				// watches: the stream keeps them.
				streamAt(t, b.h, b.path, "", func() {
					for v := range 5 {
						setN(t, b.home, float64(10+v))
					}
				})
				got = streamAt(t, b.h, b.path, old[1], func() { setN(t, b.home, 20) })
				if e := eventsOf(got); len(e) == 0 || !strings.HasPrefix(e[0], "reset ") || !increasing(got) {
					t.Errorf("Last-Event-ID %s of the first run: events %v, want a reset first, and increasing ids\n%s", old[1], e, got)
				}
			})
		})
	}
}

// TestEventStreamResetOfAHomeWithoutChanges: a home that has made no change
// yet (a home just created under /homes, after one of the same name was
// deleted, or a server just restarted) numbers nothing yet, and its reset
// carries the number 0; a client that comes back with an id of another run
// gets that reset all the same, never a silent stream that leaves it with
// the state of the home that is gone.
func TestEventStreamResetOfAHomeWithoutChanges(t *testing.T) {
	for _, lastID := range []string{"0", "3", "0123456789abcdef-3", "not-a-number"} {
		t.Run(lastID, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
				h := httpapi.NewHandler(httpapi.Config{Home: home})
				defer h.Close()
				got := streamOnce(t, h, lastID, func() {
					if _, err := home.CreateZone(sim.ZoneSpec{ID: "room", RightX: 10, BottomY: 10}); err != nil {
						t.Fatal(err)
					}
				})
				want := []string{"reset 0", "zone-added 1"}
				if diff := cmp.Diff(want, eventsOf(got)); diff != "" || !increasing(got) {
					t.Errorf("Last-Event-ID %s: events (-want +got):\n%s\n%s", lastID, diff, got)
				}
			})
		})
	}
}
