package natsbus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/pervasim/pervasim/internal/errkind"
	"github.com/pervasim/pervasim/mediation"
)

// The roles of a nats binding, its "role" property.
const (
	// RoleBoth sends and receives: both components are in this process.
	RoleBoth = "both"
	// RoleSend only publishes what the source emits: the target is in
	// another process.
	RoleSend = "send"
	// RoleReceive only delivers what arrives to the target: the source is
	// in another process.
	RoleReceive = "receive"
)

// maxPending bounds the messages a link keeps for its next start, when
// they arrived as its chain stopped.
const maxPending = 10_000

// newLink makes the link of a nats binding. Properties: "subject" (or
// Cilia's "topic" or "jms.topic"; required unless the role is both, when a
// subject of the link's own is made up), "role" (both, send or
// receive), "stream" (a JetStream stream: at-least-once, repeats dropped by
// id), "durable" (the consumer's name; default derived from the subject)
// and "dedup-window". Other "jms.*" properties are accepted and ignored.
func (c *Chains) newLink(props map[string]any, to mediation.Receiver) (mediation.Link, error) {
	l := &natsLink{c: c, to: to, role: RoleBoth}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	window := DefaultDedupWindow
	for k, v := range props {
		s, _ := v.(string)
		switch k {
		case "subject", "topic", "jms.topic":
			if _, ok := v.(string); !ok {
				return nil, invalidf("nats linker property %q must be a string", k)
			}
			if l.subject != "" && l.subject != s {
				return nil, invalidf("nats linker: subject given twice, as %q and %q", l.subject, s)
			}
			l.subject = s
		case "role":
			if s != RoleBoth && s != RoleSend && s != RoleReceive {
				return nil, invalidf("nats linker role %v: want both, send or receive", v)
			}
			l.role = s
		case "stream", "durable":
			if _, ok := v.(string); !ok {
				return nil, invalidf("nats linker property %q must be a string", k)
			}
			if err := checkName(k, s); err != nil {
				return nil, invalidf("nats linker: %v", err)
			}
			if k == "stream" {
				l.stream = s
			} else {
				l.durable = s
			}
		case "dedup-window":
			n, err := mediation.IntProperty(props, k, DefaultDedupWindow, 0, 10_000_000)
			if err != nil {
				return nil, err
			}
			window = n
		default:
			if len(k) > 4 && k[:4] == "jms." {
				continue
			}
			return nil, invalidf("nats linker has no property %q (known: subject, role, stream, durable, dedup-window)", k)
		}
	}
	if l.subject == "" && l.role == RoleBoth {
		// Both ends are here: any subject of its own will do, so chains
		// written for Cilia's JMS linker without a topic run as they are.
		l.subject = "pervasim.link." + nuid.Next()
	}
	if err := checkSubject(l.subject, false); err != nil {
		return nil, invalidf("nats linker: %v", err)
	}
	if l.durable != "" && l.stream == "" {
		return nil, invalidf("nats linker: \"durable\" needs a \"stream\"")
	}
	if l.stream != "" {
		if l.durable == "" {
			l.durable = "pervasim-" + escape(l.subject)
			if len(l.durable) > maxNameLength { // JetStream would refuse it
				sum := sha256.Sum256([]byte(l.subject))
				l.durable = "pervasim-" + hex.EncodeToString(sum[:])
			}
		}
		l.dedup = newSeen(window)
	}
	return l, nil
}

// natsLink carries one binding over a subject.
//
// Send publishes (core NATS: at once; JetStream: asynchronously, and Room
// holds senders back while too many publications await their
// acknowledgement). Start subscribes, Stop unsubscribes: with core NATS
// what is published while the link is stopped is lost; a JetStream durable
// consumer keeps it for the next Start.
type natsLink struct {
	c       *Chains
	to      mediation.Receiver
	subject string
	role    string
	stream  string
	durable string
	dedup   *seen

	mu       sync.Mutex
	running  bool
	closed   bool
	sub      *nats.Subscription
	cons     jetstream.ConsumeContext
	retry    chan struct{} // while the consumer is being made again: closed to stop
	inflight sync.WaitGroup
	pending  []mediation.Message // taken while stopping, offered again at Start
	outbox   []mediation.Message // sent, to be published
	spare    []mediation.Message // the outbox's other buffer, owned by the publisher
	frame    []byte              // the publisher's batch buffer
	wake     chan struct{}       // wakes the publisher; nil until the first Send
	flushed  chan struct{}       // closed when the publisher ends
	room     chan struct{}       // closed when the outbox has room again
	ctx      context.Context     // done once Close is called: the publisher stops waiting
	cancel   context.CancelFunc  // ends ctx
}

// Send hands m to the link's publisher goroutine; it never blocks. Past
// outboxMax messages waiting to be published it fails (the message is
// counted as dropped); Room holds senders into the chain back long before.
func (l *natsLink) Send(m mediation.Message) error {
	if l.role == RoleReceive {
		return errors.New("this side of the nats binding only receives: its source is in another process")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errors.New("link closed")
	}
	if len(l.outbox) >= outboxMax {
		return errkind.Errorf(errkind.Busy, "%d messages wait to be published on %s", len(l.outbox), l.subject)
	}
	l.outbox = append(l.outbox, m)
	if l.wake == nil {
		l.wake = make(chan struct{}, 1)
		l.flushed = make(chan struct{})
		go l.publisher(l.wake, l.flushed)
	}
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return nil
}

// The outbox's bounds: senders into the chain wait past outboxHigh
// messages; Send fails past outboxMax.
const (
	outboxHigh = 8192
	outboxMax  = 1 << 18
	batchMax   = 1024      // messages per batch
	batchBytes = 256 << 10 // bytes per batch, about
	// batchHeaderRoom is what a batch leaves of the server's max_payload
	// for its headers.
	batchHeaderRoom = 128
)

// publisher publishes what Send queued, in order, until the link closes.
// With core NATS, what accumulated while it published goes as one batch
// (one message alone goes in the single-message format); with JetStream,
// each message is published on its own, asynchronously, and published
// again until JetStream acknowledges it.
func (l *natsLink) publisher(wake, flushed chan struct{}) {
	defer close(flushed)
	for range wake {
		for {
			l.mu.Lock()
			batch := l.outbox
			l.outbox, l.spare = l.spare[:0], nil
			closed := l.closed
			if len(batch) == 0 || closed {
				l.wakeRoom()
				l.mu.Unlock()
				break
			}
			l.mu.Unlock()
			if l.stream == "" {
				l.publishCore(batch)
			} else {
				l.publishJS(batch)
			}
			clear(batch) // let the messages go
			l.mu.Lock()
			l.spare = batch
			l.wakeRoom()
			l.mu.Unlock()
		}
	}
}

// wakeRoom releases the senders waiting for room; l.mu is held.
func (l *natsLink) wakeRoom() {
	if l.room != nil && len(l.outbox) < outboxHigh {
		close(l.room)
		l.room = nil
	}
}

// publishCore publishes ms in batches.
func (l *natsLink) publishCore(ms []mediation.Message) {
	if len(ms) == 1 {
		msg, err := Encode(l.subject, ms[0])
		if err == nil {
			err = l.c.nc.PublishMsg(msg)
		}
		if err != nil {
			l.lost(1)
		}
		return
	}
	// The frame and the message are reused: PublishMsg copies them.
	buf := l.frame[:0]
	n := 0
	msg := &nats.Msg{Subject: l.subject, Header: nats.Header{HeaderBatch: {""}}}
	flush := func() {
		if n == 0 {
			return
		}
		buf[0] = '['
		msg.Data = append(buf, ']')
		msg.Header[HeaderBatch][0] = strconv.Itoa(n)
		if l.c.nc.PublishMsg(msg) != nil {
			// The connection is closed, or its buffer for a
			// reconnection is full.
			l.lost(n)
		}
		buf, n = buf[:0], 0
	}
	// A batch must stay within the server's max_payload (1MB by default),
	// or the whole of it is refused: a message that would take it past
	// goes in the next one.
	limit := int(l.c.nc.MaxPayload()) - batchHeaderRoom
	for _, m := range ms {
		mark := len(buf)
		if n == 0 {
			buf = append(buf, '[') // appendBatchItem puts a comma after it
		}
		next, err := appendBatchItem(buf, m)
		if err != nil {
			buf = buf[:mark]
			l.lost(1) // content that is not JSON cannot travel
			continue
		}
		if n > 0 && limit > 0 && len(next)+1 > limit {
			buf = next[:mark]
			flush()
			if next, err = appendBatchItem(append(buf, '['), m); err != nil {
				l.lost(1)
				continue
			}
		}
		buf = next
		n++
		if n >= batchMax || len(buf) >= batchBytes {
			flush()
		}
	}
	flush()
	if cap(buf) <= 4*batchBytes {
		l.frame = buf[:0]
	}
}

// publishJS publishes each of ms to JetStream and waits for every
// acknowledgement, publishing again (with the same id, so JetStream keeps
// one) what failed, until the link closes.
//
// What it gives up (the link closed, or the stream cannot be made) and
// JetStream had not acknowledged by then is counted as dropped, published
// or not yet: it was not known to be stored.
func (l *natsLink) publishJS(ms []mediation.Message) {
	if !l.waitStream() {
		l.lost(len(ms))
		return
	}
	todo := make([]*nats.Msg, 0, len(ms))
	for _, m := range ms {
		if msg, err := Encode(l.subject, m); err == nil {
			todo = append(todo, msg)
		} else {
			l.lost(1)
		}
	}
	unsure := len(todo) // of todo, not known stored when it gives up
	defer func() { l.lost(unsure) }()
	for len(todo) > 0 && !l.isClosed() {
		var futures []jetstream.PubAckFuture
		var failed []*nats.Msg
		for _, msg := range todo {
			f, err := l.c.js.PublishMsgAsync(msg)
			if err != nil {
				failed = append(failed, msg)
				continue
			}
			futures = append(futures, f)
		}
		// An acknowledgement lost with the connection never comes: the
		// future fails after publishAckTimeout and the message is
		// published again. Close does not wait for either.
		gone := false
		for i, f := range futures {
			select {
			case <-f.Ok():
				unsure--
			case err := <-f.Err():
				failed = append(failed, f.Msg())
				gone = gone || errors.Is(err, jetstream.ErrNoStreamResponse)
			case <-l.ctx.Done():
				// What is acknowledged already is stored, and goes to
				// the receiving side: not dropped.
				for _, f := range futures[i:] {
					select {
					case <-f.Ok():
						unsure--
					default:
					}
				}
				return
			}
		}
		todo = failed
		if gone {
			// No stream stores the subject any more (the NATS server
			// restarted without its store, say): make it again before
			// publishing what failed once more.
			l.c.forgetStream(l.stream)
			if !l.waitStream() {
				return
			}
		}
		if len(todo) > 0 {
			select {
			case <-l.c.js.PublishAsyncComplete():
			case <-time.After(100 * time.Millisecond):
			case <-l.ctx.Done():
				return
			}
		}
	}
}

// waitStream makes sure the stream exists, and reports whether it does.
// Until it exists nothing can be stored: while NATS is down or does not
// answer in time, it waits for it rather than drop what was sent, until
// the link closes. Another error (no JetStream on the server, a stream of
// another configuration) will not pass by waiting: it gives up, the batch
// is lost, and the next one tries again, as the senders wait for none.
func (l *natsLink) waitStream() bool {
	for {
		err := l.ensureStream()
		if err == nil {
			return true
		}
		if l.c.nc.IsConnected() && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, nats.ErrTimeout) {
			return false
		}
		select {
		case <-l.ctx.Done():
			return false
		case <-time.After(time.Second):
		}
	}
}

func (l *natsLink) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// ensureStream makes the stream, unless the engine knows it (see
// Chains.ensureStream, which keeps what it made until forgetStream).
func (l *natsLink) ensureStream() error {
	ctx, cancel := context.WithTimeout(l.ctx, 5*time.Second) // Close ends the wait
	defer cancel()
	return l.c.ensureStream(ctx, l.stream, l.subject)
}

// lost counts n messages the link took and lost as dropped by its
// binding's target (mediation.Dropper).
func (l *natsLink) lost(n int) {
	if d, ok := l.to.(mediation.Dropper); ok && n > 0 {
		d.Drop(n)
	}
}

// Room implements mediation.Backpressure: senders into the chain wait
// while outboxHigh messages wait to be published.
func (l *natsLink) Room() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.outbox) < outboxHigh || l.closed {
		return nil
	}
	if l.room == nil {
		l.room = make(chan struct{})
	}
	return l.room
}

// Start subscribes and offers the messages kept from the last stop.
func (l *natsLink) Start() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running || l.closed {
		return
	}
	l.running = true
	if l.role == RoleSend {
		return
	}
	if kept := l.pending; len(kept) > 0 {
		// Offered on a goroutine of their own: Start runs under the
		// engine's locks, which Receive needs.
		l.pending = nil
		l.inflight.Add(1)
		go func() {
			defer l.inflight.Done()
			for i, m := range kept {
				if l.to.Receive(m) != nil {
					for _, m := range kept[i:] {
						l.keep(m)
					}
					return
				}
			}
		}()
	}
	if l.stream == "" {
		sub, err := l.c.nc.Subscribe(l.subject, l.receive)
		if err != nil {
			return // the connection is closed: nothing can arrive
		}
		sub.SetPendingLimits(1<<20, 256<<20)
		l.sub = sub
		if l.c.nc.IsConnected() { // disconnected, the reconnection subscribes
			l.c.nc.FlushTimeout(5 * time.Second) // the server has the subscription
		}
		return
	}
	// A consumer that cannot be made now (NATS is down) is made again in
	// the background until it is; what is sent meanwhile waits in the
	// stream.
	var consume func() (jetstream.ConsumeContext, error)
	consume = func() (jetstream.ConsumeContext, error) {
		return l.c.consume(l.stream, l.subject, jetstream.ConsumerConfig{Durable: l.durable, FilterSubject: l.subject,
			AckPolicy: jetstream.AckExplicitPolicy, AckWait: 5 * time.Second, MaxAckPending: 1024}, l.receiveJS,
			func(cc jetstream.ConsumeContext) { consumerGone(&l.mu, &l.cons, &l.retry, cc, consume) })
	}
	set := func(cc jetstream.ConsumeContext) { l.cons, l.retry = cc, nil }
	if l.c.nc.IsConnected() {
		if cc, err := consume(); err == nil {
			l.cons = cc
			return
		}
	}
	l.retry = retryConsumer(&l.mu, consume, set)
}

// enter marks a delivery in flight; false when the link is stopped.
func (l *natsLink) enter() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.running {
		return false
	}
	l.inflight.Add(1)
	return true
}

// receive delivers a core NATS message; one that arrives as the chain
// stops is kept for the next Start, one that cannot be decoded is counted
// as dropped.
func (l *natsLink) receive(msg *nats.Msg) {
	var ms []mediation.Message
	if msg.Header.Get(HeaderBatch) != "" {
		var err error
		if ms, err = decodeBatch(msg.Data); err != nil {
			// A batch is decoded whole or not at all: every message
			// its header counts is lost (one, when it says nothing
			// sensible).
			n, err := strconv.Atoi(msg.Header.Get(HeaderBatch))
			if err != nil || n < 1 || n > batchMax {
				n = 1
			}
			l.lost(n)
			return
		}
	} else {
		m, err := Decode(msg)
		if err != nil {
			l.lost(1)
			return
		}
		ms = []mediation.Message{m}
	}
	if !l.enter() {
		for _, m := range ms {
			l.keep(m)
		}
		return
	}
	defer l.inflight.Done()
	for i, m := range ms {
		if l.to.Receive(m) != nil {
			for _, m := range ms[i:] {
				l.keep(m)
			}
			return
		}
	}
}

// keep holds m for the next Start, up to maxPending messages; past them, or
// once the link is closed, m is counted as dropped.
func (l *natsLink) keep(m mediation.Message) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed && len(l.pending) < maxPending {
		l.pending = append(l.pending, m)
		return
	}
	l.lost(1)
}

// receiveJS delivers a JetStream message, dropping repeats by id; one the
// chain cannot take now is delivered again later.
func (l *natsLink) receiveJS(msg jetstream.Msg) {
	m, err := Decode(&nats.Msg{Subject: msg.Subject(), Data: msg.Data(), Header: msg.Headers()})
	if err != nil {
		msg.Term()
		l.lost(1)
		return
	}
	id, _ := m.Properties[PropID].(string)
	if l.dedup.has(id) {
		msg.Ack()
		return
	}
	if !l.enter() {
		msg.NakWithDelay(time.Second)
		return
	}
	defer l.inflight.Done()
	if l.to.Receive(m) != nil {
		msg.NakWithDelay(time.Second)
		return
	}
	l.dedup.add(id)
	msg.Ack()
}

// Stop unsubscribes and waits for the deliveries in flight.
func (l *natsLink) Stop() {
	l.mu.Lock()
	if !l.running {
		l.mu.Unlock()
		return
	}
	l.running = false
	sub, cons := l.sub, l.cons
	l.sub, l.cons = nil, nil
	if l.retry != nil {
		close(l.retry)
		l.retry = nil
	}
	l.mu.Unlock()
	if sub != nil {
		sub.Unsubscribe()
	}
	if cons != nil {
		cons.Stop()
	}
	l.inflight.Wait()
}

// Len returns the messages kept for the next Start and those received
// and not delivered yet.
func (l *natsLink) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.pending)
	if l.sub != nil {
		if p, _, err := l.sub.Pending(); err == nil {
			n += p
		}
	}
	return n
}

// Close stops the link for good and discards what it kept and what it had
// not published yet.
func (l *natsLink) Close() int {
	l.Stop()
	l.mu.Lock()
	l.cancel()
	l.closed = true
	n := len(l.pending) + len(l.outbox)
	l.pending, l.outbox = nil, nil
	wake, flushed := l.wake, l.flushed
	l.wake = nil
	if l.room != nil {
		close(l.room)
		l.room = nil
	}
	l.mu.Unlock()
	if wake != nil {
		close(wake)
		<-flushed
	}
	return n
}

// String describes the link, for errors.
func (l *natsLink) String() string { return fmt.Sprintf("nats link on %s (%s)", l.subject, l.role) }
