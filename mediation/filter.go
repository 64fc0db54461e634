package mediation

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode"
)

// Limits of ParseFilter.
const (
	fltMaxInput = 64 << 10 // bytes
	fltMaxDepth = 64       // nested filters, the outermost counting as 1
)

// fltOp is the operator of a filter node.
type fltOp uint8

const (
	fltAnd fltOp = iota + 1
	fltOr
	fltNot
	fltPresent   // (attr=*)
	fltEqual     // (attr=value)
	fltSubstring // (attr=ab*cd*)
	fltApprox    // (attr~=value)
	fltGreaterEq // (attr>=value)
	fltLessEq    // (attr<=value)
)

// fltNode is one node of a parsed filter. It is never modified after
// parsing.
type fltNode struct {
	op    fltOp
	kids  []*fltNode // fltAnd, fltOr (at least one), fltNot (exactly one)
	attr  string     // items
	value string     // fltEqual, fltApprox, fltGreaterEq, fltLessEq

	initial, final string   // fltSubstring: "" when absent
	anys           []string // fltSubstring: the non-empty middle parts

	num    float64 // value as a number, when numOK
	numOK  bool
	boolV  bool // value as a bool, when boolOK
	boolOK bool
	folded string // fltApprox: value without whitespace
}

// Filter is a parsed LDAP-style filter such as (&(kind=temp)(value>=20)). A
// Filter is immutable and safe for concurrent use.
//
// A nil *Filter (or the zero Filter) matches everything and prints as the
// empty string.
type Filter struct {
	root *fltNode
	text string
}

// ParseFilter parses s (RFC 4515 style, as OSGi filters).
//
// The grammar is (&F F ...), (|F F ...), (!F), (attr=value), (attr~=value),
// (attr>=value), (attr<=value), the presence test (attr=*) and the
// substring test (attr=ab*cd*), in which each unescaped * stands for any
// text. A backslash makes the next character literal: write \( \) \* and \\
// for those characters in a value (an unescaped "(" in a value is an error).
// Whitespace is allowed around the whole filter and between its parts;
// attribute names are trimmed, and values lose their leading and trailing
// unescaped whitespace but keep inner spaces (write "\ " for a space at an
// edge). The strict comparisons > and <, empty (&) and (|), a (!) without
// exactly one operand, an empty attribute name, nesting deeper than 64,
// invalid UTF-8 and input longer than 64 KiB are rejected. Every error wraps
// ErrInvalid and gives the byte offset of the fault.
//
// Consecutive wildcards collapse into one, and a value made only of
// wildcards is a presence test.
func ParseFilter(s string) (*Filter, error) {
	sc, err := newScanner("filter", s, fltMaxInput)
	if err != nil {
		return nil, err
	}
	p := &fltParser{sc}
	p.skipSpace()
	if p.eof() {
		return nil, p.errorf("empty filter at offset %d", p.off)
	}
	root, err := p.filter(1)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if !p.eof() {
		return nil, p.errorf("unexpected %s at offset %d after the end of the filter", p.found(), p.off)
	}
	var b strings.Builder
	fltWrite(&b, root)
	return &Filter{root: root, text: b.String()}, nil
}

// String returns the canonical text of f; ParseFilter(f.String()) yields a
// filter whose String() is identical and that matches exactly the same
// inputs.
//
// The canonical text has no whitespace outside values, and escapes every
// \ ( ) and literal * in values, as well as whitespace at either edge of a
// value.
func (f *Filter) String() string {
	if f == nil {
		return ""
	}
	return f.text
}

// Match reports whether the filter matches properties, then — when
// properties do not decide it because an attribute is absent from them —
// the content when content is a map[string]any (string-keyed map): an
// attribute is looked up first in props, then in the content map.
//
// Attribute names are case-sensitive. A key whose value is nil counts as
// absent, and content of any other type is ignored. Each test behaves as
// follows, v being the attribute's value:
//
//   - Absent attribute: every test on it is false, presence included, so a
//     ! of such a test is true.
//   - (attr=*) is true when the attribute is present.
//   - (attr=value): when v is a number (any int, uint or float kind, a
//     json.Number, or a string that reads as a finite number, as every
//     property sent over REST is) and the value parses as a float
//     (strconv.ParseFloat), the two are compared as float64 numbers; when v is a bool, it is compared
//     with the value read by strconv.ParseBool in any letter case (a value
//     that is not a bool never matches); otherwise the fmt.Sprint text of v
//     must equal the value exactly.
//   - (attr~=value): the text of v and the value are equal ignoring letter
//     case (Unicode folding) and all whitespace.
//   - (attr>=value), (attr<=value): numeric comparison when v is a number
//     (as above, numeric strings included) and the value parses as a float, else byte-wise comparison of the text
//     of v with the value.
//   - (attr=ab*cd*): the text of v starts with "ab" and then contains "cd".
//   - When v is a slice or array (such as []any, but not []byte), a test is
//     true when it holds for at least one element; presence is true even
//     for an empty list.
func (f *Filter) Match(props map[string]any, content any) bool {
	if f == nil || f.root == nil {
		return true
	}
	e := fltEnv{props: props}
	switch c := content.(type) {
	case nil, string, float64, bool, []any, []byte: // the common content that is no map
	case map[string]any:
		e.content = c
	default:
		if rv := reflect.ValueOf(content); rv.Kind() == reflect.Map && rv.Type().Key().Kind() == reflect.String {
			e.rcontent = rv
		}
	}
	return f.root.match(&e)
}

// fltEnv holds the inputs of one Match call.
type fltEnv struct {
	props    map[string]any
	content  map[string]any
	rcontent reflect.Value // another string-keyed map, when valid
}

func (e *fltEnv) lookup(attr string) (any, bool) {
	if v := e.props[attr]; v != nil {
		return v, true
	}
	if v := e.content[attr]; v != nil {
		return v, true
	}
	if e.rcontent.IsValid() {
		mv := e.rcontent.MapIndex(reflect.ValueOf(attr).Convert(e.rcontent.Type().Key()))
		if mv.IsValid() {
			if v := mv.Interface(); v != nil {
				return v, true
			}
		}
	}
	return nil, false
}

func (n *fltNode) match(e *fltEnv) bool {
	switch n.op {
	case fltAnd:
		for _, k := range n.kids {
			if !k.match(e) {
				return false
			}
		}
		return true
	case fltOr:
		for _, k := range n.kids {
			if k.match(e) {
				return true
			}
		}
		return false
	case fltNot:
		return !n.kids[0].match(e)
	}
	v, ok := e.lookup(n.attr)
	if !ok {
		return false
	}
	if n.op == fltPresent {
		return true
	}
	return n.test(v, 0)
}

// test applies an item node to a present value v.
func (n *fltNode) test(v any, depth int) bool {
	if l, ok := v.([]any); ok {
		for _, x := range l {
			if x != nil && depth < fltMaxDepth && n.test(x, depth+1) {
				return true
			}
		}
		return false
	}
	if rv := reflect.ValueOf(v); (rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array) && rv.Type().Elem().Kind() != reflect.Uint8 {
		for i := range rv.Len() {
			x := rv.Index(i).Interface()
			if x != nil && depth < fltMaxDepth && n.test(x, depth+1) {
				return true
			}
		}
		return false
	}
	switch n.op {
	case fltEqual:
		if f, ok := fltNumeric(v); ok && n.numOK {
			return f == n.num
		}
		if b, ok := fltBool(v); ok {
			return n.boolOK && b == n.boolV
		}
		return fltText(v) == n.value
	case fltApprox:
		return strings.EqualFold(fltStripSpace(fltText(v)), n.folded)
	case fltGreaterEq, fltLessEq:
		c := 0
		if f, ok := fltNumeric(v); ok && n.numOK {
			switch {
			case f < n.num:
				c = -1
			case f > n.num:
				c = 1
			case f != n.num: // NaN
				return false
			}
		} else {
			c = strings.Compare(fltText(v), n.value)
		}
		if n.op == fltGreaterEq {
			return c >= 0
		}
		return c <= 0
	case fltSubstring:
		s := fltText(v)
		if !strings.HasPrefix(s, n.initial) {
			return false
		}
		s = s[len(n.initial):]
		for _, a := range n.anys {
			i := strings.Index(s, a)
			if i < 0 {
				return false
			}
			s = s[i+len(a):]
		}
		return strings.HasSuffix(s, n.final)
	}
	return false
}

// fltNumeric returns v as a float64 when v is a number or a string that
// reads as a finite number: properties sent over REST are all strings, and
// (value>=20) must still compare "100" as a number.
func fltNumeric(v any) (float64, bool) {
	if s, ok := v.(string); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
	}
	return fltNumber(v)
}

// fltNumber returns v as a float64 when v is a number.
func fltNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	case string, bool:
		return 0, false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	}
	return 0, false
}

// fltBool returns v as a bool when v is a bool.
func fltBool(v any) (bool, bool) {
	if b, ok := v.(bool); ok {
		return b, true
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Bool {
		return rv.Bool(), true
	}
	return false, false
}

// fltText returns the fmt-style text of v.
func fltText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// fltStripSpace removes all Unicode whitespace from s.
func fltStripSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// fltParser is the state of one ParseFilter call.
type fltParser struct{ scanner }

func (p *fltParser) unclosed(open int) error {
	return p.errorf("missing ')' for the '(' at offset %d: unexpected end of input at offset %d", open, p.off)
}

// filter parses one parenthesised filter; p.off is at its '('.
func (p *fltParser) filter(depth int) (*fltNode, error) {
	if p.eof() {
		return nil, p.errorf("expected '(', found end of input at offset %d", p.off)
	}
	if p.s[p.off] != '(' {
		return nil, p.errorf("expected '(', found %s at offset %d", p.found(), p.off)
	}
	if depth > fltMaxDepth {
		return nil, p.errorf("nesting deeper than %d at offset %d", fltMaxDepth, p.off)
	}
	open := p.off
	p.off++
	p.skipSpace()
	if p.eof() {
		return nil, p.unclosed(open)
	}
	switch c := p.s[p.off]; c {
	case '&', '|':
		n := &fltNode{op: fltAnd}
		if c == '|' {
			n.op = fltOr
		}
		p.off++
		for {
			p.skipSpace()
			if p.eof() {
				return nil, p.unclosed(open)
			}
			if p.s[p.off] == ')' {
				break
			}
			k, err := p.filter(depth + 1)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, k)
		}
		if len(n.kids) == 0 {
			return nil, p.errorf("empty '%c' filter at offset %d: it needs at least one operand", c, open)
		}
		p.off++
		return n, nil
	case '!':
		p.off++
		p.skipSpace()
		if p.eof() {
			return nil, p.unclosed(open)
		}
		if p.s[p.off] == ')' {
			return nil, p.errorf("empty '!' filter at offset %d: it needs exactly one operand", open)
		}
		k, err := p.filter(depth + 1)
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.eof() {
			return nil, p.unclosed(open)
		}
		if p.s[p.off] != ')' {
			return nil, p.errorf("'!' takes exactly one operand, found %s at offset %d", p.found(), p.off)
		}
		p.off++
		return &fltNode{op: fltNot, kids: []*fltNode{k}}, nil
	}
	return p.item(open)
}

// item parses an attribute test after its '(' at offset open.
func (p *fltParser) item(open int) (*fltNode, error) {
	start := p.off
	for !p.eof() {
		c := p.s[p.off]
		if strings.IndexByte("=~<>()", c) >= 0 {
			break
		}
		if c == '*' || c == '\\' {
			return nil, p.errorf("invalid character %s in attribute name at offset %d", p.found(), p.off)
		}
		p.off++
	}
	attr := fltTrim(p.s[start:p.off])
	if p.eof() {
		return nil, p.unclosed(open)
	}
	switch p.s[p.off] {
	case '(':
		return nil, p.errorf("unexpected '(' in attribute name at offset %d", p.off)
	case ')':
		if attr == "" {
			return nil, p.errorf("empty filter '()' at offset %d", open)
		}
		return nil, p.errorf("missing operator after attribute %q at offset %d", attr, p.off)
	}
	if attr == "" {
		return nil, p.errorf("missing attribute name before %s at offset %d", p.found(), p.off)
	}
	n := &fltNode{attr: attr}
	opAt := p.off
	switch c := p.s[p.off]; c {
	case '=':
		n.op = fltEqual
		p.off++
	case '~', '>', '<':
		if p.off+1 >= len(p.s) || p.s[p.off+1] != '=' {
			if c == '~' {
				return nil, p.errorf("unsupported operator '~' at offset %d: use '~='", opAt)
			}
			return nil, p.errorf("unsupported operator '%c' at offset %d: use '%c=', or '!' and '%c=' for a strict comparison",
				c, opAt, c, map[byte]byte{'>': '<', '<': '>'}[c])
		}
		n.op = map[byte]fltOp{'~': fltApprox, '>': fltGreaterEq, '<': fltLessEq}[c]
		p.off += 2
	}

	// The value: bytes with, for each, whether it was escaped; unescaped
	// stars are kept apart in stars.
	var (
		val   []byte
		esc   []bool
		stars []int // indexes in val of unescaped '*'
	)
	for {
		if p.eof() {
			return nil, p.unclosed(open)
		}
		c := p.s[p.off]
		switch c {
		case ')':
			p.off++
			return n.finish(val, esc, stars), nil
		case '(':
			return nil, p.errorf("unescaped '(' in the value of %q at offset %d: write \\(", attr, p.off)
		case '\\':
			if p.off+1 >= len(p.s) {
				return nil, p.errorf("dangling '\\' at offset %d", p.off)
			}
			val = append(val, p.s[p.off+1])
			esc = append(esc, true)
			p.off += 2
			continue
		case '*':
			stars = append(stars, len(val))
		}
		val = append(val, c)
		esc = append(esc, false)
		p.off++
	}
}

// finish sets the value of an item node from its raw bytes, trimming
// unescaped edge whitespace and splitting a substring test at its stars.
func (n *fltNode) finish(val []byte, esc []bool, stars []int) *fltNode {
	i, j := 0, len(val)
	for i < j && !esc[i] && isSpace(val[i]) {
		i++
	}
	for j > i && !esc[j-1] && isSpace(val[j-1]) {
		j--
	}
	if n.op == fltEqual && len(stars) > 0 {
		var parts []string
		from := i
		for _, s := range stars {
			if s < i || s >= j {
				continue // cannot happen: stars are not whitespace
			}
			parts = append(parts, string(val[from:s]))
			from = s + 1
		}
		parts = append(parts, string(val[from:j]))
		n.initial, n.final = parts[0], parts[len(parts)-1]
		for _, a := range parts[1 : len(parts)-1] {
			if a != "" {
				n.anys = append(n.anys, a)
			}
		}
		if n.initial == "" && n.final == "" && len(n.anys) == 0 {
			n.op = fltPresent
		} else {
			n.op = fltSubstring
		}
		return n
	}
	n.value = string(val[i:j])
	f, err := strconv.ParseFloat(n.value, 64)
	n.num, n.numOK = f, err == nil
	b, err := strconv.ParseBool(strings.ToLower(n.value))
	n.boolV, n.boolOK = b, err == nil
	if n.op == fltApprox {
		n.folded = fltStripSpace(n.value)
	}
	return n
}

// fltTrim trims ASCII whitespace.
func fltTrim(s string) string {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

// fltWrite prints the canonical text of n.
func fltWrite(b *strings.Builder, n *fltNode) {
	b.WriteByte('(')
	switch n.op {
	case fltAnd, fltOr, fltNot:
		b.WriteByte(map[fltOp]byte{fltAnd: '&', fltOr: '|', fltNot: '!'}[n.op])
		for _, k := range n.kids {
			fltWrite(b, k)
		}
	case fltPresent:
		b.WriteString(n.attr)
		b.WriteString("=*")
	case fltSubstring:
		b.WriteString(n.attr)
		b.WriteByte('=')
		fltEscape(b, n.initial, true, false)
		b.WriteByte('*')
		for _, a := range n.anys {
			fltEscape(b, a, false, false)
			b.WriteByte('*')
		}
		fltEscape(b, n.final, false, true)
	default:
		b.WriteString(n.attr)
		b.WriteString(map[fltOp]string{fltEqual: "=", fltApprox: "~=", fltGreaterEq: ">=", fltLessEq: "<="}[n.op])
		fltEscape(b, n.value, true, true)
	}
	b.WriteByte(')')
}

// fltEscape writes a value part, escaping \ ( ) * and, when first or last
// is set, whitespace at the start or the end.
func fltEscape(b *strings.Builder, s string, first, last bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == '(' || c == ')' || c == '*':
			b.WriteByte('\\')
		case isSpace(c) && ((first && i == 0) || (last && i == len(s)-1)):
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
}
