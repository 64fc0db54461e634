// Package logbuf batches log output: a Writer keeps what is written in
// memory and writes it to the underlying writer in one call every flush
// interval, when it holds more than its size, and when closed. A server
// that logs every request then makes one write system call per batch
// instead of one per request.
package logbuf

import (
	"io"
	"sync"
	"time"
)

// DefaultSize is the buffer size of New: written past it, a Writer flushes
// at once.
const DefaultSize = 64 << 10

// A Writer buffers writes to w. It is safe for concurrent use: each Write
// is kept whole, in the order of the calls.
type Writer struct {
	mu     sync.Mutex
	w      io.Writer
	buf    []byte
	size   int
	err    error // the first error of w, returned by the next Write or Flush
	stop   chan struct{}
	done   chan struct{}
	closed bool
}

// New returns a Writer that flushes to w every interval (and when it holds
// DefaultSize bytes or more). Close it to flush what is left and stop its
// goroutine.
func New(w io.Writer, interval time.Duration) *Writer {
	b := &Writer{w: w, size: DefaultSize, stop: make(chan struct{}), done: make(chan struct{})}
	go b.loop(interval)
	return b
}

func (b *Writer) loop(interval time.Duration) {
	defer close(b.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.Flush()
		}
	}
}

// Write keeps p, to be written with the next flush. It flushes at once
// when the buffer holds DefaultSize bytes or more, or when the Writer is
// closed. It returns the error of an earlier failed flush, if any.
func (b *Writer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	b.buf = append(b.buf, p...)
	if b.closed || len(b.buf) >= b.size {
		b.flushLocked()
	}
	return len(p), nil
}

// Flush writes what is buffered.
func (b *Writer) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
	return b.err
}

func (b *Writer) flushLocked() {
	if len(b.buf) == 0 || b.err != nil {
		return
	}
	_, b.err = b.w.Write(b.buf)
	if cap(b.buf) > 4*b.size {
		b.buf = nil // a burst grew it: let it go
	} else {
		b.buf = b.buf[:0]
	}
}

// Close flushes what is buffered and stops the periodic flushes; later
// writes go through at once. It returns the error of the last flush.
func (b *Writer) Close() error {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.stop)
	}
	b.mu.Unlock()
	<-b.done
	return b.Flush()
}
