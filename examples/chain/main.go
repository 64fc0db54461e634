// Command chain shows the mediation engine on its own, without the REST
// server: it builds a chain that splits sentences into words, translates
// them, and routes single words to a rest-out adapter and sentences, put
// back together by an aggregator, to the console; then it hot-swaps the
// translator for one with a bigger dictionary while the chain runs.
//
//	in ─► split ─► fr ─► route ─┬─ multi ──► join ─► print   (console)
//	                            └─ default ─► single         (rest-out)
package main

import (
	"fmt"
	"io"
	"log"
	"os"

	"github.com/pervasim/pervasim/mediation"
)

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(w io.Writer) error {
	e := mediation.NewEngine(mediation.Config{Output: w}) // the console adapter writes here
	defer e.Close()

	ch, err := e.CreateChain("words")
	if err != nil {
		return err
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
			return err
		}
	}

	send := func(s string) error {
		fmt.Fprintf(w, "send %q\n", s)
		return ch.Send("in", mediation.Message{Content: s})
	}
	fmt.Fprintln(w, "The console adapter prints sentences as \"<chain>/<adapter> <message>\";")
	fmt.Fprintln(w, "correlation.id names the sentence a word came from.")
	if err := send("hello world"); err != nil {
		return err
	}
	if err := send("hello"); err != nil {
		return err
	}

	// Hot swap: a copy of the translator with a bigger dictionary takes
	// over the bindings of the first one, without stopping the chain.
	fmt.Fprintln(w, "swap the translator fr for fr2, which also knows world=monde")
	if _, err := ch.Copy("fr", "fr2"); err != nil {
		return err
	}
	if _, err := ch.UpdateProperties("fr2", map[string]any{"dictionary": map[string]any{"hello": "bonjour", "world": "monde"}}); err != nil {
		return err
	}
	if err := ch.Replace("fr", "fr2"); err != nil {
		return err
	}
	if err := send("hello world"); err != nil {
		return err
	}

	singles, err := ch.Messages("single")
	if err != nil {
		return err
	}
	for _, m := range singles {
		fmt.Fprintln(w, "kept by the rest-out adapter single:", m.Content)
	}
	info, err := ch.Info()
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "the chain's bindings now:")
	for _, b := range info.Bindings {
		fmt.Fprintf(w, "  %s -> %s (%s)\n", b.From, b.To, b.Linker)
	}
	return nil
}
