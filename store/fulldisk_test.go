package store

import (
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

// slowSync is a journal file whose fsyncs wait while held is set.
type slowSync struct {
	*os.File
	held    *atomic.Bool
	syncing *atomic.Bool // set while a Sync waits
}

func (f *slowSync) Sync() error {
	for f.held.Load() {
		f.syncing.Store(true)
		runtime.Gosched()
	}
	f.syncing.Store(false)
	return f.File.Sync()
}

// TestSnapshotSwitchesAfterTheOldJournal: a snapshot switches journals
// only once every record of the old one is on disk, so that no change
// lands in the new journal while the old one could still be cut short by
// a crash (checkJournals relies on it).
func TestSnapshotSwitchesAfterTheOldJournal(t *testing.T) {
	home := sim.MustNew(sim.Config{})
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	engine := mediation.NewEngine(mediation.Config{})
	defer engine.Close()
	dir := t.TempDir()
	s := New(Config{Dir: dir, Home: home, Engine: engine, SnapshotEvery: time.Hour})
	var held, syncing atomic.Bool
	s.openJournal = func(path string) (*Journal, error) {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(path, "journal-000000001") {
			return openFile(path, &slowSync{File: f, held: &held, syncing: &syncing}, 0, 0)
		}
		return openFile(path, f, 0, 0)
	}
	if _, err := s.Open(api); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.Wrap(api)
	post := func(id string) {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/z/"+id, strings.NewReader(`{}`)))
	}
	held.Store(true)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); post("x") }() // its fsync in journal 1 waits
	for !syncing.Load() {
		runtime.Gosched()
	}
	go func() { defer wg.Done(); s.Snapshot() }()
	second := filepath.Join(dir, "journal-000000002")
	header := int64(-1)
	for header <= 0 {
		if fi, err := os.Stat(second); err == nil {
			header = fi.Size()
		}
		runtime.Gosched()
	}
	// Journal 2 is made: the snapshot now either switches to it at once
	// (s.gen 2) or holds s.mu until journal 1's fsync is done, and nothing
	// else takes s.mu meanwhile. y comes after either.
	for busy := 0; busy < 1000; runtime.Gosched() {
		if !s.mu.TryLock() {
			busy++
			continue
		}
		switched := s.gen == 2
		s.mu.Unlock()
		if switched {
			break
		}
		busy = 0
	}
	go func() { defer wg.Done(); post("y") }()
	for range 20_000 { // y would land in journal 2 now if the switch did not wait
		runtime.Gosched()
	}
	if fi, _ := os.Stat(second); fi.Size() != header {
		t.Errorf("a change reached journal 2 (%d bytes, its header %d) while journal 1's last fsync was under way", fi.Size(), header)
	}
	held.Store(false)
	wg.Wait()
}
