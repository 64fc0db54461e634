package httpapi

import (
	"github.com/pervasim/pervasim/mediation"
)

// creationDateLayout formats a component's creation date.
const creationDateLayout = "2006-01-02 15:04:05.000"

// chainView is the contract's shape of GET /<chain>.
type chainView struct {
	ID        string              `json:"ID"`
	State     string              `json:"State"`
	Mediators []string            `json:"Mediators"`
	Adapters  map[string][]string `json:"Adapters"`
	Bindings  []bindingView       `json:"Bindings"`
}

// bindingView is one binding: from, to and linker.
type bindingView struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Linker string `json:"linker"`
}

func newChainView(ci mediation.ChainInfo) chainView {
	v := chainView{
		ID: ci.ID, State: ci.State, Mediators: ci.Mediators,
		Adapters: map[string][]string{
			string(mediation.PatternInOnly):  ci.Adapters.InOnly,
			string(mediation.PatternOutOnly): ci.Adapters.OutOnly,
			string(mediation.PatternInOut):   ci.Adapters.InOut,
		},
		Bindings: make([]bindingView, len(ci.Bindings)),
	}
	for i, b := range ci.Bindings {
		v.Bindings[i] = bindingView{From: b.From, To: b.To, Linker: b.Linker}
	}
	return v
}

// componentView is the contract's shape of a component. Counters appear
// only on the runtime route.
type componentView struct {
	ID         string              `json:"ID"`
	Type       string              `json:"Type"`
	Namespace  string              `json:"Namespace"`
	UUID       string              `json:"UUID"`
	State      string              `json:"State"`
	Created    string              `json:"Creation date"`
	Properties map[string]any      `json:"Properties"`
	Pattern    string              `json:"Pattern,omitempty"`
	Counters   *mediation.Counters `json:"Counters,omitempty"`
}

func newComponentView(c mediation.ComponentInfo, counters bool) componentView {
	v := componentView{
		ID: c.ID, Type: c.Type, Namespace: c.Namespace, UUID: c.UUID, State: c.State,
		Created: c.Created.Format(creationDateLayout), Properties: c.Properties,
		Pattern: string(c.Pattern),
	}
	if v.Properties == nil {
		v.Properties = map[string]any{}
	}
	if counters {
		cs := c.Counters
		v.Counters = &cs
	}
	return v
}

// typeView is an entry of GET /runtime/types. pattern is null for
// mediators.
type typeView struct {
	Name       string         `json:"name"`
	Kind       string         `json:"kind"`
	Pattern    *string        `json:"pattern"`
	In         []string       `json:"in"`
	Out        []string       `json:"out"`
	Properties map[string]any `json:"properties"`
}

func newTypeViews(types []mediation.TypeInfo) []typeView {
	out := make([]typeView, len(types))
	for i, t := range types {
		out[i] = typeView{Name: t.Name, Kind: string(t.Kind), In: t.In, Out: t.Out, Properties: t.Properties}
		if t.Pattern != "" {
			p := string(t.Pattern)
			out[i].Pattern = &p
		}
		if out[i].In == nil {
			out[i].In = []string{}
		}
		if out[i].Out == nil {
			out[i].Out = []string{}
		}
		if out[i].Properties == nil {
			out[i].Properties = map[string]any{}
		}
	}
	return out
}

// messageView is a message as clients send and read it.
type messageView struct {
	Content    any            `json:"content"`
	Properties map[string]any `json:"properties"`
}
