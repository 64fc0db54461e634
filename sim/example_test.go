package sim_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
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

// Advance runs simulated time on the caller's goroutine: a heater at full
// power warms its room for a simulated hour in no real time, the same way
// on every run.
func ExampleHome_Advance() {
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	home.CreateZone(sim.ZoneSpec{ID: "room", RightX: 300, BottomY: 250,
		Variables: map[string]float64{sim.VarTemperature: 290.15}})
	x, y := 50, 50
	home.CreateDevice(sim.DeviceSpec{ID: "heater", Type: "Heater", PositionX: &x, PositionY: &y,
		Properties: map[string]any{"heater.powerLevel": 0.1}})

	for range 3 {
		if err := home.Advance(10 * time.Minute); err != nil {
			fmt.Println(err)
			return
		}
		room, _ := home.Zone("room")
		fmt.Printf("%s  %.2f °C\n", home.Now().Format("15:04"), room.Variables[sim.VarTemperature]-273.15)
	}
	// Output:
	// 00:10  19.43 °C
	// 00:20  21.86 °C
	// 00:30  24.29 °C
}

// Observe calls its function synchronously with every change, on the
// goroutine that made it: here, during Advance. An observer may act on the
// home; the events of what it does come after it returns. This one is a
// thermostat: it switches the heater off once the room reaches 20 °C.
func ExampleHome_Observe() {
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	home.CreateZone(sim.ZoneSpec{ID: "room", RightX: 300, BottomY: 250,
		Variables: map[string]float64{sim.VarTemperature: 292.15}})
	x, y := 50, 50
	home.CreateDevice(sim.DeviceSpec{ID: "heater", Type: "Heater", PositionX: &x, PositionY: &y,
		Properties: map[string]any{"heater.powerLevel": 0.1}})

	heating := true
	stop := home.Observe(func(e sim.Event) {
		switch {
		case e.Type == sim.EventZoneVariableUpdated && e.Property == sim.VarTemperature:
			if t := e.Value.(float64); heating && t >= 293.15 {
				fmt.Printf("%s %.2f °C: switching the heater off\n", home.Now().Format("15:04:05"), t-273.15)
				heating = false
				home.UpdateDevice("heater", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": 0.0}})
			}
		case e.Type == sim.EventDevicePropertyUpdated && e.DeviceID == "heater":
			fmt.Printf("%s heater: %s %v -> %v\n", home.Now().Format("15:04:05"), e.Property, e.OldValue, e.Value)
		}
	})
	defer stop()

	if err := home.Advance(time.Hour); err != nil {
		fmt.Println(err)
		return
	}
	room, _ := home.Zone("room")
	fmt.Printf("%s %.2f °C\n", home.Now().Format("15:04:05"), room.Variables[sim.VarTemperature]-273.15)
	// Output:
	// 00:04:10 20.01 °C: switching the heater off
	// 00:04:10 heater: heater.powerLevel 0.1 -> 0
	// 01:00:00 20.01 °C
}

// A script is played by the home's script player: added from its text,
// started, and run by Advance (or live, by Run). Starting it sets the clock
// to the script's start date.
func ExampleHome_AddScript() {
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	const script = `<behavior startdate="15/01/2024-06:30:00" factor="60">
	<create-zone id="kitchen" leftX="0" topY="0" X-Length="200" Y-Length="150"/>
	<create-device id="light" type="iCasa.BinaryLight" positionX="100" positionY="75"/>
	<delay value="15"/>
	<set-device-property deviceId="light" property="power_status" value="true"/>
	<delay value="1" unit="h"/>
	<set-device-property deviceId="light" property="power_status" value="false"/>
</behavior>`
	if _, err := home.AddScript("morning.bhv", []byte(script)); err != nil {
		fmt.Println(err)
		return
	}
	stop := home.Observe(func(e sim.Event) {
		if e.Type == sim.EventDevicePropertyUpdated {
			fmt.Println(home.Now().Format("15:04"), e.DeviceID, e.Property, e.Value)
		}
	})
	defer stop()
	if _, err := home.SetScriptState("morning.bhv", sim.ScriptStarted); err != nil {
		fmt.Println(err)
		return
	}
	home.Advance(2 * time.Hour)
	info, _ := home.Script("morning.bhv")
	fmt.Printf("%s: %.0f%% done, %d errors\n", info.State, info.CompletePercent, info.Errors)
	// Output:
	// 06:45 light power_status true
	// 07:45 light power_status false
	// stopped: 100% done, 0 errors
}

// ParseScript reads a script without playing it: its start date, factor
// and actions, each at its offset from the start.
func ExampleParseScript() {
	s, err := sim.ParseScript(strings.NewReader(`<behavior startdate="15/01/2024-06:30:00" factor="60">
	<create-zone id="kitchen" leftX="0" topY="0" X-Length="200" Y-Length="150"/>
	<delay value="90" unit="s"/>
	<modify-zone-variable zoneId="kitchen" variable="Temperature" value="293.15"/>
</behavior>`), time.UTC)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.StartDate, "factor", s.Factor)
	for _, a := range s.Actions {
		fmt.Println(a.Offset, a.Command, a.Args)
	}
	// Output:
	// 2024-01-15 06:30:00 +0000 UTC factor 60
	// 0s create-zone map[X-Length:200 Y-Length:150 id:kitchen leftX:0 topY:0]
	// 1m30s modify-zone-variable map[value:293.15 variable:Temperature zoneId:kitchen]
}

// Subscribe watches a home from a goroutine of the reader's own: the events
// wait in the subscription's buffer, in order, and the channel closes when
// the subscription is closed (or the reader falls more than the buffer
// behind, which Err then reports).
func ExampleHome_Subscribe() {
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	sub := home.Subscribe(100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range sub.C {
			fmt.Println(strings.TrimSpace(fmt.Sprintln(e.Seq, e.Type, e.ZoneID+e.DeviceID, e.Property)))
		}
	}()

	home.CreateZone(sim.ZoneSpec{ID: "hall", RightX: 100, BottomY: 100})
	x, y := 10, 10
	home.CreateDevice(sim.DeviceSpec{ID: "lamp", Type: "BinaryLight", PositionX: &x, PositionY: &y})
	home.DeleteZone("hall")
	sub.Close()
	<-done
	fmt.Println("err:", sub.Err())
	// Output:
	// 1 zone-added hall
	// 2 device-added lamp
	// 3 zone-variable-added hall Illuminance
	// 4 zone-removed hall
	// 5 device-property-removed lamp Location
	// err: <nil>
}
