package sim

import (
	"unicode/utf8"

	"github.com/pervasim/pervasim/internal/errkind"
	"github.com/pervasim/pervasim/internal/xmlcharset"
)

// MaxIDLength is the longest id, in bytes, accepted for a zone, device or
// person, and the longest property or variable name.
const MaxIDLength = 128

// MaxCoordinate bounds every coordinate and position, which lie in
// [-MaxCoordinate, MaxCoordinate], so that areas never overflow. Plans may
// use negative coordinates. A device created without a position is "not
// placed": at -1,-1 and outside every zone, even one covering -1,-1, until
// it is moved. A person's location always follows its position.
const MaxCoordinate = 1_000_000_000

// ValidID reports whether s is a valid id: 1 to [MaxIDLength] letters, digits
// and the characters '-', '_', '.' and ':', other than "." and "..", which
// as a path segment name the resource's parent: a browser (and most HTTP
// clients) resolves /devices/device/.. to /devices/, so that such a zone,
// device or person could be made but never read, changed or deleted.
func ValidID(s string) bool {
	if len(s) == 0 || len(s) > MaxIDLength || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

func checkID(what, id string) error {
	if id == "" {
		return invalidf("%s id is missing", what)
	}
	if !ValidID(id) {
		return invalidf("%s id %q is not valid: use 1 to %d letters, digits and -_.:, other than . and ..", what, truncate(id), MaxIDLength)
	}
	return nil
}

// Length limits of names and string values, in bytes.
const (
	// MaxNameLength bounds the display name of a zone, device or person.
	MaxNameLength = 512
	// MaxStringLength bounds a string property value.
	MaxStringLength = 64 << 10
)

// checkText validates a name or string value: valid UTF-8, at most max
// bytes, and not empty unless allowEmpty.
func checkText(what, s string, allowEmpty bool, max int) error {
	switch {
	case s == "" && !allowEmpty:
		return invalidf("%s is empty", what)
	case len(s) > max:
		return invalidf("%s is longer than %d bytes", what, max)
	case !utf8.ValidString(s):
		return invalidf("%s is not valid UTF-8", what)
	}
	return nil
}

// checkName validates the display name of a zone, device or person.
func checkName(what, s string) error { return checkWord(what, s, MaxNameLength) }

// checkKey validates a property or variable name.
func checkKey(what, s string) error { return checkWord(what, s, MaxIDLength) }

// checkWord validates a name: text of at most max bytes that a script (XML)
// can carry, so that every home can be written as one (WriteScript): no
// control character but tab, line feed and carriage return, no U+FFFE or
// U+FFFF. Property values are not names: a string any JSON can hold is
// written in the type attribute's JSON form.
func checkWord(what, s string, max int) error {
	if err := checkText(what, s, false, max); err != nil {
		return err
	}
	if !xmlcharset.Text(s) {
		return invalidf("%s %q holds a control character (or U+FFFE, U+FFFF), which a script cannot carry", what, truncate(s))
	}
	return nil
}

func checkPosition(name string, v int) error {
	if v < -MaxCoordinate || v > MaxCoordinate {
		return invalidf("%s must be between %d and %d, not %d", name, -MaxCoordinate, MaxCoordinate, v)
	}
	return nil
}

// truncate shortens s for an error message.
func truncate(s string) string { return errkind.Cut(s, 40) }
