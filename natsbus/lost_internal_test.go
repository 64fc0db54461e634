package natsbus

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/pervasim/pervasim/mediation"
)

// ackedJS is a JetStream whose every asynchronous publication is
// acknowledged at once.
type ackedJS struct {
	jetstream.JetStream // nil: only PublishMsgAsync is called
}

type ackedFuture struct {
	ok  chan *jetstream.PubAck
	msg *nats.Msg
}

func (f ackedFuture) Ok() <-chan *jetstream.PubAck { return f.ok }
func (f ackedFuture) Err() <-chan error            { return nil }
func (f ackedFuture) Msg() *nats.Msg               { return f.msg }

func (ackedJS) PublishMsgAsync(msg *nats.Msg, _ ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	f := ackedFuture{ok: make(chan *jetstream.PubAck, 1), msg: msg}
	f.ok <- &jetstream.PubAck{Stream: "S"}
	return f, nil
}

// dropCounter is a link's Receiver that counts what the link lost.
type dropCounter struct{ dropped atomic.Int64 }

func (*dropCounter) Receive(mediation.Message) error { return nil }
func (d *dropCounter) Drop(n int)                    { d.dropped.Add(int64(n)) }

// TestStreamLinkClosingCountsNoStoredMessage: a stream batch the link
// gives up as it closes counts as dropped only what JetStream had not
// acknowledged; one acknowledged is stored, and the receiving side gets
// it. The publisher, finding the link closed, counted every message whose
// acknowledgement it had not read yet, though it was there to read.
func TestStreamLinkClosingCountsNoStoredMessage(t *testing.T) {
	c := &Chains{js: ackedJS{}, streams: map[string]bool{"S": true}}
	to := &dropCounter{}
	l := &natsLink{c: c, to: to, subject: "stored", role: RoleSend, stream: "S"}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	// Close's cancel, as the publisher waits for the acknowledgements.
	l.cancel()
	ms := make([]mediation.Message, 64)
	for i := range ms {
		ms[i] = mediation.Message{Content: float64(i)}
	}
	l.publishJS(ms)
	if n := to.dropped.Load(); n != 0 {
		t.Errorf("%d of %d acknowledged messages counted as dropped, want 0", n, len(ms))
	}
}

// TestStreamLinkClosedBeforePublishingCountsTheBatch: a stream batch the
// publisher takes as the link closes, before it published any of it, is
// counted as dropped whole (6803f21 had no test).
func TestStreamLinkClosedBeforePublishingCountsTheBatch(t *testing.T) {
	c := &Chains{js: ackedJS{}, streams: map[string]bool{"S": true}}
	to := &dropCounter{}
	l := &natsLink{c: c, to: to, subject: "stored", role: RoleSend, stream: "S", closed: true}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.cancel()
	l.publishJS(make([]mediation.Message, 5))
	if n := to.dropped.Load(); n != 5 {
		t.Errorf("%d of 5 messages never published counted as dropped, want 5", n)
	}
}
