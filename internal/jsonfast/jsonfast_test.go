package jsonfast

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// jsonCases are values whose writing and reading must agree with
// encoding/json's.
var jsonCases = []string{
	`null`, `true`, `false`, `0`, `-0`, `1.5`, `-12e-7`, `1e21`, `123456789012345678901234`, `0.000001`, `1E+2`,
	`""`, `"plain"`, `"quote \" backslash \\ slash \/ controls \b\f\n\r\t \u0001"`, `"<tag> & more"`,
	`"\u00e9t\u00E9 \ud83d\ude00 lone \ud800 end \udc00x"`, "\"raw é, invalid \xff\xfe, sep \u2028\u2029\"",
	`[]`, `{}`, `[1,"a",[true,null],{"k":{"n":[]}}]`, `{"b":1,"a":2,"a":3}`, ` { "sp" : [ 1 , 2 ] } `,
}

func TestFastJSONAgrees(t *testing.T) {
	for _, in := range jsonCases {
		checkFastJSON(t, []byte(in))
	}
	for _, bad := range []string{``, `[`, `{"a"}`, `01`, `1.`, `-`, `1e`, `"\x"`, `"\u12"`, "\"a\x01\"", `tru`, `[1,]`, `{"a":1,}`, `1 2`, `1e400`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) took it", bad)
		}
	}
}

// checkFastJSON compares parseJSON with encoding/json on data, and
// appendJSON with encoding/json on what they read.
func checkFastJSON(t *testing.T, data []byte) {
	t.Helper()
	var want any
	wantErr := json.Unmarshal(data, &want)
	got, err := Parse(data)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: parseJSON error %v, encoding/json error %v", data, err, wantErr)
	}
	if err != nil {
		return
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("%q read (-encoding/json +parseJSON):\n%s", data, d)
	}
	wantOut, err1 := json.Marshal(want)
	gotOut, err2 := Append(nil, got)
	if (err1 != nil) != (err2 != nil) || string(wantOut) != string(gotOut) {
		t.Fatalf("%q written: encoding/json %s (%v), appendJSON %s (%v)", data, wantOut, err1, gotOut, err2)
	}
}

func FuzzFastJSON(f *testing.F) {
	for _, c := range jsonCases {
		f.Add([]byte(c))
	}
	f.Fuzz(checkFastJSON)
}

func TestAppendJSONGoValues(t *testing.T) {
	for _, v := range []any{int(-3), int64(1 << 60), int32(7), uint(9), uint32(10), uint64(1 << 63), float32(0.1), float32(1e-7), float32(3e21),
		1e-7, 5e-324, math.MaxFloat64, []string{"x"}, map[string]int{"b": 1, "a": 2}, struct{ A int }{1}} {
		want, _ := json.Marshal(v)
		got, err := Append(nil, v)
		if err != nil || string(got) != string(want) {
			t.Errorf("%T %v: appendJSON %s (%v), encoding/json %s", v, v, got, err, want)
		}
	}
	for _, v := range []any{math.NaN(), math.Inf(1), float32(math.Inf(-1)), make(chan int), []any{math.NaN()}, map[string]any{"a": math.Inf(1), "b": 1}} {
		if _, err := Append(nil, v); err == nil {
			t.Errorf("Append(%v) wrote it", v)
		}
	}
}

// FuzzAppendString: strings are written as encoding/json writes them, at
// every alignment of the eight-byte steps.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "fr.liglab.adele.icasa.device.temperature.Thermometer", "12345678\"",
		"1234567<", "abcdefgh\x1fijklmnop", "abcdefgh\x7fij", "été à l'heure", "abcdefg\xff", "sep\u2028 and more text",
		"&&&&&&&&&&&&&&&&", "!#$%'()*+,-./0123456789:;=?@AZ[]^_`az{|}~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		for pad := range 8 {
			prefix := "abcdefgh"[:pad]
			wantPadded, _ := json.Marshal(prefix + s)
			if got := AppendString(nil, prefix+s); string(got) != string(wantPadded) {
				t.Fatalf("AppendString(%q) = %s, encoding/json %s", prefix+s, got, wantPadded)
			}
		}
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("AppendString after x: %s, want x%s", got, want)
		}
	})
}

func BenchmarkAppendString(b *testing.B) {
	s := "fr.liglab.adele.icasa.device.temperature.Thermometer"
	buf := make([]byte, 0, 128)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = AppendString(buf[:0], s)
	}
}
