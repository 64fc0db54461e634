package sim_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

// TestHomeBounds: a home made with MaxZones, MaxDevices and MaxPersons
// refuses, as busy and changing nothing, the creation of one more, from a
// method or a script; deleting one makes room again; zero is no bound and
// a negative bound is invalid.
func TestHomeBounds(t *testing.T) {
	const zones, devices, persons = 2, 40, 3 // 40: past the short lists kept without a map
	h, err := sim.New(sim.Config{MaxZones: zones, MaxDevices: devices, MaxPersons: persons})
	if err != nil {
		t.Fatal(err)
	}
	create := map[string]func(i int) error{
		"zone": func(i int) error {
			_, err := h.CreateZone(sim.ZoneSpec{ID: fmt.Sprint("z", i), LeftX: 100 * i, RightX: 100*i + 50, BottomY: 50})
			return err
		},
		"device": func(i int) error {
			_, err := h.CreateDevice(sim.DeviceSpec{ID: fmt.Sprint("d", i), Type: "Thermometer"})
			return err
		},
		"person": func(i int) error {
			_, err := h.CreatePerson(sim.PersonSpec{ID: fmt.Sprint("p", i), Type: "Grandfather"})
			return err
		},
	}
	remove := map[string]func(i int) error{
		"zone":   func(i int) error { return h.DeleteZone(fmt.Sprint("z", i)) },
		"device": func(i int) error { return h.DeleteDevice(fmt.Sprint("d", i)) },
		"person": func(i int) error { return h.DeletePerson(fmt.Sprint("p", i)) },
	}
	counts := func() []int { return []int{len(h.Zones()), len(h.Devices()), len(h.Persons())} }
	for _, tc := range []struct {
		what string
		max  int
		flag string
	}{{"zone", zones, "-max-zones"}, {"device", devices, "-max-devices"}, {"person", persons, "-max-persons"}} {
		for i := range tc.max {
			if err := create[tc.what](i); err != nil {
				t.Fatalf("%s %d of %d: %v", tc.what, i+1, tc.max, err)
			}
		}
		before := counts()
		err := create[tc.what](tc.max)
		if !errors.Is(err, sim.ErrBusy) || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%s %d past the bound of %d: %v, want busy naming %s", tc.what, tc.max+1, tc.max, err, tc.flag)
		}
		if d := cmp.Diff(before, counts()); d != "" {
			t.Errorf("the refused %s changed the home (-before +after):\n%s", tc.what, d)
		}
		// A used id is still a conflict, not busy.
		if err := create[tc.what](0); !errors.Is(err, sim.ErrConflict) {
			t.Errorf("%s with a used id at the bound: %v, want a conflict", tc.what, err)
		}
		if err := remove[tc.what](0); err != nil {
			t.Fatal(err)
		}
		if err := create[tc.what](tc.max); err != nil {
			t.Errorf("%s after a delete made room: %v", tc.what, err)
		}
	}

	// A script's creation past a bound fails, counted; the rest runs.
	s, err := h.ParseScript(strings.NewReader(`<behavior startdate="01/01/2020-00:00:00" factor="1">
<create-device id="extra" type="Thermometer"/>
<create-zone id="zx" leftX="0" topY="500" X-Length="10" Y-Length="10"/>
</behavior>`))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range s.Actions {
		if err := a.Apply(h); !errors.Is(err, sim.ErrBusy) {
			t.Errorf("script action %v past the bound: %v, want busy", a, err)
		}
	}
	if d := cmp.Diff([]int{zones, devices, persons}, counts()); d != "" {
		t.Errorf("zones, devices, persons (-want +got):\n%s", d)
	}

	if _, err := sim.New(sim.Config{MaxDevices: -1}); !errors.Is(err, sim.ErrInvalid) {
		t.Errorf("a negative bound: %v, want invalid", err)
	}
	free := sim.MustNew(sim.Config{})
	for i := range 100 {
		if _, err := free.CreateDevice(sim.DeviceSpec{ID: fmt.Sprint("d", i), Type: "Thermometer"}); err != nil {
			t.Fatalf("no bound: device %d: %v", i, err)
		}
	}
}
