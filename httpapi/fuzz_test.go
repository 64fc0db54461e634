package httpapi_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/bridge"
	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
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

// FuzzImport posts any DSCilia document to the mediation root: never a
// 5xx; a refused document leaves every chain and the component types as
// they were; the chains of an accepted one can be read back as DSCilia,
// and that document, posted to a new server, makes the same chains.
func FuzzImport(f *testing.F) {
	entries, err := os.ReadDir(filepath.Join("..", "dscilia", "testdata", "cilia"))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("..", "dscilia", "testdata", "cilia", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data), true)
	}
	f.Add(ciliaApp, false)
	f.Add(`<cilia><chain id="c"><mediators><mediator-instance id="m" type="passthrough"/></mediators></chain></cilia>`, false)
	f.Add(`<cilia><chain id="n"><adapters><adapter-instance id="o" type="rest-out"><property name="capacity" value="3"/></adapter-instance></adapters><bindings><binding from="in:out" to="o:in"/></bindings></chain></cilia>`, true)
	f.Fuzz(func(t *testing.T, doc string, placeholders bool) {
		path := "/mediation/"
		if placeholders {
			path += "?placeholders=true"
		}
		fx := newFixture(t)
		for _, s := range pipeline {
			if rec := fx.med(t, s); rec.Code != http.StatusOK {
				t.Fatalf("setup %s %s = %d", s.method, s.path, rec.Code)
			}
		}
		types := func(fx *fixture) string { return fx.mustDo(t, "GET", "/mediation/runtime/types", "").Body.String() }
		before, beforeTypes := fx.medState(t), types(fx)
		rec := fx.doType(t, "POST", path, "application/xml", doc)
		switch {
		case rec.Code == http.StatusOK:
		case rec.Code >= 400 && rec.Code < 500:
			errorCode(t, rec.Body.String())
			if after := fx.medState(t); after != before {
				t.Fatalf("POST %s %q = %d but changed the chains:\nbefore %s\nafter  %s", path, doc, rec.Code, before, after)
			}
			if after := types(fx); after != beforeTypes {
				t.Fatalf("POST %s %q = %d but changed the types:\nbefore %s\nafter  %s", path, doc, rec.Code, beforeTypes, after)
			}
			return
		default:
			t.Fatalf("POST %s %q = %d %s", path, doc, rec.Code, rec.Body)
		}
		var made struct{ Chains []string }
		if err := json.Unmarshal(rec.Body.Bytes(), &made); err != nil {
			t.Fatalf("POST %s = %s: %v", path, rec.Body, err)
		}
		// What was made reads back as DSCilia, which makes it again.
		again := newFixture(t)
		for _, id := range made.Chains {
			req := newRequest("GET", "/mediation/"+url.PathEscape(id), nil)
			req.Header.Set("Accept", "application/xml")
			out := httptest.NewRecorder()
			fx.handler.ServeHTTP(out, req)
			if out.Code != http.StatusOK {
				t.Fatalf("GET /mediation/%s as XML = %d %s", id, out.Code, out.Body)
			}
			if rec := again.doType(t, "POST", "/mediation/?placeholders=true", "application/xml", out.Body.String()); rec.Code != http.StatusOK {
				t.Fatalf("chain %s as it was read = %d %s:\n%s", id, rec.Code, rec.Body, out.Body)
			}
			want := chainState(t, fx, id)
			if got := chainState(t, again, id); got != want {
				t.Fatalf("chain %s made again from its DSCilia:\nwant %s\ngot  %s", id, want, got)
			}
		}
	})
}

// chainState is a chain's view and its components' properties.
func chainState(tb testing.TB, fx *fixture, id string) string {
	tb.Helper()
	p := "/mediation/" + url.PathEscape(id)
	var b strings.Builder
	b.WriteString(fx.mustDo(tb, "GET", p, "").Body.String())
	var ids struct{ Mediators, Adapters []string }
	json.Unmarshal(fx.mustDo(tb, "GET", p+"/components", "").Body.Bytes(), &ids)
	for _, c := range append(ids.Mediators, ids.Adapters...) {
		var comp struct {
			Type       string
			Properties map[string]any
		}
		json.Unmarshal(fx.mustDo(tb, "GET", p+"/components/"+url.PathEscape(c), "").Body.Bytes(), &comp)
		v, _ := json.Marshal(comp)
		b.WriteString(c + string(v))
	}
	return b.String()
}

// FuzzRequestSequences sends a sequence of any requests, one a line
// ("METHOD PATH [BODY]", the body's first byte choosing its type: '<'
// XML, '{' or '[' JSON, else a form), so that each meets the state the
// others left: never a 5xx, every answer as the OpenAPI document says,
// and a refused request changes nothing. A line "ADVANCE /<seconds>" runs
// simulated time on; a first line "REALISTIC" gives the home the
// realistic physics model. At the end the home, after what time made of
// it, still reads as the document says.
func FuzzRequestSequences(f *testing.F) {
	for _, s := range []string{
		"POST /platform/zones/zone {\"zoneId\":\"z\",\"leftX\":0,\"topY\":0,\"rightX\":100,\"bottomY\":100}\nPOST /platform/devices/device {\"deviceId\":\"t\",\"type\":\"Thermometer\",\"positionX\":5,\"positionY\":5}\nPUT /platform/devices/device/t {\"fault\":\"yes\"}\nDELETE /platform/zones/zone/z\nPUT /platform/persons/person/bob {\"location\":\"kitchen\"}",
		"POST /mediation/s\nPOST /mediation/s/adapter/rest-in/i\nPOST /mediation/s/mediator/splitter/sp {\"properties\":{\"separator\":\";\"}}\nPOST /mediation/s/mediator/aggregator/ag\nPOST /mediation/s/adapter/rest-out/o {\"properties\":{\"capacity\":2}}\nPOST /mediation/s/bindings from=i:out&to=sp:in\nPOST /mediation/s/bindings from=sp:out&to=ag:in&linker=queue\nPOST /mediation/s/bindings from=ag:out&to=o:in\nPOST /mediation/runtime/s/components/i/data a;b;c\nGET /mediation/runtime/s/components/o/data",
		"POST /mediation/c/mediator/router/r properties={conditions={\"(site=lab)\":\"lab\"}}\nPOST /mediation/c/bindings from=tag:out&to=r:in\nPOST /mediation/c/bindings from=r:lab&to=out:in\nPOST /mediation/runtime/c/components/in/data {\"x\":1}\nPUT /mediation/c/components command=replace&from=tag&to=p\nGET /mediation/runtime/c/components/out/data",
		"PUT /mediation/runtime/c/stop\nPOST /mediation/runtime/c/components/in/data hello\nPUT /mediation/c/components command=copy&from=tag&to=t2\nDELETE /mediation/c/components/tag\nPUT /mediation/runtime/c/start\nGET /mediation/runtime/c/components/out/data",
		"POST /mediation/c/mediator/translator/tr {\"properties\":{\"dictionary\":{\"hi\":\"salut\"}}}\nDELETE /mediation/c/bindings?from=tag:out&to=out:in\nPOST /mediation/c/bindings from=tag:out&to=tr:in\nPOST /mediation/c/bindings from=tr:out&to=out:in&linker=queue\nPOST /mediation/runtime/c/components/in/data content=hi+there&prop.k=v\nGET /mediation/runtime/c/components/out/data",
		"POST /mediation/?placeholders=true <cilia><chain id=\"x\"><mediators><mediator-instance id=\"m\" type=\"Ghost\"/></mediators><adapters><adapter-instance id=\"a\" type=\"rest-in\"/></adapters><bindings><binding from=\"a:unique\" to=\"m:unique\"/></bindings></chain></cilia>\nPOST /mediation/runtime/x/components/a/data 1\nGET /mediation/runtime/x/components/m/data\nDELETE /mediation/x\nGET /mediation/runtime/types",
		"GET /\nGET /simulator/\nOPTIONS /platform/zones/zones\nHEAD /platform/events\nPUT /platform/clocks/clock/default {\"pause\":true}\nPUT /platform/environment {\"physics\":\"realistic\"}\nDELETE /platform/simulation\nPOST /platform/scriptPlayer/script/morning.bhv {\"state\":\"started\"}\nADVANCE /3600",
		"REALISTIC\nPOST /platform/devices/device {\"deviceId\":\"h\",\"type\":\"Heater\",\"positionX\":500,\"positionY\":500,\"properties\":{\"heater.powerLevel\":1}}\nPUT /platform/zones/zone/kitchen {\"variables\":{\"Volume\":0.001}}\nPUT /platform/environment {\"outdoorMin\":250,\"outdoorMax\":260,\"sky\":\"clear\"}\nADVANCE /7200\nPOST /platform/devices/device {\"deviceId\":\"l\",\"type\":\"DimmerLight\",\"positionX\":500,\"positionY\":500,\"properties\":{\"power_level\":1}}\nADVANCE /86400",
		"POST /platform/devices/device {\"deviceId\":\"lamp\",\"type\":\"BinaryLight\",\"positionX\":500,\"positionY\":500}\nPOST /platform/devices/device {\"deviceId\":\"ph\",\"type\":\"Photometer\",\"positionX\":510,\"positionY\":500}\nPOST /mediation/d\nPOST /mediation/d/adapter/device-in/watch properties={devices=ph; property=current_illuminance; current=true}\nPOST /mediation/d/mediator/filter/dark properties={condition=(value<=100)}\nPOST /mediation/d/adapter/device-out/on {\"properties\":{\"device\":\"lamp\",\"property\":\"power_status\",\"value\":true}}\nPOST /mediation/d/bindings from=watch:out&to=dark:in\nPOST /mediation/d/bindings from=dark:out&to=on:in\nGET /platform/devices/device/lamp\nADVANCE /60\nGET /platform/devices/device/ph\nDELETE /platform/devices/device/lamp\nPUT /mediation/d/components/on properties={value=false}\nPOST /mediation/runtime/c/components/in/data {\"device\":\"ph\",\"property\":\"x\",\"value\":1}",
		"POST /platform/devices/device {\"deviceId\":\"t\",\"type\":\"Thermometer\",\"positionX\":500,\"positionY\":500}\nPOST /platform/devices/device {\"deviceId\":\"h\",\"type\":\"Heater\",\"positionX\":500,\"positionY\":500,\"properties\":{\"heater.powerLevel\":1}}\nGET /platform/devices/device/t\nGET /platform/zones/zone/kitchen\nADVANCE /600\nGET /platform/devices/device/t\nPOST /platform/scriptPlayer/script/morning.bhv {\"state\":\"started\"}\nADVANCE /3600",
		"POST /platform/scriptPlayer/script?id=night <behavior startdate=\"01/02/2024-22:00:00\"><create-zone id=\"z\" leftX=\"0\" topY=\"0\" X-Length=\"9\" Y-Length=\"9\"/><delay value=\"1\" unit=\"h\"/><fly/></behavior>\nPUT /platform/scriptPlayer/script/night.bhv {\"state\":\"started\"}\nADVANCE /1800\nPUT /platform/scriptPlayer/script/night.bhv {\"state\":\"paused\"}\nPOST /platform/scriptPlayer/script {\"id\":\"saved\"}\nPOST /platform/scriptPlayer/script {\"id\":\"night\",\"content\":\"<behavior/>\"}",
		"POST /platform/devices/device {\"deviceId\":\"h\",\"type\":\"Cooler\",\"positionX\":500,\"positionY\":500,\"properties\":{\"cooler.powerLevel\":1,\"cooler.updaterThread.period\":1}}\nPUT /platform/zones/zone/kitchen {\"variables\":{\"Volume\":0}}\nADVANCE /600",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ops string) {
		physics := sim.PhysicsContract
		if rest, ok := strings.CutPrefix(ops, "REALISTIC\n"); ok {
			physics, ops = sim.PhysicsRealistic, rest
		}
		fx := newFixtureOf(t, physics)
		fx.house(t)
		fx.mustDo(t, "POST", "/platform/persons/person", `{"personId":"bob","type":"Man","positionX":10,"positionY":10}`)
		fx.mustDo(t, "POST", "/platform/scriptPlayer/script", upload("morning", morning))
		for _, s := range pipeline {
			if rec := fx.med(t, s); rec.Code != http.StatusOK {
				t.Fatalf("setup %s %s = %d", s.method, s.path, rec.Code)
			}
		}
		state := func() string {
			return fx.state(t) + fx.medState(t) + fx.mustDo(t, "GET", "/mediation/runtime/types", "").Body.String() +
				fx.mustDo(t, "GET", "/platform/scriptPlayer/scripts", "").Body.String()
		}
		n := 0
		for line := range strings.SplitSeq(ops, "\n") {
			method, rest, _ := strings.Cut(line, " ")
			path, body, _ := strings.Cut(rest, " ")
			if method == "" || !strings.HasPrefix(path, "/") || !validRequest(method, path) || isStream(method, path) {
				continue
			}
			if n++; n > 12 {
				break
			}
			if method == "ADVANCE" { // simulated time runs on, by seconds
				secs, err := strconv.ParseUint(path[1:], 10, 32)
				if err != nil {
					continue
				}
				if err := fx.home.Advance(time.Duration(secs%(48*3600)) * time.Second); err != nil {
					t.Fatalf("Advance: %v", err)
				}
				continue
			}
			ctype := form
			switch {
			case body == "":
			case body[0] == '<':
				ctype = "application/xml"
			case body[0] == '{' || body[0] == '[':
				ctype = "application/json"
			}
			before := state()
			rec := fx.doType(t, method, path, ctype, body)
			switch {
			case rec.Code < 400: // 200, or a redirect to the house plan
			case rec.Code < 500:
				errorCode(t, rec.Body.String())
				if after := state(); after != before {
					t.Fatalf("%s %s %q = %d %s but changed the state:\nbefore %s\nafter  %s", method, path, body, rec.Code, rec.Body, before, after)
				}
			default:
				t.Fatalf("%s %s %q = %d %s", method, path, body, rec.Code, rec.Body)
			}
		}
		state() // what time made of the home reads as the document says
		// Each zone, device and person reads the same alone as in its list.
		for _, kind := range []struct{ list, one string }{
			{"/platform/zones/zones", "/platform/zones/zone/"},
			{"/platform/devices/devices", "/platform/devices/device/"},
			{"/platform/persons/persons", "/platform/persons/person/"},
		} {
			var list []map[string]any
			if err := json.Unmarshal(fx.mustDo(t, "GET", kind.list, "").Body.Bytes(), &list); err != nil {
				t.Fatalf("GET %s: %v", kind.list, err)
			}
			for _, item := range list {
				id, _ := item["id"].(string)
				var one map[string]any
				if err := json.Unmarshal(fx.mustDo(t, "GET", kind.one+url.PathEscape(id), "").Body.Bytes(), &one); err != nil {
					t.Fatalf("GET %s%s: %v", kind.one, id, err)
				}
				if d := cmp.Diff(item, one); d != "" {
					t.Fatalf("%s%s (-in the list +alone):\n%s", kind.one, id, d)
				}
			}
		}
	})
}

// newFixtureOf is newFixture with a home of that physics model, and the
// device-in and device-out adapters, as the server has.
func newFixtureOf(tb testing.TB, physics sim.Physics) *fixture {
	tb.Helper()
	mock := clock.NewMock()
	mock.Set(epoch)
	home := sim.MustNew(sim.Config{WallClock: mock, Location: time.UTC, Physics: physics})
	engine := mediation.NewEngine(mediation.Config{Clock: mock})
	b, err := bridge.New(home, engine)
	if err != nil {
		tb.Fatal(err)
	}
	h := httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine})
	tb.Cleanup(func() { h.Close(); b.Close(); engine.Close() })
	return &fixture{home: home, clock: mock, engine: engine, handler: h}
}

// validRequest reports whether a client can send method and target:
// whether httptest.NewRequest takes them rather than panic.
func validRequest(method, target string) bool {
	_, err := http.ReadRequest(bufio.NewReader(strings.NewReader(method + " " + target + " HTTP/1.0\r\n\r\n")))
	return err == nil
}

// isStream reports whether a request opens an event stream, which goes on
// until the client leaves.
func isStream(method, target string) bool {
	u, err := url.ParseRequestURI(target)
	return method == http.MethodGet && (err != nil || strings.HasSuffix(u.Path, "/events"))
}

// FuzzMultipartForms sends any multipart/form-data body (boundary "B") to
// a route that reads parameters and to one that reads a message: never a
// 5xx, errors are JSON, and a refused request leaves every chain as it was.
func FuzzMultipartForms(f *testing.F) {
	part := func(name, value string) string {
		return "--B\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + value + "\r\n"
	}
	for _, s := range []string{
		part("properties", "{floor=2}") + "--B--\r\n",
		part("content", "x") + part("prop.k", "v") + "--B--\r\n",
		part("properties", "{floor=2}"),
		"--B\r\nContent-Disposition: form-data\r\n\r\nx\r\n--B--\r\n",
		"--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\n{a=1}\r\n--B--\r\n",
		"",
	} {
		f.Add(false, s)
		f.Add(true, s)
	}
	f.Fuzz(func(t *testing.T, message bool, body string) {
		path := "/mediation/c/components/tag"
		method := "PUT"
		if message {
			path, method = "/mediation/runtime/c/components/in/data", "POST"
		}
		fx := newFixture(t)
		for _, s := range pipeline {
			if rec := fx.med(t, s); rec.Code != http.StatusOK {
				t.Fatalf("setup %s %s = %d", s.method, s.path, rec.Code)
			}
		}
		before := fx.medState(t)
		rec := fx.doType(t, method, path, "multipart/form-data; boundary=B", body)
		switch {
		case rec.Code == http.StatusOK:
		case rec.Code >= 400 && rec.Code < 500:
			errorCode(t, rec.Body.String())
			if after := fx.medState(t); after != before {
				t.Fatalf("%s %s %q = %d but changed the chains:\nbefore %s\nafter  %s", method, path, body, rec.Code, before, after)
			}
		default:
			t.Fatalf("%s %s %q = %d %s", method, path, body, rec.Code, rec.Body)
		}
	})
}
