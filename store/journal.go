// Package store keeps pervasim's state on disk: a journal of the changes
// the server acknowledged, written with group commit (concurrent changes
// share one fsync) and checksummed, so that a torn last write is found and
// dropped at start while any other damage stops the start with the file's
// name.
//
// All of pervasim's disk I/O is meant to live here; sim, mediation and
// httpapi stay free of files.
package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"
)

// Record framing: a little-endian uint32 length of the payload (at least
// 1), a uint32 CRC-32C of the length and the payload, then the payload. So
// zeroes, which a file may hold after a crash, are no record.
const headerSize = 8

// MaxRecord bounds a record's payload.
const MaxRecord = 16 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is wrapped by the errors of a journal damaged elsewhere than
// in its last record.
var ErrCorrupt = errors.New("the journal is damaged")

// File is what a Journal writes to; *os.File is one. Tests give others, to
// fail as a full disk does.
type File interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Seek(offset int64, whence int) (int64, error)
	Close() error
}

// Journal is an append-only file of checksummed records. A Journal is safe
// for concurrent use: the callers of Append of one moment share a write
// and an fsync.
type Journal struct {
	path string
	f    File

	mu      sync.Mutex
	cond    sync.Cond
	size    int64 // bytes durable in the file
	next    uint64
	pending [][]byte // framed records waiting for the committer
	batch   *batch   // the batch pending records join
	closed  bool
	done    chan struct{}
}

// batch is the records committed by one write and one fsync.
type batch struct {
	done chan struct{}
	err  error
	base uint64 // the sequence number before the batch's first record
}

// Scan reads the records of the journal at path in order, calling fn with
// each (fn must not keep the slice). It returns the offset after the last
// good record, its sequence number, and whether a torn tail was found after
// it: a damaged record with no good record after it, as a write cut short
// by a crash leaves. A damaged record followed by a good one is an error
// wrapping ErrCorrupt that names the file and the offset. A journal that
// does not exist has no records.
func Scan(path string, fn func(seq uint64, payload []byte) error) (good int64, last uint64, torn bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, err
	}
	off := 0
	for off < len(data) {
		payload, ok := recordAt(data, off)
		if !ok {
			for p := off + 1; p+headerSize <= len(data); p++ {
				if _, ok := recordAt(data, p); ok {
					return int64(off), last, false, fmt.Errorf("%w: %s: the record at byte %d is damaged and good records follow it", ErrCorrupt, path, off)
				}
			}
			return int64(off), last, true, nil
		}
		last++
		if err := fn(last, payload); err != nil {
			return int64(off), last, false, err
		}
		off += headerSize + len(payload)
	}
	return int64(off), last, false, nil
}

// recordAt returns the payload of a good record at off.
func recordAt(data []byte, off int) ([]byte, bool) {
	if len(data)-off < headerSize {
		return nil, false
	}
	n := int(binary.LittleEndian.Uint32(data[off : off+4]))
	if n < 1 || n > MaxRecord || n > len(data)-off-headerSize {
		return nil, false
	}
	payload := data[off+headerSize : off+headerSize+n]
	if checksum(data[off:off+4], payload) != binary.LittleEndian.Uint32(data[off+4:off+8]) {
		return nil, false
	}
	return payload, true
}

// checksum is the CRC-32C of a record's length field and payload.
func checksum(length, payload []byte) uint32 {
	return crc32.Update(crc32.Checksum(length, castagnoli), castagnoli, payload)
}

// OpenJournal opens the journal at path for appending after its good records,
// creating it when missing: good is the offset after the last of them and last
// its sequence number (0 for none), as Scan returned them. What follows good (a
// torn tail) is cut off.
func OpenJournal(path string, good int64, last uint64) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return openFile(path, f, good, last)
}

func openFile(path string, f File, good int64, last uint64) (*Journal, error) {
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	j := &Journal{path: path, f: f, size: good, next: last, done: make(chan struct{})}
	j.cond.L = &j.mu
	go j.commit()
	return j, nil
}

// Append writes payload as the next record and returns once it is on disk
// (fsynced), with its sequence number. Appends that come while a commit is
// under way wait for it and share the next one. When the write or the
// fsync fails (a full disk), Append returns the error, the records of that
// commit are cut off the file, and their sequence numbers are not used.
func (j *Journal) Append(payload []byte) (uint64, error) {
	return j.enqueue(payload)()
}

// enqueue queues payload for the next commit and returns at once; the
// function it returns waits for the commit, as Append does. Records are
// written in the order of the enqueue calls.
func (j *Journal) enqueue(payload []byte) func() (uint64, error) {
	if len(payload) < 1 || len(payload) > MaxRecord {
		err := fmt.Errorf("a record holds 1 to %d bytes, not %d", MaxRecord, len(payload))
		return func() (uint64, error) { return 0, err }
	}
	rec := make([]byte, headerSize+len(payload))
	binary.LittleEndian.PutUint32(rec[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(rec[4:8], checksum(rec[0:4], payload))
	copy(rec[headerSize:], payload)

	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return func() (uint64, error) { return 0, errors.New("the journal is closed") }
	}
	if j.batch == nil {
		j.batch = &batch{done: make(chan struct{})}
	}
	b := j.batch
	j.pending = append(j.pending, rec)
	pos := len(j.pending)
	j.cond.Signal()
	j.mu.Unlock()
	return func() (uint64, error) {
		<-b.done
		if b.err != nil {
			return 0, b.err
		}
		return b.first(pos), nil
	}
}

// first gives each record of a batch its sequence number; set by commit.
func (b *batch) first(pos int) uint64 { return b.base + uint64(pos) }

// commit writes and fsyncs the pending records, a batch at a time.
func (j *Journal) commit() {
	defer close(j.done)
	j.mu.Lock()
	for {
		for len(j.pending) == 0 && !j.closed {
			j.cond.Wait()
		}
		if len(j.pending) == 0 && j.closed {
			j.mu.Unlock()
			return
		}
		recs, b := j.pending, j.batch
		j.pending, j.batch = nil, nil
		size, next := j.size, j.next
		j.mu.Unlock()

		err := j.write(recs)
		n := int64(0)
		for _, r := range recs {
			n += int64(len(r))
		}
		if err != nil {
			// Cut what was written of the batch, so that no record of a
			// failed append is replayed.
			if terr := j.f.Truncate(size); terr == nil {
				j.f.Seek(size, io.SeekStart)
			}
			b.err = fmt.Errorf("%s: %w", j.path, err)
		} else {
			b.base = next
		}
		j.mu.Lock()
		if err == nil {
			j.size = size + n
			j.next = next + uint64(len(recs))
		}
		close(b.done)
	}
}

// write writes recs with one Write and one Sync.
func (j *Journal) write(recs [][]byte) error {
	var all []byte
	if len(recs) == 1 {
		all = recs[0]
	} else {
		for _, r := range recs {
			all = append(all, r...)
		}
	}
	if _, err := j.f.Write(all); err != nil {
		return err
	}
	return j.f.Sync()
}

// Size returns the bytes of records on disk.
func (j *Journal) Size() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.size
}

// Last returns the sequence number of the last record on disk.
func (j *Journal) Last() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.next
}

// Close waits for the appends under way and closes the file. Later
// appends fail. Closing a closed journal does nothing and returns nil.
func (j *Journal) Close() error {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return nil
	}
	j.closed = true
	j.cond.Signal()
	j.mu.Unlock()
	<-j.done
	return j.f.Close()
}
