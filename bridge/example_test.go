package bridge_test

import (
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pervasim/pervasim/bridge"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

// New joins a home and an engine. Here a device-in adapter brings the
// thermometer's readings into a chain, which logs them (rest-out) and,
// when one is under 19 °C, sets the heater's power level through a
// device-out adapter.
func ExampleNew() {
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	engine := mediation.NewEngine(mediation.Config{})
	defer engine.Close()
	b, err := bridge.New(home, engine)
	if err != nil {
		panic(err)
	}
	defer b.Close()

	x, y := 50, 50
	check(home.CreateZone(sim.ZoneSpec{ID: "room", RightX: 300, BottomY: 250}))
	check(home.CreateDevice(sim.DeviceSpec{ID: "thermo", Type: "Thermometer", PositionX: &x, PositionY: &y}))
	check(home.CreateDevice(sim.DeviceSpec{ID: "heater", Type: "Heater", PositionX: &x, PositionY: &y}))

	// reading -> log
	//         -> cold (under 19 °C) -> heat (heater.powerLevel = 1)
	ch := check(engine.CreateChain("thermostat"))
	check(ch.AddAdapter(bridge.DeviceIn, "reading", map[string]any{"devices": "thermo", "property": "current_temperature"}))
	check(ch.AddAdapter("rest-out", "log", nil))
	check(ch.AddMediator("filter", "cold", map[string]any{"condition": "(!(value>=292.15))"}))
	check(ch.AddAdapter(bridge.DeviceOut, "heat", map[string]any{"device": "heater", "property": "heater.powerLevel", "value": 1.0}))
	check(ch.Bind("reading:out", "log:in", "", nil))
	check(ch.Bind("reading:out", "cold:in", "", nil))
	check(ch.Bind("cold:out", "heat:in", "", nil))
	if err := ch.Start(); err != nil {
		panic(err)
	}

	// The room cools down to 17 °C; the thermometer reads it at once.
	cold := 290.15
	check(home.UpdateZone("room", sim.ZoneUpdate{Variables: map[string]*float64{sim.VarTemperature: &cold}}))
	msgs, _ := ch.Messages("log")
	for _, m := range msgs {
		fmt.Println(m.Content)
	}

	// device-out applies its change through the home's scheduler, at the
	// current simulated time: once simulated time is driven, here by
	// Advance (a live home's Run does it by itself).
	heater := check(home.Device("heater"))
	fmt.Println("power level before Advance:", heater.Properties["heater.powerLevel"])
	if err := home.Advance(0); err != nil {
		panic(err)
	}
	heater = check(home.Device("heater"))
	fmt.Println("power level after Advance:", heater.Properties["heater.powerLevel"])
	// Output:
	// map[device:thermo property:current_temperature value:290.15]
	// power level before Advance: 0
	// power level after Advance: 1
}

// check panics on an error, and otherwise returns v.
func check[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
