package sim

import "github.com/pervasim/pervasim/internal/errkind"

// Sentinel error kinds, shared by every package of pervasim (mediation's
// are the same values). Every error returned by a [Home] method wraps
// exactly one of them; its message says what is wrong, with context such as
// the id or the field at fault, without the kind's name. Callers test the
// kind with errors.Is and show the message to people.
var (
	// ErrNotFound reports that a zone, device, person, script or clock does
	// not exist.
	ErrNotFound = errkind.NotFound
	// ErrInvalid reports a bad or missing field, a malformed id or a value out
	// of range. Nothing was changed.
	ErrInvalid = errkind.Invalid
	// ErrConflict reports that an id is already taken, or that the request
	// clashes with the current state (a script running).
	ErrConflict = errkind.Conflict
	// ErrBusy reports that a bound was reached.
	ErrBusy = errkind.Busy
)

// invalidf returns an error of kind ErrInvalid with a formatted message.
func invalidf(format string, args ...any) error {
	return errkind.Errorf(ErrInvalid, format, args...)
}

// notFoundf returns an error of kind ErrNotFound with a formatted message.
func notFoundf(format string, args ...any) error {
	return errkind.Errorf(ErrNotFound, format, args...)
}

// conflictf returns an error of kind ErrConflict with a formatted message.
func conflictf(format string, args ...any) error {
	return errkind.Errorf(ErrConflict, format, args...)
}
