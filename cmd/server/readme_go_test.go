package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

// The README's Go code, each block below as the README shows it (its
// package clause and imports aside), so that it compiles and runs here;
// TestReadmeGoBlocks checks that every ```go block of the README is in
// this file.

func TestHeaterIsInTheKitchen(t *testing.T) {
	wall := clock.NewMock() // simulated time moves only when the test says so
	home := sim.MustNew(sim.Config{WallClock: wall})

	if _, err := home.CreateZone(sim.ZoneSpec{ID: "kitchen", LeftX: 410, TopY: 370, RightX: 655, BottomY: 580}); err != nil {
		t.Fatal(err)
	}
	x, y := 500, 400
	h, err := home.CreateDevice(sim.DeviceSpec{ID: "heater-1", Type: "Heater", PositionX: &x, PositionY: &y})
	if err != nil {
		t.Fatal(err)
	}
	if h.Location != "kitchen" {
		t.Fatalf("heater is in %q, want kitchen", h.Location)
	}

	f := 60
	home.UpdateClock(sim.ClockUpdate{Factor: &f})
	before := home.Now()
	wall.Add(time.Second) // one real second...
	if got := home.Now().Sub(before); got != time.Minute {
		t.Fatalf("simulated time advanced %v, want 1m0s", got) // ...is one simulated minute
	}
}

// readmeKitchen is the home of TestHeaterIsInTheKitchen.
func readmeKitchen() *sim.Home {
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock()})
	home.CreateZone(sim.ZoneSpec{ID: "kitchen", LeftX: 410, TopY: 370, RightX: 655, BottomY: 580})
	x, y := 500, 400
	home.CreateDevice(sim.DeviceSpec{ID: "heater-1", Type: "Heater", PositionX: &x, PositionY: &y})
	return home
}

func Example_readmeAdvance() {
	home := readmeKitchen()

	h1 := 1.0
	home.UpdateDevice("heater-1", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": h1}})
	home.Advance(10 * time.Minute)
	k, _ := home.Zone("kitchen")
	fmt.Println(k.Variables["Temperature"]) // warmer than the 293.15 it started at

	// Output:
	// 303.16
}

func Example_readmeKind() {
	home := readmeKitchen()
	home.UpdateDevice("heater-1", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": 0.5}})

	home.Kinds().Register(sim.Kind{
		Name: "SmartPlug", Namespace: "acme",
		Properties: []sim.PropertySpec{
			{Name: "smartPlug.feeds", Type: sim.String, Default: ""},
			{Name: "smartPlug.power", Type: sim.Number, Default: 0.0, Derived: true, Unit: "W"},
		},
		Behavior: sim.Behavior{
			Every: time.Minute,
			Tick: func(c *sim.DeviceContext) {
				c.Set("smartPlug.power", c.Consumption(c.Props().Text("smartPlug.feeds")))
			},
		},
	})
	home.CreateDevice(sim.DeviceSpec{ID: "plug", Type: "acme.SmartPlug",
		Properties: map[string]any{"smartPlug.feeds": "heater"}})

	home.UpdateDevice("plug", sim.DeviceUpdate{Properties: map[string]any{"smartPlug.feeds": "heater-1"}})
	home.Advance(time.Minute)
	p, _ := home.Device("plug")
	fmt.Println(p.Properties["smartPlug.power"], "W")

	// Output:
	// 500 W
}

func Example_readmeChain() {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch, _ := e.CreateChain("demo")
	ch.AddAdapter("rest-in", "in", nil)
	ch.AddMediator("enricher", "tag", map[string]any{"site": "lab"})
	ch.AddAdapter("rest-out", "out", nil)
	ch.Bind("in:out", "tag:in", "", nil)
	ch.Bind("tag:out", "out:in", "", nil)
	ch.Start()
	ch.Send("in", mediation.Message{Content: 21.5})
	msgs, _ := ch.Messages("out") // [{21.5 map[site:lab]}]

	fmt.Println(msgs)
	// Output:
	// [{21.5 map[site:lab]}]
}

// trimLines drops each line's indentation and the blank lines.
func trimLines(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestReadmeGoBlocks checks that each ```go block of the README, without
// its package clause and imports, is in this file, where it compiles and
// runs.
func TestReadmeGoBlocks(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile("readme_go_test.go")
	if err != nil {
		t.Fatal(err)
	}
	here := trimLines(string(self))
	blocks := strings.Split(string(readme), "```go\n")[1:]
	if len(blocks) == 0 {
		t.Fatal("the README has no Go block")
	}
	for _, b := range blocks {
		b = b[:strings.Index(b, "```")]
		if strings.HasPrefix(b, "package ") {
			if i := strings.Index(b, "\n)\n"); i >= 0 && strings.Contains(b[:i], "import (") {
				b = b[i+3:]
			}
		}
		if !strings.Contains(here, trimLines(b)) {
			t.Errorf("this file does not hold the README's Go block:\n%s", b)
		}
	}
}
