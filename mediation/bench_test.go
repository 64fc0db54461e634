package mediation_test

import (
	"runtime"
	"testing"

	"github.com/pervasim/pervasim/mediation"
)

// countSink is a minimal out-only adapter for benchmarks.
type countSink struct{ n int }

func (c *countSink) Process(string, mediation.Message, mediation.Emitter) error { c.n++; return nil }

// benchChain builds rest-in -> passthrough -> enricher -> filter -> sink
// with the given linker between every pair.
func benchChain(b *testing.B, linker string) (*mediation.Chain, *countSink, func()) {
	b.Helper()
	cs := &countSink{}
	r := mediation.NewRegistry()
	r.Register(mediation.Type{Name: "count", Kind: mediation.KindAdapter, Pattern: mediation.PatternOutOnly, In: []string{"in"},
		New: func(map[string]any, mediation.Env) (any, error) { return cs, nil }})
	e := mediation.NewEngine(mediation.Config{Registry: r})
	ch := build(b, e, "bench",
		adp("rest-in", "src", nil),
		med("passthrough", "pass", nil),
		med("enricher", "enrich", map[string]any{"site": "lab"}),
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
	b.ReportAllocs()
	for b.Loop() {
		if err := ch.Send("src", mediation.Message{Content: "reading"}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if cs.n == 0 {
		b.Fatal("nothing reached the sink")
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
