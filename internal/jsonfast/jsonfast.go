// Package jsonfast reads and writes the JSON values pervasim passes around
// (what encoding/json makes of JSON: nil, bool, float64, string, []any,
// map[string]any, plus Go's other numbers) without reflection: the nats
// linker's batches and the REST device lists, where encoding/json's
// reflection was most of the cost. It reads and writes the same bytes as
// encoding/json (FuzzFastJSON compares the two); values of other types are
// written by encoding/json. Its functions are safe for concurrent use.
package jsonfast

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of arrays and objects, as encoding/json does:
// deeper is an error.
const MaxDepth = 10000

// Append appends v as JSON to b, as encoding/json writes it.
func Append(b []byte, v any) ([]byte, error) {
	return appendDepth(b, v, 0)
}

func appendDepth(b []byte, v any, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return b, errors.New("json: nested too deep")
	}
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case string:
		return AppendString(b, v), nil
	case float64:
		return appendFloat(b, v, 64)
	case float32:
		return appendFloat(b, float64(v), 32)
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(v), 10), nil
	case uint64:
		return strconv.AppendUint(b, v, 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(v), 10), nil
	case uint:
		return strconv.AppendUint(b, uint64(v), 10), nil
	case []any:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendDepth(b, e, depth+1); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '{')
		if len(v) == 1 {
			for k, e := range v {
				b = append(AppendString(b, k), ':')
				var err error
				if b, err = appendDepth(b, e, depth+1); err != nil {
					return b, err
				}
			}
			return append(b, '}'), nil
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // as encoding/json: the same map, the same bytes
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(AppendString(b, k), ':')
			var err error
			if b, err = appendDepth(b, v[k], depth+1); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, out...), nil
}

// appendFloat writes f as encoding/json does.
func appendFloat(b []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, fmt.Errorf("json: unsupported value: %v", f)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' { // clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string, as encoding/json writes it: <, >, &,
// U+2028 and U+2029 escaped, invalid UTF-8 as U+FFFD.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs a look.
		for i+8 <= len(s) && plain8(s[i:i+8]) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Byte masks of plain8.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plain8 reports whether the eight bytes of s (len(s) == 8) are all ASCII
// that AppendString copies as they are: at least 0x20, none of " \ < > &.
func plain8(s string) bool {
	_ = s[7]
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	if x&highs != 0 {
		return false // a byte of a multi-byte character
	}
	// A byte of x below 0x20 sets its high bit in (x - 0x20*ones) &^ x, and
	// a zero byte of v = x ^ c*ones (a byte of x equal to c) in
	// (v - ones) &^ v, as long as no byte has its high bit set.
	q, bs, lt, gt, amp := x^('"'*ones), x^('\\'*ones), x^('<'*ones), x^('>'*ones), x^('&'*ones)
	t := (x - 0x20*ones) &^ x
	t |= (q - ones) &^ q
	t |= (bs - ones) &^ bs
	t |= (lt - ones) &^ lt
	t |= (gt - ones) &^ gt
	t |= (amp - ones) &^ amp
	return t&highs == 0
}

// Parser reads JSON values as encoding/json does into an any, from Data
// at I. It is not safe for concurrent use.
type Parser struct {
	Data []byte
	I    int
}

// Errorf returns an error at the parser's position.
func (p *Parser) Errorf(format string, args ...any) error {
	return fmt.Errorf("json at byte %d: %s", p.I, fmt.Sprintf(format, args...))
}

// Space skips white space.
func (p *Parser) Space() {
	for p.I < len(p.Data) {
		switch p.Data[p.I] {
		case ' ', '\t', '\n', '\r':
			p.I++
		default:
			return
		}
	}
}

// Parse reads data, one JSON value with nothing after it but space, as
// encoding/json reads it into an any.
func Parse(data []byte) (any, error) {
	p := &Parser{Data: data}
	v, err := p.Value(0)
	if err != nil {
		return nil, err
	}
	p.Space()
	if p.I != len(p.Data) {
		return nil, p.Errorf("data after the value")
	}
	return v, nil
}

// Value reads a value at depth (nesting so far).
func (p *Parser) Value(depth int) (any, error) {
	if depth > MaxDepth {
		return nil, p.Errorf("nested too deep")
	}
	p.Space()
	if p.I >= len(p.Data) {
		return nil, p.Errorf("unexpected end")
	}
	switch c := p.Data[p.I]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		p.I++
		out := []any{}
		p.Space()
		if p.I < len(p.Data) && p.Data[p.I] == ']' {
			p.I++
			return out, nil
		}
		for {
			v, err := p.Value(depth + 1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			p.Space()
			if p.I >= len(p.Data) {
				return nil, p.Errorf("unexpected end in an array")
			}
			switch p.Data[p.I] {
			case ',':
				p.I++
			case ']':
				p.I++
				return out, nil
			default:
				return nil, p.Errorf("want , or ] in an array")
			}
		}
	case c == '"':
		return p.string()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return nil, p.Errorf("unexpected %q", p.Data[p.I])
}

func (p *Parser) literal(word string) error {
	if len(p.Data)-p.I < len(word) || string(p.Data[p.I:p.I+len(word)]) != word {
		return p.Errorf("want %s", word)
	}
	p.I += len(word)
	return nil
}

func (p *Parser) object(depth int) (map[string]any, error) {
	p.I++
	out := make(map[string]any, 4)
	p.Space()
	if p.I < len(p.Data) && p.Data[p.I] == '}' {
		p.I++
		return out, nil
	}
	for {
		p.Space()
		if p.I >= len(p.Data) || p.Data[p.I] != '"' {
			return nil, p.Errorf("want a key")
		}
		k, err := p.string()
		if err != nil {
			return nil, err
		}
		p.Space()
		if p.I >= len(p.Data) || p.Data[p.I] != ':' {
			return nil, p.Errorf("want : after a key")
		}
		p.I++
		v, err := p.Value(depth + 1)
		if err != nil {
			return nil, err
		}
		out[k] = v
		p.Space()
		if p.I >= len(p.Data) {
			return nil, p.Errorf("unexpected end in an object")
		}
		switch p.Data[p.I] {
		case ',':
			p.I++
		case '}':
			p.I++
			return out, nil
		default:
			return nil, p.Errorf("want , or } in an object")
		}
	}
}

// number reads a number as a float64, checking RFC 8259's grammar.
func (p *Parser) number() (any, error) {
	start := p.I
	d := p.Data
	if d[p.I] == '-' {
		p.I++
	}
	digits := func() int {
		n := 0
		for p.I < len(d) && d[p.I] >= '0' && d[p.I] <= '9' {
			p.I++
			n++
		}
		return n
	}
	if p.I < len(d) && d[p.I] == '0' {
		p.I++
	} else if digits() == 0 {
		return nil, p.Errorf("bad number")
	}
	if p.I < len(d) && d[p.I] == '.' {
		p.I++
		if digits() == 0 {
			return nil, p.Errorf("bad number")
		}
	}
	if p.I < len(d) && (d[p.I] == 'e' || d[p.I] == 'E') {
		p.I++
		if p.I < len(d) && (d[p.I] == '+' || d[p.I] == '-') {
			p.I++
		}
		if digits() == 0 {
			return nil, p.Errorf("bad number")
		}
	}
	f, err := strconv.ParseFloat(string(d[start:p.I]), 64)
	if err != nil {
		return nil, p.Errorf("number %s: %v", d[start:p.I], err) // out of range, as encoding/json
	}
	return f, nil
}

// string reads a string, replacing invalid UTF-8 and lone surrogates by
// U+FFFD as encoding/json does.
func (p *Parser) string() (string, error) {
	p.I++
	d := p.Data
	start := p.I
	// The common case: no escape, all ASCII or valid UTF-8.
	for p.I < len(d) {
		c := d[p.I]
		if c == '"' {
			s := string(d[start:p.I])
			p.I++
			return s, nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		p.I++
	}
	b := make([]byte, 0, p.I-start+16)
	b = append(b, d[start:p.I]...)
	for p.I < len(d) {
		c := d[p.I]
		switch {
		case c == '"':
			p.I++
			return string(b), nil
		case c < 0x20:
			return "", p.Errorf("control character in a string")
		case c == '\\':
			p.I++
			if p.I >= len(d) {
				return "", p.Errorf("unexpected end in a string")
			}
			switch e := d[p.I]; e {
			case '"', '\\', '/':
				b = append(b, e)
				p.I++
			case 'b':
				b = append(b, '\b')
				p.I++
			case 'f':
				b = append(b, '\f')
				p.I++
			case 'n':
				b = append(b, '\n')
				p.I++
			case 'r':
				b = append(b, '\r')
				p.I++
			case 't':
				b = append(b, '\t')
				p.I++
			case 'u':
				r, ok := p.hex4(p.I + 1)
				if !ok {
					return "", p.Errorf("bad \\u escape")
				}
				p.I += 5
				if utf16.IsSurrogate(r) {
					r2, ok := rune(-1), false
					if p.I+1 < len(d) && d[p.I] == '\\' && d[p.I+1] == 'u' {
						r2, ok = p.hex4(p.I + 2)
					}
					if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
						p.I += 6
						r = dec
					} else {
						r = utf8.RuneError
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				return "", p.Errorf("bad escape \\%c", e)
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			p.I++
		default:
			r, size := utf8.DecodeRune(d[p.I:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, d[p.I:p.I+size]...)
			}
			p.I += size
		}
	}
	return "", p.Errorf("unexpected end in a string")
}

// Key reads a string at p.I and returns its bytes: in place when it has no
// escape and is plain ASCII, else as a new string's bytes.
func (p *Parser) Key() ([]byte, error) {
	start := p.I + 1
	for i := start; i < len(p.Data); i++ {
		c := p.Data[i]
		if c == '"' {
			p.I = i + 1
			return p.Data[start:i], nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	s, err := p.string()
	return []byte(s), err
}

// hex4 reads four hex digits at i.
func (p *Parser) hex4(i int) (rune, bool) {
	if i+4 > len(p.Data) {
		return 0, false
	}
	var r rune
	for _, c := range p.Data[i : i+4] {
		v, ok := unhex(c)
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
