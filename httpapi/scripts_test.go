package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/sim"
	"github.com/pervasim/pervasim/store"
)

const morning = `<behavior startdate="01/02/2024-08:00:00" factor="30">
	<create-zone id="hall" leftX="0" topY="0" X-Length="100" Y-Length="100"/>
	<delay value="10" unit="m"/>
	<create-person id="al" type="Man"/>
	<move-person-zone personId="al" zoneId="hall"/>
	<delay value="1" unit="h"/>
	<create-device id="lamp" type="BinaryLight"/>
</behavior>`

func upload(id, content string) string {
	b, _ := json.Marshal(map[string]string{"id": id, "content": content})
	return string(b)
}

func TestScriptPlayerREST(t *testing.T) {
	f := newFixture(t)
	rows := []struct {
		name       string
		method     string
		path, body string
		advance    time.Duration
		status     int
		has        string
	}{
		{"upload adds the .bhv extension", "POST", "/platform/scriptPlayer/script", upload("morning", morning), 0, 200,
			`"id":"morning.bhv","name":"morning","state":"stopped","completePercent":0,"actionNumber":4,"startDate":"01/02/2024-08:00:00","factor":30,"executionTime":4200000`},
		{"list", "GET", "/platform/scriptPlayer/scripts", "", 0, 200, `[{"id":"morning.bhv"`},
		{"get", "GET", "/platform/scriptPlayer/script/morning.bhv", "", 0, 200, `"state":"stopped"`},
		{"source", "GET", "/platform/scriptPlayer/script/morning.bhv/source", "", 0, 200, `<create-zone id="hall"`},
		{"start", "PUT", "/platform/scriptPlayer/script/morning.bhv", `{"state":"started"}`, 0, 200, `"state":"started","completePercent":0`},
		{"progress", "GET", "/platform/scriptPlayer/script/morning.bhv", "", 10 * time.Minute, 200, `"completePercent":75`},
		{"the clock follows the script", "GET", "/platform/clocks/clock/default", "", 0, 200, `"currentDateStr":"01/02/2024-08:10:00"`},
		{"pause", "PUT", "/platform/scriptPlayer/script/morning.bhv", `{"state":"paused"}`, 0, 200, `"state":"paused"`},
		{"the clock is paused too", "GET", "/platform/clocks/clock/default", "", 0, 200, `"pause":true`},
		{"resume by POST", "POST", "/platform/scriptPlayer/script/morning.bhv", `{"state":"started"}`, 0, 200, `"state":"started"`},
		{"another may not start", "POST", "/platform/scriptPlayer/script", upload("other.bhv", "<behavior/>"), 0, 200, `"id":"other.bhv"`},
		{"one at a time", "PUT", "/platform/scriptPlayer/script/other.bhv", `{"state":"started"}`, 0, 409, `"conflict"`},
		{"replacing a running script", "POST", "/platform/scriptPlayer/script", upload("morning.bhv", "<behavior/>"), 0, 409, `"conflict"`},
		{"done", "GET", "/platform/scriptPlayer/script/morning.bhv", "", time.Hour, 200, `"state":"stopped","completePercent":100`},
		{"bad state", "PUT", "/platform/scriptPlayer/script/morning.bhv", `{"state":"running"}`, 0, 400, `"invalid"`},
		{"missing state", "PUT", "/platform/scriptPlayer/script/morning.bhv", `{}`, 0, 400, `"invalid"`},
		{"unknown script", "PUT", "/platform/scriptPlayer/script/nope.bhv", `{"state":"started"}`, 0, 404, `"not_found"`},
		{"unknown script get", "GET", "/platform/scriptPlayer/script/nope.bhv", "", 0, 404, `"not_found"`},
		{"a malformed script names its line", "POST", "/platform/scriptPlayer/script", upload("bad", "<behavior>\n\n<fly>\n</behavior>"), 0, 400, `line 4`},
		{"an action that cannot run is listed, the script kept", "POST", "/platform/scriptPlayer/script", upload("odd", "<behavior>\n\n<fly/>\n</behavior>"), 0, 200, `"problems":["line 3: unknown command fly"]`},
		{"missing id", "POST", "/platform/scriptPlayer/script", `{"content":"<behavior/>"}`, 0, 400, `"invalid"`},
		{"save the current home", "POST", "/platform/scriptPlayer/script", `{"id":"snapshot"}`, 0, 200, `"id":"snapshot.bhv"`},
		{"the saved script restores the home", "GET", "/platform/scriptPlayer/script/snapshot.bhv/source", "", 0, 200, `create-device id="lamp"`},
	}
	for _, row := range rows {
		if row.advance > 0 {
			if err := f.home.Advance(row.advance); err != nil {
				t.Fatal(err)
			}
		}
		rec := f.do(t, row.method, row.path, row.body)
		if rec.Code != row.status || !strings.Contains(rec.Body.String(), row.has) {
			t.Errorf("%s: %s %s = %d %s, want %d containing %s", row.name, row.method, row.path, rec.Code, rec.Body, row.status, row.has)
		}
	}
}

func TestScriptsDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "morning.bhv"), []byte(morning), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "broken.bhv"), []byte("<behavior><fly></behavior>"), 0o644)
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	h := httpapi.NewHandler(httpapi.Config{Home: home, Scripts: scriptDir(t, dir)})
	defer h.Close()
	f := &fixture{home: home, handler: h}

	if got := f.mustDo(t, "GET", "/platform/scriptPlayer/scripts", "").Body.String(); !strings.Contains(got, `"id":"morning.bhv"`) || strings.Contains(got, "broken") {
		t.Errorf("scripts = %s, want morning.bhv and not the broken one", got)
	}
	// A file dropped in later appears at the next listing.
	os.WriteFile(filepath.Join(dir, "later.bhv"), []byte("<behavior/>"), 0o644)
	if got := f.mustDo(t, "GET", "/platform/scriptPlayer/scripts", "").Body.String(); !strings.Contains(got, `"id":"later.bhv"`) {
		t.Errorf("scripts = %s, want later.bhv too", got)
	}
	// Uploads and saves are written to the directory.
	f.mustDo(t, "POST", "/platform/scriptPlayer/script", upload("up.bhv", "<behavior><reset-context/></behavior>"))
	f.mustDo(t, "POST", "/platform/scriptPlayer/script", `{"id":"saved"}`)
	for _, name := range []string{"up.bhv", "saved.bhv"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s not written: %v", name, err)
		}
	}
}

// TestICasaScriptsOverREST uploads scripts in the languages of iCasa's own
// scripts (see sim's testdata) and plays them in order: each uploads, starts
// and runs to its end without an error.
func TestICasaScriptsOverREST(t *testing.T) {
	f := newFixture(t)
	files, err := filepath.Glob(filepath.Join("..", "sim", "testdata", "scripts", "icasa", "*.bhv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		id := filepath.Base(file)
		var info sim.ScriptInfo
		rec := f.mustDo(t, "POST", "/platform/scriptPlayer/script", upload(id, string(src)))
		if err := json.Unmarshal(rec.Body.Bytes(), &info); err != nil {
			t.Fatal(err)
		}
		f.mustDo(t, "PUT", "/platform/scriptPlayer/script/"+id, `{"state":"started"}`)
		if err := f.home.Advance(time.Duration(info.ExecutionTime)*time.Millisecond + time.Second); err != nil {
			t.Fatal(err)
		}
		rec = f.mustDo(t, "GET", "/platform/scriptPlayer/script/"+id, "")
		if got := rec.Body.String(); !strings.Contains(got, `"state":"stopped","completePercent":100`) || !strings.Contains(got, `"errors":0`) {
			t.Errorf("%s after its end = %s, want stopped at 100%% without an error", id, got)
		}
	}
}

// TestScriptsDirectoryNotReparsed: listing reads only the files that
// changed since the last listing; a file removed leaves the list; an
// upload past the quota is 503 busy.
func TestScriptsDirectoryNotReparsed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "morning.bhv")
	if err := os.WriteFile(path, []byte(morning), 0o644); err != nil {
		t.Fatal(err)
	}
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	h := httpapi.NewHandler(httpapi.Config{Home: home, Scripts: scriptDir(t, dir), ScriptsQuota: 2048})
	defer h.Close()
	f := &fixture{home: home, handler: h}
	list := func() string { return f.mustDo(t, "GET", "/platform/scriptPlayer/scripts", "").Body.String() }
	if !strings.Contains(list(), `"actionNumber":4`) {
		t.Fatalf("scripts = %s, want morning.bhv", list())
	}
	// The same size and time: not read again, even though the text changed.
	info, _ := os.Stat(path)
	same := strings.Replace(morning, `factor="30"`, `factor="31"`, 1)
	os.WriteFile(path, []byte(same), 0o644)
	os.Chtimes(path, info.ModTime(), info.ModTime())
	if got := list(); !strings.Contains(got, `"factor":30`) {
		t.Errorf("scripts = %s: the unchanged file was read again", got)
	}
	// A newer time: read again.
	later := info.ModTime().Add(time.Minute)
	os.Chtimes(path, later, later)
	if got := list(); !strings.Contains(got, `"factor":31`) {
		t.Errorf("scripts = %s, want the changed file read", got)
	}
	// Gone: removed from the player.
	os.Remove(path)
	if got := strings.TrimSpace(list()); got != "[]" {
		t.Errorf("scripts after the file was removed = %s, want []", got)
	}
	// The quota.
	rec := f.do(t, "POST", "/platform/scriptPlayer/script", upload("big.bhv", "<behavior>"+strings.Repeat(" ", 4096)+"</behavior>"))
	if rec.Code != 503 || errorCode(t, rec.Body.String()) != "busy" {
		t.Errorf("an upload past the quota = %d %s, want 503 busy", rec.Code, rec.Body)
	}
	if _, err := os.Stat(filepath.Join(dir, "big.bhv")); err == nil {
		t.Errorf("the refused upload was written")
	}
	f.mustDo(t, "POST", "/platform/scriptPlayer/script", upload("small.bhv", "<behavior/>"))
}

// TestScriptSnapshotWithinQuota: saving the home as a script ({"id"}
// alone) counts towards the quota as an upload does: one past it is 503
// busy and leaves neither the script nor its file, and a snapshot that fits
// is kept.
func TestScriptSnapshotWithinQuota(t *testing.T) {
	dir := t.TempDir()
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	for i := range 20 {
		if _, err := home.CreateZone(sim.ZoneSpec{ID: fmt.Sprintf("zone-%02d-%s", i, strings.Repeat("z", 100)), RightX: 10, BottomY: 10}); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := sim.WriteScript(&b, home, time.UTC); err != nil {
		t.Fatal(err)
	}
	sc, err := home.ParseScript(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	size := sim.ScriptCost(b.Bytes(), sc) // what the player counts for it
	h := httpapi.NewHandler(httpapi.Config{Home: home, Scripts: scriptDir(t, dir), ScriptsQuota: 2*size + size/2})
	defer h.Close()
	f := &fixture{home: home, handler: h}
	f.mustDo(t, "POST", "/platform/scriptPlayer/script", `{"id":"one"}`)
	f.mustDo(t, "POST", "/platform/scriptPlayer/script", `{"id":"two"}`)
	f.mustDo(t, "POST", "/platform/scriptPlayer/script", `{"id":"two"}`) // replaces itself: still fits
	var seen []string                                                    // what the refused snapshot showed the home's observers
	stop := home.Observe(func(e sim.Event) {
		if e.ScriptID != "" {
			seen = append(seen, string(e.Type)+" "+e.ScriptID)
		}
	})
	rec := f.do(t, "POST", "/platform/scriptPlayer/script", `{"id":"three"}`)
	stop()
	if rec.Code != 503 || errorCode(t, rec.Body.String()) != "busy" {
		t.Errorf("a snapshot past the quota = %d %s, want 503 busy", rec.Code, rec.Body)
	}
	if len(seen) > 0 {
		t.Errorf("the refused snapshot was added, then taken back: %q", seen)
	}
	if got := f.do(t, "GET", "/platform/scriptPlayer/script/three.bhv", ""); got.Code != 404 {
		t.Errorf("the refused snapshot is in the player: %d %s", got.Code, got.Body)
	}
	if _, err := os.Stat(filepath.Join(dir, "three.bhv")); err == nil {
		t.Errorf("the refused snapshot was written")
	}
	if got, max := home.ScriptBytes(), 2*size+size/2; got > max {
		t.Errorf("the player holds %d bytes of scripts, past the quota of %d", got, max)
	}
}

// TestScriptQuotaCountsActions: the quota counts what the player holds for
// a script, its parsed actions with its text: a script of many short
// elements held 24 times its text, so a quota of text alone let 256 MiB of
// scripts hold gigabytes. Past the quota, an upload is 503 busy and the
// player is as it was.
func TestScriptQuotaCountsActions(t *testing.T) {
	const quota = 4 << 20
	short := "<behavior>" + strings.Repeat("<a/>", 200_000) + "</behavior>" // 800 kB of text, 200,000 actions
	tests := []struct {
		name, script string
		busy         bool
	}{
		{"many short actions", short, true},
		{"the same text in one action", "<behavior><a b=\"" + strings.Repeat("x", len(short)-30) + "\"/></behavior>", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
			h := httpapi.NewHandler(httpapi.Config{Home: home, ScriptsQuota: quota})
			defer h.Close()
			f := &fixture{home: home, handler: h, noSpec: true}
			rec := f.doType(t, "POST", "/platform/scriptPlayer/script?id=s.bhv", "application/xml", tt.script)
			got, want := []any{rec.Code, ""}, []any{http.StatusOK, ""}
			if tt.busy {
				got[1] = errorCode(t, rec.Body.String())
				want = []any{http.StatusServiceUnavailable, "busy"}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("upload (-want +got):\n%s\n%.300s", diff, rec.Body)
			}
			if n := home.ScriptBytes(); n > quota {
				t.Errorf("the player holds %d bytes of scripts, past the quota of %d", n, quota)
			}
			if tt.busy && len(home.Scripts()) != 0 {
				t.Errorf("the refused script is in the player")
			}
		})
	}
}

// TestScriptUploadAsFile: a .bhv file uploads unchanged as the body, with an
// XML or plain-text content type and ?id=NAME.
func TestScriptUploadAsFile(t *testing.T) {
	for _, ct := range []string{"application/xml", "text/xml; charset=utf-8", "text/plain"} {
		f := newFixture(t)
		rec := f.doType(t, "POST", "/platform/scriptPlayer/script?id=morning", ct, morning)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"id":"morning.bhv"`) || !strings.Contains(rec.Body.String(), `"actionNumber":4`) {
			t.Errorf("%s upload = %d %s", ct, rec.Code, rec.Body)
			continue
		}
		if got := f.mustDo(t, "GET", "/platform/scriptPlayer/script/morning.bhv/source", "").Body.String(); got != morning {
			t.Errorf("%s: the source changed on the way: %q", ct, got)
		}
	}
	f := newFixture(t)
	for _, tt := range []struct {
		path, ct, body string
		status         int
	}{
		{"/platform/scriptPlayer/script", "application/xml", morning, 400},                      // no id
		{"/platform/scriptPlayer/script?id=bad/name", "application/xml", morning, 400},          // a bad id
		{"/platform/scriptPlayer/script?id=bad", "application/xml", "<behavior><fly/>", 400},    // not a script
		{"/platform/scriptPlayer/script?id=json", "application/json", upload("", morning), 200}, // JSON, id from the query
	} {
		if rec := f.doType(t, "POST", tt.path, tt.ct, tt.body); rec.Code != tt.status {
			t.Errorf("POST %s (%s) = %d %s, want %d", tt.path, tt.ct, rec.Code, rec.Body, tt.status)
		}
	}
}

// TestResetStopsTheScript: DELETE /simulation stops a playing script
// first, so it no longer acts and the next start is not refused.
func TestResetStopsTheScript(t *testing.T) {
	f := newFixture(t)
	f.mustDo(t, "POST", "/platform/scriptPlayer/script", upload("morning", morning))
	f.mustDo(t, "PUT", "/platform/scriptPlayer/script/morning.bhv", `{"state":"started"}`)
	f.mustDo(t, "DELETE", "/platform/simulation", "")
	if got := f.mustDo(t, "GET", "/platform/scriptPlayer/script/morning.bhv", "").Body.String(); !strings.Contains(got, `"state":"stopped"`) {
		t.Errorf("after the reset the script is %s, want stopped", got)
	}
	if err := f.home.Advance(2 * time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := f.mustDo(t, "GET", "/platform/persons/persons", "").Body.String(); strings.TrimSpace(got) != "[]" {
		t.Errorf("the stopped script still acted: persons %s", got)
	}
	f.mustDo(t, "PUT", "/platform/scriptPlayer/script/morning.bhv", `{"state":"started"}`)
}

// scriptDir keeps scripts in dir, as the server does.
func scriptDir(t *testing.T, dir string) *store.ScriptDir {
	t.Helper()
	d, err := store.NewScriptDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
