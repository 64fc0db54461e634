package main

import (
	"io"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pervasim/pervasim/bridge"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

// TestDemoDay plays -demo's winter day in simulated time, minute by minute,
// and checks what the README promises of it: the thermostat holds the
// living room in its band by cycling the heater, the rooms left unheated
// drift toward the outdoors, daylight rises and falls.
func TestDemoDay(t *testing.T) {
	home, err := sim.New(sim.Config{WallClock: clock.NewMock(), Location: time.UTC, Physics: sim.PhysicsRealistic})
	if err != nil {
		t.Fatal(err)
	}
	engine := mediation.NewEngine(mediation.Config{Output: io.Discard})
	defer engine.Close()
	devices, err := bridge.New(home, engine)
	if err != nil {
		t.Fatal(err)
	}
	defer devices.Close()
	if err := setupDemo(home, engine); err != nil {
		t.Fatal(err)
	}

	temp := func(zone string) float64 {
		z, err := home.Zone(zone)
		if err != nil {
			t.Fatal(err)
		}
		return z.Variables[sim.VarTemperature]
	}
	heaterOn := func() bool {
		d, err := home.Device("livingroom-heater")
		if err != nil {
			t.Fatal(err)
		}
		return d.Properties[sim.PropHeaterPowerLevel].(float64) > 0
	}
	start := home.Now()
	var (
		switches           int
		was                = heaterOn()
		low, high          = 1000.0, 0.0
		bedroomAtNoon      float64
		daylight           = map[int]float64{}
		outdoorMin, outMax = 1000.0, 0.0
	)
	for minute := 1; minute <= 24*60; minute++ {
		if err := home.Advance(time.Minute); err != nil {
			t.Fatal(err)
		}
		if on := heaterOn(); on != was {
			switches++
			was = on
		}
		if minute >= 60 { // an hour to reach the band from the morning's cold
			low, high = min(low, temp("livingroom")), max(high, temp("livingroom"))
		}
		env := home.Environment()
		outdoorMin, outMax = min(outdoorMin, env.OutdoorTemperature), max(outMax, env.OutdoorTemperature)
		if minute%60 == 0 {
			daylight[home.Now().Hour()] = env.OutdoorIlluminance // at hh:30
		}
		if home.Now().Sub(start) == 5*time.Hour+30*time.Minute { // 12:00
			bedroomAtNoon = temp("bedroom")
		}
	}

	t.Logf("living %.2f–%.2f K, %d switches, bedroom %.2f→%.2f, outdoor %.2f–%.2f, daylight %v", low, high, switches, bedroomAtNoon, temp("bedroom"), outdoorMin, outMax, daylight)
	// The band is 19–21 °C; the heater overshoots by what a minute adds.
	if low < 292.15-0.5 || high > 294.15+0.5 {
		t.Errorf("living room from 07:30 on: %.2f to %.2f K, want within 292.15–294.15 K (±0.5)", low, high)
	}
	if switches < 4 {
		t.Errorf("the living-room heater switched %d times in a day, want it cycling", switches)
	}
	// The script switches the bedroom's heater off in the morning: it cools toward the
	// outdoors, never below it.
	if end := temp("bedroom"); end >= bedroomAtNoon || end < outdoorMin {
		t.Errorf("bedroom: %.2f K at noon, %.2f K the next morning; want it cooling toward the outdoors (%.2f–%.2f K)",
			bedroomAtNoon, end, outdoorMin, outMax)
	}
	for _, h := range []int{2, 5, 20, 23} {
		if daylight[h] != 0 {
			t.Errorf("daylight at %02d:00 = %.0f lx, want 0 (night in January)", h, daylight[h])
		}
	}
	if !(daylight[9] < daylight[12] && daylight[12] > daylight[15] && daylight[12] > 10000) {
		t.Errorf("daylight at 09, 12, 15 h = %.0f, %.0f, %.0f lx; want it rising to a midday peak above 10,000 lx and falling", daylight[9], daylight[12], daylight[15])
	}
}
