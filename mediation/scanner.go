package mediation

import (
	"strconv"
	"unicode/utf8"
)

// newScanner checks the input of a parser (at most max bytes, valid UTF-8)
// and returns a scanner at its start.
func newScanner(what, s string, max int) (scanner, error) {
	if len(s) > max {
		return scanner{}, errorf(ErrInvalid, "%s: input of %d bytes is longer than the limit of %d bytes at offset %d",
			what, len(s), max, max)
	}
	if !utf8.ValidString(s) {
		off := 0
		for off < len(s) {
			r, n := utf8.DecodeRuneInString(s[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return scanner{}, errorf(ErrInvalid, "%s: invalid UTF-8 at offset %d", what, off)
	}
	return scanner{what: what, s: s}, nil
}

// scanner is the position of a hand-written parser in its input, shared by
// the properties and filter parsers.
type scanner struct {
	what string // names the input in error messages: "properties", "filter"
	s    string
	off  int
}

func (p *scanner) errorf(format string, args ...any) error {
	return errorf(ErrInvalid, p.what+": "+format, args...)
}

func (p *scanner) eof() bool { return p.off >= len(p.s) }

// found describes the character at the current offset for an error message.
func (p *scanner) found() string {
	if p.eof() {
		return "end of input"
	}
	r, _ := utf8.DecodeRuneInString(p.s[p.off:])
	return strconv.QuoteRune(r)
}

func isSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '\v':
		return true
	}
	return false
}

func (p *scanner) skipSpace() {
	for !p.eof() && isSpace(p.s[p.off]) {
		p.off++
	}
}
