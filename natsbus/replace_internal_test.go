package natsbus

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/pervasim/pervasim/mediation"
)

// TestReplacedNATSInHandsTheStreamsMessageOn: a message of a stream that
// the consumer of a replaced nats-in hands it after the swap (it was
// already on its way when the consumer stopped) reaches the replacement:
// the old adapter refuses it, its consumer asks the stream for it again,
// and the replacement, consuming the same durable, takes it. The old one
// used to acknowledge it as its chain dropped it: lost.
//
// The consumer's hand-over is made at the one instant that matters, by
// hand: a message of the durable, fetched before the swap, is handed to
// the old adapter's receiveJS after it, as its consumer does with one in
// flight. (TestNATSInReplacedUnderLoadWithADurable, which swaps under load,
// rarely lands a delivery in that instant: it passes without the refusal.)
func TestReplacedNATSInHandsTheStreamsMessageOn(t *testing.T) {
	s, err := StartServer(ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	nc, err := nats.Connect(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	c := attached(t, nc)
	e := c.engine
	got := make(chan mediation.Message, 16)
	err = e.Registry().Register(mediation.Type{Name: "sink", Kind: mediation.KindAdapter, Pattern: mediation.PatternOutOnly, In: []string{"in"},
		New: func(map[string]any, mediation.Env) (any, error) {
			return mediation.ProcessorFunc(func(_ string, m mediation.Message, _ mediation.Emitter) error { got <- m; return nil }), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]any{"subject": "handover.in", "stream": "HANDOVER", "durable": "worker"}

	// The message on its way: published, and delivered to the durable's
	// consumer (made here as nats-in makes it), not yet acknowledged.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.ensureStream(ctx, "HANDOVER", "handover.in"); err != nil {
		t.Fatal(err)
	}
	cons, err := c.js.CreateOrUpdateConsumer(ctx, "HANDOVER", jetstream.ConsumerConfig{Durable: "worker", FilterSubject: "handover.in",
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: 5 * time.Second, MaxAckPending: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.js.Publish(ctx, "handover.in", []byte(`"in flight"`)); err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	msg, ok := <-batch.Messages()
	if !ok {
		t.Fatalf("no message fetched: %v", batch.Error())
	}

	ch, err := e.CreateChain("swap")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"old", "new"} {
		if _, err := ch.AddComponent(mediation.KindAdapter, NATSIn, id, props); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ch.AddComponent(mediation.KindAdapter, "sink", "out", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Bind("old:out", "out:in", "", nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.Start(); err != nil {
		t.Fatal(err)
	}
	if err := ch.Replace("old", "new"); err != nil {
		t.Fatal(err)
	}
	// The old adapter's consumer hands it the message after the swap.
	old, err := c.newIn(props, mediation.Env{Chain: "swap", ID: "old"})
	if err != nil {
		t.Fatal(err)
	}
	old.(*natsIn).receiveJS(msg)

	select {
	case m := <-got:
		if m.Content != "in flight" {
			t.Errorf("the replacement emitted %v, want the message in flight", m.Content)
		}
	case <-time.After(15 * time.Second): // asked again, it comes in a second
		t.Fatal("the message in flight at the swap never reached the replacement")
	}
}
