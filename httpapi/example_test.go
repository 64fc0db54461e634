package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

// NewHandler serves a home (and, optionally, a mediation engine) over
// HTTP. Here the handler runs on a test server and a client reads a zone.
func ExampleNewHandler() {
	home := sim.MustNew(sim.Config{})
	engine := mediation.NewEngine(mediation.Config{})
	defer engine.Close()
	if _, err := home.CreateZone(sim.ZoneSpec{ID: "kitchen", LeftX: 410, TopY: 370, RightX: 655, BottomY: 580}); err != nil {
		fmt.Println(err)
		return
	}

	h := httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine})
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/platform/zones/zone/kitchen")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, resp.Header.Get("Content-Type"))
	fmt.Println(string(body))
	// Output:
	// 200 OK application/json; charset=utf-8
	// {"id":"kitchen","name":"kitchen","isRoom":true,"leftX":410,"topY":370,"rightX":655,"bottomY":580,"variables":{}}
}

// NewHomes lets a handler make more homes over REST, each with what its
// factory builds (here a home of the physics asked for and an engine of
// its own), served under /homes/<name>/ at the same paths as the server's
// own home.
func ExampleNewHomes() {
	factory := func(name string, spec httpapi.HomeSpec) (httpapi.HomeParts, error) {
		home, err := sim.New(sim.Config{Physics: sim.Physics(spec.Physics),
			StartDate: time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC), WallClock: clock.NewMock()})
		if err != nil {
			return httpapi.HomeParts{}, err // an unknown model: 400
		}
		engine := mediation.NewEngine(mediation.Config{})
		return httpapi.HomeParts{Home: home, Engine: engine, Stop: func() { engine.Close() }}, nil
	}
	homes := httpapi.NewHomes(factory, 0)
	defer homes.Close() // after the server

	h := httpapi.NewHandler(httpapi.Config{Home: sim.MustNew(sim.Config{}), Homes: homes})
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	for _, req := range []struct{ method, path, body string }{
		{"POST", "/homes/lab", `{"physics":"realistic"}`},
		{"POST", "/homes/lab/platform/zones/zone", `{"zoneId":"kitchen","leftX":0,"topY":0,"rightX":200,"bottomY":200}`},
		{"GET", "/homes", ""},
		{"GET", "/platform/zones/zones", ""}, // the server's own home has none
	} {
		r, _ := http.NewRequest(req.method, srv.URL+req.path, strings.NewReader(req.body))
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			fmt.Println(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(req.method, req.path, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	// Output:
	// POST /homes/lab 200 {"id":"lab","platform":"/homes/lab/platform","mediation":"/homes/lab/mediation","physics":"realistic"}
	// POST /homes/lab/platform/zones/zone 200 {"id":"kitchen","name":"kitchen","isRoom":true,"leftX":0,"topY":0,"rightX":200,"bottomY":200,"variables":{"Illuminance":0,"Temperature":293.15}}
	// GET /homes 200 [{"id":"default","platform":"/platform","mediation":"/mediation","physics":"contract"},{"id":"lab","platform":"/homes/lab/platform","mediation":"/homes/lab/mediation","physics":"realistic"}]
	// GET /platform/zones/zones 200 []
}
