package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/httpapi"
)

// FuzzUpdateDeviceJSON sends any device update, for any device id, as the
// NATS and MQTT transports do (the body of a message on
// <prefix>.<home>.devices.<id>.set, the id unescaped from the subject, so
// any text): never a 5xx; an error is a JSON {"error","code"} and changes
// nothing; and for an id a REST client can name, the status, the answer
// and the home after it are those of PUT /platform/devices/device/{id}
// with that body.
func FuzzUpdateDeviceJSON(f *testing.F) {
	for _, s := range []struct {
		id   string
		body string
	}{
		{"h1", `{"properties":{"heater.powerLevel":0.5}}`},
		{"h1", `{"state":"deactivated","fault":"yes","positionX":500.7,"positionY":1e9}`},
		{"h1", `{"location":"kitchen","name":"<b>&amp;</b>"}`},
		{"h1", `{"id":"h2"}`}, {"h1", `{"deviceId":"h1","width":-3}`},
		{"h1", `{"properties":{"heater.powerLevel":1.5}}`}, {"h1", `{"state":"on fire"}`},
		{"nope", `{"state":"activated"}`}, {"h1", `{`}, {"h1", `[]`}, {"h1", ``},
		{"lamp\x00", `{}`}, {"\xff", `{"name":"\u00ff"}`}, {"../h1", `{}`}, {"h1", "{\"name\":\"\xff\"}"},
	} {
		f.Add(s.id, s.body)
	}
	f.Fuzz(func(t *testing.T, id, body string) {
		rest, other := newFixture(t), newFixture(t)
		for _, fx := range []*fixture{rest, other} {
			fx.house(t)
			fx.mustDo(t, "POST", "/platform/devices/device", `{"deviceId":"h1","type":"iCasa.Heater","positionX":500,"positionY":400}`)
		}
		before := other.state(t)
		status, reply := httpapi.UpdateDeviceJSON(other.home, id, []byte(body))
		switch {
		case status == http.StatusOK:
			var d struct{ ID string }
			if err := json.Unmarshal(reply, &d); err != nil || d.ID != id {
				t.Fatalf("UpdateDeviceJSON(%q, %q) = 200 %s: not the device", id, body, reply)
			}
		case status >= 400 && status < 500:
			errorCode(t, string(reply))
			if after := other.state(t); after != before {
				t.Fatalf("UpdateDeviceJSON(%q, %q) = %d %s but changed the state", id, body, status, reply)
			}
		default:
			t.Fatalf("UpdateDeviceJSON(%q, %q) = %d %s", id, body, status, reply)
		}
		if id != "h1" && id != "nope" {
			return // not every id is a path a REST client can send
		}
		rec := rest.do(t, "PUT", "/platform/devices/device/"+url.PathEscape(id), body)
		if rec.Code != status {
			t.Fatalf("%q to %q: REST %d %s; UpdateDeviceJSON %d %s", body, id, rec.Code, rec.Body, status, reply)
		}
		var a, b any
		if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(reply, &b); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(a, b); d != "" {
			t.Fatalf("%q to %q (-REST +UpdateDeviceJSON):\n%s", body, id, d)
		}
		if d := cmp.Diff(rest.state(t), other.state(t)); d != "" {
			t.Fatalf("%q to %q: the homes after (-REST +UpdateDeviceJSON):\n%s", body, id, d)
		}
	})
}
