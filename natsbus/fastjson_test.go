package natsbus

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/mediation"
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
		if _, err := parseJSON([]byte(bad)); err == nil {
			t.Errorf("parseJSON(%q) took it", bad)
		}
	}
}

// checkFastJSON compares parseJSON with encoding/json on data, and
// appendJSON with encoding/json on what they read.
func checkFastJSON(t *testing.T, data []byte) {
	t.Helper()
	var want any
	wantErr := json.Unmarshal(data, &want)
	got, err := parseJSON(data)
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
	gotOut, err2 := appendJSON(nil, got)
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
		got, err := appendJSON(nil, v)
		if err != nil || string(got) != string(want) {
			t.Errorf("%T %v: appendJSON %s (%v), encoding/json %s", v, v, got, err, want)
		}
	}
	for _, v := range []any{math.NaN(), math.Inf(1), float32(math.Inf(-1)), make(chan int), []any{math.NaN()}, map[string]any{"a": math.Inf(1), "b": 1}} {
		if _, err := appendJSON(nil, v); err == nil {
			t.Errorf("appendJSON(%v) wrote it", v)
		}
	}
}

func TestBatchRoundTrip(t *testing.T) {
	ms := []mediation.Message{
		{Content: nil, Properties: map[string]any{PropID: "one"}},
		{Content: "a \"b\" <c>", Properties: map[string]any{PropID: "two", "k": []any{1.5, nil}, "é": map[string]any{"x": true}}},
		{Content: map[string]any{"n": 3.0}, Properties: map[string]any{PropID: "three"}},
	}
	var b []byte
	b = append(b, '[')
	for _, m := range ms {
		var err error
		if b, err = appendBatchItem(b, m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := appendBatchItem(b, mediation.Message{Content: math.NaN()}); err != nil {
		// refused, and b is as it was
	} else {
		t.Errorf("NaN content was written")
	}
	b = append(b, ']')
	var check any
	if err := json.Unmarshal(b, &check); err != nil {
		t.Fatalf("the batch is not JSON: %v\n%s", err, b)
	}
	got, err := decodeBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(ms, got); d != "" {
		t.Errorf("batch round trip (-sent +got):\n%s", d)
	}
	for _, bad := range []string{`{}`, `[1]`, `[{"properties":3}]`, `[{}`, `[{}] x`, `[{"id":1,}]`} {
		if _, err := decodeBatch([]byte(bad)); err == nil {
			t.Errorf("decodeBatch(%s) took it", bad)
		}
	}
}

func FuzzDecodeBatch(f *testing.F) {
	f.Add([]byte(`[{"id":"a","content":1,"properties":{"k":"v"}}]`))
	f.Add([]byte(`[{"content":{"x":[1,2]}},{"id":"b"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := decodeBatch(data)
		if err != nil {
			return
		}
		// What decodes, encodes and decodes again to the same.
		b := []byte{'['}
		for _, m := range ms {
			if b, err = appendBatchItem(b, m); err != nil {
				t.Fatalf("%v does not encode: %v", m, err)
			}
		}
		b = append(b, ']')
		again, err := decodeBatch(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		for i := range ms {
			if _, ok := ms[i].Properties[PropID]; !ok {
				delete(again[i].Properties, PropID) // a new id was given
			}
		}
		if d := cmp.Diff(ms, again); d != "" {
			t.Fatalf("(-first +again):\n%s", d)
		}
	})
}
