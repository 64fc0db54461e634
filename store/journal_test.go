package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// records reads every record of the journal at path.
func records(t *testing.T, path string) (got []string, torn bool) {
	t.Helper()
	_, _, torn, err := Scan(path, func(seq uint64, p []byte) error {
		if seq != uint64(len(got)+1) {
			t.Errorf("record %d has sequence number %d", len(got)+1, seq)
		}
		got = append(got, string(p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, torn
}

func openNew(t *testing.T, path string) *Journal {
	t.Helper()
	good, last, _, err := Scan(path, func(uint64, []byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	j, err := OpenJournal(path, good, last)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestJournalAppendsAndReadsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j := openNew(t, path)
	var want []string
	for i := range 5 {
		p := fmt.Sprintf("change %d", i)
		seq, err := j.Append([]byte(p))
		if err != nil || seq != uint64(i+1) {
			t.Fatalf("Append = %d, %v", seq, err)
		}
		want = append(want, p)
	}
	if _, err := j.Append(nil); err == nil {
		t.Errorf("an empty record was taken")
	}
	j.Close()
	got, torn := records(t, path)
	if d := cmp.Diff(want, got); d != "" || torn {
		t.Errorf("read back (-want +got), torn %v:\n%s", torn, d)
	}
	// Reopened, it goes on after the last record.
	j = openNew(t, path)
	if seq, err := j.Append([]byte("after")); err != nil || seq != 6 {
		t.Errorf("Append after reopening = %d, %v", seq, err)
	}
	j.Close()
}

// TestJournalGroupCommit: concurrent appends share fsyncs, and each gets
// its own sequence number, the order of the file.
func TestJournalGroupCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cf := &countingFile{File: f}
	j, err := openFile(path, cf, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	const n = 400
	seqs := make([]uint64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			seq, err := j.Append([]byte(fmt.Sprintf("c%d", i)))
			if err != nil {
				t.Error(err)
			}
			seqs[i] = seq
		})
	}
	wg.Wait()
	j.Close()
	got, _ := records(t, path)
	if len(got) != n {
		t.Fatalf("%d records, want %d", len(got), n)
	}
	for i, seq := range seqs {
		if got[seq-1] != fmt.Sprintf("c%d", i) {
			t.Errorf("append %d got sequence number %d, which holds %s", i, seq, got[seq-1])
		}
	}
	if syncs := cf.syncs.Load(); syncs >= n {
		t.Errorf("%d fsyncs for %d concurrent appends: none shared", syncs, n)
	}
}

type countingFile struct {
	*os.File
	syncs atomic.Int64
}

func (c *countingFile) Sync() error { c.syncs.Add(1); return c.File.Sync() }

// TestJournalTornTail: a record cut short at the end, or garbage after the
// last good record, is dropped; damage followed by a good record is
// reported, naming the file.
func TestJournalTornTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "journal")
	j := openNew(t, path)
	for _, p := range []string{"one", "two", "three"} {
		j.Append([]byte(p))
	}
	j.Close()
	whole, _ := os.ReadFile(path)
	third := len(whole) - (headerSize + len("three"))

	for _, tt := range []struct {
		name string
		data []byte
		want []string
		torn bool
	}{
		{"cut in the payload", whole[:len(whole)-2], []string{"one", "two"}, true},
		{"cut in the header", whole[:third+3], []string{"one", "two"}, true},
		{"zeroes after the end", append(append([]byte{}, whole...), make([]byte, 64)...), []string{"one", "two", "three"}, true},
		{"a flipped byte in the last record", flip(whole, len(whole)-1), []string{"one", "two"}, true},
		{"whole", whole, []string{"one", "two", "three"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.name)
			os.WriteFile(p, tt.data, 0o644)
			got, torn := records(t, p)
			if d := cmp.Diff(tt.want, got); d != "" || torn != tt.torn {
				t.Errorf("(-want +got), torn %v want %v:\n%s", torn, tt.torn, d)
			}
			// Reopened, the torn tail is cut and appends go on.
			j := openNew(t, p)
			if seq, err := j.Append([]byte("next")); err != nil || seq != uint64(len(tt.want)+1) {
				t.Errorf("Append after a torn tail = %d, %v", seq, err)
			}
			j.Close()
			got, torn = records(t, p)
			if d := cmp.Diff(append(tt.want, "next"), got); d != "" || torn {
				t.Errorf("after reopening (-want +got), torn %v:\n%s", torn, d)
			}
		})
	}
	t.Run("damage before good records", func(t *testing.T) {
		p := filepath.Join(dir, "damaged")
		os.WriteFile(p, flip(whole, headerSize+1), 0o644)
		_, _, _, err := Scan(p, func(uint64, []byte) error { return nil })
		if !errors.Is(err, ErrCorrupt) || !contains(err.Error(), p) || !contains(err.Error(), "byte 0") {
			t.Errorf("Scan = %v, want ErrCorrupt naming %s and the offset", err, p)
		}
	})
}

func flip(b []byte, i int) []byte {
	out := append([]byte{}, b...)
	out[i] ^= 0x55
	return out
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// fullDisk fails writes past a size, as a full disk does.
type fullDisk struct {
	*os.File
	room int
	mu   sync.Mutex
}

func (f *fullDisk) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(p) > f.room {
		n, _ := f.File.Write(p[:f.room]) // part of it lands, as on a real disk
		f.room = 0
		return n, errors.New("no space left on device")
	}
	f.room -= len(p)
	return f.File.Write(p)
}

// TestJournalFullDisk: an append that does not fit fails, leaves nothing
// of itself in the file, and appends work again once there is room.
func TestJournalFullDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	disk := &fullDisk{File: f, room: headerSize + 5 + 3}
	j, err := openFile(path, disk, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Append([]byte("first")); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Append([]byte("second")); err == nil || !contains(err.Error(), "no space") {
		t.Fatalf("Append on a full disk = %v", err)
	}
	disk.mu.Lock()
	disk.room = 1 << 20
	disk.mu.Unlock()
	if seq, err := j.Append([]byte("third")); err != nil || seq != 2 {
		t.Errorf("Append once there is room = %d, %v; want 2", seq, err)
	}
	j.Close()
	got, torn := records(t, path)
	if d := cmp.Diff([]string{"first", "third"}, got); d != "" || torn {
		t.Errorf("(-want +got), torn %v:\n%s", torn, d)
	}
}

func FuzzScan(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "seed")
	j, _ := OpenJournal(path, 0, 0)
	j.Append([]byte("one"))
	j.Append([]byte(`{"method":"PUT"}`))
	j.Close()
	seed, _ := os.ReadFile(path)
	f.Add(seed)
	f.Add(seed[:len(seed)-1])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "j")
		os.WriteFile(p, data, 0o644)
		good, last, torn, err := Scan(p, func(uint64, []byte) error { return nil })
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Scan = %v, want nil or ErrCorrupt", err)
			}
			return
		}
		if good > int64(len(data)) || torn != (good < int64(len(data))) {
			t.Fatalf("good %d of %d bytes, torn %v", good, len(data), torn)
		}
		// What Scan keeps reads back the same after reopening.
		j, err := OpenJournal(p, good, last)
		if err != nil {
			t.Fatal(err)
		}
		j.Close()
		_, last2, torn2, err := Scan(p, func(uint64, []byte) error { return nil })
		if err != nil || last2 != last || torn2 {
			t.Fatalf("after reopening: %d records (want %d), torn %v, %v", last2, last, torn2, err)
		}
	})
}
