// Command customdevice registers a device kind of its own in a simulated
// home: a smart plug that meters the power of the device it feeds, and the
// energy used so far. It feeds a heater whose power a schedule changes over
// a simulated day, and prints the plug's readings every three hours.
//
// A kind is a registration: its properties (with types, ranges, defaults,
// and which are derived by the simulation) and its behaviour (here a Tick
// every simulated minute). Once registered in a home's kind registry it is
// created, updated, listed, scripted and wired into chains like the
// built-in kinds, and it reaches no other home.
package main

import (
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pervasim/pervasim/sim"
)

// smartPlug is the kind: acme.SmartPlug.
var smartPlug = sim.Kind{
	Name:      "SmartPlug",
	Namespace: "acme",
	Doc:       "A plug that meters the electric power of the device it feeds.",
	Properties: []sim.PropertySpec{
		{Name: "smartPlug.feeds", Type: sim.String, Default: "", Doc: "id of the device plugged in"},
		{Name: "smartPlug.power", Type: sim.Number, Default: 0.0, Derived: true, Unit: "W", Doc: "power drawn now"},
		{Name: "smartPlug.energy", Type: sim.Number, Default: 0.0, Derived: true, Unit: "Wh", Doc: "energy drawn so far"},
	},
	Behavior: sim.Behavior{
		Every: time.Minute,
		Tick: func(c *sim.DeviceContext) {
			p := c.Props()
			w := c.Consumption(p.Text("smartPlug.feeds"))
			c.Set("smartPlug.power", w)
			c.Set("smartPlug.energy", p.Number("smartPlug.energy")+w/60) // one minute at w watts
		},
	},
}

func main() { run(os.Stdout) }

// run plays the example, writing what it prints to w.
func run(w io.Writer) {
	start := time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC)
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), StartDate: start, Location: time.UTC})
	if err := home.Kinds().Register(smartPlug); err != nil {
		log.Fatal(err)
	}
	check(home.CreateDevice(sim.DeviceSpec{ID: "heater", Type: "iCasa.Heater"}))
	check(home.CreateDevice(sim.DeviceSpec{ID: "plug", Type: "acme.SmartPlug",
		Properties: map[string]any{"smartPlug.feeds": "heater"}}))

	// The heater's schedule: half power at night, full in the morning and
	// the evening, off during the day.
	level := map[int]float64{0: 0.5, 6: 1, 9: 0, 18: 1, 22: 0.5}
	fmt.Fprintln(w, "time   heater  plug W   plug Wh")
	for hour := 0; hour < 24; hour++ {
		if l, ok := level[hour]; ok {
			check(home.UpdateDevice("heater", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": l}}))
		}
		if err := home.Advance(time.Hour); err != nil {
			log.Fatal(err)
		}
		if (hour+1)%3 == 0 {
			h, _ := home.Device("heater")
			p, _ := home.Device("plug")
			fmt.Fprintf(w, "%02d:00  %4.0f %%  %6.0f  %8.0f\n", hour+1, h.Properties["heater.powerLevel"].(float64)*100,
				p.Properties["smartPlug.power"], p.Properties["smartPlug.energy"])
		}
	}
}

func check[T any](_ T, err error) {
	if err != nil {
		log.Fatal(err)
	}
}
