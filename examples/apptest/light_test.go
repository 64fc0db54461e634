package main

import (
	"strings"
	"testing"

	"github.com/pervasim/pervasim/sim"
)

// TestPresenceLight is the pattern to copy: build the home you need, attach
// the application, move people, check what the application did.
func TestPresenceLight(t *testing.T) {
	home := sim.MustNew(sim.Config{})
	at := func(x int) *int { return &x }
	home.CreateZone(sim.ZoneSpec{ID: "hall", RightX: 100, BottomY: 100})
	home.CreateDevice(sim.DeviceSpec{ID: "sensor", Type: "PresenceSensor", PositionX: at(5), PositionY: at(5)})
	home.CreateDevice(sim.DeviceSpec{ID: "lamp", Type: "BinaryLight", PositionX: at(50), PositionY: at(50)})
	defer PresenceLight(home, "sensor", "lamp")()

	lampOn := func() any { d, _ := home.Device("lamp"); return d.Properties["power_status"] }
	home.CreatePerson(sim.PersonSpec{ID: "ann", Type: "Woman", PositionX: at(40), PositionY: at(40)})
	if lampOn() != true {
		t.Errorf("someone in the hall: lamp on = %v, want true", lampOn())
	}
	home.UpdatePerson("ann", sim.PersonUpdate{PositionX: at(400)})
	if lampOn() != false {
		t.Errorf("hall empty again: lamp on = %v, want false", lampOn())
	}
}

// TestRun checks the scene the program plays: the lamp lights the hall
// while ann is in it.
func TestRun(t *testing.T) {
	var b strings.Builder
	run(&b)
	want := `empty hall             lamp on: false hall: 0 lux
ann walks in           lamp on: true  hall: 34694 lux
ann leaves             lamp on: false hall: 0 lux
`
	if b.String() != want {
		t.Errorf("run printed\n%s\nwant\n%s", b.String(), want)
	}
}
