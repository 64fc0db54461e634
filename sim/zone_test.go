package sim_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pervasim/pervasim/sim"
)

// ptr returns a pointer to a copy of v, for the optional fields of updates.
func ptr[T any](v T) *T { return &v }

// newHome returns an empty home driven by a mock wall clock (at the Unix
// epoch), with its date strings in UTC.
func newHome(tb testing.TB) (*sim.Home, *clock.Mock) {
	tb.Helper()
	mock := clock.NewMock()
	h, err := sim.New(sim.Config{WallClock: mock, Location: time.UTC})
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return h, mock
}

// rect returns the spec of a zone with default name, isRoom and variables.
func rect(id string, left, top, right, bottom int) sim.ZoneSpec {
	return sim.ZoneSpec{ID: id, LeftX: left, TopY: top, RightX: right, BottomY: bottom}
}

func mustZone(tb testing.TB, h *sim.Home, spec sim.ZoneSpec) sim.Zone {
	tb.Helper()
	z, err := h.CreateZone(spec)
	if err != nil {
		tb.Fatalf("CreateZone(%+v) = %v, want nil error", spec, err)
	}
	return z
}

func mustUpdateZone(tb testing.TB, h *sim.Home, id string, u sim.ZoneUpdate) sim.Zone {
	tb.Helper()
	z, err := h.UpdateZone(id, u)
	if err != nil {
		tb.Fatalf("UpdateZone(%q, %+v) = %v, want nil error", id, u, err)
	}
	return z
}

func mustGetZone(tb testing.TB, h *sim.Home, id string) sim.Zone {
	tb.Helper()
	z, err := h.Zone(id)
	if err != nil {
		tb.Fatalf("Zone(%q) = %v, want nil error", id, err)
	}
	return z
}

// checkErr fails unless err is nil when want is nil, or wraps want otherwise.
func checkErr(tb testing.TB, call string, err, want error) {
	tb.Helper()
	switch {
	case want == nil && err != nil:
		tb.Fatalf("%s = %v, want nil error", call, err)
	case want != nil && !errors.Is(err, want):
		tb.Fatalf("%s = %v, want an error wrapping %v", call, err, want)
	}
}

func zoneIDs(zs []sim.Zone) []string {
	ids := make([]string, len(zs))
	for i, z := range zs {
		ids[i] = z.ID
	}
	return ids
}

func TestCreateZone(t *testing.T) {
	long := strings.Repeat("z", sim.MaxIDLength)
	tests := []struct {
		name string
		spec sim.ZoneSpec
		want sim.Zone
	}{
		{
			name: "defaults",
			spec: rect("kitchen", 410, 370, 655, 580),
			want: sim.Zone{ID: "kitchen", Name: "kitchen", IsRoom: true, LeftX: 410, TopY: 370, RightX: 655, BottomY: 580, Variables: map[string]float64{}},
		},
		{
			name: "name and isRoom false",
			spec: sim.ZoneSpec{ID: "hall", Name: "Entrance hall", IsRoom: ptr(false), RightX: 10, BottomY: 20},
			want: sim.Zone{ID: "hall", Name: "Entrance hall", IsRoom: false, RightX: 10, BottomY: 20, Variables: map[string]float64{}},
		},
		{
			name: "isRoom true sent",
			spec: sim.ZoneSpec{ID: "bath", IsRoom: ptr(true), RightX: 1, BottomY: 1},
			want: sim.Zone{ID: "bath", Name: "bath", IsRoom: true, RightX: 1, BottomY: 1, Variables: map[string]float64{}},
		},
		{
			name: "variables",
			spec: sim.ZoneSpec{ID: "bed", RightX: 5, BottomY: 5, Variables: map[string]float64{"Temperature": 295.5, "Volume": 12}},
			want: sim.Zone{ID: "bed", Name: "bed", IsRoom: true, RightX: 5, BottomY: 5, Variables: map[string]float64{"Temperature": 295.5, "Volume": 12}},
		},
		{
			name: "zero size",
			spec: rect("point", 7, 8, 7, 8),
			want: sim.Zone{ID: "point", Name: "point", IsRoom: true, LeftX: 7, TopY: 8, RightX: 7, BottomY: 8, Variables: map[string]float64{}},
		},
		{
			name: "whole plan",
			spec: rect("plan", 0, 0, sim.MaxCoordinate, sim.MaxCoordinate),
			want: sim.Zone{ID: "plan", Name: "plan", IsRoom: true, RightX: sim.MaxCoordinate, BottomY: sim.MaxCoordinate, Variables: map[string]float64{}},
		},
		{
			name: "id with every allowed character",
			spec: rect("Az09-_.:", 0, 0, 1, 1),
			want: sim.Zone{ID: "Az09-_.:", Name: "Az09-_.:", IsRoom: true, RightX: 1, BottomY: 1, Variables: map[string]float64{}},
		},
		{
			name: "id of MaxIDLength",
			spec: rect(long, 0, 0, 1, 1),
			want: sim.Zone{ID: long, Name: long, IsRoom: true, RightX: 1, BottomY: 1, Variables: map[string]float64{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			got, err := h.CreateZone(tt.spec)
			if err != nil {
				t.Fatalf("CreateZone(%+v) = %v, want nil error", tt.spec, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CreateZone(%+v) (-want +got):\n%s", tt.spec, diff)
			}
			if got.Variables == nil {
				t.Errorf("CreateZone(%+v).Variables = nil, want a non-nil map", tt.spec)
			}
			if diff := cmp.Diff(tt.want, mustGetZone(t, h, tt.spec.ID)); diff != "" {
				t.Errorf("Zone(%q) after create (-want +got):\n%s", tt.spec.ID, diff)
			}
		})
	}
}

func TestCreateZoneInvalid(t *testing.T) {
	tests := []struct {
		name string
		spec sim.ZoneSpec
		want error
	}{
		{"empty id", rect("", 0, 0, 1, 1), sim.ErrInvalid},
		{"id of 129 chars", rect(strings.Repeat("z", sim.MaxIDLength+1), 0, 0, 1, 1), sim.ErrInvalid},
		{"id with slash", rect("kitchen/1", 0, 0, 1, 1), sim.ErrInvalid},
		{"id with space", rect("living room", 0, 0, 1, 1), sim.ErrInvalid},
		{"id with unicode", rect("séjour", 0, 0, 1, 1), sim.ErrInvalid},
		{"leftX below the plan", rect("z", -sim.MaxCoordinate-1, 0, 1, 1), sim.ErrInvalid},
		{"topY below the plan", rect("z", 0, -sim.MaxCoordinate-1, 1, 1), sim.ErrInvalid},
		{"rightX beyond MaxCoordinate", rect("z", 0, 0, sim.MaxCoordinate+1, 1), sim.ErrInvalid},
		{"bottomY beyond MaxCoordinate", rect("z", 0, 0, 1, sim.MaxCoordinate+1), sim.ErrInvalid},
		{"rightX < leftX", rect("z", 10, 0, 9, 1), sim.ErrInvalid},
		{"bottomY < topY", rect("z", 0, 10, 1, 9), sim.ErrInvalid},
		{"NaN variable", sim.ZoneSpec{ID: "z", RightX: 1, BottomY: 1, Variables: map[string]float64{"Temperature": math.NaN()}}, sim.ErrInvalid},
		{"+Inf variable", sim.ZoneSpec{ID: "z", RightX: 1, BottomY: 1, Variables: map[string]float64{"Volume": math.Inf(1)}}, sim.ErrInvalid},
		{"-Inf variable", sim.ZoneSpec{ID: "z", RightX: 1, BottomY: 1, Variables: map[string]float64{"Volume": math.Inf(-1)}}, sim.ErrInvalid},
		{"empty variable name", sim.ZoneSpec{ID: "z", RightX: 1, BottomY: 1, Variables: map[string]float64{"": 1}}, sim.ErrInvalid},
		{"duplicate id", rect("taken", 50, 50, 60, 60), sim.ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			mustZone(t, h, rect("taken", 0, 0, 10, 10))
			before := h.Zones()
			got, err := h.CreateZone(tt.spec)
			if !errors.Is(err, tt.want) {
				t.Fatalf("CreateZone(%+v) = %v, want an error wrapping %v", tt.spec, err, tt.want)
			}
			if diff := cmp.Diff(sim.Zone{}, got); diff != "" {
				t.Errorf("CreateZone(%+v) returned a zone with its error (-want +got):\n%s", tt.spec, diff)
			}
			if diff := cmp.Diff(before, h.Zones()); diff != "" {
				t.Errorf("Zones() after failed CreateZone (-want +got):\n%s", diff)
			}
		})
	}
}

func TestZonesCreationOrder(t *testing.T) {
	h, _ := newHome(t)
	if got := h.Zones(); len(got) != 0 {
		t.Fatalf("Zones() of an empty home = %v, want none", got)
	}
	for _, id := range []string{"c", "a", "b"} {
		mustZone(t, h, rect(id, 0, 0, 10, 10))
	}
	steps := []struct {
		name string
		do   func(t *testing.T)
		want []string
	}{
		{"created", func(*testing.T) {}, []string{"c", "a", "b"}},
		{"first updated", func(t *testing.T) {
			mustUpdateZone(t, h, "c", sim.ZoneUpdate{LeftX: ptr(5), Name: ptr("renamed")})
		}, []string{"c", "a", "b"}},
		{"middle deleted", func(t *testing.T) {
			if err := h.DeleteZone("a"); err != nil {
				t.Fatalf("DeleteZone(a) = %v", err)
			}
		}, []string{"c", "b"}},
		{"deleted id recreated goes last", func(t *testing.T) { mustZone(t, h, rect("a", 0, 0, 1, 1)) }, []string{"c", "b", "a"}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.do(t)
			if diff := cmp.Diff(s.want, zoneIDs(h.Zones())); diff != "" {
				t.Errorf("Zones() ids (-want +got):\n%s", diff)
			}
		})
	}
}

func TestZoneNotFound(t *testing.T) {
	h, _ := newHome(t)
	mustZone(t, h, rect("kitchen", 0, 0, 10, 10))
	tests := []struct {
		name string
		call func() error
	}{
		{"Zone", func() error { _, err := h.Zone("nope"); return err }},
		{"Zone is case-sensitive", func() error { _, err := h.Zone("Kitchen"); return err }},
		{"UpdateZone", func() error { _, err := h.UpdateZone("nope", sim.ZoneUpdate{Name: ptr("x")}); return err }},
		{"DeleteZone", func() error { return h.DeleteZone("nope") }},
		{"Zone with an invalid id", func() error { _, err := h.Zone("a/b"); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, sim.ErrNotFound) {
				t.Errorf("%s = %v, want an error wrapping %v", tt.name, err, sim.ErrNotFound)
			}
		})
	}
	if got := len(h.Zones()); got != 1 {
		t.Errorf("len(Zones()) = %d, want 1", got)
	}
}

func TestUpdateZone(t *testing.T) {
	base := sim.ZoneSpec{
		ID: "kitchen", Name: "Kitchen", LeftX: 10, TopY: 20, RightX: 110, BottomY: 220,
		Variables: map[string]float64{"Temperature": 293.15, "Volume": 10},
	}
	baseZone := sim.Zone{
		ID: "kitchen", Name: "Kitchen", IsRoom: true, LeftX: 10, TopY: 20, RightX: 110, BottomY: 220,
		Variables: map[string]float64{"Temperature": 293.15, "Volume": 10},
	}
	tests := []struct {
		name   string
		update sim.ZoneUpdate
		edit   func(z *sim.Zone) // turns baseZone into the wanted zone
	}{
		{"empty update keeps everything", sim.ZoneUpdate{}, func(*sim.Zone) {}},
		{"name", sim.ZoneUpdate{Name: ptr("Cuisine")}, func(z *sim.Zone) { z.Name = "Cuisine" }},
		{"empty name resets to id", sim.ZoneUpdate{Name: ptr("")}, func(z *sim.Zone) { z.Name = "kitchen" }},
		{"isRoom false", sim.ZoneUpdate{IsRoom: ptr(false)}, func(z *sim.Zone) { z.IsRoom = false }},
		{"leftX only keeps the other edges", sim.ZoneUpdate{LeftX: ptr(0)}, func(z *sim.Zone) { z.LeftX = 0 }},
		{"bottomY only", sim.ZoneUpdate{BottomY: ptr(500)}, func(z *sim.Zone) { z.BottomY = 500 }},
		{"every edge", sim.ZoneUpdate{LeftX: ptr(200), TopY: ptr(300), RightX: ptr(250), BottomY: ptr(300)}, func(z *sim.Zone) {
			z.LeftX, z.TopY, z.RightX, z.BottomY = 200, 300, 250, 300
		}},
		{"shrink to zero size", sim.ZoneUpdate{RightX: ptr(10), BottomY: ptr(20)}, func(z *sim.Zone) { z.RightX, z.BottomY = 10, 20 }},
		{"variable added", sim.ZoneUpdate{Variables: map[string]*float64{"Illuminance": ptr(120.5)}}, func(z *sim.Zone) {
			z.Variables["Illuminance"] = 120.5
		}},
		{"variable updated", sim.ZoneUpdate{Variables: map[string]*float64{"Temperature": ptr(300.0)}}, func(z *sim.Zone) {
			z.Variables["Temperature"] = 300
		}},
		{"nil removes a variable", sim.ZoneUpdate{Variables: map[string]*float64{"Volume": nil}}, func(z *sim.Zone) {
			delete(z.Variables, "Volume")
		}},
		{"nil for an absent variable does nothing", sim.ZoneUpdate{Variables: map[string]*float64{"Nope": nil}}, func(*sim.Zone) {}},
		{"variables set and removed together", sim.ZoneUpdate{Variables: map[string]*float64{"Volume": nil, "Temperature": nil, "CO2Concentration": ptr(0.0)}}, func(z *sim.Zone) {
			z.Variables = map[string]float64{"CO2Concentration": 0}
		}},
		{"everything at once", sim.ZoneUpdate{Name: ptr("K"), IsRoom: ptr(false), RightX: ptr(111), Variables: map[string]*float64{"Volume": ptr(-3.5)}}, func(z *sim.Zone) {
			z.Name, z.IsRoom, z.RightX, z.Variables["Volume"] = "K", false, 111, -3.5
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			mustZone(t, h, base)
			want := baseZone
			want.Variables = map[string]float64{"Temperature": 293.15, "Volume": 10}
			tt.edit(&want)
			got, err := h.UpdateZone("kitchen", tt.update)
			if err != nil {
				t.Fatalf("UpdateZone(kitchen, %+v) = %v, want nil error", tt.update, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("UpdateZone(kitchen, %+v) (-want +got):\n%s", tt.update, diff)
			}
			if diff := cmp.Diff(want, mustGetZone(t, h, "kitchen")); diff != "" {
				t.Errorf("Zone(kitchen) after update (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUpdateZoneInvalidChangesNothing(t *testing.T) {
	tests := []struct {
		name   string
		update sim.ZoneUpdate
	}{
		{"valid name + inverted x", sim.ZoneUpdate{Name: ptr("New"), RightX: ptr(5)}},
		{"valid name + inverted y", sim.ZoneUpdate{Name: ptr("New"), BottomY: ptr(5)}},
		{"leftX beyond rightX", sim.ZoneUpdate{LeftX: ptr(111)}},
		{"leftX below the plan", sim.ZoneUpdate{LeftX: ptr(-sim.MaxCoordinate - 1)}},
		{"bottomY beyond MaxCoordinate", sim.ZoneUpdate{BottomY: ptr(sim.MaxCoordinate + 1)}},
		{"valid move + NaN variable", sim.ZoneUpdate{LeftX: ptr(0), Variables: map[string]*float64{"Temperature": ptr(math.NaN())}}},
		{"valid variables + Inf", sim.ZoneUpdate{Variables: map[string]*float64{"A": ptr(1.0), "Temperature": ptr(300.0), "Z": ptr(math.Inf(1))}}},
		{"valid removal + -Inf", sim.ZoneUpdate{Variables: map[string]*float64{"Volume": nil, "B": ptr(math.Inf(-1))}}},
		{"valid isRoom + empty variable name", sim.ZoneUpdate{IsRoom: ptr(false), Variables: map[string]*float64{"": ptr(1.0)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			mustZone(t, h, sim.ZoneSpec{ID: "kitchen", LeftX: 10, TopY: 20, RightX: 110, BottomY: 220,
				Variables: map[string]float64{"Temperature": 293.15, "Volume": 10}})
			mustPerson(t, h, sim.PersonSpec{ID: "p", Type: "Man", PositionX: ptr(15), PositionY: ptr(25)})
			mustDevice(t, h, sim.DeviceSpec{ID: "d", Type: "Heater", PositionX: ptr(15), PositionY: ptr(25)})
			before := mustGetZone(t, h, "kitchen")
			beforeDevices, beforePersons := h.Devices(), h.Persons()
			got, err := h.UpdateZone("kitchen", tt.update)
			if !errors.Is(err, sim.ErrInvalid) {
				t.Fatalf("UpdateZone(kitchen, %+v) = %v, want an error wrapping %v", tt.update, err, sim.ErrInvalid)
			}
			if diff := cmp.Diff(sim.Zone{}, got); diff != "" {
				t.Errorf("UpdateZone returned a zone with its error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, mustGetZone(t, h, "kitchen")); diff != "" {
				t.Errorf("Zone(kitchen) after failed update (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(beforeDevices, h.Devices()); diff != "" {
				t.Errorf("Devices() after failed zone update (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(beforePersons, h.Persons()); diff != "" {
				t.Errorf("Persons() after failed zone update (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeleteZone(t *testing.T) {
	h, _ := newHome(t)
	mustZone(t, h, rect("a", 0, 0, 10, 10))
	mustZone(t, h, rect("b", 0, 0, 10, 10))
	if err := h.DeleteZone("a"); err != nil {
		t.Fatalf("DeleteZone(a) = %v, want nil error", err)
	}
	if _, err := h.Zone("a"); !errors.Is(err, sim.ErrNotFound) {
		t.Errorf("Zone(a) after delete = %v, want an error wrapping %v", err, sim.ErrNotFound)
	}
	if err := h.DeleteZone("a"); !errors.Is(err, sim.ErrNotFound) {
		t.Errorf("DeleteZone(a) twice = %v, want an error wrapping %v", err, sim.ErrNotFound)
	}
	if diff := cmp.Diff([]string{"b"}, zoneIDs(h.Zones())); diff != "" {
		t.Errorf("Zones() ids after delete (-want +got):\n%s", diff)
	}
	// The id is free again.
	mustZone(t, h, rect("a", 1, 1, 2, 2))
}

// TestDeleteZoneDevicesLeaveOneByOne checks the events of a deleted zone's
// devices leaving it: as the devices are relocated one after the other,
// the deleted zone's variables step down with each (two lights: half the
// light, then none), as they always did.
func TestDeleteZoneDevicesLeaveOneByOne(t *testing.T) {
	h := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC, Physics: sim.PhysicsRealistic})
	mustZone(t, h, rect("z", 0, 0, 100, 100))
	for _, id := range []string{"l1", "l2"} {
		mustDevice(t, h, placed(id, "BinaryLight", 50, 50, map[string]any{"binaryLight.powerStatus": true}))
	}
	before := mustGetZone(t, h, "z").Variables
	s := h.Subscribe(100)
	defer s.Close()
	if err := h.DeleteZone("z"); err != nil {
		t.Fatal(err)
	}
	got := map[string][]float64{}
	for len(s.C) > 0 {
		if e := <-s.C; e.Type == sim.EventZoneVariableUpdated && e.ZoneID == "z" {
			got[e.Property] = append(got[e.Property], e.Value.(float64))
		}
	}
	want := map[string][]float64{
		sim.VarIlluminance: {before[sim.VarIlluminance] / 2, 0},
		sim.VarElectricity: {before[sim.VarElectricity] / 2, 0},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-9, 0)); diff != "" {
		t.Errorf("the deleted zone's variables as its devices left (-want +got):\n%s", diff)
	}
}

func TestReset(t *testing.T) {
	h, mock := newHome(t)
	if _, err := h.UpdateClock(sim.ClockUpdate{Factor: ptr(60)}); err != nil {
		t.Fatalf("UpdateClock: %v", err)
	}
	mock.Add(time.Second)
	mustZone(t, h, rect("kitchen", 0, 0, 100, 100))
	mustDevice(t, h, sim.DeviceSpec{ID: "d", Type: "Heater", PositionX: ptr(5), PositionY: ptr(5)})
	mustPerson(t, h, sim.PersonSpec{ID: "p", Type: "Boy"})
	clockBefore := h.Clock()

	h.Reset()

	if got := h.Zones(); len(got) != 0 {
		t.Errorf("Zones() after Reset = %+v, want none", got)
	}
	if got := h.Devices(); len(got) != 0 {
		t.Errorf("Devices() after Reset = %+v, want none", got)
	}
	if got := h.Persons(); len(got) != 0 {
		t.Errorf("Persons() after Reset = %+v, want none", got)
	}
	if diff := cmp.Diff(clockBefore, h.Clock()); diff != "" {
		t.Errorf("Clock() after Reset (-want +got):\n%s", diff)
	}
	mock.Add(time.Second)
	if got, want := h.Clock().CurrentTime, clockBefore.CurrentTime+60_000; got != want {
		t.Errorf("Clock().CurrentTime one second after Reset = %d, want %d (factor kept)", got, want)
	}
	// Every id can be used again.
	mustZone(t, h, rect("kitchen", 0, 0, 100, 100))
	mustDevice(t, h, sim.DeviceSpec{ID: "d", Type: "Heater"})
	mustPerson(t, h, sim.PersonSpec{ID: "p", Type: "Boy"})
}

func TestZoneReturnsCopies(t *testing.T) {
	h, _ := newHome(t)
	spec := sim.ZoneSpec{ID: "kitchen", RightX: 10, BottomY: 10, Variables: map[string]float64{"Volume": 1}}
	created := mustZone(t, h, spec)
	want := sim.Zone{ID: "kitchen", Name: "kitchen", IsRoom: true, RightX: 10, BottomY: 10, Variables: map[string]float64{"Volume": 1}}

	spec.Variables["Volume"] = 2
	spec.Variables["Spec"] = 3
	created.Variables["Created"] = 4
	got := mustGetZone(t, h, "kitchen")
	got.Variables["Got"] = 5
	h.Zones()[0].Variables["Listed"] = 6
	updated := mustUpdateZone(t, h, "kitchen", sim.ZoneUpdate{})
	updated.Variables["Updated"] = 7

	if diff := cmp.Diff(want, mustGetZone(t, h, "kitchen")); diff != "" {
		t.Errorf("Zone(kitchen) after mutating returned values (-want +got):\n%s", diff)
	}
}

func TestNameLengthLimits(t *testing.T) {
	h, _ := newHome(t)
	mustZone(t, h, rect("kitchen", 0, 0, 10, 10))
	mustDevice(t, h, sim.DeviceSpec{ID: "d", Type: "Heater"})
	long := strings.Repeat("v", sim.MaxIDLength+1)
	if _, err := h.UpdateZone("kitchen", sim.ZoneUpdate{Variables: map[string]*float64{long: ptr(1.0)}}); !errors.Is(err, sim.ErrInvalid) {
		t.Errorf("UpdateZone with a %d-byte variable name = %v, want an error wrapping %v", len(long), err, sim.ErrInvalid)
	}
	if _, err := h.UpdateDevice("d", sim.DeviceUpdate{Properties: map[string]any{long: 1.0}}); !errors.Is(err, sim.ErrInvalid) {
		t.Errorf("UpdateDevice with a %d-byte property name = %v, want an error wrapping %v", len(long), err, sim.ErrInvalid)
	}
}

// TestResetBigHome resets a home past the size at which it finds its
// entities by map: the removals are published in creation order, persons,
// devices then zones, and every id is free again.
func TestResetBigHome(t *testing.T) {
	h, _ := newHome(t)
	const n = 40
	var want []sim.Event
	for i := range n {
		mustZone(t, h, rect(fmt.Sprint("z", i), i*10, 0, i*10+9, 9))
		mustDevice(t, h, sim.DeviceSpec{ID: fmt.Sprint("d", i), Type: "Heater", PositionX: ptr(i * 10), PositionY: ptr(5)})
		mustPerson(t, h, sim.PersonSpec{ID: fmt.Sprint("p", i), Type: "Boy", PositionX: ptr(i*10 + 1), PositionY: ptr(5)})
	}
	for i := range n {
		want = append(want, sim.Event{Type: sim.EventPersonRemoved, PersonID: fmt.Sprint("p", i)})
	}
	for i := range n {
		want = append(want, sim.Event{Type: sim.EventDeviceRemoved, DeviceID: fmt.Sprint("d", i)})
	}
	for i := range n {
		want = append(want, sim.Event{Type: sim.EventZoneRemoved, ZoneID: fmt.Sprint("z", i)})
	}
	sub := h.Subscribe(4 * n)
	defer sub.Close()

	h.Reset()

	var got []sim.Event
	for len(got) < len(want) {
		e := <-sub.C
		got = append(got, sim.Event{Type: e.Type, PersonID: e.PersonID, DeviceID: e.DeviceID, ZoneID: e.ZoneID})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events of Reset (-want +got):\n%s", diff)
	}
	if _, err := h.Device("d7"); err == nil {
		t.Errorf("Device(d7) after Reset = nil error, want not found")
	}
	for i := range n {
		mustZone(t, h, rect(fmt.Sprint("z", i), i*10, 0, i*10+9, 9))
		mustDevice(t, h, sim.DeviceSpec{ID: fmt.Sprint("d", i), Type: "Heater", PositionX: ptr(i * 10), PositionY: ptr(5)})
		mustPerson(t, h, sim.PersonSpec{ID: fmt.Sprint("p", i), Type: "Boy", PositionX: ptr(i*10 + 1), PositionY: ptr(5)})
	}
	if d, err := h.Device("d39"); err != nil || d.Location != "z39" {
		t.Errorf("Device(d39) after Reset and re-creation = %+v, %v, want in z39", d, err)
	}
}
