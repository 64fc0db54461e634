package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pervasim/pervasim/httpapi"
)

// guardRequest is one request of the guard's tests.
type guardRequest struct {
	method, path, host, origin, contentType, auth, body string
	preflight                                           string // Access-Control-Request-Method
	fetchSite                                           string // Sec-Fetch-Site
}

func (g guardRequest) send(h http.Handler) *httptest.ResponseRecorder {
	var body *strings.Reader
	if g.body != "" {
		body = strings.NewReader(g.body)
	}
	var r *http.Request
	if body != nil {
		r = httptest.NewRequest(g.method, g.path, body)
	} else {
		r = httptest.NewRequest(g.method, g.path, nil)
	}
	r.Host = g.host
	if r.Host == "" {
		r.Host = "127.0.0.1:8080"
	}
	for k, v := range map[string]string{"Origin": g.origin, "Content-Type": g.contentType, "Authorization": g.auth,
		"Access-Control-Request-Method": g.preflight, "Sec-Fetch-Site": g.fetchSite} {
		if v != "" {
			r.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

const zoneBody = `{"id":"pwned","leftX":0,"topY":0,"rightX":1,"bottomY":1}`

// TestForeignPagesCannotWrite replays what a web page of another origin can
// make a browser send without a preflight (text/plain, form and multipart
// bodies), and the preflights a page would need for the rest: every write
// is 403 forbidden and changes nothing; no response lets the page read.
func TestForeignPagesCannotWrite(t *testing.T) {
	tests := []struct {
		name    string
		origins []string
		req     guardRequest
	}{
		{"text/plain zone", nil, guardRequest{method: "POST", path: "/platform/zones/zone", origin: "https://evil.example", contentType: "text/plain", body: zoneBody}},
		{"form zone", nil, guardRequest{method: "POST", path: "/platform/zones/zone", origin: "https://evil.example", contentType: "application/x-www-form-urlencoded", body: "a=b"}},
		{"multipart zone", nil, guardRequest{method: "POST", path: "/platform/zones/zone", origin: "http://evil.example:8080", contentType: "multipart/form-data; boundary=x", body: "--x--"}},
		{"text/plain chain", nil, guardRequest{method: "POST", path: "/mediation/c", origin: "https://evil.example", contentType: "text/plain"}},
		{"text/plain script upload", nil, guardRequest{method: "POST", path: "/platform/scriptPlayer/script", origin: "https://evil.example", contentType: "text/plain",
			body: `{"id":"x.bhv","content":"<behavior/>"}`}},
		{"delete", nil, guardRequest{method: "DELETE", path: "/platform/simulation", origin: "https://evil.example"}},
		{"a null origin (sandboxed frame, file:)", nil, guardRequest{method: "POST", path: "/platform/zones/zone", origin: "null", contentType: "text/plain", body: zoneBody}},
		{"another origin than the one allowed", []string{"https://good.example"}, guardRequest{method: "POST", path: "/platform/zones/zone", origin: "https://evil.example", contentType: "text/plain", body: zoneBody}},
		{"the allowed origin's name over another scheme", []string{"https://good.example"}, guardRequest{method: "POST", path: "/platform/zones/zone", origin: "http://good.example", contentType: "text/plain", body: zoneBody}},
		{"a look-alike of localhost", nil, guardRequest{method: "POST", path: "/platform/zones/zone", origin: "http://localhost.evil.example", contentType: "text/plain", body: zoneBody}},
		{"PUT", nil, guardRequest{method: "PUT", path: "/platform/clocks/clock/default", origin: "https://evil.example", body: `{"factor":1000}`}},
		{"cross-site without an Origin", nil, guardRequest{method: "POST", path: "/platform/zones/zone", fetchSite: "cross-site", contentType: "text/plain", body: zoneBody}},
		{"cross-site form without an Origin", []string{"https://good.example"}, guardRequest{method: "DELETE", path: "/platform/simulation", fetchSite: "cross-site"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			h := httpapi.NewHandler(httpapi.Config{Home: f.home, Engine: f.engine, AllowOrigins: tt.origins})
			defer h.Close()
			before := f.state(t)
			chains := f.mustDo(t, "GET", "/mediation", "").Body.String()
			rec := tt.req.send(h)
			if rec.Code != http.StatusForbidden || errorCode(t, rec.Body.String()) != "forbidden" {
				t.Fatalf("%s %s from %s = %d %s, want 403 forbidden", tt.req.method, tt.req.path, tt.req.origin, rec.Code, rec.Body)
			}
			if got := rec.Header().Get("Access-Control-Allow-Origin"); got != "" {
				t.Errorf("Access-Control-Allow-Origin = %q, want none", got)
			}
			if f.state(t) != before || f.mustDo(t, "GET", "/mediation", "").Body.String() != chains {
				t.Errorf("the refused request changed the state")
			}
			if len(f.home.Scripts()) != 0 {
				t.Errorf("the refused upload added a script")
			}
		})
	}
}

// TestForeignPagesCannotRead checks that reads and preflights from another
// origin carry no Access-Control-Allow-Origin: the browser keeps the answer
// from the page, and a preflighted write never follows.
func TestForeignPagesCannotRead(t *testing.T) {
	f := newFixture(t)
	for _, req := range []guardRequest{
		{method: "GET", path: "/platform/zones/zones", origin: "https://evil.example"},
		{method: "OPTIONS", path: "/platform/zones/zone/k", origin: "https://evil.example"},
	} {
		rec := req.send(f.handler)
		if rec.Code != http.StatusOK || rec.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s %s from %s = %d, Access-Control-Allow-Origin %q; want 200 without it",
				req.method, req.path, req.origin, rec.Code, rec.Header().Get("Access-Control-Allow-Origin"))
		}
	}
}

// TestAllowedOrigins checks who may write from a browser, and that the
// answer names the origin for the page to read it.
func TestAllowedOrigins(t *testing.T) {
	tests := []struct {
		name     string
		origins  []string
		host     string
		origin   string
		wantACAO string
		site     string // Sec-Fetch-Site
	}{
		{"localhost, any port", nil, "", "http://localhost:5173", "http://localhost:5173", ""},
		{"127.0.0.1 over https", nil, "", "https://127.0.0.1:8443", "https://127.0.0.1:8443", ""},
		{"[::1]", nil, "", "http://[::1]:3000", "http://[::1]:3000", ""},
		{"the server's own origin", nil, "192.168.1.20:8080", "http://192.168.1.20:8080", "http://192.168.1.20:8080", ""},
		{"a listed origin", []string{"https://good.example", "http://other.example:81"}, "", "https://good.example", "https://good.example", ""},
		{"a listed origin with its port", []string{"https://good.example", "http://other.example:81"}, "", "http://other.example:81", "http://other.example:81", ""},
		{"every origin, explicitly", []string{"*"}, "", "https://anyone.example", "*", ""},
		{"no Origin: not a browser", nil, "", "", "", ""},
		{"no Origin, same origin", nil, "", "", "", "same-origin"},
		{"no Origin, cross-site, every origin allowed", []string{"*"}, "", "", "", "cross-site"},
		{"cross-site from an allowed origin", []string{"https://good.example"}, "", "https://good.example", "https://good.example", "cross-site"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			h := httpapi.NewHandler(httpapi.Config{Home: f.home, AllowOrigins: tt.origins})
			defer h.Close()
			rec := guardRequest{method: "POST", path: "/platform/zones/zone", host: tt.host, origin: tt.origin, contentType: "text/plain", body: zoneBody, fetchSite: tt.site}.send(h)
			if rec.Code != http.StatusOK {
				t.Fatalf("POST from %q = %d %s, want 200", tt.origin, rec.Code, rec.Body)
			}
			if got := rec.Header().Get("Access-Control-Allow-Origin"); got != tt.wantACAO {
				t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, tt.wantACAO)
			}
		})
	}
}

// TestHostRebinding checks that a request naming the server by a host
// name it does not know is refused, reads included: a page of
// attacker.example whose DNS now points at 127.0.0.1 reads nothing.
func TestHostRebinding(t *testing.T) {
	tests := []struct {
		host  string
		allow []string
		want  int
	}{
		{"attacker.example", nil, 403},
		{"attacker.example:8080", nil, 403},
		{"", nil, 403},
		{"localhost.attacker.example", nil, 403},
		{"127.0.0.1:8080", nil, 200},
		{"[::1]:8080", nil, 200},
		{"10.0.0.7", nil, 200},
		{"localhost:8080", nil, 200},
		{"LOCALHOST.", nil, 200},
		{"app.localhost:8080", nil, 403}, // only the names the contract lists, and -allow-host's
		{"app.localhost:8080", []string{"app.localhost"}, 200},
		{"pervasim.lan:8080", []string{"pervasim.lan"}, 200},
		{"attacker.example", []string{"pervasim.lan"}, 403},
	}
	for _, tt := range tests {
		f := newFixture(t)
		h := httpapi.NewHandler(httpapi.Config{Home: f.home, AllowHosts: tt.allow})
		r := httptest.NewRequest("GET", "/platform/zones/zones", nil)
		r.Host = tt.host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != tt.want {
			t.Errorf("GET with Host %q (allowed %v) = %d %s, want %d", tt.host, tt.allow, rec.Code, rec.Body, tt.want)
		}
		if tt.want == 403 && errorCode(t, rec.Body.String()) != "forbidden" {
			t.Errorf("Host %q: code is not forbidden", tt.host)
		}
		h.Close()
	}
}

// TestHostRememberedOnlyWhenAllowed sends one handler a sequence of hosts:
// the guard remembers the last host it allowed, and that memory must
// never let another host through, right after an allowed one or twice in a
// row.
func TestHostRememberedOnlyWhenAllowed(t *testing.T) {
	h := newFixture(t).handler
	for i, tt := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:8080", 200}, {"attacker.example", 403}, {"attacker.example", 403},
		{"127.0.0.1:8080", 200}, {"127.0.0.1:8080", 200}, {"127.0.0.1.attacker.example", 403},
		{"localhost:8080", 200}, {"localhost.attacker.example:8080", 403}, {"localhost:8080", 200}, {"attacker.example:8080", 403},
	} {
		if rec := (guardRequest{method: "GET", path: "/platform/zones/zones", host: tt.host}).send(h); rec.Code != tt.want {
			t.Errorf("request %d, Host %q = %d, want %d", i, tt.host, rec.Code, tt.want)
		}
	}
}

// TestCORSHeadersForBrowsers: the CORS methods, headers and max-age go to
// requests that carry an Origin and to preflights, not to other clients;
// every response says it varies with the Origin.
func TestCORSHeadersForBrowsers(t *testing.T) {
	h := newFixture(t).handler
	for _, tt := range []struct {
		name string
		req  guardRequest
		cors bool
	}{
		{"GET, no Origin", guardRequest{method: "GET", path: "/platform/zones/zones"}, false},
		{"GET, allowed Origin", guardRequest{method: "GET", path: "/platform/zones/zones", origin: "http://localhost:5173"}, true},
		{"GET, foreign Origin", guardRequest{method: "GET", path: "/platform/zones/zones", origin: "https://evil.example"}, true},
		{"OPTIONS, no Origin", guardRequest{method: "OPTIONS", path: "/platform/zones/zones"}, true},
		{"404, no Origin", guardRequest{method: "GET", path: "/nowhere"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hd := tt.req.send(h).Header()
			for _, k := range []string{"Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Max-Age"} {
				if got := hd.Get(k) != ""; got != tt.cors {
					t.Errorf("%s present = %v, want %v", k, got, tt.cors)
				}
			}
			if hd.Get("Vary") != "Origin" {
				t.Errorf("Vary = %q, want Origin", hd.Get("Vary"))
			}
		})
	}
}

// TestToken checks -token: every request needs it but the health check,
// the house plan's files and preflights; the event stream takes it in its
// query too.
func TestToken(t *testing.T) {
	f := newFixture(t)
	h := httpapi.NewHandler(httpapi.Config{Home: f.home, Engine: f.engine, Token: "s3cret"})
	defer h.Close()
	tests := []struct {
		name string
		req  guardRequest
		want int
	}{
		{"no token", guardRequest{method: "GET", path: "/platform/zones/zones"}, 403},
		{"a wrong token", guardRequest{method: "GET", path: "/platform/zones/zones", auth: "Bearer guess"}, 403},
		{"another scheme", guardRequest{method: "GET", path: "/platform/zones/zones", auth: "Basic czNjcmV0"}, 403},
		{"the token", guardRequest{method: "GET", path: "/platform/zones/zones", auth: "Bearer s3cret"}, 200},
		{"the token, the scheme in lower case", guardRequest{method: "GET", path: "/platform/zones/zones", auth: "bearer s3cret"}, 200},
		{"the token without a scheme", guardRequest{method: "GET", path: "/platform/zones/zones", auth: "s3cret"}, 403},
		{"the token, another scheme", guardRequest{method: "GET", path: "/platform/zones/zones", auth: "Basic s3cret"}, 403},
		{"a write with the token", guardRequest{method: "POST", path: "/platform/zones/zone", auth: "Bearer s3cret", body: zoneBody}, 200},
		{"a write without", guardRequest{method: "DELETE", path: "/platform/simulation"}, 403},
		{"mediation without", guardRequest{method: "GET", path: "/mediation"}, 403},
		{"the token in a query, not for the API", guardRequest{method: "GET", path: "/platform/zones/zones?access_token=s3cret"}, 403},
		{"health", guardRequest{method: "GET", path: "/healthz"}, 200},
		{"health, HEAD", guardRequest{method: "HEAD", path: "/healthz"}, 200},
		{"health under the root", guardRequest{method: "GET", path: "/platform/healthz"}, 403},
		{"health under the root with the token", guardRequest{method: "GET", path: "/platform/healthz", auth: "Bearer s3cret"}, 200},
		{"the house plan", guardRequest{method: "GET", path: "/simulator"}, 200},
		{"its script", guardRequest{method: "GET", path: "/simulator/app.js"}, 200},
		{"the way to it", guardRequest{method: "GET", path: "/"}, 302},
		{"the OpenAPI document", guardRequest{method: "GET", path: "/openapi.json"}, 403},
		{"the OpenAPI document with the token", guardRequest{method: "GET", path: "/openapi.json", auth: "Bearer s3cret"}, 200},
		{"a preflight", guardRequest{method: "OPTIONS", path: "/platform/zones/zone", origin: "http://localhost:3000", preflight: "PUT"}, 200},
		{"OPTIONS that is no preflight (no Origin)", guardRequest{method: "OPTIONS", path: "/platform/zones/zone", preflight: "PUT"}, 403},
		{"OPTIONS that is no preflight (no method asked)", guardRequest{method: "OPTIONS", path: "/platform/zones/zone", origin: "http://localhost:3000"}, 403},
		{"OPTIONS with the token", guardRequest{method: "OPTIONS", path: "/platform/zones/zone", auth: "Bearer s3cret"}, 200},
	}
	for _, tt := range tests {
		rec := tt.req.send(h)
		if rec.Code != tt.want {
			t.Errorf("%s: %s %s = %d %s, want %d", tt.name, tt.req.method, tt.req.path, rec.Code, rec.Body, tt.want)
		}
	}
	// The event stream, as the house plan's EventSource opens it: the token
	// in the query. A client already gone ends the stream at once.
	for q, want := range map[string]int{"?access_token=s3cret": 200, "?access_token=guess": 403, "": 403} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := newRequest("GET", "/platform/events"+q, nil).WithContext(ctx)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != want {
			t.Errorf("GET /platform/events%s = %d %s, want %d", q, rec.Code, rec.Body, want)
		}
	}
}

// FuzzGuard sends a zone creation with any Host and Origin: the guard never
// panics, answers 200 or 403, and a refused request changes nothing.
func FuzzGuard(f *testing.F) {
	for _, s := range [][2]string{
		{"127.0.0.1:8080", "http://localhost:3000"}, {"attacker.example", ""}, {"[::1]:80", "null"},
		{"localhost", "https://evil.example"}, {"", "http://[::1"}, {"LOCALHOST.", "HTTP://LOCALHOST:99999"},
		{"10.0.0.1:1", "http://10.0.0.1:1/"}, {"a.localhost", "http://user@localhost"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, host, origin string) {
		fx := newFixture(t)
		h := httpapi.NewHandler(httpapi.Config{Home: fx.home})
		defer h.Close()
		r := httptest.NewRequest("POST", "/platform/zones/zone", strings.NewReader(zoneBody))
		r.Host = host
		if origin != "" {
			r.Header["Origin"] = []string{origin}
		}
		r.Header.Set("Content-Type", "text/plain")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		switch rec.Code {
		case http.StatusOK:
		case http.StatusForbidden:
			if len(fx.home.Zones()) != 0 {
				t.Errorf("a refused request (Host %q, Origin %q) created a zone", host, origin)
			}
		default:
			t.Errorf("Host %q, Origin %q: status %d %s", host, origin, rec.Code, rec.Body)
		}
	})
}

// TestForeignPagesCannotHoldEventStreams: an event stream a foreign page
// opens (an EventSource sends its Origin, a no-cors fetch only
// Sec-Fetch-Site) is refused: the page could not read it, but would hold
// one of the server's stream clients for as long as it stays open. Pages
// of allowed origins, and clients that are not browsers, get the stream.
func TestForeignPagesCannotHoldEventStreams(t *testing.T) {
	tests := []struct {
		name      string
		path      string
		origin    string
		fetchSite string
		want      int
	}{
		{"a foreign origin", "/platform/events", "https://evil.example", "cross-site", http.StatusForbidden},
		{"a foreign origin at the root's stream", "/events", "https://evil.example", "", http.StatusForbidden},
		{"a null origin", "/platform/events", "null", "", http.StatusForbidden},
		{"cross-site without an Origin", "/platform/events", "", "cross-site", http.StatusForbidden},
		{"a loopback origin", "/platform/events", "http://localhost:5173", "cross-site", http.StatusOK},
		{"the page of the server", "/platform/events", "", "same-origin", http.StatusOK},
		{"not a browser", "/platform/events", "", "", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			h := httpapi.NewHandler(httpapi.Config{Home: f.home, Engine: f.engine})
			defer h.Close()
			// Gone at once: a stream that opens ends without waiting.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			r := httptest.NewRequestWithContext(ctx, "GET", tt.path, nil)
			r.Host = "127.0.0.1:8080"
			for k, v := range map[string]string{"Origin": tt.origin, "Sec-Fetch-Site": tt.fetchSite} {
				if v != "" {
					r.Header.Set(k, v)
				}
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if rec.Code != tt.want {
				t.Fatalf("GET %s from %q (%s) = %d %s, want %d", tt.path, tt.origin, tt.fetchSite, rec.Code, rec.Body, tt.want)
			}
			if tt.want == http.StatusForbidden {
				if code := errorCode(t, rec.Body.String()); code != "forbidden" {
					t.Errorf("code %q, want forbidden", code)
				}
				if got := rec.Header().Get("Access-Control-Allow-Origin"); got != "" {
					t.Errorf("Access-Control-Allow-Origin = %q, want none", got)
				}
			}
		})
	}
}
