package sim

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOrdered checks that an ordered finds, keeps in order and removes its
// entities the same way while it scans its list and once it holds a map.
func TestOrdered(t *testing.T) {
	for _, n := range []int{1, scanned, scanned + 1, 3 * scanned} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var o ordered[Person]
			o.init(func(p *Person) string { return p.ID })
			for i := range n {
				id := fmt.Sprintf("p%d", i)
				o.add(id, &Person{ID: id})
			}
			if got, want := o.byID != nil, n > scanned; got != want {
				t.Errorf("holds a map: %v, want %v", got, want)
			}
			for i := range n {
				id := fmt.Sprintf("p%d", i)
				if p, ok := o.get(id); !ok || p.ID != id {
					t.Errorf("get(%q) = %v, %v", id, p, ok)
				}
			}
			if p, ok := o.get("nobody"); ok {
				t.Errorf("get(nobody) = %v, true", p)
			}
			o.remove("p0")
			o.remove("nobody")
			var ids []string
			for _, p := range o.list {
				ids = append(ids, p.ID)
			}
			var want []string
			for i := 1; i < n; i++ {
				want = append(want, fmt.Sprintf("p%d", i))
			}
			if diff := cmp.Diff(want, ids); diff != "" {
				t.Errorf("list after removing p0 (-want +got):\n%s", diff)
			}
			if _, ok := o.get("p0"); ok {
				t.Error("p0 is found after its removal")
			}
		})
	}
}
