package httpapi

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pervasim/pervasim/internal/errkind"
	"github.com/pervasim/pervasim/sim"
)

// DefaultKeepAlive is how often an idle event stream gets a comment line.
const DefaultKeepAlive = 15 * time.Second

// DefaultMaxEventClients is how many event streams may be open at once by
// default (Config.MaxEventClients); one more is 503 busy.
const DefaultMaxEventClients = 1000

// DefaultEventWriteTimeout is how long a write to an event stream may take
// by default (Config.EventWriteTimeout) before the client is dropped.
const DefaultEventWriteTimeout = 10 * time.Second

// Bounds of the event stream. A client further behind than clientBytes
// bytes of frames (an event may carry a whole device, of up to megabytes:
// without a bound in bytes a client that stops reading would hold a
// gigabyte until its write times out; each frame counts frameOverhead
// more, its place in the queue), or than clientEvents events, is
// disconnected; the hub itself falls behind, and disconnects every client,
// when hubBuffer events of the home wait for it (see hubFeed). A client
// that reads takes a burst of one change's events whole (a zone resized
// over thousands of sensors), as long as it stays within those bounds.
const (
	clientBytes   = historyBytes
	clientEvents  = hubBuffer
	frameOverhead = 64
	hubBuffer     = 16384
)

// hubFeed holds the events of a home that wait for the hub's pump: the
// hub taps the home (sim.Home.Tap) and the pump takes what came in
// batches. A queue that grows with what waits, not a channel of hubBuffer
// events: such a channel is allocated whole (16,384 events of 216 bytes,
// 3.5 MB) for every home with a stream open, and a minute after its last
// stream closed, however quiet the home. It is safe for concurrent use.
type hubFeed struct {
	wake chan struct{} // holds a token while events wait; closed by stop

	mu      sync.Mutex
	queue   []sim.Event
	spare   []sim.Event // the pump's last batch, emptied, for the next one
	stopped bool
	behind  bool // stopped because hubBuffer events waited
}

func newHubFeed() *hubFeed { return &hubFeed{wake: make(chan struct{}, 1)} }

// add queues e for the pump; once hubBuffer events wait, the feed stops
// as behind. It is the hub's tap: it runs on the goroutine that makes a
// change, under the home's lock, and never blocks on the pump.
func (f *hubFeed) add(e sim.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	if len(f.queue) >= hubBuffer {
		f.behind = true
		f.stopLocked()
		return
	}
	f.queue = append(f.queue, e)
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// take returns the events waiting, oldest first, and whether the feed
// stopped because it fell behind; give the batch back with done.
func (f *hubFeed) take() (batch []sim.Event, behind bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	batch, f.queue, f.spare = f.queue, f.spare, nil
	return batch, f.behind
}

// done gives back a batch take returned, once its events are handled, so
// that the next reuses its memory; one grown by a burst (past 64 events,
// 14 KB) is let go, so that a quiet home does not keep what a burst took.
func (f *hubFeed) done(batch []sim.Event) {
	clear(batch)
	if cap(batch) > 64 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.spare == nil {
		f.spare = batch[:0]
	}
}

// stop ends the feed: add takes no more events, and the pump ends once it
// has taken those waiting.
func (f *hubFeed) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopLocked()
}

func (f *hubFeed) stopLocked() {
	if !f.stopped {
		f.stopped = true
		close(f.wake)
	}
}

// envelope is the JSON of one event: the iCasa envelope {eventType, id,
// time} and the payload of its kind. time is the simulated time in ms.
type envelope struct {
	EventType string           `json:"eventType"`
	ID        string           `json:"id"`
	Time      int64            `json:"time"`
	ZoneID    string           `json:"zoneId,omitempty"`
	Zone      *sim.Zone        `json:"zone,omitempty"`
	DeviceID  string           `json:"deviceId,omitempty"`
	Device    *sim.Device      `json:"device,omitempty"`
	PersonID  string           `json:"personId,omitempty"`
	Person    *sim.Person      `json:"person,omitempty"`
	Clock     *sim.Clock       `json:"clock,omitempty"`
	Env       *sim.Environment `json:"environment,omitempty"`
	ScriptID  string           `json:"scriptId,omitempty"`
	Script    *sim.ScriptInfo  `json:"script,omitempty"`
	Variable  string           `json:"variable,omitempty"`
	Property  string           `json:"property,omitempty"`
	Value     any              `json:"value,omitempty"`
	OldValue  any              `json:"oldValue,omitempty"`
	EventData any              `json:"event-data,omitempty"`
}

// EventJSON encodes e as the JSON object the event stream carries in its
// data field: the iCasa envelope {eventType, id, time} and the payload of
// the event's kind. time is the simulated time in ms. EventJSON is safe for
// concurrent use.
func EventJSON(e sim.Event) []byte {
	env := envelope{
		EventType: string(e.Type), ID: strconv.FormatUint(e.Seq, 10), Time: e.Time,
		ZoneID: e.ZoneID, Zone: e.Zone, DeviceID: e.DeviceID, Device: e.Device,
		PersonID: e.PersonID, Person: e.Person, Clock: e.Clock, Env: e.Environment,
		ScriptID: e.ScriptID, Script: e.Script,
	}
	switch {
	case e.Type == sim.EventDeviceEvent:
		env.EventData = e.Value
	case e.ZoneID != "" && e.Property != "":
		env.Variable, env.Value, env.OldValue = e.Property, e.Value, e.OldValue
	case e.Property != "":
		env.Property, env.Value, env.OldValue = e.Property, e.Value, e.OldValue
	}
	data, err := json.Marshal(env)
	if err != nil {
		data = []byte(`{"eventType":"` + string(e.Type) + `","id":"` + env.ID + `"}`)
	}
	return data
}

// frame encodes e as one Server-Sent Event of the stream run (see
// eventHub.run): its SSE id is run-seq.
func frame(run string, e sim.Event) []byte {
	data := EventJSON(e)
	b := make([]byte, 0, len(data)+len(e.Type)+len(run)+32)
	b = appendID(append(b, "id: "...), run, e.Seq)
	b = append(b, "\nevent: "...)
	b = append(b, e.Type...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// appendID appends the SSE id of the event numbered seq of the stream run:
// run, a dash, and seq in decimal.
func appendID(b []byte, run string, seq uint64) []byte {
	return strconv.AppendUint(append(append(b, run...), '-'), seq, 10)
}

// History of the event stream: the last historyEvents events, at most
// historyBytes of them, are kept for clients that reconnect with
// Last-Event-ID; the hub stays subscribed historyLinger after the last
// client left, so that one reconnecting finds what it missed.
const (
	historyEvents = 4096
	historyBytes  = 8 << 20
	historyLinger = time.Minute
)

// frameOf is one encoded event and its sequence number.
type frameOf struct {
	seq uint64
	b   []byte
}

// eventClient is one client of an eventHub: the frames handed on to it and
// not yet taken, in a queue that grows with what waits (a channel would
// be allocated whole for every client, at its largest). It is safe for
// concurrent use.
type eventClient struct {
	wake chan struct{} // holds a token while frames wait; closed once the client is dropped

	mu     sync.Mutex
	queue  []frameOf
	bytes  int // of the queue's frames, frameOverhead each included
	closed bool
}

func newEventClient() *eventClient { return &eventClient{wake: make(chan struct{}, 1)} }

// offer hands f on to c without blocking, and reports false when c is too
// far behind, in bytes or in events; hub.mu is held. A client with nothing
// queued takes any frame, however big.
func (c *eventClient) offer(f frameOf) bool {
	n := len(f.b) + frameOverhead
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || len(c.queue) > 0 && (c.bytes+n > clientBytes || len(c.queue) >= clientEvents) {
		return false
	}
	c.queue = append(c.queue, f)
	c.bytes += n
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return true
}

// take returns the frames waiting, oldest first, and false once c was
// dropped: nothing comes after them. spare is the array of the frames
// the last take returned, written by now: the queue goes on in it, unless
// a burst made it large.
func (c *eventClient) take(spare []frameOf) ([]frameOf, bool) {
	clear(spare) // the frames' bytes go
	if cap(spare) > 256 {
		spare = nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	frames := c.queue
	c.queue, c.bytes = spare[:0], 0
	return frames, !c.closed
}

// close drops c: take reports it, once wake has woken the reader.
func (c *eventClient) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		close(c.wake)
	}
}

// eventHub reads the home's events through one subscription (it taps the
// home, through a hubFeed), encodes each once, keeps a bounded history
// and hands the bytes to every connected client without blocking. It runs
// while clients are connected, and historyLinger after the last one left.
type eventHub struct {
	home *sim.Home

	mu      sync.Mutex // guards everything below
	clients map[*eventClient]struct{}
	// feed has the home's events while the hub taps it (nil when it
	// does not); untap ends the tap.
	feed    *hubFeed
	untap   func()
	pumping sync.WaitGroup
	closed  bool
	linger  *time.Timer
	// afterFunc starts the linger's timer; nil means time.AfterFunc.
	afterFunc func(time.Duration, func()) *time.Timer
	// run names the current subscription: random, drawn when it starts,
	// it is the first part of every SSE id sent through it (run-seq). A
	// change made while nothing watched the home has no sequence number,
	// and sequence numbers start again with every sim.Home (a server
	// restarted, from a -state directory too, or a home deleted and
	// created again), so only a client whose last id came through this
	// subscription can be told what it missed: any other id, of an earlier
	// subscription, run of the server or home of the same name, gets a
	// reset, never the events after a number that meant another event.
	run string
	// history holds the frames of the current subscription, oldest first.
	// It has every event numbered above after, and last is the number of
	// the last frame handed on to the clients (after when none): every
	// frame a client receives once it joined is numbered above last. When
	// the subscription starts, both are the home's last change then; after
	// moves up as the oldest frames are forgotten.
	history []frameOf
	hbytes  int
	after   uint64
	last    uint64
}

// seqOf returns the sequence number an SSE id of the current subscription
// names, and false for an id of another subscription or none of ours;
// hub.mu is held.
func (hub *eventHub) seqOf(id string) (uint64, bool) {
	n, ok := strings.CutPrefix(id, hub.run+"-")
	if !ok {
		return 0, false
	}
	seq, err := strconv.ParseUint(n, 10, 64)
	return seq, err == nil
}

// join registers a client that last saw the event whose SSE id is lastID
// ("": none, a new client) and returns it (the hub closes it when it is
// dropped or the hub closes), and the frames to send it
// first: those it missed, or, when that is no longer known or lastID is
// not of the current subscription, a reset (see resetFrame). Every frame
// the channel carries is numbered above those. ok is false once the hub is
// closed.
func (hub *eventHub) join(lastID string) (c *eventClient, missed []frameOf, ok bool) {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	if hub.closed {
		return nil, nil, false
	}
	if hub.feed == nil {
		// The feed has every change after seq, as it is made (a tap:
		// what the home's observers do, a chain through the bridge
		// that waits, holds no stream up).
		feed := newHubFeed()
		seq, untap := hub.home.Tap(feed.add)
		hub.feed, hub.untap = feed, untap
		hub.run = fmt.Sprintf("%016x", rand.Uint64())
		hub.history, hub.hbytes, hub.after, hub.last = nil, 0, seq, seq
		hub.pumping.Add(1)
		go hub.pump(hub.feed, hub.run)
	}
	c = newEventClient()
	if hub.clients == nil {
		hub.clients = map[*eventClient]struct{}{}
	}
	hub.clients[c] = struct{}{}
	if hub.linger != nil {
		hub.linger.Stop()
		hub.linger = nil
	}
	if lastID == "" {
		return c, nil, true
	}
	// Every event a client saw through this subscription is in the
	// history (the pump records it before handing it on), unless
	// forgotten; a reset gave it the number last had then.
	lastSeen, ours := hub.seqOf(lastID)
	if !ours || lastSeen < hub.after || lastSeen > hub.last {
		return c, []frameOf{{seq: hub.last, b: resetFrame(hub.home, hub.run, hub.last)}}, true
	}
	for _, f := range hub.history {
		if f.seq > lastSeen {
			missed = append(missed, f)
		}
	}
	return c, missed, true
}

// leave unregisters a client; the last one out stops the pump after
// historyLinger, unless another joins meanwhile.
func (hub *eventHub) leave(c *eventClient) {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	if _, ok := hub.clients[c]; ok {
		hub.drop(c)
	}
	if len(hub.clients) == 0 && hub.feed != nil && hub.linger == nil && !hub.closed {
		feed := hub.feed
		after := hub.afterFunc
		if after == nil {
			after = time.AfterFunc
		}
		var t *time.Timer
		t = after(historyLinger, func() {
			hub.mu.Lock()
			defer hub.mu.Unlock()
			// A timer that fired while a client joined (Stop came too
			// late) and left again (another timer) is not the linger.
			if hub.linger != t {
				return
			}
			hub.linger = nil
			if hub.feed == feed && len(hub.clients) == 0 {
				hub.stopFeed()
				hub.history, hub.hbytes = nil, 0
			}
		})
		hub.linger = t
	}
}

// record appends f to the history, forgetting the oldest frames beyond its
// bounds; hub.mu is held.
func (hub *eventHub) record(f frameOf) {
	hub.history = append(hub.history, f)
	hub.hbytes += len(f.b)
	hub.last = f.seq
	drop := 0
	for len(hub.history)-drop > historyEvents || hub.hbytes > historyBytes {
		hub.hbytes -= len(hub.history[drop].b)
		hub.after = hub.history[drop].seq
		drop++
	}
	// Forgotten by slicing, not by a copy of the rest: once full, the
	// history forgets a frame with every frame it records, and a copy of
	// its 4,096 frames each time cost more than the event did. The
	// frames' bytes are let go at once; their slots when append moves
	// the history to a new array, a copy every thousand frames or so.
	clear(hub.history[:drop])
	hub.history = hub.history[drop:]
}

// stopFeed ends the tap of the home; the pump ends once it has
// handed on what was waiting. hub.mu is held.
func (hub *eventHub) stopFeed() {
	hub.untap()
	hub.feed.stop()
	hub.feed, hub.untap = nil, nil
}

// pump delivers the events of feed until it stops. When the hub itself
// fell behind, every client is disconnected: each must know it missed
// events.
func (hub *eventHub) pump(feed *hubFeed, run string) {
	defer hub.pumping.Done()
	for range feed.wake {
		hub.handWaiting(feed, run)
	}
	// wake is closed once the feed stopped: what came after the last
	// token is handed on, then the pump ends.
	if !hub.handWaiting(feed, run) {
		return
	}
	hub.mu.Lock()
	defer hub.mu.Unlock()
	if hub.feed == feed {
		hub.stopFeed()
		hub.history, hub.hbytes = nil, 0
		for c := range hub.clients {
			hub.drop(c)
		}
	}
}

// handWaiting hands on the events waiting in feed, and reports whether
// the feed stopped because the hub fell behind.
func (hub *eventHub) handWaiting(feed *hubFeed, run string) (behind bool) {
	batch, behind := feed.take()
	for _, e := range batch {
		hub.hand(frameOf{seq: e.Seq, b: frame(run, e)})
	}
	feed.done(batch)
	return behind
}

// drop disconnects a client: its stream ends once it wrote what it holds.
// hub.mu is held.
func (hub *eventHub) drop(c *eventClient) {
	delete(hub.clients, c)
	c.close()
}

// hand records f and offers it to every client.
func (hub *eventHub) hand(f frameOf) {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	// A pump whose feed stopped (a linger ended, the hub fell behind)
	// may still hand on what waited while a new feed runs: that is at
	// most the new feed's starting number, already known to its clients.
	if f.seq <= hub.last {
		return
	}
	hub.record(f)
	for c := range hub.clients {
		if !c.offer(f) { // too slow: disconnect it rather than wait
			hub.drop(c)
		}
	}
}

// close disconnects every client, stops the pump and waits for it.
func (hub *eventHub) close() {
	hub.mu.Lock()
	hub.closed = true
	if hub.linger != nil {
		hub.linger.Stop()
		hub.linger = nil
	}
	for c := range hub.clients {
		hub.drop(c)
	}
	if hub.feed != nil {
		hub.stopFeed()
	}
	hub.mu.Unlock()
	hub.pumping.Wait()
}

// resetFrame tells a client that reconnected too late, or with the id of
// another subscription, that it missed events no longer known: it must
// read the state again. Its envelope is an event's: id is seq, the
// sequence number of the last event the hub handed on before the client
// joined (the state to read is at least that one), also its SSE id
// (run-seq), so that a client that reconnects after reading the state
// resumes from there; every event after the reset on the stream is
// numbered above it. time is the simulated time, in ms.
func resetFrame(h *sim.Home, run string, seq uint64) []byte {
	data, _ := json.Marshal(struct {
		EventType string `json:"eventType"`
		ID        string `json:"id"`
		Time      int64  `json:"time"`
		Reason    string `json:"reason"`
	}{"reset", strconv.FormatUint(seq, 10), h.Now().UnixMilli(), "the events since Last-Event-ID are no longer kept: read the state again"})
	b := appendID([]byte("id: "), run, seq)
	b = append(append(append(b, "\nevent: reset\ndata: "...), data...), "\n\n"...)
	return b
}

// handleEvents streams every change of the home as Server-Sent Events: the
// iCasa event name as "event:", the JSON envelope as "data:", and as "id:"
// the run of the hub's subscription and the event's sequence number,
// run-seq (see eventHub.run). Idle streams get a comment every keepAlive.
func (s *server) handleEvents() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.Header().Set("Content-Type", "text/event-stream")
			return
		}
		if n := s.shared.streams.Add(1); n > int64(s.maxStreams) {
			s.shared.streams.Add(-1)
			writeError(w, r, errkind.Errorf(errBusy, "%d event streams are open, the most the server keeps (-max-event-clients); try again later", n-1))
			return
		}
		defer s.shared.streams.Add(-1)
		rc := http.NewResponseController(w)
		// A client that stops reading is dropped once a write has waited
		// writeTimeout; the deadline is renewed before each write.
		deadline := func() { _ = rc.SetWriteDeadline(time.Now().Add(s.writeTimeout)) }
		c, missed, ok := s.events.join(r.Header.Get("Last-Event-ID"))
		if !ok {
			writeError(w, r, &routeError{path: r.URL.Path})
			return
		}
		defer s.events.leave(c)
		deadline()
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		if _, err := w.Write([]byte("retry: 2000\n\n")); err != nil {
			return
		}
		sent, wrote := uint64(0), false // the number of the last frame written, if any
		// send writes frames, those above the last sent (the ids of a
		// stream increase: the client gets frames above the missed ones,
		// or the reset), renewing the deadline before each: a burst of
		// thousands, or the history a client missed, may take longer than
		// writeTimeout to a client that reads all along. The first frame
		// goes whatever its number: the reset of a home that has made no
		// change yet is numbered 0.
		send := func(frames []frameOf) error {
			for _, f := range frames {
				if wrote && f.seq <= sent {
					continue
				}
				sent, wrote = f.seq, true
				deadline()
				if _, err := w.Write(f.b); err != nil {
					return err
				}
			}
			return nil
		}
		if send(missed) != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
		idle := time.NewTicker(s.keepAlive)
		defer idle.Stop()
		var frames []frameOf // the last frames taken
		for {
			select {
			case <-r.Context().Done():
				return
			case <-c.wake:
				// Everything waiting, flushed once.
				var open bool
				frames, open = c.take(frames)
				if send(frames) != nil {
					return
				}
				deadline()
				if !open {
					rc.Flush()
					return // dropped: too slow, or the server is closing
				}
				if rc.Flush() != nil {
					return
				}
				idle.Reset(s.keepAlive)
			case <-idle.C:
				deadline()
				if _, err := w.Write([]byte(": keep-alive\n\n")); err != nil || rc.Flush() != nil {
					return
				}
			}
		}
	})
}
