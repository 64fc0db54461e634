package mediation

import (
	"strings"
	"sync"
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
	// component's lock is held. A link that bounds what it holds
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
	q := &queueLink{to: to, capacity: capacity, maxBytes: maxBytes, buf: make([]queued, min(capacity, 64))}
	q.notEmpty.L = &q.mu
	return q, nil
}

// queued is a message in a queue, with the budget of the message that
// caused it.
type queued struct {
	m    Message
	c    *cause
	size int
}

// queueLink is a ring buffer with one delivering goroutine.
//
// Send never blocks. The queue is full at capacity messages (or maxBytes
// bytes): Room then tells Chain.Send to wait, but messages emitted by
// components (which run under their locks) are still taken, up to maxBytes,
// past which Send fails and the message is dropped. The head stays in the
// queue until Receive accepted it, so a stop or a failed delivery loses
// nothing.
type queueLink struct {
	to       Receiver
	capacity int
	maxBytes int

	mu       sync.Mutex
	notEmpty sync.Cond // signalled on push, and on stop
	buf      []queued  // ring
	head, n  int
	bytes    int
	running  bool
	closed   bool
	done     chan struct{} // closed when the goroutine of the current run exits
	room     chan struct{} // closed when the queue has room again; nil when not waited for
}

func (q *queueLink) Send(m Message) error { return q.push(m, nil) }

// push appends m, caused by c (nil: unknown).
func (q *queueLink) push(m Message, c *cause) error {
	size := messageSize(m)
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
	q.buf[(q.head+q.n)%len(q.buf)] = queued{m: m, c: c, size: size}
	q.n++
	q.bytes += size
	if c != nil {
		c.retained.Store(true)
	}
	q.mu.Unlock()
	q.notEmpty.Signal()
	return nil
}

// full reports whether senders should wait; q.mu is held.
func (q *queueLink) full() bool { return q.n >= q.capacity || q.bytes >= q.maxBytes }

// Room implements Backpressure.
func (q *queueLink) Room() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.full() || q.closed || !q.running {
		return nil // a stopped queue fills no further: Send fails on the stopped chain
	}
	if q.room == nil {
		q.room = make(chan struct{})
	}
	return q.room
}

// wake releases the senders waiting for room; q.mu is held.
func (q *queueLink) wake() {
	if q.room != nil {
		close(q.room)
		q.room = nil
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
	q.done = make(chan struct{})
	go q.loop(q.done)
}

// causeReceiver is implemented by the engine's bindings: Receive with the
// budget of the message that caused m.
type causeReceiver interface {
	receive(m Message, c *cause) error
}

func (q *queueLink) loop(done chan struct{}) {
	defer close(done)
	cr, _ := q.to.(causeReceiver)
	q.mu.Lock()
	for {
		for q.n == 0 && q.running {
			q.notEmpty.Wait()
		}
		if !q.running {
			q.mu.Unlock()
			return
		}
		e := q.buf[q.head]
		q.mu.Unlock()
		var err error
		if cr != nil {
			err = cr.receive(e.m, e.c)
		} else {
			err = q.to.Receive(e.m)
		}
		if err != nil {
			// The chain is stopping: keep the head and wait for Stop.
			q.mu.Lock()
			for q.running {
				q.notEmpty.Wait()
			}
			q.mu.Unlock()
			return
		}
		q.mu.Lock()
		q.buf[q.head] = queued{}
		q.head = (q.head + 1) % len(q.buf)
		q.n--
		q.bytes -= e.size
		if q.n == 0 && len(q.buf) > 2*max(q.capacity, 64) {
			q.buf, q.head = make([]queued, min(q.capacity, 64)), 0 // shrink after an overflow
		}
		if !q.full() {
			q.wake()
		}
	}
}

func (q *queueLink) Stop() {
	q.mu.Lock()
	if !q.running {
		q.mu.Unlock()
		return
	}
	q.running = false
	q.wake()
	done := q.done
	q.mu.Unlock()
	q.notEmpty.Broadcast()
	<-done
}

func (q *queueLink) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

func (q *queueLink) Close() int {
	q.Stop()
	q.mu.Lock()
	n := q.n
	q.closed = true
	q.buf, q.head, q.n, q.bytes = nil, 0, 0, 0
	q.wake()
	q.mu.Unlock()
	return n
}
