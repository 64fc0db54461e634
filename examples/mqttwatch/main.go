// Command mqttwatch is an MQTT client of a simulated home, as smart-home
// software (Home Assistant, Node-RED) would be: it subscribes to the home's
// topics, turns a lamp off and on by publishing on its set topic, prints the
// events that follow, then sends an update the home refuses and prints the
// error that comes back.
//
// Topics: pervasim/<home>/<eventType>/<id> carry the home's events (the
// event stream's JSON); pervasim/<home>/devices/<id>/set takes a device
// update (the REST body); pervasim/<home>/devices/<id>/error gets the error
// of an update that failed.
//
// Without -mqtt it starts a home with a lamp and an embedded NATS server
// with MQTT of its own; with -mqtt it talks to a running server, such as
// one started with -nats 127.0.0.1:4222 -mqtt 127.0.0.1:1883 whose home
// has a BinaryLight named by -device.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/nats-io/nats.go"

	"github.com/pervasim/pervasim/natsbus"
	"github.com/pervasim/pervasim/sim"
)

func main() {
	addr := flag.String("mqtt", "", "MQTT broker host:port (default: start a home and a broker here)")
	home := flag.String("home", "default", "the home to watch")
	device := flag.String("device", "lamp", "the BinaryLight to turn on")
	flag.Parse()
	if err := run(os.Stdout, *addr, *home, *device); err != nil {
		log.Fatal(err)
	}
}

func run(w io.Writer, addr, home, device string) error {
	if addr == "" {
		stop, a, err := startHome(home, device)
		if err != nil {
			return err
		}
		defer stop()
		addr = a
	}
	got := make(chan mqtt.Message, 256)
	c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker("tcp://" + addr).SetClientID("mqttwatch").SetConnectTimeout(10 * time.Second))
	if err := wait(c.Connect()); err != nil {
		return fmt.Errorf("connect to %s: %w", addr, err)
	}
	defer c.Disconnect(100)
	topics := "pervasim/" + home + "/#"
	if err := wait(c.Subscribe(topics, 0, func(_ mqtt.Client, m mqtt.Message) { got <- m })); err != nil {
		return err
	}
	fmt.Fprintln(w, "subscribed to", topics)

	// An update that changes nothing publishes no event: the lamp is
	// turned off first, so that turning it on is seen even when a run
	// before this one left it on. The home applies the two in order.
	set := "pervasim/" + home + "/devices/" + device + "/set"
	errTopic := "/devices/" + device + "/error"
	for _, update := range []string{`{"properties":{"power_status":false}}`, `{"properties":{"power_status":true}}`} {
		fmt.Fprintln(w, "publish", update, "on", set)
		if err := wait(c.Publish(set, 0, false, update)); err != nil {
			return err
		}
	}
	if err := until(got, w, "/device-property-updated/"+device, errTopic, func(v any) bool { return v == true }); err != nil {
		return err
	}
	bad := `{"state":"on fire"}`
	fmt.Fprintln(w, "publish", bad, "on", set)
	if err := wait(c.Publish(set, 0, false, bad)); err != nil {
		return err
	}
	return until(got, w, errTopic, "", nil)
}

// until prints what arrives until a topic ending in suffix has, with a
// value that want accepts (any, when want is nil). A topic ending in
// failSuffix (when not empty) is an error: the home refused the update.
func until(got <-chan mqtt.Message, w io.Writer, suffix, failSuffix string, want func(any) bool) error {
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m := <-got:
			var e struct {
				EventType string `json:"eventType"`
				Property  string `json:"property"`
				Value     any    `json:"value"`
				Error     string `json:"error"`
			}
			json.Unmarshal(m.Payload(), &e)
			switch {
			case strings.HasSuffix(m.Topic(), "/set"):
				fmt.Fprintf(w, "  %s (our own request)\n", m.Topic())
			case e.Error != "":
				fmt.Fprintf(w, "  %s: %s\n", m.Topic(), e.Error)
			default:
				fmt.Fprintf(w, "  %s: %s = %v\n", m.Topic(), e.Property, e.Value)
			}
			if failSuffix != "" && strings.HasSuffix(m.Topic(), failSuffix) {
				return fmt.Errorf("%s: %s", m.Topic(), e.Error)
			}
			if strings.HasSuffix(m.Topic(), suffix) && (want == nil || want(e.Value)) {
				return nil
			}
		case <-timeout:
			return fmt.Errorf("nothing on …%s", suffix)
		}
	}
}

// wait waits for an MQTT operation.
func wait(t mqtt.Token) error {
	if !t.WaitTimeout(20 * time.Second) {
		return fmt.Errorf("MQTT: no answer")
	}
	return t.Error()
}

// startHome starts what a server with -nats and -mqtt runs: a home with a
// lamp, its events on NATS, and the NATS server's MQTT listener.
func startHome(name, device string) (stop func(), mqttAddr string, err error) {
	srv, err := natsbus.StartServer(natsbus.ServerConfig{Addr: "127.0.0.1:0", MQTTAddr: "127.0.0.1:0"})
	if err != nil {
		return nil, "", err
	}
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		srv.Shutdown()
		return nil, "", err
	}
	home := sim.MustNew(sim.Config{})
	if _, err := home.CreateDevice(sim.DeviceSpec{ID: device, Type: "iCasa.BinaryLight"}); err != nil {
		nc.Close()
		srv.Shutdown()
		return nil, "", err
	}
	unpublish, err := natsbus.PublishHome(nc, "", name, home)
	if err != nil {
		nc.Close()
		srv.Shutdown()
		return nil, "", err
	}
	nc.Flush()
	return func() { unpublish(); nc.Close(); srv.Shutdown() }, srv.MQTTAddr(), nil
}
