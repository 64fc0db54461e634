package httpapi_test

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

// TestBusyOverREST: a bound reached by a request is 503 busy with
// Retry-After: a splitter bomb, a fan-out bomb, a queue that stays full.
func TestBusyOverREST(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hold := make(chan struct{})
		reg := mediation.NewRegistry()
		if err := reg.Register(mediation.Type{Name: "hold", Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"},
			New: func(map[string]any, mediation.Env) (any, error) {
				return mediation.ProcessorFunc(func(_ string, m mediation.Message, out mediation.Emitter) error {
					<-hold
					return nil
				}), nil
			}}); err != nil {
			t.Fatal(err)
		}
		home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
		engine := mediation.NewEngine(mediation.Config{Registry: reg, MaxDeliveries: 1000})
		defer engine.Close()
		f := &fixture{home: home, engine: engine, handler: httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine})}
		defer f.handler.Close()
		for _, s := range []string{
			"/mediation/c", "/mediation/c/adapter/rest-in/in", "/mediation/c/mediator/splitter/s",
			"/mediation/c/adapter/rest-out/out", "/mediation/c/mediator/hold/h", "/mediation/c/adapter/rest-in/in2",
		} {
			f.mustDo(t, "POST", s, "")
		}
		for _, b := range []string{
			`{"from":"in:out","to":"s:in"}`, `{"from":"s:out","to":"out:in"}`,
			`{"from":"in2:out","to":"h:in","linker":"queue","properties":{"capacity":1}}`,
		} {
			f.mustDo(t, "POST", "/mediation/c/bindings", b)
		}
		f.mustDo(t, "PUT", "/mediation/runtime/c/start", "")

		busy := func(name string, rec interface {
			Result() *http.Response
		}, body string, contains string) {
			t.Helper()
			res := rec.Result()
			if res.StatusCode != 503 || res.Header.Get("Retry-After") == "" || !strings.Contains(body, `"code":"busy"`) || !strings.Contains(body, contains) {
				t.Errorf("%s = %d (Retry-After %q) %s, want 503 busy with Retry-After, saying %q", name, res.StatusCode, res.Header.Get("Retry-After"), body, contains)
			}
		}
		rec := f.doType(t, "POST", "/mediation/runtime/c/components/in/data", "text/plain", strings.Repeat("x,", 100_000))
		busy("a splitter bomb", rec, rec.Body.String(), "more than 10000 parts")

		f.mustDo(t, "POST", "/mediation/runtime/c/components/in2/data", `1`) // held in h, and counted in the queue: full
		start := time.Now()
		rec = f.do(t, "POST", "/mediation/runtime/c/components/in2/data", `2`)
		busy("a send into a full queue", rec, rec.Body.String(), "stays full")
		if waited := time.Since(start); waited != mediation.DefaultSendTimeout {
			t.Errorf("the send waited %v, want %v", waited, mediation.DefaultSendTimeout)
		}
		close(hold)
	})
}

// TestDataJSONCannotHold: a message a Go component made with a value JSON
// cannot hold (NaN, an infinity) is read from a rest-out with that value as
// text, not as a 500.
func TestDataJSONCannotHold(t *testing.T) {
	reg := mediation.NewRegistry()
	if err := reg.Register(mediation.Type{Name: "nan", Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"},
		New: func(map[string]any, mediation.Env) (any, error) {
			return mediation.ProcessorFunc(func(_ string, m mediation.Message, out mediation.Emitter) error {
				out.Emit("out", mediation.Message{Content: math.NaN(), Properties: map[string]any{"big": math.Inf(1), "ok": "yes"}})
				return nil
			}), nil
		}}); err != nil {
		t.Fatal(err)
	}
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	engine := mediation.NewEngine(mediation.Config{Registry: reg})
	defer engine.Close()
	f := &fixture{home: home, engine: engine, handler: httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine})}
	defer f.handler.Close()
	for _, s := range []string{"/mediation/c", "/mediation/c/adapter/rest-in/in", "/mediation/c/mediator/nan/n", "/mediation/c/adapter/rest-out/out"} {
		f.mustDo(t, "POST", s, "")
	}
	f.mustDo(t, "POST", "/mediation/c/bindings", `{"from":"in:out","to":"n:in"}`)
	f.mustDo(t, "POST", "/mediation/c/bindings", `{"from":"n:out","to":"out:in"}`)
	f.mustDo(t, "PUT", "/mediation/runtime/c/start", "")
	f.mustDo(t, "POST", "/mediation/runtime/c/components/in/data", `{"content":1}`)
	body := f.mustDo(t, "GET", "/mediation/runtime/c/components/out/data", "").Body.String()
	if want := `{"messages":[{"content":"NaN","properties":{"big":"+Inf","ok":"yes"}}]}`; strings.TrimSpace(body) != want {
		t.Errorf("data = %s, want %s", body, want)
	}
}
