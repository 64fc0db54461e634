package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// startServer runs the binary's run function on a free port and returns its
// base URL. The server is shut down, and run's error checked, at cleanup.
func startServer(t *testing.T, args ...string) string {
	t.Helper()
	return startServerErr(t, io.Discard, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
}

// startServerErr starts run with args as given, its stderr written to
// stderr, and returns the base URL it listens on.
func startServerErr(t *testing.T, stderr io.Writer, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, pw, stderr)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("run: no address line: %v (run: %v)", err, <-done)
	}
	go io.Copy(io.Discard, pr)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run returned %v after shutdown", err)
		}
	})
	return strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
}

type call struct {
	method, path, body string
	status             int
	want               string // JSON the response must equal, when set
	check              func(t *testing.T, got map[string]any)
}

func (c call) do(t *testing.T, base string) {
	t.Helper()
	req, err := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != c.status {
		t.Fatalf("%s %s %s = %d %s, want %d", c.method, c.path, c.body, res.StatusCode, body, c.status)
	}
	if c.want != "" {
		var w, g any
		if err := json.Unmarshal([]byte(c.want), &w); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(body, &g); err != nil {
			t.Fatalf("%s %s: body %q is not JSON", c.method, c.path, body)
		}
		if d := cmp.Diff(w, g); d != "" {
			t.Errorf("%s %s (-want +got):\n%s", c.method, c.path, d)
		}
	}
	if c.check != nil {
		var g map[string]any
		if err := json.Unmarshal(body, &g); err != nil {
			t.Fatalf("%s %s: body %q is not a JSON object", c.method, c.path, body)
		}
		c.check(t, g)
	}
}

// TestSpecExamples walks the spec's own examples, in order, through a real
// server started by run, with the iCasa roots as existing clients use them.
// Where the spec shows an odd result, the contract's answer is expected and
// the row says why.
func TestSpecExamples(t *testing.T) {
	base := startServer(t, "-platform-root", "icasa", "-mediation-root", "cilia", "-tz", "UTC")
	heaterServices := `["fr.liglab.adele.icasa.device.temperature.Heater","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]`
	calls := []call{
		{method: "GET", path: "/healthz", status: 200},
		{method: "GET", path: "/icasa/zones/zones", status: 200, want: `[]`},
		// Zone creation: the contract stores isRoom as sent (the spec's true was a placeholder).
		{method: "POST", path: "/icasa/zones/zone", body: `{"zoneId":"bathroom","name":"bathroom","isRoom":false,"leftX":55,"topY":20,"rightX":315,"bottomY":370}`, status: 200,
			want: `{"id":"bathroom","name":"bathroom","isRoom":false,"leftX":55,"topY":20,"rightX":315,"bottomY":370,"variables":{}}`},
		{method: "POST", path: "/icasa/zones/zone", body: `{"zoneId":"livingroom","name":"livingroom","isRoom":true,"leftX":410,"topY":28,"rightX":655,"bottomY":378}`, status: 200},
		{method: "POST", path: "/icasa/zones/zone", body: `{"zoneId":"kitchen","name":"kitchen","isRoom":true,"leftX":410,"topY":370,"rightX":655,"bottomY":580}`, status: 200},
		{method: "GET", path: "/icasa/zones/zone/bathroom", status: 200,
			want: `{"id":"bathroom","name":"bathroom","isRoom":false,"leftX":55,"topY":20,"rightX":315,"bottomY":370,"variables":{}}`},
		// Zone update, sent with POST as in the spec's example: the sent coordinates come back.
		{method: "POST", path: "/icasa/zones/zone/bathroom", body: `{"id":"bathroom","isRoom":true,"rightX":320,"leftX":50,"name":"bathroom","topY":20,"bottomY":370,"variables":{"Volume":10,"Illuminance":5,"Temperature":295.15}}`, status: 200,
			want: `{"id":"bathroom","name":"bathroom","isRoom":true,"leftX":50,"topY":20,"rightX":320,"bottomY":370,"variables":{"Volume":10,"Illuminance":5,"Temperature":295.15}}`},
		// Device creation: empty name gives the id; sent positions place the device (the spec's -1 was the original ignoring them).
		{method: "POST", path: "/icasa/devices/device", body: `{"deviceId":"Heater-1","name":"","type":"iCASA.Heater","positionX":1,"positionY":1,"properties":{}}`, status: 200,
			want: `{"id":"Heater-1","name":"Heater-1","type":"iCasa.Heater","positionX":1,"positionY":1,"state":"activated","fault":"no","services":` + heaterServices + `,
				"properties":{"heater.powerLevel":0,"heater.maxPowerLevel":1000,"heater.updaterThread.period":5000,"state":"activated","fault":"no"}}`},
		// Device update with fractional positions (the spec sent it to a zone path by mistake; the documented path is used).
		{method: "POST", path: "/icasa/devices/device/Heater-1", body: `{"deviceId":"Heater-1","positionX":100.5,"positionY":150.9}`, status: 200,
			check: func(t *testing.T, d map[string]any) {
				props, _ := d["properties"].(map[string]any)
				if d["positionX"] != 100.0 || d["positionY"] != 150.0 || d["location"] != "bathroom" || props["Location"] != "bathroom" {
					t.Errorf("device after update = %v, want position 100,150 in bathroom", d)
				}
			}},
		{method: "GET", path: "/icasa/devices/devices", status: 200},
		{method: "GET", path: "/icasa/devices/device/Heater-1", status: 200},
		// Person creation: location unknown, the sent position and name.
		{method: "POST", path: "/icasa/persons/person", body: `{"personId":"Paul","name":"Paul","type":"Grandfather","positionX":1,"positionY":1}`, status: 200,
			want: `{"id":"Paul","name":"Paul","type":"Grandfather","location":"unknown","positionX":1,"positionY":1}`},
		// Person update with PUT: the containing zone wins over the sent location.
		{method: "PUT", path: "/icasa/persons/person/Paul", body: `{"personId":"Paul","name":"Paul","type":"Grandfather","positionX":542,"positionY":294,"location":"bathroom"}`, status: 200,
			want: `{"id":"Paul","name":"Paul","type":"Grandfather","location":"livingroom","positionX":542,"positionY":294}`},
		{method: "GET", path: "/icasa/persons/persons", status: 200},
		{method: "GET", path: "/icasa/persons/personTypes", status: 200},
		// Clock update by POST with all three fields: pause is applied and answered (the spec's false was a failed request).
		{method: "POST", path: "/icasa/clocks/clock/default", body: `{"pause":true,"startDate":1366279200000,"factor":2}`, status: 200,
			want: `{"id":"default","startDateStr":"18/04/2013-10:00:00","startDate":1366279200000,"currentDateStr":"18/04/2013-10:00:00","currentTime":1366279200000,"factor":2,"pause":true}`},
		{method: "GET", path: "/icasa/clocks/clock/default", status: 200,
			want: `{"id":"default","startDateStr":"18/04/2013-10:00:00","startDate":1366279200000,"currentDateStr":"18/04/2013-10:00:00","currentTime":1366279200000,"factor":2,"pause":true}`},
		{method: "DELETE", path: "/icasa/devices/device/Heater-1", status: 200},
		{method: "DELETE", path: "/icasa/persons/person/Paul", status: 200},
		{method: "DELETE", path: "/icasa/zones/zone/kitchen", status: 200},
		{method: "DELETE", path: "/icasa/simulation", status: 200},
		{method: "GET", path: "/icasa/zones/zones", status: 200, want: `[]`},
	}
	for _, c := range calls {
		c.do(t, base)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-nope"},
		{"-tz", "Mars/Olympus"},
		{"-platform-root", "x", "-mediation-root", "x"},
		{"-platform-root", "homes"}, // the homes' routes
		{"-mediation-root", "a/b"},
		{"extra"},
		{"-addr", "256.0.0.1:99999"},
	} {
		if err := run(context.Background(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("run(%q) = nil, want an error", args)
		}
	}
}

// TestParseFlagsChecksAllowLists: an -allow-origin entry that is no origin,
// or an -allow-host entry with a scheme or a port, is an error naming the
// flag. The handler ignores such an entry, which no request could match, so
// the server used to start and refuse the page or the name it was meant to
// let in.
func TestParseFlagsChecksAllowLists(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string // the flag the error starts with; "" for no error
	}{
		{[]string{"-allow-origin", "https://app.example.com, http://localhost:3000", "-allow-host", "pervasim.lan, foo.lan"}, ""},
		{[]string{"-allow-origin", "*"}, ""},
		{[]string{"-allow-origin", "app.example.com"}, "-allow-origin"},
		{[]string{"-allow-origin", "https://a.example, b.example"}, "-allow-origin"},
		{[]string{"-allow-host", "pervasim.lan:8080"}, "-allow-host"},
		{[]string{"-allow-host", "http://pervasim.lan"}, "-allow-host"},
	} {
		_, err := parseFlags(tt.args, io.Discard)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want+":")) {
			t.Errorf("parseFlags(%q) = %v, want an error starting with %q", tt.args, err, tt.want)
		}
	}
}

// formCall sends a form body, as curl -d does.
func formCall(t *testing.T, base, method, path, body string, status int, contains string) string {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != status || !strings.Contains(string(b), contains) {
		t.Fatalf("%s %s %s = %d %s, want %d containing %q", method, path, body, res.StatusCode, b, status, contains)
	}
	return string(b)
}

// TestSpecMediationExamples walks the mediation spec's curl examples in
// order under the Cilia root. The spec's HelloMediator type and "unique"
// ports are not built in: the contract answers 400 naming what exists, and
// the walk goes on with built-in types.
func TestSpecMediationExamples(t *testing.T) {
	base := startServer(t, "-platform-root", "icasa", "-mediation-root", "cilia")
	c := "/cilia/HelloWorld"
	formCall(t, base, "POST", c, "", 200, `"ID":"HelloWorld"`)
	formCall(t, base, "GET", "/cilia", "", 200, `{"chains":["HelloWorld"]}`)
	formCall(t, base, "POST", c+"/mediator/HelloMediator/hello-mediator-1", "properties={name=titi}", 400, "enricher")
	formCall(t, base, "POST", c+"/mediator/enricher/hello-mediator-1", "properties={name=titi}", 200, `"Properties":{"name":"titi"}`)
	formCall(t, base, "POST", c+"/adapter/ConsoleAdapter/console-adapter-1", "properties={namespace=titi}", 400, "console")
	formCall(t, base, "POST", c+"/adapter/console/console-adapter-1", "properties={header=titi}", 200, `"Pattern":"out-only"`)
	formCall(t, base, "PUT", c+"/components/hello-mediator-1", "properties={prefix=Hi}", 200, `"Properties":{"name":"titi","prefix":"Hi"}`)
	formCall(t, base, "GET", c+"/components/hello-mediator-1", "", 200, `"Type":"enricher"`)
	formCall(t, base, "GET", c+"/mediators/hello-mediator-1", "", 200, `"ID":"hello-mediator-1"`)
	formCall(t, base, "GET", c+"/adapters/console-adapter-1", "", 200, `"ID":"console-adapter-1"`)
	formCall(t, base, "POST", c+"/bindings", "from=hello-mediator-1:unique&to=console-adapter-1:unique&linker=JMS_Joram&properties={jms.topic=wiki}", 400, "out")
	formCall(t, base, "POST", c+"/bindings", "from=hello-mediator-1:out&to=console-adapter-1:in&linker=JMS_Joram&properties={jms.topic=wiki}", 200, `"linker":"queue"`)
	formCall(t, base, "PUT", c+"/components", "command=copy&from=hello-mediator-1&to=m2", 200, `"ID":"m2"`)
	formCall(t, base, "PUT", c+"/components", "command=replace&from=hello-mediator-1&to=m2", 200, `"ID":"m2"`)
	formCall(t, base, "GET", c, "", 200, `"Bindings":[{"from":"m2:out","to":"console-adapter-1:in","linker":"queue"}]`)
	formCall(t, base, "DELETE", c+"/bindings?from=m2:out&to=console-adapter-1:in", "", 200, "")
	formCall(t, base, "DELETE", c+"/components/hello-mediator-1", "", 200, "")
	formCall(t, base, "DELETE", c+"/mediators/m2", "", 200, "")
	formCall(t, base, "DELETE", c+"/adapters/console-adapter-1", "", 200, "")
	formCall(t, base, "GET", "/cilia/runtime/HelloWorld", "", 200, `{"state":"started"}`)
	formCall(t, base, "PUT", "/cilia/runtime/HelloWorld/stop", "", 200, `"stopped"`)
	formCall(t, base, "PUT", "/cilia/runtime/HelloWorld/start", "", 200, `"started"`)
	formCall(t, base, "DELETE", c, "", 200, "")
	formCall(t, base, "GET", c, "", 404, `"not_found"`)
}

// TestServerScriptsAndEvents starts the binary with a scripts directory and
// checks the script player lists it, and that the event stream carries a
// change made over REST.
func TestServerScriptsAndEvents(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "scripts", "house.bhv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "house.bhv"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	base := startServer(t, "-scripts", dir)
	formCall(t, base, "GET", "/platform/scriptPlayer/scripts", "", 200, `"id":"house.bhv"`)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/platform/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Scan() // retry:
	call{method: "POST", path: "/platform/zones/zone", body: `{"id":"hall","leftX":0,"topY":0,"rightX":10,"bottomY":10}`, status: 200}.do(t, base)
	for sc.Scan() {
		if sc.Text() == "event: zone-added" {
			return
		}
	}
	t.Fatalf("the stream ended without zone-added: %v", sc.Err())
}

// TestDemo starts the server with -demo: the example house is there and
// playing, the thermostat chain runs, and the device adapters check their
// properties at creation.
func TestDemo(t *testing.T) {
	base := startServer(t, "-demo")
	formCall(t, base, "GET", "/platform/zones/zones", "", 200, `"id":"livingroom"`)
	formCall(t, base, "GET", "/platform/scriptPlayer/script/house.bhv", "", 200, `"state":"started"`)
	formCall(t, base, "GET", "/mediation/runtime/thermostat", "", 200, `{"state":"started"}`)
	formCall(t, base, "GET", "/mediation/runtime/types", "", 200, `"name":"device-in"`)
	formCall(t, base, "POST", "/mediation/thermostat/adapter/device-in/x", "properties={devices=ghost}", 400, "ghost")
	formCall(t, base, "POST", "/mediation/thermostat/adapter/device-out/y", "properties={device=livingroom-heater, property=heater.powerLevel, value=3}", 400, "between 0 and 1")
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestExposedWithoutToken checks the warning printed when the server
// listens beyond loopback without a token, and its absence otherwise.
func TestExposedWithoutToken(t *testing.T) {
	for _, tt := range []struct {
		args []string
		warn bool
	}{
		{[]string{"-addr", "0.0.0.0:0"}, true},
		{[]string{"-addr", "0.0.0.0:0", "-token", "t"}, false},
		{[]string{"-addr", "127.0.0.1:0"}, false},
		{[]string{"-addr", "127.0.0.1:0", "-nats", "127.0.0.1:0"}, false},
		{[]string{"-addr", "127.0.0.1:0", "-nats", "0.0.0.0:0"}, true},
		{[]string{"-addr", "127.0.0.1:0", "-nats", "127.0.0.1:0", "-mqtt", ":0"}, true},
	} {
		var stderr syncBuffer
		startServerErr(t, &stderr, tt.args...)
		if got := strings.Contains(stderr.String(), "warning:"); got != tt.warn {
			t.Errorf("run(%q) stderr = %q; want a warning: %v", tt.args, stderr.String(), tt.warn)
		}
	}
}

// TestGuardFlags checks -token, -allow-origin and -allow-host end to end.
func TestGuardFlags(t *testing.T) {
	base := startServer(t, "-token", "abc", "-allow-origin", "https://good.example, https://also.example", "-allow-host", "pervasim.lan")
	send := func(method, path, host, origin, token string) int {
		req, err := http.NewRequest(method, base+path, strings.NewReader(`{"id":"z","leftX":0,"topY":0,"rightX":1,"bottomY":1}`))
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		req.Header.Set("Content-Type", "text/plain")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for _, tt := range []struct {
		method, path, host, origin, token string
		want                              int
	}{
		{"GET", "/healthz", "", "", "", 200},
		{"GET", "/platform/zones/zones", "", "", "", 403},
		{"GET", "/platform/zones/zones", "", "", "abc", 200},
		{"POST", "/platform/zones/zone", "", "https://evil.example", "abc", 403},
		{"POST", "/platform/zones/zone", "", "https://also.example", "abc", 200},
		{"GET", "/platform/zones/zones", "pervasim.lan:8080", "", "abc", 200},
		{"GET", "/platform/zones/zones", "attacker.example", "", "abc", 403},
	} {
		if got := send(tt.method, tt.path, tt.host, tt.origin, tt.token); got != tt.want {
			t.Errorf("%s %s host %q origin %q token %q = %d, want %d", tt.method, tt.path, tt.host, tt.origin, tt.token, got, tt.want)
		}
	}
}

// startRun starts run with args and returns its base URL and a function
// that shuts it down and fails the test unless run returns, without error,
// well within its deadline.
func startRun(t *testing.T, args ...string) (base string, shutdown func(what string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	return strings.TrimSpace(strings.TrimPrefix(line, "listening on ")), func(what string) {
		t.Helper()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run = %v after shutdown", err)
			}
		case <-time.After(15 * time.Second): // a hang, not a speed check
			t.Fatalf("run did not return after shutdown %s", what)
		}
	}
}

// TestShutdownWithClientsConnected: the server shuts down while an event
// stream is open and chains run; run returns well within its deadline.
func TestShutdownWithClientsConnected(t *testing.T) {
	base, shutdown := startRun(t, "-addr", "127.0.0.1:0", "-demo")
	res, err := http.Get(base + "/platform/events")
	if err != nil {
		shutdown("")
		t.Fatal(err)
	}
	defer res.Body.Close()
	shutdown("with an event stream open")
}

// TestSaysWhatItDoes: -h and -version answer and exit 0; the server prints
// what it serves, logs one line per request (as JSON with -log json) on the
// stderr it is given, and GET / leads to the house plan.
func TestSaysWhatItDoes(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, &out, &out); err != nil || !strings.Contains(out.String(), "-addr") {
		t.Errorf("run(-h) = %v, printed %q; want nil and the flags", err, out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"-version"}, &out, io.Discard); err != nil || !strings.HasPrefix(out.String(), "pervasim server ") {
		t.Errorf("run(-version) = %v, printed %q", err, out.String())
	}
	if err := run(context.Background(), []string{"-log", "xml"}, io.Discard, io.Discard); err == nil {
		t.Errorf("run(-log xml) = nil, want an error")
	}

	var stderr syncBuffer
	base := startServerErr(t, &stderr, "-addr", "127.0.0.1:0", "-log", "json")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/simulator" {
		t.Errorf("GET / = %d to %q, want 302 to /simulator", res.StatusCode, res.Header.Get("Location"))
	}
	formCall(t, base, "GET", "/platform/zones/zones", "", 200, "[]")
	var line struct {
		Msg, Method, Path string
		Status            int
		Bytes             int64
		Duration          int64
	}
	// The log is written in batches, every 100 ms: wait for the line.
	found := false
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(10 * time.Second); !found && time.Now().Before(deadline); <-tick.C {
		for _, l := range strings.Split(stderr.String(), "\n") {
			if json.Unmarshal([]byte(l), &line) == nil && line.Path == "/platform/zones/zones" {
				found = line.Msg == "request" && line.Method == "GET" && line.Status == 200 && line.Bytes > 0
			}
		}
	}
	if !found {
		t.Errorf("no request line for GET /platform/zones/zones in %q", stderr.String())
	}
}

// TestPrintsWhatItServes checks the lines printed at start.
func TestPrintsWhatItServes(t *testing.T) {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-token", "tk"}, pw, io.Discard); pw.Close() }()
	r := bufio.NewReader(pr)
	var lines []string
	for range 8 {
		l, err := r.ReadString('\n')
		if err != nil {
			break
		}
		lines = append(lines, l)
	}
	go io.Copy(io.Discard, pr)
	cancel()
	<-done
	text := strings.Join(lines, "")
	for _, want := range []string{"listening on http://127.0.0.1:", "/simulator#token=tk", "/platform/", "/platform/events", "/mediation/", "/homes", "/openapi.json", "/healthz"} {
		if !strings.Contains(text, want) {
			t.Errorf("the start lines %q do not show %q", text, want)
		}
	}
}

// TestPrintedURLsServe: the simulation, event stream and mediation URLs
// printed at start are those served, whatever slashes the roots were given
// with, and with an empty root (the default) too.
func TestPrintedURLsServe(t *testing.T) {
	for _, tt := range []struct {
		name  string
		args  []string
		paths map[string]string // start-line label → path under it that answers 200
	}{
		{"default", nil, map[string]string{"simulation": "zones/zones", "mediation": ""}},
		{"empty roots", []string{"-platform-root", "", "-mediation-root", ""}, map[string]string{"simulation": "zones/zones", "mediation": ""}},
		{"slashes", []string{"-platform-root", "/icasa/", "-mediation-root", "cilia/"}, map[string]string{"simulation": "zones/zones", "mediation": ""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				done <- run(ctx, append([]string{"-addr", "127.0.0.1:0", "-log", "off"}, tt.args...), pw, io.Discard)
				pw.Close()
			}()
			defer func() { cancel(); <-done }()
			r := bufio.NewReader(pr)
			urls := map[string]string{}
			for range 8 {
				l, err := r.ReadString('\n')
				if err != nil {
					break
				}
				f := strings.Fields(l)
				for _, w := range f {
					if strings.HasPrefix(w, "http://") {
						urls[f[0]] = w // "event stream" is keyed "event"
						break
					}
				}
			}
			go io.Copy(io.Discard, pr)
			for label, path := range tt.paths {
				u, ok := urls[label]
				if !ok {
					t.Fatalf("no %q line among %v", label, urls)
				}
				if strings.Contains(strings.TrimPrefix(u, "http://"), "//") {
					t.Errorf("%s URL %q has an empty path segment", label, u)
				}
				resp, err := http.Get(u + path)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("GET %s (the printed %s URL) = %d, want 200", u+path, label, resp.StatusCode)
				}
			}
			if ev, want := urls["event"], strings.TrimSuffix(urls["simulation"], "/")+"/events"; ev != want {
				t.Errorf("event stream URL %q, want %q", ev, want)
			}
		})
	}
}

// TestHomes: the server makes homes of either physics model beside its own,
// each at the same paths under /homes/<name>/, and shuts down with an event
// stream of one of them open.
func TestHomes(t *testing.T) {
	base, shutdown := startRun(t, "-addr", "127.0.0.1:0", "-max-homes", "2")
	for _, c := range []call{
		{method: "POST", path: "/homes/lab", body: `{"physics":"realistic"}`, status: 200,
			want: `{"id":"lab","platform":"/homes/lab/platform","mediation":"/homes/lab/mediation","physics":"realistic"}`},
		{method: "POST", path: "/homes/office", status: 200},
		{method: "POST", path: "/homes/third", status: 503},
		{method: "POST", path: "/homes/lab/platform/zones/zone", body: `{"zoneId":"kitchen","leftX":0,"topY":0,"rightX":100,"bottomY":100}`, status: 200},
		{method: "GET", path: "/homes/office/platform/zones/zones", status: 200, want: `[]`},
		{method: "GET", path: "/platform/zones/zones", status: 200, want: `[]`},
		{method: "POST", path: "/homes/office/mediation/c", status: 200},
		{method: "DELETE", path: "/homes/office", status: 200},
		{method: "GET", path: "/homes/office/mediation/c", status: 404},
	} {
		c.do(t, base)
	}
	res, err := http.Get(base + "/homes/lab/platform/events")
	if err != nil {
		shutdown("")
		t.Fatal(err)
	}
	defer res.Body.Close()
	shutdown("with a home's event stream open")
}

// TestChainsDir: -chains loads every .dscilia file of a directory at start,
// or one file (it loaded nothing from a file); a file that does not load
// stops the server with its name.
func TestChainsDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.dscilia", `<cilia><chain id="relay">
		<adapters><adapter-instance id="in" type="rest-in"/><adapter-instance id="out" type="rest-out"/></adapters>
		<mediators><mediator-instance id="p" type="passthrough"/></mediators>
		<bindings><binding from="in:unique" to="p:unique"/><binding from="p" to="out"/></bindings>
	</chain></cilia>`)
	write("b.dscilia", `<cilia><chain id="cilia-app"><mediators><mediator-instance id="m" type="HelloMediator"/></mediators></chain></cilia>`)
	write("notes.txt", "not a chain")

	err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-chains", dir}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "b.dscilia") || !strings.Contains(err.Error(), "HelloMediator") {
		t.Fatalf("run with an unknown type = %v, want an error naming b.dscilia and the type", err)
	}
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-chains", filepath.Join(dir, "missing.dscilia")}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "missing.dscilia") {
		t.Fatalf("run with a missing file = %v, want an error naming it", err)
	}
	base := startServer(t, "-chains", filepath.Join(dir, "a.dscilia"))
	call{method: "GET", path: "/mediation/", status: 200, want: `{"chains":["relay"]}`}.do(t, base)
	base = startServer(t, "-chains", dir, "-placeholders")
	call{method: "GET", path: "/mediation/", status: 200, want: `{"chains":["relay","cilia-app"]}`}.do(t, base) // in load order
	call{method: "POST", path: "/mediation/runtime/relay/components/in/data", body: `{"n":1}`, status: 200}.do(t, base)
	call{method: "GET", path: "/mediation/runtime/relay/components/out/data", status: 200,
		want: `{"messages":[{"content":{"n":1},"properties":{}}]}`}.do(t, base)

	// With -state, the files are loaded into a new state only: a chain
	// deleted stays deleted across restarts with the same flags.
	state := t.TempDir()
	args := []string{"-addr", "127.0.0.1:0", "-chains", dir, "-placeholders", "-state", state}
	base, shutdown := startRun(t, args...)
	call{method: "DELETE", path: "/mediation/relay", status: 200}.do(t, base)
	shutdown("")
	base, shutdown = startRun(t, args...)
	defer shutdown("")
	call{method: "GET", path: "/mediation/", status: 200, want: `{"chains":["cilia-app"]}`}.do(t, base)
}

// TestBrowsable: the addresses the server prints open in a browser on this
// machine: an unspecified IP becomes 127.0.0.1, others stay as they are.
func TestBrowsable(t *testing.T) {
	for _, tt := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, "127.0.0.1:8080"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 18202}, "127.0.0.1:18202"},
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}, "127.0.0.1:80"},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 80}, "[::1]:80"},
		{&net.TCPAddr{IP: net.IPv4(192, 168, 1, 7), Port: 9}, "192.168.1.7:9"},
	} {
		if got := browsable(tt.addr); got != tt.want {
			t.Errorf("browsable(%v) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

// TestShutdownWithStalledClients: a client that stalls, sending a body it
// never finishes, headers it never ends or never reading a response, does
// not keep the server from shutting down: past a grace its connection is
// cut, and run returns without error (it failed at its 10 s deadline).
func TestShutdownWithStalledClients(t *testing.T) {
	for _, tt := range []struct {
		name, request string
	}{
		{"body never finished", "POST /platform/zones/zone HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"zoneId\":"},
		// net/http closes this one itself at about 5 s, within the deadline:
		// the case keeps the cut from breaking it, it does not catch its loss.
		{"headers never ended", "GET /platform/zones/zones HTTP/1.1\r\nHost: 127.0.0.1\r\n"},
		{"response never read", "GET /mediation/runtime/big/components/out/data HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			base, shutdown := startRun(t, "-addr", "127.0.0.1:0", "-log", "off", "-state", dir)
			if strings.Contains(tt.request, "/big/") {
				fillRestOut(t, base)
			}
			c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
			if err != nil {
				shutdown("")
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, tt.request); err != nil {
				shutdown("")
				t.Fatal(err)
			}
			// The request is taken (or its headers are being read) once the
			// server answers the next, on another connection.
			if res, err := http.Get(base + "/healthz"); err == nil {
				res.Body.Close()
			}
			shutdown("with a client stalled: " + tt.name) // it failed past its deadline
		})
	}
}

// fillRestOut makes a chain "big" whose rest-out "out" keeps 100 messages of
// 200 KiB: 20 MiB to read at its data URL, more than the sockets' buffers
// between server and client hold (about 10 MiB on Linux's loopback), and
// little enough to encode in well under the shutdown's grace on a loaded
// machine under -race.
func fillRestOut(t *testing.T, base string) {
	t.Helper()
	post := func(path, ctype string, body []byte) {
		res, err := http.Post(base+path, ctype, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("POST %s = %d %s", path, res.StatusCode, b)
		}
	}
	post("/mediation/big", "", nil)
	post("/mediation/big/adapter/rest-in/in", "", nil)
	post("/mediation/big/adapter/rest-out/out", "", nil)
	post("/mediation/big/bindings", "application/json", []byte(`{"from":"in:out","to":"out:in"}`))
	post("/mediation/runtime/big/start", "", nil)
	msg := bytes.Repeat([]byte("x"), 200<<10)
	for range 100 {
		post("/mediation/runtime/big/components/in/data", "text/plain", msg)
	}
}

// TestParseFlagsNormalisesRoots: a root is kept as the handler serves it
// (surrounding slashes trimmed, empty meaning the default), so that what
// the server prints and the requests it makes to itself (device updates
// over NATS or MQTT) name the paths it serves, not "//" or "//cilia//".
func TestParseFlagsNormalisesRoots(t *testing.T) {
	tests := []struct {
		args                []string
		platform, mediation string
	}{
		{nil, "platform", "mediation"},
		{[]string{"-platform-root", "icasa", "-mediation-root", "cilia"}, "icasa", "cilia"},
		{[]string{"-mediation-root", ""}, "platform", "mediation"},
		{[]string{"-platform-root", ""}, "platform", "mediation"},
		{[]string{"-platform-root", "/icasa/", "-mediation-root", "/cilia/"}, "icasa", "cilia"},
		{[]string{"-mediation-root", "/"}, "platform", "mediation"},
	}
	for _, tt := range tests {
		o, err := parseFlags(tt.args, io.Discard)
		if err != nil {
			t.Errorf("parseFlags(%q): %v", tt.args, err)
			continue
		}
		if diff := cmp.Diff([]string{tt.platform, tt.mediation}, []string{o.platformRoot, o.mediationRoot}); diff != "" {
			t.Errorf("parseFlags(%q): roots (-want +got):\n%s", tt.args, diff)
		}
	}
}

// TestHomeBoundFlags: -max-zones, -max-devices and -max-persons bound each
// home, the server's own and those under /homes: one more is 503 busy,
// naming the flag.
func TestHomeBoundFlags(t *testing.T) {
	base, shutdown := startRun(t, "-addr", "127.0.0.1:0", "-max-zones", "1", "-max-devices", "1", "-max-persons", "1")
	defer shutdown("")
	busy := func(flag string) func(t *testing.T, got map[string]any) {
		return func(t *testing.T, got map[string]any) {
			if msg, _ := got["error"].(string); got["code"] != "busy" || !strings.Contains(msg, flag) {
				t.Errorf("answer %v, want code busy and an error naming %s", got, flag)
			}
		}
	}
	calls := []call{{method: "POST", path: "/homes/lab", status: 200}}
	for _, root := range []string{"/platform", "/homes/lab/platform"} {
		calls = append(calls,
			call{method: "POST", path: root + "/zones/zone", body: `{"zoneId":"a","leftX":0,"topY":0,"rightX":10,"bottomY":10}`, status: 200},
			call{method: "POST", path: root + "/zones/zone", body: `{"zoneId":"b","leftX":20,"topY":0,"rightX":30,"bottomY":10}`, status: 503, check: busy("-max-zones")},
			call{method: "POST", path: root + "/devices/device", body: `{"deviceId":"a","type":"iCasa.Heater"}`, status: 200},
			call{method: "POST", path: root + "/devices/device", body: `{"deviceId":"b","type":"iCasa.Heater"}`, status: 503, check: busy("-max-devices")},
			call{method: "POST", path: root + "/persons/person", body: `{"personId":"a","type":"Boy"}`, status: 200},
			call{method: "POST", path: root + "/persons/person", body: `{"personId":"b","type":"Boy"}`, status: 503, check: busy("-max-persons")},
			call{method: "DELETE", path: root + "/devices/device/a", status: 200},
			call{method: "POST", path: root + "/devices/device", body: `{"deviceId":"b","type":"iCasa.Heater"}`, status: 200},
		)
	}
	for _, c := range calls {
		c.do(t, base)
	}
}
