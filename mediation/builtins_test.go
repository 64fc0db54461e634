package mediation_test

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/pervasim/pervasim/mediation"
)

// runMediator sends ins through a mediator of type typ (direct bindings)
// and returns what reached each of its out ports (each bound to a rest-out),
// plus its counters.
func runMediator(t *testing.T, typ string, props map[string]any, ins []mediation.Message) (map[string][]mediation.Message, mediation.Counters) {
	t.Helper()
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "src", nil), med(typ, "m", props), bind("src:out", "m:in", ""))
	info, err := ch.Component("m")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range info.Out {
		if _, err := ch.AddAdapter("rest-out", "o-"+p, map[string]any{"capacity": 1000.0}); err != nil {
			t.Fatal(err)
		}
		if _, err := ch.Bind("m:"+p, "o-"+p+":in", "", nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := ch.Start(); err != nil {
		t.Fatal(err)
	}
	for _, m := range ins {
		if err := ch.Send("src", m); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string][]mediation.Message{}
	for _, p := range info.Out {
		ms, err := ch.Messages("o-" + p)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) > 0 {
			out[p] = ms
		}
	}
	info, _ = ch.Component("m")
	return out, info.Counters
}

type msgs = []mediation.Message
type props = map[string]any

func msg(content any, p props) mediation.Message {
	return mediation.Message{Content: content, Properties: p}
}

func TestBuiltinMediators(t *testing.T) {
	tests := []struct {
		name     string
		typ      string
		props    props
		in       msgs
		want     map[string]msgs
		counters mediation.Counters
	}{
		{"passthrough", "passthrough", nil,
			msgs{msg("a", nil), msg(1.0, props{"k": "v"})},
			map[string]msgs{"out": {msg("a", nil), msg(1.0, props{"k": "v"})}},
			mediation.Counters{In: 2, Out: 2}},
		{"enricher adds and overrides", "enricher", props{"site": "lab", "n": 2.0},
			msgs{msg("a", nil), msg("b", props{"site": "home", "x": true})},
			map[string]msgs{"out": {msg("a", props{"site": "lab", "n": 2.0}), msg("b", props{"site": "lab", "n": 2.0, "x": true})}},
			mediation.Counters{In: 2, Out: 2}},
		{"enricher without properties", "enricher", nil,
			msgs{msg("a", nil)}, map[string]msgs{"out": {msg("a", nil)}}, mediation.Counters{In: 1, Out: 1}},
		{"filter on properties", "filter", props{"condition": "(&(kind=temp)(value>=20))"},
			msgs{msg(1, props{"kind": "temp", "value": 25.0}), msg(2, props{"kind": "temp", "value": 15.0}), msg(3, props{"kind": "hum", "value": 30.0}), msg(4, nil)},
			map[string]msgs{"out": {msg(1, props{"kind": "temp", "value": 25.0})}},
			mediation.Counters{In: 4, Out: 1, Dropped: 3}},
		{"filter on map content", "filter", props{"condition": "(kind=temp)"},
			msgs{msg(map[string]any{"kind": "temp"}, nil), msg(map[string]any{"kind": "hum"}, nil), msg("kind=temp", nil)},
			map[string]msgs{"out": {msg(map[string]any{"kind": "temp"}, nil)}},
			mediation.Counters{In: 3, Out: 1, Dropped: 2}},
		{"filter properties before content", "filter", props{"condition": "(kind=temp)"},
			msgs{msg(map[string]any{"kind": "temp"}, props{"kind": "hum"})},
			map[string]msgs{},
			mediation.Counters{In: 1, Dropped: 1}},
		{"router", "router", props{"conditions": map[string]any{"(kind=temp)": "temp", "(value>=20)": "high", "(kind=hum)": "hum"}},
			msgs{msg(1, props{"kind": "temp", "value": 25.0}), msg(2, props{"kind": "hum"}), msg(3, props{"kind": "wind"})},
			map[string]msgs{
				"temp":    {msg(1, props{"kind": "temp", "value": 25.0})},
				"high":    {msg(1, props{"kind": "temp", "value": 25.0})},
				"hum":     {msg(2, props{"kind": "hum"})},
				"default": {msg(3, props{"kind": "wind"})},
			},
			mediation.Counters{In: 3, Out: 4}},
		{"router custom default, two conditions one port", "router", props{"default": "other", "conditions": map[string]any{"(a=1)": "p", "(b=1)": "p"}},
			msgs{msg(1, props{"a": 1, "b": 1}), msg(2, nil)},
			map[string]msgs{"p": {msg(1, props{"a": 1, "b": 1})}, "other": {msg(2, nil)}},
			mediation.Counters{In: 2, Out: 2}},
		{"splitter string", "splitter", nil,
			msgs{msg("a,b,c", props{"k": "v"})},
			map[string]msgs{"out": {
				msg("a", props{"k": "v", "correlation.index": 0, "correlation.total": 3, "correlation.id": "ignored"}),
				msg("b", props{"k": "v", "correlation.index": 1, "correlation.total": 3}),
				msg("c", props{"k": "v", "correlation.index": 2, "correlation.total": 3}),
			}},
			mediation.Counters{In: 1, Out: 3}},
		{"splitter regexp", "splitter", props{"separator": `\s*;\s*`},
			msgs{msg("a ; b;c", nil)},
			map[string]msgs{"out": {
				msg("a", props{"correlation.index": 0, "correlation.total": 3}),
				msg("b", props{"correlation.index": 1, "correlation.total": 3}),
				msg("c", props{"correlation.index": 2, "correlation.total": 3}),
			}},
			mediation.Counters{In: 1, Out: 3}},
		{"splitter drops the empty parts at the end, as Java's split", "splitter", props{"max-parts": 3.0},
			msgs{msg("a,,b,,,", nil), msg(",a", nil), msg(",,,", nil), msg("", nil), msg("x"+strings.Repeat(",", 100), nil)},
			map[string]msgs{"out": {
				msg("a", props{"correlation.index": 0, "correlation.total": 3}),
				msg("", props{"correlation.index": 1, "correlation.total": 3}),
				msg("b", props{"correlation.index": 2, "correlation.total": 3}),
				msg("", props{"correlation.index": 0, "correlation.total": 2}),
				msg("a", props{"correlation.index": 1, "correlation.total": 2}),
				msg("", props{"correlation.index": 0, "correlation.total": 1}),
				msg("x", props{"correlation.index": 0, "correlation.total": 1}),
			}},
			mediation.Counters{In: 5, Out: 7, Dropped: 1}},
		{"splitter array", "splitter", nil,
			msgs{msg([]any{1.0, "x"}, nil)},
			map[string]msgs{"out": {
				msg(1.0, props{"correlation.index": 0, "correlation.total": 2}),
				msg("x", props{"correlation.index": 1, "correlation.total": 2}),
			}},
			mediation.Counters{In: 1, Out: 2}},
		{"splitter empty array drops it", "splitter", nil,
			msgs{msg([]any{}, nil), msg([]any{"x"}, nil)},
			map[string]msgs{"out": {msg("x", props{"correlation.index": 0, "correlation.total": 1})}},
			mediation.Counters{In: 2, Out: 1, Dropped: 1}},
		{"splitter scalar", "splitter", nil,
			msgs{msg(7.0, nil)},
			map[string]msgs{"out": {msg(7.0, props{"correlation.index": 0, "correlation.total": 1})}},
			mediation.Counters{In: 1, Out: 1}},
		{"aggregator by total, out of order, two groups", "aggregator", nil,
			msgs{
				msg("b", props{"correlation.id": "g1", "correlation.index": 1, "correlation.total": 2}),
				msg("x", props{"correlation.id": "g2", "correlation.index": 0.0, "correlation.total": 1.0}),
				msg("a", props{"correlation.id": "g1", "correlation.index": 0, "correlation.total": 2, "k": "v"}),
			},
			map[string]msgs{"out": {
				msg([]any{"x"}, props{"correlation.id": "g2"}),
				msg([]any{"a", "b"}, props{"correlation.id": "g1", "k": "v"}),
			}},
			mediation.Counters{In: 3, Out: 2}},
		{"aggregator by count", "aggregator", props{"count": 2.0},
			msgs{msg(1, props{"correlation.id": "g"}), msg(2, props{"correlation.id": "g"}), msg(3, props{"correlation.id": "g"})},
			map[string]msgs{"out": {msg([]any{1, 2}, props{"correlation.id": "g"})}},
			mediation.Counters{In: 3, Out: 1}},
		{"aggregator without correlation", "aggregator", nil,
			msgs{msg(1, nil), msg(2, props{"correlation.id": "g"})},
			map[string]msgs{},
			mediation.Counters{In: 2, Dropped: 1, Errors: 1}},
		{"aggregator evicts oldest group", "aggregator", props{"count": 2.0, "max-groups": 1.0},
			msgs{msg(1, props{"correlation.id": "g1"}), msg(2, props{"correlation.id": "g2"}), msg(3, props{"correlation.id": "g2"})},
			map[string]msgs{"out": {msg([]any{2, 3}, props{"correlation.id": "g2"})}},
			mediation.Counters{In: 3, Out: 1, Dropped: 1}},
		{"translator", "translator", props{"dictionary": map[string]any{"hello": "bonjour", "world": "monde", "é": "e"}},
			msgs{msg("hello, world! helloworld hello_x é", props{"k": 1}), msg(3.0, nil)},
			map[string]msgs{"out": {msg("bonjour, monde! helloworld hello_x e", props{"k": 1}), msg(3.0, nil)}},
			mediation.Counters{In: 2, Out: 2}},
		{"translator phrases", "translator", props{"dictionary": map[string]any{
			"CLIENT-ID": "CLIENT-IDENT", "good morning": "bonjour", "good": "bon", "->": "=>", "a-b": "x", "a-b-c": "y", "-z": "Z"}},
			msgs{msg("<CLIENT-ID>7</CLIENT-ID> CLIENT-IDS XCLIENT-ID good morning, good day; a->b a-b-c a-b-cd q-z", nil)},
			map[string]msgs{"out": {msg("<CLIENT-IDENT>7</CLIENT-IDENT> CLIENT-IDS XCLIENT-ID bonjour, bon day; a=>b y x-cd qZ", nil)}},
			mediation.Counters{In: 1, Out: 1}},
		{"translator relaxed dictionary", "translator", props{"dictionary": "{one=un; two=deux}"},
			msgs{msg("one two three", nil)},
			map[string]msgs{"out": {msg("un deux three", nil)}},
			mediation.Counters{In: 1, Out: 1}},
	}
	ignoreCorrelationID := cmpopts.IgnoreMapEntries(func(k string, _ any) bool { return k == "correlation.id" })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, counters := runMediator(t, tt.typ, tt.props, tt.in)
			opts := []cmp.Option{cmpopts.EquateEmpty()}
			if tt.typ == "splitter" {
				opts = append(opts, ignoreCorrelationID)
			}
			if diff := cmp.Diff(tt.want, got, opts...); diff != "" {
				t.Errorf("output per port (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.counters, counters); diff != "" {
				t.Errorf("counters (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSplitterCorrelationIDs(t *testing.T) {
	got, _ := runMediator(t, "splitter", nil, msgs{msg("a,b", nil), msg("c,d", nil)})
	out := got["out"]
	if len(out) != 4 {
		t.Fatalf("got %d parts, want 4", len(out))
	}
	id := func(i int) any { return out[i].Properties["correlation.id"] }
	if id(0) != id(1) || id(2) != id(3) || id(0) == id(2) || id(0) == nil {
		t.Errorf("correlation ids %v %v %v %v: want one unique id per split", id(0), id(1), id(2), id(3))
	}
}

// TestSplitterIDsPerEngine checks that a splitter's correlation ids do not
// depend on what else the process ran: the same chain in two engines, one
// after the other, splits with the same ids, and a splitter rebuilt by
// UpdateProperties takes new ones.
func TestSplitterIDsPerEngine(t *testing.T) {
	ids := func() []any {
		e := mediation.NewEngine(mediation.Config{})
		defer e.Close()
		ch := build(t, e, "c", adp("rest-in", "a", nil), med("splitter", "s", nil), adp("rest-out", "o", nil),
			bind("a:out", "s:in", ""), bind("s:out", "o:in", ""), start)
		for range 2 {
			if err := ch.Send("a", msg("x,y", nil)); err != nil {
				t.Fatal(err)
			}
			if _, err := ch.UpdateProperties("s", nil); err != nil {
				t.Fatal(err)
			}
		}
		ms, err := ch.Messages("o")
		if err != nil {
			t.Fatal(err)
		}
		var out []any
		for _, m := range ms {
			out = append(out, m.Properties["correlation.id"])
		}
		return out
	}
	want := []any{"c/s.1-1", "c/s.1-1", "c/s.2-1", "c/s.2-1"}
	for i := range 2 {
		if diff := cmp.Diff(want, ids()); diff != "" {
			t.Errorf("engine %d: correlation ids (-want +got):\n%s", i+1, diff)
		}
	}
}

func TestSplitterAggregatorRoundTrip(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "a", nil), med("splitter", "s", nil), med("translator", "t", props{"dictionary": props{"b": "B"}}),
		med("aggregator", "g", nil), adp("rest-out", "o", nil),
		bind("a:out", "s:in", ""), bind("s:out", "t:in", "queue"), bind("t:out", "g:in", "queue"), bind("g:out", "o:in", ""), start)
	for _, s := range []string{"a,b,c", "b", "x,b"} {
		if err := ch.Send("a", msg(s, nil)); err != nil {
			t.Fatal(err)
		}
	}
	var ms []mediation.Message
	for len(ms) < 3 {
		ms, _ = ch.Messages("o")
		runtime.Gosched()
	}
	if diff := cmp.Diff([]any{[]any{"a", "B", "c"}, []any{"B"}, []any{"x", "B"}}, contents(ms)); diff != "" {
		t.Errorf("aggregates (-want +got):\n%s", diff)
	}
}

func TestRestOutCapacity(t *testing.T) {
	var in msgs
	for i := range 5 {
		in = append(in, msg(i, nil))
	}
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "a", nil), adp("rest-out", "o", props{"capacity": 3.0}), bind("a:out", "o:in", ""), start)
	for _, m := range in {
		ch.Send("a", m)
	}
	ms, _ := ch.Messages("o")
	if diff := cmp.Diff([]any{2, 3, 4}, contents(ms)); diff != "" {
		t.Errorf("retained (-want +got):\n%s", diff)
	}
	ms[0].Content = "changed"
	again, _ := ch.Messages("o")
	if again[0].Content != 2 {
		t.Errorf("Messages returned shared messages")
	}
}

// TestRestOutEvictionsCounted: a rest-out that makes room for a new message
// by forgetting its oldest ones counts each forgotten message in its
// Dropped counter, as Counters documents (evicted messages are dropped)
// and as a placeholder adapter, read as a rest-out, counts them.
func TestRestOutEvictionsCounted(t *testing.T) {
	pad := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name  string
		props props
		in    []any
		kept  []any
		want  mediation.Counters
	}{
		{"under capacity", props{"capacity": 3.0}, []any{0, 1}, []any{0, 1},
			mediation.Counters{In: 2}},
		{"over capacity", props{"capacity": 3.0}, []any{0, 1, 2, 3, 4}, []any{2, 3, 4},
			mediation.Counters{In: 5, Dropped: 2}},
		{"capacity one", props{"capacity": 1.0}, []any{0, 1, 2}, []any{2},
			mediation.Counters{In: 3, Dropped: 2}},
		{"over max-bytes", props{"max-bytes": 1024.0}, []any{pad(600), pad(601), pad(602)}, []any{pad(602)},
			mediation.Counters{In: 3, Dropped: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mediation.NewEngine(mediation.Config{})
			defer e.Close()
			ch := build(t, e, "c", adp("rest-in", "a", nil), adp("rest-out", "o", tt.props), bind("a:out", "o:in", ""), start)
			for _, c := range tt.in {
				if err := ch.Send("a", msg(c, nil)); err != nil {
					t.Fatal(err)
				}
			}
			ms, err := ch.Messages("o")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.kept, contents(ms)); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, mustComponent(t, ch, "o").Counters); diff != "" {
				t.Errorf("counters (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConsole(t *testing.T) {
	var buf bytes.Buffer
	e := mediation.NewEngine(mediation.Config{Output: &buf})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "a", nil), adp("console", "log", nil), bind("a:out", "log:in", ""), start)
	ch.Send("a", msg("hi", props{"k": 1.0}))
	ch.Send("a", msg(2.0, nil))
	want := "c/log {\"content\":\"hi\",\"properties\":{\"k\":1}}\nc/log {\"content\":2}\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("console output (-want +got):\n%s", diff)
	}
}

func TestNumberGenerator(t *testing.T) {
	tests := []struct {
		name  string
		props props
		ticks int
	}{
		{"default range", props{"period": 100.0, "seed": 42.0}, 3},
		{"custom range", props{"period": 10.0, "seed": 7.0, "min": -1.0, "max": 1.0}, 5},
		{"a range wider than the largest number", props{"period": 10.0, "seed": 7.0, "min": -1e308, "max": 1e308}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSink(tt.ticks)
			mock := clock.NewMock()
			e := mediation.NewEngine(mediation.Config{Clock: mock, Registry: testRegistry(t, s)})
			defer e.Close()
			ch := build(t, e, "c", adp("number-generator", "gen", tt.props), adp("sink", "o", nil), bind("gen:out", "o:in", ""))
			period := time.Duration(tt.props["period"].(float64)) * time.Millisecond
			mock.Add(10 * period) // not started: no tick
			if got := len(s.all()); got != 0 {
				t.Fatalf("idle chain produced %d numbers", got)
			}
			if err := ch.Start(); err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= tt.ticks; i++ {
				mock.Add(period)
				s.waitN(t, i)
			}
			lo, hi := 0.0, 100.0
			if v, ok := tt.props["min"]; ok {
				lo, hi = v.(float64), tt.props["max"].(float64)
			}
			var first []any
			for _, m := range s.all() {
				f, ok := m.Content.(float64)
				if !ok || f < lo || f >= hi {
					t.Errorf("number %v outside [%v, %v)", m.Content, lo, hi)
				}
				first = append(first, f)
			}
			// Same seed, same numbers.
			s2 := newSink(tt.ticks)
			mock2 := clock.NewMock()
			e2 := mediation.NewEngine(mediation.Config{Clock: mock2, Registry: testRegistry(t, s2)})
			defer e2.Close()
			build(t, e2, "c", adp("number-generator", "gen", tt.props), adp("sink", "o", nil), bind("gen:out", "o:in", ""), start)
			for i := 1; i <= tt.ticks; i++ {
				mock2.Add(period)
				s2.waitN(t, i)
			}
			if diff := cmp.Diff(first, contents(s2.all())); diff != "" {
				t.Errorf("same seed, different numbers (-first +second):\n%s", diff)
			}
			// Stopped: no more ticks.
			ch.Stop()
			mock.Add(10 * period)
			if got := len(s.all()); got != tt.ticks {
				t.Errorf("stopped chain produced numbers: %d, want %d", got, tt.ticks)
			}
		})
	}
}

// TestNumberGeneratorLive: changing the period of a running generator
// restarts its ticks with the new period; removing it stops them.
func TestNumberGeneratorLive(t *testing.T) {
	s := newSink(0)
	mock := clock.NewMock()
	e := mediation.NewEngine(mediation.Config{Clock: mock, Registry: testRegistry(t, s)})
	defer e.Close()
	ch := build(t, e, "c", adp("number-generator", "gen", props{"period": 1000.0, "seed": 1.0}), adp("sink", "o", nil),
		bind("gen:out", "o:in", ""), start)
	mock.Add(time.Second)
	s.waitN(t, 1)
	if _, err := ch.UpdateProperties("gen", props{"period": 10.0}); err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 4; i++ {
		mock.Add(10 * time.Millisecond)
		s.waitN(t, i)
	}
	if got := mustComponent(t, ch, "gen").Counters.Out; got != 4 {
		t.Errorf("generator Out = %d, want 4", got)
	}
	if err := ch.RemoveComponent(mediation.KindAdapter, "gen"); err != nil {
		t.Fatal(err)
	}
	mock.Add(time.Second)
	if got := len(s.all()); got != 4 {
		t.Errorf("removed generator still ticks: %d messages, want 4", got)
	}
}

// TestEnricherCopiesContainers checks that an enricher's map and slice
// values reach each message as a copy of their own: a component that
// changes what it received does not change what the next message gets.
func TestEnricherCopiesContainers(t *testing.T) {
	var seen []any
	reg := mediation.NewRegistry()
	register(t, reg, mediation.Type{Name: "scribble", Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"},
		New: func(map[string]any, mediation.Env) (any, error) {
			return mediation.ProcessorFunc(func(_ string, m mediation.Message, out mediation.Emitter) error {
				meta := m.Properties["meta"].(map[string]any)
				tags := m.Properties["tags"].([]any)
				seen = append(seen, []any{meta["room"], tags[0], m.Properties["site"]})
				meta["room"], tags[0] = "scribbled", "scribbled"
				out.Emit("out", m)
				return nil
			}), nil
		}})
	e := mediation.NewEngine(mediation.Config{Registry: reg})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "a", nil),
		med("enricher", "e", map[string]any{"meta": map[string]any{"room": "kitchen"}, "tags": []any{"warm"}, "site": "lab"}),
		med("scribble", "s", nil), adp("rest-out", "o", nil),
		bind("a:out", "e:in", ""), bind("e:out", "s:in", ""), bind("s:out", "o:in", ""), start)
	for range 2 {
		if err := ch.Send("a", mediation.Message{Content: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	want := []any{[]any{"kitchen", "warm", "lab"}, []any{"kitchen", "warm", "lab"}}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("what the second component received (-want +got):\n%s", diff)
	}
}
