package natsbus

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/mediation"
)

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
