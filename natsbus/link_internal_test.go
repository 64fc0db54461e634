package natsbus

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/pervasim/pervasim/mediation"
)

// TestBatchWithinMaxPayload: a batch of the nats linker is never larger
// than the server takes (a NATS server's default max_payload is 1MB),
// whatever the sizes of the messages waiting: small ones followed by a
// large one all arrive, rather than the whole batch being refused.
func TestBatchWithinMaxPayload(t *testing.T) {
	nc := plainServer(t)
	l, got := startLink(t, attached(t, nc), map[string]any{"subject": "big.batch"}, 1024)

	max := int(nc.MaxPayload())
	var ms []mediation.Message
	for range 200 {
		ms = append(ms, mediation.Message{Content: strings.Repeat("s", 1000), Properties: map[string]any{}})
	}
	// Each fits in a NATS message of its own.
	ms = append(ms, mediation.Message{Content: strings.Repeat("L", max-10_000), Properties: map[string]any{}})
	ms = append(ms, mediation.Message{Content: strings.Repeat("L", max/2), Properties: map[string]any{}})
	ms = append(ms, mediation.Message{Content: strings.Repeat("L", max/2), Properties: map[string]any{}})
	ms = append(ms, mediation.Message{Content: "last", Properties: map[string]any{}})
	l.publishCore(ms)
	// Core NATS keeps the publisher's order: once "last" is here, every
	// message before it that was delivered is here too.
	n := 0
	for m := range got {
		n++
		if m.Content == "last" {
			break
		}
	}
	if n != len(ms) {
		t.Errorf("received %d messages of %d", n, len(ms))
	}
}

// TestCloseWhileJetStreamIsDown: a JetStream nats link whose message waits
// for its acknowledgement when the NATS server goes away closes at once.
// The acknowledgement never comes: the publisher used to wait for it for
// ever, and Close (and so the engine's, and the server's shutdown) with it.
func TestCloseWhileJetStreamIsDown(t *testing.T) {
	s, err := StartServer(ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	disconnected := make(chan struct{})
	nc, err := nats.Connect(s.URL(), nats.MaxReconnects(-1), nats.DisconnectErrHandler(func(*nats.Conn, error) { close(disconnected) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	c := attached(t, nc)
	l, got := startLink(t, c, map[string]any{"subject": "down.c", "stream": "DOWN"}, 16)
	if err := l.Send(mediation.Message{Content: 1.0, Properties: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	<-got // the stream exists and the link works
	s.Shutdown()
	<-disconnected
	if err := l.Send(mediation.Message{Content: 2.0, Properties: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	hang := time.After(30 * time.Second)
	for tick := time.NewTicker(time.Millisecond); c.js.PublishAsyncPending() == 0; {
		select {
		case <-tick.C:
		case <-hang:
			t.Fatal("the message is never published")
		}
	}
	closed := make(chan struct{})
	go func() { l.Close(); close(closed) }()
	select {
	case <-closed:
	case <-hang:
		t.Fatal("Close hangs while the acknowledgement of a message is awaited")
	}
}

// TestStreamThatCannotBeMade: a JetStream link on a server without
// JetStream loses what it cannot store, batch after batch, as it did
// before links waited for their stream: waiting, which is right while NATS
// is down, would never end here, and the outbox would fill and hold the
// chain's senders back.
func TestStreamThatCannotBeMade(t *testing.T) {
	l, _ := startLink(t, attached(t, plainServer(t)), map[string]any{"subject": "no.js", "stream": "NOJS", "role": "send"}, 0)
	outbox := func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.outbox)
	}
	give := time.After(30 * time.Second)
	for i := range 3 {
		if err := l.Send(mediation.Message{Content: float64(i)}); err != nil {
			t.Fatal(err)
		}
		for outbox() > 0 { // taken by the publisher
			select {
			case <-give:
				t.Fatalf("message %d waits for ever for a stream the server cannot make", i)
			default:
				runtime.Gosched()
			}
		}
	}
}

// plainServer starts a NATS server without JetStream, with its defaults
// (max_payload 1MB), and connects to it.
func plainServer(t *testing.T) *nats.Conn {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// attached returns the nats components of a new engine on nc; the engine
// closes with the test.
func attached(t *testing.T, nc *nats.Conn) *Chains {
	t.Helper()
	e := mediation.NewEngine(mediation.Config{})
	t.Cleanup(func() { e.Close() })
	c, err := AttachEngine(e, nc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// startLink makes a nats link of c with props and starts it; what it
// delivers comes on the returned channel, of room n. It closes with the
// test.
func startLink(t *testing.T, c *Chains, props map[string]any, n int) (*natsLink, chan mediation.Message) {
	t.Helper()
	got := make(chan mediation.Message, n)
	link, err := c.newLink(props, mediation.ReceiverFunc(func(m mediation.Message) error {
		got <- m
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	l := link.(*natsLink)
	l.Start()
	t.Cleanup(func() { l.Close() })
	return l, got
}
