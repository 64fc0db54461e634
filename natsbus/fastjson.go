package natsbus

// A JSON codec for the values chain messages hold (what encoding/json makes
// of JSON: nil, bool, float64, string, []any, map[string]any, plus Go's
// other numbers), for the nats linker's batches, where encoding/json's
// reflection was three quarters of the cost of a hop. It reads and writes
// the same JSON as encoding/json: FuzzFastJSON compares the two. Values of
// other types are written by encoding/json.

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

// maxDepth bounds the nesting of arrays and objects, as encoding/json does.
const maxDepth = 10000

// appendJSON appends v as JSON to b.
func appendJSON(b []byte, v any) ([]byte, error) {
	return appendJSONDepth(b, v, 0)
}

func appendJSONDepth(b []byte, v any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return b, errors.New("json: nested too deep")
	}
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case string:
		return appendString(b, v), nil
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
			if b, err = appendJSONDepth(b, e, depth+1); err != nil {
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
				b = append(appendString(b, k), ':')
				var err error
				if b, err = appendJSONDepth(b, e, depth+1); err != nil {
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
			b = append(appendString(b, k), ':')
			var err error
			if b, err = appendJSONDepth(b, v[k], depth+1); err != nil {
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

// appendString writes s as a JSON string, as encoding/json does: <, >, &,
// U+2028 and U+2029 escaped, invalid UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
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

// parser reads JSON values as encoding/json does into an any.
type parser struct {
	data []byte
	i    int
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("json at byte %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *parser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// parseJSON reads data, one JSON value with nothing after it but space.
func parseJSON(data []byte) (any, error) {
	p := &parser{data: data}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.data) {
		return nil, p.errorf("data after the value")
	}
	return v, nil
}

func (p *parser) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errorf("nested too deep")
	}
	p.space()
	if p.i >= len(p.data) {
		return nil, p.errorf("unexpected end")
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		p.i++
		out := []any{}
		p.space()
		if p.i < len(p.data) && p.data[p.i] == ']' {
			p.i++
			return out, nil
		}
		for {
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			p.space()
			if p.i >= len(p.data) {
				return nil, p.errorf("unexpected end in an array")
			}
			switch p.data[p.i] {
			case ',':
				p.i++
			case ']':
				p.i++
				return out, nil
			default:
				return nil, p.errorf("want , or ] in an array")
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
	return nil, p.errorf("unexpected %q", p.data[p.i])
}

func (p *parser) literal(word string) error {
	if len(p.data)-p.i < len(word) || string(p.data[p.i:p.i+len(word)]) != word {
		return p.errorf("want %s", word)
	}
	p.i += len(word)
	return nil
}

func (p *parser) object(depth int) (map[string]any, error) {
	p.i++
	out := make(map[string]any, 4)
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return out, nil
	}
	for {
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, p.errorf("want a key")
		}
		k, err := p.string()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, p.errorf("want : after a key")
		}
		p.i++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out[k] = v
		p.space()
		if p.i >= len(p.data) {
			return nil, p.errorf("unexpected end in an object")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return out, nil
		default:
			return nil, p.errorf("want , or } in an object")
		}
	}
}

// number reads a number as a float64, checking RFC 8259's grammar.
func (p *parser) number() (any, error) {
	start := p.i
	d := p.data
	if d[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(d) && d[p.i] >= '0' && d[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(d) && d[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return nil, p.errorf("bad number")
	}
	if p.i < len(d) && d[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, p.errorf("bad number")
		}
	}
	if p.i < len(d) && (d[p.i] == 'e' || d[p.i] == 'E') {
		p.i++
		if p.i < len(d) && (d[p.i] == '+' || d[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.errorf("bad number")
		}
	}
	f, err := strconv.ParseFloat(string(d[start:p.i]), 64)
	if err != nil {
		return nil, p.errorf("number %s: %v", d[start:p.i], err) // out of range, as encoding/json
	}
	return f, nil
}

// string reads a string, replacing invalid UTF-8 and lone surrogates by
// U+FFFD as encoding/json does.
func (p *parser) string() (string, error) {
	p.i++
	d := p.data
	start := p.i
	// The common case: no escape, all ASCII or valid UTF-8.
	for p.i < len(d) {
		c := d[p.i]
		if c == '"' {
			s := string(d[start:p.i])
			p.i++
			return s, nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		p.i++
	}
	b := make([]byte, 0, p.i-start+16)
	b = append(b, d[start:p.i]...)
	for p.i < len(d) {
		c := d[p.i]
		switch {
		case c == '"':
			p.i++
			return string(b), nil
		case c < 0x20:
			return "", p.errorf("control character in a string")
		case c == '\\':
			p.i++
			if p.i >= len(d) {
				return "", p.errorf("unexpected end in a string")
			}
			switch e := d[p.i]; e {
			case '"', '\\', '/':
				b = append(b, e)
				p.i++
			case 'b':
				b = append(b, '\b')
				p.i++
			case 'f':
				b = append(b, '\f')
				p.i++
			case 'n':
				b = append(b, '\n')
				p.i++
			case 'r':
				b = append(b, '\r')
				p.i++
			case 't':
				b = append(b, '\t')
				p.i++
			case 'u':
				r, ok := p.hex4(p.i + 1)
				if !ok {
					return "", p.errorf("bad \\u escape")
				}
				p.i += 5
				if utf16.IsSurrogate(r) {
					r2, ok := rune(-1), false
					if p.i+1 < len(d) && d[p.i] == '\\' && d[p.i+1] == 'u' {
						r2, ok = p.hex4(p.i + 2)
					}
					if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
						p.i += 6
						r = dec
					} else {
						r = utf8.RuneError
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				return "", p.errorf("bad escape \\%c", e)
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			p.i++
		default:
			r, size := utf8.DecodeRune(d[p.i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, d[p.i:p.i+size]...)
			}
			p.i += size
		}
	}
	return "", p.errorf("unexpected end in a string")
}

// key reads a string at p.i and returns its bytes: in place when it has no
// escape and is plain ASCII, else as a new string's bytes.
func (p *parser) key() ([]byte, error) {
	start := p.i + 1
	for i := start; i < len(p.data); i++ {
		c := p.data[i]
		if c == '"' {
			p.i = i + 1
			return p.data[start:i], nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	s, err := p.string()
	return []byte(s), err
}

// hex4 reads four hex digits at i.
func (p *parser) hex4(i int) (rune, bool) {
	if i+4 > len(p.data) {
		return 0, false
	}
	var r rune
	for _, c := range p.data[i : i+4] {
		v, ok := unhex(c)
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}
