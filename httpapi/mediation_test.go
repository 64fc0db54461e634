package httpapi_test

import (
	"maps"
	"slices"

	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const form = "application/x-www-form-urlencoded"

// medStep is a mediation request; ct "" sends a form.
type medStep struct{ method, path, body, ct string }

func (f *fixture) med(tb testing.TB, s medStep) *httptest.ResponseRecorder {
	tb.Helper()
	ct := s.ct
	if ct == "" {
		ct = form
	}
	return f.doType(tb, s.method, s.path, ct, s.body)
}

// pipeline builds chain c over REST: rest-in "in" → enricher "tag" → rest-out
// "out", plus an unbound passthrough "p".
var pipeline = []medStep{
	{"POST", "/mediation/c", "", ""},
	{"POST", "/mediation/c/adapter/rest-in/in", "", ""},
	{"POST", "/mediation/c/mediator/enricher/tag", "properties={site=lab}", ""},
	{"POST", "/mediation/c/adapter/rest-out/out", "", ""},
	{"POST", "/mediation/c/mediator/passthrough/p", "", ""},
	{"POST", "/mediation/c/bindings", "from=in:out&to=tag:in", ""},
	{"POST", "/mediation/c/bindings", "from=tag:out&to=out:in", ""},
}

type medRow struct {
	name   string
	given  []medStep // after the pipeline
	req    medStep
	status int
	want   string // JSON the body must equal, when set
	has    string // a substring of the body
	then   *medStep
	thenW  string
}

func TestMediationContract(t *testing.T) {
	long := strings.Repeat("x", 129)
	rows := []medRow{
		// Chains.
		{name: "chain list", req: medStep{"GET", "/mediation", "", ""}, status: 200, want: `{"chains":["c"]}`},
		{name: "chain list with slash", req: medStep{"GET", "/mediation/", "", ""}, status: 200, want: `{"chains":["c"]}`},
		{name: "chain create starts it at once", req: medStep{"POST", "/mediation/d", "", ""}, status: 200,
			want: `{"ID":"d","State":"started","Mediators":[],"Adapters":{"in-only":[],"out-only":[],"in-out":[]},"Bindings":[]}`},
		{name: "chain duplicate", req: medStep{"POST", "/mediation/c", "", ""}, status: 409, has: `"conflict"`},
		{name: "chain id runtime is reserved", req: medStep{"POST", "/mediation/runtime", "", ""}, status: 400},
		{name: "chain id types is reserved", req: medStep{"POST", "/mediation/types", "", ""}, status: 400},
		{name: "chain id with a space", req: medStep{"POST", "/mediation/a%20b", "", ""}, status: 400},
		{name: "chain id too long", req: medStep{"POST", "/mediation/" + long, "", ""}, status: 400},
		{name: "chain get", req: medStep{"GET", "/mediation/c", "", ""}, status: 200,
			want: `{"ID":"c","State":"started","Mediators":["tag","p"],"Adapters":{"in-only":["in"],"out-only":["out"],"in-out":[]},
				"Bindings":[{"from":"in:out","to":"tag:in","linker":"direct"},{"from":"tag:out","to":"out:in","linker":"direct"}]}`},
		{name: "chain get unknown", req: medStep{"GET", "/mediation/nope", "", ""}, status: 404},
		{name: "component ids", req: medStep{"GET", "/mediation/c/components", "", ""}, status: 200, want: `{"Adapters":["in","out"],"Mediators":["tag","p"]}`},
		{name: "mediator ids, as the original's", req: medStep{"GET", "/mediation/c/mediators", "", ""}, status: 200, want: `{"Mediators":["tag","p"]}`},
		{name: "adapter ids, as the original's", req: medStep{"GET", "/mediation/c/adapters", "", ""}, status: 200, want: `{"Adapters":["in","out"]}`},
		{name: "component ids in creation order, whatever the adapters' patterns", given: []medStep{{"POST", "/mediation/c/adapter/rest-in/in2", "", ""}},
			req: medStep{"GET", "/mediation/c/components", "", ""}, status: 200, want: `{"Adapters":["in","out","in2"],"Mediators":["tag","p"]}`},
		{name: "adapter ids in creation order, whatever their patterns", given: []medStep{{"POST", "/mediation/c/adapter/rest-in/in2", "", ""}},
			req: medStep{"GET", "/mediation/c/adapters", "", ""}, status: 200, want: `{"Adapters":["in","out","in2"]}`},
		{name: "mediator ids of an unknown chain", req: medStep{"GET", "/mediation/nope/mediators", "", ""}, status: 404},
		{name: "adapter ids of a chain with a bad id", req: medStep{"GET", "/mediation/a:b%20/adapters", "", ""}, status: 400},
		{name: "mediator ids are read only", req: medStep{"POST", "/mediation/c/mediators", "", ""}, status: 405},
		{name: "chain get bad id", req: medStep{"GET", "/mediation/a%2Fb", "", ""}, status: 400},
		{name: "component with a slash in its id", req: medStep{"POST", "/mediation/c/mediator/passthrough/a%2fb", "", ""}, status: 400},
		{name: "zone with a slash in its id", req: medStep{"GET", "/platform/zones/zone/a%2Fb", "", ""}, status: 400},
		{name: "an escaped slash that would make another route", req: medStep{"DELETE", "/mediation/c%2Fcomponents%2Fp", "", ""}, status: 400,
			then: &medStep{"GET", "/mediation/c/components", "", ""}, thenW: `{"Adapters":["in","out"],"Mediators":["tag","p"]}`},
		{name: "an escaped slash that would make another route, GET", req: medStep{"GET", "/mediation/c%2Fcomponents", "", ""}, status: 400},
		{name: "chain delete", req: medStep{"DELETE", "/mediation/c", "", ""}, status: 200,
			then: &medStep{"GET", "/mediation", "", ""}, thenW: `{"chains":[]}`},
		{name: "chain delete unknown", req: medStep{"DELETE", "/mediation/nope", "", ""}, status: 404},

		// Components.
		{name: "mediator create, the spec's form", req: medStep{"POST", "/mediation/c/mediator/enricher/e2", "properties={name=titi}", ""}, status: 200,
			has: `"Properties":{"name":"titi"}`},
		{name: "the spec's form with the same type in the body", req: medStep{"POST", "/mediation/c/mediator/passthrough/p3", "type=passthrough", ""}, status: 200, has: `"Type":"passthrough"`},
		{name: "the spec's form with another type in the body", req: medStep{"POST", "/mediation/c/mediator/enricher/p3", "type=filter", ""}, status: 400, has: "differs from the path"},
		{name: "mediator create, the later form with type", req: medStep{"POST", "/mediation/c/mediators/p2", "type=passthrough", ""}, status: 200, has: `"Type":"passthrough"`},
		{name: "adapter create with a JSON body", req: medStep{"POST", "/mediation/c/adapters/o2", `{"type":"rest-out","properties":{"capacity":5}}`, "application/json"}, status: 200,
			has: `"Pattern":"out-only"`},
		{name: "a JSON body's properties nest 64 levels at most", req: medStep{"POST", "/mediation/c/mediators/e2",
			`{"type":"enricher","properties":{"k":` + strings.Repeat(`{"a":`, 64) + `1` + strings.Repeat(`}`, 64) + `}}`, "application/json"}, status: 400,
			has: "nesting deeper than 64"},
		{name: "create with properties in the query string", req: medStep{"POST", "/mediation/c/mediators/f?type=filter&properties={condition=(a=1)}", "", ""}, status: 200,
			has: `"condition":"(a=1)"`},
		{name: "create with strict JSON properties in a form", req: medStep{"POST", "/mediation/c/mediator/router/r", `properties={"conditions":{"(k=1)":"one"}}`, ""}, status: 200,
			has: `"Properties":{"conditions":{"(k=1)":"one"},"default":"default"}`},
		{name: "create with empty properties", req: medStep{"POST", "/mediation/c/mediator/passthrough/p3", "properties={}", ""}, status: 200, has: `"Properties":{}`},
		{name: "create: unknown type lists the known ones", req: medStep{"POST", "/mediation/c/mediator/HelloMediator/h", "", ""}, status: 400, has: "passthrough"},
		{name: "create: adapter type on the mediator route", req: medStep{"POST", "/mediation/c/mediator/rest-in/x", "", ""}, status: 400},
		{name: "create: missing type", req: medStep{"POST", "/mediation/c/mediators/x", "", ""}, status: 400},
		{name: "create: duplicate id across kinds", req: medStep{"POST", "/mediation/c/adapter/rest-in/tag", "", ""}, status: 409},
		{name: "create: unknown chain", req: medStep{"POST", "/mediation/nope/mediator/passthrough/x", "", ""}, status: 404},
		{name: "create: bad id", req: medStep{"POST", "/mediation/c/mediator/passthrough/" + long, "", ""}, status: 400},
		{name: "create: unparseable properties", req: medStep{"POST", "/mediation/c/mediator/enricher/x", "properties={A}}", ""}, status: 400},
		{name: "create: bad property value", req: medStep{"POST", "/mediation/c/mediator/filter/x", "properties={condition=(a=1}", ""}, status: 400},
		{name: "component get", req: medStep{"GET", "/mediation/c/components/tag", "", ""}, status: 200, has: `"ID":"tag","Type":"enricher"`},
		{name: "component get an adapter", req: medStep{"GET", "/mediation/c/components/in", "", ""}, status: 200, has: `"Pattern":"in-only"`},
		{name: "mediator route on an adapter", req: medStep{"GET", "/mediation/c/mediators/in", "", ""}, status: 404},
		{name: "adapter route on a mediator", req: medStep{"GET", "/mediation/c/adapters/tag", "", ""}, status: 404},
		{name: "mediator route on a mediator", req: medStep{"GET", "/mediation/c/mediators/tag", "", ""}, status: 200},
		{name: "component unknown", req: medStep{"GET", "/mediation/c/components/nope", "", ""}, status: 404},
		{name: "component of unknown chain", req: medStep{"GET", "/mediation/nope/components/tag", "", ""}, status: 404},
		{name: "update merges properties", req: medStep{"PUT", "/mediation/c/components/tag", "properties={floor=2}", ""}, status: 200,
			has: `"Properties":{"floor":2,"site":"lab"}`},
		{name: "update with the component's type", req: medStep{"PUT", "/mediation/c/components/tag", "type=enricher&properties={floor=3}", ""}, status: 200,
			has: `"Properties":{"floor":3,"site":"lab"}`},
		{name: "update with another type", req: medStep{"PUT", "/mediation/c/components/tag", "type=router&properties={floor=3}", ""}, status: 400,
			has: `differs from component tag's type \"enricher\"`},
		{name: "update without properties", req: medStep{"PUT", "/mediation/c/components/tag", "", ""}, status: 400},
		{name: "update with unparseable properties", req: medStep{"PUT", "/mediation/c/components/tag", "properties={A}}", ""}, status: 400},
		{name: "update unknown component", req: medStep{"PUT", "/mediation/c/components/nope", "properties={a=1}", ""}, status: 404},
		{name: "delete with the wrong kind", req: medStep{"DELETE", "/mediation/c/mediators/in", "", ""}, status: 404},
		{name: "delete a mediator removes its bindings", req: medStep{"DELETE", "/mediation/c/mediators/tag", "", ""}, status: 200,
			then:  &medStep{"GET", "/mediation/c", "", ""},
			thenW: `{"ID":"c","State":"started","Mediators":["p"],"Adapters":{"in-only":["in"],"out-only":["out"],"in-out":[]},"Bindings":[]}`},
		{name: "delete an adapter", req: medStep{"DELETE", "/mediation/c/adapters/out", "", ""}, status: 200},
		{name: "delete a component", req: medStep{"DELETE", "/mediation/c/components/p", "", ""}, status: 200},
		{name: "delete unknown", req: medStep{"DELETE", "/mediation/c/components/nope", "", ""}, status: 404},

		// Copy and replace.
		{name: "copy: same type and properties, no bindings", req: medStep{"PUT", "/mediation/c/components", "command=copy&from=tag&to=tag2", ""}, status: 200,
			has:   `"Properties":{"site":"lab"}`,
			then:  &medStep{"GET", "/mediation/c/bindings", "", ""},
			thenW: `{"Bindings":[{"from":"in:out","to":"tag:in","linker":"direct"},{"from":"tag:out","to":"out:in","linker":"direct"}]}`},
		{name: "copy onto an existing component", req: medStep{"PUT", "/mediation/c/components", "command=copy&from=tag&to=p", ""}, status: 409},
		{name: "copy from nothing", req: medStep{"PUT", "/mediation/c/components", "command=copy&from=nope&to=x", ""}, status: 404},
		{name: "command in any case", req: medStep{"PUT", "/mediation/c/components", "command=COPY&from=tag&to=tag3", ""}, status: 200},
		{name: "unknown command", req: medStep{"PUT", "/mediation/c/components", "command=move&from=tag&to=p", ""}, status: 400},
		{name: "missing command", req: medStep{"PUT", "/mediation/c/components", "from=tag&to=p", ""}, status: 400},
		{name: "replace takes over every binding", req: medStep{"PUT", "/mediation/c/components", "command=replace&from=tag&to=p", ""}, status: 200,
			then:  &medStep{"GET", "/mediation/c/bindings", "", ""},
			thenW: `{"Bindings":[{"from":"in:out","to":"p:in","linker":"direct"},{"from":"p:out","to":"out:in","linker":"direct"}]}`},
		{name: "replace with a missing target", req: medStep{"PUT", "/mediation/c/components", "command=replace&from=tag&to=nope", ""}, status: 404},

		// Bindings.
		{name: "bind with the default linker", req: medStep{"POST", "/mediation/c/bindings", "from=p:out&to=out:in", ""}, status: 200,
			want: `{"from":"p:out","to":"out:in","linker":"direct"}`},
		{name: "bind with the spec's JMS linker and properties", req: medStep{"POST", "/mediation/c/bindings", "from=p:out&to=out:in&linker=JMS_Joram&properties={jms.topic=wiki}", ""}, status: 200,
			want: `{"from":"p:out","to":"out:in","linker":"queue"}`},
		{name: "bind with a JSON body", req: medStep{"POST", "/mediation/c/bindings", `{"from":"p:out","to":"out:in","linker":"JMS-Joram"}`, "application/json"}, status: 200},
		{name: "a JSON body labelled as a form, as curl -d sends it", req: medStep{"POST", "/mediation/c/mediators/f2", `{"type":"filter","properties":{"condition":"(a=1)"}}`, form}, status: 200,
			has: `"condition":"(a=1)"`},
		{name: "bind: malformed endpoint", req: medStep{"POST", "/mediation/c/bindings", "from=p&to=out:in", ""}, status: 400},
		{name: "bind: missing to", req: medStep{"POST", "/mediation/c/bindings", "from=p:out", ""}, status: 400},
		{name: "bind: unknown component", req: medStep{"POST", "/mediation/c/bindings", "from=nope:out&to=out:in", ""}, status: 404},
		{name: "bind: unknown port names the ports", req: medStep{"POST", "/mediation/c/bindings", "from=p:unique&to=out:in", ""}, status: 400, has: "out"},
		{name: "bind: unknown linker", req: medStep{"POST", "/mediation/c/bindings", "from=p:out&to=out:in&linker=carrier-pigeon", ""}, status: 400, has: "direct"},
		{name: "bind: the same binding twice", req: medStep{"POST", "/mediation/c/bindings", "from=in:out&to=tag:in", ""}, status: 409},
		{name: "bind: bad properties", req: medStep{"POST", "/mediation/c/bindings", "from=p:out&to=out:in&properties={A}}", ""}, status: 400},
		{name: "unbind", req: medStep{"DELETE", "/mediation/c/bindings?from=tag:out&to=out:in", "", ""}, status: 200,
			then: &medStep{"GET", "/mediation/c/bindings", "", ""}, thenW: `{"Bindings":[{"from":"in:out","to":"tag:in","linker":"direct"}]}`},
		{name: "unbind what is not bound", req: medStep{"DELETE", "/mediation/c/bindings?from=p:out&to=out:in", "", ""}, status: 404},
		{name: "unbind without parameters", req: medStep{"DELETE", "/mediation/c/bindings", "", ""}, status: 400},
		{name: "unbind: an invalid id is 400, as for bind", req: medStep{"DELETE", "/mediation/c/bindings?from=a%20b:out&to=out:in", "", ""}, status: 400, has: "a b"},

		// Runtime.
		{name: "runtime state", req: medStep{"GET", "/mediation/runtime/c", "", ""}, status: 200, want: `{"state":"started"}`},
		{name: "runtime stop", req: medStep{"PUT", "/mediation/runtime/c/stop", "", ""}, status: 200,
			then: &medStep{"GET", "/mediation/runtime/c", "", ""}, thenW: `{"state":"stopped"}`},
		{name: "runtime stop twice, then start", given: []medStep{{"PUT", "/mediation/runtime/c/stop", "", ""}, {"PUT", "/mediation/runtime/c/stop", "", ""}},
			req: medStep{"PUT", "/mediation/runtime/c/start", "", ""}, status: 200, want: `{"state":"started"}`},
		{name: "runtime of an unknown chain", req: medStep{"GET", "/mediation/runtime/nope", "", ""}, status: 404},
		{name: "runtime start of an unknown chain", req: medStep{"PUT", "/mediation/runtime/nope/start", "", ""}, status: 404},
		{name: "runtime component has counters", given: []medStep{{"POST", "/mediation/runtime/c/components/in/data", `{"v":1}`, "application/json"}},
			req: medStep{"GET", "/mediation/runtime/c/components/tag", "", ""}, status: 200, has: `"Counters":{"in":1,"out":1,"dropped":0,"errors":0,"queue":0}`},
		{name: "types", req: medStep{"GET", "/mediation/runtime/types", "", ""}, status: 200, has: `{"name":"passthrough","kind":"mediator","pattern":null,"in":["in"],"out":["out"],"properties":{}}`},
		{name: "data into a component that is not rest-in", req: medStep{"POST", "/mediation/runtime/c/components/tag/data", `{"v":1}`, "application/json"}, status: 400},
		{name: "data into a stopped chain", given: []medStep{{"PUT", "/mediation/runtime/c/stop", "", ""}},
			req: medStep{"POST", "/mediation/runtime/c/components/in/data", `{"v":1}`, "application/json"}, status: 409},
		{name: "data from a component that is not rest-out", req: medStep{"GET", "/mediation/runtime/c/components/in/data", "", ""}, status: 400},
		{name: "data of an unknown component", req: medStep{"GET", "/mediation/runtime/c/components/nope/data", "", ""}, status: 404},
		{name: "no messages yet", req: medStep{"GET", "/mediation/runtime/c/components/out/data", "", ""}, status: 200, want: `{"messages":[]}`},
		{name: "bad JSON data", req: medStep{"POST", "/mediation/runtime/c/components/in/data", `{"v":`, "application/json"}, status: 400},

		// Methods.
		{name: "method not allowed", req: medStep{"PATCH", "/mediation/c", "", ""}, status: 405},
		{name: "options", req: medStep{"OPTIONS", "/mediation/c/bindings", "", ""}, status: 200},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			f := newFixture(t)
			for _, s := range append(append([]medStep{}, pipeline...), row.given...) {
				if rec := f.med(t, s); rec.Code != http.StatusOK {
					t.Fatalf("setup %s %s %s = %d %s", s.method, s.path, s.body, rec.Code, rec.Body)
				}
			}
			before := f.medState(t)
			rec := f.med(t, row.req)
			if rec.Code != row.status {
				t.Fatalf("%s %s %s = %d %s, want %d", row.req.method, row.req.path, row.req.body, rec.Code, rec.Body, row.status)
			}
			switch {
			case row.status >= 400:
				errorCode(t, rec.Body.String())
				if after := f.medState(t); after != before {
					t.Errorf("failed request changed the chains:\nbefore %s\nafter  %s", before, after)
				}
			case row.req.method == "DELETE" || row.req.method == "OPTIONS":
				if rec.Body.Len() != 0 {
					t.Errorf("body = %q, want empty", rec.Body)
				}
			}
			if row.want != "" {
				if d := jsonDiff(t, row.want, rec.Body.String()); d != "" {
					t.Errorf("body (-want +got):\n%s", d)
				}
			}
			if !strings.Contains(rec.Body.String(), row.has) {
				t.Errorf("body %s does not contain %s", rec.Body, row.has)
			}
			if row.then != nil {
				got := f.med(t, *row.then)
				if d := jsonDiff(t, row.thenW, got.Body.String()); d != "" {
					t.Errorf("then %s %s (-want +got):\n%s", row.then.method, row.then.path, d)
				}
			}
		})
	}
}

// medState dumps every chain with its components' properties, to prove a
// failed request changed nothing.
func (f *fixture) medState(tb testing.TB) string {
	tb.Helper()
	var b strings.Builder
	var list struct{ Chains []string }
	json.Unmarshal(f.mustDo(tb, "GET", "/mediation", "").Body.Bytes(), &list)
	for _, c := range list.Chains {
		body := f.mustDo(tb, "GET", "/mediation/"+c, "").Body.String()
		b.WriteString(body)
		var ci struct {
			Mediators []string
			Adapters  map[string][]string
		}
		json.Unmarshal([]byte(body), &ci)
		ids := ci.Mediators
		for _, p := range []string{"in-only", "out-only", "in-out"} {
			ids = append(ids, ci.Adapters[p]...)
		}
		for _, id := range ids {
			var comp struct{ Properties map[string]any }
			json.Unmarshal(f.mustDo(tb, "GET", "/mediation/"+c+"/components/"+id, "").Body.Bytes(), &comp)
			p, _ := json.Marshal(comp.Properties)
			b.WriteString(id + string(p))
		}
	}
	return b.String()
}

// TestMediationMessages sends messages in by every accepted form and reads
// them out of a rest-out adapter, through a filter and a router.
func TestMediationMessages(t *testing.T) {
	f := newFixture(t)
	for _, s := range []medStep{
		{"POST", "/mediation/m", "", ""},
		{"POST", "/mediation/m/adapter/rest-in/in", "", ""},
		{"POST", "/mediation/m/mediator/enricher/tag", "properties={site=lab; floor:2}", ""},
		{"POST", "/mediation/m/mediator/filter/hot", "properties={condition=(|(kind=temp)(t>=20))}", ""},
		{"POST", "/mediation/m/mediator/router/route", `properties={conditions={(site=lab)=lab}, default=other}`, ""},
		{"POST", "/mediation/m/adapter/rest-out/out", "properties={capacity=10}", ""},
		{"POST", "/mediation/m/adapter/rest-out/rest", "", ""},
		{"POST", "/mediation/m/bindings", "from=in:out&to=tag:in", ""},
		{"POST", "/mediation/m/bindings", "from=tag:out&to=hot:in", ""},
		{"POST", "/mediation/m/bindings", "from=hot:out&to=route:in", ""},
		{"POST", "/mediation/m/bindings", "from=route:lab&to=out:in", ""},
		{"POST", "/mediation/m/bindings", "from=route:other&to=rest:in", ""},
		// A JSON body, as curl -d sends it (labelled as a form), with a property in the query.
		{"POST", "/mediation/runtime/m/components/in/data?prop.kind=temp", `{"t":21}`, form},
		// Plain text.
		{"POST", "/mediation/runtime/m/components/in/data?prop.kind=temp", "hello", "text/plain"},
		// A form with content and a property: dropped by the filter (no kind, t absent).
		{"POST", "/mediation/runtime/m/components/in/data", "content=cold&prop.kind=hum", form},
		// A JSON body matched on its content (t >= 20).
		{"POST", "/mediation/runtime/m/components/in/data", `{"t":25}`, "application/json"},
		// Plain text as curl -d sends it, labelled as a form, with a numeric
		// property that must compare as a number (t=100 >= 20).
		{"POST", "/mediation/runtime/m/components/in/data?prop.t=100", "hello world", form},
	} {
		if rec := f.med(t, s); rec.Code != http.StatusOK {
			t.Fatalf("%s %s %s = %d %s", s.method, s.path, s.body, rec.Code, rec.Body)
		}
	}
	want := `{"messages":[
		{"content":{"t":21},"properties":{"kind":"temp","site":"lab","floor":2}},
		{"content":"hello","properties":{"kind":"temp","site":"lab","floor":2}},
		{"content":{"t":25},"properties":{"site":"lab","floor":2}},
		{"content":"hello world","properties":{"t":"100","site":"lab","floor":2}}]}`
	if d := jsonDiff(t, want, f.mustDo(t, "GET", "/mediation/runtime/m/components/out/data", "").Body.String()); d != "" {
		t.Errorf("out (-want +got):\n%s", d)
	}
	if d := jsonDiff(t, `{"messages":[]}`, f.mustDo(t, "GET", "/mediation/runtime/m/components/rest/data", "").Body.String()); d != "" {
		t.Errorf("rest (-want +got):\n%s", d)
	}
	rec := f.mustDo(t, "GET", "/mediation/runtime/m/components/hot", "")
	if !strings.Contains(rec.Body.String(), `"Counters":{"in":5,"out":4,"dropped":1`) {
		t.Errorf("filter counters = %s, want in 5, out 4, dropped 1", rec.Body)
	}
}

// TestMediationShapes pins the exact keys of the contract's shapes.
func TestMediationShapes(t *testing.T) {
	f := newFixture(t)
	for _, s := range pipeline {
		f.med(t, s)
	}
	keys := func(body string) []string {
		var m map[string]any
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return slices.Sorted(maps.Keys(m))
	}
	tests := []struct {
		path string
		want []string
	}{
		{"/mediation/c", []string{"Adapters", "Bindings", "ID", "Mediators", "State"}},
		{"/mediation/c/components/tag", []string{"Creation date", "ID", "Namespace", "Properties", "State", "Type", "UUID"}},
		{"/mediation/c/components/in", []string{"Creation date", "ID", "Namespace", "Pattern", "Properties", "State", "Type", "UUID"}},
		{"/mediation/runtime/c/components/tag", []string{"Counters", "Creation date", "ID", "Namespace", "Properties", "State", "Type", "UUID"}},
		{"/mediation/runtime/c", []string{"state"}},
		{"/mediation", []string{"chains"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, keys(f.mustDo(t, "GET", tt.path, "").Body.String())); diff != "" {
			t.Errorf("GET %s keys (-want +got):\n%s", tt.path, diff)
		}
	}
	var types []map[string]any
	json.Unmarshal(f.mustDo(t, "GET", "/mediation/runtime/types", "").Body.Bytes(), &types)
	if len(types) < 11 {
		t.Fatalf("%d types, want the 11 built-ins at least", len(types))
	}
	for _, ty := range types {
		if diff := cmp.Diff([]string{"in", "kind", "name", "out", "pattern", "properties"}, slices.Sorted(maps.Keys(ty))); diff != "" {
			t.Errorf("type %v keys (-want +got):\n%s", ty["name"], diff)
		}
	}
}

// TestMessageFieldsRefused: prop. with no name is 400 and sends nothing,
// rather than a message without the property; so is a query or form field
// that is not valid UTF-8 once decoded (as a body that is not), rather than
// a property or content of U+FFFD, and a form field that is neither content
// nor a property, rather than lost. A component's parameters alike.
func TestMessageFieldsRefused(t *testing.T) {
	f := newFixture(t)
	for _, s := range pipeline {
		f.med(t, s)
	}
	for _, tc := range []struct{ query, ct, body string }{
		{"?prop.=x", "application/json", `{"t":1}`},
		{"", form, "content=hello&prop.=x"},
		{"?prop.a=%FF", "application/json", `{"t":1}`},
		{"?prop.%FF=a", "text/plain", "hello"},
		{"", form, "content=%C3&prop.a=b"},
		{"", form, "content=hello&prop.a=%FE%FF"},
		{"", form, "a=1&prop.x=2"},
		{"", form, "prop.x=2&contents=typo"},
	} {
		rec := f.doType(t, "POST", "/mediation/runtime/c/components/in/data"+tc.query, tc.ct, tc.body)
		if rec.Code != http.StatusBadRequest || errorCode(t, rec.Body.String()) != "invalid" {
			t.Errorf("POST data%s %q = %d %s, want 400 invalid", tc.query, tc.body, rec.Code, rec.Body)
		}
	}
	if d := jsonDiff(t, `{"messages":[]}`, f.mustDo(t, "GET", "/mediation/runtime/c/components/out/data", "").Body.String()); d != "" {
		t.Errorf("messages after refusals (-want +got):\n%s", d)
	}
	for _, tc := range []struct{ path, body string }{
		{"/mediation/c/mediator/enricher/e1?properties=%7Ba%3D%FF%7D", ""},
		{"/mediation/c/mediator/enricher/e2", "properties={a=%FF}"},
	} {
		rec := f.doType(t, "POST", tc.path, form, tc.body)
		if rec.Code != http.StatusBadRequest || errorCode(t, rec.Body.String()) != "invalid" {
			t.Errorf("POST %s %q = %d %s, want 400 invalid", tc.path, tc.body, rec.Code, rec.Body)
		}
	}
	if rec := f.mustDo(t, "GET", "/mediation/c/mediators", ""); strings.Contains(rec.Body.String(), `"e`) {
		t.Errorf("a refused component was made: %s", rec.Body)
	}
}

// TestMessageBodies: what a POST to a rest-in's data sends, body by body:
// text (even empty or blank) is the content as it is; without a body, the
// query's content field is the content, else it is null.
func TestMessageBodies(t *testing.T) {
	tests := []struct {
		name, query, ct, body string
		want                  string // the content as JSON
	}{
		{"empty text", "", "text/plain", "", `""`},
		{"blank text", "", "text/plain; charset=utf-8", "  \n", `"  \n"`},
		{"text that looks like JSON", "", "text/plain", "42", `"42"`},
		{"no body", "", "", "", `null`},
		{"no body, content in the query", "?content=from%20query", "", "", `"from query"`},
		{"a form's content wins over the query's", "?content=q", form, "content=body", `"body"`},
		{"a form of properties, content in the query", "?content=q", form, "prop.kind=temp", `"q"`},
		{"JSON", "", "application/json", `{"a":[1,2]}`, `{"a":[1,2]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			for _, s := range pipeline {
				f.med(t, s)
			}
			req := newRequest("POST", "/mediation/runtime/c/components/in/data"+tt.query, strings.NewReader(tt.body))
			if tt.ct != "" {
				req.Header.Set("Content-Type", tt.ct)
			}
			rec := httptest.NewRecorder()
			f.handler.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("POST = %d %s", rec.Code, rec.Body)
			}
			var got struct {
				Messages []struct{ Content json.RawMessage } `json:"messages"`
			}
			if err := json.Unmarshal(f.mustDo(t, "GET", "/mediation/runtime/c/components/out/data", "").Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if len(got.Messages) != 1 || string(got.Messages[0].Content) != tt.want {
				t.Errorf("messages = %s, want one with content %s", got.Messages, tt.want)
			}
		})
	}
}
