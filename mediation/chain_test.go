package mediation_test

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/pervasim/pervasim/mediation"
)

func TestAddComponent(t *testing.T) {
	tests := []struct {
		name    string
		kind    mediation.Kind
		typ, id string
		props   map[string]any
		want    string // error kind
		msg     string // substring of the error message
	}{
		{"mediator", mediation.KindMediator, "passthrough", "p1", nil, "", ""},
		{"adapter", mediation.KindAdapter, "rest-in", "a1", nil, "", ""},
		{"any kind", "", "rest-out", "a2", nil, "", ""},
		{"enricher with props", mediation.KindMediator, "enricher", "e", map[string]any{"x": 1.0}, "", ""},
		{"bad id", mediation.KindMediator, "passthrough", "a/b", nil, "invalid", "component id"},
		{"empty id", mediation.KindMediator, "passthrough", "", nil, "invalid", "component id"},
		{"unknown mediator type", mediation.KindMediator, "nope", "x", nil, "invalid", "aggregator, enricher, filter, passthrough, router, splitter, translator"},
		{"unknown adapter type", mediation.KindAdapter, "nope", "x", nil, "invalid", "console, number-generator, rest-in, rest-out"},
		{"adapter type as mediator", mediation.KindMediator, "rest-in", "x", nil, "invalid", "not mediator"},
		{"mediator type as adapter", mediation.KindAdapter, "filter", "x", map[string]any{"condition": "(a=1)"}, "invalid", "not adapter"},
		{"duplicate id", mediation.KindMediator, "passthrough", "taken", nil, "conflict", "already exists"},
		{"duplicate id across kinds", mediation.KindAdapter, "rest-in", "taken", nil, "conflict", "already exists"},
		{"filter without condition", mediation.KindMediator, "filter", "f", nil, "invalid", "condition"},
		{"filter bad condition", mediation.KindMediator, "filter", "f", map[string]any{"condition": "(a=1"}, "invalid", "condition"},
		{"filter condition not a string", mediation.KindMediator, "filter", "f", map[string]any{"condition": 3.0}, "invalid", "condition"},
		{"router bad condition", mediation.KindMediator, "router", "r", map[string]any{"conditions": map[string]any{"(a=": "p"}}, "invalid", "condition"},
		{"router bad port", mediation.KindMediator, "router", "r", map[string]any{"conditions": map[string]any{"(a=1)": "p:q"}}, "invalid", "port"},
		{"router conditions not a map", mediation.KindMediator, "router", "r", map[string]any{"conditions": 1.0}, "invalid", "conditions"},
		{"splitter bad regexp", mediation.KindMediator, "splitter", "s", map[string]any{"separator": "("}, "invalid", "separator"},
		{"aggregator negative count", mediation.KindMediator, "aggregator", "g", map[string]any{"count": -1.0}, "invalid", "count"},
		{"aggregator fractional count", mediation.KindMediator, "aggregator", "g", map[string]any{"count": 1.5}, "invalid", "count"},
		{"translator bad dictionary", mediation.KindMediator, "translator", "t", map[string]any{"dictionary": map[string]any{"a": 1.0}}, "invalid", "dictionary"},
		{"rest-out zero capacity", mediation.KindAdapter, "rest-out", "o", map[string]any{"capacity": 0.0}, "invalid", "capacity"},
		{"number-generator min above max", mediation.KindAdapter, "number-generator", "n", map[string]any{"min": 5.0, "max": 1.0}, "invalid", "min"},
		{"number-generator infinite max", mediation.KindAdapter, "number-generator", "n", map[string]any{"min": 0.0, "max": math.Inf(1)}, "invalid", "finite"},
		{"number-generator bad period", mediation.KindAdapter, "number-generator", "n", map[string]any{"period": "soon"}, "invalid", "period"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mediation.NewEngine(mediation.Config{})
			defer e.Close()
			ch := build(t, e, "c", med("passthrough", "taken", nil))
			_, err := ch.AddComponent(tt.kind, tt.typ, tt.id, tt.props)
			if diff := cmp.Diff(tt.want, errKind(err)); diff != "" {
				t.Fatalf("error kind (-want +got):\n%s (err: %v)", diff, err)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("error %q does not mention %q", err, tt.msg)
				}
				info, _ := ch.Info()
				if diff := cmp.Diff([]string{"taken"}, append(info.Mediators, info.Adapters.InOnly...)); diff != "" {
					t.Errorf("components changed after a failed add (-want +got):\n%s", diff)
				}
				return
			}
			if _, err := ch.Component(tt.id); err != nil {
				t.Errorf("Component(%q) after add: %v", tt.id, err)
			}
		})
	}
}

func TestComponentSnapshot(t *testing.T) {
	mock := clock.NewMock()
	mock.Set(time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC))
	e := mediation.NewEngine(mediation.Config{Clock: mock})
	defer e.Close()
	ch := build(t, e, "c",
		adp("rest-in", "src", nil),
		med("router", "r", map[string]any{"conditions": map[string]any{"(kind=hot)": "hot", "(kind=cold)": "cold"}}),
		adp("rest-out", "dst", map[string]any{"capacity": 5.0}),
		bind("src:out", "r:in", ""),
		bind("r:hot", "dst:in", "queue"),
	)
	ignore := cmpopts.IgnoreFields(mediation.ComponentInfo{}, "UUID")
	tests := []struct {
		name string
		id   string
		want mediation.ComponentInfo
	}{
		{"router", "r", mediation.ComponentInfo{
			ID: "r", Kind: mediation.KindMediator, Type: "router", Namespace: mediation.Namespace,
			State: mediation.ComponentStopped, Created: mock.Now(),
			Properties: map[string]any{"conditions": map[string]any{"(kind=hot)": "hot", "(kind=cold)": "cold"}, "default": "default"},
			In:         []string{"in"}, Out: []string{"cold", "default", "hot"},
		}},
		{"rest-out", "dst", mediation.ComponentInfo{
			ID: "dst", Kind: mediation.KindAdapter, Type: "rest-out", Namespace: mediation.Namespace,
			State: mediation.ComponentStopped, Created: mock.Now(), Properties: map[string]any{"capacity": 5.0},
			Pattern: mediation.PatternOutOnly, In: []string{"in"}, Out: []string{},
		}},
		{"rest-in", "src", mediation.ComponentInfo{
			ID: "src", Kind: mediation.KindAdapter, Type: "rest-in", Namespace: mediation.Namespace,
			State: mediation.ComponentStopped, Created: mock.Now(), Properties: map[string]any{},
			Pattern: mediation.PatternInOnly, In: []string{}, Out: []string{"out"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ch.Component(tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, ignore); diff != "" {
				t.Errorf("Component(%q) (-want +got):\n%s", tt.id, diff)
			}
			if !strings.HasPrefix(got.UUID, "c/"+tt.id+"/") || len(got.UUID) != len("c/"+tt.id+"/")+36 {
				t.Errorf("UUID = %q, want c/%s/<uuid>", got.UUID, tt.id)
			}
		})
	}
	if _, err := ch.Component("nope"); errKind(err) != "not found" {
		t.Errorf("Component(nope): %v, want not found", err)
	}
	// The snapshot is a copy.
	got, _ := ch.Component("dst")
	got.Properties["capacity"] = 1.0
	again, _ := ch.Component("dst")
	if again.Properties["capacity"] != 5.0 {
		t.Errorf("snapshot shares its properties map")
	}
	// Counters and state once running.
	if err := ch.Start(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"hot", "cold", "hot"} {
		if err := ch.Send("src", mediation.Message{Content: k, Properties: map[string]any{"kind": k}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ch.Stop(); err != nil {
		t.Fatal(err)
	}
	r, _ := ch.Component("r")
	// cold is not bound: dropped; hot twice: out.
	if diff := cmp.Diff(mediation.Counters{In: 3, Out: 2, Dropped: 1}, r.Counters); diff != "" {
		t.Errorf("router counters (-want +got):\n%s", diff)
	}
	ch.Start()
	if r, _ := ch.Component("r"); r.State != mediation.ComponentValid {
		t.Errorf("state of a started chain's component = %q, want valid", r.State)
	}
}

func TestInfo(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch := build(t, e, "c",
		adp("rest-out", "o", nil),
		med("passthrough", "p2", nil),
		adp("rest-in", "i", nil),
		med("passthrough", "p1", nil),
		bind("p1:out", "o:in", ""),
		bind("i:out", "p2:in", "JMS-Joram"),
		bind("p2:out", "p1:in", "queue"),
	)
	want := mediation.ChainInfo{
		ID: "c", State: mediation.StateIdle, Mediators: []string{"p2", "p1"},
		Adapters: mediation.AdapterIDs{InOnly: []string{"i"}, OutOnly: []string{"o"}, InOut: []string{}, All: []string{"o", "i"}},
		Bindings: []mediation.BindingInfo{
			{From: "p1:out", To: "o:in", Linker: "direct"},
			{From: "i:out", To: "p2:in", Linker: "queue"},
			{From: "p2:out", To: "p1:in", Linker: "queue"},
		},
	}
	got, err := ch.Info()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Info() (-want +got):\n%s", diff)
	}
}

func TestBind(t *testing.T) {
	tests := []struct {
		name     string
		from, to string
		linker   string
		props    map[string]any
		want     string
		msg      string
		wantInfo mediation.BindingInfo
	}{
		{"direct default", "a:out", "p:in", "", nil, "", "", mediation.BindingInfo{From: "a:out", To: "p:in", Linker: "direct"}},
		{"direct named", "a:out", "p:in", "direct", nil, "", "", mediation.BindingInfo{From: "a:out", To: "p:in", Linker: "direct"}},
		{"queue", "a:out", "p:in", "queue", map[string]any{"capacity": 8.0}, "", "",
			mediation.BindingInfo{From: "a:out", To: "p:in", Linker: "queue", Properties: map[string]any{"capacity": 8.0}}},
		{"alias JMS-Joram", "a:out", "p:in", "JMS-Joram", nil, "", "", mediation.BindingInfo{From: "a:out", To: "p:in", Linker: "queue"}},
		{"alias JMS_Joram", "a:out", "p:in", "JMS_Joram", nil, "", "", mediation.BindingInfo{From: "a:out", To: "p:in", Linker: "queue"}},
		{"router port", "r:hot", "o:in", "", nil, "", "", mediation.BindingInfo{From: "r:hot", To: "o:in", Linker: "direct"}},
		{"colon in id", "x:y:out", "p:in", "", nil, "", "", mediation.BindingInfo{From: "x:y:out", To: "p:in", Linker: "direct"}},
		{"no colon", "a", "p:in", "", nil, "invalid", "endpoint", mediation.BindingInfo{}},
		{"empty port", "a:", "p:in", "", nil, "invalid", "endpoint", mediation.BindingInfo{}},
		{"empty component", ":out", "p:in", "", nil, "invalid", "endpoint", mediation.BindingInfo{}},
		{"empty target", "a:out", "", "", nil, "invalid", "endpoint", mediation.BindingInfo{}},
		{"unknown source", "zz:out", "p:in", "", nil, "not found", "zz", mediation.BindingInfo{}},
		{"unknown target", "a:out", "zz:in", "", nil, "not found", "zz", mediation.BindingInfo{}},
		{"source port is an in port", "p:in", "o:in", "", nil, "invalid", "out ports: out", mediation.BindingInfo{}},
		{"target port is an out port", "a:out", "p:out", "", nil, "invalid", "in ports: in", mediation.BindingInfo{}},
		{"adapter without in port", "p:out", "a:in", "", nil, "invalid", "in ports: none", mediation.BindingInfo{}},
		{"router unknown port", "r:warm", "o:in", "", nil, "invalid", "out ports: cold, default, hot", mediation.BindingInfo{}},
		{"unknown linker", "a:out", "p:in", "carrier-pigeon", nil, "invalid", "direct, event-admin, queue", mediation.BindingInfo{}},
		{"bad queue capacity", "a:out", "p:in", "queue", map[string]any{"capacity": 0.0}, "invalid", "capacity", mediation.BindingInfo{}},
		{"queue ignores JMS broker properties", "a:out", "p:in", "JMS_Joram", map[string]any{"jms.topic": "wiki", "topic": "t"}, "", "",
			mediation.BindingInfo{From: "a:out", To: "p:in", Linker: "queue", Properties: map[string]any{"jms.topic": "wiki", "topic": "t"}}},
		{"queue property typo", "a:out", "p:in", "queue", map[string]any{"capacty": 8.0}, "invalid", "capacty", mediation.BindingInfo{}},
		{"unknown queue property", "a:out", "p:in", "queue", map[string]any{"colour": "red"}, "invalid", "colour", mediation.BindingInfo{}},
		{"direct with property", "a:out", "p:in", "", map[string]any{"capacity": 1.0}, "invalid", "capacity", mediation.BindingInfo{}},
		{"duplicate", "p:out", "o:in", "queue", nil, "conflict", "already exists", mediation.BindingInfo{}},
		{"direct cycle", "q:out", "p:in", "", nil, "invalid", "cycle", mediation.BindingInfo{}},
		{"direct self loop", "p:out", "p:in", "", nil, "invalid", "cycle", mediation.BindingInfo{}},
		{"queue cycle refused too", "q:out", "p:in", "queue", nil, "invalid", "cycle p -> q -> p", mediation.BindingInfo{}},
		{"queue self loop", "p:out", "p:in", "queue", map[string]any{"capacity": 16.0}, "invalid", "cycle p -> p", mediation.BindingInfo{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mediation.NewEngine(mediation.Config{})
			defer e.Close()
			ch := build(t, e, "c",
				adp("rest-in", "a", nil), adp("rest-in", "x:y", nil), med("passthrough", "p", nil), med("passthrough", "q", nil),
				med("router", "r", map[string]any{"conditions": map[string]any{"(k=1)": "hot", "(k=2)": "cold"}}),
				adp("rest-out", "o", nil),
				bind("p:out", "o:in", ""), bind("p:out", "q:in", ""))
			before, _ := ch.Info()
			got, err := ch.Bind(tt.from, tt.to, tt.linker, tt.props)
			if diff := cmp.Diff(tt.want, errKind(err)); diff != "" {
				t.Fatalf("error kind (-want +got):\n%s (err: %v)", diff, err)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("error %q does not mention %q", err, tt.msg)
				}
				after, _ := ch.Info()
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("chain changed after a failed Bind (-before +after):\n%s", diff)
				}
				return
			}
			if diff := cmp.Diff(tt.wantInfo, got); diff != "" {
				t.Errorf("Bind() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnbind(t *testing.T) {
	tests := []struct {
		name     string
		from, to string
		want     string
		left     []mediation.BindingInfo
	}{
		{"existing", "a:out", "p:in", "", []mediation.BindingInfo{{From: "p:out", To: "o:in", Linker: "queue"}}},
		{"reverse direction", "p:in", "a:out", "not found", nil},
		{"missing", "a:out", "o:in", "not found", nil},
		{"malformed", "a", "p:in", "invalid", nil},
		// An id no component can have is invalid, as for Bind, not a
		// binding that happens to be missing.
		{"invalid from id", "a b:out", "p:in", "invalid", nil},
		{"invalid to id", "a:out", "p\x00:in", "invalid", nil},
		{"from id too long", strings.Repeat("a", 129) + ":out", "p:in", "invalid", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mediation.NewEngine(mediation.Config{})
			defer e.Close()
			ch := build(t, e, "c", adp("rest-in", "a", nil), med("passthrough", "p", nil), adp("rest-out", "o", nil),
				bind("a:out", "p:in", ""), bind("p:out", "o:in", "queue"))
			err := ch.Unbind(tt.from, tt.to)
			if diff := cmp.Diff(tt.want, errKind(err)); diff != "" {
				t.Fatalf("error kind (-want +got):\n%s (err: %v)", diff, err)
			}
			if err == nil {
				info, _ := ch.Info()
				if diff := cmp.Diff(tt.left, info.Bindings); diff != "" {
					t.Errorf("bindings left (-want +got):\n%s", diff)
				}
				if _, err := ch.Bind(tt.from, tt.to, "", nil); err != nil {
					t.Errorf("Bind again after Unbind: %v", err)
				}
			}
		})
	}
}

func TestRemoveComponent(t *testing.T) {
	tests := []struct {
		name string
		kind mediation.Kind
		id   string
		want string
		left []mediation.BindingInfo
	}{
		{"mediator", mediation.KindMediator, "p", "", []mediation.BindingInfo{{From: "a:out", To: "q:in", Linker: "direct"}}},
		{"any kind", "", "o", "", []mediation.BindingInfo{{From: "a:out", To: "p:in", Linker: "direct"}, {From: "a:out", To: "q:in", Linker: "direct"}}},
		{"adapter", mediation.KindAdapter, "a", "", []mediation.BindingInfo{{From: "p:out", To: "o:in", Linker: "queue"}}},
		{"adapter via mediator route", mediation.KindMediator, "a", "not found", nil},
		{"mediator via adapter route", mediation.KindAdapter, "p", "not found", nil},
		{"missing", "", "zz", "not found", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mediation.NewEngine(mediation.Config{})
			defer e.Close()
			ch := build(t, e, "c", adp("rest-in", "a", nil), med("passthrough", "p", nil), med("passthrough", "q", nil), adp("rest-out", "o", nil),
				bind("a:out", "p:in", ""), bind("p:out", "o:in", "queue"), bind("a:out", "q:in", ""), start)
			err := ch.RemoveComponent(tt.kind, tt.id)
			if diff := cmp.Diff(tt.want, errKind(err)); diff != "" {
				t.Fatalf("error kind (-want +got):\n%s (err: %v)", diff, err)
			}
			if err != nil {
				return
			}
			info, _ := ch.Info()
			if diff := cmp.Diff(tt.left, info.Bindings); diff != "" {
				t.Errorf("bindings left (-want +got):\n%s", diff)
			}
			if _, err := ch.Component(tt.id); errKind(err) != "not found" {
				t.Errorf("Component after remove: %v, want not found", err)
			}
			if _, err := ch.AddMediator("passthrough", tt.id, nil); err != nil {
				t.Errorf("id not reusable after remove: %v", err)
			}
		})
	}
}

func TestRemoveComponentDropsHeld(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "a", nil), med("aggregator", "g", map[string]any{"count": 3.0}), adp("rest-out", "o", nil),
		bind("a:out", "g:in", ""), bind("g:out", "o:in", ""), start)
	for i := range 2 {
		ch.Send("a", mediation.Message{Content: i, Properties: map[string]any{"correlation.id": "x"}})
	}
	if err := ch.RemoveComponent(mediation.KindMediator, "g"); err != nil {
		t.Fatal(err)
	}
	if err := ch.Send("a", mediation.Message{Content: 3}); err != nil {
		t.Fatal(err)
	}
	a, _ := ch.Component("a")
	if diff := cmp.Diff(mediation.Counters{In: 3, Out: 2, Dropped: 1}, a.Counters); diff != "" {
		t.Errorf("source counters (-want +got):\n%s", diff)
	}
}

func TestUpdateProperties(t *testing.T) {
	tests := []struct {
		name   string
		set    bool // SetProperties rather than UpdateProperties
		id     string
		props  map[string]any
		want   string
		result map[string]any // properties after
		sent   map[string]any // message properties to send
		got    []any          // contents reaching o
	}{
		{"merge enricher", false, "e", map[string]any{"b": 2.0}, "", map[string]any{"a": 1.0, "b": 2.0}, nil, []any{"m"}},
		{"set enricher", true, "e", map[string]any{"b": 2.0}, "", map[string]any{"b": 2.0}, nil, []any{}}, // a is gone: the filter drops
		{"set filter", true, "f", map[string]any{"condition": "(b=*)"}, "", map[string]any{"condition": "(b=*)"}, map[string]any{"a": 1.0}, []any{}},
		{"set nothing on a filter", true, "f", nil, "invalid", map[string]any{"condition": "(a=1)"}, map[string]any{"a": 1.0}, []any{"m"}},
		{"change filter", false, "f", map[string]any{"condition": "(a=2)"}, "", map[string]any{"condition": "(a=2)"}, map[string]any{"a": 1.0}, []any{}},
		{"invalid filter", false, "f", map[string]any{"condition": "(a=2"}, "invalid", map[string]any{"condition": "(a=1)"}, map[string]any{"a": 1.0}, []any{"m"}},
		{"empty filter", false, "f", map[string]any{"condition": ""}, "invalid", map[string]any{"condition": "(a=1)"}, nil, []any{"m"}},
		{"missing", false, "zz", nil, "not found", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mediation.NewEngine(mediation.Config{})
			defer e.Close()
			ch := build(t, e, "c", adp("rest-in", "a", nil), med("enricher", "e", map[string]any{"a": 1.0}),
				med("filter", "f", map[string]any{"condition": "(a=1)"}), adp("rest-out", "o", nil),
				bind("a:out", "e:in", ""), bind("e:out", "f:in", ""), bind("f:out", "o:in", ""), start)
			update := ch.UpdateProperties
			if tt.set {
				update = ch.SetProperties
			}
			_, err := update(tt.id, tt.props)
			if diff := cmp.Diff(tt.want, errKind(err)); diff != "" {
				t.Fatalf("error kind (-want +got):\n%s (err: %v)", diff, err)
			}
			if tt.result == nil {
				return
			}
			info, _ := ch.Component(tt.id)
			if diff := cmp.Diff(tt.result, info.Properties); diff != "" {
				t.Errorf("properties (-want +got):\n%s", diff)
			}
			if err := ch.Send("a", mediation.Message{Content: "m", Properties: tt.sent}); err != nil {
				t.Fatal(err)
			}
			ms, _ := ch.Messages("o")
			if diff := cmp.Diff(tt.got, contents(ms), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("delivered (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUpdatePropertiesKeepsBoundPorts(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch := build(t, e, "c", med("router", "r", map[string]any{"conditions": map[string]any{"(k=1)": "one"}}), adp("rest-out", "o", nil),
		bind("r:one", "o:in", ""))
	_, err := ch.UpdateProperties("r", map[string]any{"conditions": map[string]any{"(k=2)": "two"}})
	if errKind(err) != "invalid" || !strings.Contains(err.Error(), "one") {
		t.Fatalf("removing a bound port: %v, want invalid naming port one", err)
	}
	info, _ := ch.Component("r")
	if diff := cmp.Diff([]string{"default", "one"}, info.Out); diff != "" {
		t.Errorf("ports changed after failed update (-want +got):\n%s", diff)
	}
	info, err = ch.UpdateProperties("r", map[string]any{"conditions": map[string]any{"(k=1)": "one", "(k=2)": "two"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"default", "one", "two"}, info.Out); diff != "" {
		t.Errorf("ports after update (-want +got):\n%s", diff)
	}
}

func TestUpdatePropertiesKeepsHeldMessages(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "a", nil), med("aggregator", "g", map[string]any{"count": 3.0}), adp("rest-out", "o", nil),
		bind("a:out", "g:in", ""), bind("g:out", "o:in", ""), start)
	send := func(i int) {
		t.Helper()
		if err := ch.Send("a", mediation.Message{Content: i, Properties: map[string]any{"correlation.id": "x", "correlation.index": i}}); err != nil {
			t.Fatal(err)
		}
	}
	send(0)
	send(1)
	if _, err := ch.UpdateProperties("g", map[string]any{"count": 4.0}); err != nil {
		t.Fatal(err)
	}
	send(2)
	send(3)
	ms, _ := ch.Messages("o")
	if diff := cmp.Diff([]any{[]any{0, 1, 2, 3}}, contents(ms)); diff != "" {
		t.Errorf("aggregate (-want +got):\n%s", diff)
	}
}

func TestCopy(t *testing.T) {
	tests := []struct {
		name     string
		from, to string
		want     string
	}{
		{"mediator", "f", "f2", ""},
		{"adapter", "o", "o2", ""},
		{"missing source", "zz", "f2", "not found"},
		{"existing target", "f", "o", "conflict"},
		{"bad id", "f", "a b", "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mediation.NewEngine(mediation.Config{})
			defer e.Close()
			ch := build(t, e, "c", med("filter", "f", map[string]any{"condition": "(a=1)", "extra": "x"}),
				adp("rest-out", "o", map[string]any{"capacity": 3.0}), bind("f:out", "o:in", ""))
			got, err := ch.Copy(tt.from, tt.to)
			if diff := cmp.Diff(tt.want, errKind(err)); diff != "" {
				t.Fatalf("error kind (-want +got):\n%s (err: %v)", diff, err)
			}
			if err != nil {
				return
			}
			src, _ := ch.Component(tt.from)
			opt := cmpopts.IgnoreFields(mediation.ComponentInfo{}, "ID", "UUID", "Created")
			if diff := cmp.Diff(src, got, opt); diff != "" {
				t.Errorf("copy differs from source (-src +copy):\n%s", diff)
			}
			info, _ := ch.Info()
			if diff := cmp.Diff([]mediation.BindingInfo{{From: "f:out", To: "o:in", Linker: "direct"}}, info.Bindings); diff != "" {
				t.Errorf("bindings after copy (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSendAndMessages(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "a", nil), med("passthrough", "p", nil), adp("rest-out", "o", map[string]any{"capacity": 2.0}),
		bind("a:out", "p:in", ""), bind("p:out", "o:in", ""))
	tests := []struct {
		name string
		op   func() error
		want string
	}{
		{"send before start", func() error { return ch.Send("a", mediation.Message{Content: 0}) }, "conflict"},
		{"messages before start", func() error { _, err := ch.Messages("o"); return err }, ""},
		{"start", ch.Start, ""},
		{"send", func() error { return ch.Send("a", mediation.Message{Content: 1}) }, ""},
		{"send to unknown", func() error { return ch.Send("zz", mediation.Message{}) }, "not found"},
		{"send to mediator", func() error { return ch.Send("p", mediation.Message{}) }, "invalid"},
		{"send to rest-out", func() error { return ch.Send("o", mediation.Message{}) }, "invalid"},
		{"messages of unknown", func() error { _, err := ch.Messages("zz"); return err }, "not found"},
		{"messages of rest-in", func() error { _, err := ch.Messages("a"); return err }, "invalid"},
		{"messages of mediator", func() error { _, err := ch.Messages("p"); return err }, "invalid"},
		{"send 2", func() error { return ch.Send("a", mediation.Message{Content: 2}) }, ""},
		{"send 3", func() error { return ch.Send("a", mediation.Message{Content: 3}) }, ""},
		{"stop", ch.Stop, ""},
		{"send after stop", func() error { return ch.Send("a", mediation.Message{}) }, "conflict"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.op()
			if diff := cmp.Diff(tt.want, errKind(err)); diff != "" {
				t.Errorf("error kind (-want +got):\n%s (err: %v)", diff, err)
			}
		})
	}
	ms, err := ch.Messages("o")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{2, 3}, contents(ms)); diff != "" {
		t.Errorf("retained messages, oldest first, capacity 2 (-want +got):\n%s", diff)
	}
}

func TestFanOutCopies(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch := build(t, e, "c", adp("rest-in", "a", nil),
		med("enricher", "e1", map[string]any{"who": "e1"}), med("enricher", "e2", map[string]any{"who": "e2"}),
		adp("rest-out", "o1", nil), adp("rest-out", "o2", nil),
		bind("a:out", "e1:in", ""), bind("a:out", "e2:in", "queue"),
		bind("e1:out", "o1:in", ""), bind("e2:out", "o2:in", ""), start)
	props := map[string]any{"who": "sender", "nested": map[string]any{"k": "v"}}
	if err := ch.Send("a", mediation.Message{Content: []any{"x"}, Properties: props}); err != nil {
		t.Fatal(err)
	}
	ch.Stop() // waits for the queue's delivery in progress, if any
	ch.Start()
	var got []string
	for len(got) < 2 {
		runtime.Gosched()
		got = got[:0]
		for _, id := range []string{"o1", "o2"} {
			ms, _ := ch.Messages(id)
			for _, m := range ms {
				got = append(got, m.Properties["who"].(string))
			}
		}
	}
	if diff := cmp.Diff([]string{"e1", "e2"}, got); diff != "" {
		t.Errorf("each branch sees its own properties (-want +got):\n%s", diff)
	}
}

// TestParseEndpoint: the port is what follows the last colon; a missing
// part, or a component id no component can have, is ErrInvalid (so Bind
// and Unbind refuse it alike, 400 over REST).
func TestParseEndpoint(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want mediation.Endpoint
		ok   bool
	}{
		{"a:out", mediation.Endpoint{Component: "a", Port: "out"}, true},
		{"ns:a:out", mediation.Endpoint{Component: "ns:a", Port: "out"}, true},
		{"a", mediation.Endpoint{}, false},
		{":out", mediation.Endpoint{}, false},
		{"a:", mediation.Endpoint{}, false},
		{"a b:out", mediation.Endpoint{}, false},
		{strings.Repeat("x", 129) + ":out", mediation.Endpoint{}, false},
	} {
		got, err := mediation.ParseEndpoint(tc.in)
		if tc.ok != (err == nil) || tc.ok && got != tc.want {
			t.Errorf("ParseEndpoint(%q) = %+v, %v; want %+v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, mediation.ErrInvalid) {
			t.Errorf("ParseEndpoint(%q): %v, want ErrInvalid", tc.in, err)
		}
	}
}
