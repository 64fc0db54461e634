package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

// epoch is the mocked wall time every test starts at: 18/04/2013-10:00:00 UTC.
var epoch = time.Date(2013, 4, 18, 10, 0, 0, 0, time.UTC)

// fixture is a handler over a home whose wall clock is mocked.
type fixture struct {
	home    *sim.Home
	engine  *mediation.Engine
	clock   *clock.Mock
	handler *httpapi.Handler
	noSpec  bool // do not check against the OpenAPI document (other roots)
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	mock := clock.NewMock()
	mock.Set(epoch)
	home := sim.MustNew(sim.Config{WallClock: mock, Location: time.UTC})
	engine := mediation.NewEngine(mediation.Config{Clock: mock})
	h := httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine})
	tb.Cleanup(func() { h.Close(); engine.Close() })
	return &fixture{home: home, clock: mock, engine: engine, handler: h}
}

// do sends one request through the handler, with a JSON body.
func (f *fixture) do(tb testing.TB, method, path, body string) *httptest.ResponseRecorder {
	tb.Helper()
	return f.doType(tb, method, path, "application/json", body)
}

// doType sends one request with the given Content-Type.
func (f *fixture) doType(tb testing.TB, method, path, contentType, body string) *httptest.ResponseRecorder {
	tb.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := newRequest(method, path, r)
	if body != "" && contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, req)
	if !f.noSpec {
		checkAgainstSpec(tb, req, []byte(body), rec)
	}
	return rec
}

// mustDo sends a request that must answer 200.
func (f *fixture) mustDo(tb testing.TB, method, path, body string) *httptest.ResponseRecorder {
	tb.Helper()
	rec := f.do(tb, method, path, body)
	if rec.Code != http.StatusOK {
		tb.Fatalf("%s %s %s = %d %s, want 200", method, path, body, rec.Code, rec.Body)
	}
	return rec
}

// house creates the spec's zones: livingroom, kitchen and bathroom.
func (f *fixture) house(tb testing.TB) {
	tb.Helper()
	for _, z := range []string{
		`{"zoneId":"livingroom","leftX":410,"topY":28,"rightX":655,"bottomY":378}`,
		`{"zoneId":"kitchen","leftX":410,"topY":370,"rightX":655,"bottomY":580}`,
		`{"zoneId":"bathroom","leftX":55,"topY":20,"rightX":315,"bottomY":370}`,
	} {
		f.mustDo(tb, "POST", "/platform/zones/zone", z)
	}
}

// state dumps everything a client can read, to prove a failed call changed
// nothing.
func (f *fixture) state(tb testing.TB) string {
	tb.Helper()
	var b strings.Builder
	for _, p := range []string{"/platform/zones/zones", "/platform/devices/devices", "/platform/persons/persons", "/platform/clocks/clock/default", "/platform/environment"} {
		b.WriteString(f.mustDo(tb, "GET", p, "").Body.String())
	}
	return b.String()
}

// jsonDiff compares two JSON documents by value.
func jsonDiff(tb testing.TB, want, got string) string {
	tb.Helper()
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		tb.Fatalf("bad want JSON %q: %v", want, err)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return "response is not JSON: " + got
	}
	return cmp.Diff(w, g)
}

// errorCode returns the code of a JSON error body, failing on another shape.
func errorCode(tb testing.TB, body string) string {
	tb.Helper()
	var e struct {
		Error string `json:"error"`
		Code  string `json:"code"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == "" || e.Code == "" {
		tb.Fatalf("error body %q is not {\"error\",\"code\"}", body)
	}
	return e.Code
}

func httpapiHandler(f *fixture, root, origin string) http.Handler {
	return httpapi.NewHandler(httpapi.Config{Home: f.home, PlatformRoot: root, AllowOrigins: []string{origin}})
}

func serve(h http.Handler, method, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, newRequest(method, path, nil))
	return rec
}

// newRequest is httptest.NewRequest for Host localhost:8080, a host the
// server answers to (httptest's own, example.com, it refuses).
func newRequest(method, target string, body io.Reader) *http.Request {
	r := httptest.NewRequest(method, target, body)
	r.Host = "localhost:8080"
	return r
}
