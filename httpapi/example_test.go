package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

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
