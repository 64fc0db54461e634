package sim

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzProps runs the operations the bytes spell on a props and on a map,
// and checks after each that both hold the same, the names in order, and
// that a clone taken before an operation does not see it.
func FuzzProps(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 0x81, 0x42, 0xc3, 5, 0x85})
	f.Add([]byte{9, 9, 0x89, 0x89, 0, 0x80})
	f.Add([]byte("state fault Location heater.powerLevel"))
	f.Fuzz(func(t *testing.T, ops []byte) {
		var p props
		want := map[string]any{}
		for i, op := range ops {
			name := fmt.Sprintf("k%02d", op&0x0f) // 16 names: past the linear scan's 8
			before, beforeWant := p.clone(), maps.Clone(want)
			switch op >> 6 {
			case 0, 1:
				p.set(name, float64(i))
				want[name] = float64(i)
			case 2:
				p.del(name)
				delete(want, name)
			case 3:
				v, ok := p.get(name)
				w, wok := want[name]
				if ok != wok || v != w {
					t.Fatalf("op %d: get(%q) = %v, %v; want %v, %v", i, name, v, ok, w, wok)
				}
			}
			checkProps(t, &p, want)
			checkProps(t, &before, beforeWant)
		}
	})
}

func checkProps(t *testing.T, p *props, want map[string]any) {
	t.Helper()
	if diff := cmp.Diff(want, p.toMap()); diff != "" {
		t.Fatalf("props (-want +got):\n%s", diff)
	}
	var got []string
	view := Props{p}
	for k, v := range view.All() {
		if g, ok := view.Get(k); !ok || g != v {
			t.Fatalf("Get(%q) = %v, %v; All gave %v", k, g, ok, v)
		}
		if ak, av := view.At(len(got)); ak != k || av != v {
			t.Fatalf("At(%d) = %q, %v; All gave %q, %v", len(got), ak, av, k, v)
		}
		got = append(got, k)
	}
	if diff := cmp.Diff(slices.Sorted(maps.Keys(want)), got); diff != "" && len(want)+len(got) > 0 {
		t.Fatalf("All's names (-want +got):\n%s", diff)
	}
	if p.len() != len(want) || view.Len() != len(want) {
		t.Fatalf("len = %d, want %d", p.len(), len(want))
	}
}

// TestPropsShareNames checks that devices with the same names share one
// set, and that the sets kept stay bounded whatever names clients invent.
func TestPropsShareNames(t *testing.T) {
	names.Lock()
	kept := names.m
	names.m = map[string]*propNames{}
	names.Unlock()
	t.Cleanup(func() {
		names.Lock()
		names.m = kept
		names.Unlock()
	})
	a := newProps(map[string]any{"state": "activated", "fault": "no", "x": 1.0})
	b := newProps(map[string]any{"x": 2.0, "fault": "yes", "state": "deactivated"})
	if a.names != b.names {
		t.Error("two devices with the same names hold two sets")
	}
	a.set("Location", "kitchen")
	b.set("Location", "hall")
	if a.names != b.names {
		t.Error("two devices given the same name hold two sets")
	}
	a.del("Location")
	if c := newProps(map[string]any{"state": "", "fault": "", "x": 0.0}); a.names != c.names {
		t.Error("a device that lost a name does not share the set of those that never had it")
	}
	for i := range maxInterned + 10 {
		internNames([]string{fmt.Sprintf("invented-%d", i)})
	}
	names.RLock()
	n := len(names.m)
	names.RUnlock()
	if n > maxInterned {
		t.Errorf("%d sets of names interned, want at most %d", n, maxInterned)
	}
}

// TestZeroProps checks that the zero Props and props answer as empty.
func TestZeroProps(t *testing.T) {
	var p Props
	if _, ok := p.Get("x"); ok || p.Len() != 0 || p.Number("x") != 0 || p.Bool("x") || p.Text("x") != "" {
		t.Error("the zero Props is not empty")
	}
	for k := range p.All() {
		t.Errorf("the zero Props yields %q", k)
	}
	var q props
	q.del("x")
	if q.len() != 0 || q.index("x") != -1 {
		t.Error("the zero props is not empty")
	}
}
