package natsbus_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/natsbus"
	"github.com/pervasim/pervasim/sim"
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

// PublishHome puts a home on NATS: its events on subjects of their own,
// and device updates taken as requests. An embedded server on a free
// loopback port stands for the real one.
func ExamplePublishHome() {
	srv, err := natsbus.StartServer(natsbus.ServerConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Shutdown()
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()

	home := sim.MustNew(sim.Config{})
	if _, err := home.CreateDevice(sim.DeviceSpec{ID: "lamp", Type: "BinaryLight"}); err != nil {
		fmt.Println(err)
		return
	}
	stop, err := natsbus.PublishHome(nc, "", "lab", home)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	// Events are published on <prefix>.<home>.<eventType>.<id>.
	events, err := nc.SubscribeSync("pervasim.lab.*.lamp")
	if err != nil {
		fmt.Println(err)
		return
	}
	// A device update, as the REST API takes it, on
	// <prefix>.<home>.devices.<id>.set.
	reply, err := nc.Request("pervasim.lab.devices.lamp.set", []byte(`{"properties":{"power_status":true}}`), 5*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("update:", reply.Header.Get(natsbus.HeaderStatus))
	m, err := events.NextMsg(5 * time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	var e struct {
		Property string
		Value    any
	}
	json.Unmarshal(m.Data, &e)
	fmt.Println(m.Subject, e.Property, e.Value)
	// Output:
	// update: 200
	// pervasim.lab.device-property-updated.lamp power_status true
}
