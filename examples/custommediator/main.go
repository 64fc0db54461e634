// Command custommediator shows how to add a mediator type of your own from
// Go: a "moving-average" mediator with a property (window), validation, and
// held state that survives a live reconfiguration (Drainer and Restorer),
// used in a chain next to the built-in types.
package main

import (
	"fmt"
	"io"
	"log"
	"os"

	"github.com/pervasim/pervasim/mediation"
)

// movingAverage emits, for each numeric message, the average of the last
// window values. The engine runs one message at a time per component, so it
// needs no locking.
type movingAverage struct {
	window int
	last   []mediation.Held // the values in the window, kept as messages
}

// Process implements mediation.Processor.
func (a *movingAverage) Process(in string, m mediation.Message, out mediation.Emitter) error {
	if _, ok := m.Content.(float64); !ok {
		out.Drop(1)
		return fmt.Errorf("moving-average: content %v is not a number", m.Content)
	}
	a.last = append(a.last, mediation.Held{Port: in, Message: m})
	if len(a.last) > a.window {
		a.last = a.last[len(a.last)-a.window:]
	}
	sum := 0.0
	for _, h := range a.last {
		sum += h.Message.Content.(float64)
	}
	out.Emit("out", mediation.Message{
		Content:    sum / float64(len(a.last)),
		Properties: map[string]any{"window": len(a.last)},
	})
	return nil
}

// Drain implements mediation.Drainer: on Replace or UpdateProperties the
// values in the window are handed to the new implementation (see Restore)
// before anything newer.
func (a *movingAverage) Drain() []mediation.Held {
	h := a.last
	a.last = nil
	return h
}

// Restore implements mediation.Restorer: the handed-over values refill the
// window without emitting averages again.
func (a *movingAverage) Restore(held []mediation.Held, _ mediation.Emitter) error {
	a.last = append(a.last, held...)
	if len(a.last) > a.window {
		a.last = a.last[len(a.last)-a.window:]
	}
	return nil
}

// movingAverageType describes the type for the registry.
var movingAverageType = mediation.Type{
	Name:       "moving-average",
	Kind:       mediation.KindMediator,
	In:         []string{"in"},
	Out:        []string{"out"},
	Properties: map[string]any{"window": 3},
	Doc:        "Emits the average of the last window numeric contents.",
	New: func(props map[string]any, _ mediation.Env) (any, error) {
		// IntProperty reads a number however it came (a JSON number, the
		// text of a query string) as the built-in types read theirs; a bad
		// one is an error of kind mediation.ErrInvalid (400 over REST).
		w, err := mediation.IntProperty(props, "window", 3, 1, 1000)
		if err != nil {
			return nil, err
		}
		return &movingAverage{window: w}, nil
	},
}

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(w io.Writer) error {
	reg := mediation.NewRegistry() // the built-ins, plus ours:
	if err := reg.Register(movingAverageType); err != nil {
		return err
	}
	e := mediation.NewEngine(mediation.Config{Registry: reg})
	defer e.Close()

	ch, err := e.CreateChain("sensors")
	if err != nil {
		return err
	}
	steps := []func() error{
		func() error { _, err := ch.AddAdapter("rest-in", "in", nil); return err },
		func() error { _, err := ch.AddMediator("moving-average", "avg", nil); return err },
		func() error { _, err := ch.AddAdapter("rest-out", "out", nil); return err },
		func() error { _, err := ch.Bind("in:out", "avg:in", "", nil); return err },
		func() error { _, err := ch.Bind("avg:out", "out:in", "", nil); return err },
		ch.Start,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "chain sensors: in -> avg (moving-average, window 3) -> out")

	_, err = ch.AddMediator("moving-average", "bad", map[string]any{"window": 0})
	fmt.Fprintln(w, "a moving-average with window 0 is refused:", err)

	for _, v := range []float64{10, 20, 30, 40} {
		fmt.Fprintf(w, "send %g\n", v)
		if err := ch.Send("in", mediation.Message{Content: v}); err != nil {
			return err
		}
	}
	// Widen the window live: the values held so far carry over.
	fmt.Fprintln(w, "widen the window to 4, live: the last 3 values carry over")
	if _, err := ch.UpdateProperties("avg", map[string]any{"window": 4}); err != nil {
		return err
	}
	fmt.Fprintln(w, "send 50")
	if err := ch.Send("in", mediation.Message{Content: 50.0}); err != nil {
		return err
	}

	msgs, err := ch.Messages("out")
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "what out received, oldest first:")
	for _, m := range msgs {
		fmt.Fprintf(w, "  average %.1f over %v values\n", m.Content, m.Properties["window"])
	}
	return nil
}
