package mediation

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
)

// Linker creates the transport of bindings: each Bind asks the binding's
// linker for a new Link. Register more linkers with Registry.RegisterLinker
// (for example one backed by a message broker); the engine needs no change.
// Implementations must be safe for concurrent use.
type Linker interface {
	// NewLink validates the binding properties and returns a stopped link
	// that delivers to to. An error makes Bind fail with ErrInvalid and
	// change nothing.
	NewLink(props map[string]any, to Receiver) (Link, error)
}

// LinkerFunc adapts a function to the Linker interface. It is as safe for
// concurrent use as the function is.
type LinkerFunc func(props map[string]any, to Receiver) (Link, error)

// NewLink calls f(props, to).
func (f LinkerFunc) NewLink(props map[string]any, to Receiver) (Link, error) { return f(props, to) }

// Receiver is the engine's end of a link: Receive hands m to the binding's
// current target (it follows Chain.Replace) and returns once the target has
// processed it. It returns an error wrapping ErrConflict, without taking m,
// when the chain is not started; the link must then keep m and offer it
// again after Start. Receive is safe for concurrent use.
type Receiver interface {
	Receive(m Message) error
}

// Dropper is implemented by the Receiver the engine hands to NewLink. A
// link that loses messages after Send took them, where no error can tell
// the sender any more (a broker refused a publication, what came back
// could not be decoded, a bound of what the link keeps was passed), calls
// Drop(n) so that they are counted as dropped by the binding's current
// target, as the messages Close discards are. Drop is safe for concurrent
// use; a Receiver of the link's own making may not implement it.
type Dropper interface {
	Drop(n int)
}

// ReceiverFunc adapts a function to the Receiver interface. It is as safe
// for concurrent use as the function is.
type ReceiverFunc func(m Message) error

// Receive calls f(m).
func (f ReceiverFunc) Receive(m Message) error { return f(m) }

// Link carries the messages of one binding. The engine calls Send from the
// source's goroutines (several may call it concurrently) and Start, Stop,
// Len and Close from its own; all methods must be safe for concurrent use.
type Link interface {
	// Send hands m over. It must not block: it runs while the source
	// component is held (see Type.Stateless: the calls of a stateless
	// source may overlap). A link that bounds what it holds
	// implements Backpressure, so that Chain.Send waits for room before
	// taking a message in, and takes what its source emits beyond its
	// bound, up to a hard limit past which Send fails. An error means m
	// was not taken; it is counted as dropped.
	Send(m Message) error
	// Start begins delivering to the Receiver (the chain was started).
	Start()
	// Stop stops delivering and returns once no goroutine of the link is
	// in Receive any more. Undelivered messages are kept for the next
	// Start.
	Stop()
	// Len returns the number of messages taken and not yet delivered.
	Len() int
	// Close stops the link for good, discards what it holds and returns
	// how many messages it discarded. Send fails afterwards.
	Close() int
}

// Backpressure is implemented by links that bound what they hold, as the
// queue linker does. Before Chain.Send takes a message in, it waits until
// every such link the message may reach has room: Room returns nil when the
// link has room now, otherwise a channel that is closed once it may have
// (or once the link stops). Room must be safe for concurrent use.
type Backpressure interface {
	Room() <-chan struct{}
}

// DefaultQueueCapacity is the capacity of a queue binding without a
// "capacity" property.
const DefaultQueueCapacity = 1024

// DefaultQueueMaxBytes is the most a queue binding without a "max-bytes"
// property holds, in bytes of messages (as estimated from their strings,
// maps and slices): 64 MiB.
const DefaultQueueMaxBytes = 64 << 20

// directLinker is the "direct" linker: synchronous hand-off on the
// producer's goroutine.
type directLinker struct{}

// NewLink returns a direct link; it accepts no property.
func (directLinker) NewLink(props map[string]any, to Receiver) (Link, error) {
	for k := range props {
		return nil, errorf(ErrInvalid, "direct linker has no property %q", k)
	}
	return &directLink{to: to}, nil
}

// directLink delivers on the caller's goroutine. The engine recognises it
// and skips the Receiver indirection on its hot path.
type directLink struct{ to Receiver }

func (l *directLink) Send(m Message) error { return l.to.Receive(m) }
func (l *directLink) Start()               {}
func (l *directLink) Stop()                {}
func (l *directLink) Len() int             { return 0 }
func (l *directLink) Close() int           { return 0 }

// queueLinker is the "queue" linker: an asynchronous bounded FIFO per
// binding, drained by its own goroutine.
type queueLinker struct{}

// NewLink validates "capacity" (a positive integer, default
// DefaultQueueCapacity: how many messages the queue holds before senders
// wait for room) and "max-bytes" (default DefaultQueueMaxBytes: past it the
// queue refuses messages) and returns a stopped queue. The broker properties
// of chains written for Cilia's JMS linker ("topic" and any "jms.*", such as
// jms.topic) are accepted and ignored: the queue is in process. Any other
// property is an error, so that typos are caught.
func (queueLinker) NewLink(props map[string]any, to Receiver) (Link, error) {
	capacity, maxBytes := DefaultQueueCapacity, DefaultQueueMaxBytes
	for k, v := range props {
		switch {
		case k == "topic" || strings.HasPrefix(k, "jms."):
		case k == "capacity":
			n, err := optInt(v)
			if err != nil || n < 1 || n > 1<<24 {
				return nil, errorf(ErrInvalid, "queue capacity %v: want an integer from 1 to %d", v, 1<<24)
			}
			capacity = n
		case k == "max-bytes":
			n, err := optInt(v)
			if err != nil || n < 1024 || n > 1<<30 {
				return nil, errorf(ErrInvalid, "queue max-bytes %v: want an integer from 1024 to %d", v, 1<<30)
			}
			maxBytes = n
		default:
			return nil, errorf(ErrInvalid, "queue linker has no property %q (known: capacity, max-bytes, topic, jms.*)", k)
		}
	}
	q := &queueLink{to: to, capacity: capacity, maxBytes: maxBytes, step: max(1, capacity/8), buf: make([]queued, min(capacity, 64))}
	q.notEmpty.L = &q.mu
	return q, nil
}

// queued is a message in a queue, with the budget of the message that
// caused it.
type queued struct {
	m     Message
	c     *cause
	size  int // messageSize(m)
	psize int // mapSize(m.Properties)
	// m's properties are a map other messages share (run.shared): the
	// components it reaches must not write to it.
	shared bool
}

// Tuning of a queue's delivering goroutine.
const (
	// queueBatch is the most messages the goroutine takes from the ring
	// at once, to deliver them outside the lock.
	queueBatch = 256
	// queueSpins is how many times the goroutine yields, checking for a
	// message, before it parks on an empty queue: a producer running on
	// the same core then often refills it first, and the goroutine goes
	// on without a wake-up.
	queueSpins = 4
)

// queueLink is a ring buffer with one delivering goroutine.
//
// Send never blocks. The queue is full at capacity messages (or maxBytes
// bytes): Room then tells Chain.Send to wait, but messages emitted by
// components are still taken, up to maxBytes, past which Send fails and the
// message is dropped.
//
// The goroutine takes up to queueBatch messages at a time: it notes under
// the lock where they are in the ring, delivers them from there outside it
// (producers only write past them, and a ring grown meanwhile holds the
// same messages), and removes them from the ring once delivered, all at the end of the batch, or, while a sender
// waits for room, every step messages (capacity/8, at least one) so that
// room comes back in steps and not one message at a time. A message stays
// in the ring, counting towards the capacity, until it is removed, so a
// stop or a failed delivery loses nothing; Len subtracts the delivered
// ones not yet removed (progress). The goroutine checks for a stop between
// two messages, so Stop waits for one delivery at most. Producers wake the
// goroutine only when it is parked (on an empty queue), and it parks only
// after a few yields.
//
// Its fields are grouped by who writes them, each group on cache lines of
// its own, so that a producer and the goroutine, on two cores, share no
// line but the mutex's: the producers read fullFlag, the goroutine reads
// waited and stop for every message, and only the goroutine writes its
// batch state.
type queueLink struct {
	// Set at creation.
	to       Receiver
	capacity int
	maxBytes int
	step     int // while a sender waits, delivered messages are removed this many at a time
	_        [cacheLine - 40]byte

	mu       sync.Mutex
	notEmpty sync.Cond // signalled on push to a parked goroutine, and on stop
	buf      []queued  // ring
	head, n  int
	bytes    int
	running  bool
	closed   bool
	parked   bool          // the goroutine waits on notEmpty for a message
	done     chan struct{} // closed when the goroutine of the current run exits
	room     chan struct{} // closed when the queue has room again; nil when not waited for
	_        [cacheLine]byte

	fullFlag atomic.Bool // full(), for Room without the lock; written under mu when it changes
	_        [cacheLine - 4]byte

	// stop is set by Stop: the goroutine ends after its current delivery,
	// and Room lets senders on (they fail on the stopped chain) until arm
	// or Start.
	stop   atomic.Bool
	waited atomic.Bool // room != nil; written under mu
	_      [cacheLine - 8]byte

	// The goroutine's batch: delivered of its messages, removed from the
	// ring; only the goroutine touches them. progress is
	// delivered-removed, for Len, written by the goroutine (under mu when
	// removed changes).
	delivered, removed int
	progress           atomic.Int64
	_                  [cacheLine - 24]byte
}

// cacheLine is the size of a cache line, for padding.
const cacheLine = 64

func (q *queueLink) Send(m Message) error { return q.push(m, nil, -1, false) }

// push appends m, caused by c (nil: unknown); ps is mapSize(m.Properties)
// when the sender knows it, else -1; shared says that m's properties are
// a map other messages share (run.shared).
func (q *queueLink) push(m Message, c *cause, ps int, shared bool) error {
	if ps < 0 {
		ps = mapSize(m.Properties, 0)
	}
	size := messageBase + valueSize(m.Content, 0) + ps
	if c != nil {
		c.share() // before the goroutine can see it
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return errorf(ErrConflict, "queue closed")
	}
	if q.n > 0 && q.bytes+size > q.maxBytes {
		q.mu.Unlock()
		return errorf(ErrBusy, "the queue holds %d bytes of messages, and may hold %d (its max-bytes)", q.bytes, q.maxBytes)
	}
	if q.n == len(q.buf) {
		q.grow()
	}
	i := q.head + q.n
	if i >= len(q.buf) {
		i -= len(q.buf)
	}
	q.buf[i] = queued{m: m, c: c, size: size, psize: ps, shared: shared}
	q.n++
	q.bytes += size
	q.setFull()
	wake := q.parked
	q.parked = false
	q.mu.Unlock()
	if wake {
		q.notEmpty.Signal()
	}
	return nil
}

// full reports whether senders should wait; q.mu is held.
func (q *queueLink) full() bool { return q.n >= q.capacity || q.bytes >= q.maxBytes }

// setFull updates fullFlag; q.mu is held.
func (q *queueLink) setFull() {
	if f := q.full(); f != q.fullFlag.Load() {
		q.fullFlag.Store(f)
	}
}

// Room implements Backpressure.
func (q *queueLink) Room() <-chan struct{} {
	if !q.fullFlag.Load() {
		return nil // room now, as far as one can tell without the lock
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.full() || q.closed || q.stop.Load() {
		return nil // a stopped queue fills no further: Send fails on the stopped chain
	}
	if q.room == nil {
		q.room = make(chan struct{})
		q.waited.Store(true)
	}
	return q.room
}

// wake releases the senders waiting for room; q.mu is held.
func (q *queueLink) wake() {
	if q.room != nil {
		close(q.room)
		q.room = nil
		q.waited.Store(false)
	}
}

// grow doubles the ring; q.mu is held.
func (q *queueLink) grow() {
	nb := make([]queued, max(2*len(q.buf), 1))
	for i := 0; i < q.n; i++ {
		nb[i] = q.buf[(q.head+i)%len(q.buf)]
	}
	q.buf, q.head = nb, 0
}

func (q *queueLink) Start() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.running || q.closed {
		return
	}
	q.running = true
	q.stop.Store(false)
	q.done = make(chan struct{})
	go q.loop(q.done)
}

// arm makes a queue stopped by Stop hold senders back again when full: the
// chain is about to start it (Chain.Start arms its queues before it lets
// senders in, and starts them after). A sender waiting on an armed queue
// that is not running yet gets room once it runs and delivers.
func (q *queueLink) arm() { q.stop.Store(false) }

// batchReceiver is implemented by the engine's bindings: the messages of a
// queue delivered in one entry into the chain, each with the budget of the
// message that caused it (see binding.receiveBatch).
type batchReceiver interface {
	receiveBatch(r *run, b batch, q *queueLink) error
}

// batch is the messages the goroutine delivers at once: k messages of
// ring, from head on (wrapping round).
type batch struct {
	ring    []queued
	head, k int
}

// at returns message i of b.
func (b *batch) at(i int) *queued {
	j := b.head + i
	if j >= len(b.ring) {
		j -= len(b.ring)
	}
	return &b.ring[j]
}

// next reports whether the goroutine may deliver message i of its batch:
// the first always, the others unless Stop was called.
func (q *queueLink) next(i int) bool { return i == 0 || !q.stop.Load() }

// deliveredOne records that the goroutine delivered one more message of its
// batch; while a sender waits for room, every step messages are removed.
func (q *queueLink) deliveredOne() {
	q.delivered++
	q.progress.Store(int64(q.delivered - q.removed))
	if q.delivered-q.removed >= q.step && q.waited.Load() {
		q.mu.Lock()
		q.release()
		q.mu.Unlock()
	}
}

// release removes from the ring the delivered messages of the goroutine's
// batch not yet removed, which are at its head; q.mu is held.
func (q *queueLink) release() {
	n, size := q.delivered-q.removed, 0
	for i, j := 0, q.head; i < n; i++ {
		size += q.buf[j].size
		if j++; j == len(q.buf) {
			j = 0
		}
	}
	q.remove(n, size)
	q.removed = q.delivered
	q.progress.Store(0)
}

func (q *queueLink) loop(done chan struct{}) {
	defer close(done)
	br, _ := q.to.(batchReceiver)
	r := &run{stripe: stripeSeq.Add(1) - 1}
	q.mu.Lock()
	for {
		if q.n == 0 && q.running {
			for i := 0; i < queueSpins && q.n == 0 && q.running; i++ {
				q.mu.Unlock()
				runtime.Gosched()
				q.mu.Lock()
			}
			for q.n == 0 && q.running {
				q.parked = true
				q.notEmpty.Wait()
			}
			q.parked = false
		}
		if !q.running {
			q.mu.Unlock()
			return
		}
		b := batch{ring: q.buf, head: q.head, k: min(q.n, q.capacity, queueBatch)}
		q.delivered, q.removed = 0, 0
		q.mu.Unlock()

		var err error
		if br != nil {
			err = br.receiveBatch(r, b, q)
		} else {
			for i := range b.k {
				if !q.next(i) {
					break
				}
				if err = q.to.Receive(b.at(i).m); err != nil {
					break
				}
				q.deliveredOne()
			}
		}

		q.mu.Lock()
		q.release()
		if err != nil {
			// The chain is stopping: keep what was not delivered and wait
			// for Stop.
			for q.running {
				q.notEmpty.Wait()
			}
			q.mu.Unlock()
			return
		}
	}
}

// remove drops the n messages (size bytes) at the head, delivered; q.mu is
// held.
func (q *queueLink) remove(n, size int) {
	if n == 0 {
		return
	}
	if end := q.head + n; end <= len(q.buf) {
		clear(q.buf[q.head:end])
		q.head = end
	} else {
		clear(q.buf[q.head:])
		clear(q.buf[:end-len(q.buf)])
		q.head = end - len(q.buf)
	}
	if q.head == len(q.buf) {
		q.head = 0
	}
	q.n -= n
	q.bytes -= size
	if q.n == 0 && len(q.buf) > 2*max(q.capacity, 64) {
		q.buf, q.head = make([]queued, min(q.capacity, 64)), 0 // shrink after an overflow
	}
	q.setFull()
	if !q.full() {
		q.wake()
	}
}

func (q *queueLink) Stop() {
	q.mu.Lock()
	if !q.running {
		q.mu.Unlock()
		return
	}
	q.running = false
	q.stop.Store(true)
	q.wake()
	done := q.done
	q.mu.Unlock()
	q.notEmpty.Broadcast()
	<-done
}

func (q *queueLink) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n - int(q.progress.Load())
}

func (q *queueLink) Close() int {
	q.Stop()
	q.mu.Lock()
	n := q.n
	q.closed = true
	q.buf, q.head, q.n, q.bytes = nil, 0, 0, 0
	q.setFull()
	q.wake()
	q.mu.Unlock()
	return n
}
