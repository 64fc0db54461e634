package sim_test

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pervasim/pervasim/sim"
)

// A zone and a heater placed inside it: the heater's location is derived from
// its position, and its properties are the kind's defaults plus state, fault
// and Location.
func Example() {
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	if _, err := home.CreateZone(sim.ZoneSpec{ID: "kitchen", LeftX: 410, TopY: 370, RightX: 655, BottomY: 580}); err != nil {
		fmt.Println(err)
		return
	}
	x, y := 500, 400
	heater, err := home.CreateDevice(sim.DeviceSpec{ID: "heater-1", Type: "iCasa.Heater", PositionX: &x, PositionY: &y})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(heater.Type, "in", heater.Location)
	for _, name := range slices.Sorted(maps.Keys(heater.Properties)) {
		fmt.Printf("%s = %v\n", name, heater.Properties[name])
	}
	// Output:
	// iCasa.Heater in kitchen
	// Location = kitchen
	// fault = no
	// heater.maxPowerLevel = 1000
	// heater.powerLevel = 0
	// heater.updaterThread.period = 5000
	// state = activated
}

// At factor 60, one second of wall-clock time is one simulated minute. A mock
// wall clock makes the example deterministic.
func ExampleHome_UpdateClock() {
	wall := clock.NewMock()
	home := sim.MustNew(sim.Config{
		WallClock: wall,
		StartDate: time.Date(2024, 1, 1, 8, 0, 0, 0, time.UTC),
		Location:  time.UTC,
	})
	factor := 60
	c, err := home.UpdateClock(sim.ClockUpdate{Factor: &factor})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.CurrentDateStr, "factor", c.Factor)

	wall.Add(time.Second)
	fmt.Println(home.Clock().CurrentDateStr)
	// Output:
	// 01/01/2024-08:00:00 factor 60
	// 01/01/2024-08:01:00
}

// A behaviour reads its device's properties through Props: by name, or all
// of them in name order. Here a user kind's Changed behaviour logs what a
// client changed, comparing the properties before the change with the
// device's now.
func ExampleProps() {
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	err := home.Kinds().Register(sim.Kind{
		Name: "Fan",
		Properties: []sim.PropertySpec{
			{Name: "fan.speed", Type: sim.Number, Default: 0.0, Min: 0, Max: 3},
		},
		Behavior: sim.Behavior{
			Changed: func(c *sim.DeviceContext, old sim.Props) {
				for name, was := range old.All() {
					if now, _ := c.Props().Get(name); now != was {
						fmt.Printf("%s: %v -> %v\n", name, was, now)
					}
				}
				fmt.Println("speed now", c.Props().Number("fan.speed"), "of", c.Props().Len(), "properties")
			},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := home.CreateDevice(sim.DeviceSpec{ID: "fan", Type: "Fan"}); err != nil {
		fmt.Println(err)
		return
	}
	off := sim.StateDeactivated
	if _, err := home.UpdateDevice("fan", sim.DeviceUpdate{State: &off, Properties: map[string]any{"fan.speed": 2}}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// fan.speed: 0 -> 2
	// state: activated -> deactivated
	// speed now 2 of 3 properties
}
