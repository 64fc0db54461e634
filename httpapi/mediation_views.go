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
	Kind       string              `json:"Kind"`
	In         []string            `json:"In"`
	Out        []string            `json:"Out"`
	Counters   *mediation.Counters `json:"Counters,omitempty"`
}

func newComponentView(c mediation.ComponentInfo, counters bool) componentView {
	v := componentView{
		ID: c.ID, Type: c.Type, Namespace: c.Namespace, UUID: c.UUID, State: c.State,
		Created: c.Created.Format(creationDateLayout), Properties: c.Properties,
		Pattern: string(c.Pattern), Kind: string(c.Kind), In: c.In, Out: c.Out,
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

// messageView is a message as clients send and read it.
type messageView struct {
	Content    any            `json:"content"`
	Properties map[string]any `json:"properties"`
}
