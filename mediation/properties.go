package mediation

import (
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pervasim/pervasim/internal/xmlcharset"
)

// MaxPropertyDepth is how deep a component's properties may nest: objects
// and arrays, the properties' own map counting as one level. Deeper ones
// are an error of kind [ErrInvalid], however they come (text, JSON, Go).
const MaxPropertyDepth = propMaxDepth

// Limits of ParseProperties.
const (
	propMaxInput = 1 << 20 // bytes
	propMaxDepth = 64      // nested objects and arrays, the top-level object included
)

// ParseProperties parses a property map written in strict JSON or in the
// relaxed notation of the old json.org JSONTokener, such as {name=titi},
// {jms.topic=wiki}, {a:1; b=>true,} or {'k' => 'v w'}.
//
// The relaxed notation accepts "=", ":" or "=>" between a key and its value,
// "," or ";" between pairs (and between array elements), a trailing
// separator before "}" or "]", single- or double-quoted strings with the
// JSON backslash escapes (plus \'), and unquoted keys and values. Unquoted
// text ends at any of , : ] } / \ " [ { ; = # or at the end of the input,
// and is trimmed of surrounding ASCII whitespace; inner spaces are kept, so
// {msg=hello world} gives the string "hello world". An unquoted key or value
// that starts with "(" runs to its matching ")" (a backslash escapes the
// next character) and stays a string, so LDAP filters need no quotes:
// {condition=(&(kind=temp)(value>=20))}. Objects and arrays nest
// to a depth of 64, the top-level object counting as 1.
//
// Unquoted values are typed: true, false and null (in any letter case)
// become a bool or nil; text that strconv.ParseFloat accepts as a finite
// number becomes a float64 (every number is a float64, strict JSON numbers
// included, so that printing and parsing again is stable; NaN, Infinity and
// out-of-range spellings stay strings); anything else stays a string.
// Quoted values are always strings, and unquoted keys are never converted.
// A duplicate key keeps its last value.
//
// Empty input, input made only of whitespace, and {} give an empty non-nil
// map and a nil error. Otherwise the top level must be an object followed by
// nothing but whitespace. An empty key (quoted or not), a key without a
// value, invalid UTF-8, raw control characters (except whitespace outside
// quoted strings, and tabs inside them), deeper nesting and input longer than
// 1 MiB are rejected.
// Every error wraps ErrInvalid and gives the byte offset of the fault.
func ParseProperties(s string) (map[string]any, error) {
	sc, err := newScanner("properties", s, propMaxInput)
	if err != nil {
		return nil, err
	}
	p := &propParser{sc}
	p.skipSpace()
	if p.eof() {
		return map[string]any{}, nil
	}
	if p.s[p.off] != '{' {
		return nil, p.errorf("the top level must be an object, found %s at offset %d", p.found(), p.off)
	}
	m, err := p.object(1)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if !p.eof() {
		return nil, p.errorf("unexpected %s at offset %d after the closing '}'", p.found(), p.off)
	}
	return m, nil
}

// FormatProperties prints m as strict JSON with sorted keys;
// ParseProperties(FormatProperties(m)) returns a map equal to m.
//
// The round trip is exact for the values ParseProperties produces: string,
// float64, bool, nil, map[string]any and []any. A nil or empty map prints as
// {}. HTML characters are not escaped. Other values are printed as
// encoding/json prints them; a value that encoding/json cannot print (NaN,
// infinities, channels, functions, complex numbers) is printed as its text
// in a string instead, and one nested deeper than 64 levels or cyclic as
// null.
func FormatProperties(m map[string]any) string {
	if len(m) == 0 {
		return "{}"
	}
	out, err := propMarshal(m)
	if err != nil {
		out, err = propMarshal(propSanitize(m, 1))
		if err != nil {
			return "{}"
		}
	}
	return out
}

// propMarshal prints v as compact JSON without HTML escaping.
func propMarshal(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// checkProps fails with ErrInvalid when the properties nest deeper than
// ParseProperties lets text nest (the map itself counting as 1), as they
// may when given as Go values or decoded from JSON: the components'
// properties are copied, printed and exported, so their depth is bounded
// (a cyclic map is too deep as well). It also fails on an empty property
// name, which a chain file cannot name, and on a property name holding a
// character that a chain file (XML) cannot carry: a control
// character other than tab, line feed and carriage return, U+FFFE, U+FFFF
// or invalid UTF-8; values may hold any character (DSCilia writes them as
// JSON). And it fails on a value JSON cannot carry (a func, a chan, a
// complex number, a NaN or infinite number, a map with keys of a type JSON
// has none for), given through the Go API: the chain could not be exported
// as DSCilia, its state directory's snapshots would fail, and the REST
// API could not answer with the component.
func checkProps(props map[string]any) error {
	for k := range props {
		if k == "" {
			return errorf(ErrInvalid, "a property needs a name")
		}
		if !xmlcharset.Text(k) {
			return errorf(ErrInvalid, "property name %q holds a control character (or U+FFFE, U+FFFF, invalid UTF-8), which a chain file cannot carry", k)
		}
	}
	if tooDeep(props, 1) {
		return errorf(ErrInvalid, "properties: nesting deeper than %d", propMaxDepth)
	}
	// props is not too deep, so not cyclic: encoding/json, which prints
	// the properties everywhere they go, says whether it can.
	for k, v := range props {
		if _, err := json.Marshal(v); err != nil {
			return errorf(ErrInvalid, "property %q: JSON cannot carry it (numbers must be finite; no func, chan or complex number): %v", k, err)
		}
	}
	return nil
}

// tooDeep reports whether v, at depth, holds a map or slice deeper than
// propMaxDepth.
func tooDeep(v any, depth int) bool {
	var elems iter.Seq[any]
	switch x := v.(type) {
	case map[string]any:
		elems = maps.Values(x)
	case []any:
		elems = slices.Values(x)
	default:
		return false
	}
	if depth > propMaxDepth {
		return true
	}
	for e := range elems {
		if tooDeep(e, depth+1) {
			return true
		}
	}
	return false
}

// propSanitize returns a copy of v that encoding/json can print; see
// FormatProperties.
func propSanitize(v any, depth int) any {
	if depth > propMaxDepth {
		return nil
	}
	switch x := v.(type) {
	case nil, bool, string:
		return x
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
		return x
	case float32:
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return strconv.FormatFloat(f, 'g', -1, 32)
		}
		return x
	case map[string]any:
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = propSanitize(e, depth+1)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = propSanitize(e, depth+1)
		}
		return c
	}
	if _, err := json.Marshal(v); err == nil {
		return v
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Chan, reflect.Func, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128:
		return fmt.Sprint(v)
	}
	return nil
}

// propParser is the state of one ParseProperties call.
type propParser struct{ scanner }

// propIsStop reports whether c ends unquoted text.
func propIsStop(c byte) bool {
	return strings.IndexByte(",:]}/\\\"[{;=#", c) >= 0
}

// object parses an object; p.off is at its '{'.
func (p *propParser) object(depth int) (map[string]any, error) {
	if depth > propMaxDepth {
		return nil, p.errorf("nesting deeper than %d at offset %d", propMaxDepth, p.off)
	}
	open := p.off
	p.off++
	m := map[string]any{}
	for {
		p.skipSpace()
		if p.eof() {
			return nil, p.errorf("unterminated object opened at offset %d: unexpected end of input at offset %d", open, p.off)
		}
		if p.s[p.off] == '}' {
			p.off++
			return m, nil
		}
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		switch {
		case p.eof():
			return nil, p.errorf("missing ':', '=' or '=>' after key %q: unexpected end of input at offset %d", key, p.off)
		case p.s[p.off] == ':':
			p.off++
		case p.s[p.off] == '=':
			p.off++
			if !p.eof() && p.s[p.off] == '>' {
				p.off++
			}
		default:
			return nil, p.errorf("expected ':', '=' or '=>' after key %q, found %s at offset %d", key, p.found(), p.off)
		}
		p.skipSpace()
		v, err := p.value(depth, key, false)
		if err != nil {
			return nil, err
		}
		m[key] = v
		p.skipSpace()
		switch {
		case p.eof():
			return nil, p.errorf("unterminated object opened at offset %d: unexpected end of input at offset %d", open, p.off)
		case p.s[p.off] == ',' || p.s[p.off] == ';':
			p.off++
		case p.s[p.off] == '}':
			p.off++
			return m, nil
		default:
			return nil, p.errorf("expected ',', ';' or '}' after the value of key %q, found %s at offset %d", key, p.found(), p.off)
		}
	}
}

// array parses an array; p.off is at its '['.
func (p *propParser) array(depth int) ([]any, error) {
	if depth > propMaxDepth {
		return nil, p.errorf("nesting deeper than %d at offset %d", propMaxDepth, p.off)
	}
	open := p.off
	p.off++
	a := []any{}
	for {
		p.skipSpace()
		if p.eof() {
			return nil, p.errorf("unterminated array opened at offset %d: unexpected end of input at offset %d", open, p.off)
		}
		if p.s[p.off] == ']' {
			p.off++
			return a, nil
		}
		v, err := p.value(depth, "", true)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.skipSpace()
		switch {
		case p.eof():
			return nil, p.errorf("unterminated array opened at offset %d: unexpected end of input at offset %d", open, p.off)
		case p.s[p.off] == ',' || p.s[p.off] == ';':
			p.off++
		case p.s[p.off] == ']':
			p.off++
			return a, nil
		default:
			return nil, p.errorf("expected ',', ';' or ']' after an array element, found %s at offset %d", p.found(), p.off)
		}
	}
}

// key parses an object key; p.off is at its first character.
func (p *propParser) key() (string, error) {
	start := p.off
	switch c := p.s[p.off]; c {
	case '"', '\'':
		k, err := p.quoted()
		if err != nil {
			return "", err
		}
		if k == "" {
			return "", p.errorf("empty key at offset %d", start)
		}
		return k, nil
	case '{', '[':
		return "", p.errorf("a key must be a string, found %s at offset %d", p.found(), p.off)
	case '(':
		return p.parenthesised()
	}
	k, err := p.unquoted()
	if err != nil {
		return "", err
	}
	if k == "" {
		if !p.eof() && (p.s[p.off] == '=' || p.s[p.off] == ':') {
			return "", p.errorf("empty key at offset %d", p.off)
		}
		return "", p.errorf("expected a key, found %s at offset %d", p.found(), p.off)
	}
	return k, nil
}

// value parses a value; p.off is at its first character. key names the
// value in error messages unless inArray.
func (p *propParser) value(depth int, key string, inArray bool) (any, error) {
	if !p.eof() {
		switch p.s[p.off] {
		case '"', '\'':
			return p.quoted()
		case '{':
			return p.object(depth + 1)
		case '[':
			return p.array(depth + 1)
		case '(':
			return p.parenthesised()
		}
	}
	t, err := p.unquoted()
	if err != nil {
		return nil, err
	}
	if t == "" {
		what := fmt.Sprintf("for key %q", key)
		if inArray {
			what = "in array"
		}
		if p.eof() || strings.IndexByte(",;}]", p.s[p.off]) >= 0 {
			return nil, p.errorf("missing value %s at offset %d", what, p.off)
		}
		return nil, p.errorf("expected a value %s, found %s at offset %d", what, p.found(), p.off)
	}
	return propScalar(t), nil
}

// propScalar types unquoted text; see ParseProperties.
func propScalar(t string) any {
	switch {
	case strings.EqualFold(t, "true"):
		return true
	case strings.EqualFold(t, "false"):
		return false
	case strings.EqualFold(t, "null"):
		return nil
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f
	}
	return t
}

// unquoted reads unquoted text up to a stop character or the end of input
// and returns it trimmed.
func (p *propParser) unquoted() (string, error) {
	start := p.off
	for !p.eof() {
		c := p.s[p.off]
		if propIsStop(c) {
			break
		}
		if c < 0x20 && !isSpace(c) {
			return "", p.errorf("control character %q at offset %d", rune(c), p.off)
		}
		p.off++
	}
	t := p.s[start:p.off]
	i, j := 0, len(t)
	for i < j && isSpace(t[i]) {
		i++
	}
	for j > i && isSpace(t[j-1]) {
		j--
	}
	return t[i:j], nil
}

// parenthesised reads text from "(" to its matching ")", such as an LDAP
// filter, and the whitespace after it; p.off is at the "(".
func (p *propParser) parenthesised() (string, error) {
	start, depth := p.off, 0
	for !p.eof() {
		c := p.s[p.off]
		switch {
		case c < 0x20 && !isSpace(c):
			return "", p.errorf("control character %q at offset %d", rune(c), p.off)
		case c == '\\':
			p.off++
		case c == '(':
			depth++
		case c == ')':
			depth--
		}
		p.off++
		if depth == 0 {
			t := p.s[start:p.off]
			p.skipSpace()
			return t, nil
		}
	}
	return "", p.errorf("unbalanced parentheses from offset %d", start)
}

// quoted reads a string in single or double quotes; p.off is at the quote.
func (p *propParser) quoted() (string, error) {
	open := p.off
	q := p.s[p.off]
	p.off++
	var b strings.Builder
	for {
		if p.eof() {
			return "", p.errorf("unterminated string opened at offset %d: unexpected end of input at offset %d", open, p.off)
		}
		c := p.s[p.off]
		switch {
		case c == q:
			p.off++
			return b.String(), nil
		case c == '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
		case c < 0x20 && c != '\t':
			return "", p.errorf("control character %q in string at offset %d", rune(c), p.off)
		default:
			b.WriteByte(c)
			p.off++
		}
	}
}

// escape decodes the escape sequence at p.off (a backslash) into b.
func (p *propParser) escape(b *strings.Builder) error {
	at := p.off
	p.off++
	if p.eof() {
		return p.errorf("unterminated escape at offset %d: unexpected end of input at offset %d", at, p.off)
	}
	c := p.s[p.off]
	p.off++
	switch c {
	case '"', '\'', '\\', '/':
		b.WriteByte(c)
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		r, ok := propHex4(p.s[p.off:])
		if !ok {
			return p.errorf("invalid \\u escape at offset %d: want four hexadecimal digits", at)
		}
		p.off += 4
		if utf16.IsSurrogate(r) {
			rest := p.s[p.off:]
			if len(rest) >= 6 && rest[0] == '\\' && rest[1] == 'u' {
				if r2, ok := propHex4(rest[2:]); ok {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						b.WriteRune(d)
						p.off += 6
						return nil
					}
				}
			}
			r = utf8.RuneError
		}
		b.WriteRune(r)
	default:
		p.off--
		return p.errorf("invalid escape \\%s at offset %d", strings.Trim(p.found(), "'"), at)
	}
	return nil
}

// propHex4 decodes four hexadecimal digits at the start of s.
func propHex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for i := range 4 {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
