package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/sim"
)

func TestSimulatorServesThePage(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		path, root, assets string
	}{
		{"/simulator", "platform", "./simulator/"},
		{"/simulator/", "../platform", "./"},
		{"/simulator/index.html", "../platform", "./"},
	} {
		rec := f.do(t, "GET", tc.path, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d %s", tc.path, rec.Code, rec.Body)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("GET %s: Content-Type %q", tc.path, ct)
		}
		body := rec.Body.String()
		if want := `<meta name="platform-root" content="` + tc.root + `">`; !strings.Contains(body, want) {
			t.Errorf("GET %s: no %s in the page", tc.path, want)
		}
		for _, asset := range []string{"app.js", "style.css"} {
			if want := `="` + tc.assets + asset + `"`; !strings.Contains(body, want) {
				t.Errorf("GET %s: no %s in the page", tc.path, want)
			}
		}
	}
}

func TestSimulatorPlatformRoot(t *testing.T) {
	h := httpapi.NewHandler(httpapi.Config{Home: sim.MustNew(sim.Config{}), PlatformRoot: "/icasa/"})
	defer h.Close()
	for path, want := range map[string]string{
		"/simulator":  `content="icasa"`,
		"/simulator/": `content="../icasa"`,
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, newRequest("GET", path, nil))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("GET %s = %d, want 200 with %s", path, rec.Code, want)
		}
	}
}

// Every file the page names is served, with its media type.
func TestSimulatorAssets(t *testing.T) {
	f := newFixture(t)
	page := f.mustDo(t, "GET", "/simulator/", "").Body.String()
	refs := regexp.MustCompile(`(?:src|href)="\./([^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(refs) < 2 {
		t.Fatalf("the page names %d files, want app.js and style.css at least", len(refs))
	}
	types := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
	for _, ref := range refs {
		path := "/simulator/" + ref[1]
		rec := f.mustDo(t, "GET", path, "")
		ext := ref[1][strings.LastIndexByte(ref[1], '.'):]
		if want, ok := types[ext]; ok && rec.Header().Get("Content-Type") != want {
			t.Errorf("GET %s: Content-Type %q, want %q", path, rec.Header().Get("Content-Type"), want)
		}
		if rec.Body.Len() == 0 {
			t.Errorf("GET %s: empty body", path)
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no nosniff", path)
		}
	}
}

// No foreign page may frame the house plan or its files (clickjacking):
// only the server's own pages.
func TestSimulatorNotFramed(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/simulator", "/simulator/", "/simulator/index.html", "/simulator/app.js"} {
		t.Run(path, func(t *testing.T) {
			h := f.mustDo(t, "GET", path, "").Header()
			got := map[string]string{"Content-Security-Policy": h.Get("Content-Security-Policy"), "X-Frame-Options": h.Get("X-Frame-Options")}
			want := map[string]string{"Content-Security-Policy": "frame-ancestors 'self'", "X-Frame-Options": "SAMEORIGIN"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("GET %s: headers (-want +got):\n%s", path, diff)
			}
		})
	}
}

func TestSimulatorNotFound(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/simulator/nope.js", "/simulator/../go.mod", "/simulator/web/app.js", "/simulator//app.js", "/simulatorx"} {
		rec := f.do(t, "GET", path, "")
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", path, rec.Code)
			continue
		}
		var body struct{ Error, Code string }
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Code != "not_found" {
			t.Errorf("GET %s: body %s, want a JSON not_found error", path, rec.Body)
		}
		if !strings.Contains(body.Error, path) {
			t.Errorf("GET %s: error %q does not name the path", path, body.Error)
		}
	}
}

func TestSimulatorMethods(t *testing.T) {
	f := newFixture(t)
	rec := f.do(t, "POST", "/simulator/app.js", "{}")
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD, OPTIONS" {
		t.Errorf("POST = %d Allow %q, want 405 with GET, HEAD, OPTIONS", rec.Code, rec.Header().Get("Allow"))
	}
	rec = f.do(t, "HEAD", "/simulator/style.css", "")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/css; charset=utf-8" {
		t.Errorf("HEAD = %d %q, want 200 text/css", rec.Code, rec.Header().Get("Content-Type"))
	}
}

func TestSimulatorConditionalGet(t *testing.T) {
	f := newFixture(t)
	rec := f.mustDo(t, "GET", "/simulator/app.js", "")
	etag := rec.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	req := newRequest("GET", "/simulator/app.js", nil)
	req.Header.Set("If-None-Match", etag)
	rec = httptest.NewRecorder()
	f.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified {
		t.Errorf("GET with If-None-Match = %d, want 304", rec.Code)
	}
}

// A browser fetches the page's files at once.
func TestSimulatorConcurrentRequests(t *testing.T) {
	f := newFixture(t)
	var wg sync.WaitGroup
	for i := range 16 {
		path := []string{"/simulator", "/simulator/app.js", "/simulator/style.css", "/simulator/missing.png"}[i%4]
		wg.Go(func() {
			req := newRequest("GET", path, nil)
			rec := httptest.NewRecorder()
			f.handler.ServeHTTP(rec, req)
			if want := map[bool]int{true: http.StatusNotFound, false: http.StatusOK}[strings.HasSuffix(path, "missing.png")]; rec.Code != want {
				t.Errorf("GET %s = %d, want %d", path, rec.Code, want)
			}
		})
	}
	wg.Wait()
}
