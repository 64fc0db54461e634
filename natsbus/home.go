package natsbus

import (
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/nats-io/nats.go"

	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/sim"
)

// DefaultPrefix is the first token of a home's subjects.
const DefaultPrefix = "pervasim"

// HomeSubject returns the subject of event e of the home named home:
// <prefix>.<home>.<eventType>.<id>, where id is what the event is about
// (the device, person, zone or script; the clock's id; "environment"),
// escaped as one token (see [HeaderProperty]).
func HomeSubject(prefix, home string, e sim.Event) string {
	id := "environment"
	switch {
	case e.DeviceID != "":
		id = e.DeviceID
	case e.PersonID != "":
		id = e.PersonID
	case e.ZoneID != "":
		id = e.ZoneID
	case e.ScriptID != "":
		id = e.ScriptID
	case e.Clock != nil:
		id = e.Clock.ID
	}
	return prefix + "." + home + "." + string(e.Type) + "." + escape(id)
}

// PublishHome publishes every event of home on NATS, as
// <prefix>.<name>.<eventType>.<id> with the event's JSON (the event
// stream's data) as the message, and answers device updates sent to
// <prefix>.<name>.devices.<id>.set: the body is a device update as the REST
// API takes it, the reply is the device or the error as JSON, with the
// status in the Pervasim-Status header. An update published without a reply
// subject (by an MQTT client, say) that fails has its error published on
// <prefix>.<name>.devices.<id>.error. Empty prefix means [DefaultPrefix].
// Call stop to end both.
//
// prefix and name must each be one token of a subject: not empty (but for
// prefix), without '.', the wildcards '*' and '>', whitespace or control
// characters; otherwise the error is of kind Invalid (mediation.ErrInvalid),
// and nothing is published. A name "*" would answer the device updates of
// every home on the server, and a ">" would make the server close nc.
// PublishHome panics if home is nil.
//
// Events are published in order on a goroutine of their own, so that a NATS
// server that stalls holds up no change of the home. While it does, up to
// 64 MiB of events wait; past that they are dropped: a gap in the events'
// ids (the "id" of their JSON, one more for every change) tells a
// subscriber it missed some.
func PublishHome(nc *nats.Conn, prefix, name string, home *sim.Home) (stop func(), err error) {
	return PublishHomeWith(nc, prefix, name, home, func(id string, body []byte) (int, []byte) {
		return httpapi.UpdateDeviceJSON(home, id, body)
	})
}

// DeviceUpdater applies a device update as PUT /devices/device/{id} takes
// it and returns the status and the JSON answer of that request. It must be
// safe for concurrent use.
type DeviceUpdater func(id string, body []byte) (status int, reply []byte)

// PublishHomeWith is PublishHome with the device updates applied by
// update: a server with durable state passes one that journals the change
// first, as it does REST changes. Events are published as PublishHome
// publishes them.
func PublishHomeWith(nc *nats.Conn, prefix, name string, home *sim.Home, update DeviceUpdater) (stop func(), err error) {
	return publishHome(nc, prefix, name, home, update, publishQueueBytes)
}

// publishHome is PublishHomeWith with at most limit bytes of events
// waiting.
func publishHome(nc *nats.Conn, prefix, name string, home *sim.Home, update DeviceUpdater, limit int) (stop func(), err error) {
	if home == nil {
		panic("natsbus: PublishHome with a nil home")
	}
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if err := checkToken("prefix", prefix); err != nil {
		return nil, err
	}
	if err := checkToken("home name", name); err != nil {
		return nil, err
	}
	base := prefix + "." + name
	sub, err := nc.Subscribe(base+".devices.*.set", func(msg *nats.Msg) {
		tokens := strings.Split(msg.Subject, ".")
		// token names the device in the error's subject: the id written
		// as events write it (lamp%2D is lamp-), or as it came when it is
		// no id at all.
		token := tokens[len(tokens)-2]
		var status int
		var reply []byte
		if id, err := unescape(token); err != nil {
			// Answered as REST answers a bad request, rather than left
			// without an answer (a requester would wait for its timeout).
			status, reply = httpapi.ErrorJSON(invalidf("device id %v", err))
		} else {
			token = escape(id)
			status, reply = update(id, msg.Data)
		}
		if msg.Reply != "" {
			r := &nats.Msg{Subject: msg.Reply, Data: reply, Header: nats.Header{HeaderStatus: {strconv.Itoa(status)}}}
			nc.PublishMsg(r)
			return
		}
		if status != 200 {
			nc.Publish(base+".devices."+token+".error", reply)
		}
	})
	if err != nil {
		return nil, err
	}
	pub := newEventPublisher(func(subject string, data []byte) { nc.Publish(subject, data) }, limit)
	end := home.Observe(func(e sim.Event) {
		pub.add(HomeSubject(prefix, name, e), httpapi.EventJSON(e))
	})
	return func() {
		end()
		sub.Unsubscribe()
		pub.close()
	}, nil
}

// checkToken validates s, the prefix or the name of a home's subjects, as
// one token of a subject: a wildcard in it would subscribe to other homes'
// device updates ("*") or, before the last token, make the server close the
// connection (">"), and a '.' would make it two tokens.
func checkToken(what, s string) error {
	if s == "" {
		return invalidf("%s is empty: want one subject token", what)
	}
	if len(s) > 255 || strings.ContainsFunc(s, func(r rune) bool {
		return r == '.' || r == '*' || r == '>' || unicode.IsSpace(r) || unicode.IsControl(r)
	}) {
		return invalidf("%s %q: want one subject token, without '.', '*', '>' or whitespace", what, s)
	}
	return nil
}

// publishQueueBytes bounds the events of one home waiting for NATS.
const publishQueueBytes = 64 << 20

// eventPublisher publishes a home's events, in order, on a goroutine of
// its own. A NATS server that stalls (connected, but not reading) makes
// nc.Publish wait until the connection's flusher timeout (a minute by
// default) once the socket's buffers are full; published on the goroutine
// that made the change, that wait held up REST changes and the simulation
// itself. Events wait in a queue bounded by bytes instead: past the bound
// they are dropped, as an event stream drops a client that cannot keep up.
// A healthy connection drains the queue as fast as it fills. It is safe for
// concurrent use.
type eventPublisher struct {
	publish func(subject string, data []byte)
	limit   int           // bytes queued or being published, at most
	wake    chan struct{} // holds one token while the queue is not empty
	done    chan struct{} // closed when the publishing goroutine ends

	mu     sync.Mutex
	queue  []pendingEvent
	bytes  int
	closed bool
}

type pendingEvent struct {
	subject string
	data    []byte
}

func newEventPublisher(publish func(subject string, data []byte), limit int) *eventPublisher {
	p := &eventPublisher{publish: publish, limit: limit, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go p.run()
	return p
}

// add queues one event, or drops it when the queue is full.
func (p *eventPublisher) add(subject string, data []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if p.bytes+len(subject)+len(data) > p.limit {
		return
	}
	p.queue = append(p.queue, pendingEvent{subject, data})
	p.bytes += len(subject) + len(data)
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// run publishes what was queued, in order, until close; what was queued
// before close is still published.
func (p *eventPublisher) run() {
	defer close(p.done)
	var batch []pendingEvent
	for range p.wake {
		p.mu.Lock()
		batch, p.queue = p.queue, batch[:0]
		closed := p.closed
		p.mu.Unlock()
		n := 0
		for i, e := range batch {
			p.publish(e.subject, e.data)
			batch[i] = pendingEvent{}
			n += len(e.subject) + len(e.data)
		}
		// Counted until the batch is published: a publish held up by a
		// stalled server holds its batch within the bound too. Once per
		// batch, not per event, the lock is not taken on every publish.
		p.mu.Lock()
		p.bytes -= n
		p.mu.Unlock()
		if closed {
			return
		}
	}
}

// close stops taking events; those queued are still published. It does
// not wait for them: a stalled server would hold it up.
func (p *eventPublisher) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	select {
	case p.wake <- struct{}{}:
	default:
	}
}
