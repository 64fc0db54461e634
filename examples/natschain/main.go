// Command natschain runs one chain across two gateways joined by NATS, as
// two pervasim servers on two machines would: gateway "kitchen" reads a
// sensor and sends its readings on, gateway "office" receives them and
// keeps the hot ones. The binding between the two halves is carried by the
// nats linker, so each gateway declares the same chain and runs its side.
//
//	kitchen:  in ─► tag ══ nats (role send) ══╗
//	office:                                   ╚═► hot ─► out (prints)
//
// Without -nats it starts a NATS server of its own; with -nats it uses the
// one at that URL (for example a server started with -nats 127.0.0.1:4222).
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/natsbus"
)

func main() {
	url := flag.String("nats", "", "NATS server URL (default: start one here)")
	flag.Parse()
	if err := run(os.Stdout, *url); err != nil {
		log.Fatal(err)
	}
}

func run(w io.Writer, url string) error {
	if url == "" {
		srv, err := natsbus.StartServer(natsbus.ServerConfig{Addr: "127.0.0.1:0"})
		if err != nil {
			return err
		}
		defer srv.Shutdown()
		url = srv.URL()
	}
	received := make(chan mediation.Message, 16)
	kitchen, stopK, err := gateway(url, "send", received)
	if err != nil {
		return err
	}
	defer stopK()
	_, stopO, err := gateway(url, "receive", received)
	if err != nil {
		return err
	}
	defer stopO()

	fmt.Fprintln(w, "the kitchen sends four readings; the office keeps those of 20 °C or more")
	for _, t := range []float64{18.5, 20, 23.25, 19} {
		m := mediation.Message{Content: map[string]any{"celsius": t}}
		if err := kitchen.Send("in", m); err != nil {
			return err
		}
	}
	// The two hot readings travel through NATS to the office's out
	// adapter.
	timeout := time.After(10 * time.Second)
	for range 2 {
		select {
		case m := <-received:
			fmt.Fprintf(w, "office received %v from %v (%d properties, among them the NATS id)\n",
				m.Content.(map[string]any)["celsius"], m.Properties["site"], len(m.Properties))
		case <-timeout:
			return fmt.Errorf("the hot readings did not arrive")
		}
	}
	return nil
}

// gateway starts one side of the chain "readings" on its own connection
// and engine, as a separate server would. Its out adapter, of a type of
// the example's own, hands what reaches it to received.
func gateway(url, role string, received chan<- mediation.Message) (*mediation.Chain, func(), error) {
	nc, err := nats.Connect(url)
	if err != nil {
		return nil, nil, err
	}
	e := mediation.NewEngine(mediation.Config{})
	stop := func() { e.Close(); nc.Close() }
	if _, err := natsbus.AttachEngine(e, nc); err != nil {
		stop()
		return nil, nil, err
	}
	err = e.Registry().Register(mediation.Type{
		Name: "hand-over", Kind: mediation.KindAdapter, Pattern: mediation.PatternOutOnly, In: []string{"in"},
		New: func(map[string]any, mediation.Env) (any, error) {
			return mediation.ProcessorFunc(func(_ string, m mediation.Message, _ mediation.Emitter) error {
				received <- m
				return nil
			}), nil
		},
	})
	if err != nil {
		stop()
		return nil, nil, err
	}
	ch, err := e.CreateChain("readings")
	if err != nil {
		stop()
		return nil, nil, err
	}
	// Both gateways declare the whole chain; each runs its side of the
	// nats binding.
	for _, step := range []func() error{
		func() error { _, err := ch.AddAdapter("rest-in", "in", nil); return err },
		func() error {
			_, err := ch.AddMediator("enricher", "tag", map[string]any{"site": "kitchen"})
			return err
		},
		func() error {
			_, err := ch.AddMediator("filter", "hot", map[string]any{"condition": "(celsius>=20)"})
			return err
		},
		func() error { _, err := ch.AddAdapter("hand-over", "out", nil); return err },
		func() error { _, err := ch.Bind("in:out", "tag:in", "", nil); return err },
		func() error {
			_, err := ch.Bind("tag:out", "hot:in", natsbus.Linker, map[string]any{"subject": "example.readings", "role": role})
			return err
		},
		func() error { _, err := ch.Bind("hot:out", "out:in", "", nil); return err },
		ch.Start,
	} {
		if err := step(); err != nil {
			stop()
			return nil, nil, err
		}
	}
	return ch, stop, nil
}
