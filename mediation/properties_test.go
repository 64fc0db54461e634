package mediation_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/mediation"
)

type propCase struct {
	name string
	in   string
	want map[string]any
}

func propNested(depth int) (string, map[string]any) {
	s := strings.Repeat("{a=", depth-1) + "{}" + strings.Repeat("}", depth-1)
	m := map[string]any{}
	for range depth - 1 {
		m = map[string]any{"a": m}
	}
	return s, m
}

// propDiff is cmp.Diff(want, got), after a reflect.DeepEqual check because
// cmp.Diff takes exponential time on deeply nested equal slices (found by
// FuzzParseProperties).
func propDiff(want, got map[string]any) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return cmp.Diff(want, got)
}

func propValidCases() []propCase {
	deep, deepWant := propNested(64)
	var deepList any = "^"
	for range 63 {
		deepList = []any{deepList}
	}
	return []propCase{
		{"empty", "", map[string]any{}},
		{"only whitespace", " \t\r\n ", map[string]any{}},
		{"empty object", "{}", map[string]any{}},
		{"empty object with spaces", "  { \n }  ", map[string]any{}},
		{"equals", "{name=titi}", map[string]any{"name": "titi"}},
		{"dotted key", "{jms.topic=wiki}", map[string]any{"jms.topic": "wiki"}},
		{"colon pairs", "{property1:value1, property2:value2}", map[string]any{"property1": "value1", "property2": "value2"}},
		{"strict json", `{"prefix":"Hi"}`, map[string]any{"prefix": "Hi"}},
		{"semicolons and trailing separator", "{a=1;b=true;c=null;}", map[string]any{"a": 1.0, "b": true, "c": nil}},
		{"arrow and single quotes", "{'k' => 'v w'}", map[string]any{"k": "v w"}},
		{"arrow unquoted", "{k=>v}", map[string]any{"k": "v"}},
		{"trailing comma", "{a=1,}", map[string]any{"a": 1.0}},
		{"internal spaces", "{msg=hello world}", map[string]any{"msg": "hello world"}},
		{"parenthesised filter value", "{condition=(&(kind=temp)(value>=20))}", map[string]any{"condition": "(&(kind=temp)(value>=20))"}},
		{"parenthesised value then more", "{condition = (a=1) ; b=2}", map[string]any{"condition": "(a=1)", "b": 2.0}},
		{"parenthesised keys", "{conditions={(kind=temp)=hot, (kind=hum):wet}, default=other}",
			map[string]any{"conditions": map[string]any{"(kind=temp)": "hot", "(kind=hum)": "wet"}, "default": "other"}},
		{"parenthesised with escaped paren", `{c=(name=a\)b)}`, map[string]any{"c": `(name=a\)b)`}},
		{"key with spaces", "{ my key = my value }", map[string]any{"my key": "my value"}},
		{"tabs and newlines", "{\n\ta = 1 ,\n\tb : two\n}", map[string]any{"a": 1.0, "b": "two"}},
		{"case-insensitive literals", "{a=TRUE, b=False, c=NULL}", map[string]any{"a": true, "b": false, "c": nil}},
		{"numbers", "{a=-1.5e3, b=0, c=42, d=.5, e=+7, f=1E2}", map[string]any{"a": -1500.0, "b": 0.0, "c": 42.0, "d": 0.5, "e": 7.0, "f": 100.0}},
		{"not numbers", "{a=0x10, b=1__0, c=1.2.3, d=12abc, e=1 000}", map[string]any{"a": "0x10", "b": "1__0", "c": "1.2.3", "d": "12abc", "e": "1 000"}},
		{"go number syntax", "{a=1_000, b=0x1.8p1}", map[string]any{"a": 1000.0, "b": 3.0}},
		{"json numbers", `{"a": 1, "b": 2.5e-3, "c": -0.0}`, map[string]any{"a": 1.0, "b": 0.0025, "c": math.Copysign(0, -1)}},
		{"non-finite spellings stay strings", "{a=NaN, b=Infinity, c=-inf, d=1e400}", map[string]any{"a": "NaN", "b": "Infinity", "c": "-inf", "d": "1e400"}},
		{"quoted values stay strings", `{a="1", b='true', c="null"}`, map[string]any{"a": "1", "b": "true", "c": "null"}},
		{"unquoted keys are not typed", "{1=x, true=y}", map[string]any{"1": "x", "true": "y"}},
		{"apostrophe in unquoted text", "{a=it's}", map[string]any{"a": "it's"}},
		{"empty quoted value", `{a="", b=''}`, map[string]any{"a": "", "b": ""}},
		{"duplicate key last wins", "{a=1, a=2}", map[string]any{"a": 2.0}},
		{"escapes", `{a="q\"s\'b\\s\/n\nt\tr\rb\bf\f", b='it\'s'}`, map[string]any{"a": "q\"s'b\\s/n\nt\tr\rb\bf\f", "b": "it's"}},
		{"unicode escapes", `{a="\u00e9\u00E9", b="\ud83d\ude00", c="\ud800x", d="\udc00"}`, map[string]any{"a": "éé", "b": "😀", "c": "\uFFFDx", "d": "\uFFFD"}},
		{"quotes inside other quotes", `{a='say "hi"', b="it's"}`, map[string]any{"a": `say "hi"`, "b": "it's"}},
		{"raw tab in quoted string", "{a='x\ty'}", map[string]any{"a": "x\ty"}},
		{"utf-8 text", "{clé=été, 'ключ'=значение}", map[string]any{"clé": "été", "ключ": "значение"}},
		{"nested relaxed", "{a={b=1; c={d=x}}, e=[1, two, {f=null}]}", map[string]any{
			"a": map[string]any{"b": 1.0, "c": map[string]any{"d": "x"}},
			"e": []any{1.0, "two", map[string]any{"f": nil}},
		}},
		{"nested strict", `{"a": {"b": [true, false, null, "s", 1.5, [], {}]}}`, map[string]any{
			"a": map[string]any{"b": []any{true, false, nil, "s", 1.5, []any{}, map[string]any{}}},
		}},
		{"array separators", "{a=[1;2,3,]}", map[string]any{"a": []any{1.0, 2.0, 3.0}}},
		{"filter keys", `{"conditions": {"(kind=temp)": "hot", "(kind=hum)": "wet"}}`, map[string]any{
			"conditions": map[string]any{"(kind=temp)": "hot", "(kind=hum)": "wet"},
		}},
		{"depth 64", deep, deepWant},
		{"depth 64 with arrays", "{a=" + strings.Repeat("[", 63) + "^" + strings.Repeat("]", 63) + "}", map[string]any{"a": deepList}},
		{"arrow then space", "{a= >b}", map[string]any{"a": ">b"}},
	}
}

func TestParseProperties(t *testing.T) {
	for _, tc := range propValidCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mediation.ParseProperties(tc.in)
			if err != nil {
				t.Fatalf("ParseProperties(%q) error: %v", tc.in, err)
			}
			if got == nil {
				t.Fatalf("ParseProperties(%q) = nil map, want non-nil", tc.in)
			}
			if diff := propDiff(tc.want, got); diff != "" {
				t.Errorf("ParseProperties(%q) = %v, want %v (-want +got):\n%s", tc.in, got, tc.want, diff)
			}
		})
	}
}

func TestParsePropertiesNegativeZero(t *testing.T) {
	got, err := mediation.ParseProperties(`{"c": -0}`)
	if err != nil {
		t.Fatalf("ParseProperties error: %v", err)
	}
	if f, ok := got["c"].(float64); !ok || f != 0 || !math.Signbit(f) {
		t.Errorf("ParseProperties(%q) = %v, want -0", `{"c": -0}`, got)
	}
}

type propErrCase struct {
	name string
	in   string
	want string // part of the error message
}

func propErrorCases() []propErrCase {
	deep, _ := propNested(65)
	return []propErrCase{
		{"extra closing brace", "{A}}", "expected ':', '=' or '=>' after key \"A\""},
		{"key without value", "{A}", "expected ':', '=' or '=>' after key \"A\", found '}' at offset 2"},
		{"missing value", "{a=}", "missing value for key \"a\" at offset 3"},
		{"missing value before separator", "{a=,b=1}", "missing value for key \"a\" at offset 3"},
		{"missing value at end", "{a=", "missing value for key \"a\" at offset 3"},
		{"empty key", "{=v}", "empty key at offset 1"},
		{"unbalanced parentheses", "{c=(a=(b)}", "unbalanced parentheses from offset 3"},
		{"text after parenthesised value", "{c=(a=1)x}", "found 'x' at offset 8"},
		{"empty key with colon", "{ :v}", "empty key at offset 2"},
		{"empty quoted key", `{"":1}`, "empty key at offset 1"},
		{"text after object", "{a=1} x", "unexpected 'x' at offset 6 after the closing '}'"},
		{"second object", "{a=1}{}", "unexpected '{' at offset 5 after the closing '}'"},
		{"top-level array", "[1]", "the top level must be an object, found '[' at offset 0"},
		{"top-level scalar", "  name=titi", "the top level must be an object, found 'n' at offset 2"},
		{"top-level string", `"x"`, "the top level must be an object"},
		{"invalid utf-8", "{a=\xff}", "invalid UTF-8 at offset 3"},
		{"too long", "{a='" + strings.Repeat("x", 1<<20) + "'}", "longer than the limit of 1048576 bytes at offset 1048576"},
		{"too deep", deep, "nesting deeper than 64 at offset 192"},
		{"too deep arrays", "{a=" + strings.Repeat("[", 64) + strings.Repeat("]", 64) + "}", "nesting deeper than 64 at offset 66"},
		{"unterminated object", "{a=1", "unterminated object opened at offset 0: unexpected end of input at offset 4"},
		{"unterminated after separator", "{a=1,", "unterminated object opened at offset 0"},
		{"unterminated after key", "{a", "missing ':', '=' or '=>' after key \"a\": unexpected end of input at offset 2"},
		{"unterminated string", `{a="xy`, "unterminated string opened at offset 3"},
		{"unterminated escape", `{a="x\`, "unterminated escape at offset 5"},
		{"invalid escape", `{a="\x"}`, `invalid escape \x at offset 4`},
		{"short unicode escape", `{a="\u12"}`, `invalid \u escape at offset 4`},
		{"bad unicode escape", `{a="\u12g4"}`, `invalid \u escape at offset 4`},
		{"newline in string", "{a='x\ny'}", `control character '\n' in string at offset 5`},
		{"control character in text", "{a=x\x01y}", `control character '\x01' at offset 4`},
		{"control character in key", "{\x00=1}", `control character '\x00' at offset 1`},
		{"pairs without separator", "{a=1 b=2}", "expected ',', ';' or '}' after the value of key \"a\", found '=' at offset 6"},
		{"double separator", "{a=1,,b=2}", "expected a key, found ',' at offset 5"},
		{"lone separator", "{,}", "expected a key, found ',' at offset 1"},
		{"object key", "{{a=1}=2}", "a key must be a string, found '{' at offset 1"},
		{"array key", "{[1]=2}", "a key must be a string, found '[' at offset 1"},
		{"colon in unquoted value", "{url=http://x}", "found ':' at offset 9"},
		{"hash value", "{a=#}", "expected a value for key \"a\", found '#' at offset 3"},
		{"slash value", "{a=/x}", "expected a value for key \"a\", found '/' at offset 3"},
		{"double equals", "{a==b}", "expected a value for key \"a\", found '=' at offset 3"},
		{"colon then equals", "{a:=b}", "expected a value for key \"a\", found '=' at offset 3"},
		{"missing array element", "{a=[1,,2]}", "missing value in array at offset 6"},
		{"unterminated array", "{a=[1", "unterminated array opened at offset 3"},
		{"array closed by brace", "{a=[1}", "expected ',', ';' or ']' after an array element, found '}' at offset 5"},
		{"object closed by bracket", "{a=1]", "expected ',', ';' or '}' after the value of key \"a\", found ']' at offset 4"},
		{"stray closing brace", "}", "the top level must be an object, found '}' at offset 0"},
		{"json with trailing garbage", `{"a":1}]`, "unexpected ']' at offset 7"},
		{"quoted key then text", `{"a"b=1}`, "expected ':', '=' or '=>' after key \"a\", found 'b' at offset 4"},
	}
}

func TestParsePropertiesErrors(t *testing.T) {
	for _, tc := range propErrorCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mediation.ParseProperties(tc.in)
			if err == nil {
				t.Fatalf("ParseProperties(%.80q) = %v, want an error", tc.in, got)
			}
			if !errors.Is(err, mediation.ErrInvalid) {
				t.Errorf("ParseProperties(%.80q) error %v does not wrap ErrInvalid", tc.in, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("ParseProperties(%.80q) error %q, want it to contain %q", tc.in, msg, tc.want)
			}
			if !strings.HasPrefix(msg, "properties: ") || !strings.Contains(msg, "offset ") || strings.HasSuffix(msg, ".") {
				t.Errorf("ParseProperties(%.80q) error %q: want \"properties: \" prefix, an offset, no final period", tc.in, msg)
			}
			if got != nil {
				t.Errorf("ParseProperties(%.80q) = %v with an error, want nil", tc.in, got)
			}
		})
	}
}

func TestFormatProperties(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   map[string]any
		want string
	}{
		{"nil", nil, "{}"},
		{"empty", map[string]any{}, "{}"},
		{"sorted keys", map[string]any{"b": "x", "a": 1.0, "c": true, "d": nil}, `{"a":1,"b":"x","c":true,"d":null}`},
		{"nested", map[string]any{"a": map[string]any{"z": []any{1.5, "s"}, "y": map[string]any{}}}, `{"a":{"y":{},"z":[1.5,"s"]}}`},
		{"numbers", map[string]any{"a": 1e21, "b": 0.1, "c": 1e-7, "d": -3.0, "e": 123456789.0}, `{"a":1e+21,"b":0.1,"c":1e-7,"d":-3,"e":123456789}`},
		{"no html escaping", map[string]any{"a": "<b>&</b>"}, `{"a":"<b>&</b>"}`},
		{"string escapes", map[string]any{"a\"": "x\n\t\\\u0001"}, `{"a\"":"x\n\t\\\u0001"}`},
		{"other number kinds", map[string]any{"a": 3, "b": uint8(4), "c": float32(0.5)}, `{"a":3,"b":4,"c":0.5}`},
		{"non-finite numbers become strings", map[string]any{"a": math.NaN(), "b": math.Inf(1), "c": []any{math.Inf(-1)}, "d": 1.0}, `{"a":"NaN","b":"+Inf","c":["-Inf"],"d":1}`},
		{"unsupported values become strings", map[string]any{"a": complex(1, 2)}, `{"a":"(1+2i)"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mediation.FormatProperties(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FormatProperties(%v) = %s, want %s (-want +got):\n%s", tc.in, got, tc.want, diff)
			}
		})
	}
}

func TestFormatPropertiesCycle(t *testing.T) {
	m := map[string]any{"a": 1.0}
	m["self"] = m
	got := mediation.FormatProperties(m)
	if _, err := mediation.ParseProperties(got); err != nil {
		t.Errorf("FormatProperties(cyclic) = %.200s, which does not parse: %v", got, err)
	}
}

// propRoundTrip checks that a parsed map prints and parses back to itself.
func propRoundTrip(t *testing.T, in string, m map[string]any) {
	t.Helper()
	out := mediation.FormatProperties(m)
	back, err := mediation.ParseProperties(out)
	if err != nil {
		t.Fatalf("ParseProperties(FormatProperties(ParseProperties(%q))) = ParseProperties(%q) error: %v", in, out, err)
	}
	if diff := propDiff(m, back); diff != "" {
		t.Errorf("ParseProperties(%q) = %v, want %v (-want +got):\n%s", out, back, m, diff)
	}
	if again := mediation.FormatProperties(back); again != out {
		t.Errorf("FormatProperties is not stable: %q then %q", out, again)
	}
}

func TestFormatPropertiesRoundTrip(t *testing.T) {
	for _, tc := range propValidCases() {
		t.Run(tc.name, func(t *testing.T) {
			propRoundTrip(t, tc.in, tc.want)
		})
	}
}

func FuzzParseProperties(f *testing.F) {
	for _, tc := range propValidCases() {
		f.Add(tc.in)
	}
	for _, tc := range propErrorCases() {
		if len(tc.in) < 4096 {
			f.Add(tc.in)
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		m, err := mediation.ParseProperties(in)
		if err != nil {
			if !errors.Is(err, mediation.ErrInvalid) {
				t.Fatalf("ParseProperties(%q) error %v does not wrap ErrInvalid", in, err)
			}
			if m != nil {
				t.Fatalf("ParseProperties(%q) = %v with an error", in, m)
			}
			return
		}
		if m == nil {
			t.Fatalf("ParseProperties(%q) = nil map, nil error", in)
		}
		propRoundTrip(t, in, m)
	})
}

// nested returns a map nested depth levels deep, the map itself counting as
// 1, as ParseProperties counts: {"k": {"a": {"a": … 1}}}.
func nested(depth int) map[string]any {
	var v any = 1.0
	for range depth - 1 {
		v = map[string]any{"a": v}
	}
	return map[string]any{"k": v}
}

// TestPropertiesDepthBounded: properties given as Go values (or decoded
// from a JSON body) nest no deeper than ParseProperties lets text nest, in
// AddComponent, UpdateProperties and Bind; a cyclic map is refused, not
// followed forever. Property names are text a chain file can carry; values
// hold any text.
func TestPropertiesDepthBounded(t *testing.T) {
	if _, err := mediation.ParseProperties(mediation.FormatProperties(nested(64))); err != nil {
		t.Fatalf("the deepest text ParseProperties takes: %v", err)
	}
	if _, err := mediation.ParseProperties(mediation.FormatProperties(nested(65))); err == nil {
		t.Fatal("ParseProperties took 65 levels")
	}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch, err := e.CreateChain("c")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.AddMediator("enricher", "ok", nested(64)); err != nil {
		t.Fatalf("AddMediator with 64 levels = %v", err)
	}
	for _, tt := range []struct {
		name  string
		props map[string]any
		want  string
	}{
		{"64 levels", nested(64), ""},
		{"65 levels", nested(65), "invalid"},
		{"65 levels in a list", map[string]any{"l": []any{nested(64)}}, "invalid"},
		{"cyclic", cyclic, "invalid"},
		{"a control character in a name", map[string]any{"a\x01": "v"}, "invalid"},
		{"U+FFFF in a name", map[string]any{"a\uFFFF": "v"}, "invalid"},
		{"invalid UTF-8 in a name", map[string]any{"a\xff": "v"}, "invalid"},
		{"tab and line ends in a name", map[string]any{"a\tb\nc\r": "v"}, ""},
		{"control characters in values and inner keys", map[string]any{"a": "\x01", "m": map[string]any{"\x02": "\x03"}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ch.AddMediator("enricher", "added", tt.props)
			if got := errKind(err); got != tt.want {
				t.Errorf("AddMediator: error kind %q (%v), want %q", got, err, tt.want)
			}
			if err == nil {
				if err := ch.RemoveComponent(mediation.KindMediator, "added"); err != nil {
					t.Fatal(err)
				}
			}
			_, err = ch.UpdateProperties("ok", tt.props)
			if got := errKind(err); got != tt.want {
				t.Errorf("UpdateProperties: error kind %q (%v), want %q", got, err, tt.want)
			}
			_, err = ch.Bind("ok:out", "ok2:in", "", tt.props)
			want := tt.want
			if want == "" {
				want = "not found" // ok2 does not exist: checked after the properties
			}
			if got := errKind(err); got != want {
				t.Errorf("Bind: error kind %q (%v), want %q", got, err, want)
			}
		})
	}
}

func TestMessagePrintable(t *testing.T) {
	tests := []struct {
		name string
		in   mediation.Message
		want mediation.Message
	}{
		{"printable as it is", mediation.Message{Content: 1.5, Properties: map[string]any{"a": "b"}},
			mediation.Message{Content: 1.5, Properties: map[string]any{"a": "b"}}},
		{"no properties", mediation.Message{Content: "x"}, mediation.Message{Content: "x"}},
		{"NaN content", mediation.Message{Content: math.NaN()}, mediation.Message{Content: "NaN"}},
		{"infinities inside", mediation.Message{Content: map[string]any{"v": []any{math.Inf(1), 2.0}}, Properties: map[string]any{"p": math.Inf(-1)}},
			mediation.Message{Content: map[string]any{"v": []any{"+Inf", 2.0}}, Properties: map[string]any{"p": "-Inf"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.Printable()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Printable (-want +got):\n%s", diff)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("json.Marshal(Printable) = %v", err)
			}
		})
	}
}

// TestPropertiesNotJSON: a value JSON cannot carry, given through the Go
// API, is refused with ErrInvalid wherever properties come in (a chain
// holding one could not be exported, snapshotted or shown over REST);
// Go values JSON can carry are kept.
func TestPropertiesNotJSON(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch, err := e.CreateChain("c")
	must(t, err)
	_, err = ch.AddMediator("passthrough", "p", nil)
	must(t, err)
	_, err = ch.AddMediator("passthrough", "q", nil)
	must(t, err)
	for name, v := range map[string]any{
		"func": func() {}, "chan": make(chan int), "complex": complex(1, 2), "NaN": math.NaN(), "+Inf": math.Inf(1),
		"nested func": map[string]any{"a": []any{1.0, func() {}}}, "typed NaN": []float64{math.NaN()},
		"map keyed by a struct": map[struct{ X int }]int{{1}: 1},
	} {
		props := map[string]any{"x": v}
		for op, f := range map[string]func() error{
			"AddMediator":      func() error { _, err := ch.AddMediator("passthrough", "m", props); return err },
			"AddComponent":     func() error { _, err := ch.AddComponent(mediation.KindAdapter, "rest-out", "a", props); return err },
			"SetProperties":    func() error { _, err := ch.SetProperties("p", props); return err },
			"UpdateProperties": func() error { _, err := ch.UpdateProperties("p", props); return err },
			"Bind":             func() error { _, err := ch.Bind("p:out", "q:in", "queue", props); return err },
		} {
			if err := f(); !errors.Is(err, mediation.ErrInvalid) || !strings.Contains(err.Error(), `"x"`) {
				t.Errorf("%s with a %s = %v, want ErrInvalid naming the property", op, name, err)
			}
		}
	}
	if cs, err := ch.Components(); err != nil || len(cs) != 2 {
		t.Errorf("components = %v (%v), want p and q only", cs, err)
	}
	// Go values that JSON carries are kept, and the component prints.
	info, err := ch.SetProperties("p", map[string]any{"list": []string{"a"}, "n": 3, "d": time.Second, "m": map[int]bool{1: true}})
	must(t, err)
	if _, err := json.Marshal(info); err != nil {
		t.Errorf("the component does not print as JSON: %v", err)
	}
}

// IntProperty takes an integer however a number is given, whole: "5abc"
// is no 5.
func TestIntProperty(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want int
		ok   bool
	}{
		{nil, 7, true}, {5.0, 5, true}, {5, 5, true}, {int64(5), 5, true}, {json.Number("5"), 5, true},
		{"5", 5, true}, {" 5 ", 5, true}, {"5.0", 5, true}, {"1e1", 10, true},
		{"5abc", 0, false}, {"5 6", 0, false}, {"", 0, false}, {5.5, 0, false}, {"11", 0, false}, {-1, 0, false}, {true, 0, false},
	} {
		got, err := mediation.IntProperty(map[string]any{"p": tc.v}, "p", 7, 0, 10)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("IntProperty(%#v) = %d, %v; want %d, ok %v", tc.v, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, mediation.ErrInvalid) {
			t.Errorf("IntProperty(%#v): %v is not ErrInvalid", tc.v, err)
		}
	}
}
