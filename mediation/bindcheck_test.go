package mediation_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pervasim/pervasim/mediation"
)

// inOutRegistry returns the built-in registry with "gui", an in-out adapter.
func inOutRegistry(t *testing.T) *mediation.Registry {
	t.Helper()
	reg := mediation.NewRegistry()
	err := reg.Register(mediation.Type{Name: "gui", Kind: mediation.KindAdapter, Pattern: mediation.PatternInOut, In: []string{"in"}, Out: []string{"out"},
		New: func(map[string]any, mediation.Env) (any, error) {
			return struct {
				mediation.ProcessorFunc
				mediation.InjectorFunc
			}{
				func(string, mediation.Message, mediation.Emitter) error { return nil },
				func(mediation.Message, mediation.Emitter) error { return nil },
			}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestBindRefusesAsAFullSearch binds at random among mediators and in-out
// adapters, direct and queued, and checks each Bind against a search of
// the whole graph of bindings: a cycle (the in side of an in-out adapter
// ends a path) or a loop of direct bindings is refused, anything else made.
func TestBindRefusesAsAFullSearch(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{Registry: inOutRegistry(t)})
	defer e.Close()
	ch, err := e.CreateChain("c")
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	border := make([]bool, n)
	for i := range n {
		typ := "passthrough"
		if i%4 == 0 {
			typ, border[i] = "gui", true
			_, err = ch.AddAdapter(typ, fmt.Sprint("c", i), nil)
		} else {
			_, err = ch.AddMediator(typ, fmt.Sprint("c", i), nil)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	type edge struct {
		from, to int
		direct   bool
	}
	var edges []edge
	// reaches reports whether a path leads from a to b; split ends paths at
	// an in-out adapter's in side, direct keeps direct edges only.
	reaches := func(a, b int, split, direct bool) bool {
		if split && border[a] {
			return false
		}
		seen := map[int]bool{a: true}
		stack := []int{a}
		for len(stack) > 0 {
			c := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if c == b {
				return true
			}
			for _, x := range edges {
				if x.from != c || direct && !x.direct || split && border[x.to] || seen[x.to] {
					continue
				}
				seen[x.to] = true
				stack = append(stack, x.to)
			}
		}
		return false
	}
	bound := map[[2]int]bool{}
	r := rand.New(rand.NewPCG(1, 2))
	made, cycles, loops := 0, 0, 0
	for range 2000 {
		from, to := r.IntN(n), r.IntN(n)
		if bound[[2]int{from, to}] {
			continue
		}
		direct := r.IntN(3) > 0
		linker := "queue"
		if direct {
			linker = ""
		}
		// A new edge from -> to closes a cycle when from is reachable
		// from to (to's in side if an adapter: never).
		wantCycle := !border[to] && reaches(to, from, true, false)
		wantLoop := !wantCycle && direct && reaches(to, from, false, true)
		_, err := ch.Bind(fmt.Sprint("c", from, ":out"), fmt.Sprint("c", to, ":in"), linker, nil)
		switch {
		case wantCycle:
			cycles++
			if !errors.Is(err, mediation.ErrInvalid) || errors.Is(err, mediation.ErrDirectLoop) {
				t.Fatalf("Bind c%d -> c%d (direct %v) = %v, want a cycle refused", from, to, direct, err)
			}
		case wantLoop:
			loops++
			if !errors.Is(err, mediation.ErrDirectLoop) {
				t.Fatalf("Bind c%d -> c%d (direct %v) = %v, want a direct loop refused", from, to, direct, err)
			}
		default:
			if err != nil {
				t.Fatalf("Bind c%d -> c%d (direct %v) = %v, want nil", from, to, direct, err)
			}
			made++
			bound[[2]int{from, to}] = true
			edges = append(edges, edge{from, to, direct})
		}
		if r.IntN(4) == 0 && len(edges) > 0 { // and unbind one, to keep going
			i := r.IntN(len(edges))
			x := edges[i]
			if err := ch.Unbind(fmt.Sprint("c", x.from, ":out"), fmt.Sprint("c", x.to, ":in")); err != nil {
				t.Fatal(err)
			}
			edges = append(edges[:i], edges[i+1:]...)
			delete(bound, [2]int{x.from, x.to})
		}
	}
	if made == 0 || cycles == 0 || loops == 0 {
		t.Fatalf("made %d bindings, refused %d cycles and %d direct loops: want some of each", made, cycles, loops)
	}
}

// TestBindCostIndependentOfChainSize checks that binding a component to a
// new one does not search every binding of the chain for a cycle: a Bind
// used to build a graph of all of them (allocating for each component that
// has an out binding), O(bindings) a Bind and quadratic to build a chain.
func TestBindCostIndependentOfChainSize(t *testing.T) {
	allocs := func(n int) float64 {
		e := mediation.NewEngine(mediation.Config{})
		defer e.Close()
		ch, err := e.CreateChain("c")
		if err != nil {
			t.Fatal(err)
		}
		for i := range n + 1 {
			if _, err := ch.AddMediator("passthrough", fmt.Sprint("m", i), nil); err != nil {
				t.Fatal(err)
			}
			if i > 0 {
				if _, err := ch.Bind(fmt.Sprint("m", i-1, ":out"), fmt.Sprint("m", i, ":in"), "", nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		from, to := fmt.Sprint("m", n-1, ":out"), fmt.Sprint("m", n, ":in")
		return testing.AllocsPerRun(20, func() {
			if err := ch.Unbind(from, to); err != nil {
				t.Fatal(err)
			}
			if _, err := ch.Bind(from, to, "", nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, big := allocs(10), allocs(500)
	if big > small+5 {
		t.Errorf("allocations of an Unbind and a Bind at the end of a chain: %v with 10 bindings, %v with 500: want about the same", small, big)
	}
}
