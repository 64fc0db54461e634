package mediation

import (
	"errors"
	"fmt"

	"github.com/pervasim/pervasim/internal/errkind"
)

// ErrDirectLoop is wrapped, beside ErrInvalid, by the error of a Bind (or
// Replace) that would close a loop of direct bindings through an in-out
// adapter: no cycle, since the adapter's in side ends it, but a deadlock,
// since the message would come back to the adapter while its own call
// holds it. Binding one link of the loop asynchronously (queue) avoids it.
var ErrDirectLoop = errors.New("a loop of direct bindings through an in-out adapter")

// loopError is an ErrInvalid error that also wraps ErrDirectLoop.
type loopError struct{ msg string }

func (e loopError) Error() string { return e.msg }
func (e loopError) Unwrap() error { return ErrDirectLoop }

// directLoopf returns an error of kind ErrInvalid wrapping ErrDirectLoop.
func directLoopf(format string, args ...any) error {
	return &errkind.Error{Kind: ErrInvalid, Err: loopError{fmt.Sprintf(format, args...)}}
}

// Sentinel error kinds, shared by every package of pervasim (sim's are the
// same values). Every error returned by this package wraps exactly one of
// them; its message says what is wrong, without the kind's name.
var (
	// ErrNotFound is wrapped by errors reporting that a named chain, component,
	// binding or type does not exist (or no longer exists).
	ErrNotFound = errkind.NotFound
	// ErrInvalid is wrapped by errors reporting a malformed or unacceptable
	// request: a bad identifier, endpoint, port, property, type or linker name.
	ErrInvalid = errkind.Invalid
	// ErrConflict is wrapped by errors reporting that a request clashes with the
	// current state: a duplicate identifier or binding, or an operation that
	// needs a started chain.
	ErrConflict = errkind.Conflict
	// ErrBusy is wrapped by errors reporting that a bound was reached: a
	// queue on the way of a message stayed full for longer than a send
	// may wait, a message caused more deliveries than one may, a chain or
	// an engine holds as many components, bindings or chains as it may,
	// or a component was given more than it may hold. Trying again later
	// (or with less) may succeed.
	ErrBusy = errkind.Busy
)

// ErrNotTaken is wrapped, beside its kind, by the errors of Chain.Send,
// SendContext and TrySend that came before the message was taken in: the
// chain or the component is missing or not started, a queue ahead stayed
// full, or the component's Injector refused it with an error that wraps
// ErrNotTaken itself (see NotTaken; a nats-in with a stream does so when
// it has no binding). Nothing the message would cause was done, so a source that
// can offer it again (a stream consumer) may. An error without it came
// after the message entered the chain (a bound reached on the way, a
// component refusing it): what was done stays done, and offering the
// message again would do it again.
var ErrNotTaken = errors.New("message not taken")

// NotTaken marks err with ErrNotTaken, keeping its kind and message: an
// Injector that refuses a message before emitting anything returns it so,
// and Send's error then says the message was not taken. Nil stays nil.
func NotTaken(err error) error {
	if err == nil || errors.Is(err, ErrNotTaken) {
		return err
	}
	return &notTakenError{err}
}

type notTakenError struct{ err error }

func (e *notTakenError) Error() string   { return e.err.Error() }
func (e *notTakenError) Unwrap() []error { return []error{e.err, ErrNotTaken} }

// errorf returns an error of kind with a formatted message (see errkind).
func errorf(kind error, format string, args ...any) error {
	return errkind.Errorf(kind, format, args...)
}
