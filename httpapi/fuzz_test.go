package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

// fuzzRoutes are the routes that decode a body: every create and update.
var fuzzRoutes = []struct{ method, path string }{
	{"POST", "/platform/zones/zone"},
	{"PUT", "/platform/zones/zone/kitchen"},
	{"POST", "/platform/devices/device"},
	{"PUT", "/platform/devices/device/h1"},
	{"POST", "/platform/persons/person"},
	{"PUT", "/platform/persons/person/bob"},
	{"PUT", "/platform/clocks/clock/default"},
}

// FuzzRequestBodies sends arbitrary bodies to every create and update route
// and checks the server's promises: never a 500 or a panic, every error is
// a JSON {"error","code"} of 4xx, and a rejected request changes nothing.
func FuzzRequestBodies(f *testing.F) {
	seeds := []string{
		`{"zoneId":"kitchen2","name":"K","isRoom":false,"leftX":410,"topY":370,"rightX":655,"bottomY":580}`,
		`{"id":"z","leftX":1.9,"topY":2.5,"rightX":10.99,"bottomY":20.01,"variables":{"Temperature":293}}`,
		`{"id":"z","leftX":-5,"topY":0,"rightX":1e400,"bottomY":5}`,
		`{"name":"Cuisine","variables":{"Volume":null,"Illuminance":5}}`,
		`{"deviceId":"h2","name":"","type":"iCasa.Heater","positionX":1,"positionY":1,"properties":{"heater.powerLevel":0.5}}`,
		`{"positionX":500.7,"positionY":400.2,"state":"deactivated","fault":"yes","width":3,"properties":{"x":[1,{"a":null}]}}`,
		`{"properties":{"heater.powerLevel":1.5},"name":"n"}`,
		`{"location":"kitchen"}`, `{"location":"attic"}`,
		`{"personId":"al","type":"old MAN","positionX":542,"positionY":294}`,
		`{"pause":true,"startDate":1366279200000,"factor":60}`,
		`{"factor":0}`, `{"factor":1.5}`, `{"startDate":-1e300}`,
		`{"id":"other"}`, `[]`, `null`, `""`, `{`, `{}{}`, "{\"name\":\"\xff\"}",
		`{"properties":` + strings.Repeat("[", 50) + strings.Repeat("]", 50) + `}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), s)
	}
	f.Fuzz(func(t *testing.T, route uint8, body string) {
		r := fuzzRoutes[int(route)%len(fuzzRoutes)]
		fx := newFixture(t)
		fx.house(t)
		fx.mustDo(t, "POST", "/platform/devices/device", `{"deviceId":"h1","type":"iCasa.Heater","positionX":500,"positionY":400}`)
		fx.mustDo(t, "POST", "/platform/persons/person", `{"personId":"bob","type":"Man","positionX":10,"positionY":10}`)
		before := fx.state(t)
		rec := fx.do(t, r.method, r.path, body)
		switch {
		case rec.Code == http.StatusOK:
		case rec.Code >= 400 && rec.Code < 500:
			errorCode(t, rec.Body.String())
			if after := fx.state(t); after != before {
				t.Fatalf("%s %s %q = %d but changed the state", r.method, r.path, body, rec.Code)
			}
		default:
			t.Fatalf("%s %s %q = %d %s", r.method, r.path, body, rec.Code, rec.Body)
		}
	})
}
