package store_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
	"github.com/pervasim/pervasim/store"
)

// A State keeps what the REST API changes. Wire it as a server does: New,
// its Wrap as the handler's Middleware (each change is journaled before it
// is applied), then Open with the handler's routes (the journal is
// replayed through them). Here a zone made over HTTP is still there when
// the server starts again on the same directory.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "pervasim-state")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	for run := 1; run <= 2; run++ {
		home := sim.MustNew(sim.Config{})
		engine := mediation.NewEngine(mediation.Config{})
		st := store.New(store.Config{Dir: dir, Home: home, Engine: engine})
		h := httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine, Middleware: st.Wrap})
		restored, err := st.Open(h.API())
		if err != nil {
			fmt.Println(err)
			return
		}
		srv := httptest.NewServer(h)

		fmt.Printf("run %d: restored=%v\n", run, restored)
		if run == 1 {
			resp, err := http.Post(srv.URL+"/platform/zones/zone", "application/json",
				strings.NewReader(`{"zoneId":"kitchen","leftX":0,"topY":0,"rightX":200,"bottomY":150}`))
			if err != nil {
				fmt.Println(err)
				return
			}
			resp.Body.Close()
			fmt.Println("POST zone:", resp.Status)
		}
		if z, err := home.Zone("kitchen"); err == nil {
			fmt.Println("kitchen:", z.LeftX, z.TopY, z.RightX, z.BottomY)
		}

		srv.Close()
		h.Close()
		if err := st.Close(); err != nil { // a last snapshot
			fmt.Println(err)
		}
		engine.Close()
	}
	// Output:
	// run 1: restored=false
	// POST zone: 200 OK
	// kitchen: 0 0 200 150
	// run 2: restored=true
	// kitchen: 0 0 200 150
}
