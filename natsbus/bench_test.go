package natsbus_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/natsbus"
)

// BenchmarkNATSChain sends messages through source → 3 passthrough
// mediators → sink with every hop carried by the nats linker over an
// embedded server: core NATS, and JetStream (a stream per hop, each
// message acknowledged). It reports messages through the whole chain per
// second.
func BenchmarkNATSChain(b *testing.B) {
	for _, mode := range []string{"core", "jetstream"} {
		b.Run(mode, func(b *testing.B) {
			_, nc := startNATS(b)
			e := mediation.NewEngine(mediation.Config{})
			defer e.Close()
			if _, err := natsbus.AttachEngine(e, nc); err != nil {
				b.Fatal(err)
			}
			var got atomic.Int64
			done := make(chan struct{})
			var want atomic.Int64
			err := e.Registry().Register(mediation.Type{Name: "counter", Kind: mediation.KindAdapter, Pattern: mediation.PatternOutOnly, In: []string{"in"},
				New: func(map[string]any, mediation.Env) (any, error) {
					return mediation.ProcessorFunc(func(string, mediation.Message, mediation.Emitter) error {
						if got.Add(1) == want.Load() {
							close(done)
						}
						return nil
					}), nil
				}})
			if err != nil {
				b.Fatal(err)
			}
			hop := func(i int) map[string]any {
				p := map[string]any{"subject": fmt.Sprintf("bench.%s.hop%d", mode, i)}
				if mode == "jetstream" {
					p["stream"] = fmt.Sprintf("BENCH%d", i)
				}
				return p
			}
			ch := build(b, e, "c", []comp{
				{mediation.KindAdapter, "rest-in", "in", nil},
				{mediation.KindMediator, "passthrough", "m1", nil},
				{mediation.KindMediator, "passthrough", "m2", nil},
				{mediation.KindMediator, "passthrough", "m3", nil},
				{mediation.KindAdapter, "counter", "sink", nil},
			}, []bind{
				{"in:out", "m1:in", "nats", hop(1)},
				{"m1:out", "m2:in", "nats", hop(2)},
				{"m2:out", "m3:in", "nats", hop(3)},
				{"m3:out", "sink:in", "nats", hop(4)},
			})
			want.Store(int64(b.N))
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if err := ch.Send("in", mediation.Message{Content: i, Properties: map[string]any{"kind": "temp"}}); err != nil {
					b.Fatal(err)
				}
			}
			select {
			case <-done:
			case <-time.After(5 * time.Minute):
				b.Fatalf("%d of %d messages arrived", got.Load(), b.N)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
