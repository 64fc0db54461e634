package sim

import (
	"fmt"
	"maps"
	"runtime"
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
			case 0:
				p.set(name, float64(i))
				want[name] = float64(i)
			case 1: // a batch: set name, remove the next one, set name again
				other := fmt.Sprintf("k%02d", (op+1)&0x0f)
				p.apply([]propChange{{name: name, value: 0.5}, {name: other, remove: true}, {name: name, value: float64(i)}})
				delete(want, other)
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
	got := map[string]any{}
	if p.names != nil {
		for i, k := range p.names.s {
			got[k] = p.vals[i]
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("props (-want +got):\n%s", diff)
	}
	var names []string
	if p.names != nil {
		names = p.names.s
	}
	if diff := cmp.Diff(slices.Sorted(maps.Keys(want)), names); diff != "" && len(want)+len(names) > 0 {
		t.Fatalf("names (-want +got):\n%s", diff)
	}
	for _, k := range names {
		if v, ok := p.get(k); !ok || v != want[k] {
			t.Fatalf("get(%q) = %v, %v; want %v", k, v, ok, want[k])
		}
	}
	if p.len() != len(want) {
		t.Fatalf("len = %d, want %d", p.len(), len(want))
	}
}

// TestPropsView checks that Props shows a device's stored properties and
// those it holds in its fields (state, fault, Location) as one set in name
// order, whatever names sort around the latter, as its snapshot does.
func TestPropsView(t *testing.T) {
	zone := &Zone{ID: "hall"}
	h := new(Home) // the live view's home: none of these devices reads it
	for _, stored := range [][]string{
		nil,
		{"a"},
		{"A", "Zed", "aaa", "g", "t", "zzz"},
		{"Location0", "fault0", "state0"},
		{"LOCATION", "Loc", "f", "fault ", "s", "stat", "state!", "~"},
	} {
		for _, zoned := range []bool{false, true} {
			for _, faulty := range []bool{false, true} {
				m := map[string]any{}
				for i, k := range stored {
					m[k] = float64(i)
				}
				d := &device{kind: &Kind{}, props: newProps(m), faulty: faulty, active: !faulty}
				if zoned {
					d.zone = zone
				}
				want := maps.Clone(m)
				want[PropState], want[PropFault] = d.state(), d.fault()
				if zoned {
					want[PropLocation] = zone.ID
				}
				name := fmt.Sprintf("%v/zoned=%v/faulty=%v", stored, zoned, faulty)
				view := Props{d, h}
				if view.Len() != len(want) {
					t.Errorf("%s: Len() = %d, want %d", name, view.Len(), len(want))
				}
				var keys []string
				for k, v := range view.All() {
					if v != want[k] {
						t.Errorf("%s: All gives %q = %v, want %v", name, k, v, want[k])
					}
					if ak, av := view.At(len(keys)); ak != k || av != v {
						t.Errorf("%s: At(%d) = %q, %v; All gave %q, %v", name, len(keys), ak, av, k, v)
					}
					if n := view.Name(len(keys)); n != k {
						t.Errorf("%s: Name(%d) = %q; All gave %q", name, len(keys), n, k)
					}
					if g, ok := view.Get(k); !ok || g != v {
						t.Errorf("%s: Get(%q) = %v, %v; All gave %v", name, k, g, ok, v)
					}
					keys = append(keys, k)
				}
				if diff := cmp.Diff(slices.Sorted(maps.Keys(want)), keys); diff != "" {
					t.Errorf("%s: names (-want +got):\n%s", name, diff)
				}
				if _, ok := view.Get(PropLocation); ok != zoned {
					t.Errorf("%s: Get(Location) reports %v", name, ok)
				}
				if diff := cmp.Diff(want, d.snapshotProperties(h)); diff != "" {
					t.Errorf("%s: snapshot's properties (-want +got):\n%s", name, diff)
				}
			}
		}
	}
}

// TestPropsShareNames checks that devices with the same names share one
// set, that lists of names never share a set by accident (a name may hold
// any character), and that sets nobody holds are collected with their
// entries, whatever names clients invent.
func TestPropsShareNames(t *testing.T) {
	a := newProps(map[string]any{"power": 1.0, "x": 1.0})
	b := newProps(map[string]any{"x": 2.0, "power": 0.0})
	if a.names != b.names {
		t.Error("two devices with the same names hold two sets")
	}
	a.set("Z", "kitchen")
	b.set("Z", "hall")
	if a.names != b.names {
		t.Error("two devices given the same name hold two sets")
	}
	a.del("Z")
	if c := newProps(map[string]any{"power": 0.0, "x": 0.0}); a.names != c.names {
		t.Error("a device that lost a name does not share the set of those that never had it")
	}
	for _, pair := range [][2][]string{
		{{"a", "b"}, {"a\x00b"}},
		{{"a\x00", "b"}, {"a", "\x00b"}},
		{{"ab"}, {"a", "b"}},
	} {
		if x, y := internNames(pair[0]), internNames(pair[1]); x == y || !slices.Equal(x.s, pair[0]) || !slices.Equal(y.s, pair[1]) {
			t.Errorf("names %q and %q share the set %q", pair[0], pair[1], x.s)
		}
	}

	count := func() int {
		names.RLock()
		defer names.RUnlock()
		return len(names.m)
	}
	before := count()
	for i := range 1000 {
		internNames([]string{fmt.Sprintf("invented-%d", i)}) // held by nobody
	}
	for range 100 { // the cleanups run on a goroutine of their own, after a collection
		if count() <= before {
			break
		}
		runtime.GC()
		runtime.Gosched()
	}
	if n := count(); n > before+10 {
		t.Errorf("%d sets of names are still interned after 1,000 sets nobody holds, %d before", n, before)
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
}

// TestPropsApplyManyNames checks that a change of many names at once makes
// one set, not one per name (which cost seconds and kept every set made
// on the way), and leaves the values right.
func TestPropsApplyManyNames(t *testing.T) {
	p := newProps(map[string]any{"keep": 1.0, "gone": 2.0, "zz": 3.0})
	var cs []propChange
	want := map[string]any{"keep": 10.0, "zz": 3.0}
	for i := range 5000 {
		k := fmt.Sprintf("n%05d", i)
		cs = append(cs, propChange{name: k, value: float64(i)})
		want[k] = float64(i)
	}
	cs = append(cs, propChange{name: "gone", remove: true}, propChange{name: "keep", value: 5.0},
		propChange{name: "keep", value: 10.0}, propChange{name: "absent", remove: true})
	names.RLock()
	before := len(names.m)
	names.RUnlock()
	p.apply(cs)
	names.RLock()
	after := len(names.m)
	names.RUnlock()
	if after > before+1 {
		t.Errorf("one change of 5,000 names interned %d sets", after-before)
	}
	checkProps(t, &p, want)
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
