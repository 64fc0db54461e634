// Command apptest is the pattern for testing a pervasive application
// against the simulated home: the application here is a presence-driven
// light (light.go), and light_test.go tests it in a few lines with sim, no
// server and no sleeping. Run the test with `go test ./examples/apptest`;
// the program itself plays a short scene.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/pervasim/pervasim/sim"
)

// PresenceLight is the application under test: it switches a room's light
// on while the room's presence sensor senses someone, and off otherwise.
// Attach it to a home; call the returned stop to detach it.
func PresenceLight(home *sim.Home, sensor, light string) (stop func()) {
	return home.Observe(func(e sim.Event) {
		if e.DeviceID != sensor || e.Property != sim.PropSensedPresence {
			return
		}
		on, _ := e.Value.(bool)
		if _, err := home.UpdateDevice(light, sim.DeviceUpdate{Properties: map[string]any{sim.PropPowerStatus: on}}); err != nil {
			fmt.Println("presence light:", err)
		}
	})
}

func main() { run(os.Stdout) }

// run plays the scene: someone walks into the hall and out again, and the
// lamp follows.
func run(w io.Writer) {
	home := sim.MustNew(sim.Config{})
	at := func(x int) *int { return &x }
	home.CreateZone(sim.ZoneSpec{ID: "hall", RightX: 100, BottomY: 100})
	home.CreateDevice(sim.DeviceSpec{ID: "sensor", Type: "PresenceSensor", PositionX: at(5), PositionY: at(5)})
	home.CreateDevice(sim.DeviceSpec{ID: "lamp", Type: "BinaryLight", PositionX: at(50), PositionY: at(50)})
	defer PresenceLight(home, "sensor", "lamp")()

	show := func(what string) {
		l, _ := home.Device("lamp")
		z, _ := home.Zone("hall")
		fmt.Fprintf(w, "%-22s lamp on: %-5v hall: %.0f lux\n", what, l.Properties[sim.PropPowerStatus], z.Variables[sim.VarIlluminance])
	}
	show("empty hall")
	home.CreatePerson(sim.PersonSpec{ID: "ann", Type: "Woman", PositionX: at(40), PositionY: at(40)})
	show("ann walks in")
	home.UpdatePerson("ann", sim.PersonUpdate{PositionX: at(400)})
	show("ann leaves")
}
