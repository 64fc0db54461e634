package mediation

import "github.com/pervasim/pervasim/internal/errkind"

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

// errorf returns an error of kind with a formatted message (see errkind).
func errorf(kind error, format string, args ...any) error {
	return errkind.Errorf(kind, format, args...)
}
