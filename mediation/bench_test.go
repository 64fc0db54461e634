package mediation_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pervasim/pervasim/mediation"
)

// countSink is a minimal out-only adapter for benchmarks, safe for
// parallel use (its type is declared stateless). It counts as
// java.util.concurrent.atomic.LongAdder does: on one padded atomic counter
// while nobody else adds at the same time; once a compare-and-swap fails
// (another core added in between), on padded counters of their own, one per
// token of a sync.Pool (P-local in practice). One counter written by every
// core would move its cache line from core to core on every message and be
// the bottleneck of the parallel benchmark. count sums them.
type countSink struct {
	base    paddedCount
	striped atomic.Bool
	tokens  sync.Pool
	mu      sync.Mutex
	all     []*paddedCount
}

// paddedCount is an atomic counter on cache lines of its own.
type paddedCount struct {
	_ [64]byte
	n atomic.Uint64
	_ [56]byte
}

func (c *countSink) Process(string, mediation.Message, mediation.Emitter) error {
	if !c.striped.Load() {
		v := c.base.n.Load()
		if c.base.n.CompareAndSwap(v, v+1) {
			return nil
		}
		c.striped.Store(true)
	}
	p, _ := c.tokens.Get().(*paddedCount)
	if p == nil {
		p = new(paddedCount)
		c.mu.Lock()
		c.all = append(c.all, p)
		c.mu.Unlock()
	}
	p.n.Add(1)
	c.tokens.Put(p)
	return nil
}

// count returns the messages counted.
func (c *countSink) count() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.base.n.Load()
	for _, p := range c.all {
		n += p.n.Load()
	}
	return n
}

// benchChain builds rest-in -> passthrough -> enricher -> filter -> sink
// with the given linker between every pair. The sink only counts: its type
// says so (Stateless, ReadOnly).
func benchChain(b *testing.B, linker string) (*mediation.Chain, *countSink, func()) {
	return benchChainWith(b, linker, med("enricher", "enrich", map[string]any{"site": "lab"}), true)
}

// benchChainWith is benchChain with another third component, id "enrich",
// and a sink whose type is ReadOnly or not: one that is not gets a
// properties map of its own for each message.
func benchChainWith(b *testing.B, linker string, third step, readOnly bool) (*mediation.Chain, *countSink, func()) {
	b.Helper()
	cs := &countSink{}
	r := mediation.NewRegistry()
	r.Register(mediation.Type{Name: "count", Kind: mediation.KindAdapter, Pattern: mediation.PatternOutOnly, In: []string{"in"},
		Stateless: true, ReadOnly: readOnly, New: func(map[string]any, mediation.Env) (any, error) { return cs, nil }})
	e := mediation.NewEngine(mediation.Config{Registry: r})
	ch := build(b, e, "bench",
		adp("rest-in", "src", nil),
		med("passthrough", "pass", nil),
		third,
		med("filter", "filter", map[string]any{"condition": "(site=*)"}),
		adp("count", "sink", nil),
		bind("src:out", "pass:in", linker), bind("pass:out", "enrich:in", linker),
		bind("enrich:out", "filter:in", linker), bind("filter:out", "sink:in", linker),
		start)
	return ch, cs, func() { e.Close() }
}

// BenchmarkChainThroughput measures one message through
// source -> passthrough -> enricher -> filter -> sink over direct bindings,
// on the sender's goroutine. ns/op and allocs/op are per message.
func BenchmarkChainThroughput(b *testing.B) {
	ch, cs, done := benchChain(b, "direct")
	defer done()
	sendOneByOne(b, ch, cs)
}

// sendOneByOne sends b.N messages into ch's "src" on one goroutine, and
// checks that cs counted some.
func sendOneByOne(b *testing.B, ch *mediation.Chain, cs *countSink) {
	b.ReportAllocs()
	for b.Loop() {
		if err := ch.Send("src", mediation.Message{Content: "reading"}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if cs.count() == 0 {
		b.Fatal("nothing reached the sink")
	}
}

// BenchmarkChainThroughputOwnMaps is BenchmarkChainThroughput with a sink
// that is not ReadOnly: each message's properties, which the enricher adds,
// are copied for it (a map of the message's own, as every message had
// before the enricher's were shared).
func BenchmarkChainThroughputOwnMaps(b *testing.B) {
	ch, cs, done := benchChainWith(b, "direct", med("enricher", "enrich", map[string]any{"site": "lab"}), false)
	defer done()
	sendOneByOne(b, ch, cs)
}

// BenchmarkChainToRestOut measures one message through the most common
// chain of the original's users, rest-in -> enricher -> rest-out, over
// direct bindings, on the sender's goroutine: rest-out keeps the last 100.
func BenchmarkChainToRestOut(b *testing.B) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch := build(b, e, "c",
		adp("rest-in", "src", nil),
		med("enricher", "enrich", map[string]any{"site": "lab"}),
		adp("rest-out", "out", nil),
		bind("src:out", "enrich:in", "direct"), bind("enrich:out", "out:in", "direct"), start)
	b.ReportAllocs()
	for b.Loop() {
		if err := ch.Send("src", mediation.Message{Content: "reading"}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if ms, err := ch.Messages("out"); err != nil || len(ms) != min(b.N, 100) {
		b.Fatalf("rest-out keeps %d messages (%v), want %d", len(ms), err, min(b.N, 100))
	}
}

// BenchmarkChainThroughputParallel is BenchmarkChainThroughput with
// b.RunParallel: GOMAXPROCS goroutines send at once, each op one message,
// through the same components (all of them stateless), each on its
// sender's goroutine. Compare -cpu 1 and -cpu 2.
func BenchmarkChainThroughputParallel(b *testing.B) {
	ch, cs, done := benchChain(b, "direct")
	defer done()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := ch.Send("src", mediation.Message{Content: "reading"}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	info, err := ch.Component("sink")
	if err != nil {
		b.Fatal(err)
	}
	if n := cs.count(); n != uint64(b.N) || info.Counters.In != n {
		b.Fatalf("the sink counted %d messages and its In counter says %d, want %d", n, info.Counters.In, b.N)
	}
}

// BenchmarkChainThroughputParallelNoAlloc is BenchmarkChainThroughputParallel
// with a passthrough in place of the enricher, and messages that carry their
// properties (one map, shared: nothing on the way modifies it), so that the
// chain allocates nothing: it measures how the engine itself scales, without
// the allocator and the collector.
func BenchmarkChainThroughputParallelNoAlloc(b *testing.B) {
	ch, cs, done := benchChainWith(b, "direct", med("passthrough", "enrich", nil), true)
	defer done()
	props := map[string]any{"site": "lab"}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := ch.Send("src", mediation.Message{Content: "reading", Properties: props}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	if n := cs.count(); n != uint64(b.N) {
		b.Fatalf("the sink counted %d messages, want %d", n, b.N)
	}
}

// BenchmarkChainThroughputQueue is BenchmarkChainThroughput over queue
// bindings (default capacity): each hop goes through a bounded queue and its
// goroutine, so the sender only pays for the first hop until backpressure
// throttles it to the pace of the slowest stage. ns/op is the sustained
// cost per message; the at most 4×1024 messages still queued when the loop
// ends are drained outside the measurement.
func BenchmarkChainThroughputQueue(b *testing.B) {
	ch, _, done := benchChain(b, "queue")
	defer done()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if err := ch.Send("src", mediation.Message{Content: "reading"}); err != nil {
			b.Fatal(err)
		}
		n++
	}
	for {
		info, _ := ch.Component("sink")
		if info.Counters.In == uint64(n) {
			break
		}
		runtime.Gosched()
	}
}
