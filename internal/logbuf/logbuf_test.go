package logbuf

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for concurrent use that counts the
// writes it gets.
type lockedBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestBatches checks that lines written are kept whole, in order, come out
// in few writes, and all come out by Close.
func TestBatches(t *testing.T) {
	var out lockedBuffer
	w := New(&out, time.Hour) // no periodic flush during the test
	var want strings.Builder
	for i := range 1000 {
		line := fmt.Sprintf("line %d\n", i)
		want.WriteString(line)
		if _, err := w.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if out.String() != "" {
		t.Fatalf("written before a flush: %q", out.String())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != want.String() {
		t.Fatalf("got %d bytes, want %d", len(got), want.Len())
	}
	if out.writes != 1 {
		t.Fatalf("%d writes, want 1", out.writes)
	}
	// After Close, writes go through at once.
	w.Write([]byte("late\n"))
	if !strings.HasSuffix(out.String(), "late\n") {
		t.Fatal("a write after Close was kept back")
	}
}

// TestFlushesWhenFull checks that a full buffer is written without waiting
// for the interval.
func TestFlushesWhenFull(t *testing.T) {
	var out lockedBuffer
	w := New(&out, time.Hour)
	defer w.Close()
	w.Write(bytes.Repeat([]byte("x"), DefaultSize))
	if n := len(out.String()); n != DefaultSize {
		t.Fatalf("%d bytes written, want %d", n, DefaultSize)
	}
}

// TestPeriodicFlush checks that what is written comes out without Close.
func TestPeriodicFlush(t *testing.T) {
	var out lockedBuffer
	w := New(&out, time.Millisecond)
	defer w.Close()
	w.Write([]byte("hello\n"))
	deadline := time.Now().Add(30 * time.Second)
	for out.String() == "" {
		if time.Now().After(deadline) {
			t.Fatal("not flushed")
		}
		w.mu.Lock() // wait for the flusher rather than spin alone
		w.mu.Unlock()
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk gone") }

// TestError checks that a failed flush is reported by the next Write.
func TestError(t *testing.T) {
	w := New(failing{}, time.Hour)
	w.Write([]byte("a"))
	if err := w.Flush(); err == nil {
		t.Fatal("Flush: no error")
	}
	if _, err := w.Write([]byte("b")); err == nil {
		t.Fatal("Write after a failed flush: no error")
	}
	w.Close()
}

// TestConcurrentWrites writes from many goroutines and checks each line
// comes out whole.
func TestConcurrentWrites(t *testing.T) {
	var out lockedBuffer
	w := New(&out, time.Millisecond)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				fmt.Fprintf(w, "g%d-%d\n", g, i)
			}
		})
	}
	wg.Wait()
	w.Close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 8*500 {
		t.Fatalf("%d lines, want %d", len(lines), 8*500)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		var g, i int
		if _, err := fmt.Sscanf(l, "g%d-%d", &g, &i); err != nil || seen[l] {
			t.Fatalf("line %q torn or repeated", l)
		}
		seen[l] = true
	}
}
