package main

import (
	"fmt"

	"github.com/pervasim/pervasim/examples/scripts"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

// setupDemo loads the example house and plays it on a winter day (the home
// is in the realistic model: heat leaks to a cold outdoors, the sun rises
// and sets), and runs a thermostat chain in the living room: its
// thermometer, through a router, drives its heater to keep it between 19 and
// 21 °C. The other rooms follow what the script does to their heaters.
func setupDemo(home *sim.Home, engine *mediation.Engine) error {
	// A clear January day in Grenoble: -3 °C before dawn, 5 °C at 15:00.
	if _, err := home.UpdateEnvironment(sim.EnvironmentUpdate{OutdoorMin: new(270.15), OutdoorMax: new(278.15)}); err != nil {
		return err
	}
	if _, err := home.AddScript("house.bhv", scripts.House); err != nil {
		return err
	}
	if _, err := home.SetScriptState("house.bhv", sim.ScriptStarted); err != nil {
		return err
	}
	if err := home.Advance(0); err != nil { // build the house: the script's first actions
		return err
	}
	ch, err := engine.CreateChain("thermostat")
	if err != nil {
		return err
	}
	steps := []func() error{
		func() error {
			_, err := ch.AddAdapter("device-in", "thermometer", map[string]any{
				"devices": "livingroom-thermometer", "property": "current_temperature", "current": true})
			return err
		},
		func() error {
			_, err := ch.AddMediator("router", "band", map[string]any{
				"conditions": map[string]any{"(value<=292.15)": "cold", "(value>=294.15)": "warm"}})
			return err
		},
		func() error {
			_, err := ch.AddAdapter("device-out", "heat", map[string]any{
				"device": "livingroom-heater", "property": "heater.powerLevel", "value": 1.0})
			return err
		},
		func() error {
			_, err := ch.AddAdapter("device-out", "rest", map[string]any{
				"device": "livingroom-heater", "property": "heater.powerLevel", "value": 0.0})
			return err
		},
		func() error { _, err := ch.Bind("thermometer:out", "band:in", "", nil); return err },
		func() error { _, err := ch.Bind("band:cold", "heat:in", "", nil); return err },
		func() error { _, err := ch.Bind("band:warm", "rest:in", "", nil); return err },
		ch.Start,
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	return nil
}
