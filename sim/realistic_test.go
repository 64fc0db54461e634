package sim_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pervasim/pervasim/sim"
)

// midnight is a winter night in the realistic tests' home, Grenoble: the
// sun is down, so no daylight enters.
var midnight = time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC)

// realisticHome returns a home of the realistic model starting at start,
// with the environment changed by env (nil: the defaults).
func realisticHome(tb testing.TB, start time.Time, env *sim.EnvironmentUpdate) *sim.Home {
	tb.Helper()
	h, err := sim.New(sim.Config{WallClock: clock.NewMock(), StartDate: start, Location: time.UTC,
		Physics: sim.PhysicsRealistic, Environment: env})
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

func variable(tb testing.TB, h *sim.Home, zone, name string) float64 {
	tb.Helper()
	v, ok := mustGetZone(tb, h, zone).Variables[name]
	if !ok {
		tb.Fatalf("zone %s has no %s", zone, name)
	}
	return v
}

// The room of the hand computations: 300 × 200 plan units, 4.2 m × 2.8 m,
// on its own (no shared wall), 2.5 m high.
//
//	area A = 11.76 m², volume V = 29.4 m³, windows 0.15·A = 1.764 m²
//	outer walls 2·(4.2 + 2.8)·2.5 = 35 m², opaque 35 − 1.764 = 33.236 m²
//	G = 0.6·33.236 + 2.8·1.764 + (0.4 + 0.6)·11.76 + 1200·0.6·29.4/3600
//	  = 19.9416 + 4.9392 + 11.76 + 5.88 = 42.5208 W/K
//	C = 1200·29.4 + 165,000·11.76 = 35,280 + 1,940,400 = 1,975,680 J/K
const (
	roomG = 42.5208
	roomC = 1_975_680.0
)

func room(id string, left, top int) sim.ZoneSpec { return rect(id, left, top, left+300, top+200) }

func TestRealisticHeatLoss(t *testing.T) {
	t.Run("one step by hand", func(t *testing.T) {
		h := realisticHome(t, midnight, nil)
		mustZone(t, h, room("r", 0, 0))
		if got := variable(t, h, "r", sim.VarTemperature); got != sim.DefaultTemperature {
			t.Fatalf("a new zone's Temperature = %v, want %v", got, sim.DefaultTemperature)
		}
		mustAdvance(t, h, time.Minute)
		// Outdoors 283.15 K, no sun, nothing inside: T' = 283.15 + 10·e^(−G·60/C).
		want := 283.15 + 10*math.Exp(-roomG*60/roomC)
		if got := variable(t, h, "r", sim.VarTemperature); math.Abs(got-want) > 1e-9 {
			t.Errorf("Temperature after one step = %.12f, want %.12f", got, want)
		}
	})
	t.Run("an unheated room drifts to the outdoors, past the contract's clamp", func(t *testing.T) {
		h := realisticHome(t, midnight, &sim.EnvironmentUpdate{OutdoorTemperature: ptr(263.15), Sky: ptr("overcast")})
		mustZone(t, h, room("r", 0, 0))
		mustAdvance(t, h, 10*24*time.Hour)
		// Time constant C/G = 12.9 h: after 10 days the room is within a
		// few hundredths of a kelvin of the outdoors (overcast daylight
		// brings a little sun through the windows by day).
		if got := variable(t, h, "r", sim.VarTemperature); got < 263.15 || got > 263.15+1 || got > sim.MinTemperature {
			t.Errorf("Temperature after 10 days at 263.15 K outdoors = %v, want just above 263.15", got)
		}
	})
	t.Run("a heated room settles below the clamp", func(t *testing.T) {
		// Near the North Pole in January, no sun rises to add its heat.
		h := realisticHome(t, midnight, &sim.EnvironmentUpdate{OutdoorTemperature: ptr(273.15), Latitude: ptr(89.0)})
		mustZone(t, h, room("r", 0, 0))
		mustDevice(t, h, placed("heater", "Heater", 10, 10, map[string]any{"heater.powerLevel": 0.5}))
		mustAdvance(t, h, 10*24*time.Hour)
		day9 := variable(t, h, "r", sim.VarTemperature)
		// Settled, the balance is 500 W = G·(T − 273.15): T = 284.909 K.
		night := midnight.Add(11 * 24 * time.Hour)
		if err := h.RunUntil(night); err != nil {
			t.Fatal(err)
		}
		got := variable(t, h, "r", sim.VarTemperature)
		want := 273.15 + 500/roomG
		if math.Abs(got-want) > 1e-6 {
			t.Errorf("Temperature at midnight after 11 days = %v, want about %v (500 W / %v W/K over 273.15 K)", got, want, roomG)
		}
		if got >= sim.MaxTemperature || math.Abs(got-day9) > 0.5 {
			t.Errorf("Temperature moved from %v to %v in a day: not settled below %v", day9, got, sim.MaxTemperature)
		}
	})
}

func TestRealisticNeighbours(t *testing.T) {
	h := realisticHome(t, midnight, &sim.EnvironmentUpdate{OutdoorTemperature: ptr(273.15)})
	// a and b share a 200-unit (2.8 m) wall at x = 300; c stands apart,
	// 100 units (1.4 m, more than 0.3 m) from a.
	mustZone(t, h, room("a", 0, 0))
	mustZone(t, h, room("b", 300, 0))
	mustZone(t, h, room("c", -400, 0))
	mustDevice(t, h, placed("heater", "Heater", 10, 10, map[string]any{"heater.powerLevel": 1.0}))
	mustAdvance(t, h, 6*time.Hour)
	a, b, c := variable(t, h, "a", sim.VarTemperature), variable(t, h, "b", sim.VarTemperature), variable(t, h, "c", sim.VarTemperature)
	if !(a > b && b > c) {
		t.Errorf("after 6 h with a heated: a = %v, b = %v, c = %v; want a > b (warmed through the wall) > c", a, b, c)
	}
}

// nestedTemps runs a realistic home of these zones (outdoors at 0 °C) for
// hours from start, a 1 kW heater at heater (none when nil), and returns
// the zones' temperatures.
func nestedTemps(t *testing.T, start time.Time, hours int, heater []int, zones ...sim.ZoneSpec) map[string]float64 {
	t.Helper()
	h := realisticHome(t, start, &sim.EnvironmentUpdate{OutdoorTemperature: ptr(273.15)})
	for _, z := range zones {
		mustZone(t, h, z)
	}
	if heater != nil {
		mustDevice(t, h, placed("heater", "Heater", heater[0], heater[1], map[string]any{"heater.powerLevel": 1.0}))
	}
	mustAdvance(t, h, time.Duration(hours)*time.Hour)
	out := map[string]float64{}
	for _, z := range zones {
		out[z.ID] = variable(t, h, z.ID, sim.VarTemperature)
	}
	return out
}

// TestRealisticNestedZone: a zone inside another is a part of its room,
// not a building of its own (a sofa's zone with a heater reached 84 °C in
// a 2 °C room, its own walls and roof facing the outdoors).
func TestRealisticNestedZone(t *testing.T) {
	heater := []int{250, 150}
	room := rect("room", 0, 0, 500, 300)
	alone := nestedTemps(t, midnight, 48, heater, room)["room"]
	t.Run("a heater in a part of the room warms the room", func(t *testing.T) {
		for _, sofa := range []sim.ZoneSpec{rect("sofa", 200, 100, 300, 200), rect("sofa", 200, 100, 501, 200) /* past the wall by a unit */} {
			got := nestedTemps(t, midnight, 48, heater, room, sofa)
			if math.Abs(got["room"]-alone) > 0.5 || got["sofa"] < got["room"] || got["sofa"]-got["room"] > 2 {
				t.Errorf("sofa %v: room %.2f K, sofa %.2f K; the room alone with the heater %.2f K: want the room within 0.5 K of it, the sofa up to 2 K warmer",
					sofa, got["room"], got["sofa"], alone)
			}
		}
	})
	t.Run("parts of parts mix with their own container", func(t *testing.T) {
		// The room made last: the cushion's container is the smallest zone holding it, not the last one seen.
		got := nestedTemps(t, midnight, 48, heater, rect("sofa", 150, 50, 350, 250), rect("cushion", 230, 130, 270, 170), room)
		if !(got["cushion"] > got["sofa"] && got["sofa"]-got["room"] > 0.3) {
			t.Errorf("heater in the cushion: cushion %.3f, sofa %.3f, room %.3f K: want the sofa between, above the room", got["cushion"], got["sofa"], got["room"])
		}
	})
	t.Run("the sun comes in through the room's windows only", func(t *testing.T) {
		// What 3 hours of midday sun add to the room (against 3 hours of
		// night) is the same with a part as without.
		sun := func(zones ...sim.ZoneSpec) float64 {
			return nestedTemps(t, midnight.Add(10*time.Hour), 3, nil, zones...)["room"] - nestedTemps(t, midnight, 3, nil, zones...)["room"]
		}
		bare, parted := sun(room), sun(room, rect("sofa", 100, 50, 400, 250))
		if bare <= 0.1 || math.Abs(parted-bare) > 0.1*bare {
			t.Errorf("3 sunny hours add %.3f K to the room with a part, %.3f K without: want the same", parted, bare)
		}
	})
	t.Run("not parts", func(t *testing.T) {
		for name, other := range map[string]sim.ZoneSpec{
			"the same rectangle": rect("other", 0, 0, 500, 300),
			"a line":             rect("other", 200, 100, 200, 200),
			"mostly outside":     rect("other", 450, 100, 700, 200),
		} {
			got := nestedTemps(t, midnight, 48, heater, room, other)
			if name == "a line" {
				if math.Abs(got["room"]-alone) > 0.01 {
					t.Errorf("%s: room %.3f K, alone %.3f K: a zone without area changed it", name, got["room"], alone)
				}
				continue
			}
			if got["other"] > 280 {
				t.Errorf("%s: the other zone at %.2f K: it took the room's heat as a part of it", name, got["other"])
			}
		}
	})
	t.Run("mixing does not overshoot", func(t *testing.T) {
		h := realisticHome(t, midnight, &sim.EnvironmentUpdate{OutdoorTemperature: ptr(273.15)})
		mustZone(t, h, sim.ZoneSpec{ID: "box", RightX: 102, BottomY: 102, Variables: map[string]float64{"Temperature": 273.15}})
		mustZone(t, h, sim.ZoneSpec{ID: "in", LeftX: 1, TopY: 1, RightX: 101, BottomY: 101, Variables: map[string]float64{"Temperature": 373.15}})
		for step := range 10 {
			mustAdvance(t, h, time.Minute)
			box, in := variable(t, h, "box", sim.VarTemperature), variable(t, h, "in", sim.VarTemperature)
			if in < box-1e-9 {
				t.Fatalf("minute %d: the part %.3f K, its box %.3f K: the warmer went below the other", step+1, in, box)
			}
		}
	})
}

func TestRealisticLight(t *testing.T) {
	t.Run("60 W in 15 m² at night", func(t *testing.T) {
		h := realisticHome(t, midnight, nil)
		// 277 × 277 units: 3.878 m × 3.878 m = 15.04 m².
		mustZone(t, h, rect("r", 0, 0, 277, 277))
		mustDevice(t, h, placed("lamp", "BinaryLight", 10, 10, map[string]any{"power_status": true, "max_power": 60.0}))
		d := mustDevice(t, h, placed("eye", "Photometer", 20, 20, nil))
		area := 277 * 0.014 * 277 * 0.014
		want := 60 * sim.DefaultEfficacy * sim.UtilisationFactor / area // 239 lx
		if got := d.Properties["current_illuminance"].(float64); math.Abs(got-want) > 1e-9 || got < 100 || got > 500 {
			t.Errorf("illuminance = %v, want %v: a few hundred lux", got, want)
		}
		lamp, _ := h.Device("lamp")
		if got := lamp.Properties[sim.PropLuminousEfficacy]; got != sim.DefaultEfficacy {
			t.Errorf("luminous_efficacy = %v, want %v", got, sim.DefaultEfficacy)
		}
	})
	t.Run("daylight by day and season", func(t *testing.T) {
		lux := func(at time.Time) float64 {
			h := realisticHome(t, at, nil)
			mustZone(t, h, room("r", 0, 0))
			return variable(t, h, "r", sim.VarIlluminance)
		}
		// Grenoble's solar noon is about 11:35 UTC.
		june, december := lux(time.Date(2024, 6, 21, 11, 35, 0, 0, time.UTC)), lux(time.Date(2024, 12, 21, 11, 35, 0, 0, time.UTC))
		night := lux(time.Date(2024, 6, 21, 23, 0, 0, 0, time.UTC))
		morning := lux(time.Date(2024, 6, 21, 6, 0, 0, 0, time.UTC))
		if night != 0 || !(june > morning && morning > 0) || !(june > december && december > 0) {
			t.Errorf("daylight: June noon %v, June 06:00 %v, June 23:00 %v, December noon %v; want noon > morning > night = 0 and June > December > 0",
				june, morning, night, december)
		}
		// By hand at June noon: the sun at 68.2°, clear sky, J = 173.
		//   E_xt = 127,500·(1 + 0.034·cos(2π·171/365)) = 123,266 lx (about)
		//   global = E_xt·e^(−0.21/sin h)·sin h + 800 + 15,500·√(sin h) ≈ 111,000 lx outdoors
		// Daylight factor of the room: 0.7·1.764·80 / (58.52·0.75) / 100 = 2.25 %.
		df := 0.7 * 1.764 * 80 / ((2*11.76 + 2*7.0*2.5) * 0.75) / 100
		if june < 0.9*105_000*df || june > 1.1*115_000*df {
			t.Errorf("June noon indoors = %v lx, want about %v (111 klx × DF %.4f)", june, 111_000*df, df)
		}
	})
}

func TestRealisticDeterminism(t *testing.T) {
	run := func() []sim.Event {
		h := realisticHome(t, midnight, &sim.EnvironmentUpdate{OutdoorMin: ptr(268.15), OutdoorMax: ptr(278.15)})
		sub := h.Subscribe(1 << 20)
		defer sub.Close()
		mustZone(t, h, room("a", 0, 0))
		mustZone(t, h, room("b", 300, 0))
		mustDevice(t, h, placed("heater", "Heater", 10, 10, map[string]any{"heater.powerLevel": 0.7}))
		mustDevice(t, h, placed("t", "Thermometer", 310, 10, nil))
		mustAdvance(t, h, 24*time.Hour)
		return drain(t, sub)
	}
	a, b := run(), run()
	if len(a) != len(b) || len(a) < 1000 {
		t.Fatalf("two runs gave %d and %d events", len(a), len(b))
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].Time != b[i].Time || a[i].Value != b[i].Value {
			t.Fatalf("event %d differs: %+v and %+v", i, a[i], b[i])
		}
	}
}

func TestEnvironment(t *testing.T) {
	h := realisticHome(t, midnight, nil)
	e := h.Environment()
	if e.Physics != sim.PhysicsRealistic || e.OutdoorTemperature != sim.DefaultOutdoorTemperature || e.OutdoorMin != nil ||
		e.Latitude != sim.DefaultLatitude || e.Longitude != sim.DefaultLongitude || e.Sky != "clear" || e.WindowShare != 0.15 ||
		e.SunElevation >= 0 || e.OutdoorIlluminance != 0 {
		t.Fatalf("default environment at midnight = %+v", e)
	}
	// A daily curve: 05:00 mean solar time is 04:37 UTC at 5.72° E.
	e, err := h.UpdateEnvironment(sim.EnvironmentUpdate{OutdoorMin: ptr(270.0), OutdoorMax: ptr(280.0)})
	if err != nil {
		t.Fatal(err)
	}
	if *e.OutdoorMin != 270 || *e.OutdoorMax != 280 || e.OutdoorTemperature <= 270 || e.OutdoorTemperature >= 280 {
		t.Errorf("after setting a curve: %+v", e)
	}
	if err := h.RunUntil(time.Date(2024, 1, 15, 15, 0, 0, 0, time.UTC).Add(-time.Duration(5.72 / 15 * float64(time.Hour)))); err != nil {
		t.Fatal(err)
	}
	if got := h.Environment().OutdoorTemperature; math.Abs(got-280) > 1e-6 {
		t.Errorf("outdoor temperature at 15:00 mean solar time = %v, want the maximum 280", got)
	}
	// A round trip of what was read changes nothing, even once the curve
	// has moved on since it was read.
	read := h.Environment()
	sendBack := sim.EnvironmentUpdate{OutdoorTemperature: &read.OutdoorTemperature, OutdoorMin: read.OutdoorMin,
		OutdoorMax: read.OutdoorMax, Physics: &read.Physics, SunElevation: &read.SunElevation}
	if _, err := h.UpdateEnvironment(sendBack); err != nil {
		t.Errorf("sending back the environment read: %v", err)
	}
	mustAdvance(t, h, 90*time.Minute)
	if e, err := h.UpdateEnvironment(sendBack); err != nil || *e.OutdoorMin != 270 || *e.OutdoorMax != 280 || e.OutdoorTemperature == read.OutdoorTemperature {
		t.Errorf("sending back the environment read 90 minutes earlier = %+v, %v; want the curve kept, at its present value", e, err)
	}
	for name, u := range map[string]sim.EnvironmentUpdate{
		"latitude out of range":    {Latitude: ptr(91.0)},
		"longitude out of range":   {Longitude: ptr(-181.0)},
		"NaN":                      {OutdoorTemperature: ptr(math.NaN())},
		"too cold":                 {OutdoorTemperature: ptr(100.0)},
		"min above max":            {OutdoorMin: ptr(290.0), OutdoorMax: ptr(280.0)},
		"min above the max kept":   {OutdoorMin: ptr(285.0)},
		"constant and curve":       {OutdoorTemperature: ptr(275.0), OutdoorMin: ptr(270.0)},
		"unknown sky":              {Sky: ptr("stormy")},
		"window share above 1":     {WindowShare: ptr(1.5)},
		"another physics":          {Physics: ptr(sim.PhysicsContract)},
		"a curve needs both (new)": {},
	} {
		if name == "a curve needs both (new)" {
			h2 := realisticHome(t, midnight, nil)
			if _, err := h2.UpdateEnvironment(sim.EnvironmentUpdate{OutdoorMax: ptr(280.0)}); !errors.Is(err, sim.ErrInvalid) {
				t.Errorf("%s: UpdateEnvironment = %v, want ErrInvalid", name, err)
			}
			continue
		}
		before := h.Environment()
		if _, err := h.UpdateEnvironment(u); !errors.Is(err, sim.ErrInvalid) {
			t.Errorf("%s: UpdateEnvironment = %v, want ErrInvalid", name, err)
		}
		if after := h.Environment(); *after.OutdoorMin != *before.OutdoorMin || after.Latitude != before.Latitude || after.Sky != before.Sky {
			t.Errorf("%s: a refused update changed the environment: %+v", name, after)
		}
	}
	// A constant replaces the curve.
	if e, err := h.UpdateEnvironment(sim.EnvironmentUpdate{OutdoorTemperature: ptr(275.0)}); err != nil || e.OutdoorMin != nil || e.OutdoorTemperature != 275 {
		t.Errorf("UpdateEnvironment(constant) = %+v, %v", e, err)
	}
}

// TestRealisticAbsurdVolumeStaysANumber: a zone whose Volume is the largest
// float has infinite walls (Inf/Inf in its balance); its temperature stays
// what it was rather than becoming NaN, in range, and every zone can be
// written as JSON.
func TestRealisticAbsurdVolumeStaysANumber(t *testing.T) {
	h := realisticHome(t, time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC), nil)
	mustZone(t, h, sim.ZoneSpec{ID: "room", RightX: 100, BottomY: 100, Variables: map[string]float64{"Volume": math.MaxFloat64}})
	mustZone(t, h, sim.ZoneSpec{ID: "next", LeftX: 100, RightX: 200, BottomY: 100})
	mustDevice(t, h, placed("h", "Heater", 50, 50, map[string]any{"heater.powerLevel": 1.0}))
	mustAdvance(t, h, time.Hour)
	for _, z := range h.Zones() {
		if v := z.Variables[sim.VarTemperature]; math.IsNaN(v) || v < sim.MinRealisticTemperature || v > sim.MaxRealisticTemperature {
			t.Errorf("zone %s: Temperature %v, want a number in range", z.ID, v)
		}
		if _, err := json.Marshal(z); err != nil {
			t.Errorf("zone %s: %v", z.ID, err)
		}
	}
}

// TestRealisticTemperatureOutsideBoundsRecovers: a zone whose Temperature
// is set outside the realistic model's bounds (below absolute zero, or so
// high that g·H·ΔT overflows) comes back within them at the next step, with
// an open window and a zone nested in it: their flows take square roots of
// the temperatures, and a NaN used to leave both zones where they were for
// good.
func TestRealisticTemperatureOutsideBoundsRecovers(t *testing.T) {
	for _, temp := range []float64{-300, -math.MaxFloat64, 1e308} {
		h := realisticHome(t, midnight, nil)
		mustZone(t, h, sim.ZoneSpec{ID: "room", RightX: 300, BottomY: 200, Variables: map[string]float64{sim.VarTemperature: temp}})
		mustZone(t, h, sim.ZoneSpec{ID: "corner", LeftX: 10, TopY: 10, RightX: 60, BottomY: 60, Variables: map[string]float64{sim.VarTemperature: temp}})
		mustDevice(t, h, placed("w", "DoorWindowSensor", 200, 100, map[string]any{sim.PropDoorWindowOpening: true}))
		mustAdvance(t, h, time.Minute)
		for _, z := range h.Zones() {
			if v := z.Variables[sim.VarTemperature]; !(v >= sim.MinRealisticTemperature && v <= sim.MaxRealisticTemperature) {
				t.Errorf("set to %v, zone %s: Temperature %v after a step, want within [%v, %v]", temp, z.ID, v, sim.MinRealisticTemperature, sim.MaxRealisticTemperature)
			}
		}
	}
}

// TestWindowShareBounds: a realistic home refuses a zone's WindowShare
// outside [0, 1], changing nothing (a share of 7 lit a room brighter than
// the outdoors); a contract home, where it means nothing, takes any number.
func TestWindowShareBounds(t *testing.T) {
	h := realisticHome(t, midnight, nil)
	for _, v := range []float64{7, -0.1} {
		if _, err := h.CreateZone(sim.ZoneSpec{ID: "z", RightX: 10, BottomY: 10, Variables: map[string]float64{"WindowShare": v}}); !errors.Is(err, sim.ErrInvalid) {
			t.Errorf("create with WindowShare %v: %v, want ErrInvalid", v, err)
		}
	}
	mustZone(t, h, sim.ZoneSpec{ID: "z", RightX: 10, BottomY: 10, Variables: map[string]float64{"WindowShare": 0.2}})
	if _, err := h.UpdateZone("z", sim.ZoneUpdate{Variables: map[string]*float64{"A": ptr(1.0), "WindowShare": ptr(1e300)}}); !errors.Is(err, sim.ErrInvalid) {
		t.Errorf("update to WindowShare 1e300: %v, want ErrInvalid", err)
	}
	if z, _ := h.Zone("z"); z.Variables["WindowShare"] != 0.2 || z.Variables["A"] != 0 {
		t.Errorf("after a refused update: %v", z.Variables)
	}
	c, _ := newHome(t)
	mustZone(t, c, sim.ZoneSpec{ID: "z", RightX: 10, BottomY: 10, Variables: map[string]float64{"WindowShare": 7}})
}
