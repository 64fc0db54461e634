package natsbus_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/natsbus"
)

// startNATS starts an embedded server for one test and returns a
// connection to it.
func startNATS(tb testing.TB) (*natsbus.Server, *nats.Conn) {
	tb.Helper()
	s, err := natsbus.StartServer(natsbus.ServerConfig{Addr: "127.0.0.1:0", StoreDir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Shutdown)
	return s, connect(tb, s.URL())
}

func connect(tb testing.TB, url string) *nats.Conn {
	tb.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	return nc
}

// engine returns an engine with this package's types, over nc, and a
// "sink" adapter type whose messages come out of the channel returned.
func engine(tb testing.TB, nc *nats.Conn) (*mediation.Engine, chan mediation.Message) {
	tb.Helper()
	e := mediation.NewEngine(mediation.Config{})
	tb.Cleanup(func() { e.Close() })
	if _, err := natsbus.AttachEngine(e, nc); err != nil {
		tb.Fatal(err)
	}
	out := make(chan mediation.Message, 1<<20)
	err := e.Registry().Register(mediation.Type{Name: "sink", Kind: mediation.KindAdapter, Pattern: mediation.PatternOutOnly, In: []string{"in"},
		New: func(map[string]any, mediation.Env) (any, error) {
			return mediation.ProcessorFunc(func(_ string, m mediation.Message, _ mediation.Emitter) error {
				out <- m
				return nil
			}), nil
		}})
	if err != nil {
		tb.Fatal(err)
	}
	return e, out
}

// chain builds a chain from a list of components ("kind type id props")
// and bindings.
type comp struct {
	kind  mediation.Kind
	typ   string
	id    string
	props map[string]any
}

type bind struct {
	from, to, linker string
	props            map[string]any
}

func build(tb testing.TB, e *mediation.Engine, id string, comps []comp, binds []bind) *mediation.Chain {
	tb.Helper()
	ch, err := e.CreateChain(id)
	if err != nil {
		tb.Fatal(err)
	}
	for _, c := range comps {
		if _, err := ch.AddComponent(c.kind, c.typ, c.id, c.props); err != nil {
			tb.Fatalf("component %s: %v", c.id, err)
		}
	}
	for _, b := range binds {
		if _, err := ch.Bind(b.from, b.to, b.linker, b.props); err != nil {
			tb.Fatalf("bind %s → %s: %v", b.from, b.to, err)
		}
	}
	if err := ch.Start(); err != nil {
		tb.Fatal(err)
	}
	return ch
}

// publisher builds chain "from" in e: what is sent into its component
// "in" a nats-out publishes on subject.
func publisher(tb testing.TB, e *mediation.Engine, subject string) *mediation.Chain {
	tb.Helper()
	return build(tb, e, "from", []comp{
		{mediation.KindAdapter, "rest-in", "in", nil},
		{mediation.KindAdapter, natsbus.NATSOut, "out", map[string]any{"subject": subject}},
	}, []bind{{"in:out", "out:in", "", nil}})
}

// receive takes n messages from a sink, or fails when they do not come
// within a long time (a hang, not a speed check).
func receive(tb testing.TB, sink chan mediation.Message, n int) []mediation.Message {
	tb.Helper()
	timeout := time.After(30 * time.Second)
	var out []mediation.Message
	for len(out) < n {
		select {
		case m := <-sink:
			out = append(out, m)
		case <-timeout:
			tb.Fatalf("received %d messages, want %d", len(out), n)
		}
	}
	return out
}

// withoutID removes the id that NATS adds, to compare with what was sent.
func withoutID(ms []mediation.Message) []mediation.Message {
	out := make([]mediation.Message, len(ms))
	for i, m := range ms {
		m = m.Clone()
		delete(m.Properties, natsbus.PropID)
		out[i] = m
	}
	return out
}

func sent(n int) []mediation.Message {
	var out []mediation.Message
	for i := range n {
		out = append(out, mediation.Message{Content: map[string]any{"n": float64(i), "text": fmt.Sprintf("m%d", i)},
			Properties: map[string]any{"kind": "temp", "weird name: é/+#": []any{true, nil, "x"}, "n": float64(i)}})
	}
	return out
}

// TestAdaptersAcrossEngines: what a nats-out publishes, a nats-in of
// another engine on another connection receives, content and properties
// unchanged, in order.
func TestAdaptersAcrossEngines(t *testing.T) {
	s, nc := startNATS(t)
	e1, _ := engine(t, nc)
	from := publisher(t, e1, "test.data")
	e2, sink := engine(t, connect(t, s.URL()))
	build(t, e2, "to", []comp{
		{mediation.KindAdapter, natsbus.NATSIn, "in", map[string]any{"subject": "test.*"}},
		{mediation.KindAdapter, "sink", "out", nil},
	}, []bind{{"in:out", "out:in", "", nil}})
	want := sent(50)
	for _, m := range want {
		if err := from.Send("in", m.Clone()); err != nil {
			t.Fatal(err)
		}
	}
	got := receive(t, sink, len(want))
	if d := cmp.Diff(want, withoutID(got)); d != "" {
		t.Errorf("received (-sent +got):\n%s", d)
	}
}

// TestLinkerSplitsAChain: one chain defined in two engines, its binding
// a → b over the nats linker: the first engine sends, the second receives.
func TestLinkerSplitsAChain(t *testing.T) {
	s, nc := startNATS(t)
	comps := []comp{
		{mediation.KindAdapter, "rest-in", "a", nil},
		{mediation.KindAdapter, "sink", "b", nil},
	}
	e1, sink1 := engine(t, nc)
	sender := build(t, e1, "c", comps, []bind{{"a:out", "b:in", "nats", map[string]any{"subject": "link.c", "role": "send"}}})
	e2, sink2 := engine(t, connect(t, s.URL()))
	receiver := build(t, e2, "c", comps, []bind{{"a:out", "b:in", "nats", map[string]any{"subject": "link.c", "role": "receive"}}})
	want := sent(20)
	for _, m := range want {
		if err := sender.Send("a", m.Clone()); err != nil {
			t.Fatal(err)
		}
	}
	got := receive(t, sink2, len(want))
	if d := cmp.Diff(want, withoutID(got)); d != "" {
		t.Errorf("received (-sent +got):\n%s", d)
	}
	if len(sink1) != 0 {
		t.Errorf("the sending side delivered %d messages itself", len(sink1))
	}
	// The receiving side refuses to send.
	if err := receiver.Send("a", mediation.Message{Content: 1}); err != nil {
		t.Fatal(err) // the send succeeds; the link drops the message
	}
	info, _ := receiver.Component("a")
	if info.Counters.Dropped != 1 {
		t.Errorf("the receive side took a message to send: counters %+v", info.Counters)
	}
}

// TestEngineCloseEndsThePublishers: closing an engine, its chains not
// deleted, ends the goroutines its nats links publish from.
func TestEngineCloseEndsThePublishers(t *testing.T) {
	s, nc := startNATS(t)
	comps := []comp{
		{mediation.KindAdapter, "rest-in", "a", nil},
		{mediation.KindAdapter, "sink", "b", nil},
	}
	e1, _ := engine(t, nc)
	sender := build(t, e1, "c", comps, []bind{{"a:out", "b:in", "nats", map[string]any{"subject": "close.c", "role": "send"}}})
	e2, sink2 := engine(t, connect(t, s.URL()))
	build(t, e2, "c", comps, []bind{{"a:out", "b:in", "nats", map[string]any{"subject": "close.c", "role": "receive"}}})
	for _, m := range sent(5) {
		if err := sender.Send("a", m); err != nil {
			t.Fatal(err)
		}
	}
	receive(t, sink2, 5)
	const publisher = "natsbus.(*natsLink).publisher"
	if !strings.Contains(goroutines(), publisher) {
		t.Fatalf("no goroutine runs %s while the chain sends: the test looks for the wrong name", publisher)
	}
	if err := e1.Close(); err != nil {
		t.Fatal(err)
	}
	if g := goroutines(); strings.Contains(g, publisher) {
		t.Errorf("a publisher outlives Engine.Close:\n%s", g)
	}
}

// goroutines returns the stacks of every goroutine.
func goroutines() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// TestJMSNamesAreNATS: a chain written for Cilia's JMS linker runs over
// NATS, its jms.topic the subject.
func TestJMSNamesAreNATS(t *testing.T) {
	_, nc := startNATS(t)
	e, sink := engine(t, nc)
	ch := build(t, e, "c", []comp{
		{mediation.KindAdapter, "rest-in", "a", nil},
		{mediation.KindAdapter, "sink", "b", nil},
	}, []bind{{"a:out", "b:in", "JMS-Joram", map[string]any{"jms.topic": "cilia.c", "jms.persistent": "false"}}})
	info, err := ch.Info()
	if err != nil {
		t.Fatal(err)
	}
	if b := info.Bindings; b[0].Linker != natsbus.Linker {
		t.Errorf("a JMS-Joram binding has linker %q, want nats", b[0].Linker)
	}
	seen := make(chan *nats.Msg, 1)
	sub, _ := nc.ChanSubscribe("cilia.c", seen)
	defer sub.Unsubscribe()
	if err := ch.Send("a", mediation.Message{Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	got := receive(t, sink, 1)
	// A JMS binding without a topic runs too, on a subject of its own.
	if _, err := ch.AddAdapter("rest-out", "c", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Bind("a:out", "c:in", "JMS_Joram", nil); err != nil {
		t.Errorf("a JMS_Joram binding without a topic: %v", err)
	}
	if got[0].Content != "hello" {
		t.Errorf("got %v", got[0])
	}
	select {
	case m := <-seen:
		if string(m.Data) != `"hello"` {
			t.Errorf("on the wire: %q", m.Data)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing published on cilia.c")
	}
}

// TestJetStreamKeepsWhatComesWhileStopped: over a JetStream binding, what
// is sent while the receiving chain is stopped arrives once it starts, and
// nothing twice. Not necessarily in order: a message the server handed to
// the consumer as it stopped is delivered again only after the ack wait,
// behind those sent later (JetStream delivers at least once, not in order).
func TestJetStreamKeepsWhatComesWhileStopped(t *testing.T) {
	s, nc := startNATS(t)
	comps := []comp{
		{mediation.KindAdapter, "rest-in", "a", nil},
		{mediation.KindAdapter, "sink", "b", nil},
	}
	props := func(role string) map[string]any {
		return map[string]any{"subject": "js.c", "role": role, "stream": "C", "durable": "c-b"}
	}
	e1, _ := engine(t, nc)
	sender := build(t, e1, "c", comps, []bind{{"a:out", "b:in", "nats", props("send")}})
	e2, sink := engine(t, connect(t, s.URL()))
	receiver := build(t, e2, "c", comps, []bind{{"a:out", "b:in", "nats", props("receive")}})
	want := sent(30)
	for _, m := range want[:10] {
		if err := sender.Send("a", m.Clone()); err != nil {
			t.Fatal(err)
		}
	}
	got := receive(t, sink, 10)
	if err := receiver.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, m := range want[10:] {
		if err := sender.Send("a", m.Clone()); err != nil {
			t.Fatal(err)
		}
	}
	if err := receiver.Start(); err != nil {
		t.Fatal(err)
	}
	got = append(got, receive(t, sink, len(want)-10)...)
	byN := cmpopts.SortSlices(func(a, b mediation.Message) bool {
		return a.Properties["n"].(float64) < b.Properties["n"].(float64)
	})
	if d := cmp.Diff(want, withoutID(got), byN); d != "" {
		t.Errorf("received (-sent +got):\n%s", d)
	}
	if len(sink) != 0 {
		t.Errorf("%d more messages than were sent", len(sink))
	}
}

// TestWire: Encode and Decode keep content and properties, and Decode
// takes plain text from other publishers.
func TestWire(t *testing.T) {
	for _, m := range []mediation.Message{
		{Content: nil, Properties: map[string]any{}},
		{Content: "text", Properties: map[string]any{"a b": "c", "%": float64(1), natsbus.PropID: "id-1"}},
		{Content: map[string]any{"x": []any{float64(1), "y", nil, true}}, Properties: map[string]any{"nested": map[string]any{"k": "v"}}},
	} {
		msg, err := natsbus.Encode("s", m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := natsbus.Decode(msg)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.Properties[natsbus.PropID]; !ok {
			delete(got.Properties, natsbus.PropID)
		}
		if d := cmp.Diff(m, got); d != "" {
			t.Errorf("round trip (-sent +got):\n%s", d)
		}
	}
	got, err := natsbus.Decode(&nats.Msg{Data: []byte("21.5 °C, not JSON")})
	if err != nil || got.Content != "21.5 °C, not JSON" {
		t.Errorf("plain text = %v, %v", got, err)
	}
	if _, err := natsbus.Decode(&nats.Msg{Header: nats.Header{natsbus.HeaderProperty + "x": {"{"}}}); err == nil {
		t.Errorf("a property header that is not JSON was taken")
	}
	if _, err := natsbus.Encode("s", mediation.Message{Content: make(chan int)}); err == nil {
		t.Errorf("content that is not JSON was encoded")
	}
	// A NaN or an infinity (a Go component's, say) goes as text, as REST
	// shows it, not dropped.
	msg, err := natsbus.Encode("s", mediation.Message{Content: math.NaN(), Properties: map[string]any{"p": math.Inf(1)}})
	if err != nil {
		t.Fatalf("Encode of a NaN = %v", err)
	}
	got, err = natsbus.Decode(msg)
	if want := (mediation.Message{Content: "NaN", Properties: map[string]any{"p": "+Inf", natsbus.PropID: got.Properties[natsbus.PropID]}}); err != nil || !cmp.Equal(got, want) {
		t.Errorf("a NaN sent and read = %v, %v; want %v", got, err, want)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"a":1}`), "Pervasim-Property-k", `"v"`)
	f.Add([]byte(`x`), "Pervasim-Property-%2", `1`)
	f.Add([]byte(``), "Nats-Msg-Id", `id`)
	f.Fuzz(func(t *testing.T, data []byte, key, value string) {
		m, err := natsbus.Decode(&nats.Msg{Data: data, Header: nats.Header{key: {value}}})
		if err != nil {
			return
		}
		// What decodes encodes, and decodes again to the same.
		msg, err := natsbus.Encode("s", m)
		if err != nil {
			t.Fatalf("decoded %v does not encode: %v", m, err)
		}
		again, err := natsbus.Decode(msg)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.Properties[natsbus.PropID]; !ok {
			delete(again.Properties, natsbus.PropID) // Encode gave it an id
		}
		a, _ := json.Marshal(m)
		b, _ := json.Marshal(again)
		if string(a) != string(b) {
			t.Errorf("%s decoded again as %s", a, b)
		}
	})
}

// TestQueueGroup: two nats-in adapters of one queue group share the
// messages: each message reaches exactly one of them.
func TestQueueGroup(t *testing.T) {
	s, nc := startNATS(t)
	e1, _ := engine(t, nc)
	from := publisher(t, e1, "work")
	both := make(chan mediation.Message, 1000)
	for _, name := range []string{"w1", "w2"} {
		e, sink := engine(t, connect(t, s.URL()))
		build(t, e, name, []comp{
			{mediation.KindAdapter, natsbus.NATSIn, "in", map[string]any{"subject": "work", "queue": "workers"}},
			{mediation.KindAdapter, "sink", "out", nil},
		}, []bind{{"in:out", "out:in", "", nil}})
		go func() {
			for m := range sink {
				both <- m
			}
		}()
	}
	const n = 200
	for i := range n {
		if err := from.Send("in", mediation.Message{Content: float64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[float64]bool{}
	for _, m := range receive(t, both, n) {
		if seen[m.Content.(float64)] {
			t.Fatalf("%v reached both workers", m.Content)
		}
		seen[m.Content.(float64)] = true
	}
	// A flush round trip later, nothing more has come.
	nc.Flush()
	if len(both) != 0 {
		t.Errorf("%d messages more than were sent", len(both))
	}
}

// TestNATSInStopsWhileDisconnected: with the NATS server gone (the client
// trying to reconnect), stopping a chain with a nats-in unsubscribes without
// waiting for a server that cannot answer (it waited, holding the chain's
// lock, until its flush timed out and counted an error).
func TestNATSInStopsWhileDisconnected(t *testing.T) {
	s, _ := startNATS(t)
	disconnected := make(chan struct{})
	nc, err := nats.Connect(s.URL(), nats.MaxReconnects(-1), nats.DisconnectErrHandler(func(*nats.Conn, error) { close(disconnected) }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	e, _ := engine(t, nc)
	ch := build(t, e, "c", []comp{
		{mediation.KindAdapter, natsbus.NATSIn, "in", map[string]any{"subject": "gone"}},
		{mediation.KindAdapter, "sink", "out", nil},
	}, []bind{{"in:out", "out:in", "", nil}})
	s.Shutdown()
	<-disconnected
	if err := ch.Stop(); err != nil {
		t.Fatal(err)
	}
	info, err := ch.Component("in")
	if err != nil {
		t.Fatal(err)
	}
	if info.Counters.Errors != 0 {
		t.Errorf("stopping while disconnected counted %d errors", info.Counters.Errors)
	}
}

// TestNATSInTakesNothingWhileStopped: a nats-in of a stopped chain, or one
// whose bindings Replace handed to another, is no longer subscribed: in a
// queue group, the running member gets every message; a replacement
// nats-in takes over at once; and a chain started again takes in again.
func TestNATSInTakesNothingWhileStopped(t *testing.T) {
	s, nc := startNATS(t)
	e1, _ := engine(t, nc)
	from := publisher(t, e1, "work")
	send := func(n int) {
		t.Helper()
		for i := range n {
			if err := from.Send("in", mediation.Message{Content: float64(i)}); err != nil {
				t.Fatal(err)
			}
		}
		nc.Flush()
	}
	workers := map[string]*mediation.Chain{}
	sinks := map[string]chan mediation.Message{}
	for _, name := range []string{"w1", "w2"} {
		e, sink := engine(t, connect(t, s.URL()))
		workers[name] = build(t, e, name, []comp{
			{mediation.KindAdapter, natsbus.NATSIn, "in", map[string]any{"subject": "work", "queue": "workers"}},
			{mediation.KindAdapter, natsbus.NATSIn, "spare", map[string]any{"subject": "work", "queue": "workers"}},
			{mediation.KindAdapter, "sink", "out", nil},
		}, []bind{{"in:out", "out:in", "", nil}})
		sinks[name] = sink
	}
	if err := workers["w1"].Stop(); err != nil {
		t.Fatal(err)
	}
	send(50)
	receive(t, sinks["w2"], 50)

	// w2's nats-in replaced by its spare: nothing lost on the way.
	if err := workers["w2"].Replace("in", "spare"); err != nil {
		t.Fatal(err)
	}
	send(50)
	receive(t, sinks["w2"], 50)

	// w1 started again shares the work.
	if err := workers["w1"].Start(); err != nil {
		t.Fatal(err)
	}
	send(200)
	timeout := time.After(30 * time.Second)
	got := map[string]int{}
	for got["w1"]+got["w2"] < 200 {
		select {
		case <-sinks["w1"]:
			got["w1"]++
		case <-sinks["w2"]:
			got["w2"]++
		case <-timeout:
			t.Fatalf("received %v of 200", got)
		}
	}
	if got["w1"] == 0 {
		t.Errorf("w1, started again, took none of 200: %v", got)
	}
}

// TestLoopThroughASubjectEnds: a chain whose nats-out publishes on the
// subject its nats-ins listen to takes each message once per nats-in: the
// id it comes back with is one they took.
func TestLoopThroughASubjectEnds(t *testing.T) {
	_, nc := startNATS(t)
	e, sink := engine(t, nc)
	ch := build(t, e, "loop", []comp{
		{mediation.KindAdapter, "rest-in", "inj", nil},
		{mediation.KindAdapter, natsbus.NATSIn, "n1", map[string]any{"subject": "loop.b"}},
		{mediation.KindAdapter, natsbus.NATSIn, "n2", map[string]any{"subject": "loop.b"}},
		{mediation.KindMediator, "passthrough", "p", nil},
		{mediation.KindAdapter, natsbus.NATSOut, "out", map[string]any{"subject": "loop.b"}},
		{mediation.KindAdapter, "sink", "seen", nil},
	}, []bind{
		{"inj:out", "p:in", "", nil}, {"n1:out", "p:in", "", nil}, {"n2:out", "p:in", "", nil},
		{"p:out", "out:in", "", nil}, {"n1:out", "seen:in", "", nil}, {"n2:out", "seen:in", "", nil},
	})
	if err := ch.Send("inj", mediation.Message{Content: "once"}); err != nil {
		t.Fatal(err)
	}
	receive(t, sink, 2) // once by each nats-in
	// Each took it once and sent it round again; what came back the
	// second time was dropped. A few flush round trips later nothing more
	// has come.
	for range 5 {
		nc.Flush()
		runtime.Gosched() // let the subscriptions' goroutines run
	}
	info, err := ch.Component("out")
	if err != nil {
		t.Fatal(err)
	}
	if len(sink) != 0 || info.Counters.In > 3 {
		t.Errorf("after the loop: %d more messages reached the sink, nats-out took %d (want 3: one sent, one back from each nats-in)", len(sink), info.Counters.In)
	}
}

// TestServerOnAPortInUse: an embedded server asked for a port in use fails
// at once, naming the address.
func TestServerOnAPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	for _, cfg := range []natsbus.ServerConfig{{Addr: addr, StoreDir: t.TempDir()}, {Addr: "127.0.0.1:0", MQTTAddr: addr, StoreDir: t.TempDir()}} {
		s, err := natsbus.StartServer(cfg)
		if err == nil {
			s.Shutdown()
			t.Errorf("StartServer(%+v) = nil error on a port in use", cfg)
			continue
		}
		if !strings.Contains(err.Error(), "address already in use") {
			t.Errorf("StartServer(%+v) = %v, want the port's error", cfg, err)
		}
	}
}

// TestSubjectWithInnerFullWildcard: a nats-in whose subject has ">"
// before its last token is refused when it is made. The server closes the
// connection of a client that subscribes to such a subject, for good: the
// subscription would cut every chain and home on the connection from NATS.
func TestSubjectWithInnerFullWildcard(t *testing.T) {
	_, nc := startNATS(t)
	e, _ := engine(t, nc)
	ch, err := e.CreateChain("c")
	if err != nil {
		t.Fatal(err)
	}
	for _, subject := range []string{"a.>.b", ">.a", "a.>.>", "a.b>.>.c"} {
		_, err := ch.AddComponent(mediation.KindAdapter, natsbus.NATSIn, "in", map[string]any{"subject": subject})
		if !errors.Is(err, mediation.ErrInvalid) {
			t.Errorf("nats-in on %q: %v, want an invalid-property error", subject, err)
		}
	}
	for _, subject := range []string{"a.>", ">", "a.b>.c", "a.*.>"} {
		if _, err := ch.AddComponent(mediation.KindAdapter, natsbus.NATSIn, "ok", map[string]any{"subject": subject}); err != nil {
			t.Errorf("nats-in on %q: %v", subject, err)
		}
		if err := ch.RemoveComponent(mediation.KindAdapter, "ok"); err != nil {
			t.Fatal(err)
		}
	}
	if !nc.IsConnected() {
		t.Error("the connection was closed")
	}
}

// TestQueueGroupWithSpacesRefused: a nats-in whose queue group has
// whitespace is refused when it is made. It used to be taken; the client
// then refused to subscribe as the chain started, and the adapter took
// nothing in, with only an error counted.
func TestQueueGroupWithSpacesRefused(t *testing.T) {
	_, nc := startNATS(t)
	e, _ := engine(t, nc)
	ch, err := e.CreateChain("c")
	if err != nil {
		t.Fatal(err)
	}
	for _, queue := range []string{"two words", "a\tb", "a\fb", "a\nb"} {
		_, err := ch.AddComponent(mediation.KindAdapter, natsbus.NATSIn, "in", map[string]any{"subject": "work", "queue": queue})
		if !errors.Is(err, mediation.ErrInvalid) {
			t.Errorf("nats-in with queue %q: %v, want an invalid-property error", queue, err)
		}
	}
	if _, err := ch.AddComponent(mediation.KindAdapter, natsbus.NATSIn, "in", map[string]any{"subject": "work", "queue": " workers "}); err != nil {
		t.Errorf("nats-in with queue \" workers \": %v", err)
	}
}

// TestSubjectWithFormFeedRefused: a subject with a form feed, which the
// server counts as whitespace, is refused when a nats-in, a nats-out or a
// nats binding is made. It used to be taken, and with a stream JetStream
// refused it as the chain started or published: only errors were counted.
func TestSubjectWithFormFeedRefused(t *testing.T) {
	_, nc := startNATS(t)
	e, _ := engine(t, nc)
	ch, err := e.CreateChain("c")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []comp{
		{mediation.KindAdapter, natsbus.NATSIn, "in", map[string]any{"subject": "a\fb", "stream": "S"}},
		{mediation.KindAdapter, natsbus.NATSIn, "in", map[string]any{"subject": "a.\f"}},
		{mediation.KindAdapter, natsbus.NATSOut, "out", map[string]any{"subject": "a\fb", "stream": "S"}},
	} {
		if _, err := ch.AddComponent(c.kind, c.typ, c.id, c.props); !errors.Is(err, mediation.ErrInvalid) {
			t.Errorf("%s %q: %v, want an invalid-property error", c.typ, c.props, err)
		}
	}
	for _, c := range []comp{{mediation.KindAdapter, "rest-in", "a", nil}, {mediation.KindAdapter, "sink", "b", nil}} {
		if _, err := ch.AddComponent(c.kind, c.typ, c.id, c.props); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ch.Bind("a:out", "b:in", "nats", map[string]any{"subject": "a\fb", "stream": "S"}); !errors.Is(err, mediation.ErrInvalid) {
		t.Errorf("nats binding on \"a\\fb\": %v, want an invalid-property error", err)
	}
}

// TestNATSInStartsWhileDisconnected: a chain with nats-in adapters starts
// at once while NATS is down, and they take in once it is back. Each
// used to wait for its flush to time out (5s), holding the chain's lock,
// and count an error.
func TestNATSInStartsWhileDisconnected(t *testing.T) {
	addr, nc, reconnected := downNATS(t)
	e, sink := engine(t, nc)
	ch := build(t, e, "c", []comp{
		{mediation.KindAdapter, natsbus.NATSIn, "in", map[string]any{"subject": "back"}},
		{mediation.KindAdapter, "sink", "out", nil},
	}, []bind{{"in:out", "out:in", "", nil}})
	info, err := ch.Component("in")
	if err != nil {
		t.Fatal(err)
	}
	if info.Counters.Errors != 0 {
		t.Errorf("starting while disconnected counted %d errors", info.Counters.Errors)
	}
	s2, err := natsbus.StartServer(natsbus.ServerConfig{Addr: addr, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Shutdown()
	<-reconnected
	// nc sent its subscriptions again as it reconnected; a round trip on it
	// makes sure the server holds them before another connection publishes
	// (it reads each connection apart: under load, the publication came
	// first and was lost, as core NATS keeps nothing for nobody).
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	pub := connect(t, s2.URL())
	if err := pub.Publish("back", []byte(`"again"`)); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, sink, 1); got[0].Content != "again" {
		t.Errorf("received %v", got[0].Content)
	}
}

// TestJetStreamNamesChecked: a stream or durable name JetStream refuses is
// refused when the component or binding is made, with 400, rather than
// accepted and then failing without a word as the chain starts (a nats
// link then neither stored nor delivered anything); a long subject's
// default durable name is one JetStream takes.
func TestJetStreamNamesChecked(t *testing.T) {
	_, nc := startNATS(t)
	e, sink := engine(t, nc)
	ch, err := e.CreateChain("c")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []comp{
		{mediation.KindAdapter, natsbus.NATSIn, "in", map[string]any{"subject": "s.a", "stream": "bad.name"}},
		{mediation.KindAdapter, natsbus.NATSIn, "in", map[string]any{"subject": "s.a", "stream": "S", "durable": "d>"}},
		{mediation.KindAdapter, natsbus.NATSIn, "in", map[string]any{"subject": "s.a", "stream": strings.Repeat("S", 256)}},
		{mediation.KindAdapter, natsbus.NATSOut, "out", map[string]any{"subject": "s.a", "stream": "a/b"}},
	} {
		if _, err := ch.AddComponent(c.kind, c.typ, c.id, c.props); !errors.Is(err, mediation.ErrInvalid) {
			t.Errorf("%s %v: %v, want an invalid-property error", c.typ, c.props, err)
		}
	}
	for _, c := range []comp{{mediation.KindAdapter, "rest-in", "a", nil}, {mediation.KindAdapter, "sink", "b", nil}} {
		if _, err := ch.AddComponent(c.kind, c.typ, c.id, c.props); err != nil {
			t.Fatal(err)
		}
	}
	for _, props := range []map[string]any{
		{"subject": "s.b", "stream": "bad.name"},
		{"subject": "s.b", "stream": 5.0},
		{"subject": "s.b", "stream": "S", "durable": "d x"},
	} {
		if _, err := ch.Bind("a:out", "b:in", "nats", props); !errors.Is(err, mediation.ErrInvalid) {
			t.Errorf("nats binding %v: %v, want an invalid-property error", props, err)
		}
	}
	long := strings.Repeat("ab.", 100) + "c"
	if _, err := ch.Bind("a:out", "b:in", "nats", map[string]any{"subject": long, "stream": "LONG"}); err != nil {
		t.Fatal(err)
	}
	if err := ch.Start(); err != nil {
		t.Fatal(err)
	}
	if err := ch.Send("a", mediation.Message{Content: "over a long subject"}); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, sink, 1); got[0].Content != "over a long subject" {
		t.Errorf("received %v", got[0].Content)
	}
}

// TestJetStreamConsumersMadeWhenNATSIsBack: a nats-in with a stream, and a
// nats link with one, started while NATS is down, make their consumers
// once it is back, and what is published then arrives. They used to try
// once, fail, and take nothing until their chain was stopped and started.
func TestJetStreamConsumersMadeWhenNATSIsBack(t *testing.T) {
	addr, nc, reconnected := downNATS(t)
	e, sink := engine(t, nc)
	build(t, e, "in", []comp{
		{mediation.KindAdapter, natsbus.NATSIn, "in", map[string]any{"subject": "back.in", "stream": "BACKIN"}},
		{mediation.KindAdapter, "sink", "out", nil},
	}, []bind{{"in:out", "out:in", "", nil}})
	link := build(t, e, "link", []comp{
		{mediation.KindAdapter, "rest-in", "in", nil},
		{mediation.KindAdapter, "sink", "out", nil},
	}, []bind{{"in:out", "out:in", "nats", map[string]any{"subject": "back.link", "stream": "BACKLINK"}}})

	s2, err := natsbus.StartServer(natsbus.ServerConfig{Addr: addr, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Shutdown()
	<-reconnected
	if err := link.Send("in", mediation.Message{Content: "over the link"}); err != nil {
		t.Fatal(err)
	}
	// The nats-in's stream exists once its consumer was made: publish
	// into it until it takes the message.
	js, err := jetstream.New(connect(t, s2.URL()))
	if err != nil {
		t.Fatal(err)
	}
	give := time.After(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := js.Publish(ctx, "back.in", []byte(`"into the stream"`))
		cancel()
		if err == nil {
			break
		}
		select {
		case <-tick.C:
		case <-give:
			t.Fatalf("the nats-in's stream was never made: %v", err)
		}
	}
	got := map[any]bool{}
	for _, m := range receive(t, sink, 2) {
		got[m.Content] = true
	}
	if !got["over the link"] || !got["into the stream"] {
		t.Errorf("received %v, want both messages", got)
	}
}

// TestStoppedChainEndsItsRetries: a chain stopped while its JetStream
// consumers wait for NATS ends their retries.
func TestStoppedChainEndsItsRetries(t *testing.T) {
	s, nc := startNATS(t)
	e, _ := engine(t, nc)
	s.Shutdown()
	for nc.IsConnected() {
		runtime.Gosched()
	}
	ch := build(t, e, "c", []comp{
		{mediation.KindAdapter, natsbus.NATSIn, "in", map[string]any{"subject": "s.in", "stream": "SIN"}},
		{mediation.KindAdapter, "rest-in", "src", nil},
		{mediation.KindAdapter, "sink", "out", nil},
	}, []bind{{"in:out", "out:in", "", nil}, {"src:out", "out:in", "nats", map[string]any{"subject": "s.link", "stream": "SLINK"}}})
	const retry = "natsbus.retryConsumer.func1("
	if n := strings.Count(goroutines(), retry); n != 2 {
		t.Fatalf("%d goroutines run %s, want the nats-in's and the link's: the test looks for the wrong name", n, retry)
	}
	if err := ch.Stop(); err != nil {
		t.Fatal(err)
	}
	give := time.After(30 * time.Second)
	for strings.Contains(goroutines(), retry) {
		select {
		case <-give:
			t.Fatalf("retries outlive their chain's stop:\n%s", goroutines())
		default:
			runtime.Gosched()
		}
	}
}

// TestNATSInUndecodableAndBatches: a nats-in counts what it cannot decode
// (a property header that is not JSON, a bad % escape in a header name, a
// batch that is not one) among its errors, rather than dropping it
// unseen, and splits a batch of the nats linker into its messages, as the
// linker's receiver does; with core NATS and with a stream.
func TestNATSInUndecodableAndBatches(t *testing.T) {
	s, nc := startNATS(t)
	for _, tc := range []struct {
		name  string
		props map[string]any
	}{
		{"core", map[string]any{"subject": "odd.core"}},
		{"stream", map[string]any{"subject": "odd.js", "stream": "ODD", "durable": "odd"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, sink := engine(t, connect(t, s.URL()))
			ch := build(t, e, "c", []comp{
				{mediation.KindAdapter, natsbus.NATSIn, "in", tc.props},
				{mediation.KindAdapter, "sink", "out", nil},
			}, []bind{{"in:out", "out:in", "", nil}})
			subject := tc.props["subject"].(string)
			publish := func(data string, header nats.Header) {
				t.Helper()
				if err := nc.PublishMsg(&nats.Msg{Subject: subject, Data: []byte(data), Header: header}); err != nil {
					t.Fatal(err)
				}
			}
			publish(`1`, nats.Header{natsbus.HeaderProperty + "k": {"not JSON"}})
			publish(`2`, nats.Header{natsbus.HeaderProperty + "a%zz": {"1"}})
			publish(`[{"id":"x"`, nats.Header{natsbus.HeaderBatch: {"1"}})
			publish(`[{"id":"b1","content":{"n":1},"properties":{"k":"v"}},{"id":"b2","content":2,"properties":{}}]`,
				nats.Header{natsbus.HeaderBatch: {"2"}})
			publish(`"last"`, nil)
			var got []mediation.Message
			for len(got) == 0 || got[len(got)-1].Content != "last" {
				got = append(got, receive(t, sink, 1)...)
			}
			want := []mediation.Message{
				{Content: map[string]any{"n": 1.0}, Properties: map[string]any{"k": "v", natsbus.PropID: "b1"}},
				{Content: 2.0, Properties: map[string]any{natsbus.PropID: "b2"}},
				{Content: "last", Properties: map[string]any{}},
			}
			if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("received (-want +got):\n%s", d)
			}
			info, err := ch.Component("in")
			if err != nil {
				t.Fatal(err)
			}
			if info.Counters.Errors != 3 {
				t.Errorf("counters %+v, want 3 errors: the messages that could not be decoded", info.Counters)
			}
		})
	}
}

// TestAttachEngineNil: a nil engine or connection is a programming error:
// AttachEngine panics with a message naming it, before registering
// anything, rather than with a nil pointer dereference inside jetstream.
func TestAttachEngineNil(t *testing.T) {
	panics := func(f func()) (msg any) {
		defer func() { msg = recover() }()
		f()
		return nil
	}
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	msg := panics(func() { natsbus.AttachEngine(e, nil) })
	if s, _ := msg.(string); !strings.Contains(s, "nil connection") {
		t.Errorf("AttachEngine(engine, nil) panicked with %v, want a message naming the connection", msg)
	}
	if _, err := e.Registry().Type(natsbus.NATSIn); err == nil {
		t.Error("nats-in registered by an AttachEngine that panicked")
	}
	if msg := panics(func() { natsbus.AttachEngine(nil, nil) }); msg == nil || !strings.Contains(fmt.Sprint(msg), "nil engine") {
		t.Errorf("AttachEngine(nil, nil) panicked with %v, want a message naming the engine", msg)
	}
}

// downNATS starts a NATS server, connects to it, and stops it: the
// connection is down, and tries to reconnect to addr every 10 ms;
// reconnected is closed once it is back.
func downNATS(t *testing.T) (addr string, nc *nats.Conn, reconnected chan struct{}) {
	t.Helper()
	s, _ := startNATS(t)
	addr = strings.TrimPrefix(s.URL(), "nats://")
	disconnected, reconnected := make(chan struct{}), make(chan struct{})
	var once1, once2 sync.Once
	nc, err := nats.Connect(s.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(10*time.Millisecond),
		nats.DisconnectErrHandler(func(*nats.Conn, error) { once1.Do(func() { close(disconnected) }) }),
		nats.ReconnectHandler(func(*nats.Conn) { once2.Do(func() { close(reconnected) }) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	s.Shutdown()
	<-disconnected
	return addr, nc, reconnected
}

// TestStreamsMadeAgainWhenGone: a stream that disappears (deleted, or the
// NATS server restarted without its store) is made again, as it was at
// first, by the nats-out and the nats linker that publish into it and by
// a nats-in or a linker's receiver started again, rather than published
// to in vain until the process restarts.
func TestStreamsMadeAgainWhenGone(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) { testStreamsMadeAgainWhenGone(t, restart) })
	}
}

// testStreamsMadeAgainWhenGone: with restart, the chains of the consumers
// are stopped and started again once the streams are gone; without, their
// consumers, running, find themselves gone (their heartbeats stop) and are
// made again.
func testStreamsMadeAgainWhenGone(t *testing.T, restart bool) {
	s, nc := startNATS(t)
	e, sink := engine(t, nc)
	out := build(t, e, "out", []comp{
		{mediation.KindAdapter, "rest-in", "in", nil},
		{mediation.KindAdapter, natsbus.NATSOut, "out", map[string]any{"subject": "gone.out", "stream": "GONEOUT"}},
	}, []bind{{"in:out", "out:in", "", nil}})
	link := build(t, e, "link", []comp{
		{mediation.KindAdapter, "rest-in", "in", nil},
		{mediation.KindAdapter, "sink", "out", nil},
	}, []bind{{"in:out", "out:in", "nats", map[string]any{"subject": "gone.link", "stream": "GONELINK"}}})
	in := build(t, e, "in", []comp{
		{mediation.KindAdapter, natsbus.NATSIn, "in", map[string]any{"subject": "gone.in", "stream": "GONEIN"}},
		{mediation.KindAdapter, "sink", "out", nil},
	}, []bind{{"in:out", "out:in", "", nil}})
	js, err := jetstream.New(connect(t, s.URL()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// publish publishes into the nats-in's stream until it is there.
	publish := func(content string) {
		t.Helper()
		for {
			pctx, pcancel := context.WithTimeout(ctx, time.Second)
			_, err := js.Publish(pctx, "gone.in", []byte(strconv.Quote(content)))
			pcancel()
			if err == nil {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("the nats-in's stream was never made: %v", err)
			}
			runtime.Gosched()
		}
	}
	send := func(content string) {
		t.Helper()
		if err := out.Send("in", mediation.Message{Content: content}); err != nil {
			t.Fatalf("nats-out: %v", err)
		}
		if err := link.Send("in", mediation.Message{Content: content}); err != nil {
			t.Fatalf("link: %v", err)
		}
		publish(content)
	}
	check := func(content string) {
		t.Helper()
		got := map[any]int{}
		for _, m := range receive(t, sink, 2) {
			got[m.Content]++
		}
		if got[content] != 2 {
			t.Errorf("received %v, want %q from the link and the nats-in", got, content)
		}
		st, err := js.Stream(ctx, "GONEOUT")
		if err != nil {
			t.Fatalf("the nats-out's stream: %v", err)
		}
		if n := st.CachedInfo().State.Msgs; n != 1 {
			t.Errorf("the nats-out's stream holds %d messages, want 1", n)
		}
	}
	send("before")
	check("before")
	for _, name := range []string{"GONEOUT", "GONELINK", "GONEIN"} {
		if err := js.DeleteStream(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	// The consumers went with their streams.
	for _, ch := range []*mediation.Chain{link, in} {
		if !restart {
			break
		}
		if err := ch.Stop(); err != nil {
			t.Fatal(err)
		}
		if err := ch.Start(); err != nil {
			t.Fatal(err)
		}
	}
	send("after")
	check("after")
}

// TestNATSInUnboundRefusesWhatItCannotHandOn: a nats-in whose bindings
// went to its replacement refuses a message its consumer still hands it,
// as busy, when a stream can deliver it again (the consumer asks for it
// again, and the replacement takes it); without a stream it drops it, as
// nobody could ask again.
func TestNATSInUnboundRefusesWhatItCannotHandOn(t *testing.T) {
	_, nc := startNATS(t)
	e, _ := engine(t, nc)
	tests := []struct {
		name     string
		props    map[string]any
		want     error
		counters mediation.Counters // the old adapter's, after
	}{
		{"stream", map[string]any{"subject": "unbound.js", "stream": "UNBOUND", "durable": "worker"}, mediation.ErrBusy, mediation.Counters{In: 2, Out: 1, Errors: 1}},
		{"core", map[string]any{"subject": "unbound.core"}, nil, mediation.Counters{In: 2, Out: 1, Dropped: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := build(t, e, tt.name, []comp{
				{mediation.KindAdapter, natsbus.NATSIn, "old", tt.props},
				{mediation.KindAdapter, natsbus.NATSIn, "new", tt.props},
				{mediation.KindAdapter, "sink", "out", nil},
			}, []bind{{"old:out", "out:in", "", nil}})
			if err := ch.Send("old", mediation.Message{Content: "bound"}); err != nil {
				t.Fatalf("send while bound: %v", err)
			}
			if err := ch.Replace("old", "new"); err != nil {
				t.Fatal(err)
			}
			if err := ch.Send("old", mediation.Message{Content: "late"}); !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Errorf("send to the replaced adapter: %v, want %v", err, tt.want)
			}
			// A refusal counts among the errors (the README says so), a
			// drop among the dropped.
			ci, err := ch.Component("old")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.counters, ci.Counters); diff != "" {
				t.Errorf("the replaced adapter's counters (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNATSInReplacedUnderLoadWithADurable: a nats-in of a stream and a
// durable consumer, replaced while messages are published, by one of the
// same stream and durable: every message arrives (at least once), as the
// README promises for swapping one under load; over core NATS what is
// published during the swap would be lost. The swap rarely lands while the
// old adapter's consumer hands a message on (it passes without the
// refusal that saves that one): TestReplacedNATSInHandsTheStreamsMessageOn
// makes that instant.
func TestNATSInReplacedUnderLoadWithADurable(t *testing.T) {
	s, nc := startNATS(t)
	e, sink := engine(t, nc)
	props := map[string]any{"subject": "swap.in", "stream": "SWAP", "durable": "worker"}
	ch := build(t, e, "swap", []comp{
		{mediation.KindAdapter, natsbus.NATSIn, "old", props},
		{mediation.KindAdapter, natsbus.NATSIn, "new", props},
		{mediation.KindAdapter, "sink", "out", nil},
	}, []bind{{"old:out", "out:in", "", nil}})
	js, err := jetstream.New(connect(t, s.URL()))
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	published := make(chan error, 1)
	half := make(chan struct{})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for i := range n {
			if i == n/2 {
				close(half)
			}
			if _, err := js.Publish(ctx, "swap.in", []byte(strconv.Itoa(i))); err != nil {
				published <- err
				return
			}
		}
		published <- nil
	}()
	<-half
	// Swap while the old adapter is handing messages on: wait until the
	// sink has some, so that its consumer runs.
	got := map[float64]bool{}
	select {
	case m := <-sink:
		got[m.Content.(float64)] = true
	case <-time.After(30 * time.Second):
		t.Fatal("nothing reached the sink before the swap")
	}
	if err := ch.Replace("old", "new"); err != nil {
		t.Fatal(err)
	}
	if err := <-published; err != nil {
		t.Fatal(err)
	}
	timeout := time.After(30 * time.Second)
	for len(got) < n {
		select {
		case m := <-sink:
			got[m.Content.(float64)] = true
		case <-timeout:
			t.Fatalf("received %d distinct messages of %d", len(got), n)
		}
	}
}

// TestNATSInAcknowledgesWhatTheChainTook: a stream message that the chain
// took but failed on the way (it caused more deliveries than the engine
// allows) is acknowledged, not asked for again: asked again, it ran its
// deliveries again every second, for ever.
func TestNATSInAcknowledgesWhatTheChainTook(t *testing.T) {
	s, nc := startNATS(t)
	e := mediation.NewEngine(mediation.Config{MaxDeliveries: 2})
	t.Cleanup(func() { e.Close() })
	if _, err := natsbus.AttachEngine(e, nc); err != nil {
		t.Fatal(err)
	}
	build(t, e, "poison", []comp{
		{mediation.KindAdapter, natsbus.NATSIn, "in", map[string]any{"subject": "poison.in", "stream": "POISON", "durable": "worker"}},
		{mediation.KindMediator, "passthrough", "p", nil},
		{mediation.KindMediator, "passthrough", "q", nil},
		{mediation.KindAdapter, "rest-out", "out", nil},
	}, []bind{{"in:out", "p:in", "", nil}, {"p:out", "q:in", "", nil}, {"q:out", "out:in", "", nil}})
	js, err := jetstream.New(connect(t, s.URL()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := js.Publish(ctx, "poison.in", []byte(`"too far"`)); err != nil {
		t.Fatal(err)
	}
	cons, err := js.Consumer(ctx, "POISON", "worker")
	if err != nil {
		t.Fatal(err)
	}
	for {
		info, err := cons.Info(ctx)
		if err != nil {
			t.Fatalf("the message was never acknowledged: %v", err)
		}
		if info.Delivered.Consumer >= 1 && info.NumAckPending == 0 {
			if info.NumRedelivered != 0 || info.Delivered.Consumer != 1 {
				t.Errorf("delivered %d times, %d redelivered; want once", info.Delivered.Consumer, info.NumRedelivered)
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the message was never acknowledged: %d delivered, %d pending acknowledgement", info.Delivered.Consumer, info.NumAckPending)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
