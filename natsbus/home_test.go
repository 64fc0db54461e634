package natsbus_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/nats-io/nats.go"

	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/natsbus"
	"github.com/pervasim/pervasim/sim"
)

// homeOnNATS makes a home with a lamp, published as "lab".
func homeOnNATS(tb testing.TB, nc *nats.Conn) *sim.Home {
	tb.Helper()
	home := sim.MustNew(sim.Config{})
	if _, err := home.CreateZone(sim.ZoneSpec{ID: "kitchen", LeftX: 0, TopY: 0, RightX: 100, BottomY: 100}); err != nil {
		tb.Fatal(err)
	}
	if _, err := home.CreateDevice(sim.DeviceSpec{ID: "lamp", Type: "iCasa.BinaryLight"}); err != nil {
		tb.Fatal(err)
	}
	stop, err := natsbus.PublishHome(nc, "", "lab", home)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(stop)
	if err := nc.Flush(); err != nil {
		tb.Fatal(err)
	}
	return home
}

// TestHomeOnNATS: events come out on pervasim.<home>.<eventType>.<id>, and
// a request on pervasim.<home>.devices.<id>.set updates the device and
// answers it, or the error.
func TestHomeOnNATS(t *testing.T) {
	_, nc := startNATS(t)
	home := homeOnNATS(t, nc)
	events := make(chan *nats.Msg, 64)
	sub, err := nc.ChanSubscribe("pervasim.lab.>", events)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()

	reply, err := nc.Request("pervasim.lab.devices.lamp.set", []byte(`{"properties":{"power_status":true}}`), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var d sim.Device
	if err := json.Unmarshal(reply.Data, &d); err != nil || d.Properties["power_status"] != true {
		t.Errorf("reply %s (status %s), want the lamp on", reply.Data, reply.Header.Get(natsbus.HeaderStatus))
	}
	if got, _ := home.Device("lamp"); got.Properties["power_status"] != true {
		t.Errorf("the lamp is not on: %v", got.Properties)
	}
	m := <-events // the request itself
	if m.Subject != "pervasim.lab.devices.lamp.set" {
		t.Errorf("first message on %s, want the request", m.Subject)
	}
	select {
	case m := <-events:
		if m.Subject != "pervasim.lab.device-property-updated.lamp" {
			t.Errorf("event on %s, want pervasim.lab.device-property-updated.lamp", m.Subject)
		}
		var e struct {
			EventType string `json:"eventType"`
			DeviceID  string `json:"deviceId"`
			Property  string `json:"property"`
			Value     any    `json:"value"`
		}
		if err := json.Unmarshal(m.Data, &e); err != nil || e.DeviceID != "lamp" || e.Property != "power_status" || e.Value != true {
			t.Errorf("event %s", m.Data)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}

	for _, tt := range []struct {
		subject, body, status string
	}{
		{"pervasim.lab.devices.nope.set", `{"state":"activated"}`, "404"},
		{"pervasim.lab.devices.lamp.set", `{"state":"on fire"}`, "400"},
		{"pervasim.lab.devices.lamp.set", `{`, "400"},
	} {
		reply, err := nc.Request(tt.subject, []byte(tt.body), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Error, Code string }
		if got := reply.Header.Get(natsbus.HeaderStatus); got != tt.status || json.Unmarshal(reply.Data, &e) != nil || e.Error == "" {
			t.Errorf("%s %s: status %s, reply %s; want %s and an error", tt.subject, tt.body, got, reply.Data, tt.status)
		}
	}
}

// TestHomeOverMQTT: an MQTT client (Eclipse Paho) sees a home's events as
// topics pervasim/<home>/<eventType>/<id> and sets a device by publishing on
// pervasim/<home>/devices/<id>/set; a bad update's error comes back on
// pervasim/<home>/devices/<id>/error.
func TestHomeOverMQTT(t *testing.T) {
	s, err := natsbus.StartServer(natsbus.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), MQTTAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	home := homeOnNATS(t, connect(t, s.URL()))

	opts := mqtt.NewClientOptions().AddBroker("tcp://" + s.MQTTAddr()).SetClientID("pervasim-test").SetConnectTimeout(10 * time.Second)
	c := mqtt.NewClient(opts)
	if tok := c.Connect(); !tok.WaitTimeout(20*time.Second) || tok.Error() != nil {
		t.Fatalf("MQTT connect: %v", tok.Error())
	}
	defer c.Disconnect(100)
	got := make(chan mqtt.Message, 64)
	if tok := c.Subscribe("pervasim/lab/#", 0, func(_ mqtt.Client, m mqtt.Message) { got <- m }); !tok.WaitTimeout(20*time.Second) || tok.Error() != nil {
		t.Fatalf("MQTT subscribe: %v", tok.Error())
	}
	if tok := c.Publish("pervasim/lab/devices/lamp/set", 0, false, `{"properties":{"power_status":true}}`); !tok.WaitTimeout(20*time.Second) || tok.Error() != nil {
		t.Fatalf("MQTT publish: %v", tok.Error())
	}
	want := map[string]bool{"pervasim/lab/devices/lamp/set": false, "pervasim/lab/device-property-updated/lamp": false}
	timeout := time.After(20 * time.Second)
	for !want["pervasim/lab/device-property-updated/lamp"] {
		select {
		case m := <-got:
			want[m.Topic()] = true
		case <-timeout:
			t.Fatalf("topics seen: %v", want)
		}
	}
	if d, _ := home.Device("lamp"); d.Properties["power_status"] != true {
		t.Errorf("MQTT did not turn the lamp on: %v", d.Properties)
	}
	c.Publish("pervasim/lab/devices/lamp/set", 0, false, `{"state":"on fire"}`)
	for {
		select {
		case m := <-got:
			if m.Topic() == "pervasim/lab/devices/lamp/error" {
				var e struct{ Error, Code string }
				if json.Unmarshal(m.Payload(), &e); e.Code != "invalid" {
					t.Errorf("error %s", m.Payload())
				}
				return
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no error topic")
		}
	}
}

// TestDeviceRequestWithBadEscape: a device request whose id token is no
// valid %XX escape is answered 400, as any other bad request, rather than
// left without an answer (the requester waited for its timeout, an MQTT
// client got no error).
func TestDeviceRequestWithBadEscape(t *testing.T) {
	_, nc := startNATS(t)
	homeOnNATS(t, nc)
	errs := make(chan *nats.Msg, 1)
	sub, err := nc.ChanSubscribe("pervasim.lab.devices.*.error", errs)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	reply, err := nc.Request("pervasim.lab.devices.%ZZ.set", []byte(`{}`), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if s := reply.Header.Get(natsbus.HeaderStatus); s != "400" {
		t.Errorf("status %s (%s), want 400", s, reply.Data)
	}
	if err := nc.Publish("pervasim.lab.devices.lamp%2.set", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	m := <-errs
	var e struct{ Code string }
	if json.Unmarshal(m.Data, &e); m.Subject != "pervasim.lab.devices.lamp%2.error" || e.Code != "invalid" {
		t.Errorf("error %s on %s", m.Data, m.Subject)
	}
	// A valid id written another way has its error where its events are.
	if err := nc.Publish("pervasim.lab.devices.l%61mp.set", []byte(`{"state":"on fire"}`)); err != nil {
		t.Fatal(err)
	}
	if m := <-errs; m.Subject != "pervasim.lab.devices.lamp.error" {
		t.Errorf("the error of an update to l%%61mp came on %s, want the lamp's error subject", m.Subject)
	}
}

// TestPublishHomeChecksItsTokens checks that PublishHome refuses a prefix
// or name that is not one subject token, with an invalid error, before it
// subscribes: a name ">" made the server close the connection (cutting
// every chain and home that shares it from NATS), and a name "*" answered,
// and applied to this home, the device updates sent to every other home.
func TestPublishHomeChecksItsTokens(t *testing.T) {
	_, nc := startNATS(t)
	home := sim.MustNew(sim.Config{})
	if _, err := home.CreateDevice(sim.DeviceSpec{ID: "lamp", Type: "iCasa.BinaryLight"}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ prefix, name string }{
		{"", ">"}, {"", "*"}, {"", "a.b"}, {"", ""}, {"", "x y"}, {"", "x>"},
		{">", "lab"}, {"*", "lab"}, {"a.b", "lab"}, {"p\n", "lab"},
	} {
		stop, err := natsbus.PublishHome(nc, tt.prefix, tt.name, home)
		if !errors.Is(err, mediation.ErrInvalid) {
			t.Errorf("PublishHome(%q, %q) = %v, want an invalid error", tt.prefix, tt.name, err)
		}
		if stop != nil {
			stop()
		}
	}
	if err := nc.Flush(); err != nil || !nc.IsConnected() {
		t.Fatalf("the connection after the refusals: %v, %v", err, nc.Status())
	}
	// Nothing answers for a home that was not published.
	if _, err := nc.Request("pervasim.kitchen.devices.lamp.set", []byte(`{"properties":{"power_status":true}}`), 5*time.Second); !errors.Is(err, nats.ErrNoResponders) {
		t.Errorf("a request for another home = %v, want no responders", err)
	}
	stop, err := natsbus.PublishHome(nc, "acme-1", "lab_2", home)
	if err != nil {
		t.Fatal(err)
	}
	stop()
}
