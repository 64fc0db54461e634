// Package sim is a simulated home for testing pervasive applications: zones
// (rooms) on a plan, simulated devices of many kinds, persons who move
// between zones, and one accelerated clock.
//
// A [Home] holds the whole state. Create one with [New], then add zones,
// devices and persons with the typed Create, Update and Delete methods:
//
//	home := sim.MustNew(sim.Config{})
//	home.CreateZone(sim.ZoneSpec{ID: "kitchen", LeftX: 410, TopY: 370, RightX: 655, BottomY: 580})
//	x, y := 500, 400
//	home.CreateDevice(sim.DeviceSpec{ID: "heater-1", Type: "iCasa.Heater", PositionX: &x, PositionY: &y})
//
// # Geometry
//
// Coordinates are integer plan units; one unit is [PlanUnitMeters] and zones
// are [ZoneHeightUnits] high. A point is inside a zone when it lies on or
// within its edges. Where zones overlap, the smallest by area holds the
// point, and ties go to the zone created first. A device or person is
// relocated whenever it moves, and when a zone whose rectangle holds its
// position, before or after the change, is created, moved, resized or
// deleted: no other point's zone can change. A zone change touches nothing
// else: the zones of devices it does not relocate keep their variables as
// they are (a variable a client removed or set by hand stays so until a
// device of that zone changes, or the physics writes it).
//
// # Time
//
// The simulation clock maps real time to simulated time: while running,
// simulated time advances factor times faster than the wall clock injected
// through [Config.WallClock] (a clock.Clock from github.com/benbjohnson/clock,
// so tests can pass clock.NewMock and move time by hand). Pausing freezes it;
// changing the factor re-anchors it without a jump; setting the start date
// restarts simulated time there.
//
// The clock tells the time, but what happens in time (a heater's updates,
// a script's actions, [Home.After]) happens only while something drives the
// home: [Home.Run] live, following the clock, or [Home.Advance] and
// [Home.RunUntil], which move simulated time forward on the caller's
// goroutine, without real time passing: a test runs a simulated day in a
// fraction of a second, the same way every time.
//
// # Events
//
// Every change produces an [Event] (zone added, device property updated, …).
// There are two ways to receive them:
//
//   - [Home.Observe] (and [Home.ObserveCurrent]) calls a function
//     synchronously, on the goroutine that made the change: during
//     [Home.Advance], at each timer's simulated time, before later timers
//     run. The function may act on the home. Use it for code that reacts to
//     the simulation (a controller, an adapter, an application under test):
//     under Advance it runs the same way every time.
//   - [Home.Subscribe] delivers the events on a buffered channel, to be read
//     on a goroutine of the reader's own. Delivery never blocks the
//     simulation: a subscriber that falls behind is disconnected. Use it to
//     watch (a log, a user interface, a network stream), not to control:
//     what the reader does happens at no definite simulated time.
//
// # Concurrency
//
// A Home is safe for concurrent use. Values returned by its methods are
// copies; changing them changes nothing in the home.
//
// The package's other types are plain values (Zone, Device, Person, Clock,
// Environment, Event, ScriptInfo, PersonType, PersonMotion, Kind,
// PropertySpec, Config and the Spec and Update types): safe for concurrent
// use as long as nobody modifies them. A DeviceContext and a Props are valid
// only for the call that received them, on its goroutine. KindRegistry,
// Subscription, Script and Action say their own.
//
// # Errors
//
// Every error wraps one of [ErrNotFound], [ErrInvalid], [ErrConflict] or
// [ErrBusy], with a message for people. A method that fails changes nothing.
package sim
