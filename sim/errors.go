package sim

import (
	"errors"
	"fmt"
)

// Sentinel error kinds. Every error returned by a [Home] method wraps exactly
// one of them, with context such as the id or the field at fault, so callers
// test the kind with errors.Is and show the message to people.
var (
	// ErrNotFound reports that a zone, device, person or clock does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInvalid reports a bad or missing field, a malformed id or a value out
	// of range. Nothing was changed.
	ErrInvalid = errors.New("invalid")
	// ErrConflict reports that an id is already taken.
	ErrConflict = errors.New("conflict")
)

// invalidf returns an error of kind ErrInvalid with a formatted message.
func invalidf(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, ErrInvalid)...)
}

// notFoundf returns an error of kind ErrNotFound with a formatted message.
func notFoundf(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, ErrNotFound)...)
}

// conflictf returns an error of kind ErrConflict with a formatted message.
func conflictf(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, ErrConflict)...)
}
