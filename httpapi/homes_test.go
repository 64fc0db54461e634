package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/bridge"
	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

// homesFixture is a fixture whose handler also serves homes, each built
// as the server builds them: a home, an engine and a bridge between them.
type homesFixture struct {
	*fixture
	homes   *httpapi.Homes
	built   atomic.Int64
	stopped atomic.Int64
	mu      sync.Mutex
	parts   map[string]httpapi.HomeParts
}

func newHomesFixture(tb testing.TB, max int) *homesFixture {
	tb.Helper()
	return newHomesFixtureWith(tb, max, nil)
}

// newHomesFixtureWith is newHomesFixture with a Config that set changes.
func newHomesFixtureWith(tb testing.TB, max int, set func(*httpapi.Config)) *homesFixture {
	tb.Helper()
	f := &homesFixture{fixture: newFixture(tb), parts: map[string]httpapi.HomeParts{}}
	f.homes = httpapi.NewHomes(func(name string, spec httpapi.HomeSpec) (httpapi.HomeParts, error) {
		mock := clock.NewMock()
		mock.Set(epoch)
		home, err := sim.New(sim.Config{WallClock: mock, Location: time.UTC, Physics: sim.Physics(spec.Physics)})
		if err != nil {
			return httpapi.HomeParts{}, err
		}
		engine := mediation.NewEngine(mediation.Config{Clock: mock})
		b, err := bridge.New(home, engine)
		if err != nil {
			return httpapi.HomeParts{}, err
		}
		f.built.Add(1)
		p := httpapi.HomeParts{Home: home, Engine: engine, Stop: func() {
			b.Close()
			engine.Close()
			f.stopped.Add(1)
		}}
		f.mu.Lock()
		f.parts[name] = p
		f.mu.Unlock()
		return p, nil
	}, max)
	cfg := httpapi.Config{Home: f.home, Engine: f.engine, Homes: f.homes}
	if set != nil {
		set(&cfg)
	}
	f.handler = httpapi.NewHandler(cfg)
	tb.Cleanup(f.homes.Close)
	return f
}

func TestHomesRoutes(t *testing.T) {
	home := func(id, physics string) string {
		return fmt.Sprintf(`{"id":%q,"platform":"/homes/%s/platform","mediation":"/homes/%s/mediation","physics":%q}`, id, id, id, physics)
	}
	def := `{"id":"default","platform":"/platform","mediation":"/mediation","physics":"contract"}`
	tests := []struct {
		name   string
		given  []step
		req    step
		status int
		want   string
		empty  bool // the body is empty
		code   string
		msg    string // in the error's sentence
	}{
		{name: "only the default home", req: step{"GET", "/homes", ""}, status: 200, want: "[" + def + "]"},
		{name: "create", req: step{"POST", "/homes/lab", ""}, status: 200, want: home("lab", "contract")},
		{name: "create realistic", req: step{"POST", "/homes/lab", `{"physics":"realistic"}`}, status: 200, want: home("lab", "realistic")},
		{name: "list, by name after the default", given: []step{{"POST", "/homes/b", ""}, {"POST", "/homes/a", ""}},
			req: step{"GET", "/homes", ""}, status: 200, want: "[" + def + "," + home("a", "contract") + "," + home("b", "contract") + "]"},
		{name: "get", given: []step{{"POST", "/homes/lab", ""}}, req: step{"GET", "/homes/lab", ""}, status: 200, want: home("lab", "contract")},
		{name: "get default", req: step{"GET", "/homes/default", ""}, status: 200, want: def},
		{name: "get unknown", req: step{"GET", "/homes/nope", ""}, status: 404, code: "not_found"},
		{name: "twice", given: []step{{"POST", "/homes/lab", ""}}, req: step{"POST", "/homes/lab", ""}, status: 409, code: "conflict"},
		{name: "the default's name", req: step{"POST", "/homes/default", ""}, status: 409, code: "conflict"},
		{name: "bad name", req: step{"POST", "/homes/a.b", ""}, status: 400, code: "invalid"},
		{name: "name too long", req: step{"POST", "/homes/" + strings.Repeat("x", 65), ""}, status: 400, code: "invalid"},
		{name: "bad physics", req: step{"POST", "/homes/lab", `{"physics":"magic"}`}, status: 400, code: "invalid"},
		{name: "unknown field ignored", req: step{"POST", "/homes/lab", `{"colour":"red"}`}, status: 200, want: home("lab", "contract")},
		{name: "what a GET gave, sent back", req: step{"POST", "/homes/lab2", home("lab", "realistic")}, status: 200, want: home("lab2", "realistic")},
		{name: "physics not a string", req: step{"POST", "/homes/lab", `{"physics":1}`}, status: 400, code: "invalid"},
		{name: "not JSON", req: step{"POST", "/homes/lab", `{`}, status: 400, code: "invalid"},
		{name: "two objects", req: step{"POST", "/homes/lab", `{}{}`}, status: 400, code: "invalid"},
		{name: "a closing bracket after the object", req: step{"POST", "/homes/lab", `{"physics":"realistic"}]`}, status: 400, code: "invalid"},
		{name: "a closing brace after the object", req: step{"POST", "/homes/lab", "{}\n}"}, status: 400, code: "invalid"},
		{name: "delete", given: []step{{"POST", "/homes/lab", ""}}, req: step{"DELETE", "/homes/lab", ""}, status: 200, empty: true},
		{name: "delete unknown", req: step{"DELETE", "/homes/lab", ""}, status: 404, code: "not_found"},
		{name: "delete the default", req: step{"DELETE", "/homes/default", ""}, status: 409, code: "conflict",
			msg: "DELETE /platform/simulation empties it"},
		{name: "the default's paths under /homes", req: step{"GET", "/homes/default/platform/zones/zones", ""}, status: 404, code: "not_found",
			msg: `the default home is served at the contract's paths, not under /homes: "/platform/zones/zones"`},
		{name: "deleted home's paths", given: []step{{"POST", "/homes/lab", ""}, {"DELETE", "/homes/lab", ""}},
			req: step{"GET", "/homes/lab/platform/zones/zones", ""}, status: 404, code: "not_found"},
		{name: "unknown home's paths", req: step{"GET", "/homes/nope/platform/zones/zones", ""}, status: 404, code: "not_found"},
		{name: "a home's path", given: []step{{"POST", "/homes/lab", ""}}, req: step{"GET", "/homes/lab/platform/zones/zones", ""}, status: 200, want: `[]`},
		{name: "a home's unknown path", given: []step{{"POST", "/homes/lab", ""}}, req: step{"GET", "/homes/lab/platform/nope", ""}, status: 404, code: "not_found"},
		{name: "a home's mediation", given: []step{{"POST", "/homes/lab", ""}, {"POST", "/homes/lab/mediation/c", ""}},
			req: step{"GET", "/homes/lab/mediation/", ""}, status: 200, want: `{"chains":["c"]}`},
		{name: "wrong method", req: step{"PUT", "/homes/lab", ""}, status: 405, code: "method_not_allowed"},
		{name: "the most homes", given: []step{{"POST", "/homes/a", ""}, {"POST", "/homes/b", ""}, {"POST", "/homes/c", ""}},
			req: step{"POST", "/homes/d", ""}, status: 503, code: "busy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newHomesFixture(t, 3)
			for _, g := range tt.given {
				f.mustDo(t, g.method, g.path, g.body)
			}
			rec := f.do(t, tt.req.method, tt.req.path, tt.req.body)
			if rec.Code != tt.status {
				t.Fatalf("%s %s = %d %s, want %d", tt.req.method, tt.req.path, rec.Code, rec.Body, tt.status)
			}
			if tt.empty && rec.Body.Len() != 0 {
				t.Errorf("body = %q, want none", rec.Body)
			}
			if tt.want != "" {
				if d := jsonDiff(t, tt.want, rec.Body.String()); d != "" {
					t.Errorf("body (-want +got):\n%s", d)
				}
			}
			if tt.code != "" {
				if got := errorCode(t, rec.Body.String()); got != tt.code {
					t.Errorf("code = %q, want %q", got, tt.code)
				}
			}
			if tt.msg != "" {
				var e struct{ Error string }
				if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || !strings.Contains(e.Error, tt.msg) {
					t.Errorf("error = %q, want it to say %q", rec.Body, tt.msg)
				}
			}
		})
	}
}

// TestHomesDoNotShare creates 100 homes at once and gives each the same
// zone, device, person, clock change and chain with different values; each
// home then holds its own and nothing of the others', and the default home
// nothing at all. Deleting them stops everything each ran.
func TestHomesDoNotShare(t *testing.T) {
	const n = 100
	f := newHomesFixture(t, n)
	name := func(i int) string { return fmt.Sprintf("h%03d", i) }
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			pre := "/homes/" + name(i)
			f.mustDo(t, "POST", "/homes/"+name(i), "")
			for _, s := range []step{
				{"POST", pre + "/platform/zones/zone", fmt.Sprintf(`{"zoneId":"kitchen","leftX":%d,"topY":0,"rightX":%d,"bottomY":100}`, i, i+100)},
				{"POST", pre + "/platform/devices/device", fmt.Sprintf(`{"deviceId":"lamp-%d","type":"iCasa.BinaryLight"}`, i)},
				{"POST", pre + "/platform/persons/person", fmt.Sprintf(`{"personId":"p%d","type":"Grandfather"}`, i)},
				{"PUT", pre + "/platform/clocks/clock/default", fmt.Sprintf(`{"factor":%d}`, i+1)},
				{"POST", pre + "/mediation/c" + name(i), ""},
				{"POST", pre + "/mediation/c" + name(i) + "/adapter/rest-in/in", ""},
				{"POST", pre + "/mediation/c" + name(i) + "/adapter/rest-out/out", ""},
				{"POST", pre + "/mediation/c" + name(i) + "/bindings", `{"from":"in:out","to":"out:in"}`},
				{"POST", pre + "/mediation/runtime/c" + name(i) + "/components/in/data", fmt.Sprintf(`{"home":%d}`, i)},
			} {
				f.mustDo(t, s.method, s.path, s.body)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for i := range n {
		pre := "/homes/" + name(i)
		var zones []struct {
			ID    string `json:"id"`
			LeftX int    `json:"leftX"`
		}
		decode(t, f.mustDo(t, "GET", pre+"/platform/zones/zones", ""), &zones)
		if d := cmp.Diff([]struct {
			ID    string `json:"id"`
			LeftX int    `json:"leftX"`
		}{{"kitchen", i}}, zones); d != "" {
			t.Errorf("%s zones (-want +got):\n%s", name(i), d)
		}
		var devices, persons []struct {
			ID string `json:"id"`
		}
		decode(t, f.mustDo(t, "GET", pre+"/platform/devices/devices", ""), &devices)
		decode(t, f.mustDo(t, "GET", pre+"/platform/persons/persons", ""), &persons)
		if len(devices) != 1 || devices[0].ID != fmt.Sprintf("lamp-%d", i) || len(persons) != 1 || persons[0].ID != fmt.Sprintf("p%d", i) {
			t.Errorf("%s holds devices %v and persons %v", name(i), devices, persons)
		}
		var clk struct {
			Factor float64 `json:"factor"`
		}
		decode(t, f.mustDo(t, "GET", pre+"/platform/clocks/clock/default", ""), &clk)
		if clk.Factor != float64(i+1) {
			t.Errorf("%s clock factor = %v, want %d", name(i), clk.Factor, i+1)
		}
		got := f.mustDo(t, "GET", pre+"/mediation/", "").Body.String()
		if d := jsonDiff(t, fmt.Sprintf(`{"chains":["c%s"]}`, name(i)), got); d != "" {
			t.Errorf("%s chains (-want +got):\n%s", name(i), d)
		}
		got = f.mustDo(t, "GET", pre+"/mediation/runtime/c"+name(i)+"/components/out/data", "").Body.String()
		if d := jsonDiff(t, fmt.Sprintf(`{"messages":[{"content":{"home":%d},"properties":{}}]}`, i), got); d != "" {
			t.Errorf("%s messages (-want +got):\n%s", name(i), d)
		}
	}
	// The default home saw none of it.
	for _, p := range []string{"/platform/zones/zones", "/platform/devices/devices", "/platform/persons/persons"} {
		if got := f.mustDo(t, "GET", p, "").Body.String(); strings.TrimSpace(got) != "[]" {
			t.Errorf("default home %s = %s, want []", p, got)
		}
	}
	if got := f.mustDo(t, "GET", "/mediation/", "").Body.String(); strings.TrimSpace(got) != `{"chains":[]}` {
		t.Errorf("default home's chains = %s", got)
	}
	var list []httpapi.HomeInfo
	decode(t, f.mustDo(t, "GET", "/homes", ""), &list)
	if len(list) != n+1 {
		t.Fatalf("GET /homes lists %d homes, want %d", len(list), n+1)
	}

	for i := range n {
		wg.Go(func() { f.mustDo(t, "DELETE", "/homes/"+name(i), "") })
	}
	wg.Wait()
	if built, stopped := f.built.Load(), f.stopped.Load(); built != n || stopped != n {
		t.Errorf("built %d homes and stopped %d, want %d and %d", built, stopped, n, n)
	}
	if f.homes.Len() != 0 {
		t.Errorf("%d homes left", f.homes.Len())
	}
	// What a deleted home ran is closed: its engine takes no chain.
	if _, err := f.parts[name(0)].Engine.CreateChain("again"); err == nil {
		t.Errorf("a deleted home's engine still creates chains")
	}
}

// TestHomePages checks that a home's house plan and document follow its
// prefix.
func TestHomePages(t *testing.T) {
	f := newHomesFixture(t, 0)
	f.mustDo(t, "POST", "/homes/lab", "")
	page := serve(f.handler, "GET", "/homes/lab/simulator")
	if page.Code != http.StatusOK || !strings.Contains(page.Body.String(), `content="platform"`) {
		t.Errorf("GET /homes/lab/simulator = %d, want the page with the relative root platform:\n%.300s", page.Code, page.Body)
	}
	if rec := serve(f.handler, "GET", "/homes/lab/"); rec.Code != http.StatusFound || rec.Header().Get("Location") != "/homes/lab/simulator" {
		t.Errorf("GET /homes/lab/ = %d to %q", rec.Code, rec.Header().Get("Location"))
	}
	doc := serve(f.handler, "GET", "/homes/lab/openapi.json").Body.String()
	if !strings.Contains(doc, `"/homes/lab/platform/zones/zones"`) || strings.Contains(doc, `"/homes"`) {
		t.Errorf("a home's document does not follow its prefix")
	}
	if rec := serve(f.handler, "GET", "/homes/lab/healthz"); rec.Code != http.StatusOK {
		t.Errorf("GET /homes/lab/healthz = %d", rec.Code)
	}
}

func decode(tb testing.TB, rec interface{ Result() *http.Response }, v any) {
	tb.Helper()
	if err := json.NewDecoder(rec.Result().Body).Decode(v); err != nil {
		tb.Fatalf("decode: %v", err)
	}
}

// TestHomesUnderTheServersToken: with a token, a home's house plan is
// served without it, like the server's own, and its event stream takes
// ?access_token; the rest of a home needs the token.
func TestHomesUnderTheServersToken(t *testing.T) {
	f := newHomesFixtureWith(t, 0, func(c *httpapi.Config) { c.Token = "sekret" })
	with := func(method, path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		req.Host = "localhost"
		req.Header.Set("Authorization", "Bearer sekret")
		rec := httptest.NewRecorder()
		f.handler.ServeHTTP(rec, req)
		return rec
	}
	if rec := with("POST", "/homes/lab"); rec.Code != 200 {
		t.Fatal(rec.Body)
	}
	for _, c := range []struct {
		path string
		want int
	}{
		{"/simulator", 200},
		{"/homes/lab/simulator", 200},
		{"/homes/lab/simulator/app.js", 200},
		{"/homes/lab/healthz", 403},
		{"/homes/lab/platform/zones/zones", 403},
		{"/homes/lab/mediation/", 403},
		{"/homes", 403},
		{"/homes/lab", 403},
	} {
		if rec := serve(f.handler, "GET", c.path); rec.Code != c.want {
			t.Errorf("GET %s without the token = %d, want %d", c.path, rec.Code, c.want)
		}
	}
	// Without the token, a home that does not exist answers as one that
	// does, so that names cannot be probed: its healthz, house plan and
	// root were 403 for one, 200 or 302 for the other, and preflights too.
	type answer struct {
		Code    int
		Headers http.Header
		Body    string
	}
	answerOf := func(method, path string, h map[string]string) answer {
		req := newRequest(method, path, nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		f.handler.ServeHTTP(rec, req)
		hdr := rec.Header().Clone()
		hdr.Del("Date")
		return answer{rec.Code, hdr, strings.ReplaceAll(rec.Body.String(), "nowhere", "lab")}
	}
	preflight := map[string]string{"Origin": "http://localhost:3000", "Access-Control-Request-Method": "PUT"}
	for _, c := range []struct {
		method, path string
		headers      map[string]string
	}{
		{"GET", "/healthz", nil},
		{"GET", "/", nil},
		{"GET", "/simulator", nil},
		{"HEAD", "/simulator/", nil},
		{"GET", "/simulator/app.js", nil},
		{"GET", "/simulator/nope.js", nil},
		{"GET", "/platform/zones/zones", nil},
		{"POST", "/platform/zones/zone", nil},
		{"GET", "/platform/events", nil},
		{"OPTIONS", "/platform/zones/zones", preflight},
		{"OPTIONS", "/platform/nope", preflight},
		{"OPTIONS", "/platform/zones/zones", nil},
	} {
		lab, nowhere := answerOf(c.method, "/homes/lab"+c.path, c.headers), answerOf(c.method, "/homes/nowhere"+c.path, c.headers)
		if nowhere.Headers.Get("Location") != "" {
			nowhere.Headers.Set("Location", strings.ReplaceAll(nowhere.Headers.Get("Location"), "nowhere", "lab"))
		}
		if diff := cmp.Diff(lab, nowhere); diff != "" {
			t.Errorf("%s %s without the token: a home that does not exist answers otherwise (-lab +nowhere):\n%s", c.method, c.path, diff)
		}
	}
	if rec := with("GET", "/homes/lab/healthz"); rec.Code != 200 {
		t.Errorf("GET a home's healthz with the token = %d, want 200", rec.Code)
	}
	// The home's document says so: its healthz needs the token, its
	// house plan does not.
	var doc struct {
		Paths map[string]map[string]struct{ Security []map[string][]string }
	}
	if err := json.Unmarshal(with("GET", "/homes/lab/openapi.json").Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for path, open := range map[string]bool{"/homes/lab/healthz": false, "/homes/lab/simulator": true} {
		sec := doc.Paths[path]["get"].Security
		if got := len(sec) == 1 && len(sec[0]) == 0; got != open {
			t.Errorf("the home's document: GET %s needs no token = %v, want %v", path, got, open)
		}
	}
	if rec := with("GET", "/homes/lab/platform/zones/zones"); rec.Code != 200 {
		t.Errorf("GET a home's zones with the token = %d", rec.Code)
	}
	if rec := with("GET", "/homes/nowhere/healthz"); rec.Code != 404 {
		t.Errorf("GET a home that does not exist, with the token = %d, want 404", rec.Code)
	}
	for _, p := range []string{"/homes/lab/platform/events", "/homes/lab/events"} {
		ctx, cancel := context.WithCancel(context.Background())
		req := httptest.NewRequest("GET", p+"?access_token=sekret", nil).WithContext(ctx)
		req.Host = "localhost"
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() { f.handler.ServeHTTP(rec, req); close(done) }()
		cancel()
		<-done
		if rec.Code != 200 {
			t.Errorf("GET %s?access_token = %d, want the stream", p, rec.Code)
		}
		if rec := serve(f.handler, "GET", p+"?access_token=wrong"); rec.Code != 403 {
			t.Errorf("GET %s with a wrong access_token = %d, want 403", p, rec.Code)
		}
	}
}

// TestHomesShareTheServersBounds: the event streams and the scripts of
// the homes count towards the server's bounds.
func TestHomesShareTheServersBounds(t *testing.T) {
	script := func(minutes int) string {
		return fmt.Sprintf(`<behavior startdate="15/01/2024-06:00:00"><delay value="%d" unit="m"/></behavior>`, minutes)
	}
	quota := 3 * len(script(10))
	f := newHomesFixtureWith(t, 0, func(c *httpapi.Config) { c.MaxEventClients = 2; c.ScriptsQuota = quota })
	f.mustDo(t, "POST", "/homes/a", "")
	f.mustDo(t, "POST", "/homes/b", "")

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, p := range []string{"/platform/events", "/homes/a/platform/events"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest("GET", p, nil).WithContext(ctx)
			req.Host = "localhost"
			f.handler.ServeHTTP(httptest.NewRecorder(), req)
		}()
	}
	for f.handler.EventStreams() < 2 {
		runtime.Gosched()
	}
	ended, end := context.WithCancel(context.Background())
	end() // the third request ends at once if it is let in
	third := httptest.NewRequest("GET", "/homes/b/platform/events", nil).WithContext(ended)
	third.Host = "localhost"
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, third)
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("a third stream, in another home = %d, want 503", rec.Code)
	}
	cancel()
	wg.Wait()

	upload := func(prefix, id string) int {
		req := httptest.NewRequest("POST", prefix+"/platform/scriptPlayer/script?id="+id, strings.NewReader(script(10)))
		req.Host = "localhost"
		req.Header.Set("Content-Type", "application/xml")
		rec := httptest.NewRecorder()
		f.handler.ServeHTTP(rec, req)
		return rec.Code
	}
	got := []int{upload("", "x.bhv"), upload("/homes/a", "x.bhv"), upload("/homes/b", "x.bhv"), upload("/homes/b", "y.bhv")}
	if want := []int{200, 200, 200, 503}; !cmp.Equal(got, want) {
		t.Errorf("uploads in three homes under a quota of three scripts = %v, want %v", got, want)
	}
}

// TestHomeServedWhileBeingCreated sends requests to a home while it is
// being created: each is 404 (not there yet) or 200, and, under -race, the
// handler and parts the creation sets are not read without its lock.
func TestHomeServedWhileBeingCreated(t *testing.T) {
	f := newHomesFixture(t, 0)
	for i := range 40 {
		name := fmt.Sprintf("h%d", i)
		start := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			<-start
			if rec := serve(f.handler, "POST", "/homes/"+name); rec.Code != http.StatusOK {
				t.Errorf("POST /homes/%s = %d %s", name, rec.Code, rec.Body)
			}
		})
		for range 2 {
			wg.Go(func() {
				<-start
				for range 300 {
					rec := serve(f.handler, "GET", "/homes/"+name+"/platform/zones/zones")
					if rec.Code == http.StatusOK {
						return
					}
					if rec.Code != http.StatusNotFound {
						t.Errorf("GET during creation = %d %s, want 404 or 200", rec.Code, rec.Body)
						return
					}
				}
			})
		}
		close(start)
		wg.Wait()
	}
}

// TestHomesCloseWaits: every call of Close, the second one too (the server
// calls it on shutdown and again on return), returns only once the homes
// are stopped, one being created or deleted meanwhile included.
func TestHomesCloseWaits(t *testing.T) {
	for _, tc := range []struct {
		name, method string // the request under way
		want         int    // its answer once Close ran
	}{
		{"a home being created", "POST", http.StatusServiceUnavailable},
		{"a home being deleted", "DELETE", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release, busy := make(chan struct{}), make(chan struct{})
				block := func() { close(busy); <-release }
				homes := httpapi.NewHomes(func(name string, spec httpapi.HomeSpec) (httpapi.HomeParts, error) {
					if name == "x" && tc.method == "POST" {
						block()
					}
					return httpapi.HomeParts{Home: sim.MustNew(sim.Config{}), Engine: mediation.NewEngine(mediation.Config{}),
						Stop: func() {
							if name == "x" && tc.method == "DELETE" {
								block()
							}
						}}, nil
				}, 0)
				h := httpapi.NewHandler(httpapi.Config{Home: sim.MustNew(sim.Config{}), Homes: homes})
				names := []string{"kept"}
				if tc.method == "DELETE" {
					names = append(names, "x")
				}
				for _, name := range names {
					if rec := serve(h, "POST", "/homes/"+name); rec.Code != http.StatusOK {
						t.Fatalf("POST /homes/%s = %d %s", name, rec.Code, rec.Body)
					}
				}
				answer := make(chan int)
				go func() { answer <- serve(h, tc.method, "/homes/x").Code }()
				<-busy
				first, second := make(chan struct{}), make(chan struct{})
				go func() { homes.Close(); close(first) }()
				synctest.Wait() // the first Close has stopped kept and waits
				go func() { homes.Close(); close(second) }()
				synctest.Wait()
				select {
				case <-first:
					t.Error("the first Close returned while a home was under way")
				case <-second:
					t.Error("the second Close returned while a home was under way")
				default:
				}
				close(release)
				<-first
				<-second
				if code := <-answer; code != tc.want {
					t.Errorf("%s /homes/x while the server closes = %d, want %d", tc.method, code, tc.want)
				}
				// A home asked for once the server closes: unavailable,
				// not a conflict with something of the client's.
				if rec := serve(h, "POST", "/homes/late"); rec.Code != http.StatusServiceUnavailable {
					t.Errorf("POST /homes/late once the server closed = %d %s, want 503", rec.Code, rec.Body)
				}
			})
		})
	}
}

// TestDefaultHomesPlan: the house plan of the home GET /homes lists as
// "default" is the server's own, at /simulator: its page under /homes
// looked for a home of that name and said there was none.
func TestDefaultHomesPlan(t *testing.T) {
	f := newHomesFixture(t, 0)
	for path, want := range map[string]string{
		"/homes/default/":                 "/simulator",
		"/homes/default/simulator":        "/simulator",
		"/homes/default/simulator/app.js": "/simulator/app.js",
		"/homes/default/simulator/?a=b":   "/simulator/",
	} {
		rec := serve(f.handler, "GET", path)
		if rec.Code != http.StatusFound || rec.Header().Get("Location") != want {
			t.Errorf("GET %s = %d to %q, want 302 to %q", path, rec.Code, rec.Header().Get("Location"), want)
		}
	}
}

// An empty home of /homes holds little: its routes are on the router the
// server's homes share (compiled for each, they took 290 KB a home), its
// OpenAPI document is made at its first request.
func TestHomeHeap(t *testing.T) {
	const n = 40
	f := newHomesFixtureWith(t, 1<<20, nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		if rec := serve(f.handler, "POST", fmt.Sprintf("/homes/h%d", i)); rec.Code != 200 {
			t.Fatal(rec.Body)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("%d bytes per home", per)
	if per > 150<<10 {
		t.Errorf("an empty home holds %d bytes, want at most 150 KiB", per)
	}
	if rec := serve(f.handler, "GET", "/homes/h7/platform/zones/zones"); rec.Code != 200 || strings.TrimSpace(rec.Body.String()) != "[]" {
		t.Errorf("GET of a home's zones: %d %s", rec.Code, rec.Body)
	}
}

// TestHomeKeepsItsNameWhileItStops: a home whose DELETE has not answered
// yet (what it runs is still stopping) serves nothing more but keeps its
// name and its place among -max-homes: a home of the same name made then
// would run beside it, on the same NATS subjects, and the bound could be
// passed. Once the DELETE answered, the name is free.
func TestHomeKeepsItsNameWhileItStops(t *testing.T) {
	release := make(chan struct{})
	var built atomic.Int64
	homes := httpapi.NewHomes(func(name string, spec httpapi.HomeSpec) (httpapi.HomeParts, error) {
		engine := mediation.NewEngine(mediation.Config{})
		first := built.Add(1) == 1
		return httpapi.HomeParts{Home: sim.MustNew(sim.Config{WallClock: clock.NewMock()}), Engine: engine, Stop: func() {
			if first { // the home deleted below stops slowly; another would not
				<-release
			}
			engine.Close()
		}}, nil
	}, 1)
	defer homes.Close()
	h := httpapi.NewHandler(httpapi.Config{Home: sim.MustNew(sim.Config{WallClock: clock.NewMock()}), Homes: homes})
	defer h.Close()
	call := func(method, path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, newRequest(method, path, nil))
		return rec.Code
	}
	if got := call("POST", "/homes/lab"); got != http.StatusOK {
		t.Fatalf("create: %d", got)
	}
	deleted := make(chan int)
	go func() { deleted <- call("DELETE", "/homes/lab") }()
	for call("GET", "/homes/lab/platform/zones/zones") != http.StatusNotFound {
		runtime.Gosched() // until the DELETE took it
	}
	got := []int{call("POST", "/homes/lab"), call("POST", "/homes/other"), call("GET", "/homes/lab"), call("DELETE", "/homes/lab")}
	close(release)
	got = append(got, <-deleted, call("POST", "/homes/lab"))
	want := []int{http.StatusConflict, http.StatusServiceUnavailable, http.StatusNotFound, http.StatusNotFound, http.StatusOK, http.StatusOK}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("create same, create other (max 1), get, delete again while stopping; the delete; create after (-want +got):\n%s", diff)
	}
}

// TestHomeRoutesVaryOnce: a home's response passes the server's guard and
// the home's own, and says Vary: Origin once, not twice.
func TestHomeRoutesVaryOnce(t *testing.T) {
	f := newHomesFixture(t, 0)
	for _, req := range []step{{"POST", "/homes/lab", ""}, {"GET", "/homes/lab/platform/zones/zones", ""}, {"GET", "/platform/zones/zones", ""}} {
		rec := httptest.NewRecorder()
		f.handler.ServeHTTP(rec, newRequest(req.method, req.path, strings.NewReader(req.body)))
		if diff := cmp.Diff([]string{"Origin"}, rec.Header()["Vary"]); diff != "" {
			t.Errorf("%s %s: Vary (-want +got):\n%s", req.method, req.path, diff)
		}
	}
}

// TestHomeDeleteLetsRequestsFinish: a DELETE of a home lets the requests
// it serves finish against the home still running before it stops the
// home's parts; before, a request that had found the home could meet its
// engine closed (409) half-way.
func TestHomeDeleteLetsRequestsFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		entered, release := make(chan struct{}), make(chan struct{})
		h, stopped := labHome(t, func(engine *mediation.Engine) error {
			err := engine.Registry().Register(mediation.Type{Name: "slow", Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"},
				New: func(map[string]any, mediation.Env) (any, error) {
					return mediation.ProcessorFunc(func(_ string, m mediation.Message, out mediation.Emitter) error {
						close(entered)
						<-release
						out.Emit("out", m)
						return nil
					}), nil
				}})
			if err != nil {
				return err
			}
			ch, _ := engine.CreateChain("c")
			ch.AddAdapter("rest-in", "in", nil)
			ch.AddMediator("slow", "slow", nil)
			ch.AddAdapter("rest-out", "out", nil)
			ch.Bind("in:out", "slow:in", "", nil)
			ch.Bind("slow:out", "out:in", "", nil)
			return ch.Start()
		})
		sent, deleted := make(chan *httptest.ResponseRecorder), make(chan int)
		go func() { sent <- serve(h, "POST", "/homes/lab/mediation/runtime/c/components/in/data") }()
		<-entered
		go func() { deleted <- serve(h, "DELETE", "/homes/lab").Code }()
		synctest.Wait() // the DELETE waits for the send
		if stopped.Load() {
			t.Error("the home's parts were stopped while a request was being served")
		}
		if got := serve(h, "GET", "/homes/lab/platform/zones/zones").Code; got != http.StatusNotFound {
			t.Errorf("a request after the DELETE began: %d, want 404", got)
		}
		close(release)
		if rec := <-sent; rec.Code != http.StatusOK {
			t.Errorf("the send under way as the home was deleted: %d %s, want 200", rec.Code, rec.Body)
		}
		if got := <-deleted; got != http.StatusOK {
			t.Errorf("DELETE: %d", got)
		}
		if !stopped.Load() {
			t.Error("the DELETE answered before the home's parts stopped")
		}
	})
}

// stalledWriter is the ResponseWriter of a client that stopped reading:
// its first Write waits until unstall is closed.
type stalledWriter struct {
	*httptest.ResponseRecorder
	writing chan struct{} // closed at the first Write
	unstall chan struct{}
	once    sync.Once
}

func (w *stalledWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.writing) })
	<-w.unstall
	return w.ResponseRecorder.Write(p)
}

// TestHomeDeleteDoesNotWaitForAStalledClient: a DELETE of a home waits
// for the requests under way for a while only: one whose client stopped
// reading its answer (a big device list, say: no write deadline ends it)
// would otherwise hold the DELETE, and the server's shutdown, forever.
func TestHomeDeleteDoesNotWaitForAStalledClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, stopped := labHome(t, nil)
		w := &stalledWriter{ResponseRecorder: httptest.NewRecorder(), writing: make(chan struct{}), unstall: make(chan struct{})}
		defer close(w.unstall) // the client reads at last, once the test is done
		go h.ServeHTTP(w, newRequest("GET", "/homes/lab/platform/zones/zones", nil))
		<-w.writing
		if got := serve(h, "DELETE", "/homes/lab").Code; got != http.StatusOK {
			t.Errorf("DELETE: %d", got)
		}
		if !stopped.Load() {
			t.Error("the DELETE answered before the home's parts stopped")
		}
	})
}

// TestNewHomesNilFactory checks that NewHomes refuses a nil factory when it
// is called, as it documents, rather than take it and answer every POST
// /homes/{home} with a 500 from the nil call, far from the mistake.
func TestNewHomesNilFactory(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "nil factory") {
			t.Errorf("NewHomes(nil, 0): recovered %v, want a panic about a nil factory", r)
		}
	}()
	httpapi.NewHomes(nil, 0)
}

// labHome serves home "lab" of /homes, its engine set up by setup (when
// not nil), and reports whether the home's parts were stopped. The homes
// and the handler are closed at the end of the test.
func labHome(t *testing.T, setup func(*mediation.Engine) error) (*httpapi.Handler, *atomic.Bool) {
	t.Helper()
	stopped := new(atomic.Bool)
	homes := httpapi.NewHomes(func(name string, spec httpapi.HomeSpec) (httpapi.HomeParts, error) {
		engine := mediation.NewEngine(mediation.Config{})
		if setup != nil {
			if err := setup(engine); err != nil {
				engine.Close()
				return httpapi.HomeParts{}, err
			}
		}
		return httpapi.HomeParts{Home: sim.MustNew(sim.Config{WallClock: clock.NewMock()}), Engine: engine, Stop: func() {
			stopped.Store(true)
			engine.Close()
		}}, nil
	}, 0)
	h := httpapi.NewHandler(httpapi.Config{Home: sim.MustNew(sim.Config{WallClock: clock.NewMock()}), Homes: homes})
	t.Cleanup(func() {
		homes.Close()
		h.Close()
	})
	if rec := serve(h, "POST", "/homes/lab"); rec.Code != http.StatusOK {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	return h, stopped
}
