package sim_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

// TestWriteScriptRandomRoundTrip builds random homes of cameras, medical
// devices, presence sensors and persons, made faulty, deactivated,
// recording or not as persons walk, and checks that the script of each
// restores Devices, Persons and Zones.
func TestWriteScriptRandomRoundTrip(t *testing.T) {
	kinds := []string{"Camera", "BathroomScale", "Sphygmometer", "MedicalThermometer", "PresenceSensor", "Thermometer", "Photometer", "BinaryLight", "MotionSensor"}
	nfaulty, nseen, nerr, nout, nwit := 0, 0, 0, 0, 0
	defer func() {
		t.Logf("faulty %d, seen %d, errors %d, persons stepped out in %d, witnesses in %d", nfaulty, nseen, nerr, nout, nwit)
	}()
	for seed := uint64(0); seed < 1500; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		phys := sim.PhysicsContract
		if r.IntN(2) == 0 {
			phys = sim.PhysicsRealistic
		}
		h, err := sim.New(sim.Config{WallClock: clock.NewMock(), StartDate: time.Date(2024, 3, 10, 8, 15, 42, 0, time.UTC), Location: time.UTC, Physics: phys})
		if err != nil {
			t.Fatal(err)
		}
		var ops []string
		errs := 0
		do := func(desc string, err error) {
			if err != nil {
				desc += " ERR " + err.Error()
				errs++
			}
			ops = append(ops, desc)
		}
		nz := 1 + r.IntN(3)
		for i := 0; i < nz; i++ {
			x := i * 500
			_, err := h.CreateZone(sim.ZoneSpec{ID: fmt.Sprintf("z%d", i), LeftX: x, TopY: 0, RightX: x + 400, BottomY: 400})
			do(fmt.Sprintf("zone z%d", i), err)
		}
		if r.IntN(3) == 0 { // a zone nested in z0
			_, err := h.CreateZone(sim.ZoneSpec{ID: "inner", LeftX: 100, TopY: 100, RightX: 200, BottomY: 200})
			do("zone inner", err)
		}
		pos := func() (int, int) {
			if r.IntN(8) == 0 {
				return 2000 + r.IntN(100), 2000
			}
			return r.IntN(nz)*500 + r.IntN(400), r.IntN(400)
		}
		nd := 1 + r.IntN(5)
		for i := 0; i < nd; i++ {
			k := kinds[r.IntN(len(kinds))]
			x, y := pos()
			var props map[string]any
			if k == "Camera" && r.IntN(2) == 0 {
				props = map[string]any{"camera.recording": true}
			}
			_, err := h.CreateDevice(placed(fmt.Sprintf("d%d", i), k, x, y, props))
			do(fmt.Sprintf("device d%d %s at %d,%d %v", i, k, x, y, props), err)
		}
		np := r.IntN(8)
		for i := 0; i < np; i++ {
			x, y := pos()
			pid := fmt.Sprintf("p%d", i)
			if i == 0 && r.IntN(3) == 0 {
				pid = "fault-witness"
			}
			_, err := h.CreatePerson(sim.PersonSpec{ID: pid, Type: "Man", PositionX: &x, PositionY: &y})
			do(fmt.Sprintf("person p%d at %d,%d", i, x, y), err)
		}
		for step := 0; step < 30; step++ {
			switch r.IntN(6) {
			case 0, 1:
				if np == 0 {
					continue
				}
				id := h.Persons()[r.IntN(np)].ID
				x, y := pos()
				if r.IntN(2) == 0 { // beside a device
					d := h.Devices()[r.IntN(nd)]
					x, y = d.PositionX+r.IntN(5), d.PositionY+r.IntN(5)
				}
				_, err := h.UpdatePerson(id, sim.PersonUpdate{PositionX: &x, PositionY: &y})
				do(fmt.Sprintf("walk %s %d,%d", id, x, y), err)
			case 2:
				id := fmt.Sprintf("d%d", r.IntN(nd))
				v := []string{"yes", "no"}[r.IntN(2)]
				_, err := h.UpdateDevice(id, sim.DeviceUpdate{Fault: &v})
				do(fmt.Sprintf("fault %s %s", id, v), err)
			case 3:
				id := fmt.Sprintf("d%d", r.IntN(nd))
				v := []string{"activated", "deactivated"}[r.IntN(2)]
				_, err := h.UpdateDevice(id, sim.DeviceUpdate{State: &v})
				do(fmt.Sprintf("state %s %s", id, v), err)
			case 4:
				id := fmt.Sprintf("d%d", r.IntN(nd))
				rec := r.IntN(2) == 0
				_, err := h.UpdateDevice(id, sim.DeviceUpdate{Properties: map[string]any{"camera.recording": rec}})
				do(fmt.Sprintf("recording %s %v", id, rec), err)
			case 5:
				id := fmt.Sprintf("d%d", r.IntN(nd))
				x, y := pos()
				_, err := h.UpdateDevice(id, sim.DeviceUpdate{PositionX: &x, PositionY: &y})
				do(fmt.Sprintf("move %s %d,%d", id, x, y), err)
			}
		}
		for _, d := range h.Devices() {
			if d.Fault == sim.FaultYes {
				nfaulty++
			}
			if d.Properties["presence_detected"] == true || d.Properties["camera.personCount"] != nil && d.Properties["camera.personCount"] != 0.0 {
				nseen++
			}
		}
		nerr += errs
		var buf bytes.Buffer
		if err := sim.WriteScript(&buf, h, time.UTC); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(buf.Bytes(), []byte(`newX="-1000000000"`)) {
			nout++
		}
		if bytes.Contains(buf.Bytes(), []byte(`fault-witness`)) {
			nwit++
		}
		s, err := sim.ParseScript(bytes.NewReader(buf.Bytes()), time.UTC)
		if err != nil {
			t.Fatalf("seed %d: ParseScript = %v\n%s", seed, err, buf.String())
		}
		restored, err := sim.New(sim.Config{WallClock: clock.NewMock(), Location: time.UTC, Physics: phys})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := restored.UpdateClock(sim.ClockUpdate{StartDate: ptr(s.StartDate.UnixMilli() + 3600_000)}); err != nil {
			t.Fatal(err)
		}
		failed := false
		for _, a := range s.Actions {
			if err := a.Apply(restored); err != nil {
				t.Errorf("seed %d: Apply(%s at line %d) = %v\nops: %q\n%s", seed, a.Command, a.Line, err, ops, buf.String())
				failed = true
				break
			}
		}
		if failed {
			continue
		}
		if diff := cmp.Diff(h.Devices(), restored.Devices()); diff != "" {
			t.Errorf("seed %d: Devices() restored (-want +got):\n%s\nops: %q\nscript:\n%s", seed, diff, ops, buf.String())
		}
		if diff := cmp.Diff(h.Persons(), restored.Persons()); diff != "" {
			t.Errorf("seed %d: Persons() (-want +got):\n%s", seed, diff)
		}
		if diff := cmp.Diff(h.Zones(), restored.Zones()); diff != "" {
			t.Errorf("seed %d: Zones() (-want +got):\n%s\nops: %q\nscript:\n%s", seed, diff, ops, buf.String())
		}
	}
}
