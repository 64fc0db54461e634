package store_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestStateKeepsWhatChangesOnScriptChangesBuildOn: a change acknowledged
// after a playing script changed the home (a zone it made, which the
// change puts a device in) is kept through kill -9: the script's actions
// are journaled before the change, so the change is not replayed onto a
// home without them, where it would be refused and silently lost.
func TestStateKeepsWhatChangesOnScriptChangesBuildOn(t *testing.T) {
	const script = `{"id":"mk","content":"<behavior factor=\"1\"><create-zone id=\"hall\" leftX=\"0\" topY=\"0\" X-Length=\"100\" Y-Length=\"100\"/><delay value=\"1\" unit=\"s\"/><create-person id=\"bob\" type=\"Man\"/></behavior>"}`
	for _, tc := range []struct {
		name   string
		change [4]string // method, path, content type, body
	}{
		{"device into the script's zone", [4]string{"PUT", "/platform/devices/device/lamp", "application/json", `{"location":"hall"}`}},
		{"variable of the script's zone", [4]string{"PUT", "/platform/zones/zone/hall", "application/json", `{"variables":{"X":1}}`}},
		{"person the script made", [4]string{"PUT", "/platform/persons/person/bob", "application/json", `{"location":"hall"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := playScript(t, dir, script)
			if err := s.home.Advance(2 * time.Second); err != nil { // the script's actions
				t.Fatal(err)
			}
			c := tc.change
			if rec := s.do(t, c[0], c[1], c[2], c[3]); rec.Code != 200 {
				t.Fatalf("%s %s = %d %s", c[0], c[1], rec.Code, rec.Body)
			}
			checkRestored(t, dir, places(t, s))
		})
	}
}

// TestStateKeepsAChangeServedAfterAScriptAction: a script action that
// falls due while a change holds its turn (the live driver runs on its own
// goroutine) waits for the change to be served: it is journaled after it,
// and the replay after kill -9 applies them in that order, so that the
// restored home is the one clients saw: the change, made before the zone
// existed, was refused (404), and the zone is there.
func TestStateKeepsAChangeServedAfterAScriptAction(t *testing.T) {
	const script = `{"id":"mk","content":"<behavior factor=\"1\"><delay value=\"1\" unit=\"s\"/><create-zone id=\"hall\" leftX=\"0\" topY=\"0\" X-Length=\"100\" Y-Length=\"100\"/></behavior>"}`
	dir := t.TempDir()
	s := playScript(t, dir, script)
	// The script's action falls due once the change is journaled, just
	// before it is served, on the driver's goroutine.
	advanced := make(chan error, 1)
	s.handler = s.st.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "PUT" && r.URL.Path == "/platform/devices/device/lamp" {
			go func() { advanced <- s.home.Advance(time.Second) }()
		}
		s.api.ServeHTTP(w, r)
	}))
	if rec := s.do(t, "PUT", "/platform/devices/device/lamp", "application/json", `{"location":"hall"}`); rec.Code != http.StatusNotFound {
		t.Fatalf("PUT lamp = %d %s, want 404: the zone comes after it", rec.Code, rec.Body)
	}
	if err := <-advanced; err != nil {
		t.Fatal(err)
	}
	want := places(t, s)
	if zones, _ := want["zones"].([]any); len(zones) != 1 {
		t.Fatalf("zones %v, want the script's hall", want["zones"])
	}
	checkRestored(t, dir, want)
}

// playScript opens a state in dir holding a device "lamp" and playing
// script (the body of a script upload, id "mk").
func playScript(t *testing.T, dir, script string) *server {
	t.Helper()
	s, _ := open(t, dir)
	for _, c := range [][4]string{
		{"POST", "/platform/devices/device", "application/json", `{"deviceId":"lamp","type":"iCasa.BinaryLight"}`},
		{"POST", "/platform/scriptPlayer/script", "application/json", script},
		{"PUT", "/platform/scriptPlayer/script/mk.bhv", "application/json", `{"state":"started"}`},
	} {
		if rec := s.do(t, c[0], c[1], c[2], c[3]); rec.Code != 200 {
			t.Fatalf("%s %s = %d %s", c[0], c[1], rec.Code, rec.Body)
		}
	}
	return s
}

// checkRestored opens dir again, as after kill -9 of the server that left
// it (not closed), and compares its zones, devices and persons with want.
// The clock is left out: the time the actions ran at (Advance, a test's
// own) is no change, and is kept by the snapshots only, as the live
// driver's time.
func checkRestored(t *testing.T, dir string, want map[string]any) {
	t.Helper()
	s, restored := open(t, dir)
	defer s.st.Close()
	if !restored {
		t.Fatal("nothing restored")
	}
	if d := cmp.Diff(want, places(t, s)); d != "" {
		t.Errorf("after kill -9 (-before +after):\n%s", d)
	}
}

// places returns what a client reads of s's zones, devices and persons.
func places(t *testing.T, s *server) map[string]any {
	v := ignoreDerived(view(t, s))
	return map[string]any{"zones": v["/platform/zones/zones"], "devices": v["/platform/devices/devices"], "persons": v["/platform/persons/persons"]}
}
