package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// A Cilia application: a generator, two mediators of types pervasim does
// not have, and a console.
const ciliaApp = `<?xml version="1.0" encoding="UTF-8"?>
<cilia>
	<chain id="greeting">
		<mediators>
			<mediator-instance type="PrefixMediator" id="pre">
				<property name="prefix.text" value="Good morning "/>
			</mediator-instance>
			<mediator-instance type="passthrough" id="pass"/>
		</mediators>
		<adapters>
			<adapter-instance type="rest-in" id="in"/>
			<adapter-instance type="ConsoleAdapter" id="out"/>
		</adapters>
		<bindings>
			<binding from="in:unique" to="pre:unique"/>
			<binding from="pre:unique" to="pass:unique"/>
			<binding from="pass:unique" to="out:unique" linker="event-admin"/>
		</bindings>
	</chain>
</cilia>`

func TestDSCiliaOverREST(t *testing.T) {
	for _, tt := range []struct {
		name, path, ctype, body string
		status                  int
		has                     string
	}{
		{"unknown types listed", "/mediation/", "application/xml", ciliaApp, 400, "ConsoleAdapter, PrefixMediator"},
		{"with placeholders", "/mediation/?placeholders=true", "application/xml", ciliaApp, 200, `{"chains":["greeting"]}`},
		{"text/xml, no slash", "/mediation?placeholders=true", "text/xml; charset=utf-8", ciliaApp, 200, `"greeting"`},
		{"not XML", "/mediation/", "application/json", `{}`, 400, "DSCilia"},
		{"not XML, no slash", "/mediation", "application/json", `{}`, 400, `POST /mediation/\u003cchain`},
		{"no chain", "/mediation/?placeholders=true", "application/xml", `<cilia/>`, 200, `{"chains":[]}`},
		{"placeholders, then a binding to nobody", "/mediation/?placeholders=true", "application/xml",
			`<cilia><chain id="p"><mediators><mediator-instance id="m" type="Ghost"/></mediators><bindings><binding from="m:out" to="nosuch:in"/></bindings></chain></cilia>`,
			404, "nosuch"},
		{"bad XML", "/mediation/", "application/xml", `<cilia><chain id="x">`, 400, "line 1"},
		{"bad placeholders", "/mediation/?placeholders=maybe", "application/xml", ciliaApp, 400, "placeholders"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			rec := f.doType(t, "POST", tt.path, tt.ctype, tt.body)
			if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.has) {
				t.Fatalf("POST %s = %d %s, want %d with %q", tt.path, rec.Code, rec.Body, tt.status, tt.has)
			}
			if tt.status != 200 {
				if got := f.mustDo(t, "GET", "/mediation/", "").Body.String(); !strings.Contains(got, `"chains":[]`) {
					t.Errorf("a refused import left chains: %s", got)
				}
				if got := f.mustDo(t, "GET", "/mediation/runtime/types", "").Body.String(); strings.Contains(got, "Ghost") {
					t.Errorf("a refused import left its placeholder type: %s", got)
				}
			}
		})
	}

	// A placeholder type is listed while a component uses it: it goes with
	// the component, or with its chain.
	f := newFixture(t)
	f.doType(t, "POST", "/mediation/?placeholders=true", "application/xml", ciliaApp)
	f.mustDo(t, "DELETE", "/mediation/greeting/components/out", "")
	if got := f.mustDo(t, "GET", "/mediation/runtime/types", "").Body.String(); strings.Contains(got, "ConsoleAdapter") || !strings.Contains(got, "PrefixMediator") {
		t.Errorf("after the ConsoleAdapter's deletion, types = %s; want PrefixMediator only", got)
	}
	f.mustDo(t, "DELETE", "/mediation/greeting", "")
	if got := f.mustDo(t, "GET", "/mediation/runtime/types", "").Body.String(); strings.Contains(got, "PrefixMediator") {
		t.Errorf("the placeholder types of a deleted chain stay: %s", got)
	}

	f = newFixture(t)
	f.doType(t, "POST", "/mediation/?placeholders=true", "application/xml", ciliaApp)
	// Loaded over an existing chain: 409, and nothing changes.
	before := f.mustDo(t, "GET", "/mediation/greeting", "").Body.String()
	if rec := f.doType(t, "POST", "/mediation/?placeholders=true", "application/xml", ciliaApp); rec.Code != http.StatusConflict {
		t.Errorf("import over an existing chain = %d %s, want 409", rec.Code, rec.Body)
	}
	if after := f.mustDo(t, "GET", "/mediation/greeting", "").Body.String(); after != before {
		t.Errorf("a refused import changed the chain")
	}
	// Messages pass through the placeholders, unchanged, to the
	// placeholder console, which keeps them.
	f.mustDo(t, "POST", "/mediation/runtime/greeting/components/in/data", `{"n":1}`)
	// The event-admin binding is a queue; read the chain's state until the
	// message has gone through it (a hang, not a speed check).
	got := waitFor(t, func() (bool, string) {
		b := f.mustDo(t, "GET", "/mediation/runtime/greeting/components/out/data", "").Body.String()
		return strings.Contains(b, `{"n":1}`), b
	})
	if !strings.Contains(got, `"content":{"n":1}`) {
		t.Errorf("the console placeholder holds %s", got)
	}

	// Exported as DSCilia, imported into an empty server, exported again:
	// the same document.
	req := newRequest("GET", "/mediation/greeting", nil)
	req.Header.Set("Accept", "application/xml")
	rec := serveReq(f, req)
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/xml") {
		t.Fatalf("GET as XML = %d %s %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	exported := rec.Body.String()
	for _, want := range []string{`type="PrefixMediator"`, `linker="queue"`, `<property name="prefix.text" value="Good morning "/>`, `from="in:out" to="pre:in"`} {
		if !strings.Contains(exported, want) {
			t.Errorf("the export lacks %s:\n%s", want, exported)
		}
	}
	g := newFixture(t)
	if rec := g.doType(t, "POST", "/mediation/", "application/xml", exported); rec.Code != 200 {
		// The placeholder types are unknown to a new engine: placeholders again.
		if rec = g.doType(t, "POST", "/mediation/?placeholders=true", "application/xml", exported); rec.Code != 200 {
			t.Fatalf("re-import = %d %s", rec.Code, rec.Body)
		}
	}
	req = newRequest("GET", "/mediation/greeting", nil)
	req.Header.Set("Accept", "text/xml")
	if again := serveReq(g, req).Body.String(); again != exported {
		t.Errorf("exported again:\n%s\nwant:\n%s", again, exported)
	}
	// JSON stays the default.
	if rec := f.mustDo(t, "GET", "/mediation/greeting", ""); !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Errorf("GET without Accept = %s", rec.Header().Get("Content-Type"))
	}
}

// waitFor calls cond until it holds, yielding in between, and fails after
// a long time (a hang, not a speed check). It returns cond's last text.
func waitFor(t *testing.T, cond func() (bool, string)) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, text := cond()
		if ok {
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("still: %s", text)
		}
		runtime.Gosched()
	}
}

// serveReq sends req through the fixture's handler.
func serveReq(f *fixture, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, req)
	return rec
}

// TestPlaceholderTypeNotPrunedUnderAComponent: a component of a placeholder
// type made while the last chain using that type is deleted either fails
// (the type went first) or keeps its type registered (it came first):
// never a component whose type the server no longer lists.
func TestPlaceholderTypeNotPrunedUnderAComponent(t *testing.T) {
	f := newFixture(t)
	f.mustDo(t, "POST", "/mediation/b", "")
	for i := range 300 { // chains the pruning reads after b's: a wider window for the race
		f.mustDo(t, "POST", fmt.Sprintf("/mediation/busy%d", i), "")
		f.mustDo(t, "POST", fmt.Sprintf("/mediation/busy%d/mediator/passthrough/p", i), "")
	}
	ghost := `<cilia><chain id="a"><mediators><mediator-instance id="m" type="Ghost"/></mediators></chain></cilia>`
	for i := range 50 {
		f.doType(t, "POST", "/mediation/?placeholders=true", "application/xml", ghost)
		var wg sync.WaitGroup
		var made int
		wg.Go(func() { f.do(t, "DELETE", "/mediation/a", "") })
		wg.Go(func() { made = f.do(t, "POST", "/mediation/b/mediators/g", `{"type":"Ghost"}`).Code })
		wg.Wait()
		listed := strings.Contains(f.mustDo(t, "GET", "/mediation/runtime/types", "").Body.String(), `"Ghost"`)
		if made == http.StatusOK && !listed {
			t.Fatalf("round %d: a Ghost component was made and Ghost is no longer a type", i)
		}
		if made == http.StatusOK {
			f.mustDo(t, "DELETE", "/mediation/b/components/g", "")
		}
	}
}
