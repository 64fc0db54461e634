package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// model is what a client's acknowledged changes made: "zone/<id>" → its
// leftX, "device/<id>" → its name, "chain/<id>" → "".
type model map[string]string

// op is one random change of a client's own things.
type op struct {
	method, path, body string
	apply              func(m model)
}

// randomOp picks a change of client c's things that the model says can be
// made.
func randomOp(r *rand.Rand, c int, m model, n *int) op {
	*n++
	var zones, devices, chains []string
	for k := range m {
		kind, id, _ := strings.Cut(k, "/")
		switch kind {
		case "zone":
			zones = append(zones, id)
		case "device":
			devices = append(devices, id)
		case "chain":
			chains = append(chains, id)
		}
	}
	pick := func(ids []string) string {
		slicesSort(ids)
		return ids[r.IntN(len(ids))]
	}
	switch k := r.IntN(8); {
	case k == 0 || len(zones) == 0:
		id, x := fmt.Sprintf("c%d-z%d", c, *n), r.IntN(500)
		return op{"POST", "/platform/zones/zone", fmt.Sprintf(`{"zoneId":%q,"leftX":%d,"topY":0,"rightX":600,"bottomY":100}`, id, x),
			func(m model) { m["zone/"+id] = fmt.Sprint(x) }}
	case k == 1:
		id, x := pick(zones), r.IntN(500)
		return op{"PUT", "/platform/zones/zone/" + id, fmt.Sprintf(`{"leftX":%d}`, x), func(m model) { m["zone/"+id] = fmt.Sprint(x) }}
	case k == 2 && len(zones) > 1:
		id := pick(zones)
		return op{"DELETE", "/platform/zones/zone/" + id, "", func(m model) { delete(m, "zone/"+id) }}
	case k == 3 || k == 2 || len(devices) == 0:
		id := fmt.Sprintf("c%d-d%d", c, *n)
		return op{"POST", "/platform/devices/device", fmt.Sprintf(`{"deviceId":%q,"type":"iCasa.BinaryLight"}`, id), func(m model) { m["device/"+id] = id }}
	case k == 4:
		id, name := pick(devices), fmt.Sprintf("name-%d", r.IntN(1000))
		return op{"PUT", "/platform/devices/device/" + id, fmt.Sprintf(`{"name":%q}`, name), func(m model) { m["device/"+id] = name }}
	case k == 5:
		id := pick(devices)
		return op{"DELETE", "/platform/devices/device/" + id, "", func(m model) { delete(m, "device/"+id) }}
	case k == 6 || len(chains) == 0:
		id := fmt.Sprintf("c%d-ch%d", c, *n)
		return op{"POST", "/mediation/" + id, "", func(m model) { m["chain/"+id] = "" }}
	default:
		id := pick(chains)
		return op{"DELETE", "/mediation/" + id, "", func(m model) { delete(m, "chain/"+id) }}
	}
}

func slicesSort(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// observe reads client c's things from the server.
func observe(t *testing.T, base string, c int) model {
	t.Helper()
	get := func(path string, v any) {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if err := json.NewDecoder(res.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	m := model{}
	prefix := fmt.Sprintf("c%d-", c)
	var zones []struct {
		ID    string `json:"id"`
		LeftX int    `json:"leftX"`
	}
	get("/platform/zones/zones", &zones)
	for _, z := range zones {
		if strings.HasPrefix(z.ID, prefix) {
			m["zone/"+z.ID] = fmt.Sprint(z.LeftX)
		}
	}
	var devices []struct{ ID, Name string }
	get("/platform/devices/devices", &devices)
	for _, d := range devices {
		if strings.HasPrefix(d.ID, prefix) {
			m["device/"+d.ID] = d.Name
		}
	}
	var chains struct{ Chains []string }
	get("/mediation/", &chains)
	for _, id := range chains.Chains {
		if strings.HasPrefix(id, prefix) {
			m["chain/"+id] = ""
		}
	}
	return m
}

// TestStateSurvivesKill makes random changes from several clients, kills
// the server (SIGKILL) at random moments, 20 times, restarts it on the same
// -state directory, and compares what it holds with a model of every
// acknowledged change: nothing lost, nothing extra. The change a client had
// under way when the server died may or may not have been made.
func TestStateSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server 21 times")
	}
	const clients, rounds = 4, 20
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	models := make([]model, clients)
	for i := range models {
		models[i] = model{}
	}
	counters := make([]int, clients)
	client := &http.Client{Timeout: 10 * time.Second}
	for round := range rounds {
		p := startProc(t, "-state", dir)
		// First, the server holds exactly what was acknowledged, and maybe
		// the change under way at the kill.
		if round > 0 {
			for c := range clients {
				got := observe(t, p.base, c)
				if d := cmp.Diff(models[c], got); d != "" {
					t.Fatalf("round %d, client %d: after the restart (-acknowledged +held):\n%s", round, c, d)
				}
			}
		}
		kill := 5 + r.IntN(40) // acknowledged changes before the kill
		var acked atomic.Int64
		var wg sync.WaitGroup
		uncertain := make([]*op, clients)
		seeds := make([]uint64, clients)
		for c := range clients {
			seeds[c] = r.Uint64()
		}
		for c := range clients {
			wg.Go(func() {
				cr := rand.New(rand.NewPCG(seeds[c], uint64(round)))
				for {
					o := randomOp(cr, c, models[c], &counters[c])
					req, _ := http.NewRequest(o.method, p.base+o.path, strings.NewReader(o.body))
					req.Header.Set("Content-Type", "application/json")
					res, err := client.Do(req)
					if err != nil {
						uncertain[c] = &o // the server died under it
						return
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != http.StatusOK {
						t.Errorf("client %d: %s %s = %d", c, o.method, o.path, res.StatusCode)
						return
					}
					o.apply(models[c])
					if acked.Add(1) == int64(kill) {
						p.kill()
					}
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		// A change under way at the kill counts if the restarted server has
		// it.
		p2 := startProc(t, "-state", dir)
		for c := range clients {
			got := observe(t, p2.base, c)
			if o := uncertain[c]; o != nil && !maps.Equal(got, models[c]) {
				with := maps.Clone(models[c])
				o.apply(with)
				if maps.Equal(got, with) {
					models[c] = with
				}
			}
		}
		p2.kill()
	}
	n := 0
	for _, m := range models {
		n += len(m)
	}
	if n < clients {
		t.Errorf("the clients hold %d things after %d rounds: the test changed too little", n, rounds)
	}
	t.Logf("%d things held by %d clients after %d kills", n, clients, rounds)
	// And the files are what the README says.
	for _, pattern := range []string{"snapshot-*/home.bhv", "snapshot-*/chains.dscilia", "journal-*"} {
		if m, _ := filepath.Glob(filepath.Join(dir, pattern)); len(m) == 0 {
			t.Errorf("no %s in the state directory", pattern)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "scripts")); err != nil {
		t.Errorf("no scripts directory: %v", err)
	}
}

// TestStateKeepsNATSUpdates: a device update acknowledged over NATS is
// journaled as a REST one is: it survives a SIGKILL right after its reply.
func TestStateKeepsNATSUpdates(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server twice")
	}
	dir := t.TempDir()
	p := startProc(t, "-state", dir, "-nats", "127.0.0.1:0")
	call{method: "POST", path: "/platform/devices/device", body: `{"deviceId":"lamp","type":"iCasa.BinaryLight"}`, status: 200}.do(t, p.base)
	nc := natsClient(t, p.nats)
	reply, err := nc.Request("pervasim.default.devices.lamp.set", []byte(`{"name":"Porch lamp"}`), 10*time.Second)
	if err != nil || reply.Header.Get("Pervasim-Status") != "200" {
		t.Fatalf("NATS update = %v %s", err, reply.Data)
	}
	nc.Close()
	p.kill()
	p2 := startProc(t, "-state", dir)
	call{method: "GET", path: "/platform/devices/device/lamp", status: 200, check: func(t *testing.T, d map[string]any) {
		if d["name"] != "Porch lamp" {
			t.Errorf("after the kill the lamp is named %v, want Porch lamp", d["name"])
		}
	}}.do(t, p2.base)
}

// TestStateJournalDamage: after a SIGKILL, a torn write at the journal's
// end is dropped and the server starts with every acknowledged change; a
// record damaged before good ones stops the start, naming the file.
func TestStateJournalDamage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server")
	}
	dir := t.TempDir()
	p := startProc(t, "-state", dir)
	for i := range 5 {
		call{method: "POST", path: "/platform/zones/zone", body: fmt.Sprintf(`{"zoneId":"z%d","leftX":%d,"topY":0,"rightX":600,"bottomY":10}`, i, i), status: 200}.do(t, p.base)
	}
	p.kill()
	journals, _ := filepath.Glob(filepath.Join(dir, "journal-*"))
	var last string
	for _, j := range journals {
		if info, _ := os.Stat(j); info.Size() > 0 {
			last = j
		}
	}
	if last == "" {
		t.Skip("a snapshot took every change before the kill; nothing to damage")
	}
	data, _ := os.ReadFile(last)
	os.WriteFile(last, append(data, 0x40, 0, 0, 0, 0xde, 0xad), 0o644) // a write cut short
	p2 := startProc(t, "-state", dir)
	var zones []struct{ ID string }
	res, err := http.Get(p2.base + "/platform/zones/zones")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(res.Body).Decode(&zones)
	res.Body.Close()
	if len(zones) != 5 {
		t.Errorf("after a torn tail the server holds %d zones, want 5", len(zones))
	}
	// The start kept what it replayed in a snapshot: changes after it go
	// to the new journal.
	for i := 5; i < 8; i++ {
		call{method: "POST", path: "/platform/zones/zone", body: fmt.Sprintf(`{"zoneId":"z%d","leftX":%d,"topY":0,"rightX":600,"bottomY":10}`, i, i), status: 200}.do(t, p2.base)
	}
	p2.kill()

	// Damage before good records: the start fails and says where.
	journals, _ = filepath.Glob(filepath.Join(dir, "journal-*"))
	for _, j := range journals {
		if data, _ := os.ReadFile(j); len(data) > 40 {
			data[10] ^= 0xff
			os.WriteFile(j, data, 0o644)
			var stderr strings.Builder
			err := run(t.Context(), []string{"-addr", "127.0.0.1:0", "-state", dir, "-log", "off"}, io.Discard, &stderr)
			if err == nil || !strings.Contains(err.Error(), filepath.Base(j)) {
				t.Errorf("start on a damaged journal = %v, want an error naming %s", err, filepath.Base(j))
			}
			return
		}
	}
	t.Errorf("no journal with records left to damage (a snapshot took them)")
}

// sseStream opens the event stream of base with the given Last-Event-ID
// (none when empty) and returns a reader of its events: id, event name and
// data; ok is false once the stream ends.
func sseStream(t *testing.T, base, lastID string) (next func() (id, event, data string, ok bool)) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/platform/events", nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return func() (id, event, data string, ok bool) {
		for sc.Scan() {
			l := sc.Text()
			switch {
			case l == "" && event != "":
				return id, event, data, true
			case strings.HasPrefix(l, "id: "):
				id = l[4:]
			case strings.HasPrefix(l, "event: "):
				event = l[7:]
			case strings.HasPrefix(l, "data: "):
				data = l[6:]
			}
		}
		return id, event, data, false
	}
}

// TestStateEventIDsAcrossRestarts: a server restarted from its -state
// directory numbers its events from where the state it loaded left it, not
// from where the last run's stream was; a client that resumes with an id
// of the last run gets a reset even once the new numbers passed it, never
// the events after that number.
func TestStateEventIDsAcrossRestarts(t *testing.T) {
	seq := func(id string) uint64 {
		n, err := strconv.ParseUint(id[strings.LastIndexByte(id, '-')+1:], 10, 64)
		if err != nil {
			t.Fatalf("event id %q does not end with a number", id)
		}
		return n
	}
	set := func(base string, v int) {
		call{method: "PUT", path: "/platform/zones/zone/hall", body: fmt.Sprintf(`{"variables":{"n":%d}}`, v), status: 200}.do(t, base)
	}
	args := []string{"-addr", "127.0.0.1:0", "-state", t.TempDir()}
	base, shutdown := startRun(t, args...)
	next := sseStream(t, base, "")
	call{method: "POST", path: "/platform/zones/zone", body: `{"id":"hall","leftX":0,"topY":0,"rightX":10,"bottomY":10}`, status: 200}.do(t, base)
	for v := range 20 {
		set(base, v)
	}
	old := ""
	for {
		id, event, data, ok := next()
		if !ok {
			t.Fatal("the stream ended before the last change")
		}
		if event == "zone-variable-updated" && strings.Contains(data, `"value":19`) {
			old = id
			break
		}
	}
	shutdown("") // the snapshot holds the zone as it is: fewer events to load
	base, shutdown = startRun(t, args...)
	defer shutdown("")
	next = sseStream(t, base, "")
	for v := 100; ; v++ {
		set(base, v)
		id, _, _, ok := next()
		if !ok {
			t.Fatal("the stream of the second run ended")
		}
		if seq(id) > seq(old)+1 {
			break
		}
		if v == 1000 {
			t.Fatalf("the second run's ids do not pass %s", old)
		}
	}
	next = sseStream(t, base, old)
	set(base, 2000)
	if id, event, _, ok := next(); !ok || event != "reset" {
		t.Errorf("Last-Event-ID %s of the last run: first event %s %s, want a reset", old, id, event)
	}
}

// TestStateDirNotADirectory: a -state naming a file stops the start with
// an error that blames -state (the scripts directory inside it, which is
// made first, was blamed on -scripts, a flag the user never gave).
func TestStateDirNotADirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(t.Context(), []string{"-addr", "127.0.0.1:0", "-state", file, "-log", "off"}, io.Discard, io.Discard)
	if err == nil || !strings.HasPrefix(err.Error(), "-state: ") || !strings.Contains(err.Error(), file) {
		t.Errorf("-state naming a file = %v, want an error blaming -state and naming %s", err, file)
	}
}
