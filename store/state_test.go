package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/bridge"
	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
	"github.com/pervasim/pervasim/store"
)

// server is a home, an engine, their REST API and a State over dir, as the
// server wires them.
type server struct {
	mock    *clock.Mock // the wall clock
	home    *sim.Home
	engine  *mediation.Engine
	api     http.Handler
	st      *store.State
	handler http.Handler
}

func open(t testing.TB, dir string) (*server, bool) {
	t.Helper()
	mock := clock.NewMock()
	mock.Set(time.Date(2013, 4, 18, 10, 0, 0, 0, time.UTC))
	home := sim.MustNew(sim.Config{WallClock: mock, Location: time.UTC})
	engine := mediation.NewEngine(mediation.Config{Clock: mock})
	t.Cleanup(func() { engine.Close() })
	b, err := bridge.New(home, engine)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	api := httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine})
	st, restored, err := openState(store.Config{Dir: dir, Home: home, Engine: engine, Handler: api, Location: time.UTC, SnapshotEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return &server{mock: mock, home: home, engine: engine, api: api, st: st, handler: st.Wrap(api)}, restored
}

func (s *server) do(t testing.TB, method, path, ctype, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "localhost"
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	return rec
}

// changes are acknowledged changes of every kind the state keeps.
var changes = []struct{ method, path, ctype, body string }{
	{"POST", "/platform/zones/zone", "application/json", `{"zoneId":"kitchen","leftX":0,"topY":0,"rightX":200,"bottomY":200}`},
	{"POST", "/platform/zones/zone", "application/json", `{"zoneId":"hall","leftX":300,"topY":0,"rightX":400,"bottomY":200,"variables":{"Temperature":290}}`},
	{"POST", "/platform/devices/device", "application/json", `{"deviceId":"heater","type":"iCasa.Heater","positionX":50,"positionY":50}`},
	{"PUT", "/platform/devices/device/heater", "application/json", `{"properties":{"heater.powerLevel":0.7},"name":"Big heater"}`},
	{"POST", "/platform/devices/device", "application/json", `{"deviceId":"lamp","type":"iCasa.BinaryLight"}`},
	// Device adapters naming a device and a zone deleted afterwards (the
	// zone by the restored server, below): the saved chain loads again.
	{"POST", "/mediation/wired", "", ""},
	{"POST", "/mediation/wired/adapter/device-out/switch", "application/x-www-form-urlencoded", "properties={device=lamp; property=binaryLight.powerStatus}"},
	{"POST", "/mediation/wired/adapter/device-in/watch", "application/x-www-form-urlencoded", "properties={devices=lamp; zone=hall; property=power_status}"},
	{"DELETE", "/platform/devices/device/lamp", "", ""},
	{"POST", "/platform/persons/person", "application/json", `{"personId":"ada","type":"Woman","positionX":320,"positionY":20}`},
	{"PUT", "/platform/clocks/clock/default", "application/json", `{"factor":30,"pause":true}`},
	{"PUT", "/platform/environment", "application/json", `{"sky":"overcast","latitude":48.85}`},
	{"POST", "/mediation/relay", "", ""},
	{"POST", "/mediation/relay/adapter/rest-in/in", "", ""},
	{"POST", "/mediation/relay/mediator/enricher/tag", "application/x-www-form-urlencoded", "properties={site=lab}"},
	{"POST", "/mediation/relay/adapter/rest-out/out", "", ""},
	{"POST", "/mediation/relay/bindings", "application/x-www-form-urlencoded", "from=in:out&to=tag:in"},
	{"POST", "/mediation/relay/bindings", "application/x-www-form-urlencoded", "from=tag:out&to=out:in&linker=queue"},
	{"POST", "/mediation/idle", "", ""},
	{"PUT", "/mediation/runtime/idle/stop", "", ""},
	{"POST", "/mediation/?placeholders=true", "application/xml", `<cilia><chain id="cilia"><mediators><mediator-instance id="m" type="Mock"/></mediators></chain></cilia>`},
}

// view reads what the changes above change.
func view(t *testing.T, s *server) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, p := range []string{"/platform/zones/zones", "/platform/devices/devices", "/platform/persons/persons", "/platform/environment",
		"/mediation/", "/mediation/relay", "/mediation/runtime/relay", "/mediation/runtime/idle", "/mediation/cilia", "/mediation/wired", "/mediation/runtime/wired"} {
		rec := s.do(t, "GET", p, "", "")
		var v any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("GET %s: %v", p, err)
		}
		out[p] = v
	}
	c := s.home.Clock()
	out["clock"] = []any{c.StartDate, c.CurrentTime, c.Factor, c.Pause}
	return out
}

func apply(t *testing.T, s *server) {
	t.Helper()
	for _, c := range changes {
		if rec := s.do(t, c.method, c.path, c.ctype, c.body); rec.Code != 200 {
			t.Fatalf("%s %s = %d %s", c.method, c.path, rec.Code, rec.Body)
		}
	}
	// A refused change is not kept: not even an adapter naming a device
	// that does not exist, which a chain loaded from a snapshot may name
	// (a journal replays requests, refused ones too: they must be refused
	// again).
	if rec := s.do(t, "POST", "/platform/zones/zone", "application/json", `{"zoneId":"kitchen","leftX":0,"topY":0,"rightX":1,"bottomY":1}`); rec.Code != 409 {
		t.Fatalf("duplicate zone = %d", rec.Code)
	}
	if rec := s.do(t, "POST", "/mediation/wired/adapter/device-out/nothing", "application/x-www-form-urlencoded", "properties={device=nope}"); rec.Code != 400 {
		t.Fatalf("a device-out naming no device = %d", rec.Code)
	}
}

// ignoreDerived drops what differs between a home and its restoration by
// nature: creation times and uuids of components, and the event counters.
// openSame opens dir and fails the test unless it restored the state want
// (a view without derived values); what names the case. The caller closes
// what it returns.
func openSame(t *testing.T, dir string, want map[string]any, what string) *server {
	t.Helper()
	s, restored := open(t, dir)
	if !restored {
		t.Fatalf("%s: nothing restored", what)
	}
	if d := cmp.Diff(want, ignoreDerived(view(t, s))); d != "" {
		t.Errorf("%s (-before +after):\n%s", what, d)
	}
	return s
}

func ignoreDerived(v map[string]any) map[string]any {
	b, _ := json.Marshal(v)
	s := string(b)
	for _, key := range []string{"created", "uuid"} {
		for {
			i := strings.Index(s, `"`+key+`":"`)
			if i < 0 {
				break
			}
			j := strings.Index(s[i+len(key)+4:], `"`)
			s = s[:i] + `"` + key + `":"-"` + s[i+len(key)+4+j+1:]
		}
	}
	var out map[string]any
	json.Unmarshal([]byte(s), &out)
	return out
}

func TestStateSurvivesRestart(t *testing.T) {
	for _, tt := range []struct {
		name  string
		close bool
	}{{"closed: from the last snapshot", true}, {"killed: from the journal", false}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s, restored := open(t, dir)
			if restored {
				t.Fatal("an empty directory restored something")
			}
			apply(t, s)
			want := ignoreDerived(view(t, s))
			if tt.close {
				if err := s.st.Close(); err != nil {
					t.Fatal(err)
				}
			}
			s2 := openSame(t, dir, want, "restored")
			defer s2.st.Close()
			// The restored server goes on, and restores again.
			if rec := s2.do(t, "DELETE", "/platform/zones/zone/hall", "", ""); rec.Code != 200 {
				t.Fatal(rec.Body)
			}
			if err := s2.st.Snapshot(); err != nil {
				t.Fatal(err)
			}
			want = ignoreDerived(view(t, s2))
			s3 := openSame(t, dir, want, "restored twice")
			defer s3.st.Close()
		})
	}
}

// TestStateFiles: the snapshot is a .bhv script and a DSCilia file people
// can read.
func TestStateFiles(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir)
	apply(t, s)
	if err := s.st.Close(); err != nil {
		t.Fatal(err)
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, "snapshot-*"))
	if len(snaps) != 1 {
		t.Fatalf("snapshots %v, want one", snaps)
	}
	home, _ := os.ReadFile(filepath.Join(snaps[0], "home.bhv"))
	chains, _ := os.ReadFile(filepath.Join(snaps[0], "chains.dscilia"))
	for _, want := range []string{`<create-zone id="kitchen"`, `<create-device id="heater"`, `<create-person id="ada"`} {
		if !strings.Contains(string(home), want) {
			t.Errorf("home.bhv lacks %s:\n%s", want, home)
		}
	}
	for _, want := range []string{`<chain id="relay">`, `type="enricher"`, `linker="queue"`} {
		if !strings.Contains(string(chains), want) {
			t.Errorf("chains.dscilia lacks %s:\n%s", want, chains)
		}
	}
}

// TestStateDamage: a torn last write of the journal is dropped; damage
// before good records stops the start, naming the file.
func TestStateDamage(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir)
	apply(t, s)
	want := ignoreDerived(view(t, s))
	journals, _ := filepath.Glob(filepath.Join(dir, "journal-*"))
	last := journals[len(journals)-1]
	data, _ := os.ReadFile(last)

	torn := filepath.Join(t.TempDir(), "torn")
	os.CopyFS(torn, os.DirFS(dir))
	os.WriteFile(filepath.Join(torn, filepath.Base(last)), append(data, 0x20, 0, 0, 0, 1, 2), 0o644)
	openSame(t, torn, want, "after a torn tail").st.Close()

	bad := filepath.Join(t.TempDir(), "bad")
	os.CopyFS(bad, os.DirFS(dir))
	data[20] ^= 0xff
	os.WriteFile(filepath.Join(bad, filepath.Base(last)), data, 0o644)
	home := sim.MustNew(sim.Config{})
	engine := mediation.NewEngine(mediation.Config{})
	defer engine.Close()
	_, _, err := openState(store.Config{Dir: bad, Home: home, Engine: engine, Handler: httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine})})
	if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(last)) {
		t.Errorf("Open of a damaged journal = %v, want ErrCorrupt naming it", err)
	}
}

// TestStateKeepsEveryPath: changes to things whose ids are words the
// journal skips elsewhere ("data", "script") are kept, and refused changes
// whose paths hold escapes (a space, "?", "/") come back refused, without
// a panic, from the journal.
func TestStateKeepsEveryPath(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir)
	for _, c := range []struct {
		method, path, ctype, body string
		code                      int
	}{
		{"POST", "/platform/zones/zone", "application/json", `{"zoneId":"data","leftX":0,"topY":0,"rightX":10,"bottomY":10}`, 200},
		{"POST", "/platform/zones/zone", "application/json", `{"zoneId":"a","leftX":20,"topY":0,"rightX":30,"bottomY":10}`, 200},
		{"POST", "/platform/devices/device", "application/json", `{"deviceId":"data","type":"iCasa.Heater"}`, 200},
		{"PUT", "/platform/devices/device/data", "application/json", `{"state":"deactivated"}`, 200},
		{"POST", "/platform/devices/device", "application/json", `{"deviceId":"script","type":"iCasa.Heater"}`, 200},
		{"PUT", "/platform/devices/device/script", "application/json", `{"state":"deactivated"}`, 200},
		{"DELETE", "/platform/zones/zone/data", "", "", 200},
		{"POST", "/mediation/data", "", "", 200},
		{"POST", "/mediation/data/mediator/passthrough/data", "", "", 200},
		{"POST", "/mediation/important", "", "", 200},
		{"PUT", "/platform/zones/zone/a%20b", "application/json", `{"name":"refused"}`, 404},
		{"PUT", "/platform/zones/zone/a%3Fx", "application/json", `{"name":"refused"}`, 404},
		{"DELETE", "/mediation/important%3F", "", "", 400},
		{"DELETE", "/mediation/important%2Fx", "", "", 400},
		// Refused as sent; decoded, it would name a route that deletes m:
		// the journal replays it as it was sent.
		{"POST", "/mediation/data/mediator/passthrough/m", "", "", 200},
		{"DELETE", "/mediation/data%2Fcomponents%2Fm", "", "", 400},
	} {
		if rec := s.do(t, c.method, c.path, c.ctype, c.body); rec.Code != c.code {
			t.Fatalf("%s %s = %d %s, want %d", c.method, c.path, rec.Code, rec.Body, c.code)
		}
	}
	want := ignoreDerived(view(t, s))
	paths := []string{"/platform/devices/device/data", "/platform/devices/device/script", "/platform/zones/zone/a", "/mediation/data", "/mediation/data/components"}
	for _, p := range paths {
		want[p] = s.do(t, "GET", p, "", "").Body.String()
	}
	s2, _ := open(t, dir) // from the journal: s was not closed
	defer s2.st.Close()
	got := ignoreDerived(view(t, s2))
	for _, p := range paths {
		got[p] = s2.do(t, "GET", p, "", "").Body.String()
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("restored (-before +after):\n%s", d)
	}
}

// TestSnapshotOfAnyText: what the API accepts, snapshots can hold: odd but
// legal names, and any text in property values (device and component);
// names a script cannot carry are refused, so snapshots never fail.
func TestSnapshotOfAnyText(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir)
	for _, c := range []struct {
		method, path, ctype, body string
		code                      int
	}{
		{"POST", "/platform/zones/zone", "application/json", `{"zoneId":"z","name":"tab\there\nand <&>","leftX":0,"topY":0,"rightX":10,"bottomY":10}`, 200},
		{"POST", "/platform/zones/zone", "application/json", `{"zoneId":"bad","name":"a\u0001b","leftX":0,"topY":0,"rightX":10,"bottomY":10}`, 400},
		{"POST", "/platform/devices/device", "application/json", `{"deviceId":"d","type":"iCasa.Heater","properties":{"note":"bell\u0007"}}`, 200},
		{"POST", "/mediation/c", "", "", 200},
		{"POST", "/mediation/c/mediator/enricher/e", "application/json", `{"properties":{"ctl":"a\u0001b","m":{"k\u0002":"v"}}}`, 200},
		{"POST", "/mediation/c/mediator/enricher/bad", "application/json", `{"properties":{"c\u0001tl":"v"}}`, 400},
	} {
		if rec := s.do(t, c.method, c.path, c.ctype, c.body); rec.Code != c.code {
			t.Fatalf("%s %s = %d %s, want %d", c.method, c.path, rec.Code, rec.Body, c.code)
		}
	}
	want := ignoreDerived(view(t, s))
	want["component"] = s.do(t, "GET", "/mediation/c/components/e", "", "").Body.String()
	if err := s.st.Close(); err != nil {
		t.Fatalf("the last snapshot: %v", err)
	}
	s2, _ := open(t, dir)
	defer s2.st.Close()
	got := ignoreDerived(view(t, s2))
	got["component"] = s2.do(t, "GET", "/mediation/c/components/e", "", "").Body.String()
	if d := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == `["component"]` }, cmp.Ignore())); d != "" {
		t.Errorf("restored (-before +after):\n%s", d)
	}
	if !strings.Contains(got["component"].(string), `"ctl":"a\u0001b"`) {
		t.Errorf("restored component: %s", got["component"])
	}
}

// TestStateJournalsWhole: the journals after the snapshot must all be
// there, each whole but for what a crash leaves (a torn tail with no change
// after it, a last journal cut while it was made); other damage stops the
// start with an error naming the file.
func TestStateJournalsWhole(t *testing.T) {
	base := t.TempDir()
	s, _ := open(t, base)
	if err := s.st.Snapshot(); err != nil { // snapshot-2, journal-2
		t.Fatal(err)
	}
	zone := func(id string, x int) string {
		return fmt.Sprintf(`{"zoneId":%q,"leftX":%d,"topY":0,"rightX":%d,"bottomY":10}`, id, x, x+5)
	}
	if rec := s.do(t, "POST", "/platform/zones/zone", "application/json", zone("z1", 0)); rec.Code != 200 {
		t.Fatal(rec.Body)
	}
	// Journals 3 and 4 as a server writes them between two snapshots: a
	// header, then changes.
	for g, id := range map[int]string{3: "z2", 4: "z3"} {
		j, err := store.OpenJournal(filepath.Join(base, fmt.Sprintf("journal-%09d", g)), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		change, _ := json.Marshal(map[string]any{"method": "POST", "path": "/platform/zones/zone", "contentType": "application/json", "body": []byte(zone(id, 10*g))})
		for _, p := range [][]byte{[]byte(fmt.Sprintf(`{"journal":%d}`, g)), change} {
			if _, err := j.Append(p); err != nil {
				t.Fatal(err)
			}
		}
		j.Close()
	}
	name := func(g int) string { return fmt.Sprintf("journal-%09d", g) }
	cut := func(n int64) func(string) error {
		return func(p string) error {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.Truncate(p, max(fi.Size()-n, 0))
		}
	}
	headerOnly := func(p string) error { // a journal made, no change in it yet
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n := 8 + (int(data[0]) | int(data[1])<<8)
		return os.Truncate(p, int64(n))
	}
	for _, tt := range []struct {
		name   string
		file   string
		damage func(path string) error
		zones  []string // restored; nil: the start fails naming file
		names  string   // the file the error names
	}{
		{"intact", "", nil, []string{"z1", "z2", "z3"}, ""},
		{"the snapshot removed", "snapshot-000000002", os.RemoveAll, nil, "snapshot-000000002"},
		{"a journal in the middle removed", name(3), os.Remove, nil, name(3)},
		{"the snapshot's journal removed", name(2), os.Remove, nil, name(2)},
		{"a journal before others cut", name(3), cut(5), nil, name(3)},
		{"the snapshot's journal emptied", name(2), cut(1 << 20), nil, name(2)},
		{"a journal before others emptied", name(3), cut(1 << 20), nil, name(3)},
		{"the last journal torn", name(4), cut(5), []string{"z1", "z2"}, ""},
		{"the last journal cut while it was made", name(4), cut(1 << 20), []string{"z1", "z2"}, ""},
		{"a journal torn, the next one just made", name(3), func(p string) error {
			if err := headerOnly(filepath.Join(filepath.Dir(p), name(4))); err != nil {
				return err
			}
			return cut(5)(p)
		}, []string{"z1"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
				t.Fatal(err)
			}
			if tt.damage != nil {
				if err := tt.damage(filepath.Join(dir, tt.file)); err != nil {
					t.Fatal(err)
				}
			}
			home := sim.MustNew(sim.Config{WallClock: clock.NewMock()})
			engine := mediation.NewEngine(mediation.Config{})
			defer engine.Close()
			st, _, err := openState(store.Config{Dir: dir, Home: home, Engine: engine, Handler: httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine}), SnapshotEvery: time.Hour})
			if tt.zones == nil {
				if !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), tt.names) {
					t.Fatalf("Open = %v, want ErrCorrupt naming %s", err, tt.names)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var got []string
			for _, z := range home.Zones() {
				got = append(got, z.ID)
			}
			if d := cmp.Diff(tt.zones, got); d != "" {
				t.Errorf("zones (-want +got):\n%s", d)
			}
		})
	}
}

// TestStateClockAsAChangeLeftIt: a pause (or a new factor) comes back at
// the simulated instant it was made, not at the instant of the replay.
func TestStateClockAsAChangeLeftIt(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir)
	if rec := s.do(t, "PUT", "/platform/clocks/clock/default", "application/json", `{"startDate":1366279200000,"factor":3600}`); rec.Code != 200 {
		t.Fatal(rec.Body)
	}
	s.mock.Add(2 * time.Second) // two simulated hours
	if rec := s.do(t, "PUT", "/platform/clocks/clock/default", "application/json", `{"pause":true}`); rec.Code != 200 {
		t.Fatal(rec.Body)
	}
	paused := s.home.Clock()
	if paused.CurrentTime != 1366279200000+2*3600*1000 {
		t.Fatalf("paused at %d", paused.CurrentTime)
	}
	s2, _ := open(t, dir) // from the journal: s was not closed
	defer s2.st.Close()
	got := s2.home.Clock()
	if d := cmp.Diff([]any{paused.StartDate, paused.CurrentTime, paused.Factor, paused.Pause}, []any{got.StartDate, got.CurrentTime, got.Factor, got.Pause}); d != "" {
		t.Errorf("clock after the restart (-paused +restored):\n%s", d)
	}

	// Resumed with a new factor, it runs on from where it stood.
	if rec := s2.do(t, "PUT", "/platform/clocks/clock/default", "application/json", `{"pause":false,"factor":60}`); rec.Code != 200 {
		t.Fatal(rec.Body)
	}
	s2.mock.Add(time.Second)
	want := s2.home.Clock()
	s3, _ := open(t, dir)
	defer s3.st.Close()
	if got := s3.home.Clock(); got.CurrentTime != paused.CurrentTime || got.Factor != 60 || got.Pause || want.CurrentTime != paused.CurrentTime+60*1000 {
		t.Errorf("after resuming: restored %+v, want running at factor 60 from %d (before the kill: %+v)", got, paused.CurrentTime, want)
	}
}

// fullScripts is a scripts directory whose disk fills up on demand.
type fullScripts struct {
	*store.ScriptDir
	full atomic.Bool
}

func (f *fullScripts) Write(name string, src []byte) (httpapi.ScriptFile, error) {
	if f.full.Load() {
		return httpapi.ScriptFile{}, errors.New("no space left on device")
	}
	return f.ScriptDir.Write(name, src)
}

// TestStateScriptOnAFullDisk: a script the scripts directory cannot take
// is refused (507), the player keeps what it had, and the journal does not
// replay the refused upload once there is room.
func TestStateScriptOnAFullDisk(t *testing.T) {
	dir := t.TempDir()
	script := func(minutes int) string {
		return fmt.Sprintf(`<behavior startdate="15/01/2024-06:00:00"><delay value="%d" unit="m"/></behavior>`, minutes)
	}
	start := func() (*server, *fullScripts) {
		sd, err := store.NewScriptDir(filepath.Join(dir, "scripts"))
		if err != nil {
			t.Fatal(err)
		}
		files := &fullScripts{ScriptDir: sd}
		home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
		engine := mediation.NewEngine(mediation.Config{})
		t.Cleanup(func() { engine.Close() })
		api := httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine, Scripts: files})
		st, _, err := openState(store.Config{Dir: dir, Home: home, Engine: engine, Handler: api, Location: time.UTC, SnapshotEvery: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return &server{home: home, engine: engine, api: api, st: st, handler: st.Wrap(api)}, files
	}
	upload := func(s *server, id, src string) *httptest.ResponseRecorder {
		return s.do(t, "POST", "/platform/scriptPlayer/script?id="+id, "application/xml", src)
	}
	lengths := func(s *server) map[string]int64 {
		out := map[string]int64{}
		for _, info := range s.home.Scripts() {
			out[info.ID] = info.ExecutionTime
		}
		return out
	}
	s, files := start()
	if rec := upload(s, "a.bhv", script(1)); rec.Code != 200 {
		t.Fatal(rec.Body)
	}
	files.full.Store(true)
	for _, c := range []struct{ id, src string }{{"b.bhv", script(2)}, {"a.bhv", script(3)}} {
		if rec := upload(s, c.id, c.src); rec.Code != http.StatusInsufficientStorage || !strings.Contains(rec.Body.String(), `"code":"insufficient_storage"`) {
			t.Errorf("upload of %s on a full disk = %d %s, want 507", c.id, rec.Code, rec.Body)
		}
	}
	want := map[string]int64{"a.bhv": 60_000}
	if d := cmp.Diff(want, lengths(s)); d != "" {
		t.Errorf("scripts after the refusals (-want +got):\n%s", d)
	}
	s2, _ := start() // from the journal, the disk free again
	defer s2.st.Close()
	if d := cmp.Diff(want, lengths(s2)); d != "" {
		t.Errorf("scripts after a restart (-want +got):\n%s", d)
	}
}

// reopen opens dir as a restart after a kill -9 would: a new home and
// engine, the journal replayed.
func reopen(t *testing.T, dir string) error { return reopenAs(t, dir, sim.PhysicsContract) }

// reopenAs is reopen with a home of that physics model.
func reopenAs(t *testing.T, dir string, physics sim.Physics) error {
	t.Helper()
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC, Physics: physics})
	engine := mediation.NewEngine(mediation.Config{})
	defer engine.Close()
	st, _, err := openState(store.Config{Dir: dir, Home: home, Engine: engine, Handler: httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine}), SnapshotEvery: time.Hour})
	if err == nil {
		st.Close()
	}
	return err
}

// TestStateCrashWhileMakingAJournal: a journal left empty by a crash while
// it was made (at the first start, or at a snapshot) is made again at the
// restart, so that a second crash later leaves a directory that starts.
func TestStateCrashWhileMakingAJournal(t *testing.T) {
	zone := func(id string, x int) string {
		return fmt.Sprintf(`{"zoneId":%q,"leftX":%d,"topY":0,"rightX":%d,"bottomY":10}`, id, x, x+5)
	}
	t.Run("the first journal", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "journal-000000001"), nil, 0o644)
		s, _ := open(t, dir)
		s.do(t, "POST", "/platform/zones/zone", "application/json", zone("z", 0))
		if err := reopen(t, dir); err != nil {
			t.Fatalf("the second restart: %v", err)
		}
	})
	t.Run("a snapshot's journal", func(t *testing.T) {
		dir := t.TempDir()
		s, _ := open(t, dir)
		if err := s.st.Snapshot(); err != nil { // snapshot-2, journal-2
			t.Fatal(err)
		}
		s.do(t, "POST", "/platform/zones/zone", "application/json", zone("z", 0))
		os.WriteFile(filepath.Join(dir, "journal-000000003"), nil, 0o644) // the next snapshot's, cut
		s2, _ := open(t, dir)
		s2.do(t, "POST", "/platform/zones/zone", "application/json", zone("y", 20))
		if err := reopen(t, dir); err != nil {
			t.Fatalf("the second restart: %v", err)
		}
	})
}

// TestStateOldFormat: a state directory of a version whose journals had
// no header (a snapshot without "format", its journal empty after a clean
// shutdown or holding changes after a kill) starts.
func TestStateOldFormat(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir)
	apply(t, s)
	if err := s.st.Close(); err != nil {
		t.Fatal(err)
	}
	want := ignoreDerived(view(t, s))
	snaps, _ := filepath.Glob(filepath.Join(dir, "snapshot-*"))
	journals, _ := filepath.Glob(filepath.Join(dir, "journal-*"))
	if len(snaps) != 1 || len(journals) != 1 {
		t.Fatalf("snapshots %v, journals %v", snaps, journals)
	}
	metaPath := filepath.Join(snaps[0], "meta.json")
	var m map[string]any
	data, _ := os.ReadFile(metaPath)
	json.Unmarshal(data, &m)
	delete(m, "format")
	data, _ = json.Marshal(m)
	os.WriteFile(metaPath, data, 0o644)
	os.WriteFile(journals[0], nil, 0o644) // no header
	openSame(t, dir, want, "restored from the old format").st.Close()
}

// TestStateClockRecordWhileEventsAreDelivered: a clock change is journaled
// with the clock it left even while another goroutine is delivering the
// home's events (when an observer would only hear of it later).
func TestStateClockRecordWhileEventsAreDelivered(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir)
	if rec := s.do(t, "PUT", "/platform/clocks/clock/default", "application/json", `{"startDate":1366279200000,"factor":3600}`); rec.Code != 200 {
		t.Fatal(rec.Body)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.home.Observe(func(e sim.Event) {
		if e.Type == sim.EventZoneAdded {
			once.Do(func() { close(entered); <-release })
		}
	})
	done := make(chan struct{})
	go func() { defer close(done); s.home.CreateZone(sim.ZoneSpec{ID: "z", RightX: 10, BottomY: 10}) }()
	<-entered // events are being delivered, on another goroutine
	s.mock.Add(2 * time.Second)
	if rec := s.do(t, "PUT", "/platform/clocks/clock/default", "application/json", `{"pause":true}`); rec.Code != 200 {
		t.Fatal(rec.Body)
	}
	paused := s.home.Clock()
	close(release)
	<-done
	s2, _ := open(t, dir)
	defer s2.st.Close()
	if got := s2.home.Clock(); got.CurrentTime != paused.CurrentTime || !got.Pause {
		t.Errorf("restored clock at %d, paused %v; want paused at %d", got.CurrentTime, got.Pause, paused.CurrentTime)
	}
}

// TestStateClockRecordAfterASnapshot: a clock change whose clock record is
// journaled after a snapshot switched journals (the snapshot waiting for
// the change's turn) does not set the clock back to it at replay: the
// snapshot, taken later, holds the later time.
func TestStateClockRecordAfterASnapshot(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir)
	if rec := s.do(t, "PUT", "/platform/clocks/clock/default", "application/json", `{"startDate":1366279200000,"factor":1}`); rec.Code != 200 {
		t.Fatal(rec.Body)
	}
	inA, goA := make(chan struct{}), make(chan struct{})
	inB, goB := make(chan struct{}), make(chan struct{})
	h := s.st.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.api.ServeHTTP(w, r)
		switch r.Header.Get("X-Step") {
		case "A":
			close(inA)
			<-goA
		case "B":
			close(inB)
			<-goB
		}
	}))
	do := func(step, method, path, body string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Host = "localhost"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Step", step)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Error(rec.Body)
		}
	}
	journal := func(g int) string { return filepath.Join(dir, fmt.Sprintf("journal-%09d", g)) }
	size := func(p string) int64 {
		fi, err := os.Stat(p)
		if err != nil {
			return -1
		}
		return fi.Size()
	}
	doneA, doneB, snap := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() { defer close(doneA); do("A", "PUT", "/platform/clocks/clock/default", `{"factor":3600}`) }()
	<-inA // A holds its turn
	before := size(journal(1))
	go func() {
		defer close(doneB)
		do("B", "POST", "/platform/zones/zone", `{"zoneId":"z","leftX":0,"topY":0,"rightX":10,"bottomY":10}`)
	}()
	for size(journal(1)) == before { // B is journaled and waits for its turn
		runtime.Gosched()
	}
	go func() { snap <- s.st.Snapshot() }()
	for size(journal(2)) <= 0 { // the snapshot made its journal
		runtime.Gosched()
	}
	// Changes go to journal 2 once the snapshot switched to it: send some
	// until one lands there (they wait for their turns, after A's).
	var others sync.WaitGroup
	for i := 0; ; i++ {
		one, two := size(journal(1)), size(journal(2))
		others.Add(1)
		go func() {
			defer others.Done()
			do("", "POST", "/platform/zones/zone", fmt.Sprintf(`{"zoneId":"c%d","leftX":20,"topY":0,"rightX":30,"bottomY":10}`, i))
		}()
		for size(journal(1)) == one && size(journal(2)) == two {
			runtime.Gosched()
		}
		if size(journal(2)) > two {
			break
		}
	}
	close(goA) // A's clock record goes to journal 2
	<-doneA
	<-inB
	s.mock.Add(time.Second) // an hour passes before the snapshot's turn
	close(goB)
	<-doneB
	if err := <-snap; err != nil {
		t.Fatal(err)
	}
	others.Wait()
	live := s.home.Clock()
	s2, _ := open(t, dir) // a kill -9 right after the snapshot
	defer s2.st.Close()
	if got := s2.home.Clock(); got.CurrentTime != live.CurrentTime {
		t.Errorf("restored at %d, the snapshot's time was %d: %d ms set back", got.CurrentTime, live.CurrentTime, live.CurrentTime-got.CurrentTime)
	}
}

// TestStateKeepsComponentIdentities: components come back with the UUIDs
// and creation dates they had, from a snapshot and from the journal.
func TestStateKeepsComponentIdentities(t *testing.T) {
	for _, close := range []bool{true, false} {
		t.Run(map[bool]string{true: "from the snapshot", false: "from the journal"}[close], func(t *testing.T) {
			dir := t.TempDir()
			s, _ := open(t, dir)
			for _, c := range []struct{ method, path, ctype, body string }{
				{"POST", "/mediation/c", "", ""},
				{"POST", "/mediation/c/adapter/rest-in/in", "", ""},
				{"PUT", "/mediation/c/components", "application/x-www-form-urlencoded", "command=copy&from=in&to=in2"},
				{"POST", "/mediation/?placeholders=true", "application/xml", `<cilia><chain id="x"><mediators><mediator-instance id="m" type="Mock"/></mediators></chain></cilia>`},
			} {
				s.mock.Add(time.Minute) // creation dates apart from the restart's
				if rec := s.do(t, c.method, c.path, c.ctype, c.body); rec.Code != 200 {
					t.Fatalf("%s %s = %d %s", c.method, c.path, rec.Code, rec.Body)
				}
			}
			paths := []string{"/mediation/c/components/in", "/mediation/c/components/in2", "/mediation/x/components/m"}
			want := map[string]string{}
			for _, p := range paths {
				want[p] = s.do(t, "GET", p, "", "").Body.String()
			}
			if close {
				if err := s.st.Close(); err != nil {
					t.Fatal(err)
				}
			}
			s2, _ := open(t, dir)
			defer s2.st.Close()
			got := map[string]string{}
			for _, p := range paths {
				got[p] = s2.do(t, "GET", p, "", "").Body.String()
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("components after the restart (-before +after):\n%s", d)
			}
		})
	}
}

// TestStateSameAfterEveryRestart: a change whose follow-up record (the
// identities of the components it made) a crash cut off comes back the
// same way at every later start: the first start keeps what its replay
// made in a snapshot.
func TestStateSameAfterEveryRestart(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir)
	for _, p := range []string{"/mediation/c", "/mediation/c/mediator/passthrough/p1"} {
		if rec := s.do(t, "POST", p, "", ""); rec.Code != 200 {
			t.Fatal(rec.Body)
		}
	}
	// Cut the journal after the component's creation, before its
	// identities: a crash between the two fsyncs.
	journal := filepath.Join(dir, "journal-000000001")
	var off, cut int64
	if _, _, _, err := store.Scan(journal, func(_ uint64, payload []byte) error {
		off += 8 + int64(len(payload))
		if strings.Contains(string(payload), "passthrough/p1") {
			cut = off
		}
		return nil
	}); err != nil || cut == 0 {
		t.Fatalf("scan: %v, cut at %d", err, cut)
	}
	if err := os.Truncate(journal, cut); err != nil {
		t.Fatal(err)
	}
	var uuids []string
	for range 3 {
		s2, _ := open(t, dir) // a start, then a kill -9
		uuids = append(uuids, s2.do(t, "GET", "/mediation/c/components/p1", "", "").Body.String())
	}
	if uuids[1] != uuids[0] || uuids[2] != uuids[0] {
		t.Errorf("the component differs from start to start:\n%s", strings.Join(uuids, "\n"))
	}
}

// TestJournaled: which requests are changes the state keeps.
func TestJournaled(t *testing.T) {
	for _, tt := range []struct {
		method, path string
		want         bool
	}{
		{"GET", "/platform/zones/zones", false},
		{"HEAD", "/platform/zones/zones", false},
		{"OPTIONS", "/platform/zones/zone", false},
		{"POST", "/platform/zones/zone", true},
		{"PUT", "/platform/devices/device/data", true},
		{"DELETE", "/platform/zones/zone/script", true},
		{"POST", "/platform/scriptPlayer/script", true},         // an upload
		{"PUT", "/platform/scriptPlayer/script/day.bhv", false}, // playing it
		{"POST", "/mediation/runtime/c/components/in/data", false},
		{"POST", "/mediation/data/mediator/passthrough/data", true},
		{"POST", "/mediation/data", true},
		{"PUT", "/mediation/runtime/c/start", true},
		{"POST", "/homes/lab", false},
		{"POST", "/homes/lab/platform/zones/zone", false},
		{"POST", "/icasa/zones/zone", true},
	} {
		if got := store.Journaled(httptest.NewRequest(tt.method, tt.path, nil)); got != tt.want {
			t.Errorf("Journaled(%s %s) = %v, want %v", tt.method, tt.path, got, tt.want)
		}
	}
}

// TestStatePhysicsModel: a state saved by a home of one physics model does
// not load into a home of the other (its derived values follow from the
// model; they were kept, stale, and the model silently changed), whether
// it is in a snapshot or, before the first one, only in a journal.
func TestStatePhysicsModel(t *testing.T) {
	for _, snapshot := range []bool{true, false} {
		dir := t.TempDir()
		home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC, Physics: sim.PhysicsRealistic})
		engine := mediation.NewEngine(mediation.Config{})
		defer engine.Close()
		api := httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine})
		st, _, err := openState(store.Config{Dir: dir, Home: home, Engine: engine, Handler: api, SnapshotEvery: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("POST", "/platform/zones/zone", strings.NewReader(`{"zoneId":"a","leftX":0,"topY":0,"rightX":300,"bottomY":300}`))
		req.Host = "localhost"
		rec := httptest.NewRecorder()
		st.Wrap(api).ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatal(rec.Body)
		}
		if snapshot {
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
		} else {
			defer st.Close() // killed: what it wrote is its journal
		}
		err = reopenAs(t, dir, sim.PhysicsContract)
		if err == nil || !strings.Contains(err.Error(), "-physics realistic") {
			t.Errorf("snapshot %v: a realistic state into a contract home: %v, want an error naming -physics realistic", snapshot, err)
		}
		if err := reopenAs(t, dir, sim.PhysicsRealistic); err != nil {
			t.Errorf("snapshot %v: into a realistic home: %v", snapshot, err)
		}
	}
}

// TestStateKeepsWhatOwnKindsDerived: a derived value only time gives (a
// kind of one's own counting minutes) comes back at a restart; home.bhv
// leaves derived properties out, meta.json keeps these.
func TestStateKeepsWhatOwnKindsDerived(t *testing.T) {
	counter := sim.Kind{Name: "Counter", Namespace: "acme",
		Properties: []sim.PropertySpec{{Name: "ticks", Type: sim.Number, Default: 0.0, Derived: true}},
		Behavior: sim.Behavior{Every: time.Minute, Tick: func(c *sim.DeviceContext) {
			c.Set("ticks", c.Props().Number("ticks")+1)
		}}}
	dir := t.TempDir()
	start := func() (*sim.Home, *store.State) {
		home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
		if err := home.Kinds().Register(counter); err != nil {
			t.Fatal(err)
		}
		engine := mediation.NewEngine(mediation.Config{})
		t.Cleanup(func() { engine.Close() })
		st, _, err := openState(store.Config{Dir: dir, Home: home, Engine: engine, Handler: httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine}), SnapshotEvery: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return home, st
	}
	home, st := start()
	if _, err := home.CreateDevice(sim.DeviceSpec{ID: "c", Type: "acme.Counter"}); err != nil {
		t.Fatal(err)
	}
	if err := home.Advance(5 * time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	home, st = start()
	defer st.Close()
	if d, err := home.Device("c"); err != nil || d.Properties["ticks"] != 5.0 {
		t.Errorf("restored ticks = %v (%v), want 5", d.Properties["ticks"], err)
	}
}

// TestStateOfALargeHome: a home's snapshot grows with it, past the bound on
// the scripts clients send (sim.MaxScriptSize), and still loads.
func TestStateOfALargeHome(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir)
	note := strings.Repeat("x", 60_000)
	for i := range 20 {
		body := fmt.Sprintf(`{"deviceId":"d%d","type":"iCasa.Tablet","properties":{"note":%q}}`, i, note)
		if rec := s.do(t, "POST", "/platform/devices/device", "application/json", body); rec.Code != 200 {
			t.Fatalf("POST device %d = %d %s", i, rec.Code, rec.Body)
		}
	}
	want := ignoreDerived(view(t, s))
	if err := s.st.Close(); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "snapshot-*", "home.bhv"))
	if len(matches) != 1 {
		t.Fatalf("snapshots %v, want one", matches)
	}
	fi, err := os.Stat(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() <= sim.MaxScriptSize {
		t.Fatalf("home.bhv has %d bytes; want more than %d", fi.Size(), sim.MaxScriptSize)
	}
	openSame(t, dir, want, "restored").st.Close()
}

// TestStateClosedTwiceAtOnce: two Close calls at once (a server's shutdown
// and its deferred call) both return, after the last snapshot.
func TestStateClosedTwiceAtOnce(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir)
	apply(t, s)
	snapshots := func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, "snapshot-*", "meta.json"))
		return m
	}
	before := len(snapshots())
	var wg sync.WaitGroup
	errs := make([]error, 2)
	seen := make([]int, 2) // complete snapshots when each Close returned
	for i := range errs {
		wg.Go(func() {
			errs[i] = s.st.Close()
			seen[i] = len(snapshots())
		})
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Errorf("Close, Close = %v, %v", errs[0], errs[1])
	}
	if seen[0] <= before || seen[1] <= before {
		t.Errorf("snapshots when each Close returned: %v, from %d; want the last one written before either returns", seen, before)
	}
	if err := s.st.Close(); err != nil {
		t.Errorf("a third Close = %v", err)
	}
}

// live holds the State open on each directory (by openState), which the
// next openState of the directory kills, as a restart after kill -9
// follows a process that is gone: it writes no more, and its lock is let
// go.
var live sync.Map

// openState is store.Open after the State open on cfg.Dir, if any, is
// killed.
func openState(cfg store.Config) (*store.State, bool, error) {
	if old, ok := live.LoadAndDelete(cfg.Dir); ok {
		old.(*store.State).Kill()
	}
	st, restored, err := store.Open(cfg)
	if err == nil {
		live.Store(cfg.Dir, st)
	}
	return st, restored, err
}

// TestStateOneServerAtATime: a second server on a state directory in use
// is refused, and leaves it as it was; it would otherwise remove, at its
// first snapshot, the journal the first one appends to, and the changes
// the first one acknowledged after that would be lost.
func TestStateOneServerAtATime(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir)
	if rec := s.do(t, "POST", "/platform/zones/zone", "application/json", `{"zoneId":"a","leftX":0,"topY":0,"rightX":10,"bottomY":10}`); rec.Code != 200 {
		t.Fatal(rec.Body)
	}
	files := func() []string {
		names, _ := filepath.Glob(filepath.Join(dir, "*"))
		return names
	}
	before := files()
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	engine := mediation.NewEngine(mediation.Config{})
	defer engine.Close()
	_, _, err := store.Open(store.Config{Dir: dir, Home: home, Engine: engine, Handler: httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine}), SnapshotEvery: time.Hour})
	if err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("a second server on a directory in use: %v", err)
	}
	if d := cmp.Diff(before, files()); d != "" {
		t.Errorf("the refused server changed the directory (-before +after):\n%s", d)
	}
	if rec := s.do(t, "POST", "/platform/zones/zone", "application/json", `{"zoneId":"b","leftX":0,"topY":0,"rightX":10,"bottomY":10}`); rec.Code != 200 {
		t.Fatal(rec.Body)
	}
	want := ignoreDerived(view(t, s))
	if err := s.st.Close(); err != nil {
		t.Fatal(err)
	}
	openSame(t, dir, want, "once the first server closed").st.Close()
}

// TestStateNewerFormat: a state directory written by a newer version (a
// snapshot of a later format) is refused, rather than loaded with what
// this version does not know of it silently dropped.
func TestStateNewerFormat(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir)
	apply(t, s)
	if err := s.st.Close(); err != nil {
		t.Fatal(err)
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, "snapshot-*"))
	metaPath := filepath.Join(snaps[len(snaps)-1], "meta.json")
	var m map[string]any
	data, _ := os.ReadFile(metaPath)
	json.Unmarshal(data, &m)
	m["format"] = 99
	data, _ = json.Marshal(m)
	os.WriteFile(metaPath, data, 0o644)
	if err := reopen(t, dir); err == nil || !strings.Contains(err.Error(), "newer version") || !strings.Contains(err.Error(), metaPath) {
		t.Errorf("a state of a newer format = %v, want an error naming %s", err, metaPath)
	}
}

// TestStateChangeBeforeOpen: a change that comes through Wrap before Open
// has restored the state (a device update over NATS while the server
// starts) is refused as busy; it panicked on the journal not made yet.
func TestStateChangeBeforeOpen(t *testing.T) {
	dir := t.TempDir()
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	engine := mediation.NewEngine(mediation.Config{})
	defer engine.Close()
	api := httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine})
	st := store.New(store.Config{Dir: dir, Home: home, Engine: engine, Location: time.UTC, SnapshotEvery: time.Hour})
	h := st.Wrap(api)
	zone := func(id string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/platform/zones/zone", strings.NewReader(`{"zoneId":"`+id+`","leftX":0,"topY":0,"rightX":1,"bottomY":1}`))
		req.Host = "localhost"
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	if rec := zone("early"); rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("a change before Open = %d %s, want 503 with Retry-After", rec.Code, rec.Body)
	}
	if _, err := st.Open(api); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if rec := zone("late"); rec.Code != 200 {
		t.Fatalf("a change after Open = %d %s", rec.Code, rec.Body)
	}
	if _, err := home.Zone("early"); err == nil {
		t.Error("the change refused before Open was made")
	}
}

// TestStateBoundsAtReplay: a change refused for a bound reached (503) is
// not made at replay when the server comes back with higher bounds; and
// an acknowledged change that lower bounds refuse at replay is named in a
// warning rather than dropped without a word.
func TestStateBoundsAtReplay(t *testing.T) {
	var logged strings.Builder
	var logMu sync.Mutex
	start := func(dir string, maxChains int) (*mediation.Engine, http.Handler) {
		home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
		engine := mediation.NewEngine(mediation.Config{MaxChains: maxChains})
		t.Cleanup(func() { engine.Close() })
		api := httpapi.NewHandler(httpapi.Config{Home: home, Engine: engine})
		log := slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logged}, nil))
		st, _, err := openState(store.Config{Dir: dir, Home: home, Engine: engine, Handler: api, SnapshotEvery: time.Hour, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		return engine, st.Wrap(api)
	}
	// made gives a directory whose journal holds c0 and c1, made, and c2,
	// refused for -max-chains 2.
	made := func() string {
		dir := t.TempDir()
		_, h := start(dir, 2)
		for i, want := range []int{200, 200, 503} {
			req := httptest.NewRequest("POST", fmt.Sprintf("/mediation/c%d", i), nil)
			req.Host = "localhost"
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != want {
				t.Fatalf("chain c%d = %d, want %d", i, rec.Code, want)
			}
		}
		return dir
	}
	engine, _ := start(made(), 10) // after a kill -9, with a higher bound
	if _, err := engine.Chain("c2"); err == nil {
		t.Error("a chain refused as busy was made at replay")
	}
	engine, _ = start(made(), 1) // after a kill -9, with a lower bound
	if _, err := engine.Chain("c1"); err == nil {
		t.Fatal("c1 made beyond the bound")
	}
	logMu.Lock()
	defer logMu.Unlock()
	if !strings.Contains(logged.String(), "refused at its replay") || !strings.Contains(logged.String(), "/mediation/c1") {
		t.Errorf("no warning naming the change the lower bound refused; log:\n%s", logged.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// readCounter is a body that counts the bytes read from it.
type readCounter struct {
	r io.Reader
	n int
}

func (c *readCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestStateDeclaredTooBigIsNotRead: a change whose declared length is over
// what the journal takes goes to the handler unread, which refuses it
// unread too: a client waiting for 100 Continue is not asked to send it.
func TestStateDeclaredTooBigIsNotRead(t *testing.T) {
	s, _ := open(t, t.TempDir())
	defer s.st.Close()
	body := &readCounter{r: strings.NewReader(strings.Repeat(" ", store.DefaultMaxChange+2))}
	req := httptest.NewRequest("POST", "/platform/zones/zone", body)
	req.Host = "localhost"
	req.ContentLength = store.DefaultMaxChange + 2
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge || body.n != 0 {
		t.Errorf("a change declared %d bytes long: %d %s, %d bytes read; want 413 and none read", req.ContentLength, rec.Code, rec.Body, body.n)
	}
}

// TestStateJournalsNoBodyTheHandlerRefuses: a change whose body is over the
// handler's bound (1 MiB by default) is refused, and not journaled.
func TestStateJournalsNoBodyTheHandlerRefuses(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir)
	defer s.st.Close()
	size := func() int64 {
		var n int64
		journals, _ := filepath.Glob(filepath.Join(dir, "journal-*"))
		for _, j := range journals {
			if fi, err := os.Stat(j); err == nil {
				n += fi.Size()
			}
		}
		return n
	}
	before := size()
	body := `{"zoneId":"big","leftX":0,"topY":0,"rightX":1,"bottomY":1,"name":"` + strings.Repeat("x", httpapi.DefaultMaxBodyBytes) + `"}`
	if rec := s.do(t, "POST", "/platform/zones/zone", "application/json", body); rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a change of %d bytes: %d %s, want 413", len(body), rec.Code, rec.Body)
	}
	if grew := size() - before; grew > 1<<10 {
		t.Errorf("the journal grew %d bytes for a change refused 413", grew)
	}
	if store.DefaultMaxChange != httpapi.DefaultMaxBodyBytes {
		t.Errorf("DefaultMaxChange is %d, the handler's bound %d", store.DefaultMaxChange, httpapi.DefaultMaxBodyBytes)
	}
}

// TestStateTooBigChangeIsNotMadeUnjournaled: a change over MaxChange, which
// the journal does not take, is not made either, whether its handler reads
// the body (and refuses it) or not: a DELETE, which reads none, would
// otherwise be made and acknowledged, and undone by the next restart. The
// refusal is the handler's own for a body over its bound.
func TestStateTooBigChangeIsNotMadeUnjournaled(t *testing.T) {
	for _, declared := range []bool{true, false} {
		t.Run(fmt.Sprintf("declared=%v", declared), func(t *testing.T) {
			dir := t.TempDir()
			s, _ := open(t, dir)
			if rec := s.do(t, "POST", "/platform/zones/zone", "application/json", `{"zoneId":"a","leftX":0,"topY":0,"rightX":10,"bottomY":10}`); rec.Code != 200 {
				t.Fatal(rec.Body)
			}
			req := httptest.NewRequest("DELETE", "/platform/zones/zone/a", strings.NewReader(strings.Repeat(" ", store.DefaultMaxChange+1)))
			req.Host = "localhost"
			if !declared {
				req.ContentLength = -1
			}
			rec := httptest.NewRecorder()
			s.handler.ServeHTTP(rec, req)
			// What the handler answers a body over its bound.
			want := httptest.NewRecorder()
			big := httptest.NewRequest("POST", "/platform/zones/zone", strings.NewReader(strings.Repeat(" ", httpapi.DefaultMaxBodyBytes+1)))
			big.Host = "localhost"
			s.api.ServeHTTP(want, big)
			if rec.Code != http.StatusRequestEntityTooLarge || rec.Body.String() != want.Body.String() {
				t.Errorf("a DELETE with a body of %d bytes: %d %s, want %d %s", store.DefaultMaxChange+1, rec.Code, rec.Body, want.Code, want.Body)
			}
			state := ignoreDerived(view(t, s))
			s.st.Kill()
			s2 := openSame(t, dir, state, "after a change too big for the journal")
			s2.st.Close()
		})
	}
}

// TestStateTooBigStreamedChangeClosesAsTheHandler: a change whose body is
// streamed (no declared length) past MaxChange is answered as the handler
// answers it without the journal, down to the connection: the handler's
// http.MaxBytesReader has the server close it (what remains of the body
// is not read), and so must the journal's refusal.
func TestStateTooBigStreamedChangeClosesAsTheHandler(t *testing.T) {
	s, _ := open(t, t.TempDir())
	answer := func(h http.Handler) (int, string, bool) {
		srv := httptest.NewServer(h)
		defer srv.Close()
		// A MultiReader hides the length: the body goes chunked.
		body := io.MultiReader(strings.NewReader(strings.Repeat(" ", store.DefaultMaxChange+10)))
		resp, err := http.Post(srv.URL+"/platform/zones/zone", "application/json", body)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Close
	}
	code, body, closed := answer(s.handler)
	wcode, wbody, wclosed := answer(s.api)
	if code != wcode || body != wbody || closed != wclosed {
		t.Errorf("with the journal: %d %q, connection closed %v; without: %d %q, connection closed %v", code, body, closed, wcode, wbody, wclosed)
	}
}

// TestStateRestartDoesNotReannounce: a restart from the state restores the
// home as it was. A chain with a device-in of current=true acted on the
// home when it started; loaded again at the restart, it does not act again
// on what the snapshot holds (a device set by hand since, here), nor does
// a stopped chain, which the restore makes and then stops.
func TestStateRestartDoesNotReannounce(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir)
	for _, c := range []struct{ method, path, ctype, body string }{
		{"POST", "/platform/devices/device", "application/json", `{"deviceId":"h","type":"iCasa.Heater","positionX":50,"positionY":50}`},
		{"POST", "/platform/devices/device", "application/json", `{"deviceId":"g","type":"iCasa.Heater","positionX":50,"positionY":50}`},
		{"PUT", "/platform/devices/device/h", "application/json", `{"properties":{"heater.powerLevel":0.3}}`},
		{"POST", "/mediation/copy", "", ""},
		{"POST", "/mediation/copy/adapter/device-in/src", "application/x-www-form-urlencoded", "properties={devices=h; property=heater.powerLevel; current=true}"},
		{"POST", "/mediation/copy/adapter/device-out/dst", "application/x-www-form-urlencoded", "properties={device=g; property=heater.powerLevel}"},
		{"POST", "/mediation/copy/bindings", "application/x-www-form-urlencoded", "from=src:out&to=dst:in"},
		{"POST", "/mediation/idle", "", ""},
		{"PUT", "/mediation/runtime/idle/stop", "", ""},
		{"POST", "/mediation/idle/adapter/device-in/src", "application/x-www-form-urlencoded", "properties={devices=h; property=heater.powerLevel; current=true}"},
		{"POST", "/mediation/idle/adapter/device-out/dst", "application/x-www-form-urlencoded", "properties={device=h; property=heater.powerLevel; value=1}"},
		{"POST", "/mediation/idle/bindings", "application/x-www-form-urlencoded", "from=src:out&to=dst:in"},
	} {
		if rec := s.do(t, c.method, c.path, c.ctype, c.body); rec.Code != 200 {
			t.Fatalf("%s %s = %d %s", c.method, c.path, rec.Code, rec.Body)
		}
	}
	level := func(s *server, id string) any {
		t.Helper()
		if err := s.home.Advance(0); err != nil { // what device-out scheduled
			t.Fatal(err)
		}
		d, err := s.home.Device(id)
		if err != nil {
			t.Fatal(err)
		}
		return d.Properties["heater.powerLevel"]
	}
	if got := level(s, "g"); got != 0.3 {
		t.Fatalf("g = %v before the restart, want 0.3 (copied from h when the binding was added)", got)
	}
	// Set by hand: the chain only acts on changes of h from now on.
	if rec := s.do(t, "PUT", "/platform/devices/device/g", "application/json", `{"properties":{"heater.powerLevel":0.9}}`); rec.Code != 200 {
		t.Fatal(rec.Body)
	}
	if got := level(s, "g"); got != 0.9 {
		t.Fatalf("g = %v, want 0.9", got)
	}
	if err := s.st.Close(); err != nil {
		t.Fatal(err)
	}
	s2, restored := open(t, dir)
	if !restored {
		t.Fatal("nothing restored")
	}
	defer s2.st.Close()
	if got := level(s2, "g"); got != 0.9 {
		t.Errorf("g = %v after the restart, want 0.9 as it was left: the restored chain acted again", got)
	}
	if got := level(s2, "h"); got != 0.3 {
		t.Errorf("h = %v after the restart, want 0.3: the stopped chain acted", got)
	}
	// Started again, the chain acts on the home as it is.
	if rec := s2.do(t, "PUT", "/mediation/runtime/copy/stop", "", ""); rec.Code != 200 {
		t.Fatal(rec.Body)
	}
	if rec := s2.do(t, "PUT", "/mediation/runtime/copy/start", "", ""); rec.Code != 200 {
		t.Fatal(rec.Body)
	}
	if got := level(s2, "g"); got != 0.3 {
		t.Errorf("g = %v once the chain started again, want 0.3", got)
	}
}

// TestStateReplayKeepsChainsInStep: what a chain does to a device in
// reaction to a change (here, a device-in of current=true bound) is applied
// by the home's scheduler, live as soon as the driver runs, so before the
// next request. Replayed from the journal, it lands in the same order: a
// change made by hand afterwards is not undone by it.
func TestStateReplayKeepsChainsInStep(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir)
	do := func(method, path, ctype, body string) {
		t.Helper()
		if rec := s.do(t, method, path, ctype, body); rec.Code != 200 {
			t.Fatalf("%s %s = %d %s", method, path, rec.Code, rec.Body)
		}
		if err := s.home.Advance(0); err != nil { // the live driver, between requests
			t.Fatal(err)
		}
	}
	do("POST", "/platform/devices/device", "application/json", `{"deviceId":"h","type":"iCasa.Heater","positionX":50,"positionY":50}`)
	do("POST", "/platform/devices/device", "application/json", `{"deviceId":"g","type":"iCasa.Heater","positionX":50,"positionY":50}`)
	if err := s.st.Snapshot(); err != nil {
		t.Fatal(err)
	}
	// From here on, in the journal only.
	do("PUT", "/platform/devices/device/h", "application/json", `{"properties":{"heater.powerLevel":0.3}}`)
	do("POST", "/mediation/copy", "", "")
	do("POST", "/mediation/copy/adapter/device-in/src", "application/x-www-form-urlencoded", "properties={devices=h; property=heater.powerLevel; current=true}")
	do("POST", "/mediation/copy/adapter/device-out/dst", "application/x-www-form-urlencoded", "properties={device=g; property=heater.powerLevel}")
	do("POST", "/mediation/copy/bindings", "application/x-www-form-urlencoded", "from=src:out&to=dst:in")
	do("PUT", "/platform/devices/device/g", "application/json", `{"properties":{"heater.powerLevel":0.9}}`)
	level := func(s *server) any {
		t.Helper()
		if err := s.home.Advance(0); err != nil {
			t.Fatal(err)
		}
		d, err := s.home.Device("g")
		if err != nil {
			t.Fatal(err)
		}
		return d.Properties["heater.powerLevel"]
	}
	if got := level(s); got != 0.9 {
		t.Fatalf("g = %v, want 0.9", got)
	}
	// Killed: restored from the snapshot and the journal.
	s2, restored := open(t, dir)
	if !restored {
		t.Fatal("nothing restored")
	}
	defer s2.st.Close()
	if got := level(s2); got != 0.9 {
		t.Errorf("g = %v after the replay, want 0.9, as acknowledged: the chain's change was applied after the later one", got)
	}
}

// TestStateNotOpen checks a State outside Open and Close: Close of one never
// opened returned only when a loop that was never started ended (for ever),
// Snapshot before Open made a journal in a directory it had not locked and
// then panicked, and Snapshot after Close wrote a snapshot into a directory
// whose lock it had let go (another server may hold it by then). Now Close
// does nothing, Snapshot and a later Open fail with ErrClosed, and the
// directory is left as it was.
func TestStateNotOpen(t *testing.T) {
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock()})
	engine := mediation.NewEngine(mediation.Config{})
	defer engine.Close()

	dir := filepath.Join(t.TempDir(), "state")
	st := store.New(store.Config{Dir: dir, Home: home, Engine: engine})
	if err := st.Snapshot(); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Snapshot before Open = %v, want ErrClosed", err)
	}
	if err := st.Close(); err != nil { // returns: nothing to close
		t.Errorf("Close before Open = %v", err)
	}
	if _, err := st.Open(httpapi.NewHandler(httpapi.Config{Home: home}).API()); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Open after Close = %v, want ErrClosed", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the state directory was made: %v", err)
	}

	opened := t.TempDir()
	s, _ := open(t, opened)
	if err := s.st.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadDir(opened)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.st.Snapshot(); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Snapshot after Close = %v, want ErrClosed", err)
	}
	after, _ := os.ReadDir(opened)
	if len(after) != len(before) {
		t.Errorf("Snapshot after Close changed the directory: %v, was %v", after, before)
	}
}
