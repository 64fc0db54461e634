package sim_test

import (
	"bytes"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

// wantLocation is the contract's location rule, written independently of the
// package: the smallest zone (by area) containing the point, ties going to the
// zone listed first (zones must be in creation order); "" when none does.
func wantLocation(zones []sim.Zone, x, y int) string {
	best, bestArea := "", int64(math.MaxInt64)
	for _, z := range zones {
		if x < z.LeftX || x > z.RightX || y < z.TopY || y > z.BottomY {
			continue
		}
		if a := int64(z.RightX-z.LeftX) * int64(z.BottomY-z.TopY); a < bestArea {
			best, bestArea = z.ID, a
		}
	}
	return best
}

// checkDeviceLocation fails unless d is in zone loc ("" for none), with the
// Location property to match.
func checkDeviceLocation(tb testing.TB, d sim.Device, loc string) {
	tb.Helper()
	if d.Location != loc {
		tb.Errorf("device %s at (%d,%d): Location = %q, want %q", d.ID, d.PositionX, d.PositionY, d.Location, loc)
	}
	prop, ok := d.Properties[sim.PropLocation]
	switch {
	case loc == "" && ok:
		tb.Errorf("device %s outside every zone has Properties[%q] = %v, want none", d.ID, sim.PropLocation, prop)
	case loc != "" && prop != loc:
		tb.Errorf("device %s: Properties[%q] = %v, want %q", d.ID, sim.PropLocation, prop, loc)
	}
}

// locations returns the location of every device ("device/<id>") and person
// ("person/<id>"), with "" for a device and "unknown" for a person outside
// every zone. It checks each device's Location property on the way.
func locations(tb testing.TB, h *sim.Home) map[string]string {
	tb.Helper()
	out := map[string]string{}
	for _, d := range h.Devices() {
		checkDeviceLocation(tb, d, d.Location)
		out["device/"+d.ID] = d.Location
	}
	for _, p := range h.Persons() {
		out["person/"+p.ID] = p.Location
	}
	return out
}

func TestZoneContains(t *testing.T) {
	z := sim.Zone{ID: "z", LeftX: 10, TopY: 20, RightX: 30, BottomY: 40}
	tests := []struct {
		name string
		x, y int
		want bool
	}{
		{"top-left corner", 10, 20, true},
		{"top-right corner", 30, 20, true},
		{"bottom-left corner", 10, 40, true},
		{"bottom-right corner", 30, 40, true},
		{"left edge", 10, 30, true},
		{"right edge", 30, 30, true},
		{"top edge", 20, 20, true},
		{"bottom edge", 20, 40, true},
		{"centre", 20, 30, true},
		{"one left of left edge", 9, 30, false},
		{"one right of right edge", 31, 30, false},
		{"one above top edge", 20, 19, false},
		{"one below bottom edge", 20, 41, false},
		{"diagonally outside top-left", 9, 19, false},
		{"diagonally outside bottom-right", 31, 41, false},
		{"unplaced", -1, -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := z.Contains(tt.x, tt.y); got != tt.want {
				t.Errorf("%+v.Contains(%d, %d) = %v, want %v", z, tt.x, tt.y, got, tt.want)
			}
			h, _ := newHome(t)
			mustZone(t, h, rect("z", 10, 20, 30, 40))
			wantDev, wantPerson := "", sim.LocationUnknown
			if tt.want {
				wantDev, wantPerson = "z", "z"
			}
			d := mustDevice(t, h, sim.DeviceSpec{ID: "d", Type: "Thermometer", PositionX: ptr(tt.x), PositionY: ptr(tt.y)})
			checkDeviceLocation(t, d, wantDev)
			if p := mustPerson(t, h, sim.PersonSpec{ID: "p", Type: "Girl", PositionX: ptr(tt.x), PositionY: ptr(tt.y)}); p.Location != wantPerson {
				t.Errorf("person at (%d,%d): Location = %q, want %q", tt.x, tt.y, p.Location, wantPerson)
			}
		})
	}
	t.Run("zero-size zone holds its one point", func(t *testing.T) {
		p := sim.Zone{LeftX: 5, TopY: 5, RightX: 5, BottomY: 5}
		if !p.Contains(5, 5) || p.Contains(5, 6) || p.Contains(4, 5) {
			t.Errorf("%+v.Contains: want true at (5,5) only", p)
		}
	})
}

func TestLocationSmallestAreaWins(t *testing.T) {
	zones := map[string]sim.ZoneSpec{
		"house": rect("house", 0, 0, 1000, 1000),
		"floor": rect("floor", 0, 0, 500, 500),
		"room":  rect("room", 100, 100, 200, 200),
		"nook":  rect("nook", 150, 150, 150, 150), // zero area
	}
	points := []struct {
		name string
		x, y int
		want string
	}{
		{"in all four", 150, 150, "nook"},
		{"in room, floor, house", 120, 180, "room"},
		{"on room's edge", 200, 100, "room"},
		{"in floor and house", 300, 300, "floor"},
		{"on floor's corner", 500, 500, "floor"},
		{"in house only", 800, 800, "house"},
		{"on house's corner", 1000, 1000, "house"},
		{"outside every zone", 1001, 50, ""},
	}
	for _, order := range [][]string{
		{"house", "floor", "room", "nook"},
		{"nook", "room", "floor", "house"},
		{"floor", "nook", "house", "room"},
	} {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			h, _ := newHome(t)
			for _, id := range order {
				mustZone(t, h, zones[id])
			}
			for _, p := range points {
				t.Run(p.name, func(t *testing.T) {
					if got := wantLocation(h.Zones(), p.x, p.y); got != p.want {
						t.Fatalf("test oracle wantLocation(%d,%d) = %q, want %q", p.x, p.y, got, p.want)
					}
					d := mustDevice(t, h, sim.DeviceSpec{ID: "d", Type: "Photometer", PositionX: ptr(p.x), PositionY: ptr(p.y)})
					defer h.DeleteDevice("d")
					checkDeviceLocation(t, d, p.want)
					person := mustPerson(t, h, sim.PersonSpec{ID: "p", Type: "Man", PositionX: ptr(p.x), PositionY: ptr(p.y)})
					defer h.DeletePerson("p")
					wantPerson := p.want
					if wantPerson == "" {
						wantPerson = sim.LocationUnknown
					}
					if person.Location != wantPerson {
						t.Errorf("person at (%d,%d): Location = %q, want %q", p.x, p.y, person.Location, wantPerson)
					}
				})
			}
		})
	}
}

func TestLocationTieGoesToFirstCreated(t *testing.T) {
	tests := []struct {
		name  string
		zones []sim.ZoneSpec
		x, y  int
		want  string
	}{
		{"same squares, a first", []sim.ZoneSpec{rect("a", 0, 0, 100, 100), rect("b", 50, 50, 150, 150)}, 75, 75, "a"},
		{"same squares, b first", []sim.ZoneSpec{rect("b", 50, 50, 150, 150), rect("a", 0, 0, 100, 100)}, 75, 75, "b"},
		{"same area, other shapes", []sim.ZoneSpec{rect("wide", 0, 0, 100, 50), rect("tall", 0, 0, 50, 100)}, 10, 10, "wide"},
		{"identical zones", []sim.ZoneSpec{rect("z2", 0, 0, 10, 10), rect("z1", 0, 0, 10, 10)}, 10, 10, "z2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			for _, z := range tt.zones {
				mustZone(t, h, z)
			}
			d := mustDevice(t, h, sim.DeviceSpec{ID: "d", Type: "Heater", PositionX: ptr(tt.x), PositionY: ptr(tt.y)})
			checkDeviceLocation(t, d, tt.want)
			if p := mustPerson(t, h, sim.PersonSpec{ID: "p", Type: "Woman", PositionX: ptr(tt.x), PositionY: ptr(tt.y)}); p.Location != tt.want {
				t.Errorf("person at (%d,%d): Location = %q, want %q", tt.x, tt.y, p.Location, tt.want)
			}
		})
	}

	t.Run("creation order, not update order", func(t *testing.T) {
		h, _ := newHome(t)
		mustZone(t, h, rect("first", 0, 0, 100, 100))
		mustZone(t, h, rect("second", 50, 50, 150, 150))
		mustDevice(t, h, sim.DeviceSpec{ID: "d", Type: "Heater", PositionX: ptr(75), PositionY: ptr(75)})
		mustPerson(t, h, sim.PersonSpec{ID: "p", Type: "Woman", PositionX: ptr(75), PositionY: ptr(75)})
		steps := []struct {
			name   string
			update sim.ZoneUpdate
			want   string
		}{
			{"first moved away", sim.ZoneUpdate{LeftX: ptr(500), RightX: ptr(600)}, "second"},
			{"first moved back", sim.ZoneUpdate{LeftX: ptr(0), RightX: ptr(100)}, "first"},
			{"first renamed", sim.ZoneUpdate{Name: ptr("Premier")}, "first"},
		}
		for _, s := range steps {
			mustUpdateZone(t, h, "first", s.update)
			want := map[string]string{"device/d": s.want, "person/p": s.want}
			if diff := cmp.Diff(want, locations(t, h)); diff != "" {
				t.Errorf("after %s: locations (-want +got):\n%s", s.name, diff)
			}
		}
	})
}

func TestLocationOutsideEveryZone(t *testing.T) {
	h, _ := newHome(t)
	mustZone(t, h, rect("kitchen", 0, 0, 100, 100))
	tests := []struct {
		name   string
		x, y   *int
		wantXY [2]int
	}{
		{"placed outside", ptr(500), ptr(500), [2]int{500, 500}},
		{"unplaced", nil, nil, [2]int{-1, -1}},
		{"only x inside", ptr(50), nil, [2]int{50, -1}},
		{"only y inside", nil, ptr(50), [2]int{-1, 50}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := fmt.Sprint("o", i)
			d := mustDevice(t, h, sim.DeviceSpec{ID: id, Type: "Heater", PositionX: tt.x, PositionY: tt.y})
			if got := [2]int{d.PositionX, d.PositionY}; got != tt.wantXY {
				t.Errorf("device position = %v, want %v", got, tt.wantXY)
			}
			checkDeviceLocation(t, d, "")
			p := mustPerson(t, h, sim.PersonSpec{ID: id, Type: "Man", PositionX: tt.x, PositionY: tt.y})
			if got := [2]int{p.PositionX, p.PositionY}; got != tt.wantXY {
				t.Errorf("person position = %v, want %v", got, tt.wantXY)
			}
			if p.Location != sim.LocationUnknown {
				t.Errorf("person Location = %q, want %q", p.Location, sim.LocationUnknown)
			}
		})
	}
}

func TestRelocationOnZoneChanges(t *testing.T) {
	h, _ := newHome(t)
	mustDevice(t, h, sim.DeviceSpec{ID: "d1", Type: "Heater", PositionX: ptr(50), PositionY: ptr(50)})
	mustDevice(t, h, sim.DeviceSpec{ID: "d2", Type: "DimmerLight", PositionX: ptr(150), PositionY: ptr(50)})
	mustDevice(t, h, sim.DeviceSpec{ID: "d3", Type: "Heater"}) // never placed
	mustPerson(t, h, sim.PersonSpec{ID: "p1", Type: "Father", PositionX: ptr(50), PositionY: ptr(50)})
	mustPerson(t, h, sim.PersonSpec{ID: "p2", Type: "Mother", PositionX: ptr(150), PositionY: ptr(50)})
	const unknown = sim.LocationUnknown

	steps := []struct {
		name string
		do   func(t *testing.T)
		want map[string]string
	}{
		{"no zones", func(*testing.T) {}, map[string]string{
			"device/d1": "", "device/d2": "", "device/d3": "", "person/p1": unknown, "person/p2": unknown}},
		{"zone created over d1 and p1", func(t *testing.T) { mustZone(t, h, rect("z", 0, 0, 100, 100)) }, map[string]string{
			"device/d1": "z", "device/d2": "", "device/d3": "", "person/p1": "z", "person/p2": unknown}},
		{"zone moved over d2 and p2", func(t *testing.T) {
			mustUpdateZone(t, h, "z", sim.ZoneUpdate{LeftX: ptr(100), RightX: ptr(200)})
		}, map[string]string{
			"device/d1": "", "device/d2": "z", "device/d3": "", "person/p1": unknown, "person/p2": "z"}},
		{"zone resized over both", func(t *testing.T) { mustUpdateZone(t, h, "z", sim.ZoneUpdate{LeftX: ptr(0)}) }, map[string]string{
			"device/d1": "z", "device/d2": "z", "device/d3": "", "person/p1": "z", "person/p2": "z"}},
		{"smaller zone created inside", func(t *testing.T) { mustZone(t, h, rect("inner", 140, 40, 160, 60)) }, map[string]string{
			"device/d1": "z", "device/d2": "inner", "device/d3": "", "person/p1": "z", "person/p2": "inner"}},
		{"zone resized smaller than inner", func(t *testing.T) {
			mustUpdateZone(t, h, "z", sim.ZoneUpdate{LeftX: ptr(145), TopY: ptr(45), RightX: ptr(155), BottomY: ptr(55)})
		}, map[string]string{
			"device/d1": "", "device/d2": "z", "device/d3": "", "person/p1": unknown, "person/p2": "z"}},
		{"zone deleted", func(t *testing.T) {
			if err := h.DeleteZone("z"); err != nil {
				t.Fatalf("DeleteZone(z) = %v", err)
			}
		}, map[string]string{
			"device/d1": "", "device/d2": "inner", "device/d3": "", "person/p1": unknown, "person/p2": "inner"}},
		{"last zone deleted", func(t *testing.T) {
			if err := h.DeleteZone("inner"); err != nil {
				t.Fatalf("DeleteZone(inner) = %v", err)
			}
		}, map[string]string{
			"device/d1": "", "device/d2": "", "device/d3": "", "person/p1": unknown, "person/p2": unknown}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.do(t)
			if diff := cmp.Diff(s.want, locations(t, h)); diff != "" {
				t.Errorf("locations (-want +got):\n%s", diff)
			}
			d3, err := h.Device("d3")
			if err != nil {
				t.Fatalf("Device(d3) = %v", err)
			}
			if d3.PositionX != -1 || d3.PositionY != -1 {
				t.Errorf("unplaced device moved to (%d,%d), want (-1,-1)", d3.PositionX, d3.PositionY)
			}
		})
	}
}

func TestDevicePlacedAtCreation(t *testing.T) {
	h, _ := newHome(t)
	mustZone(t, h, rect("kitchen", 410, 370, 655, 580))
	tests := []struct {
		name   string
		x, y   *int
		want   string
		wantXY [2]int
	}{
		{"placed inside", ptr(500), ptr(400), "kitchen", [2]int{500, 400}},
		{"placed on the corner", ptr(410), ptr(580), "kitchen", [2]int{410, 580}},
		{"placed outside", ptr(10), ptr(10), "", [2]int{10, 10}},
		{"unplaced", nil, nil, "", [2]int{-1, -1}},
		{"explicitly unplaced", ptr(-1), ptr(-1), "", [2]int{-1, -1}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustDevice(t, h, sim.DeviceSpec{ID: fmt.Sprint("d", i), Type: "iCasa.Heater", PositionX: tt.x, PositionY: tt.y})
			if got := [2]int{d.PositionX, d.PositionY}; got != tt.wantXY {
				t.Errorf("position = %v, want %v", got, tt.wantXY)
			}
			checkDeviceLocation(t, d, tt.want)
		})
	}
}

func TestZoneMeasures(t *testing.T) {
	tests := []struct {
		name       string
		zone       sim.Zone
		wantX      int
		wantY      int
		wantArea   float64
		wantVolume float64
	}{
		{"square", sim.Zone{RightX: 100, BottomY: 100}, 50, 50, 1.96, 1.96 * 1.4},
		{"odd sizes truncate the centre", sim.Zone{LeftX: 10, TopY: 20, RightX: 15, BottomY: 27}, 12, 23, 5 * 0.014 * 7 * 0.014, 5 * 0.014 * 7 * 0.014 * 1.4},
		{"zero size", sim.Zone{LeftX: 7, TopY: 8, RightX: 7, BottomY: 8}, 7, 8, 0, 0},
		{"negative odd sizes truncate toward zero", sim.Zone{LeftX: -11, TopY: -20, RightX: 0, BottomY: -13}, -5, -16, 11 * 0.014 * 7 * 0.014, 11 * 0.014 * 7 * 0.014 * 1.4},
		{"across zero", sim.Zone{LeftX: -3, TopY: -10, RightX: 2, BottomY: 10}, 0, 0, 5 * 0.014 * 20 * 0.014, 5 * 0.014 * 20 * 0.014 * 1.4},
		{"far coordinates", sim.Zone{LeftX: 999_999_999, TopY: -1_000_000_000, RightX: 1_000_000_000, BottomY: -999_999_999}, 999_999_999, -999_999_999, 0.014 * 0.014, 0.014 * 0.014 * 1.4},
		{"Volume variable wins", sim.Zone{RightX: 100, BottomY: 100, Variables: map[string]float64{sim.VarVolume: 42}}, 50, 50, 1.96, 42},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if x, y := tt.zone.Centre(); x != tt.wantX || y != tt.wantY {
				t.Errorf("Centre() = (%d,%d), want (%d,%d)", x, y, tt.wantX, tt.wantY)
			}
			if got := tt.zone.AreaM2(); math.Abs(got-tt.wantArea) > 1e-12 {
				t.Errorf("AreaM2() = %v, want %v", got, tt.wantArea)
			}
			if got := tt.zone.VolumeM3(); math.Abs(got-tt.wantVolume) > 1e-12 {
				t.Errorf("VolumeM3() = %v, want %v", got, tt.wantVolume)
			}
		})
	}
}

// TestUnplacedDevice: a device created without a position is outside every
// zone, even one that covers -1,-1 (plans may use negative coordinates),
// and has no effect there, until an update gives it a position (-1,-1
// included) or a location; a script of the home keeps it unplaced.
func TestUnplacedDevice(t *testing.T) {
	h, _ := newHome(t)
	mustZone(t, h, rect("around", -10, -10, 10, 10))
	unplaced := mustDevice(t, h, sim.DeviceSpec{ID: "u", Type: "Heater", Properties: map[string]any{"heater.powerLevel": 1.0}})
	if unplaced.PositionX != -1 || unplaced.PositionY != -1 {
		t.Errorf("new device without a position at (%d,%d), want (-1,-1)", unplaced.PositionX, unplaced.PositionY)
	}
	checkDeviceLocation(t, unplaced, "")
	checkDeviceLocation(t, mustDevice(t, h, placed("p", "Thermometer", -1, -1, nil)), "around")
	mustDevice(t, h, sim.DeviceSpec{ID: "v", Type: "Thermometer"})
	mustDevice(t, h, sim.DeviceSpec{ID: "w", Type: "Thermometer"})
	mustDevice(t, h, sim.DeviceSpec{ID: "x", Type: "Thermometer", PositionX: ptr(-1)}) // one coordinate is a position

	// A zone made, moved or resized later does not place them either.
	mustZone(t, h, rect("inner", -5, -5, 5, 5))
	mustUpdateZone(t, h, "around", sim.ZoneUpdate{LeftX: ptr(-20)})
	mustAdvance(t, h, time.Minute)
	for _, z := range h.Zones() {
		if v, ok := z.Variables[sim.VarTemperature]; ok && v != sim.DefaultTemperature {
			t.Errorf("an unplaced heater ran for a minute: %s's Temperature = %v, want none or %v", z.ID, v, sim.DefaultTemperature)
		}
	}
	want := map[string]string{"device/u": "", "device/p": "inner", "device/v": "", "device/w": "", "device/x": "inner"}
	if diff := cmp.Diff(want, locations(t, h)); diff != "" {
		t.Errorf("locations (-want +got):\n%s", diff)
	}

	// A script of the home restores them as they are.
	var script bytes.Buffer
	if err := sim.WriteScript(&script, h, time.UTC); err != nil {
		t.Fatal(err)
	}
	s, err := sim.ParseScript(&script, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	restored, _ := newHome(t)
	applyScript(t, restored, s)
	if diff := cmp.Diff(want, locations(t, restored)); diff != "" {
		t.Errorf("locations after a round trip through a script (-want +got):\n%s", diff)
	}

	// Placed at -1,-1 where no zone is, and never placed, survive a script
	// too: a zone made after the round trip locates only the first.
	bare, _ := newHome(t)
	mustDevice(t, bare, placed("q", "Thermometer", -1, -1, nil))
	mustDevice(t, bare, sim.DeviceSpec{ID: "u", Type: "Thermometer"})
	script.Reset()
	if err := sim.WriteScript(&script, bare, time.UTC); err != nil {
		t.Fatal(err)
	}
	if s, err = sim.ParseScript(&script, time.UTC); err != nil {
		t.Fatal(err)
	}
	again, _ := newHome(t)
	applyScript(t, again, s)
	for _, home := range []*sim.Home{bare, again} {
		mustZone(t, home, rect("late", -5, -5, 5, 5))
		if diff := cmp.Diff(map[string]string{"device/q": "late", "device/u": ""}, locations(t, home)); diff != "" {
			t.Errorf("locations once a zone covers -1,-1 (-want +got):\n%s", diff)
		}
	}

	// Anything else moves them: a position, -1,-1 too, or a location; other
	// updates do not.
	mustUpdateDevice(t, h, "w", sim.DeviceUpdate{Name: ptr("still unplaced")})
	mustUpdateDevice(t, h, "v", sim.DeviceUpdate{PositionX: ptr(-1), PositionY: ptr(-1)})
	mustUpdateDevice(t, h, "u", sim.DeviceUpdate{Location: ptr("around")}) // its centre lies in inner
	want = map[string]string{"device/u": "inner", "device/p": "inner", "device/v": "inner", "device/w": "", "device/x": "inner"}
	if diff := cmp.Diff(want, locations(t, h)); diff != "" {
		t.Errorf("locations after the moves (-want +got):\n%s", diff)
	}
	mustAdvance(t, h, time.Minute)
	if got := temperature(t, h, "inner"); got <= sim.DefaultTemperature {
		t.Errorf("inner's Temperature = %v after a minute of the placed heater, want above %v", got, sim.DefaultTemperature)
	}
}
