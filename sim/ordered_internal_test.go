package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOrdered checks that an ordered finds, keeps in order and removes its
// entities the same way while it scans its list and once it holds a map.
func TestOrdered(t *testing.T) {
	for _, n := range []int{1, scanned, scanned + 1, 3 * scanned} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var o ordered[Person, *Person]
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
			for _, p := range o.all() {
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

// TestOrderedRemovals checks an ordered against a plain slice over random
// additions (ids used again after their removal among them), removals and
// reads, short and long, and that removals from a long list cost no shift
// of it: the list keeps its entities until a read, which takes every
// removed one out at once.
func TestOrderedRemovals(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var o ordered[Person, *Person]
	var want []*Person
	shifts := 0
	for step := range 20_000 {
		switch op := r.IntN(10); {
		case op < 6 || len(want) == 0:
			id := fmt.Sprint("p", r.IntN(3000)) // an id in use is not added again
			if _, ok := o.get(id); ok {
				continue
			}
			p := &Person{ID: id}
			o.add(id, p)
			want = append(want, p)
		case op < 9:
			for range 1 + r.IntN(2) {
				if len(want) == 0 {
					break
				}
				i := r.IntN(len(want))
				before := len(o.list)
				o.remove(want[i].ID)
				if len(o.list) != before {
					shifts++
					if o.byID != nil {
						t.Fatalf("step %d: a removal from a list of %d with a map shifted it", step, before)
					}
				}
				want = slices.Delete(want, i, i+1)
			}
		default:
			if got := o.all(); !slices.Equal(want, got) {
				t.Fatalf("step %d: all holds %d entities, want %d, or not the same", step, len(got), len(want))
			}
			if o.gone != nil && (len(o.gone.set) != 0 || o.gone.pending.Load()) {
				t.Fatalf("step %d: all keeps %d removed entities noted", step, len(o.gone.set))
			}
		}
		for range 3 {
			if len(want) > 0 {
				p := want[r.IntN(len(want))]
				if got, ok := o.get(p.ID); !ok || got != p {
					t.Fatalf("step %d: get(%s) = %v, %v", step, p.ID, got, ok)
				}
			}
		}
	}
	if diff := cmp.Diff(want, o.all()); diff != "" {
		t.Fatalf("all (-want +got):\n%s", diff)
	}
	if len(want) < 2*scanned || shifts == 0 {
		t.Fatalf("a weak run: %d entities at the end, %d short removals", len(want), shifts)
	}
	o.clear()
	if len(o.all()) != 0 || o.gone != nil {
		t.Fatalf("after clear: %d entities, removals %v", len(o.all()), o.gone)
	}
}

// TestOrderedReadersTogether has readers call all at once after removals,
// as readers of a home do under its read lock: each sees the list without
// the removed entities (run with -race).
func TestOrderedReadersTogether(t *testing.T) {
	var o ordered[Person, *Person]
	for i := range 1000 {
		id := fmt.Sprint("p", i)
		o.add(id, &Person{ID: id})
	}
	var mu sync.RWMutex // the home's lock
	for round := range 20 {
		mu.Lock()
		for i := round * 10; i < round*10+10; i++ {
			o.remove(fmt.Sprint("p", i))
		}
		mu.Unlock()
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				mu.RLock()
				defer mu.RUnlock()
				all := o.all()
				if len(all) != 1000-10*(round+1) || all[0].ID != fmt.Sprint("p", 10*(round+1)) {
					t.Errorf("round %d: %d entities from %s", round, len(all), all[0].ID)
				}
			})
		}
		wg.Wait()
	}
}
