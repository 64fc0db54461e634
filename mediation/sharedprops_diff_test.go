package mediation_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/mediation"
)

// The differential test of the enricher's shared properties: the same
// random chain, run through the same random operations, in two engines.
// In run A the enrichers' properties are plain, so that they give every
// message without properties their one shared map; in run B each also has
// an entry "zz" holding a list, which makes every message get a map of its
// own (the old path). With "zz" taken out of what B produced, users must
// see the same: what each recorder saw, what each rest-out keeps, what the
// consoles print, every component's counters, and the errors of the
// operations.
//
// Both runs observe the same because the test waits, after each
// operation, until no queue holds a message (settle), and because what a
// component gets along two ways from one source (a fan-in), whose order
// the queues' goroutines decide, is compared as a sorted multiset, and
// reaches no rest-out small enough to drop some of it nor anything that
// counts (scribble, the stamping linker).

// diffWorld is what the components of one run record.
type diffWorld struct {
	mu   sync.Mutex
	recs map[string][]mediation.Message // by component id, in arrival order
	out  bytes.Buffer                   // the consoles' output (the engine serialises its writes; read once it is closed)
}

func (w *diffWorld) record(id string, m mediation.Message) {
	c := m.Clone() // deep: what later components write must not show here
	w.mu.Lock()
	w.recs[id] = append(w.recs[id], c)
	w.mu.Unlock()
}

// diffRecorder records each message it gets and passes it on; its type
// may be ReadOnly (it writes nothing and keeps no map: it keeps a copy).
type diffRecorder struct {
	w  *diffWorld
	id string
}

func (r *diffRecorder) Process(_ string, m mediation.Message, out mediation.Emitter) error {
	r.w.record(r.id, m)
	out.Emit("out", m)
	return nil
}

// diffWriter writes into the properties of each message it gets, as a
// type that is not ReadOnly may, deterministically: "set" sets "w-<id>" to
// the content, "del" deletes "site" and "origin", "nest" sets "w-<id>" in
// the nested map "nest" (making it when there is none). A mediator passes
// the message on; an out-adapter (out) records it.
type diffWriter struct {
	w    *diffWorld
	id   string
	mode string
	out  bool
}

func (d *diffWriter) Process(_ string, m mediation.Message, out mediation.Emitter) error {
	if m.Properties == nil {
		m.Properties = map[string]any{}
	}
	v := fmt.Sprint(m.Content)
	switch d.mode {
	case "set":
		m.Properties["w-"+d.id] = v
	case "del":
		delete(m.Properties, "site")
		delete(m.Properties, "origin")
	case "nest":
		if n, ok := m.Properties["nest"].(map[string]any); ok {
			n["w-"+d.id] = v
		} else {
			m.Properties["nest"] = map[string]any{"w-" + d.id: v}
		}
	}
	if d.out {
		d.w.record(d.id, m)
		return nil
	}
	out.Emit("out", m)
	return nil
}

// diffEngine returns an engine with the built-in types and those of the
// test, whose instances record into w, and the "stamp" linker.
func diffEngine(t *testing.T, w *diffWorld) *mediation.Engine {
	t.Helper()
	r := testRegistry(t, newSink(0))
	in, out := []string{"in"}, []string{"out"}
	rec := func(_ map[string]any, env mediation.Env) (any, error) { return &diffRecorder{w: w, id: env.ID}, nil }
	writer := func(isOut bool) mediation.Constructor {
		return func(props map[string]any, env mediation.Env) (any, error) {
			mode, _ := props["mode"].(string)
			return &diffWriter{w: w, id: env.ID, mode: mode, out: isOut}, nil
		}
	}
	for _, typ := range []mediation.Type{
		{Name: "rec-ro", Kind: mediation.KindMediator, In: in, Out: out, Stateless: true, ReadOnly: true, New: rec},
		{Name: "rec-rw", Kind: mediation.KindMediator, In: in, Out: out, New: rec},
		{Name: "scrawl", Kind: mediation.KindMediator, In: in, Out: out, Stateless: true, New: writer(false)},
		{Name: "scrawl-out", Kind: mediation.KindAdapter, Pattern: mediation.PatternOutOnly, In: in, New: writer(true)},
		{Name: "scribble", Kind: mediation.KindMediator, In: in, Out: out,
			New: func(map[string]any, mediation.Env) (any, error) { return &scribble{}, nil }},
	} {
		must(t, r.Register(typ))
	}
	must(t, r.RegisterLinker("stamp", stampLinker{}))
	e := mediation.NewEngine(mediation.Config{Registry: r, Output: &w.out})
	t.Cleanup(func() { e.Close() })
	return e
}

// A scenario: components in the order they are created (each after those
// it gets messages from, a spare right after the component it may
// replace), bindings, and operations.

type dcomp struct {
	id, typ string
	adapter bool
	props   map[string]any
}

type dslot struct {
	comps   [2]*dcomp // the component, and a spare that may replace it (or nil)
	source  bool
	leaf    bool // an adapter: no out binding
	ports   []string
	ordered bool // each source reaches it along one way at most: what it gets comes in one order
	anc     map[int]bool
}

type dedge struct {
	from, to int // slots
	port     string
	linker   string
}

type dop struct {
	kind  string // send, replace, update, stop, start, remove
	slot  int
	n     int            // send: the message's number
	props map[string]any // update
	slot2 int            // replace: the occupant's index
}

type scenario struct {
	slots []*dslot
	edges []dedge
	ops   []dop
}

func pick[T any](rng *rand.Rand, xs ...T) T { return xs[rng.IntN(len(xs))] }

// mediatorSpec returns a random mediator of the scenario (not a router);
// ordered says whether it may depend on the order of what it gets.
func mediatorSpec(rng *rand.Rand, id string, ordered bool) *dcomp {
	kinds := []string{"enricher", "enricher", "passthrough", "filter", "translator", "rec-ro", "rec-ro", "rec-rw", "scrawl", "scrawl"}
	if ordered {
		kinds = append(kinds, "scribble")
	}
	c := &dcomp{id: id, typ: pick(rng, kinds...)}
	switch c.typ {
	case "enricher":
		c.props = pick(rng,
			map[string]any{"site": "lab"},
			map[string]any{"site": "yard", "room": "r1"},
			map[string]any{"room": "r2"})
	case "filter":
		c.props = map[string]any{"condition": pick(rng, "(site=lab)", "(kind=temp)", "(!(site=lab))", "(origin=client)")}
	case "translator":
		c.props = map[string]any{"dictionary": map[string]any{"hello": "bonjour", "temp": "heat"}}
	case "scrawl":
		c.props = map[string]any{"mode": pick(rng, "set", "set", "del", "nest")}
	}
	return c
}

// adapterSpec returns a random out-only adapter of the scenario.
func adapterSpec(rng *rand.Rand, id string, ordered bool) *dcomp {
	c := &dcomp{id: id, adapter: true, typ: pick(rng, "rest-out", "rest-out", "console", "scrawl-out")}
	switch c.typ {
	case "rest-out":
		c.props = map[string]any{"capacity": restOutCapacity(rng, ordered)}
	case "scrawl-out":
		c.props = map[string]any{"mode": pick(rng, "set", "del", "nest")}
	}
	return c
}

// restOutCapacity is small where what a rest-out gets comes in one order,
// and large enough to keep everything elsewhere (what it keeps of more
// would depend on the order).
func restOutCapacity(rng *rand.Rand, ordered bool) int {
	if ordered {
		return 1 + rng.IntN(4)
	}
	return 1000
}

func newScenario(seed uint64) *scenario {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	sc := &scenario{}
	paths := [][]int{} // per slot, the number of ways from each source
	nsrc := 1 + rng.IntN(2)
	for i := range nsrc {
		sc.slots = append(sc.slots, &dslot{comps: [2]*dcomp{{id: fmt.Sprint("src", i), typ: "rest-in", adapter: true}},
			source: true, ports: []string{"out"}, ordered: true, anc: map[int]bool{i: true}})
		p := make([]int, nsrc)
		p[i] = 1
		paths = append(paths, p)
	}
	n := 4 + rng.IntN(10)
	motifSlot := -1
	for k := range n {
		i := len(sc.slots)
		// Its parents: one, sometimes two, among the slots that emit.
		var emitters []int
		for j, s := range sc.slots {
			if !s.leaf {
				emitters = append(emitters, j)
			}
		}
		parents := []int{pick(rng, emitters...)}
		if k == 0 {
			parents[0] = 0
		}
		// Often, a rest-out right after the first enricher, which a
		// writing adapter may replace: what it keeps is the enricher's
		// shared map, handed over to the writer.
		// A read-only recorder after the same enricher shows what the
		// writer might write into the map.
		motif := k == 1 && rng.IntN(3) == 0
		witness := k == 2 && motifSlot >= 0
		if motif || witness {
			parents[0] = nsrc
		}
		if motif {
			motifSlot = len(sc.slots)
		}
		if len(emitters) > 1 && rng.IntN(6) == 0 {
			if p := pick(rng, emitters...); p != parents[0] {
				parents = append(parents, p)
			}
		}
		p := make([]int, nsrc)
		anc := map[int]bool{i: true}
		for _, par := range parents {
			for s := range p {
				p[s] += paths[par][s]
			}
			for a := range sc.slots[par].anc {
				anc[a] = true
			}
		}
		ordered := !slices.ContainsFunc(p, func(x int) bool { return x > 1 })
		paths = append(paths, p)
		s := &dslot{ordered: ordered, anc: anc}
		id := fmt.Sprint("c", i)
		switch {
		case motif:
			s.comps[0] = &dcomp{id: id, typ: "rest-out", adapter: true, props: map[string]any{"capacity": restOutCapacity(rng, ordered)}}
		case witness:
			s.comps[0] = &dcomp{id: id, typ: "rec-ro"}
		case k == 0 || rng.IntN(5) == 0 && k < n-1:
			if k == 0 || rng.IntN(2) == 0 {
				s.comps[0] = &dcomp{id: id, typ: "enricher", props: map[string]any{"site": "lab"}}
			} else {
				s.comps[0] = &dcomp{id: id, typ: "router", props: map[string]any{
					"conditions": map[string]any{"(site=lab)": "a", "(kind=temp)": "b"}}}
			}
		case rng.IntN(3) == 0:
			s.comps[0] = adapterSpec(rng, id, ordered)
		default:
			s.comps[0] = mediatorSpec(rng, id, ordered)
		}
		s.leaf = s.comps[0].adapter
		switch s.comps[0].typ {
		case "router":
			s.ports = []string{"a", "b", "default"}
		default:
			s.ports = []string{"out"}
		}
		// A spare, more often for a rest-out, whose messages go to it.
		spares := 2
		if s.comps[0].typ == "rest-out" {
			spares = 4
		}
		if s.comps[0].typ != "router" && rng.IntN(5) < spares {
			sid := id + "s"
			if motif {
				s.comps[1] = &dcomp{id: sid, typ: "scrawl-out", adapter: true, props: map[string]any{"mode": "set"}}
			} else if s.leaf {
				s.comps[1] = pick(rng,
					&dcomp{id: sid, typ: "rest-out", adapter: true, props: map[string]any{"capacity": restOutCapacity(rng, ordered)}},
					&dcomp{id: sid, typ: "scrawl-out", adapter: true, props: map[string]any{"mode": "set"}},
					&dcomp{id: sid, typ: "scrawl-out", adapter: true, props: map[string]any{"mode": pick(rng, "set", "nest", "del")}},
					&dcomp{id: sid, typ: "console", adapter: true})
			} else {
				s.comps[1] = mediatorSpec(rng, sid, ordered)
			}
		}
		sc.slots = append(sc.slots, s)
		for _, par := range parents {
			linker := pick(rng, "direct", "direct", "direct", "queue", "queue", "stamp")
			if linker == "stamp" && (!sc.slots[par].ordered || len(parents) > 1) {
				linker = "direct" // the stamp's count depends on the order of what it carries
			}
			sc.edges = append(sc.edges, dedge{from: par, to: i, port: pick(rng, sc.slots[par].ports...), linker: linker})
		}
	}
	// Bound in a random order: a fan-out gives every binding but the last
	// of a port a copy, and the last the message itself. The rest-out
	// after the first enricher comes last, to keep its shared map.
	rng.Shuffle(len(sc.edges), func(i, j int) { sc.edges[i], sc.edges[j] = sc.edges[j], sc.edges[i] })
	if i := slices.IndexFunc(sc.edges, func(e dedge) bool { return e.to == motifSlot }); i >= 0 {
		e := sc.edges[i]
		sc.edges = append(slices.Delete(sc.edges, i, i+1), e)
	}
	// Operations, on a model of the chain's state.
	occupant := make([]int, len(sc.slots))
	removed := make([]bool, len(sc.slots))
	stopped := false
	nops := 15 + rng.IntN(25)
	for k := range nops {
		switch x := rng.IntN(100); {
		case x < 55:
			sc.ops = append(sc.ops, dop{kind: "send", slot: rng.IntN(nsrc), n: k})
		case x < 70:
			var cand []int
			for i, s := range sc.slots {
				if s.comps[1] != nil && !removed[i] {
					cand = append(cand, i)
				}
			}
			if len(cand) == 0 {
				continue
			}
			i := pick(rng, cand...)
			if motifSlot >= 0 && !removed[motifSlot] && sc.slots[motifSlot].comps[1] != nil && rng.IntN(2) == 0 {
				i = motifSlot
			}
			sc.ops = append(sc.ops, dop{kind: "replace", slot: i, slot2: occupant[i]})
			occupant[i] = 1 - occupant[i]
		case x < 82:
			var cand []int
			for i, s := range sc.slots {
				if t := s.comps[occupant[i]].typ; !removed[i] && (t == "enricher" || t == "rest-out") {
					cand = append(cand, i)
				}
			}
			if len(cand) == 0 {
				continue
			}
			i := pick(rng, cand...)
			var props map[string]any
			if sc.slots[i].comps[occupant[i]].typ == "enricher" {
				props = pick(rng, map[string]any{"site": "lab2"}, map[string]any{"room": "r9"}, map[string]any{"site": "lab"})
			} else {
				props = map[string]any{"capacity": restOutCapacity(rng, sc.slots[i].ordered)}
			}
			sc.ops = append(sc.ops, dop{kind: "update", slot: i, slot2: occupant[i], props: props})
		case x < 92:
			if stopped {
				sc.ops = append(sc.ops, dop{kind: "start"})
			} else {
				sc.ops = append(sc.ops, dop{kind: "stop"})
			}
			stopped = !stopped
		default:
			var cand []int
			for i, s := range sc.slots {
				if s.source || removed[i] {
					continue
				}
				live := false
				for _, e := range sc.edges {
					live = live || e.from == i && !removed[e.to]
				}
				if !live {
					cand = append(cand, i)
				}
			}
			if len(cand) == 0 {
				continue
			}
			i := pick(rng, cand...)
			sc.ops = append(sc.ops, dop{kind: "remove", slot: i, slot2: occupant[i]})
			removed[i] = true
		}
	}
	if stopped {
		sc.ops = append(sc.ops, dop{kind: "start"})
	}
	return sc
}

// message returns message n of a scenario: content a string or a map, and
// mostly no properties. Each run gets a message of its own.
func (op dop) message() mediation.Message {
	m := mediation.Message{Content: fmt.Sprintf("hello temp m%d", op.n)}
	if op.n%3 == 1 {
		kind := "temp"
		if op.n%2 == 0 {
			kind = "hum"
		}
		m.Content = map[string]any{"kind": kind, "v": float64(op.n)}
	}
	if op.n%5 == 3 {
		m.Properties = map[string]any{"origin": "client", "site": "yard", "nest": map[string]any{"a": float64(op.n)}}
	}
	return m
}

// diffMsg is a message as a user sees it, "zz" taken out.
type diffMsg struct {
	Content    any
	Properties map[string]any
}

// diffObs is what users see of a run.
type diffObs struct {
	Errors   []string                      // of each operation
	Seen     map[string][]diffMsg          // by recorder (and writing adapter)
	Kept     map[string][]diffMsg          // by rest-out
	Console  []diffMsg                     // sorted
	Counters map[string]mediation.Counters // by component
	Missing  map[string]string             // components gone: the error of Component
}

func strip(m mediation.Message) diffMsg {
	m = m.Clone()
	delete(m.Properties, "zz")
	return diffMsg{Content: m.Content, Properties: m.Properties}
}

func sortMsgs(ms []diffMsg) {
	key := func(m diffMsg) string { b, _ := json.Marshal(m); return string(b) }
	slices.SortFunc(ms, func(a, b diffMsg) int { return strings.Compare(key(a), key(b)) })
}

// settle waits until no queue of a started chain holds a message. The
// chain's components are created in an order in which each comes after
// those it gets messages from, which is the order in which Components
// reads their queues: a message still on its way when it starts reading
// is seen (each of its queues counts it until it is in the next one).
func settle(t *testing.T, ch *mediation.Chain) {
	t.Helper()
	if ch.State() != "started" {
		return
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		cs, err := ch.Components()
		must(t, err)
		if !slices.ContainsFunc(cs, func(c mediation.ComponentInfo) bool { return c.Counters.Queue > 0 }) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the chain's queues do not empty")
		}
		runtime.Gosched() // the queues' goroutines deliver meanwhile
	}
}

// play builds the scenario in a fresh engine and runs it; old adds the
// entry that makes every enricher give each message a map of its own.
func (sc *scenario) play(t *testing.T, old bool) diffObs {
	w := &diffWorld{recs: map[string][]mediation.Message{}}
	e := diffEngine(t, w)
	ch, err := e.CreateChain("c")
	must(t, err)
	var all []*dcomp
	for _, s := range sc.slots {
		for _, c := range s.comps {
			if c == nil {
				continue
			}
			props := c.props
			if old && c.typ == "enricher" {
				props = map[string]any{"zz": []any{}}
				for k, v := range c.props {
					props[k] = v
				}
			}
			if c.adapter {
				_, err = ch.AddAdapter(c.typ, c.id, props)
			} else {
				_, err = ch.AddMediator(c.typ, c.id, props)
			}
			must(t, err)
			all = append(all, c)
		}
	}
	for _, b := range sc.edges {
		_, err := ch.Bind(sc.slots[b.from].comps[0].id+":"+b.port, sc.slots[b.to].comps[0].id+":in", b.linker, nil)
		must(t, err)
	}
	must(t, ch.Start())
	var obs diffObs
	for _, op := range sc.ops {
		s := sc.slots[op.slot]
		switch op.kind {
		case "send":
			err = ch.Send(s.comps[0].id, op.message())
		case "replace":
			err = ch.Replace(s.comps[op.slot2].id, s.comps[1-op.slot2].id)
		case "update":
			props := maps.Clone(op.props) // each run its own
			_, err = ch.UpdateProperties(s.comps[op.slot2].id, props)
		case "stop":
			err = ch.Stop()
		case "start":
			err = ch.Start()
		case "remove":
			err = ch.RemoveComponent("", s.comps[op.slot2].id)
		}
		obs.Errors = append(obs.Errors, fmt.Sprintf("%s %s: %s", op.kind, s.comps[op.slot2].id, errKind(err)))
		settle(t, ch)
	}

	obs.Seen, obs.Kept = map[string][]diffMsg{}, map[string][]diffMsg{}
	obs.Counters, obs.Missing = map[string]mediation.Counters{}, map[string]string{}
	ordered := map[string]bool{}
	for _, s := range sc.slots {
		for _, c := range s.comps {
			if c != nil {
				ordered[c.id] = s.ordered
			}
		}
	}
	for _, c := range all {
		info, err := ch.Component(c.id)
		if err != nil {
			obs.Missing[c.id] = errKind(err)
		} else {
			obs.Counters[c.id] = info.Counters
		}
		if c.typ == "rest-out" {
			ms, err := ch.Messages(c.id)
			if err != nil {
				obs.Missing[c.id+" messages"] = errKind(err)
			}
			for _, m := range ms {
				obs.Kept[c.id] = append(obs.Kept[c.id], strip(m))
			}
			if !ordered[c.id] {
				sortMsgs(obs.Kept[c.id])
			}
		}
	}
	w.mu.Lock()
	for id, ms := range w.recs {
		for _, m := range ms {
			obs.Seen[id] = append(obs.Seen[id], strip(m))
		}
		if !ordered[id] {
			sortMsgs(obs.Seen[id])
		}
	}
	w.mu.Unlock()
	must(t, e.Close()) // its goroutines are done: the consoles write no more
	for line := range strings.Lines(w.out.String()) {
		prefix, js, _ := strings.Cut(strings.TrimSpace(line), " ")
		var m mediation.Message
		if err := json.Unmarshal([]byte(js), &m); err != nil {
			t.Fatalf("console line %q: %v", line, err)
		}
		d := strip(m)
		if len(d.Properties) == 0 {
			d.Properties = nil // JSON prints no empty map
		}
		d.Content = map[string]any{"console": prefix, "content": d.Content}
		obs.Console = append(obs.Console, d)
	}
	sortMsgs(obs.Console)
	return obs
}

// upstreamCheck lists, for run A, the entries a component saw that were
// written by a writer (a component or a stamping link) that is not on a
// way to it: what a write into a map that messages share would show.
func (sc *scenario) upstreamCheck(obs diffObs) map[string]map[string]struct{} {
	bad := map[string]map[string]struct{}{}
	slotOf := map[string]int{}
	for i, s := range sc.slots {
		for _, c := range s.comps {
			if c != nil {
				slotOf[c.id] = i
			}
		}
	}
	allowed := func(i int) (writers map[string]bool, n bool) {
		writers = map[string]bool{}
		for a := range sc.slots[i].anc {
			for _, c := range sc.slots[a].comps {
				if c != nil {
					writers["w-"+c.id] = true
					n = n || c.typ == "scribble"
				}
			}
		}
		for _, e := range sc.edges {
			n = n || e.linker == "stamp" && sc.slots[i].anc[e.to]
		}
		return writers, n
	}
	check := func(id string, ms []diffMsg) {
		writers, n := allowed(slotOf[id])
		note := func(k string) {
			if bad[id] == nil {
				bad[id] = map[string]struct{}{}
			}
			bad[id][k] = struct{}{}
		}
		for _, m := range ms {
			for k, v := range m.Properties {
				if strings.HasPrefix(k, "w-") && !writers[k] || k == "n" && !n {
					note(k)
				}
				if nest, ok := v.(map[string]any); ok && k == "nest" {
					for k := range nest {
						if strings.HasPrefix(k, "w-") && !writers[k] {
							note("nest." + k)
						}
					}
				}
			}
		}
	}
	for id, ms := range obs.Seen {
		check(id, ms)
	}
	for id, ms := range obs.Kept {
		check(id, ms)
	}
	for _, m := range obs.Console {
		id := strings.TrimPrefix(m.Content.(map[string]any)["console"].(string), "c/")
		check(id, []diffMsg{m})
	}
	return bad
}

// TestSharedPropertiesDifferential runs random chains (rest-in sources;
// enrichers, routers, filters, translators, passthroughs, consoles,
// rest-outs, writers of the test's, read-only and other recorders, the
// stamping linker; direct and queue bindings, fan-outs and fan-ins) and
// random operations (Send, Replace, UpdateProperties, Stop and Start,
// RemoveComponent) twice: with enrichers that share their map and with
// enrichers that give each message its own. Users must see the same; and,
// with shared maps, no component may see an entry written by a writer that
// is not on a way to it. Without any one of the copies that keep the
// shared maps unwritten (comp.call's for a component that may write,
// the queue's mark in receiveBatch, fanout's for a user's link, and
// takeHeldLocked's for what rest-out hands over), some seeds fail.
func TestSharedPropertiesDifferential(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 60
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			sc := newScenario(seed)
			a := sc.play(t, false)
			b := sc.play(t, true)
			if bad := sc.upstreamCheck(a); len(bad) > 0 {
				t.Errorf("seed %d: in the run with shared maps, components saw entries written by writers not upstream of them: %v", seed, bad)
			}
			if diff := cmp.Diff(b, a); diff != "" {
				t.Errorf("seed %d: shared maps (+) and maps of their own (-) differ:\n%s\nscenario:\n%s", seed, diff, sc)
			}
		})
	}
}

// String describes the scenario, for failures.
func (sc *scenario) String() string {
	var b strings.Builder
	for i, s := range sc.slots {
		fmt.Fprintf(&b, "slot %d (ordered %v):", i, s.ordered)
		for _, c := range s.comps {
			if c != nil {
				fmt.Fprintf(&b, " %s=%s%v", c.id, c.typ, c.props)
			}
		}
		b.WriteString("\n")
	}
	for _, e := range sc.edges {
		fmt.Fprintf(&b, "%s:%s -> %s:in (%s)\n", sc.slots[e.from].comps[0].id, e.port, sc.slots[e.to].comps[0].id, e.linker)
	}
	for _, op := range sc.ops {
		fmt.Fprintf(&b, "%s %s %d %v\n", op.kind, sc.slots[op.slot].comps[op.slot2].id, op.n, op.props)
	}
	return b.String()
}
