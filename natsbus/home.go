package natsbus

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/sim"
)

// DefaultPrefix is the first token of a home's subjects.
const DefaultPrefix = "pervasim"

// HomeSubject returns the subject of event e of the home named home:
// <prefix>.<home>.<eventType>.<id>, where id is what the event is about
// (the device, person, zone or script; the clock's id; "environment"),
// escaped as one token (see [HeaderProperty]).
func HomeSubject(prefix, home string, e sim.Event) string {
	id := "environment"
	switch {
	case e.DeviceID != "":
		id = e.DeviceID
	case e.PersonID != "":
		id = e.PersonID
	case e.ZoneID != "":
		id = e.ZoneID
	case e.ScriptID != "":
		id = e.ScriptID
	case e.Clock != nil:
		id = e.Clock.ID
	}
	return prefix + "." + home + "." + string(e.Type) + "." + escape(id)
}

// PublishHome publishes every event of home on NATS, as
// <prefix>.<name>.<eventType>.<id> with the event's JSON (the event
// stream's data) as the message, and answers device updates sent to
// <prefix>.<name>.devices.<id>.set: the body is a device update as the REST
// API takes it, the reply is the device or the error as JSON, with the
// status in the Pervasim-Status header. An update published without a reply
// subject (by an MQTT client, say) that fails has its error published on
// <prefix>.<name>.devices.<id>.error. Empty prefix means [DefaultPrefix].
// Call stop to end both.
func PublishHome(nc *nats.Conn, prefix, name string, home *sim.Home) (stop func(), err error) {
	return PublishHomeWith(nc, prefix, name, home, func(id string, body []byte) (int, []byte) {
		return httpapi.UpdateDeviceJSON(home, id, body)
	})
}

// DeviceUpdater applies a device update as PUT /devices/device/{id} takes
// it and returns the status and the JSON answer of that request. It must be
// safe for concurrent use.
type DeviceUpdater func(id string, body []byte) (status int, reply []byte)

// PublishHomeWith is PublishHome with the device updates applied by
// update: a server with durable state passes one that journals the change
// first, as it does REST changes.
func PublishHomeWith(nc *nats.Conn, prefix, name string, home *sim.Home, update DeviceUpdater) (stop func(), err error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	base := prefix + "." + name
	sub, err := nc.Subscribe(base+".devices.*.set", func(msg *nats.Msg) {
		tokens := strings.Split(msg.Subject, ".")
		token := tokens[len(tokens)-2]
		var status int
		var reply []byte
		if id, err := unescape(token); err != nil {
			// Answered as REST answers a bad request, rather than left
			// without an answer (a requester would wait for its timeout).
			status = http.StatusBadRequest
			reply, _ = json.Marshal(map[string]string{"error": "device id " + err.Error(), "code": "invalid"})
		} else {
			status, reply = update(id, msg.Data)
		}
		if msg.Reply != "" {
			r := &nats.Msg{Subject: msg.Reply, Data: reply, Header: nats.Header{HeaderStatus: {strconv.Itoa(status)}}}
			nc.PublishMsg(r)
			return
		}
		if status != 200 {
			nc.Publish(base+".devices."+token+".error", reply)
		}
	})
	if err != nil {
		return nil, err
	}
	end := home.Observe(func(e sim.Event) {
		nc.Publish(HomeSubject(prefix, name, e), httpapi.EventJSON(e))
	})
	return func() {
		end()
		sub.Unsubscribe()
	}, nil
}
