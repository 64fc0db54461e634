package dscilia_test

import (
	"fmt"
	"os"

	"github.com/pervasim/pervasim/dscilia"
	"github.com/pervasim/pervasim/mediation"
)

// A DSCilia document is parsed, then loaded into an engine, which makes
// and starts its chains.
func ExampleLoad() {
	doc, err := dscilia.Parse([]byte(`<cilia>
	<chain id="readings">
		<adapters>
			<adapter-instance id="in" type="rest-in"/>
			<adapter-instance id="out" type="rest-out"/>
		</adapters>
		<mediators>
			<mediator-instance id="hot" type="filter">
				<property name="condition" value="(temperature&gt;=25)"/>
			</mediator-instance>
			<mediator-instance id="tag" type="enricher">
				<property name="site" value="lab"/>
				<property name="alert" type="Boolean" value="true"/>
			</mediator-instance>
		</mediators>
		<bindings>
			<binding from="in:out" to="hot:in"/>
			<binding from="hot:out" to="tag:in"/>
			<binding from="tag:out" to="out:in"/>
		</bindings>
	</chain>
</cilia>`))
	if err != nil {
		fmt.Println(err)
		return
	}

	engine := mediation.NewEngine(mediation.Config{})
	defer engine.Close()
	ids, err := dscilia.Load(engine, doc, dscilia.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("loaded", ids)

	ch, _ := engine.Chain("readings")
	for _, t := range []float64{21, 27} {
		ch.Send("in", mediation.Message{Content: t, Properties: map[string]any{"temperature": t}})
	}
	msgs, _ := ch.Messages("out")
	for _, m := range msgs {
		fmt.Println(m.Content, mediation.FormatProperties(m.Properties))
	}
	// Output:
	// loaded [readings]
	// 27 {"alert":true,"site":"lab","temperature":27}
}

// A chain built in Go is exported and written as DSCilia, which Parse and
// Load read back elsewhere.
func ExampleExport() {
	engine := mediation.NewEngine(mediation.Config{})
	defer engine.Close()
	ch, _ := engine.CreateChain("demo")
	ch.AddAdapter("rest-in", "in", nil)
	ch.AddMediator("enricher", "tag", map[string]any{"site": "lab", "floor": 2})
	ch.AddAdapter("rest-out", "out", nil)
	ch.Bind("in:out", "tag:in", "", nil)
	ch.Bind("tag:out", "out:in", "queue", nil)

	c, err := dscilia.Export(ch)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := dscilia.Write(os.Stdout, &dscilia.Document{Chains: []dscilia.Chain{c}}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// <?xml version="1.0" encoding="UTF-8"?>
	// <cilia>
	// 	<chain id="demo">
	// 		<mediators>
	// 			<mediator-instance id="tag" type="enricher">
	// 				<property name="floor" type="json" value="2"/>
	// 				<property name="site" value="lab"/>
	// 			</mediator-instance>
	// 		</mediators>
	// 		<adapters>
	// 			<adapter-instance id="in" type="rest-in"/>
	// 			<adapter-instance id="out" type="rest-out">
	// 				<property name="capacity" type="json" value="100"/>
	// 			</adapter-instance>
	// 		</adapters>
	// 		<bindings>
	// 			<binding from="in:out" to="tag:in"/>
	// 			<binding from="tag:out" to="out:in" linker="queue"/>
	// 		</bindings>
	// 	</chain>
	// </cilia>
}
