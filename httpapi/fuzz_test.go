package httpapi_test

import (
	"net/http"
	"net/url"
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
	{"POST", "/platform/scriptPlayer/script"},
	{"PUT", "/platform/scriptPlayer/script/morning.bhv"},
	{"PUT", "/platform/environment"},
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
		upload("s", "<behavior><create-zone id=\"z\" leftX=\"0\" topY=\"0\" X-Length=\"5\" Y-Length=\"5\"/></behavior>"),
		upload("s", "<behavior>\n<fly/>\n</behavior>"), `{"id":"snap"}`, `{"state":"started"}`, `{"state":"paused"}`, `{"state":"bogus"}`,
		`{"outdoorMin":270,"outdoorMax":280,"latitude":-33.9,"sky":"overcast"}`, `{"outdoorTemperature":1e9}`,
		`{"physics":"realistic"}`, `{"outdoorMin":290,"outdoorMax":280}`, `{"sky":7}`,
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
		fx.mustDo(t, "POST", "/platform/scriptPlayer/script", upload("morning", morning))
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

// medFuzzRoutes are the mediation routes that take parameters; "{x}" is
// replaced by the fuzzed path segment.
var medFuzzRoutes = []struct{ method, path string }{
	{"POST", "/mediation/{x}"},
	{"POST", "/mediation/c/mediator/{x}/new"},
	{"POST", "/mediation/c/adapter/rest-out/{x}"},
	{"POST", "/mediation/c/mediators/{x}"},
	{"POST", "/mediation/c/adapters/{x}"},
	{"PUT", "/mediation/c/components/{x}"},
	{"PUT", "/mediation/c/components"},
	{"POST", "/mediation/c/bindings"},
	{"DELETE", "/mediation/c/bindings?{x}"},
	{"POST", "/mediation/runtime/c/components/{x}/data"},
	{"DELETE", "/mediation/c/components/{x}"},
}

// FuzzMediationRequests sends arbitrary parameters to every mediation route
// that takes some: never a 5xx, errors are JSON, and a rejected request
// leaves every chain as it was.
func FuzzMediationRequests(f *testing.F) {
	seeds := []struct {
		route    uint8
		seg      string
		body     string
		jsonBody bool
	}{
		{0, "d", "", false}, {0, "runtime", "", false}, {0, "a b", "", false},
		{1, "enricher", "properties={name=titi}", false}, {1, "HelloMediator", "", false},
		{1, "filter", "properties={condition=(&(kind=temp)(value>=20))}", false},
		{1, "router", `properties={"conditions":{"(k=1)":"one"}}`, false},
		{2, "o2", "properties={capacity=0}", false}, {3, "p2", "type=passthrough", false},
		{4, "o3", `{"type":"rest-out","properties":{"capacity":5}}`, true},
		{5, "tag", "properties={floor=2}", false}, {5, "tag", "properties={A}}", false},
		{6, "", "command=copy&from=tag&to=tag2", false}, {6, "", "command=replace&from=tag&to=p", false},
		{6, "", "command=move&from=tag&to=p", false},
		{7, "", "from=p:out&to=out:in&linker=JMS_Joram&properties={jms.topic=wiki}", false},
		{7, "", "from=p&to=out:in", false}, {7, "", `{"from":"p:out","to":"out:in","linker":"queue"}`, true},
		{8, "from=tag:out&to=out:in", "", false}, {8, "from=x", "", false},
		{9, "in", `{"t":21}`, true}, {9, "in", "content=x&prop.k=v", false}, {9, "tag", "x", false},
		{10, "tag", "", false}, {10, "nope", "", false},
	}
	for _, s := range seeds {
		f.Add(s.route, s.seg, s.body, s.jsonBody)
	}
	f.Fuzz(func(t *testing.T, route uint8, seg, body string, jsonBody bool) {
		r := medFuzzRoutes[int(route)%len(medFuzzRoutes)]
		path := strings.ReplaceAll(r.path, "{x}", url.PathEscape(seg))
		if strings.Contains(r.path, "?{x}") {
			path = strings.ReplaceAll(r.path, "{x}", url.QueryEscape(seg))
			path = strings.Replace(path, "%3D", "=", 1)
		}
		ct := form
		if jsonBody {
			ct = "application/json"
		}
		fx := newFixture(t)
		for _, s := range pipeline {
			if rec := fx.med(t, s); rec.Code != http.StatusOK {
				t.Fatalf("setup %s %s = %d", s.method, s.path, rec.Code)
			}
		}
		before := fx.medState(t)
		rec := fx.doType(t, r.method, path, ct, body)
		switch {
		case rec.Code == http.StatusOK:
		case rec.Code >= 400 && rec.Code < 500:
			errorCode(t, rec.Body.String())
			if after := fx.medState(t); after != before {
				t.Fatalf("%s %s %q = %d but changed the chains:\nbefore %s\nafter  %s", r.method, path, body, rec.Code, before, after)
			}
		default:
			t.Fatalf("%s %s %q = %d %s", r.method, path, body, rec.Code, rec.Body)
		}
	})
}
