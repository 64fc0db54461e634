package mediation

import (
	"fmt"
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
	// Send hands m over. It may block for backpressure while the link is
	// started, but must not block for long once Stop has been called.
	// An error means m was not taken; it is counted as dropped.
	Send(m Message) error
	// Start begins delivering to the Receiver (the chain was started).
	Start()
	// Stop stops delivering and returns once no goroutine of the link is
	// in Receive any more. Undelivered messages are kept for the next
	// Start. Stop first releases senders blocked in Send.
	Stop()
	// Len returns the number of messages taken and not yet delivered.
	Len() int
	// Close stops the link for good, discards what it holds and returns
	// how many messages it discarded. Send fails afterwards.
	Close() int
}

// DefaultQueueCapacity is the capacity of a queue binding without a
// "capacity" property.
const DefaultQueueCapacity = 1024

// directLinker is the "direct" linker: synchronous hand-off on the
// producer's goroutine.
type directLinker struct{}

// NewLink returns a direct link; it accepts no property.
func (directLinker) NewLink(props map[string]any, to Receiver) (Link, error) {
	for k := range props {
		return nil, fmt.Errorf("%w: direct linker has no property %q", ErrInvalid, k)
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
// DefaultQueueCapacity) and returns a stopped queue. The broker properties
// of chains written for Cilia's JMS linker ("topic" and any "jms.*", such as
// jms.topic) are accepted and ignored: the queue is in process. Any other
// property is an error, so that typos are caught.
func (queueLinker) NewLink(props map[string]any, to Receiver) (Link, error) {
	capacity := DefaultQueueCapacity
	for k, v := range props {
		if k == "topic" || strings.HasPrefix(k, "jms.") {
			continue
		}
		if k != "capacity" {
			return nil, fmt.Errorf("%w: queue linker has no property %q (known: capacity, topic, jms.*)", ErrInvalid, k)
		}
		n, err := optInt(v)
		if err != nil || n < 1 || n > 1<<24 {
			return nil, fmt.Errorf("%w: queue capacity %v: want an integer from 1 to %d", ErrInvalid, v, 1<<24)
		}
		capacity = n
	}
	q := &queueLink{to: to, capacity: capacity, buf: make([]Message, min(capacity, 64))}
	q.notEmpty.L = &q.mu
	q.notFull.L = &q.mu
	return q, nil
}

// queueLink is a bounded ring buffer with one delivering goroutine.
//
// Send blocks while the queue is full and started; once stopped it never
// blocks (the queue may then exceed its capacity by the messages of the
// processing calls that were in flight when the chain stopped, a bounded
// number). The head stays in the queue until Receive accepted it, so a stop
// or a failed delivery loses nothing.
type queueLink struct {
	to       Receiver
	capacity int

	mu       sync.Mutex
	notEmpty sync.Cond // signalled on push, and on stop
	notFull  sync.Cond // signalled on pop, and on stop/close
	buf      []Message // ring
	head, n  int
	running  bool
	closed   bool
	done     chan struct{} // closed when the goroutine of the current run exits
}

func (q *queueLink) Send(m Message) error {
	q.mu.Lock()
	for q.n >= q.capacity && q.running && !q.closed {
		q.notFull.Wait()
	}
	if q.closed {
		q.mu.Unlock()
		return fmt.Errorf("%w: queue closed", ErrConflict)
	}
	if q.n == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.n)%len(q.buf)] = m
	q.n++
	q.mu.Unlock()
	q.notEmpty.Signal()
	return nil
}

// grow doubles the ring; q.mu is held.
func (q *queueLink) grow() {
	nb := make([]Message, max(2*len(q.buf), 1))
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

func (q *queueLink) loop(done chan struct{}) {
	defer close(done)
	q.mu.Lock()
	for {
		for q.n == 0 && q.running {
			q.notEmpty.Wait()
		}
		if !q.running {
			q.mu.Unlock()
			return
		}
		m := q.buf[q.head]
		q.mu.Unlock()
		if err := q.to.Receive(m); err != nil {
			// The chain is stopping: keep m at the head and wait for Stop.
			q.mu.Lock()
			for q.running {
				q.notEmpty.Wait()
			}
			q.mu.Unlock()
			return
		}
		q.mu.Lock()
		q.buf[q.head] = Message{}
		q.head = (q.head + 1) % len(q.buf)
		q.n--
		if q.n == 0 && len(q.buf) > 2*q.capacity {
			q.buf, q.head = make([]Message, min(q.capacity, 64)), 0 // shrink after an overflow
		}
		q.notFull.Signal()
	}
}

func (q *queueLink) Stop() {
	q.mu.Lock()
	if !q.running {
		q.mu.Unlock()
		return
	}
	q.running = false
	done := q.done
	q.mu.Unlock()
	q.notFull.Broadcast()
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
	q.buf, q.head, q.n = nil, 0, 0
	q.mu.Unlock()
	q.notFull.Broadcast()
	return n
}
