package sim_test

import (
	"math"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

// A 100×100-unit zone is 1.4 m × 1.4 m = 1.96 m², 1.4 m high: 2.744 m³.
const (
	area100   = 1.4 * 1.4
	volume100 = area100 * 1.4
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9 }

func temperature(tb testing.TB, h *sim.Home, zone string) float64 {
	tb.Helper()
	t, ok := mustGetZone(tb, h, zone).Variables[sim.VarTemperature]
	if !ok {
		tb.Fatalf("zone %s has no Temperature", zone)
	}
	return t
}

func mustAdvance(tb testing.TB, h *sim.Home, d time.Duration) {
	tb.Helper()
	if err := h.Advance(d); err != nil {
		tb.Fatal(err)
	}
}

// placed returns a spec for a device of kind typ at (x, y) with props.
func placed(id, typ string, x, y int, props map[string]any) sim.DeviceSpec {
	return sim.DeviceSpec{ID: id, Type: typ, PositionX: ptr(x), PositionY: ptr(y), Properties: props}
}

func TestThermalPhysics(t *testing.T) {
	step := func(p, dtSeconds, volume float64) float64 { return p * dtSeconds / (1200 * volume) }
	heater := func(level float64) sim.DeviceSpec {
		return placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": level})
	}
	cooler := func(level float64) sim.DeviceSpec {
		return placed("c", "Cooler", 60, 60, map[string]any{"cooler.powerLevel": level})
	}
	tests := []struct {
		name    string
		vars    map[string]float64
		devices []sim.DeviceSpec
		setup   func(t *testing.T, h *sim.Home)
		advance time.Duration
		want    float64
	}{
		{name: "one period of a heater at half power",
			devices: []sim.DeviceSpec{placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 0.5})},
			advance: 5 * time.Second, want: 293.15 + step(500, 5, volume100)},
		{name: "no update before the first period ends",
			devices: []sim.DeviceSpec{placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 0.5}), placed("t", "Thermometer", 1, 1, nil)},
			advance: 4999 * time.Millisecond, want: 293.15},
		{name: "three periods",
			devices: []sim.DeviceSpec{placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 0.5})},
			advance: 17 * time.Second, want: 293.15 + 3*step(500, 5, volume100)},
		{name: "a Volume variable wins over the geometry",
			vars:    map[string]float64{"Volume": 10, "Temperature": 290},
			devices: []sim.DeviceSpec{placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0})},
			advance: 10 * time.Second, want: 290 + 2*step(1000, 5, 10)},
		{name: "a cooler removes heat",
			devices: []sim.DeviceSpec{placed("c", "Cooler", 50, 50, map[string]any{"cooler.powerLevel": 0.25, "cooler.maxPowerLevel": 400.0})},
			advance: 5 * time.Second, want: 293.15 - step(100, 5, volume100)},
		{name: "heater and cooler: the net power",
			vars: map[string]float64{"Volume": 10},
			devices: []sim.DeviceSpec{
				placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0}),
				placed("c", "Cooler", 60, 60, map[string]any{"cooler.powerLevel": 0.5}),
			},
			advance: 5 * time.Second, want: 293.15 + step(1000, 5, 10) - step(500, 5, 10)},
		{name: "each on its own period",
			vars: map[string]float64{"Volume": 10},
			devices: []sim.DeviceSpec{
				placed("h1", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0, "heater.updaterThread.period": 1000.0}),
				placed("h2", "Heater", 60, 60, map[string]any{"heater.powerLevel": 1.0, "heater.updaterThread.period": 3000.0}),
			},
			advance: 6 * time.Second, want: 293.15 + 6*step(1000, 1, 10) + 2*step(1000, 3, 10)},
		{name: "clamped at the maximum",
			vars:    map[string]float64{"Volume": 0.01},
			devices: []sim.DeviceSpec{placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0})},
			advance: time.Minute, want: 303.16},
		{name: "clamped at the minimum",
			vars:    map[string]float64{"Volume": 0.01},
			devices: []sim.DeviceSpec{placed("c", "Cooler", 50, 50, map[string]any{"cooler.powerLevel": 1.0})},
			advance: time.Minute, want: 283.16},
		{name: "at the maximum, a heater and a cooler of equal power: no change",
			vars:    map[string]float64{"Temperature": 303.16},
			devices: []sim.DeviceSpec{heater(0.5), cooler(0.5)},
			advance: time.Minute, want: 303.16},
		{name: "at the maximum, the cooler first: no change",
			vars:    map[string]float64{"Temperature": 303.16},
			devices: []sim.DeviceSpec{cooler(0.5), heater(0.5)},
			advance: time.Minute, want: 303.16},
		{name: "at the maximum, a net gain: stays there",
			vars:    map[string]float64{"Temperature": 303.16},
			devices: []sim.DeviceSpec{heater(1.0), cooler(0.5)},
			advance: time.Minute, want: 303.16},
		{name: "at the minimum, a net loss: stays there",
			vars:    map[string]float64{"Temperature": 283.16},
			devices: []sim.DeviceSpec{cooler(1.0), heater(0.5)},
			advance: time.Minute, want: 283.16},
		{name: "near the maximum, the clamp applies to the net power",
			vars:    map[string]float64{"Volume": 10, "Temperature": 303},
			devices: []sim.DeviceSpec{heater(1.0), cooler(0.9)},
			advance: 5 * time.Second, want: 303 + step(1000, 5, 10) - step(900, 5, 10)},
		{name: "made at different times, a heater and a cooler of equal power at the maximum: no change",
			vars:    map[string]float64{"Temperature": 303.16},
			devices: []sim.DeviceSpec{heater(0.5)},
			setup: func(t *testing.T, h *sim.Home) {
				mustAdvance(t, h, 1300*time.Millisecond)
				mustDevice(t, h, cooler(0.5))
			},
			advance: time.Minute, want: 303.16},
		{name: "made at different times, a heater and a cooler of equal power: they cancel once both run",
			vars:    map[string]float64{"Volume": 10},
			devices: []sim.DeviceSpec{cooler(0.5)},
			setup: func(t *testing.T, h *sim.Home) {
				mustAdvance(t, h, 3700*time.Millisecond)
				mustDevice(t, h, heater(0.5))
			},
			advance: 5*time.Second + 1300*time.Millisecond, want: 293.15 - step(500, 3.7, 10)}, // at 5 s the cooler's 5 s and the heater's 1.3 s, at 10 s 5 s each
		{name: "a heater made between two beats counts from when it was made",
			vars:    map[string]float64{"Volume": 10},
			devices: []sim.DeviceSpec{placed("t", "Thermometer", 10, 10, nil)},
			setup: func(t *testing.T, h *sim.Home) {
				mustAdvance(t, h, 2*time.Second)
				mustDevice(t, h, heater(1.0))
			},
			advance: 3 * time.Second, want: 293.15 + step(1000, 3, 10)},
		{name: "a period change: the next update covers the time since the previous one",
			vars:    map[string]float64{"Volume": 10},
			devices: []sim.DeviceSpec{placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0, "heater.updaterThread.period": 1000.0})},
			setup: func(t *testing.T, h *sim.Home) {
				mustAdvance(t, h, 4500*time.Millisecond) // updates at 1, 2, 3 and 4 s
				mustUpdateDevice(t, h, "h", sim.DeviceUpdate{Properties: map[string]any{"heater.updaterThread.period": 5000.0}})
			},
			advance: 500 * time.Millisecond, want: 293.15 + step(1000, 5, 10)}, // the beat at 5 s covers 4 to 5 s
		{name: "a deactivated heater has no effect",
			devices: []sim.DeviceSpec{placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0})},
			setup: func(t *testing.T, h *sim.Home) {
				mustDevice(t, h, placed("t", "Thermometer", 10, 10, nil))
				mustUpdateDevice(t, h, "h", sim.DeviceUpdate{State: ptr("deactivated")})
			},
			advance: time.Minute, want: 293.15},
		{name: "a zone of no volume: no effect",
			vars:    map[string]float64{"Volume": 0},
			devices: []sim.DeviceSpec{placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0}), placed("t", "Thermometer", 10, 10, nil)},
			advance: time.Minute, want: 293.15},
		{name: "a zone of negative volume: no effect",
			vars:    map[string]float64{"Volume": -10},
			devices: []sim.DeviceSpec{placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0}), placed("t", "Thermometer", 10, 10, nil)},
			advance: time.Minute, want: 293.15},
		{name: "a volume given back between updates counts from the next update",
			vars:    map[string]float64{"Volume": 0},
			devices: []sim.DeviceSpec{placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0})},
			setup: func(t *testing.T, h *sim.Home) {
				mustAdvance(t, h, 7*time.Second) // the update at 5 s has no effect
				if _, err := h.UpdateZone("room", sim.ZoneUpdate{Variables: map[string]*float64{"Volume": ptr(10.0)}}); err != nil {
					t.Fatal(err)
				}
			},
			advance: 3 * time.Second, want: 293.15 + step(1000, 5, 10)},
		{name: "a heater outside every zone has no effect",
			devices: []sim.DeviceSpec{placed("h", "Heater", 500, 500, map[string]any{"heater.powerLevel": 1.0})},
			setup:   func(t *testing.T, h *sim.Home) { mustDevice(t, h, placed("t", "Thermometer", 10, 10, nil)) },
			advance: time.Minute, want: 293.15},
		{name: "a period change takes effect from the previous update",
			vars:    map[string]float64{"Volume": 10},
			devices: []sim.DeviceSpec{placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0})},
			setup: func(t *testing.T, h *sim.Home) {
				mustAdvance(t, h, 5*time.Second) // one update at 5 s
				mustUpdateDevice(t, h, "h", sim.DeviceUpdate{Properties: map[string]any{"heater.updaterThread.period": 1000.0}})
			},
			advance: 3 * time.Second, want: 293.15 + step(1000, 5, 10) + 3*step(1000, 1, 10)},
		{name: "power changed between updates counts from the next update",
			vars:    map[string]float64{"Volume": 10},
			devices: []sim.DeviceSpec{placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0})},
			setup: func(t *testing.T, h *sim.Home) {
				mustAdvance(t, h, 7*time.Second)
				mustUpdateDevice(t, h, "h", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": 0.5}})
			},
			advance: 3 * time.Second, want: 293.15 + step(1000, 5, 10) + step(500, 5, 10)},
	}
	for _, tt := range tests {
		for _, watched := range []bool{false, true} { // an observer makes every update an event
			name := tt.name
			if watched {
				name += "/watched"
			}
			t.Run(name, func(t *testing.T) {
				h, _ := newHome(t)
				if watched {
					stop := h.Observe(func(sim.Event) {})
					defer stop()
				}
				z := rect("room", 0, 0, 100, 100)
				z.Variables = tt.vars
				mustZone(t, h, z)
				for _, d := range tt.devices {
					mustDevice(t, h, d)
				}
				if tt.setup != nil {
					tt.setup(t, h)
				}
				mustAdvance(t, h, tt.advance)
				if got := temperature(t, h, "room"); !near(got, tt.want) {
					t.Errorf("Temperature after %v = %.12f, want %.12f", tt.advance, got, tt.want)
				}
			})
		}
	}
}

func TestAdvanceMovesSimulatedTime(t *testing.T) {
	h, mock := newHome(t)
	start := h.Now()
	mustAdvance(t, h, 90*time.Minute)
	if got := h.Now().Sub(start); got != 90*time.Minute {
		t.Errorf("after Advance(90m) the time moved %v", got)
	}
	if err := h.Advance(-time.Second); err == nil {
		t.Error("Advance(-1s) = nil, want an error")
	}
	if err := h.RunUntil(start); err == nil {
		t.Error("RunUntil(the past) = nil, want an error")
	}
	if err := h.RunUntil(start.Add(2 * time.Hour)); err != nil || h.Now().Sub(start) != 2*time.Hour {
		t.Errorf("RunUntil(start+2h) = %v, time moved %v", err, h.Now().Sub(start))
	}
	_ = mock
}

func TestAdvanceWhilePaused(t *testing.T) {
	h, _ := newHome(t)
	mustUpdateClock(t, h, sim.ClockUpdate{Pause: ptr(true)})
	mustZone(t, h, rect("room", 0, 0, 100, 100))
	mustDevice(t, h, placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0}))
	mustAdvance(t, h, 5*time.Second)
	if got := temperature(t, h, "room"); got == 293.15 {
		t.Errorf("Temperature = %v: Advance must run the heater while paused", got)
	}
}

func TestSettingStartDateKeepsTheSchedule(t *testing.T) {
	h, _ := newHome(t)
	mustZone(t, h, sim.ZoneSpec{ID: "room", RightX: 100, BottomY: 100, Variables: map[string]float64{"Volume": 10}})
	mustDevice(t, h, placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0}))
	mustDevice(t, h, placed("t", "Thermometer", 1, 1, nil))
	mustAdvance(t, h, 3*time.Second)
	mustUpdateClock(t, h, sim.ClockUpdate{StartDate: ptr(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())})
	mustAdvance(t, h, 1999*time.Millisecond)
	if got := temperature(t, h, "room"); got != 293.15 {
		t.Fatalf("Temperature 4.999 s after creation = %v, want 293.15", got)
	}
	mustAdvance(t, h, time.Millisecond)
	if got, want := temperature(t, h, "room"), 293.15+1000*5/(1200*10.0); !near(got, want) {
		t.Errorf("Temperature 5 s after creation = %v, want %v", got, want)
	}
}

// TestHeatBeatMovesWithTheStartDate: a heater made before the start date
// is set and a cooler of equal power made after it update at the same
// instants: the beat the updates are aligned on moves with the timers.
func TestHeatBeatMovesWithTheStartDate(t *testing.T) {
	h, _ := newHome(t)
	mustZone(t, h, sim.ZoneSpec{ID: "room", RightX: 100, BottomY: 100, Variables: map[string]float64{"Volume": 10}})
	mustDevice(t, h, placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0}))
	mustAdvance(t, h, 3*time.Second)
	mustUpdateClock(t, h, sim.ClockUpdate{StartDate: ptr(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())}) // 3 s after a beat
	mustAdvance(t, h, 1500*time.Millisecond)
	mustDevice(t, h, placed("c", "Cooler", 60, 60, map[string]any{"cooler.powerLevel": 1.0}))
	mustAdvance(t, h, time.Second) // the heater's update is due 2 s after the date was set; the cooler's with it
	want := temperature(t, h, "room")
	for i := range 20 {
		mustAdvance(t, h, 700*time.Millisecond)
		if got := temperature(t, h, "room"); !near(got, want) {
			t.Fatalf("Temperature %v later = %v, want %v: the two update together, their heat cancels", time.Duration(i+1)*700*time.Millisecond, got, want)
		}
	}
}

func TestSensorsFollowTheirZone(t *testing.T) {
	h, _ := newHome(t)
	mustZone(t, h, sim.ZoneSpec{ID: "room", RightX: 100, BottomY: 100, Variables: map[string]float64{"Volume": 10, "COConcentration": 4}})
	mustZone(t, h, rect("other", 200, 0, 300, 100))
	for _, d := range []sim.DeviceSpec{
		placed("t", "Thermometer", 10, 10, nil),
		placed("co", "COGasSensor", 10, 10, nil),
		placed("co2", "CO2GasSensor", 10, 10, nil),
		placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0}),
		{ID: "outside", Type: "Thermometer"},
		{ID: "outside-light", Type: "Photometer"},
		{ID: "outside-co", Type: "COGasSensor"},
		{ID: "outside-co2", Type: "CO2GasSensor"},
	} {
		mustDevice(t, h, d)
	}
	read := func(id, prop string) any { return mustGetDevice(t, h, id).Properties[prop] }
	if got := read("t", "current_temperature"); got != 293.15 {
		t.Errorf("thermometer in a new zone reads %v, want 293.15 (the zone's temperature when first needed)", got)
	}
	// Outside every zone a sensor reads its kind's default: the contract's
	// -1 for the thermometer and the photometer, 0.0 for the gas sensors.
	for _, c := range []struct {
		id, prop string
		want     float64
	}{
		{"outside", "current_temperature", -1},
		{"outside-light", "current_illuminance", -1},
		{"outside-co", "current_concentration", 0},
		{"outside-co2", "current_concentration", 0},
	} {
		if got := read(c.id, c.prop); got != c.want {
			t.Errorf("%s outside every zone: %s = %v, want %v", c.id, c.prop, got, c.want)
		}
	}
	if got := read("co", "current_concentration"); got != 4.0 {
		t.Errorf("CO sensor reads %v, want the zone's 4", got)
	}
	if got := read("co2", "current_concentration"); got != 0.0 {
		t.Errorf("CO2 sensor in a zone without CO2Concentration reads %v, want 0", got)
	}
	mustAdvance(t, h, 5*time.Second)
	warm := temperature(t, h, "room")
	if got := read("t", "current_temperature"); got != warm {
		t.Errorf("thermometer reads %v, zone is %v", got, warm)
	}
	// A faulty sensor keeps its last reading; repaired, it follows again.
	mustUpdateDevice(t, h, "t", sim.DeviceUpdate{Fault: ptr("yes")})
	mustAdvance(t, h, 5*time.Second)
	if got := read("t", "current_temperature"); got != warm {
		t.Errorf("faulty thermometer reads %v, want its last reading %v", got, warm)
	}
	mustUpdateDevice(t, h, "t", sim.DeviceUpdate{Fault: ptr("no")})
	if got, want := read("t", "current_temperature"), temperature(t, h, "room"); got != want || want == warm {
		t.Errorf("repaired thermometer reads %v, want the zone's %v", got, want)
	}
	// Moved out of every zone, it reads -1; into another zone, that zone's.
	mustUpdateDevice(t, h, "t", sim.DeviceUpdate{PositionX: ptr(150)})
	if got := read("t", "current_temperature"); got != -1.0 {
		t.Errorf("thermometer outside reads %v, want -1", got)
	}
	mustUpdateDevice(t, h, "co", sim.DeviceUpdate{PositionX: ptr(150)})
	if got := read("co", "current_concentration"); got != 0.0 {
		t.Errorf("CO sensor moved out of its zone reads %v, want 0 (its default)", got)
	}
	mustUpdateDevice(t, h, "t", sim.DeviceUpdate{PositionX: ptr(250)})
	if got := read("t", "current_temperature"); got != 293.15 {
		t.Errorf("thermometer in the other zone reads %v, want 293.15", got)
	}
	// Setting the zone's variable by hand moves the reading too.
	mustUpdateZone(t, h, "other", sim.ZoneUpdate{Variables: map[string]*float64{"Temperature": ptr(300.0)}})
	if got := read("t", "current_temperature"); got != 300.0 {
		t.Errorf("thermometer reads %v after the zone was set to 300", got)
	}
}

func TestLightsLightTheirZone(t *testing.T) {
	lux := func(watts float64) float64 { return watts * 680 / area100 }
	h, _ := newHome(t)
	mustZone(t, h, rect("room", 0, 0, 100, 100))
	mustZone(t, h, rect("dark", 200, 0, 300, 100))
	illum := func(zone string) any { return mustGetZone(t, h, zone).Variables["Illuminance"] }
	mustDevice(t, h, placed("p", "Photometer", 10, 10, nil))
	if got := illum("room"); got != 0.0 {
		t.Errorf("Illuminance with a photometer and no light = %v, want 0", got)
	}
	if _, ok := mustGetZone(t, h, "dark").Variables["Illuminance"]; ok {
		t.Error("a zone that never had a light or photometer got an Illuminance")
	}
	mustDevice(t, h, placed("dim", "DimmerLight", 50, 50, map[string]any{"power_level": 0.5}))
	steps := []struct {
		name string
		do   func()
		want float64
	}{
		{"a dimmer at half power", func() {}, lux(50)},
		{"a binary light switched on adds its power", func() {
			mustDevice(t, h, placed("bin", "BinaryLight", 60, 60, map[string]any{"power_status": true}))
		}, lux(150)},
		{"a deactivated light gives nothing", func() {
			mustUpdateDevice(t, h, "bin", sim.DeviceUpdate{State: ptr("deactivated")})
		}, lux(50)},
		{"dimmed to full", func() {
			mustUpdateDevice(t, h, "dim", sim.DeviceUpdate{Properties: map[string]any{"power_level": 1.0}})
		}, lux(100)},
		{"the zone resized to a quarter", func() {
			mustUpdateZone(t, h, "room", sim.ZoneUpdate{RightX: ptr(200), BottomY: ptr(200)})
		}, 100 * 680 / (2.8 * 2.8)},
		{"the zone resized back", func() {
			mustUpdateZone(t, h, "room", sim.ZoneUpdate{RightX: ptr(100), BottomY: ptr(100)})
		}, lux(100)},
		{"the light moved to another zone", func() {
			mustUpdateDevice(t, h, "dim", sim.DeviceUpdate{PositionX: ptr(250)})
		}, 0},
	}
	for _, s := range steps {
		s.do()
		if got, ok := illum("room").(float64); !ok || !near(got, s.want) {
			t.Errorf("%s: Illuminance = %v, want %v", s.name, illum("room"), s.want)
		}
		if got := mustGetDevice(t, h, "p").Properties["current_illuminance"]; got != illum("room") {
			t.Errorf("%s: photometer reads %v, zone is %v", s.name, got, illum("room"))
		}
	}
	if got := illum("dark"); !near(got.(float64), lux(100)) {
		t.Errorf("the light's new zone has Illuminance %v, want %v", got, lux(100))
	}
	if err := h.DeleteDevice("dim"); err != nil {
		t.Fatal(err)
	}
	if got := illum("dark"); got != 0.0 {
		t.Errorf("after the light was removed, Illuminance = %v, want 0", got)
	}
}

func TestPresenceAndMotion(t *testing.T) {
	h, _ := newHome(t)
	mustZone(t, h, rect("hall", 0, 0, 100, 100))
	mustZone(t, h, rect("room", 200, 0, 300, 100))
	mustDevice(t, h, placed("ps", "PresenceSensor", 10, 10, nil))
	mustDevice(t, h, placed("ms", "MotionSensor", 20, 20, nil))
	sub := h.Subscribe(64)
	defer sub.Close()
	present := func() any { return mustGetDevice(t, h, "ps").Properties["sensed_presence"] }

	mustPerson(t, h, sim.PersonSpec{ID: "al", Type: "Man", PositionX: ptr(50), PositionY: ptr(50)})
	if present() != true {
		t.Errorf("sensed_presence with a person in the zone = %v", present())
	}
	mustUpdatePerson(t, h, "al", sim.PersonUpdate{PositionX: ptr(60)})
	mustUpdatePerson(t, h, "al", sim.PersonUpdate{Location: ptr("room")})
	if present() != false {
		t.Errorf("sensed_presence after the person left = %v", present())
	}
	var motions []string
	for _, e := range drain(t, sub) {
		if e.Type == sim.EventDeviceEvent && e.DeviceID == "ms" {
			motions = append(motions, e.Value.(map[string]any)["motion"].(string))
		}
	}
	if diff := cmp.Diff([]string{"enter", "move", "leave"}, motions); diff != "" {
		t.Errorf("motion events (-want +got):\n%s", diff)
	}

	// A faulty motion sensor emits nothing; repaired, it does again.
	mustUpdateDevice(t, h, "ms", sim.DeviceUpdate{Fault: ptr("yes")})
	mustUpdatePerson(t, h, "al", sim.PersonUpdate{Location: ptr("hall")})
	count := func() (n int) {
		for _, e := range drain(t, sub) {
			if e.Type == sim.EventDeviceEvent {
				n++
			}
		}
		return n
	}
	if n := count(); n != 0 {
		t.Errorf("a faulty motion sensor emitted %d events", n)
	}
	mustUpdateDevice(t, h, "ms", sim.DeviceUpdate{Fault: ptr("no")})
	mustUpdatePerson(t, h, "al", sim.PersonUpdate{PositionX: ptr(30)})
	if n := count(); n != 1 {
		t.Errorf("a repaired motion sensor emitted %d events for one move, want 1", n)
	}
}

func mustUpdatePerson(tb testing.TB, h *sim.Home, id string, u sim.PersonUpdate) sim.Person {
	tb.Helper()
	p, err := h.UpdatePerson(id, u)
	if err != nil {
		tb.Fatalf("UpdatePerson(%s) = %v", id, err)
	}
	return p
}

// TestPhysicsEvents checks that physics changes reach subscribers: the
// zone's temperature and the thermometer reading at every heater update.
func TestPhysicsEvents(t *testing.T) {
	h, _ := newHome(t)
	mustZone(t, h, sim.ZoneSpec{ID: "room", RightX: 100, BottomY: 100, Variables: map[string]float64{"Volume": 10}})
	mustDevice(t, h, placed("t", "Thermometer", 10, 10, nil))
	mustDevice(t, h, placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0}))
	sub := h.Subscribe(64)
	defer sub.Close()
	start := h.Now().UnixMilli()
	mustAdvance(t, h, 10*time.Second)
	var got []string
	for _, e := range drain(t, sub) {
		got = append(got, string(e.Type)+" "+e.Property+" @"+time.Duration((e.Time-start)*int64(time.Millisecond)).String())
	}
	want := []string{
		"zone-variable-updated Temperature @5s", "device-property-updated current_temperature @5s",
		"zone-variable-updated Temperature @10s", "device-property-updated current_temperature @10s",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestHeatSumAfterATemperatureSet: the updates of one instant add up
// before the clamp only while nothing else sets the zone's temperature; a
// temperature set between two of them (here by an observer of the first)
// is where the next one starts from.
func TestHeatSumAfterATemperatureSet(t *testing.T) {
	step := func(p, dtSeconds, volume float64) float64 { return p * dtSeconds / (1200 * volume) }
	h, _ := newHome(t)
	z := rect("room", 0, 0, 100, 100)
	z.Variables = map[string]float64{"Volume": 10, "Temperature": 300}
	mustZone(t, h, z)
	mustDevice(t, h, placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0}))
	mustDevice(t, h, placed("c", "Cooler", 60, 60, map[string]any{"cooler.powerLevel": 0.5}))
	set := false
	stop := h.Observe(func(e sim.Event) {
		if !set && e.Type == sim.EventZoneVariableUpdated && e.ZoneID == "room" {
			set = true // after the heater's update, before the cooler's
			if _, err := h.UpdateZone("room", sim.ZoneUpdate{Variables: map[string]*float64{"Temperature": ptr(295.0)}}); err != nil {
				t.Error(err)
			}
		}
	})
	defer stop()
	mustAdvance(t, h, 5*time.Second)
	if got, want := temperature(t, h, "room"), 295-step(500, 5, 10); !set || !near(got, want) {
		t.Errorf("Temperature = %.12f (set by the observer: %v), want %.12f", got, set, want)
	}
}

// TestHeatUpdatesStayNumbers: in a zone of almost no volume a heater's and
// a cooler's updates are infinite; together they leave a temperature in
// range, not NaN. A kind whose period may fall below 1 ms updates every
// millisecond rather than failing.
func TestHeatUpdatesStayNumbers(t *testing.T) {
	h, _ := newHome(t)
	mustZone(t, h, sim.ZoneSpec{ID: "room", RightX: 100, BottomY: 100, Variables: map[string]float64{"Volume": 5e-324}})
	mustDevice(t, h, placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0}))
	mustDevice(t, h, placed("c", "Cooler", 60, 60, map[string]any{"cooler.powerLevel": 1.0}))
	mustAdvance(t, h, 5*time.Second)
	if got := temperature(t, h, "room"); !(got >= sim.MinTemperature && got <= sim.MaxTemperature) {
		t.Errorf("Temperature in a zone of 5e-324 m³ = %v, want a number in [%v, %v]", got, sim.MinTemperature, sim.MaxTemperature)
	}

	kinds := sim.NewKindRegistry()
	if err := kinds.Register(sim.Kind{Name: "FastHeater", Service: "test.FastHeater",
		Properties: []sim.PropertySpec{
			{Name: "power", Type: sim.Number, Default: 1000.0, Min: 0, Max: 5000},
			{Name: "period", Type: sim.Number, Default: 0.5, Min: 0.5, Max: 10},
		},
		Behavior: sim.Behavior{Heat: func(p sim.Props) float64 { return p.Number("power") }, PeriodProperty: "period"},
	}); err != nil {
		t.Fatal(err)
	}
	fast, err := sim.New(sim.Config{WallClock: clock.NewMock(), Location: time.UTC, Kinds: kinds})
	if err != nil {
		t.Fatal(err)
	}
	mustZone(t, fast, sim.ZoneSpec{ID: "room", RightX: 100, BottomY: 100, Variables: map[string]float64{"Volume": 10}})
	mustDevice(t, fast, placed("f", "FastHeater", 50, 50, nil))
	mustAdvance(t, fast, 10*time.Millisecond)
	if got, want := temperature(t, fast, "room"), 293.15+1000*0.010/(1200*10.0); !near(got, want) {
		t.Errorf("Temperature after 10 ms of a 0.5 ms heater = %.12f, want %.12f (one update a ms)", got, want)
	}
}
