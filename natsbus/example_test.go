package natsbus_test

import (
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/natsbus"
)

// ExampleAttachEngine sends a message from one engine's nats-out to
// another's nats-in, as two servers on two machines would.
func ExampleAttachEngine() {
	srv, err := natsbus.StartServer(natsbus.ServerConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		panic(err)
	}
	defer srv.Shutdown()

	engine := func() *mediation.Engine {
		nc, err := nats.Connect(srv.URL())
		if err != nil {
			panic(err)
		}
		e := mediation.NewEngine(mediation.Config{})
		if _, err := natsbus.AttachEngine(e, nc); err != nil {
			panic(err)
		}
		return e
	}
	sender, receiver := engine(), engine()
	defer sender.Close()
	defer receiver.Close()

	got := make(chan mediation.Message, 1)
	receiver.Registry().Register(mediation.Type{Name: "print", Kind: mediation.KindAdapter, Pattern: mediation.PatternOutOnly, In: []string{"in"},
		New: func(map[string]any, mediation.Env) (any, error) {
			return mediation.ProcessorFunc(func(_ string, m mediation.Message, _ mediation.Emitter) error {
				got <- m
				return nil
			}), nil
		}})
	in, _ := receiver.CreateChain("in")
	in.AddAdapter(natsbus.NATSIn, "sub", map[string]any{"subject": "lab.readings"})
	in.AddAdapter("print", "print", nil)
	in.Bind("sub:out", "print:in", "", nil)
	in.Start()

	out, _ := sender.CreateChain("out")
	out.AddAdapter("rest-in", "in", nil)
	out.AddAdapter(natsbus.NATSOut, "pub", map[string]any{"subject": "lab.readings"})
	out.Bind("in:out", "pub:in", "", nil)
	out.Start()
	out.Send("in", mediation.Message{Content: map[string]any{"t": 21.5}, Properties: map[string]any{"room": "kitchen"}})

	m := <-got
	fmt.Println(m.Content, m.Properties["room"])
	// Output: map[t:21.5] kitchen
}
