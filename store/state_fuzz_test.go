package store_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/bridge"
	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
	"github.com/pervasim/pervasim/store"
)

// fuzzServer is open with a logger the test reads: a restored state has
// nothing to warn about.
func fuzzServer(t *testing.T, dir string, physics sim.Physics, logged *bytes.Buffer, mu *sync.Mutex) *server {
	t.Helper()
	s, err := tryServer(t, dir, physics, logged, mu)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return s
}

// tryServer is fuzzServer, which returns the error of the state's Open.
func tryServer(t *testing.T, dir string, physics sim.Physics, logged *bytes.Buffer, mu *sync.Mutex) (*server, error) {
	t.Helper()
	mock := clock.NewMock()
	mock.Set(time.Date(2013, 4, 18, 10, 0, 0, 0, time.UTC))
	home := sim.MustNew(sim.Config{WallClock: mock, Location: time.UTC, Physics: physics})
	engine := mediation.NewEngine(mediation.Config{Clock: mock})
	t.Cleanup(func() { engine.Close() })
	b, err := bridge.New(home, engine)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	api := httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine})
	log := slog.New(slog.NewTextHandler(lockedWriter{mu, logged}, nil))
	st, _, err := openState(store.Config{Dir: dir, Home: home, Engine: engine, Handler: api, Location: time.UTC, SnapshotEvery: time.Hour, Logger: log})
	if err != nil {
		return nil, err
	}
	return &server{mock: mock, home: home, engine: engine, api: api, st: st, handler: st.Wrap(api)}, nil
}

// fullView reads everything the state keeps: the home, the clock, the
// environment, and every chain with its components and bindings.
func fullView(t *testing.T, s *server) map[string]any {
	t.Helper()
	out := map[string]any{}
	get := func(p string) any {
		rec := s.do(t, "GET", p, "", "")
		var v any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("GET %s = %d: %v", p, rec.Code, err)
		}
		out[p] = v
		return v
	}
	for _, p := range []string{"/platform/zones/zones", "/platform/devices/devices", "/platform/persons/persons", "/platform/environment", "/platform/clocks/clock/default", "/mediation/runtime/types"} {
		get(p)
	}
	for _, c := range s.engine.Chains() {
		cp := "/mediation/" + url.PathEscape(c)
		get(cp)
		get("/mediation/runtime/" + url.PathEscape(c))
		get(cp + "/bindings")
		ids, _ := get(cp + "/components").(map[string]any)
		for _, kind := range []string{"Mediators", "Adapters"} {
			list, _ := ids[kind].([]any)
			for _, id := range list {
				if id, ok := id.(string); ok {
					get(cp + "/components/" + url.PathEscape(id))
				}
			}
		}
	}
	return ignoreDerived(out)
}

// parseOps reads one request a line: "METHOD PATH [BODY]". The body's
// first byte chooses its content type: '<' XML, '{' or '[' JSON, else a
// form.
func parseOps(ops string) []struct{ method, path, ctype, body string } {
	var out []struct{ method, path, ctype, body string }
	for line := range strings.SplitSeq(ops, "\n") {
		method, rest, _ := strings.Cut(line, " ")
		path, body, _ := strings.Cut(rest, " ")
		if method == "" || !strings.HasPrefix(path, "/") {
			continue
		}
		if _, err := http.ReadRequest(bufio.NewReader(strings.NewReader(method + " " + path + " HTTP/1.0\r\n\r\n"))); err != nil {
			continue // no client sends it: httptest.NewRequest panics
		}
		if u, err := url.ParseRequestURI(path); method == http.MethodGet && (err != nil || strings.HasSuffix(u.Path, "/events")) {
			continue // an event stream, which goes on until the client leaves
		}
		ctype := "application/x-www-form-urlencoded"
		switch {
		case body == "":
			ctype = ""
		case body[0] == '<':
			ctype = "application/xml"
		case body[0] == '{' || body[0] == '[':
			ctype = "application/json"
		}
		out = append(out, struct{ method, path, ctype, body string }{method, path, ctype, body})
		if len(out) == 16 {
			break
		}
	}
	return out
}

// FuzzStateRestores sends any requests to a server with a state directory
// and checks that what it acknowledged comes back: no request is a 500,
// and the state is the same after a kill -9 (the journal replayed), then
// after a clean shutdown (the snapshot loaded), with no warning, in
// either physics model.
func FuzzStateRestores(f *testing.F) {
	var seed strings.Builder
	for _, c := range changes {
		seed.WriteString(c.method + " " + c.path + " " + c.body + "\n")
	}
	f.Add(seed.String(), false)
	f.Add(seed.String(), true)
	for _, s := range []string{
		"POST /platform/zones/zone {\"zoneId\":\"z\",\"name\":\"tab\\there <&>\",\"leftX\":0,\"topY\":0,\"rightX\":10,\"bottomY\":10,\"variables\":{\"Volume\":3}}\nPOST /platform/devices/device {\"deviceId\":\"d\",\"type\":\"DimmerLight\",\"positionX\":5,\"positionY\":5,\"properties\":{\"note\":[1,{\"a\":null}]}}\nPUT /platform/zones/zone/z {\"variables\":{\"Volume\":null}}",
		"POST /mediation/c\nPOST /mediation/c/mediator/router/r properties={conditions={\"(k=1)\":\"one\"}}\nPOST /mediation/c/adapter/rest-out/o\nPOST /mediation/c/bindings from=r:one&to=o:in\nPUT /mediation/c/components command=copy&from=r&to=r2",
		"POST /mediation/c\nPOST /mediation/c/mediator/splitter/s {\"properties\":{\"separator\":\";\"}}\nPOST /mediation/c/mediator/aggregator/a {\"properties\":{\"count\":3}}\nPOST /mediation/c/bindings from=s:out&to=a:in&linker=queue&properties={capacity=5}\nPUT /mediation/runtime/c/stop",
		"POST /platform/persons/person {\"personId\":\"p\",\"type\":\"old woman\",\"positionX\":-3.7,\"positionY\":4.2}\nPUT /platform/clocks/clock/default {\"startDate\":0,\"factor\":7}\nPUT /platform/environment {\"outdoorMin\":260,\"outdoorMax\":280,\"latitude\":-89.9,\"longitude\":179}",
		"POST /mediation/?placeholders=true <cilia><chain id=\"x\"><mediators><mediator-instance id=\"m\" type=\"Mock\"><property name=\"p\" value=\"1\"/></mediator-instance></mediators><adapters><adapter-instance id=\"a\" type=\"rest-out\"/></adapters><bindings><binding from=\"m:o\" to=\"a:in\"/></bindings></chain></cilia>",
		"DELETE /platform/simulation\nPOST /mediation/c\nDELETE /mediation/c",
	} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, ops string, realistic bool) {
		physics := sim.PhysicsContract
		if realistic {
			physics = sim.PhysicsRealistic
		}
		var mu sync.Mutex
		var logged bytes.Buffer
		dir := t.TempDir()
		t.Cleanup(func() { // what openState keeps for the next start
			if st, ok := live.LoadAndDelete(dir); ok {
				st.(*store.State).Kill()
			}
		})
		s := fuzzServer(t, dir, physics, &logged, &mu)
		for _, op := range parseOps(ops) {
			rec := s.do(t, op.method, op.path, op.ctype, op.body)
			if rec.Code >= 500 && rec.Code != http.StatusServiceUnavailable {
				t.Fatalf("%s %s %q = %d %s", op.method, op.path, op.body, rec.Code, rec.Body)
			}
		}
		want := fullView(t, s)
		s2 := fuzzServer(t, dir, physics, &logged, &mu) // s killed: from the journal
		if d := cmp.Diff(want, fullView(t, s2)); d != "" {
			t.Fatalf("from the journal (-before +after):\n%s", d)
		}
		if err := s2.st.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		s3 := fuzzServer(t, dir, physics, &logged, &mu) // from the snapshot
		if d := cmp.Diff(want, fullView(t, s3)); d != "" {
			t.Fatalf("from the snapshot (-before +after):\n%s", d)
		}
		s3.st.Close()
		mu.Lock()
		defer mu.Unlock()
		if logged.Len() > 0 {
			t.Fatalf("warnings:\n%s", logged.String())
		}
	})
}

// FuzzOpenSnapshot starts a server on a state directory whose snapshot
// files (meta.json, home.bhv, chains.dscilia) are any text: it starts or
// fails with an error, never a panic; and the state it starts with is one
// it can snapshot and start with again, the same.
func FuzzOpenSnapshot(f *testing.F) {
	base := f.TempDir()
	s, _ := open(f, base)
	for _, c := range changes {
		if rec := s.do(f, c.method, c.path, c.ctype, c.body); rec.Code != http.StatusOK {
			f.Fatalf("%s %s = %d %s", c.method, c.path, rec.Code, rec.Body)
		}
	}
	if err := s.st.Close(); err != nil {
		f.Fatal(err)
	}
	snaps, _ := filepath.Glob(filepath.Join(base, "snapshot-*"))
	if len(snaps) != 1 {
		f.Fatalf("snapshots %v, want one", snaps)
	}
	snap := filepath.Base(snaps[0])
	files := []string{"meta.json", "home.bhv", "chains.dscilia"}
	var seed [3]string
	for i, name := range files {
		data, err := os.ReadFile(filepath.Join(snaps[0], name))
		if err != nil {
			f.Fatal(err)
		}
		seed[i] = string(data)
	}
	f.Add(seed[0], seed[1], seed[2])
	f.Add(`{"format":2,"startDate":0,"time":0,"factor":1,"paused":false,"environment":{}}`, `<behavior/>`, `<cilia/>`)
	f.Add(`{"format":2,"time":-62135596800000,"factor":1000000000,"paused":true,"environment":{"outdoorMin":250,"outdoorMax":300},"stoppedChains":["x","x"],"derived":{"heater":{"x":1}},"identities":[{"chain":"c","id":"m","uuid":"","created":"2013-04-18T10:00:00Z"}]}`,
		`<behavior><create-zone id="z" leftX="0" topY="0" X-Length="5" Y-Length="5"/><create-device id="d" type="iCasa.Thermometer" positionX="1" positionY="1"/><fault-device deviceId="d"/></behavior>`,
		`<cilia><chain id="x"><mediators><mediator-instance id="m" type="Ghost"/></mediators></chain></cilia>`)
	f.Fuzz(func(t *testing.T, meta, home, chains string) {
		dir := t.TempDir()
		t.Cleanup(func() {
			if st, ok := live.LoadAndDelete(dir); ok {
				st.(*store.State).Kill()
			}
		})
		if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
			t.Fatal(err)
		}
		for i, text := range []string{meta, home, chains} {
			if err := os.WriteFile(filepath.Join(dir, snap, files[i]), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var mu sync.Mutex
		var logged bytes.Buffer
		s, err := tryServer(t, dir, sim.PhysicsContract, &logged, &mu)
		if err != nil {
			return
		}
		want := fullView(t, s)
		if err := s.st.Close(); err != nil {
			t.Fatalf("the snapshot of what was loaded: %v", err)
		}
		s2, err := tryServer(t, dir, sim.PhysicsContract, &logged, &mu)
		if err != nil {
			t.Fatalf("what was loaded, snapshot, does not load: %v", err)
		}
		defer s2.st.Close()
		if d := cmp.Diff(want, fullView(t, s2)); d != "" {
			t.Fatalf("loaded again (-first +second):\n%s", d)
		}
	})
}
