package store

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

// TestStateFullDisk: a change the disk refuses is answered 507 and not
// made; once there is room, changes go through again.
func TestStateFullDisk(t *testing.T) {
	home := sim.MustNew(sim.Config{})
	applied := 0
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		applied++
		home.CreateZone(sim.ZoneSpec{ID: strings.TrimPrefix(r.URL.Path, "/z/"), RightX: 10, BottomY: 10})
	})
	var disk *fullDisk
	engine := mediation.NewEngine(mediation.Config{})
	defer engine.Close()
	s := New(Config{Dir: t.TempDir(), Home: home, Engine: engine})
	s.openJournal = func(path string) (*Journal, error) {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		disk = &fullDisk{File: f, room: 1 << 20}
		return openFile(path, disk, 0, 0)
	}
	if _, err := s.Open(api); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.Wrap(api)
	post := func(id string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/z/"+id, strings.NewReader(`{}`)))
		return rec
	}
	if rec := post("a"); rec.Code != 200 {
		t.Fatalf("first change = %d", rec.Code)
	}
	disk.mu.Lock()
	disk.room = 3
	disk.mu.Unlock()
	rec := post("b")
	if rec.Code != http.StatusInsufficientStorage || !strings.Contains(rec.Body.String(), `"code":"insufficient_storage"`) {
		t.Errorf("a change on a full disk = %d %s, want 507 insufficient_storage", rec.Code, rec.Body)
	}
	if _, err := home.Zone("b"); err == nil || applied != 1 {
		t.Errorf("the refused change was made (%d applied)", applied)
	}
	disk.mu.Lock()
	disk.room = 1 << 20
	disk.mu.Unlock()
	if rec := post("c"); rec.Code != 200 {
		t.Errorf("a change once there is room = %d", rec.Code)
	}
}
