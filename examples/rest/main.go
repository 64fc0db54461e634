// Command rest drives the server over HTTP from Go: it creates a zone, a
// heater and a person, turns the heater up, reads everything back, and
// builds a small mediation chain whose output it reads. By default it
// starts a server of its own in-process on a free port; pass -server
// http://127.0.0.1:8080 to drive a running `go run ./cmd/server` instead.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

func main() {
	server := flag.String("server", "", "base URL of a running server (default: start one in-process)")
	flag.Parse()
	base := *server
	if base == "" {
		base = startServer()
	}
	if err := run(os.Stdout, base); err != nil {
		log.Fatal(err)
	}
}

// run drives the server at base and prints what it sees. It removes what
// it creates when it is done (and what a run cut short left behind, when
// it starts), so it can run again and again against the same server.
func run(w io.Writer, base string) (err error) {
	c := &client{base: strings.TrimSuffix(base, "/")}
	cleanup := func() {
		c.do("DELETE", "/mediation/demo", "", "")
		c.do("DELETE", "/platform/persons/person/alice", "", "")
		c.do("DELETE", "/platform/devices/device/heater-1", "", "")
		c.do("DELETE", "/platform/zones/zone/kitchen", "", "")
	}
	cleanup()
	defer cleanup()
	defer func() {
		if r := recover(); r != nil { // a call that failed: see client
			err = fmt.Errorf("%v", r)
		}
	}()

	// The simulation: JSON bodies.
	fmt.Fprintln(w, "create the kitchen, a heater in it at power 0.8, and alice")
	c.json("POST", "/platform/zones/zone", map[string]any{"zoneId": "kitchen", "leftX": 410, "topY": 370, "rightX": 655, "bottomY": 580})
	c.json("POST", "/platform/devices/device", map[string]any{"deviceId": "heater-1", "type": "iCasa.Heater", "positionX": 500, "positionY": 400})
	c.json("PUT", "/platform/devices/device/heater-1", map[string]any{"properties": map[string]any{"heater.powerLevel": 0.8}})
	c.json("POST", "/platform/persons/person", map[string]any{"personId": "alice", "type": "Mother", "positionX": 450, "positionY": 400})
	var heater sim.Device
	c.get("/platform/devices/device/heater-1", &heater)
	fmt.Fprintf(w, "heater-1 is in %s at power %v\n", heater.Location, heater.Properties["heater.powerLevel"])
	var alice sim.Person
	c.get("/platform/persons/person/alice", &alice)
	fmt.Fprintf(w, "alice is in %s\n", alice.Location)

	// Bad input gets a JSON error with its status.
	status, body := c.do("PUT", "/platform/devices/device/heater-1", "application/json", `{"properties":{"heater.powerLevel":2}}`)
	fmt.Fprintf(w, "a power level of 2 is refused: %d %s", status, body)

	// Mediation: form parameters, then a message through an enricher.
	fmt.Fprintln(w, "chain demo: in -> tag (enricher, site=lab) -> out")
	c.form("POST", "/mediation/demo", nil)
	c.form("POST", "/mediation/demo/adapter/rest-in/in", nil)
	c.form("POST", "/mediation/demo/mediator/enricher/tag", url.Values{"properties": {"{site=lab}"}})
	c.form("POST", "/mediation/demo/adapter/rest-out/out", nil)
	c.form("POST", "/mediation/demo/bindings", url.Values{"from": {"in:out"}, "to": {"tag:in"}})
	c.form("POST", "/mediation/demo/bindings", url.Values{"from": {"tag:out"}, "to": {"out:in"}})
	fmt.Fprintln(w, `send {"temperature":21.5} into in`)
	c.do("POST", "/mediation/runtime/demo/components/in/data", "application/json", `{"temperature":21.5}`)
	_, out := c.do("GET", "/mediation/runtime/demo/components/out/data", "", "")
	fmt.Fprintf(w, "out of the chain: %s", out)
	return nil
}

// startServer serves a fresh home and engine on a free local port.
func startServer() string {
	home := sim.MustNew(sim.Config{})
	engine := mediation.NewEngine(mediation.Config{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go http.Serve(ln, httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine}))
	return "http://" + ln.Addr().String()
}

type client struct{ base string }

func (c client) do(method, path, contentType, body string) (int, string) {
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		panic(err.Error())
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err.Error())
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// json, form and get stop the run (a panic that run turns into its error)
// when the server does not answer 200: the example has nothing sensible
// to do after a failed step.
func (c client) json(method, path string, v any) {
	b, _ := json.Marshal(v)
	if status, body := c.do(method, path, "application/json", string(b)); status != http.StatusOK {
		panic(fmt.Sprintf("%s %s: %d %s", method, path, status, body))
	}
}

func (c client) form(method, path string, v url.Values) {
	if status, body := c.do(method, path, "application/x-www-form-urlencoded", v.Encode()); status != http.StatusOK {
		panic(fmt.Sprintf("%s %s: %d %s", method, path, status, body))
	}
}

func (c client) get(path string, v any) {
	status, body := c.do("GET", path, "", "")
	if status != http.StatusOK {
		panic(fmt.Sprintf("GET %s: %d %s", path, status, body))
	}
	if err := json.NewDecoder(bytes.NewBufferString(body)).Decode(v); err != nil {
		panic(err.Error())
	}
}
