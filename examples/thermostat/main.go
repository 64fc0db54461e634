// Command thermostat shows a simulated home and a mediation chain working
// together: a thermostat chain (thermometer → router → heater) keeps a room
// between 19 and 21 °C for a whole simulated winter day, against the heat
// the room loses to a cold outdoors (the realistic physics model), and the
// program prints the temperature curve. The day runs in a fraction of a
// second, the same way every time, because simulated time only moves when
// the program calls Advance.
package main

import (
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pervasim/pervasim/bridge"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

func main() { run(os.Stdout) }

// run plays the example, writing what it prints to w.
func run(w io.Writer) {
	// The home: a 15 m² room (300 × 250 plan units) that loses heat to a
	// winter outdoors, -3 °C before dawn and 5 °C at 15:00, a thermometer
	// and a 1.5 kW heater, switched off.
	start := time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC)
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), StartDate: start, Location: time.UTC,
		Physics:     sim.PhysicsRealistic,
		Environment: &sim.EnvironmentUpdate{OutdoorMin: new(270.15), OutdoorMax: new(278.15)}})
	at := func(x int) *int { return &x }
	check(home.CreateZone(sim.ZoneSpec{ID: "room", RightX: 300, BottomY: 250}))
	check(home.CreateDevice(sim.DeviceSpec{ID: "thermo", Type: "Thermometer", PositionX: at(10), PositionY: at(10)}))
	check(home.CreateDevice(sim.DeviceSpec{ID: "heater", Type: "Heater", PositionX: at(50), PositionY: at(50),
		Properties: map[string]any{"heater.maxPowerLevel": 1500.0}}))

	// The chain: readings in, a router on the band, heater commands out.
	engine := mediation.NewEngine(mediation.Config{})
	defer engine.Close()
	b, err := bridge.New(home, engine)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	ch, err := engine.CreateChain("thermostat")
	if err != nil {
		log.Fatal(err)
	}
	// "current": the chain also acts on the reading as it is when it starts.
	check(ch.AddAdapter("device-in", "reading", map[string]any{"devices": "thermo", "property": "current_temperature", "current": true}))
	check(ch.AddMediator("router", "band", map[string]any{
		"conditions": map[string]any{"(value<=292.15)": "cold", "(value>=294.15)": "warm"}}))
	check(ch.AddAdapter("device-out", "on", map[string]any{"device": "heater", "property": "heater.powerLevel", "value": 1.0}))
	check(ch.AddAdapter("device-out", "off", map[string]any{"device": "heater", "property": "heater.powerLevel", "value": 0.0}))
	check(ch.Bind("reading:out", "band:in", "", nil))
	check(ch.Bind("band:cold", "on:in", "", nil))
	check(ch.Bind("band:warm", "off:in", "", nil))
	if err := ch.Start(); err != nil {
		log.Fatal(err)
	}

	// A simulated day, hour by hour.
	fmt.Fprintln(w, "time   °C     outdoors  18        19        20        21        22")
	for hour := 0; hour <= 24; hour++ {
		if hour > 0 {
			if err := home.Advance(time.Hour); err != nil {
				log.Fatal(err)
			}
		}
		z, _ := home.Zone("room")
		c := z.Variables["Temperature"] - 273.15
		out := home.Environment().OutdoorTemperature - 273.15
		bar := int((c - 18) * 10)
		fmt.Fprintf(w, "%02d:00  %5.2f  %5.1f     %s*\n", hour, c, out, strings.Repeat(" ", max(bar, 0)))
	}
	info, _ := ch.Component("band")
	fmt.Fprintf(w, "the router handled %d readings\n", info.Counters.In)
}

func check[T any](_ T, err error) {
	if err != nil {
		log.Fatal(err)
	}
}
