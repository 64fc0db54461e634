package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
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

// Buffers of the event stream, in events. A client further behind than
// clientBuffer is disconnected; the hub itself reads the home through a
// subscription of hubBuffer.
const (
	clientBuffer = 1024
	hubBuffer    = 16384
)

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

// frame encodes e as one Server-Sent Event.
func frame(e sim.Event) []byte {
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
	b := make([]byte, 0, len(data)+len(e.Type)+32)
	b = append(b, "id: "...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, "\nevent: "...)
	b = append(b, e.Type...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// eventHub reads the home's events through one subscription, encodes each
// once and hands the bytes to every connected client without blocking. It
// runs only while clients are connected.
type eventHub struct {
	home *sim.Home

	mu      sync.Mutex // guards everything below
	clients map[chan []byte]struct{}
	sub     *sim.Subscription
	pumping sync.WaitGroup
	closed  bool
}

// join registers a client and returns its channel, which the hub closes
// when the client is dropped or the hub closes. ok is false once closed.
func (hub *eventHub) join() (ch chan []byte, ok bool) {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	if hub.closed {
		return nil, false
	}
	ch = make(chan []byte, clientBuffer)
	if hub.clients == nil {
		hub.clients = map[chan []byte]struct{}{}
	}
	hub.clients[ch] = struct{}{}
	if hub.sub == nil {
		hub.sub = hub.home.Subscribe(hubBuffer)
		hub.pumping.Add(1)
		go hub.pump(hub.sub)
	}
	return ch, true
}

// leave unregisters a client; the last one out stops the pump.
func (hub *eventHub) leave(ch chan []byte) {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	if _, ok := hub.clients[ch]; ok {
		delete(hub.clients, ch)
		close(ch)
	}
	if len(hub.clients) == 0 && hub.sub != nil {
		hub.sub.Close()
		hub.sub = nil
	}
}

// pump delivers the events of sub until it ends. When the hub itself fell
// behind (its subscription was dropped), every client is disconnected:
// each must know it missed events.
func (hub *eventHub) pump(sub *sim.Subscription) {
	defer hub.pumping.Done()
	for e := range sub.C {
		b := frame(e)
		hub.mu.Lock()
		for ch := range hub.clients {
			select {
			case ch <- b:
			default: // too slow: disconnect it rather than wait
				delete(hub.clients, ch)
				close(ch)
			}
		}
		hub.mu.Unlock()
	}
	hub.mu.Lock()
	defer hub.mu.Unlock()
	if hub.sub == sub { // dropped by the home, not stopped by leave
		hub.sub = nil
		for ch := range hub.clients {
			delete(hub.clients, ch)
			close(ch)
		}
	}
}

// close disconnects every client, stops the pump and waits for it.
func (hub *eventHub) close() {
	hub.mu.Lock()
	hub.closed = true
	for ch := range hub.clients {
		delete(hub.clients, ch)
		close(ch)
	}
	if hub.sub != nil {
		hub.sub.Close()
		hub.sub = nil
	}
	hub.mu.Unlock()
	hub.pumping.Wait()
}

// handleEvents streams every change of the home as Server-Sent Events: the
// iCasa event name as "event:", the JSON envelope as "data:", the event's
// sequence number as "id:". Idle streams get a comment every keepAlive.
func (s *server) handleEvents() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.Header().Set("Content-Type", "text/event-stream")
			return
		}
		if n := s.streams.Add(1); n > int64(s.maxStreams) {
			s.streams.Add(-1)
			writeError(w, r, errkind.Errorf(errBusy, "%d event streams are open, the most the server keeps (-max-event-clients); try again later", n-1))
			return
		}
		defer s.streams.Add(-1)
		rc := http.NewResponseController(w)
		// A client that stops reading is dropped once a write has waited
		// writeTimeout; the deadline is renewed before each write.
		deadline := func() { _ = rc.SetWriteDeadline(time.Now().Add(s.writeTimeout)) }
		ch, ok := s.events.join()
		if !ok {
			writeError(w, r, &routeError{path: r.URL.Path})
			return
		}
		defer s.events.leave(ch)
		deadline()
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		if _, err := w.Write([]byte("retry: 2000\n\n")); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
		idle := time.NewTicker(s.keepAlive)
		defer idle.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case b, ok := <-ch:
				if !ok {
					return // dropped: too slow, or the server is closing
				}
				deadline()
				if _, err := w.Write(b); err != nil {
					return
				}
				// Write what else is waiting before flushing once.
				for more := true; more; {
					select {
					case b, ok := <-ch:
						if !ok {
							rc.Flush()
							return
						}
						if _, err := w.Write(b); err != nil {
							return
						}
					default:
						more = false
					}
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
