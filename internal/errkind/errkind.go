// Package errkind is the one error model of pervasim: the kinds of error
// that sim, mediation and bridge return, and the way they word them.
//
// Each package re-exports the kinds it uses under its own names (sim.ErrInvalid
// and mediation.ErrInvalid are the same value), so a caller tests the kind
// with errors.Is whatever package the error came from, and httpapi maps
// kinds to HTTP statuses with errors.Is alone. The message of an error is a
// sentence for people that says what is wrong, without the kind's name:
// "zone \"kitchen\" does not exist", not "not found: zone …".
package errkind

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// The kinds.
var (
	// Invalid: a bad or missing field, a malformed id, a value out of
	// range, an unknown type. Nothing was changed.
	Invalid = errors.New("invalid")
	// NotFound: what the request names does not exist.
	NotFound = errors.New("not found")
	// Conflict: the request clashes with the current state (an id taken, a
	// chain not started, a script running).
	Conflict = errors.New("conflict")
	// Busy: a bound was reached (a queue stays full, too many deliveries,
	// streams, components…); trying again later, or with less, may work.
	Busy = errors.New("busy")
	// Storage: the disk refused to keep a change (it is full, or failing),
	// so the change was not made.
	Storage = errors.New("storage")
)

// Error is an error of one kind. Its message is Err's; errors.Is matches
// Kind, and anything Err wraps. Error is safe for concurrent use.
type Error struct {
	Kind error
	Err  error
}

// Error returns the message, without the kind.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the kind and the error that carries the message.
func (e *Error) Unwrap() []error { return []error{e.Kind, e.Err} }

// Errorf returns an error of kind whose message is formatted as fmt.Errorf
// formats it (a %w verb wraps its operand too).
func Errorf(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Err: fmt.Errorf(format, args...)}
}

// Of returns the kind of err (one of the kinds above), or nil.
func Of(err error) error {
	for _, k := range []error{Invalid, NotFound, Conflict, Busy, Storage} {
		if errors.Is(err, k) {
			return k
		}
	}
	return nil
}

// Cut returns s, cut to at most max bytes on a character boundary and
// ended with "…" when it is longer: what an error message quotes of what
// was sent (an id, a type, a whole message) stays a sentence to read.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
