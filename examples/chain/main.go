// Command chain shows the mediation engine on its own, without the REST
// server: it builds a chain rest-in -> splitter -> translator -> router ->
// (aggregator -> console | rest-out), starts it, sends a few messages, hot-swaps
// the translator for one with a bigger dictionary, and prints what came out.
package main

import (
	"fmt"
	"log"
	"os"

	"github.com/pervasim/pervasim/mediation"
)

func main() {
	e := mediation.NewEngine(mediation.Config{Output: os.Stdout})
	defer e.Close()

	ch, err := e.CreateChain("words")
	if err != nil {
		log.Fatal(err)
	}
	steps := []func() error{
		func() error { _, err := ch.AddAdapter("rest-in", "in", nil); return err },
		func() error {
			_, err := ch.AddMediator("splitter", "split", map[string]any{"separator": `\s+`})
			return err
		},
		func() error {
			_, err := ch.AddMediator("translator", "fr", map[string]any{"dictionary": map[string]any{"hello": "bonjour"}})
			return err
		},
		func() error {
			_, err := ch.AddMediator("router", "route", map[string]any{
				"conditions": map[string]any{"(correlation.total>=2)": "multi"},
			})
			return err
		},
		func() error { _, err := ch.AddMediator("aggregator", "join", nil); return err },
		func() error { _, err := ch.AddAdapter("console", "print", nil); return err },
		func() error { _, err := ch.AddAdapter("rest-out", "single", nil); return err },
		func() error { _, err := ch.Bind("in:out", "split:in", "", nil); return err },
		func() error { _, err := ch.Bind("split:out", "fr:in", "", nil); return err },
		func() error { _, err := ch.Bind("fr:out", "route:in", "", nil); return err },
		func() error { _, err := ch.Bind("route:multi", "join:in", "", nil); return err },
		func() error { _, err := ch.Bind("route:default", "single:in", "", nil); return err },
		func() error { _, err := ch.Bind("join:out", "print:in", "", nil); return err },
		ch.Start,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			log.Fatal(err)
		}
	}

	send := func(s string) {
		if err := ch.Send("in", mediation.Message{Content: s}); err != nil {
			log.Fatal(err)
		}
	}
	send("hello world")
	send("hello")

	// Hot swap: a copy of the translator with a bigger dictionary takes
	// over the bindings of the first one, without stopping the chain.
	if _, err := ch.Copy("fr", "fr2"); err != nil {
		log.Fatal(err)
	}
	if _, err := ch.UpdateProperties("fr2", map[string]any{"dictionary": map[string]any{"hello": "bonjour", "world": "monde"}}); err != nil {
		log.Fatal(err)
	}
	if err := ch.Replace("fr", "fr2"); err != nil {
		log.Fatal(err)
	}
	send("hello world")

	singles, err := ch.Messages("single")
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range singles {
		fmt.Println("single word:", m.Content)
	}
	info, err := ch.Info()
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range info.Bindings {
		fmt.Printf("binding %s -> %s (%s)\n", b.From, b.To, b.Linker)
	}
}
