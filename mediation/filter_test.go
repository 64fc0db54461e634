package mediation_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/mediation"
)

type fltStringCase struct {
	name string
	in   string
	want string // canonical text
}

func fltValidCases() []fltStringCase {
	deep := strings.Repeat("(!", 63) + "(a=1)" + strings.Repeat(")", 63)
	return []fltStringCase{
		{"equal", "(kind=temp)", "(kind=temp)"},
		{"and", "(&(kind=temp)(value>=20))", "(&(kind=temp)(value>=20))"},
		{"or", "(|(a=1)(b=2)(c=3))", "(|(a=1)(b=2)(c=3))"},
		{"not", "(!(a=1))", "(!(a=1))"},
		{"single operand and", "(&(a=1))", "(&(a=1))"},
		{"approx", "(name~=John Smith)", "(name~=John Smith)"},
		{"less or equal", "(value<=-3.5)", "(value<=-3.5)"},
		{"presence", "(a=*)", "(a=*)"},
		{"wildcards collapse to presence", "(a=***)", "(a=*)"},
		{"substring", "(a=ab*cd*)", "(a=ab*cd*)"},
		{"substring collapse", "(a=*ab**cd**ef)", "(a=*ab*cd*ef)"},
		{"substring final only", "(a=*z)", "(a=*z)"},
		{"escapes", `(a=\(x\)\*\\)`, `(a=\(x\)\*\\)`},
		{"escaped star in substring", `(a=x\**)`, `(a=x\**)`},
		{"escape of ordinary character", `(a=\x\=)`, "(a=x=)"},
		{"literal star in approx", "(a~=*)", `(a~=\*)`},
		{"literal star in greater", "(a>=x*)", `(a>=x\*)`},
		{"whitespace around and between", " \n(& (a=1)\t(b = 2) ) \n", "(&(a=1)(b=2))"},
		{"whitespace after open paren", "( & ( ! (a=1) ) )", "(&(!(a=1)))"},
		{"attribute trimmed", "(  jms.topic  =wiki)", "(jms.topic=wiki)"},
		{"value trimmed keeps inner spaces", "(msg=  hello   world  )", "(msg=hello   world)"},
		{"escaped edge spaces kept", `(msg=\  x \ )`, `(msg=\  x \ )`},
		{"edge space in substring", `(a=\ x* y\ )`, `(a=\ x* y\ )`},
		{"inner spaces around stars", "(a= x * y * z )", "(a=x * y * z)"},
		{"empty value", "(a=)", "(a=)"},
		{"empty value with spaces", "(a=   )", "(a=)"},
		{"value with operators", "(a=b=c<d>e~f&g|h!)", "(a=b=c<d>e~f&g|h!)"},
		{"attribute with spaces", "(my attr=1)", "(my attr=1)"},
		{"attribute with symbols", "(a&b.c-d_e:f=1)", "(a&b.c-d_e:f=1)"},
		{"utf-8", "(clé=été*)", "(clé=été*)"},
		{"escaped utf-8", `(a=\é)`, "(a=é)"},
		{"depth 64", deep, deep},
	}
}

func TestParseFilter(t *testing.T) {
	for _, tc := range fltValidCases() {
		t.Run(tc.name, func(t *testing.T) {
			f, err := mediation.ParseFilter(tc.in)
			if err != nil {
				t.Fatalf("ParseFilter(%q) error: %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, f.String()); diff != "" {
				t.Errorf("ParseFilter(%q).String() = %q, want %q (-want +got):\n%s", tc.in, f.String(), tc.want, diff)
			}
			fltRoundTrip(t, tc.in, f)
		})
	}
}

type fltErrCase struct {
	name string
	in   string
	want string // part of the error message
}

func fltErrorCases() []fltErrCase {
	return []fltErrCase{
		{"empty", "", "empty filter at offset 0"},
		{"only spaces", "   ", "empty filter at offset 3"},
		{"no parentheses", "a=1", "expected '(', found 'a' at offset 0"},
		{"greater", "(a>1)", "unsupported operator '>' at offset 2: use '>=', or '!' and '<=' for a strict comparison"},
		{"less", "(a<1)", "unsupported operator '<' at offset 2: use '<=', or '!' and '>=' for a strict comparison"},
		{"tilde alone", "(a~1)", "unsupported operator '~' at offset 2: use '~='"},
		{"empty and", "(&)", "empty '&' filter at offset 0: it needs at least one operand"},
		{"empty or", " (| )", "empty '|' filter at offset 1: it needs at least one operand"},
		{"empty not", "(!)", "empty '!' filter at offset 0: it needs exactly one operand"},
		{"not with two operands", "(!(a=1)(b=2))", "'!' takes exactly one operand, found '(' at offset 7"},
		{"empty parentheses", "()", "empty filter '()' at offset 0"},
		{"missing operator", "(abc)", "missing operator after attribute \"abc\" at offset 4"},
		{"missing attribute", "(=1)", "missing attribute name before '=' at offset 1"},
		{"blank attribute", "(  >=1)", "missing attribute name before '>' at offset 3"},
		{"star in attribute", "(a*=1)", "invalid character '*' in attribute name at offset 2"},
		{"backslash in attribute", `(a\b=1)`, `invalid character '\\' in attribute name at offset 2`},
		{"paren in attribute", "(a(=1)", "unexpected '(' in attribute name at offset 2"},
		{"unescaped paren in value", "(a=b(c)", `unescaped '(' in the value of "a" at offset 4: write \(`},
		{"dangling backslash", `(a=b\`, `dangling '\' at offset 4`},
		{"unclosed item", "(a=1", "missing ')' for the '(' at offset 0: unexpected end of input at offset 4"},
		{"unclosed and", "(&(a=1)", "missing ')' for the '(' at offset 0: unexpected end of input at offset 7"},
		{"unclosed not", "(!(a=1)", "missing ')' for the '(' at offset 0"},
		{"unclosed open", "(", "missing ')' for the '(' at offset 0"},
		{"garbage in and", "(&(a=1)x)", "expected '(', found 'x' at offset 7"},
		{"garbage after", "(a=1) x", "unexpected 'x' at offset 6 after the end of the filter"},
		{"two filters", "(a=1)(b=2)", "unexpected '(' at offset 5 after the end of the filter"},
		{"extra paren", "(a=1))", "unexpected ')' at offset 5 after the end of the filter"},
		{"invalid utf-8", "(a=\xc3)", "invalid UTF-8 at offset 3"},
		{"too long", "(a=" + strings.Repeat("x", 64<<10) + ")", "longer than the limit of 65536 bytes at offset 65536"},
		{"too deep", strings.Repeat("(!", 64) + "(a=1)" + strings.Repeat(")", 64), "nesting deeper than 64 at offset 128"},
		{"very deep", strings.Repeat("(&", 30000), "nesting deeper than 64 at offset 128"},
	}
}

func TestParseFilterErrors(t *testing.T) {
	for _, tc := range fltErrorCases() {
		t.Run(tc.name, func(t *testing.T) {
			f, err := mediation.ParseFilter(tc.in)
			if err == nil {
				t.Fatalf("ParseFilter(%.80q) = %v, want an error", tc.in, f)
			}
			if !errors.Is(err, mediation.ErrInvalid) {
				t.Errorf("ParseFilter(%.80q) error %v does not wrap ErrInvalid", tc.in, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("ParseFilter(%.80q) error %q, want it to contain %q", tc.in, msg, tc.want)
			}
			if !strings.HasPrefix(msg, "filter: ") || !strings.Contains(msg, "offset ") || strings.HasSuffix(msg, ".") {
				t.Errorf("ParseFilter(%.80q) error %q: want \"filter: \" prefix, an offset, no final period", tc.in, msg)
			}
			if f != nil {
				t.Errorf("ParseFilter(%.80q) = %v with an error, want nil", tc.in, f)
			}
		})
	}
}

type celsius float64

func TestFilterMatch(t *testing.T) {
	props := map[string]any{
		"kind":  "temp",
		"value": 21.5,
		"count": 3,
		"big":   uint64(1 << 40),
		"small": int8(-2),
		"cel":   celsius(19),
		"jnum":  json.Number("7"),
		"on":    true,
		"off":   false,
		"name":  "John  Smith",
		"sval":  "100", // a number sent as text, as REST properties are
		"tags":  []any{"a", "bb", 5.0, nil},
		"strs":  []string{"x", "yz"},
		"empty": []any{},
		"nil":   nil,
		"msg":   "hello (world) *",
		"Case":  "upper",
		"ver":   "1.10",
	}
	content := map[string]any{"room": "kitchen", "value": 99.0, "humidity": 40.0, "nil": "from content"}
	for _, tc := range []struct {
		name    string
		filter  string
		props   map[string]any
		content any
		want    bool
	}{
		{"equal string", "(kind=temp)", props, nil, true},
		{"equal string differs", "(kind=Temp)", props, nil, false},
		{"equal number", "(value=21.5)", props, nil, true},
		{"equal number other spelling", "(value=2.15e1)", props, nil, true},
		{"equal int", "(count=3.0)", props, nil, true},
		{"equal uint", "(big=1099511627776)", props, nil, true},
		{"equal int8", "(small=-2)", props, nil, true},
		{"equal named float", "(cel=19)", props, nil, true},
		{"equal json.Number", "(jnum=7.0)", props, nil, true},
		{"number against text", "(value=abc)", props, nil, false},
		{"number text form", "(count=3)", props, nil, true},
		{"equal bool", "(on=true)", props, nil, true},
		{"equal bool case-insensitive", "(on=TRUE)", props, nil, true},
		{"equal bool false", "(off=False)", props, nil, true},
		{"equal bool mismatch", "(on=false)", props, nil, false},
		{"bool against non-bool", "(on=yes)", props, nil, false},
		{"absent", "(missing=x)", props, nil, false},
		{"absent presence", "(missing=*)", props, nil, false},
		{"not absent", "(!(missing=x))", props, nil, true},
		{"presence", "(kind=*)", props, nil, true},
		{"presence of empty list", "(empty=*)", props, nil, true},
		{"substring on empty list", "(empty=*a*)", props, nil, false},
		{"nil value is absent", "(nil=*)", props, nil, false},
		{"nil value falls back to content", "(nil=from content)", props, content, true},
		{"approx", "(name~=johnsmith)", props, nil, true},
		{"approx spaces", "(name~= JOHN smith )", props, nil, true},
		{"approx mismatch", "(name~=john smit)", props, nil, false},
		{"approx number", "(value~=21.5)", props, nil, true},
		{"greater numeric", "(value>=20)", props, nil, true},
		{"numeric text compared as a number", "(sval>=20)", props, nil, true},
		{"numeric text not lexicographic", "(sval<=9)", props, nil, false},
		{"numeric text equal other spelling", "(sval=1e2)", props, nil, true},
		{"numeric text against text", "(sval>=abc)", props, nil, false},
		{"greater numeric equal", "(value>=21.5)", props, nil, true},
		{"greater numeric false", "(value>=100)", props, nil, false},
		{"less numeric", "(value<=21.5)", props, nil, true},
		{"less numeric false", "(value<=9)", props, nil, false},
		{"greater lexicographic", "(ver>=1.9)", map[string]any{"ver": "1.10"}, nil, false},
		{"greater lexicographic true", "(kind>=tem)", props, nil, true},
		{"less lexicographic", "(kind<=tz)", props, nil, true},
		{"number against text comparison", "(value>=abc)", props, nil, false},
		{"substring", "(msg=hello*)", props, nil, true},
		{"substring middle", "(msg=*wor*)", props, nil, true},
		{"substring escaped", `(msg=*\(world\)*)`, props, nil, true},
		{"substring literal star", `(msg=*\*)`, props, nil, true},
		{"substring initial and final", "(kind=t*p)", props, nil, true},
		{"substring no overlap", "(kind=te*emp)", props, nil, false},
		{"substring order", "(kind=*m*e*)", props, nil, false},
		{"substring on number", "(value=21*)", props, nil, true},
		{"list any element", "(tags=bb)", props, nil, true},
		{"list number element", "(tags=5)", props, nil, true},
		{"list no element", "(tags=c)", props, nil, false},
		{"list substring", "(tags=b*)", props, nil, true},
		{"typed list", "(strs=y*)", props, nil, true},
		{"not list", "(!(tags=c))", props, nil, true},
		{"case-sensitive attribute", "(case=upper)", props, nil, false},
		{"case-sensitive attribute exact", "(Case=upper)", props, nil, true},
		{"props before content", "(value=21.5)", props, content, true},
		{"content when absent from props", "(room=kitchen)", props, content, true},
		{"content ignored when not a map", "(room=kitchen)", props, "room=kitchen", false},
		{"content string map", "(room=kitchen)", nil, map[string]string{"room": "kitchen"}, true},
		{"content named key map", "(room=kitchen)", nil, map[fltKey]any{"room": "kitchen"}, true},
		{"content int map ignored", "(1=x)", nil, map[int]any{1: "x"}, false},
		{"nil props and content", "(a=*)", nil, nil, false},
		{"and", "(&(kind=temp)(value>=20))", props, nil, true},
		{"and false", "(&(kind=temp)(value>=30))", props, nil, false},
		{"and across props and content", "(&(kind=temp)(humidity<=50))", props, content, true},
		{"or", "(|(kind=hum)(value>=20))", props, nil, true},
		{"or false", "(|(kind=hum)(value>=30))", props, nil, false},
		{"not", "(!(kind=temp))", props, nil, false},
		{"empty value", "(e=)", map[string]any{"e": ""}, nil, true},
		{"empty value against text", "(kind=)", props, nil, false},
		{"edge space value", `(e=\ x)`, map[string]any{"e": " x"}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := mediation.ParseFilter(tc.filter)
			if err != nil {
				t.Fatalf("ParseFilter(%q) error: %v", tc.filter, err)
			}
			if got := f.Match(tc.props, tc.content); got != tc.want {
				t.Errorf("ParseFilter(%q).Match(%v, %v) = %v, want %v", tc.filter, tc.props, tc.content, got, tc.want)
			}
			g, err := mediation.ParseFilter(f.String())
			if err != nil {
				t.Fatalf("ParseFilter(%q) error: %v", f.String(), err)
			}
			if got := g.Match(tc.props, tc.content); got != tc.want {
				t.Errorf("ParseFilter(%q).Match(%v, %v) = %v, want %v", g.String(), tc.props, tc.content, got, tc.want)
			}
		})
	}
}

type fltKey string

func TestFilterNil(t *testing.T) {
	var f *mediation.Filter
	if got := f.String(); got != "" {
		t.Errorf("(*Filter)(nil).String() = %q, want \"\"", got)
	}
	if !f.Match(nil, nil) {
		t.Errorf("(*Filter)(nil).Match(nil, nil) = false, want true")
	}
	var z mediation.Filter
	if !z.Match(map[string]any{"a": 1.0}, nil) || z.String() != "" {
		t.Errorf("zero Filter: Match = false or String() = %q, want true and \"\"", z.String())
	}
}

func TestFilterConcurrent(t *testing.T) {
	f, err := mediation.ParseFilter("(&(kind=temp)(|(value>=20)(room=kit*)))")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			props := map[string]any{"kind": "temp", "value": float64(i) * 5}
			content := map[string]any{"room": "kitchen"}
			for range 100 {
				if !f.Match(props, content) || f.String() == "" {
					t.Errorf("Match(%v, %v) = false, want true", props, content)
					return
				}
			}
		})
	}
	wg.Wait()
}

// fltRoundTrip checks that the canonical text parses to the same filter,
// matching the same sample inputs.
func fltRoundTrip(t *testing.T, in string, f *mediation.Filter) {
	t.Helper()
	s := f.String()
	g, err := mediation.ParseFilter(s)
	if err != nil {
		t.Fatalf("ParseFilter(ParseFilter(%q).String()) = ParseFilter(%q) error: %v", in, s, err)
	}
	if diff := cmp.Diff(s, g.String()); diff != "" {
		t.Errorf("ParseFilter(%q).String() = %q, want %q (-want +got):\n%s", s, g.String(), s, diff)
	}
	for _, props := range fltSamples {
		if a, b := f.Match(props, nil), g.Match(props, nil); a != b {
			t.Errorf("ParseFilter(%q).Match(%v, nil) = %v but ParseFilter(%q).Match = %v", in, props, a, s, b)
		}
		if a, b := f.Match(nil, props), g.Match(nil, props); a != b {
			t.Errorf("ParseFilter(%q).Match(nil, %v) = %v but ParseFilter(%q).Match = %v", in, props, a, s, b)
		}
	}
}

var fltSamples = []map[string]any{
	nil,
	{"a": "1", "b": 2.0, "kind": "temp", "value": 21.0},
	{"a": 1.0, "b": "2", "msg": "hello   world", "name": "John Smith"},
	{"a": true, "b": []any{"x", 3.0, false}, "a&b.c-d_e:f": "1", "my attr": 1},
	{"a": " x ", "msg": " x ", "clé": "étéx", "e": ""},
	{"a": "ab cd ef", "value": -3.5, "jms.topic": "wiki"},
	{"a": "(x)*\\", "b": "*"},
}

func FuzzParseFilter(f *testing.F) {
	for _, tc := range fltValidCases() {
		f.Add(tc.in)
	}
	for _, tc := range fltErrorCases() {
		if len(tc.in) < 4096 {
			f.Add(tc.in)
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		flt, err := mediation.ParseFilter(in)
		if err != nil {
			if !errors.Is(err, mediation.ErrInvalid) {
				t.Fatalf("ParseFilter(%q) error %v does not wrap ErrInvalid", in, err)
			}
			if flt != nil {
				t.Fatalf("ParseFilter(%q) = %v with an error", in, flt)
			}
			return
		}
		fltRoundTrip(t, in, flt)
	})
}
