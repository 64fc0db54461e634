package httpapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

var (
	specOnce sync.Once
	specV    validator.Validator
	specErr  error
)

// spec returns a validator of the document the server serves at
// /openapi.json with the default roots.
func spec(tb testing.TB) validator.Validator {
	tb.Helper()
	specOnce.Do(func() {
		homes := httpapi.NewHomes(func(string, httpapi.HomeSpec) (httpapi.HomeParts, error) {
			return httpapi.HomeParts{}, errors.New("no home is built here")
		}, 0)
		h := httpapi.NewHandler(httpapi.Config{Home: sim.MustNew(sim.Config{}), Engine: mediation.NewEngine(mediation.Config{}), Homes: homes})
		defer h.Close()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, newRequest("GET", "/openapi.json", nil))
		doc, err := libopenapi.NewDocument(rec.Body.Bytes())
		if err != nil {
			specErr = err
			return
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			specErr = errs[0]
			return
		}
		specV = v
	})
	if specErr != nil {
		tb.Fatalf("the OpenAPI document: %v", specErr)
	}
	return specV
}

// TestOpenAPIDocument checks that the served document is valid OpenAPI 3.1
// and follows the server's roots.
func TestOpenAPIDocument(t *testing.T) {
	v := spec(t)
	if ok, errs := v.ValidateDocument(); !ok {
		for _, e := range errs {
			t.Errorf("%s: %s", e.Message, e.Reason)
		}
	}
	h := httpapi.NewHandler(httpapi.Config{Home: sim.MustNew(sim.Config{}), Engine: mediation.NewEngine(mediation.Config{}),
		PlatformRoot: "icasa", MediationRoot: "cilia"})
	defer h.Close()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, newRequest("GET", "/openapi.json", nil))
	body := rec.Body.String()
	if !strings.Contains(body, `"/icasa/zones/zones"`) || !strings.Contains(body, `"/cilia/{chain}/bindings"`) || strings.Contains(body, `"/platform/`) {
		t.Errorf("the document does not follow the roots icasa and cilia")
	}

	// The token, the guard's 403 everywhere, 507 on changes, HEAD beside
	// GET, and the mediation fields the query string may carry.
	var doc struct {
		Components struct {
			SecuritySchemes map[string]struct{ Scheme string } `json:"securitySchemes"`
		}
		Paths map[string]map[string]struct {
			Security   []map[string][]string
			Parameters []struct{ Name, In string }
			Responses  map[string]any
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Components.SecuritySchemes["token"].Scheme != "bearer" {
		t.Errorf("no bearer token scheme: %+v", doc.Components.SecuritySchemes)
	}
	health := doc.Paths["/healthz"]["get"]
	if _, ok := health.Responses["403"]; !ok || len(health.Security) != 1 || len(health.Security[0]) != 0 {
		t.Errorf("GET /healthz: responses %v, security %v; want a 403 and no token", health.Responses, health.Security)
	}
	if _, ok := doc.Paths["/icasa/zones/zone"]["post"].Responses["507"]; !ok {
		t.Errorf("POST /icasa/zones/zone lacks 507")
	}
	if _, ok := doc.Paths["/icasa/zones/zones"]["head"]; !ok {
		t.Errorf("GET /icasa/zones/zones has no HEAD beside it")
	}
	var query []string
	for _, p := range doc.Paths["/cilia/{chain}/bindings"]["post"].Parameters {
		if p.In == "query" {
			query = append(query, p.Name)
		}
	}
	if d := cmp.Diff([]string{"from", "to", "linker", "properties"}, query); d != "" {
		t.Errorf("POST bindings' query fields (-want +got):\n%s", d)
	}
}

// checkAgainstSpec validates a request and the response it got against
// the document: the response always, the request when it succeeded (the
// suites send bad requests on purpose).
func checkAgainstSpec(tb testing.TB, req *http.Request, body []byte, rec *httptest.ResponseRecorder) {
	tb.Helper()
	if strings.HasPrefix(req.URL.Path, "/simulator") || strings.HasSuffix(req.URL.Path, "/events") {
		return
	}
	v := spec(tb)
	res := rec.Result()
	r2 := req.Clone(req.Context())
	// A home's paths are the default home's under /homes/{home}.
	if rest, ok := strings.CutPrefix(req.URL.Path, "/homes/"); ok {
		if _, sub, ok := strings.Cut(rest, "/"); ok {
			r2.URL.Path, r2.URL.RawPath = "/"+sub, ""
		}
	}
	r2.Body = io.NopCloser(bytes.NewReader(body))
	if res.StatusCode < 300 {
		if len(bytes.TrimSpace(body)) == 0 {
			// The server reads a blank body as none, whatever its label:
			// the document's optional bodies are absent.
			r2.Body, r2.ContentLength = http.NoBody, 0
			r2.Header.Del("Content-Type")
		}
		if ok, errs := v.ValidateHttpRequestSync(r2); !ok {
			for _, e := range errs {
				if strings.Contains(e.Reason, "cannot unmarshal number") {
					continue // valid JSON past float64 (1e700), which the validator cannot read
				}
				tb.Errorf("OpenAPI: request %s %s: %s (%s)", req.Method, req.URL, e.Message, e.Reason)
			}
		}
		r2.Body = io.NopCloser(bytes.NewReader(body))
	}
	if ok, errs := v.ValidateHttpResponse(r2, res); !ok {
		for _, e := range errs {
			if (res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusMethodNotAllowed) && e.ValidationType == "path" {
				continue // no such route or method: the document rightly lacks it
			}
			tb.Errorf("OpenAPI: response %d to %s %s: %s (%s)", res.StatusCode, req.Method, req.URL, e.Message, e.Reason)
			for _, f := range e.SchemaValidationErrors {
				tb.Errorf("    %s at %s", f.Reason, f.FieldPath)
			}
		}
	}
}

// TestOpenAPIComponentTypeKeys: the document's ComponentType lists the keys
// GET /runtime/types sends, no more: it listed a "doc" the route never
// sends (its entries have the contract's keys only), so a client generated
// from it had a field that was always empty.
func TestOpenAPIComponentTypeKeys(t *testing.T) {
	h := httpapi.NewHandler(httpapi.Config{Home: sim.MustNew(sim.Config{}), Engine: mediation.NewEngine(mediation.Config{})})
	defer h.Close()
	get := func(path string, v any) {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, newRequest("GET", path, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, rec.Code, rec.Body)
		}
		if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	get("/openapi.json", &doc)
	var documented []string
	for k := range doc.Components.Schemas["ComponentType"].Properties {
		documented = append(documented, k)
	}
	var types []map[string]any
	get("/mediation/runtime/types", &types)
	sent := map[string]bool{}
	for _, ty := range types {
		for k := range ty {
			sent[k] = true
		}
	}
	var keys []string
	for k := range sent {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	slices.Sort(documented)
	if d := cmp.Diff(keys, documented); d != "" {
		t.Errorf("ComponentType's keys (-sent +documented):\n%s", d)
	}
}
