package mediation_test

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/pervasim/pervasim/mediation"
)

// ExampleChain_Send builds a chain rest-in -> filter -> enricher -> rest-out,
// pushes messages through it and reads what came out.
func ExampleChain_Send() {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()

	// Each step says what is wrong with it (a condition that does not
	// parse, a type or a port that does not exist): check them.
	ch := check(e.CreateChain("demo"))
	check(ch.AddAdapter("rest-in", "in", nil))
	check(ch.AddMediator("filter", "hot", map[string]any{"condition": "(temperature>=25)"}))
	check(ch.AddMediator("enricher", "tag", map[string]any{"alert": true}))
	check(ch.AddAdapter("rest-out", "out", nil))
	check(ch.Bind("in:out", "hot:in", "", nil))
	check(ch.Bind("hot:out", "tag:in", "", nil))
	check(ch.Bind("tag:out", "out:in", "", nil))
	if err := ch.Start(); err != nil {
		panic(err)
	}

	for _, temp := range []float64{20, 26, 31} {
		if err := ch.Send("in", mediation.Message{Content: temp, Properties: map[string]any{"temperature": temp}}); err != nil {
			panic(err)
		}
	}
	msgs, _ := ch.Messages("out")
	for _, m := range msgs {
		fmt.Println(m.Content, mediation.FormatProperties(m.Properties))
	}
	info, _ := ch.Component("hot")
	fmt.Printf("filter: in=%d out=%d dropped=%d\n", info.Counters.In, info.Counters.Out, info.Counters.Dropped)
	// Output:
	// 26 {"alert":true,"temperature":26}
	// 31 {"alert":true,"temperature":31}
	// filter: in=3 out=2 dropped=1
}

// ExampleRegistry_Register registers a custom mediator type and uses it.
func ExampleRegistry_Register() {
	reg := mediation.NewRegistry()
	err := reg.Register(mediation.Type{
		Name:       "upper",
		Kind:       mediation.KindMediator,
		In:         []string{"in"},
		Out:        []string{"out"},
		Properties: map[string]any{"suffix": ""},
		Doc:        "Upper-cases string content and appends suffix.",
		New: func(props map[string]any, _ mediation.Env) (any, error) {
			suffix, ok := props["suffix"].(string)
			if !ok {
				return nil, fmt.Errorf("%w: suffix must be a string", mediation.ErrInvalid)
			}
			return mediation.ProcessorFunc(func(_ string, m mediation.Message, out mediation.Emitter) error {
				if s, ok := m.Content.(string); ok {
					m.Content = strings.ToUpper(s) + suffix
				}
				out.Emit("out", m)
				return nil
			}), nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	e := mediation.NewEngine(mediation.Config{Registry: reg, Output: os.Stdout})
	defer e.Close()
	ch := check(e.CreateChain("shout"))
	check(ch.AddAdapter("rest-in", "in", nil))
	check(ch.AddMediator("upper", "up", map[string]any{"suffix": "!"}))
	check(ch.AddAdapter("console", "log", nil))
	check(ch.Bind("in:out", "up:in", "", nil))
	check(ch.Bind("up:out", "log:in", "", nil))
	if err := ch.Start(); err != nil {
		panic(err)
	}
	if err := ch.Send("in", mediation.Message{Content: "hello"}); err != nil {
		panic(err)
	}

	_, err = ch.AddMediator("upper", "bad", map[string]any{"suffix": 1})
	fmt.Println(err)
	// Output:
	// shout/log {"content":"HELLO!"}
	// invalid: suffix must be a string
}

// ExampleChain_Replace swaps an aggregator holding a partial group for a
// fresh one: the replacement completes the group.
func ExampleChain_Replace() {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch := check(e.CreateChain("agg"))
	check(ch.AddAdapter("rest-in", "in", nil))
	check(ch.AddMediator("aggregator", "old", map[string]any{"count": 3}))
	check(ch.AddAdapter("rest-out", "out", nil))
	check(ch.Bind("in:out", "old:in", "", nil))
	check(ch.Bind("old:out", "out:in", "", nil))
	if err := ch.Start(); err != nil {
		panic(err)
	}
	send := func(s string) {
		if err := ch.Send("in", mediation.Message{Content: s, Properties: map[string]any{"correlation.id": "g"}}); err != nil {
			panic(err)
		}
	}
	send("a")
	send("b")
	check(ch.Copy("old", "new"))
	if err := ch.Replace("old", "new"); err != nil {
		panic(err)
	}
	send("c")
	msgs, _ := ch.Messages("out")
	info, _ := ch.Info()
	fmt.Println(msgs[0].Content, info.Bindings)
	// Output:
	// [a b c] [{in:out new:in direct map[]} {new:out out:in direct map[]}]
}

// ExampleType_stateless registers a type whose Process keeps no state, so
// that several goroutines sending into a chain run through it at once.
// The enricher and the rest-in adapter are stateless too; rest-out, which
// keeps messages, takes them one at a time.
func ExampleType_stateless() {
	reg := mediation.NewRegistry()
	err := reg.Register(mediation.Type{
		Name:      "celsius",
		Kind:      mediation.KindMediator,
		In:        []string{"in"},
		Out:       []string{"out"},
		Stateless: true, // Process may run for many senders at once
		New: func(map[string]any, mediation.Env) (any, error) {
			return mediation.ProcessorFunc(func(_ string, m mediation.Message, out mediation.Emitter) error {
				f, ok := m.Content.(float64)
				if !ok {
					out.Drop(1)
					return nil
				}
				m.Content = (f - 32) * 5 / 9
				out.Emit("out", m)
				return nil
			}), nil
		},
	})
	if err != nil {
		panic(err)
	}
	e := mediation.NewEngine(mediation.Config{Registry: reg})
	defer e.Close()
	ch := check(e.CreateChain("temps"))
	check(ch.AddAdapter("rest-in", "in", nil))
	check(ch.AddMediator("celsius", "c", nil))
	check(ch.AddAdapter("rest-out", "out", map[string]any{"capacity": 1000}))
	check(ch.Bind("in:out", "c:in", "", nil))
	check(ch.Bind("c:out", "out:in", "", nil))
	if err := ch.Start(); err != nil {
		panic(err)
	}

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				if err := ch.Send("in", mediation.Message{Content: 212.0}); err != nil {
					panic(err)
				}
			}
		})
	}
	wg.Wait()

	info, _ := ch.Component("c")
	msgs, _ := ch.Messages("out")
	fmt.Printf("in=%d out=%d kept=%d first=%v\n", info.Counters.In, info.Counters.Out, len(msgs), msgs[0].Content)
	for _, t := range e.Registry().Types() {
		if t.Name == "celsius" || t.Name == "rest-out" {
			fmt.Println(t.Name, "stateless:", t.Stateless)
		}
	}
	// Output:
	// in=400 out=400 kept=400 first=100
	// rest-out stateless: false
	// celsius stateless: true
}

// ExampleType_readOnly registers a sink that only reads the properties of
// what it gets, during the call: a read-only type. Behind an enricher, it
// gets the one map of the enricher's entries that the messages without
// properties share, where a component of any other type would get a copy
// of its own for each message.
func ExampleType_readOnly() {
	var mu sync.Mutex
	perSite := map[string]int{}
	reg := mediation.NewRegistry()
	err := reg.Register(mediation.Type{
		Name:     "site-counter",
		Kind:     mediation.KindAdapter,
		Pattern:  mediation.PatternOutOnly,
		In:       []string{"in"},
		ReadOnly: true, // reads m.Properties during Process, keeps nothing of it
		New: func(map[string]any, mediation.Env) (any, error) {
			return mediation.ProcessorFunc(func(_ string, m mediation.Message, _ mediation.Emitter) error {
				site, _ := m.Properties["site"].(string) // a string: a value, kept freely
				mu.Lock()
				perSite[site]++
				mu.Unlock()
				return nil
			}), nil
		},
	})
	if err != nil {
		panic(err)
	}
	e := mediation.NewEngine(mediation.Config{Registry: reg})
	defer e.Close()
	ch := check(e.CreateChain("sites"))
	check(ch.AddAdapter("rest-in", "in", nil))
	check(ch.AddMediator("enricher", "tag", map[string]any{"site": "lab"}))
	check(ch.AddAdapter("site-counter", "count", nil))
	check(ch.Bind("in:out", "tag:in", "", nil))
	check(ch.Bind("tag:out", "count:in", "", nil))
	if err := ch.Start(); err != nil {
		panic(err)
	}
	for i := range 3 {
		if err := ch.Send("in", mediation.Message{Content: float64(i)}); err != nil {
			panic(err)
		}
	}
	mu.Lock()
	fmt.Println(perSite)
	mu.Unlock()
	// Output:
	// map[lab:3]
}

// check panics on an error, and otherwise returns v.
func check[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
