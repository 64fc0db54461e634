package natsbus_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/natsbus"
)

// TestLinkCountsWhatItLoses: what a nats link took and then lost, where
// no error reaches the sender any more, is counted in the dropped counter
// of the binding's target: a publication refused by a closed connection,
// content that is not JSON (core and stream), a message arriving on the
// subject that cannot be decoded. Before, each vanished uncounted.
func TestLinkCountsWhatItLoses(t *testing.T) {
	s, _ := startNATS(t)
	comps := []comp{
		{mediation.KindAdapter, "rest-in", "a", nil},
		{mediation.KindAdapter, "sink", "b", nil},
	}
	for _, tc := range []struct {
		name  string
		props map[string]any
		// act makes the link lose one message: through the chain's
		// source, or by publishing on the subject with pub.
		act func(t *testing.T, ch *mediation.Chain, nc, pub *nats.Conn)
	}{
		{"closed connection", map[string]any{"subject": "lost.closed", "role": "send"},
			func(t *testing.T, ch *mediation.Chain, nc, _ *nats.Conn) {
				nc.Close()
				send(t, ch, mediation.Message{Content: 1.0})
			}},
		{"content not JSON", map[string]any{"subject": "lost.content", "role": "send"},
			func(t *testing.T, ch *mediation.Chain, _, _ *nats.Conn) {
				send(t, ch, mediation.Message{Content: func() {}})
			}},
		{"content not JSON, in a batch", map[string]any{"subject": "lost.batch", "role": "send"},
			func(t *testing.T, ch *mediation.Chain, _, _ *nats.Conn) {
				// Sent from one call, the three are likely (not sure) to
				// go in one batch; alone or not, one cannot travel.
				send(t, ch, mediation.Message{Content: 1.0}, mediation.Message{Content: func() {}}, mediation.Message{Content: 2.0})
			}},
		{"content not JSON, stream", map[string]any{"subject": "lost.js", "role": "send", "stream": "LOST"},
			func(t *testing.T, ch *mediation.Chain, _, _ *nats.Conn) {
				send(t, ch, mediation.Message{Content: func() {}})
			}},
		{"undecodable arrival", map[string]any{"subject": "lost.in", "role": "receive"},
			func(t *testing.T, _ *mediation.Chain, _, pub *nats.Conn) {
				err := pub.PublishMsg(&nats.Msg{Subject: "lost.in", Data: []byte(`1`), Header: nats.Header{natsbus.HeaderProperty + "k": {"not JSON"}}})
				if err != nil {
					t.Fatal(err)
				}
				if err := pub.Flush(); err != nil {
					t.Fatal(err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc := connect(t, s.URL())
			e, _ := engine(t, nc)
			ch := build(t, e, "c", comps, []bind{{"a:out", "b:in", "nats", tc.props}})
			tc.act(t, ch, nc, connect(t, s.URL()))
			waitDropped(t, ch, "b", 1)
		})
	}
}

// send sends ms into component "a" of ch.
func send(t *testing.T, ch *mediation.Chain, ms ...mediation.Message) {
	t.Helper()
	for _, m := range ms {
		if err := ch.Send("a", m); err != nil {
			t.Fatal(err)
		}
	}
}

// waitDropped waits until component id of ch has counted n dropped
// messages, and fails if it counts more, or fewer for a long time (a
// hang, not a speed check).
func waitDropped(t *testing.T, ch *mediation.Chain, id string, n uint64) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		info, err := ch.Component(id)
		if err != nil {
			t.Fatal(err)
		}
		if d := info.Counters.Dropped; d >= n {
			if d > n {
				t.Fatalf("%s counted %d dropped, want %d", id, d, n)
			}
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%s counted %+v, want %d dropped", id, info.Counters, n)
		}
	}
}

// TestLinkCountsAnUndecodableBatchWhole: a batch arriving that cannot be
// decoded is lost whole, and counted as the number of messages its header
// says (a batch is decoded all or nothing); it was counted as one.
func TestLinkCountsAnUndecodableBatchWhole(t *testing.T) {
	s, _ := startNATS(t)
	nc := connect(t, s.URL())
	e, out := engine(t, nc)
	ch := build(t, e, "c", []comp{
		{mediation.KindAdapter, "rest-in", "a", nil},
		{mediation.KindAdapter, "sink", "b", nil},
	}, []bind{{"a:out", "b:in", "nats", map[string]any{"subject": "lost.batch.in", "role": "receive"}}})
	pub := connect(t, s.URL())
	// Three messages, the last of them cut short: none is delivered.
	bad := &nats.Msg{Subject: "lost.batch.in", Data: []byte(`[{"content":1},{"content":2},{"content":`), Header: nats.Header{natsbus.HeaderBatch: {"3"}}}
	if err := pub.PublishMsg(bad); err != nil {
		t.Fatal(err)
	}
	// Then one that arrives: core NATS keeps one publisher's order, so the
	// batch was taken (and lost) once it is here.
	good, err := natsbus.Encode("lost.batch.in", mediation.Message{Content: 4.0})
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.PublishMsg(good); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-out:
		if m.Content != 4.0 {
			t.Fatalf("delivered %v, want the message after the batch", m.Content)
		}
	case <-time.After(30 * time.Second): // a hang, not a speed check
		t.Fatal("the message after the batch never came")
	}
	info, err := ch.Component("b")
	if err != nil {
		t.Fatal(err)
	}
	if info.Counters.Dropped != 3 {
		t.Errorf("b counted %d dropped, want the batch's 3", info.Counters.Dropped)
	}
}
