package mediation

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// scanner is the position of a hand-written parser in its input, shared by
// the properties and filter parsers.
type scanner struct {
	what string // names the input in error messages: "properties", "filter"
	s    string
	off  int
}

func (p *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf(p.what+": "+format+": %w", append(args, ErrInvalid)...)
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
