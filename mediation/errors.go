package mediation

import "errors"

// Sentinel error kinds. Every error returned by this package wraps exactly one of them, with context.
var (
	// ErrNotFound is wrapped by errors reporting that a named chain, component,
	// binding or type does not exist (or no longer exists).
	ErrNotFound = errors.New("not found")
	// ErrInvalid is wrapped by errors reporting a malformed or unacceptable
	// request: a bad identifier, endpoint, port, property, type or linker name.
	ErrInvalid = errors.New("invalid")
	// ErrConflict is wrapped by errors reporting that a request clashes with the
	// current state: a duplicate identifier or binding, or an operation that
	// needs a started chain.
	ErrConflict = errors.New("conflict")
	// ErrBusy is wrapped by errors reporting that a bound was reached: a
	// queue on the way of a message stayed full for longer than a send
	// may wait, a message caused more deliveries than one may, a chain or
	// an engine holds as many components, bindings or chains as it may,
	// or a component was given more than it may hold. Trying again later
	// (or with less) may succeed.
	ErrBusy = errors.New("busy")
)
