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
)
