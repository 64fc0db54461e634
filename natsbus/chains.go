package natsbus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/pervasim/pervasim/internal/errkind"
	"github.com/pervasim/pervasim/mediation"
)

// The names this package registers in an engine's registry.
const (
	// NATSIn is the adapter type that brings messages from a subject into
	// a chain.
	NATSIn = "nats-in"
	// NATSOut is the adapter type that publishes a chain's messages on a
	// subject.
	NATSOut = "nats-out"
	// Linker is the linker that carries a binding over a subject.
	Linker = "nats"
)

// DefaultDedupWindow is how many recent message ids a nats-in adapter (and
// a JetStream receiver of the nats linker) remembers, to drop a message it
// has taken already: delivered twice, or published again with its id.
const DefaultDedupWindow = 100_000

// publishAckTimeout is how long the nats linker waits for JetStream's
// acknowledgement of a message before publishing it again: one lost with
// the connection never comes.
const publishAckTimeout = 5 * time.Second

// Chains gives a mediation engine the nats-in and nats-out adapters and the
// nats linker, over one NATS connection. Create it with [AttachEngine]. The
// adapters and links unsubscribe when they are removed or their engine
// closes; the connection is the caller's to close, after the engine.
// Chains is safe for concurrent use.
type Chains struct {
	engine *mediation.Engine
	nc     *nats.Conn
	js     jetstream.JetStream

	mu      sync.Mutex
	streams map[string]bool // streams known to exist
}

// AttachEngine registers the nats-in and nats-out types and the nats linker
// in engine's registry, all using nc, and makes Cilia's JMS-Joram and
// JMS_Joram linker names stand for the nats linker (without NATS they stand
// for the in-process queue). It fails when the registry already has those
// names; it panics if engine or nc is nil.
func AttachEngine(engine *mediation.Engine, nc *nats.Conn) (*Chains, error) {
	switch {
	case engine == nil:
		panic("natsbus: AttachEngine with a nil engine")
	case nc == nil:
		panic("natsbus: AttachEngine with a nil connection")
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(publishAckTimeout))
	if err != nil {
		return nil, err
	}
	c := &Chains{engine: engine, nc: nc, js: js, streams: map[string]bool{}}
	reg := engine.Registry()
	if err := reg.Register(mediation.Type{
		Name: NATSIn, Kind: mediation.KindAdapter, Pattern: mediation.PatternInOnly, Out: []string{"out"},
		Properties: map[string]any{"subject": "", "queue": "", "stream": "", "durable": "", "dedup-window": DefaultDedupWindow},
		Doc: "Brings the messages published on a NATS subject into the chain (optional queue group). With a JetStream stream and " +
			"a durable consumer, what was published while the chain was down is delivered when it is back, at least once; repeats are dropped by id. " +
			"A batch of the nats linker is split into its messages; a message that cannot be decoded is counted as an error.",
		New: c.newIn,
	}); err != nil {
		return nil, err
	}
	if err := reg.Register(mediation.Type{
		Name: NATSOut, Kind: mediation.KindAdapter, Pattern: mediation.PatternOutOnly, In: []string{"in"},
		Properties: map[string]any{"subject": "", "stream": "", "jetstream": false, "timeout": "5s"},
		Doc: "Publishes each message on a NATS subject: content as JSON, each property in a header. With jetstream true (or a stream), " +
			"each publication waits for JetStream's acknowledgement.",
		New: c.newOut,
	}); err != nil {
		return nil, err
	}
	if err := reg.RegisterLinker(Linker, mediation.LinkerFunc(c.newLink)); err != nil {
		return nil, err
	}
	for _, alias := range []string{"JMS-Joram", "JMS_Joram"} {
		if err := reg.SetLinkerAlias(alias, Linker); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// invalidf returns an error of kind Invalid: 400 over REST.
func invalidf(format string, args ...any) error {
	return errkind.Errorf(errkind.Invalid, format, args...)
}

// str reads a string property.
func str(props map[string]any, name string) (string, error) {
	switch v := props[name].(type) {
	case nil:
		return "", nil
	case string:
		return strings.TrimSpace(v), nil
	}
	return "", invalidf("property %q must be a string", name)
}

// checkSubject validates a subject to publish on or subscribe to.
func checkSubject(s string, wildcards bool) error {
	if s == "" {
		return invalidf("property \"subject\" is required")
	}
	// A form feed is whitespace to the server too: JetStream refuses a
	// stream or consumer on such a subject, as the chain starts.
	if len(s) > 1024 || strings.ContainsAny(s, " \t\r\n\f") || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") || strings.Contains(s, "..") {
		return invalidf("subject %q: want dot-separated tokens without spaces", s)
	}
	if !wildcards && strings.ContainsAny(s, "*>") {
		return invalidf("subject %q: no wildcard may be published to", s)
	}
	// The server answers a subscription to a subject with ">" before its
	// last token with an error that closes the connection, and the client
	// does not reconnect after it: every chain and home of the process
	// would be cut from NATS.
	tokens := strings.Split(s, ".")
	for _, t := range tokens[:len(tokens)-1] {
		if t == ">" {
			return invalidf("subject %q: the wildcard > may only be the last token", s)
		}
	}
	return nil
}

// maxNameLength is the longest stream or consumer name JetStream takes.
const maxNameLength = 255

// checkName validates the value of property prop naming a JetStream stream
// or durable consumer (empty: none): JetStream refuses names with
// whitespace, '.', '*', '>', '/' or '\', or longer than 255 bytes, and
// the refusal, coming as the chain starts, would only be counted.
func checkName(prop, v string) error {
	if v == "" {
		return nil
	}
	if len(v) > maxNameLength || strings.ContainsAny(v, " \t\r\n\f.*>/\\") || strings.ContainsFunc(v, unicode.IsControl) {
		return invalidf("property %q %q: want at most %d bytes without whitespace, control characters, '.', '*', '>', '/' or '\\'", prop, v, maxNameLength)
	}
	return nil
}

// ensureStream makes sure the stream name exists, capturing subject: it is
// created, with file storage, when it does not.
func (c *Chains) ensureStream(ctx context.Context, name, subject string) error {
	c.mu.Lock()
	known := c.streams[name]
	c.mu.Unlock()
	if known {
		return nil
	}
	if _, err := c.js.Stream(ctx, name); errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = c.js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subject}, Storage: jetstream.FileStorage})
		if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("stream %s: %w", name, err)
		}
	} else if err != nil {
		return fmt.Errorf("stream %s: %w", name, err)
	}
	c.mu.Lock()
	c.streams[name] = true
	c.mu.Unlock()
	return nil
}

// forgetStream makes the next ensureStream of name look for the stream
// again: it is gone (deleted, or the NATS server restarted without its
// store), and is made anew rather than published to, or consumed from, in
// vain until the process restarts.
func (c *Chains) forgetStream(name string) {
	c.mu.Lock()
	delete(c.streams, name)
	c.mu.Unlock()
}

// seen remembers the last n ids, to drop repeats.
type seen struct {
	mu   sync.Mutex
	max  int
	ids  map[string]struct{}
	ring []string // grows to max, then the oldest id goes for each new one
	next int
}

func newSeen(n int) *seen { return &seen{max: n, ids: map[string]struct{}{}} }

// add records id and reports whether it was new.
func (s *seen) add(id string) bool {
	if s == nil || id == "" || s.max == 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.ids[id]; dup {
		return false
	}
	if len(s.ring) < s.max {
		s.ring = append(s.ring, id)
	} else {
		delete(s.ids, s.ring[s.next])
		s.ring[s.next] = id
		s.next = (s.next + 1) % s.max
	}
	s.ids[id] = struct{}{}
	return true
}

// natsIn is one nats-in adapter. It subscribes when it is first announced
// (its chain started with a binding from it, or a binding from it added to
// a started chain), so that no message arrives before there is somewhere
// to send it.
type natsIn struct {
	c          *Chains
	chain, id  string
	countError func() // counts a message that cannot be decoded (Env.CountError)
	subject    string
	queue      string
	stream     string
	durable    string
	dedup      *seen

	mu     sync.Mutex
	sub    *nats.Subscription
	cons   jetstream.ConsumeContext
	retry  chan struct{} // while a consumer is being made again: closed to stop
	closed bool
}

func (c *Chains) newIn(props map[string]any, env mediation.Env) (any, error) {
	in := &natsIn{c: c, chain: env.Chain, id: env.ID, countError: env.CountError}
	if in.countError == nil { // a constructor called outside an engine
		in.countError = func() {}
	}
	var err error
	for name, dst := range map[string]*string{"subject": &in.subject, "queue": &in.queue, "stream": &in.stream, "durable": &in.durable} {
		if *dst, err = str(props, name); err != nil {
			return nil, err
		}
	}
	if err := checkSubject(in.subject, true); err != nil {
		return nil, err
	}
	if in.durable != "" && in.stream == "" {
		return nil, invalidf("property \"durable\" needs a \"stream\"")
	}
	if err := checkName("stream", in.stream); err != nil {
		return nil, err
	}
	if err := checkName("durable", in.durable); err != nil {
		return nil, err
	}
	// The client refuses to subscribe with such a queue group: the chain
	// would start and its adapter take nothing in, with only an error
	// counted.
	if strings.ContainsAny(in.queue, " \t\r\n\f") {
		return nil, invalidf("property \"queue\" %q: want a name without spaces", in.queue)
	}
	if in.stream != "" && in.queue != "" {
		return nil, invalidf("a JetStream consumer takes no queue group: consumers sharing a durable name share its messages")
	}
	n, err := mediation.IntProperty(props, "dedup-window", DefaultDedupWindow, 0, 10_000_000)
	if err != nil {
		return nil, err
	}
	in.dedup = newSeen(n)
	return in, nil
}

// Inject passes on the messages the subscription sends in. With a
// stream, one that would reach no binding (the adapter was just replaced,
// or unbound, while its consumer was handing messages on) is refused as
// busy rather than dropped: the consumer then asks for it again
// (receiveJS), and whoever consumes the durable now (the replacement)
// takes it. Without a stream nobody could ask again: it is dropped, and
// counted. Inject cannot tell the consumer's messages from those sent in
// through Chain.Send (a REST POST): those are refused too, and nobody
// sends them again.
func (in *natsIn) Inject(m mediation.Message, out mediation.Emitter) error {
	if in.stream != "" && !mediation.Bound(out, "out") {
		return mediation.NotTaken(errkind.Errorf(errkind.Busy, "nats-in %s has no binding (it was replaced or unbound, or is not bound yet): "+
			"a message of its stream is refused so that the stream delivers it again, to whoever consumes it now; "+
			"one sent into it is taken only once it is bound", in.id))
	}
	out.Emit("out", m)
	return nil
}

// decodeAll reads the chain messages a NATS message carries: the
// messages of a batch of the nats linker (HeaderBatch), or the one.
func decodeAll(msg *nats.Msg) ([]mediation.Message, error) {
	if msg.Header.Get(HeaderBatch) != "" {
		ms, err := decodeBatch(msg.Data)
		if err != nil {
			return nil, fmt.Errorf("batch: %w", err)
		}
		return ms, nil
	}
	m, err := Decode(msg)
	if err != nil {
		return nil, err
	}
	return []mediation.Message{m}, nil
}

// Announce subscribes, unless it is subscribed.
func (in *natsIn) Announce(mediation.Emitter) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed || in.sub != nil || in.cons != nil || in.retry != nil {
		return nil
	}
	if in.stream == "" {
		var err error
		if in.queue != "" {
			in.sub, err = in.c.nc.QueueSubscribe(in.subject, in.queue, in.receive)
		} else {
			in.sub, err = in.c.nc.Subscribe(in.subject, in.receive)
		}
		if err == nil {
			err = in.sub.SetPendingLimits(1<<20, 256<<20)
		}
		if err == nil && in.c.nc.IsConnected() {
			// Once the server has the subscription, what is published is
			// delivered; not before. Disconnected, the subscription is
			// made again on reconnection, nothing is delivered meanwhile,
			// and waiting would hold the chain's lock for the timeout.
			err = in.c.nc.FlushTimeout(5 * time.Second)
		}
		return err
	}
	// A consumer that cannot be made now (NATS is down, or the stream
	// cannot be made yet) is made again in the background until it is,
	// rather than never: its messages wait in the stream meanwhile.
	// Disconnected, the attempt would only hold the chain's lock for its
	// timeout.
	set := func(cc jetstream.ConsumeContext) { in.cons, in.retry = cc, nil }
	if !in.c.nc.IsConnected() {
		in.retry = retryConsumer(&in.mu, in.consume, set)
		return nil
	}
	cc, err := in.consume()
	if err != nil {
		in.retry = retryConsumer(&in.mu, in.consume, set)
		return err
	}
	in.cons = cc
	return nil
}

// consume makes the stream, if missing, and the consumer, and starts it.
func (in *natsIn) consume() (jetstream.ConsumeContext, error) {
	cfg := jetstream.ConsumerConfig{Durable: in.durable, FilterSubject: in.subject, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: 5 * time.Second, MaxAckPending: 1024}
	cc, err := in.c.consume(in.stream, in.subject, cfg, in.receiveJS, func(cc jetstream.ConsumeContext) {
		consumerGone(&in.mu, &in.cons, &in.retry, cc, in.consume)
	})
	if err != nil {
		return nil, fmt.Errorf("consumer of stream %s: %w", in.stream, err)
	}
	return cc, nil
}

// consume makes stream, if missing, capturing subject, and the consumer
// cfg, and starts it with handle. When the consumer is found gone while
// it runs (its stream deleted, the NATS server restarted without its
// store), gone is called with the consume context,
// on a goroutine of its own, so that it is made again: the library would
// ask a consumer that no longer exists for messages forever.
func (c *Chains) consume(stream, subject string, cfg jetstream.ConsumerConfig, handle jetstream.MessageHandler, gone func(jetstream.ConsumeContext)) (jetstream.ConsumeContext, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.ensureStream(ctx, stream, subject); err != nil {
		return nil, err
	}
	cons, err := c.js.CreateOrUpdateConsumer(ctx, stream, cfg)
	if err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			c.forgetStream(stream) // the next attempt makes it again
		}
		return nil, err
	}
	name := cons.CachedInfo().Name
	var checking atomic.Bool
	return cons.Consume(handle, jetstream.ConsumeErrHandler(func(cc jetstream.ConsumeContext, err error) {
		// Signs that the consumer may be gone (a request for messages that
		// nobody answers, as after a restart without the store; no
		// heartbeat; deleted): a look at the server tells.
		if !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, jetstream.ErrNoHeartbeat) &&
			!errors.Is(err, jetstream.ErrConsumerDeleted) && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return
		}
		if !checking.CompareAndSwap(false, true) {
			return // a look is under way
		}
		go func() {
			defer checking.Store(false)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := c.js.Consumer(ctx, stream, name)
			if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
				c.forgetStream(stream)
				gone(cc)
			}
		}()
	}))
}

// consumerGone replaces cc, the consume context of a consumer found gone,
// by retries that make the consumer (and its stream) again, unless cc was
// stopped meanwhile. mu guards *cons and *retry; remake makes the consumer.
func consumerGone(mu *sync.Mutex, cons *jetstream.ConsumeContext, retry *chan struct{}, cc jetstream.ConsumeContext, remake func() (jetstream.ConsumeContext, error)) {
	mu.Lock()
	defer mu.Unlock()
	if *cons == nil || *cons != cc {
		return
	}
	cc.Stop()
	*cons = nil
	*retry = retryConsumer(mu, remake, func(cc jetstream.ConsumeContext) { *cons, *retry = cc, nil })
}

// retryEvery is how often a consumer that could not be made is tried again.
const retryEvery = time.Second

// retryConsumer tries try every retryEvery, on a goroutine of its own,
// until it succeeds or the returned channel is closed; then, with mu held
// and the channel still open, it hands the consumer to set. The caller
// holds mu, and closes the channel (with mu held) to stop the retries; a
// consumer made meanwhile is stopped.
func retryConsumer(mu *sync.Mutex, try func() (jetstream.ConsumeContext, error), set func(jetstream.ConsumeContext)) chan struct{} {
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(retryEvery)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			cc, err := try()
			if err != nil {
				continue
			}
			mu.Lock()
			select {
			case <-stop:
				mu.Unlock()
				cc.Stop()
				return
			default:
			}
			set(cc)
			mu.Unlock()
			return
		}
	}()
	return stop
}

// send hands m to the chain, waiting for room as the engine allows.
func (in *natsIn) send(m mediation.Message) error {
	ch, err := in.c.engine.Chain(in.chain)
	if err != nil {
		return err
	}
	return ch.Send(in.id, m)
}

// receive takes a core NATS message: the messages of a batch of the nats
// linker one by one, or the one. One the chain cannot take (it is stopped,
// or full past the engine's send timeout) is lost: core NATS keeps
// nothing. JetStream keeps it. One that cannot be decoded is counted in
// the adapter's errors.
func (in *natsIn) receive(msg *nats.Msg) {
	ms, err := decodeAll(msg)
	if err != nil {
		in.countError()
		return
	}
	for _, m := range ms {
		// A message published again with its id (a chain that loops
		// through the subject: nats-out keeps the id it carries) is taken
		// once.
		if id, _ := m.Properties[PropID].(string); !in.dedup.add(id) {
			continue
		}
		_ = in.send(m)
	}
}

// receiveJS takes a JetStream message (the messages of a batch one by
// one): acknowledged once the chain took it, dropped (and acknowledged)
// when its id was seen, asked again later when the chain could not take
// it (not started, a queue ahead full, this adapter unbound: an error
// that wraps mediation.ErrNotTaken), the messages of a batch it took being
// dropped then as seen. One the chain took and failed on the way (it
// caused more deliveries than the engine allows, a component refused it
// for a bound) or refused for good is acknowledged too: asked again, it
// would run what it ran again, every second, for ever. One that cannot be
// decoded is counted in the adapter's errors and never asked again.
func (in *natsIn) receiveJS(msg jetstream.Msg) {
	ms, err := decodeAll(&nats.Msg{Subject: msg.Subject(), Data: msg.Data(), Header: msg.Headers()})
	if err != nil {
		in.countError()
		msg.Term() // it will never decode
		return
	}
	for _, m := range ms {
		id, _ := m.Properties[PropID].(string)
		if in.dedup.has(id) {
			continue
		}
		if err := in.send(m); err != nil && errors.Is(err, mediation.ErrNotTaken) &&
			(errors.Is(err, mediation.ErrConflict) || errors.Is(err, mediation.ErrBusy)) {
			msg.NakWithDelay(time.Second)
			return
		}
		in.dedup.add(id)
	}
	msg.Ack()
}

// has reports whether id was seen.
func (s *seen) has(id string) bool {
	if s == nil || id == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.ids[id]
	return ok
}

// Stop unsubscribes while the chain is stopped or the adapter has no
// binding left (mediation.Stopper): a core NATS message it took then would
// be lost, and in a queue group it would be one the group's other members
// could deliver. Announce subscribes again. A durable consumer stays on
// the server, holding what comes meanwhile.
func (in *natsIn) Stop() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.unsubscribeLocked() && in.c.nc.IsConnected() {
		// Once the server has the unsubscription, what is published goes
		// to the queue group's other members; not before. Disconnected,
		// there is nothing to wait for (the server dropped the
		// subscription with the connection, and a reconnection does not
		// make it again), and waiting would hold the chain's lock.
		return in.c.nc.FlushTimeout(5 * time.Second)
	}
	return nil
}

// Close unsubscribes for good.
func (in *natsIn) Close() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.closed = true
	in.unsubscribeLocked()
	return nil
}

// unsubscribeLocked ends the subscription or the consumer, and reports
// whether there was a core subscription; in.mu is held.
func (in *natsIn) unsubscribeLocked() bool {
	had := in.sub != nil
	if in.sub != nil {
		in.sub.Unsubscribe()
		in.sub = nil
	}
	if in.cons != nil {
		in.cons.Stop()
		in.cons = nil
	}
	if in.retry != nil {
		close(in.retry)
		in.retry = nil
	}
	return had
}

// natsOut is one nats-out adapter.
type natsOut struct {
	c       *Chains
	subject string
	stream  string
	js      bool
	timeout time.Duration
}

func (c *Chains) newOut(props map[string]any, _ mediation.Env) (any, error) {
	o := &natsOut{c: c}
	var err error
	if o.subject, err = str(props, "subject"); err != nil {
		return nil, err
	}
	if err := checkSubject(o.subject, false); err != nil {
		return nil, err
	}
	if o.stream, err = str(props, "stream"); err != nil {
		return nil, err
	}
	if err := checkName("stream", o.stream); err != nil {
		return nil, err
	}
	switch v := props["jetstream"].(type) {
	case nil:
	case bool:
		o.js = v
	case string:
		o.js = v == "true"
		if v != "true" && v != "false" {
			return nil, invalidf("property \"jetstream\" must be true or false")
		}
	default:
		return nil, invalidf("property \"jetstream\" must be true or false")
	}
	o.js = o.js || o.stream != ""
	t, err := str(props, "timeout")
	if err != nil {
		return nil, err
	}
	if o.timeout, err = time.ParseDuration(t); err != nil || o.timeout <= 0 || o.timeout > time.Minute {
		return nil, invalidf("property \"timeout\" %q: want a duration up to 1m, such as 5s", t)
	}
	return o, nil
}

// Process publishes m: at once with core NATS; with JetStream, waiting
// for the acknowledgement (at most the timeout), so a message counted out
// is stored. An error is counted in the adapter's errors.
func (o *natsOut) Process(_ string, m mediation.Message, out mediation.Emitter) error {
	msg, err := Encode(o.subject, m)
	if err != nil {
		out.Drop(1)
		return err
	}
	if !o.js {
		return o.c.nc.PublishMsg(msg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	if o.stream != "" {
		if err := o.c.ensureStream(ctx, o.stream, o.subject); err != nil {
			return err
		}
	}
	_, err = o.c.js.PublishMsg(ctx, msg)
	if o.stream != "" && errors.Is(err, jetstream.ErrNoStreamResponse) {
		// No stream stores the subject any more: make it again and
		// publish once more (with the same id, so it is stored once).
		o.c.forgetStream(o.stream)
		if err = o.c.ensureStream(ctx, o.stream, o.subject); err == nil {
			_, err = o.c.js.PublishMsg(ctx, msg)
		}
	}
	return err
}
