package sim_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

// TestWatchersToldOfWhatConcernsThem checks the built-in watchers of
// persons that the home does not tell of every move (a PresenceSensor on a
// move that leaves its zone as empty or as occupied as it was, a Camera on
// a move within its zone, a MotionSensor while nobody observes the home,
// the first two on every move while nobody does, read from their zone):
// each stands beside a twin, a kind registered with the same properties
// and behaviour, which is told of every move as any registered kind is.
// After every operation of a random run (persons created, moved within
// and across zones, moved by location, deleted; zones created, moved and
// deleted; watchers faulted, mended, moved, switched and deleted; an
// observer coming and going), each device reads what its twin reads, and
// each has had the same events as its twin, in the same order.
func TestWatchersToldOfWhatConcernsThem(t *testing.T) {
	twins := []string{"PresenceSensor", "Camera", "MotionSensor"}
	seen := map[string]int{} // events of the built-in watchers and their twins, by what they tell
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 77))
			h := twinHome(t, twins...)
			maxZones, maxPersons := 6, 8 // the persons walked to count them
			if seed%2 == 1 {
				maxZones, maxPersons = 60, 50 // counted by zone
			}
			const plan = 600
			at := func() *int { return ptr(r.IntN(plan)) }
			zoneRect := func() (l, t, rt, b int) {
				l, t = r.IntN(plan-100), r.IntN(plan-100)
				return l, t, l + 20 + r.IntN(200), t + 20 + r.IntN(200)
			}

			// What each device had: its events, and what it reads.
			events := map[string][]string{}
			record := func(e sim.Event) {
				if e.DeviceID == "" || e.Type == sim.EventDeviceAdded || e.Type == sim.EventDeviceRemoved {
					return
				}
				events[e.DeviceID] = append(events[e.DeviceID], fmt.Sprintf("%s %s=%v %v", e.Type, e.Property, e.Value, e.OldValue))
			}
			var stop func()
			if seed%3 != 2 {
				stop = h.Observe(record)
			}

			var zones, persons, pairs []string
			made := 0
			called := map[string]int{} // operations done, by name
			for step := range 600 {
				op := r.IntN(100)
				var err error
				switch {
				case op < 6 && len(zones) < maxZones || len(zones) == 0:
					l, tp, rt, b := zoneRect()
					id := fmt.Sprintf("z%d", made)
					made++
					_, err = h.CreateZone(sim.ZoneSpec{ID: id, LeftX: l, TopY: tp, RightX: rt, BottomY: b})
					zones = append(zones, id)
					called["zone created"]++
				case op < 9:
					l, tp, rt, b := zoneRect()
					_, err = h.UpdateZone(zones[r.IntN(len(zones))], sim.ZoneUpdate{LeftX: &l, TopY: &tp, RightX: &rt, BottomY: &b})
					called["zone moved"]++
				case op < 10 && len(zones) > 1:
					i := r.IntN(len(zones))
					err = h.DeleteZone(zones[i])
					zones = append(zones[:i], zones[i+1:]...)
					called["zone deleted"]++
				case op < 18 && len(pairs) < 40:
					typ := twins[r.IntN(len(twins))]
					id := fmt.Sprintf("d%d", made)
					made++
					x, y := at(), at()
					props := map[string]any{}
					if typ == "Camera" {
						props[sim.PropCameraStatus] = r.IntN(4) > 0
					}
					if _, err = h.CreateDevice(sim.DeviceSpec{ID: "b" + id, Type: typ, PositionX: x, PositionY: y, Properties: props}); err == nil {
						_, err = h.CreateDevice(sim.DeviceSpec{ID: "t" + id, Type: "Twin" + typ, PositionX: x, PositionY: y, Properties: props})
					}
					pairs = append(pairs, id)
					called["device created"]++
				case op < 24 && len(pairs) > 0:
					id := pairs[r.IntN(len(pairs))]
					var u sim.DeviceUpdate
					switch r.IntN(4) {
					case 0:
						u.Fault = ptr(sim.FaultYes)
					case 1:
						u.Fault = ptr(sim.FaultNo)
					case 2:
						u.PositionX, u.PositionY = at(), at()
					default:
						u.Properties = map[string]any{sim.PropCameraStatus: r.IntN(2) == 0}
					}
					for _, p := range []string{"b", "t"} {
						if _, err = h.UpdateDevice(p+id, u); err != nil {
							break
						}
					}
					called["device updated"]++
				case op < 26 && len(pairs) > 0:
					i := r.IntN(len(pairs))
					for _, p := range []string{"b", "t"} {
						if err = h.DeleteDevice(p + pairs[i]); err != nil {
							break
						}
					}
					pairs = append(pairs[:i], pairs[i+1:]...)
					called["device deleted"]++
				case op < 32 && len(persons) < maxPersons || len(persons) == 0:
					id := fmt.Sprintf("p%d", made)
					made++
					_, err = h.CreatePerson(sim.PersonSpec{ID: id, Type: "Woman", PositionX: at(), PositionY: at()})
					persons = append(persons, id)
					called["person created"]++
				case op < 34:
					i := r.IntN(len(persons))
					err = h.DeletePerson(persons[i])
					persons = append(persons[:i], persons[i+1:]...)
					called["person deleted"]++
				case op < 36:
					_, err = h.UpdatePerson(persons[r.IntN(len(persons))], sim.PersonUpdate{Location: &zones[r.IntN(len(zones))]})
					called["person moved to a zone"]++
				case op < 38:
					if stop != nil {
						stop()
						stop = nil
					} else {
						stop = h.Observe(record)
					}
					called["observer toggled"]++
				case op < 70: // a step, mostly within a zone
					id := persons[r.IntN(len(persons))]
					p, perr := h.Person(id)
					if perr != nil {
						t.Fatal(perr)
					}
					x := min(max(p.PositionX+r.IntN(21)-10, 0), plan)
					y := min(max(p.PositionY+r.IntN(21)-10, 0), plan)
					_, err = h.UpdatePerson(id, sim.PersonUpdate{PositionX: &x, PositionY: &y})
					called["person stepped"]++
				default: // anywhere
					_, err = h.UpdatePerson(persons[r.IntN(len(persons))], sim.PersonUpdate{PositionX: at(), PositionY: at()})
					called["person moved"]++
				}
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				for _, id := range pairs {
					b, err := h.Device("b" + id)
					if err != nil {
						t.Fatal(err)
					}
					tw, err := h.Device("t" + id)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(tw.Properties, b.Properties); diff != "" {
						t.Fatalf("step %d: %s (%s) reads other than its twin (-twin +built-in):\n%s", step, b.ID, b.Type, diff)
					}
					viewed := map[string]any{} // as the encoders read it
					if err := h.ViewDevice(b.ID, func(_ *sim.Device, props sim.Props) {
						for k, v := range props.All() {
							viewed[k] = v
						}
					}); err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(b.Properties, viewed); diff != "" {
						t.Fatalf("step %d: %s (%s) viewed other than read (-read +viewed):\n%s", step, b.ID, b.Type, diff)
					}
					if diff := cmp.Diff(events["t"+id], events["b"+id]); diff != "" {
						t.Fatalf("step %d: %s (%s) had other events than its twin (-twin +built-in):\n%s", step, b.ID, b.Type, diff)
					}
				}
			}
			for _, list := range events {
				for _, e := range list {
					switch {
					case strings.HasPrefix(e, string(sim.EventDeviceEvent)):
						seen["motion"]++
					case strings.Contains(e, sim.PropSensedPresence+"="):
						seen["presence"]++
					case strings.Contains(e, sim.PropCameraPersonCount+"="):
						seen["count"]++
					}
				}
			}
			for _, what := range []string{"zone moved", "zone deleted", "device updated", "device deleted", "person deleted", "person moved to a zone", "observer toggled", "person stepped"} {
				if called[what] == 0 {
					t.Errorf("no %s in the run: %v", what, called)
				}
			}
		})
	}
	if seen["motion"] < 100 || seen["presence"] < 100 || seen["count"] < 100 {
		t.Errorf("the watchers were hardly tested: %v", seen)
	}
}

// TestWatchersAfterRestoreDerived checks the built-in watchers of persons
// whose derived properties RestoreDerived set to other than what their
// zone holds: they read what was set, then the next move of a person in
// their zone, even one within it, sets them right, as it does a
// registered twin's; in a home watched or not (where the moves are not
// told to a PresenceSensor or a Camera, and what they store lags their
// zone).
func TestWatchersAfterRestoreDerived(t *testing.T) {
	for _, tc := range []struct {
		name    string
		typ     string
		props   map[string]any // created with
		restore map[string]any
		want    map[string]any // what the device reads after the step
	}{
		{"presence sensor restored empty", "PresenceSensor", nil,
			map[string]any{sim.PropSensedPresence: false}, map[string]any{sim.PropSensedPresence: true}},
		{"camera restored to a count", "Camera", map[string]any{sim.PropCameraStatus: true},
			map[string]any{sim.PropCameraPersonCount: 7.0}, map[string]any{sim.PropCameraPersonCount: 1.0}},
		{"camera off restored to a count", "Camera", nil,
			map[string]any{sim.PropCameraPersonCount: 3.0}, map[string]any{sim.PropCameraPersonCount: 0.0}},
	} {
		for _, watched := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/watched=%v", tc.name, watched), func(t *testing.T) {
				h := twinHome(t, tc.typ)
				events := map[string][]string{}
				if watched {
					defer h.Observe(func(e sim.Event) {
						if e.Property != "" { // with what the event's device holds of it
							events[e.DeviceID] = append(events[e.DeviceID], fmt.Sprintf("%s %s=%v %v (device: %v)", e.Type, e.Property, e.Value, e.OldValue, e.Device.Properties[e.Property]))
						}
					})()
				}
				if _, err := h.CreateZone(sim.ZoneSpec{ID: "room", RightX: 100, BottomY: 100}); err != nil {
					t.Fatal(err)
				}
				for _, id := range []string{"built-in", "twin"} {
					typ := tc.typ
					if id == "twin" {
						typ = "Twin" + tc.typ
					}
					if _, err := h.CreateDevice(sim.DeviceSpec{ID: id, Type: typ, PositionX: ptr(10), PositionY: ptr(10), Properties: tc.props}); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := h.CreatePerson(sim.PersonSpec{ID: "p", Type: "Woman", PositionX: ptr(50), PositionY: ptr(50)}); err != nil {
					t.Fatal(err)
				}
				for _, id := range []string{"built-in", "twin"} {
					if err := h.RestoreDerived(id, tc.restore); err != nil {
						t.Fatal(err)
					}
				}
				for name, v := range tc.restore {
					if got := prop(t, h, "built-in", name); got != v {
						t.Errorf("the built-in reads %s = %v after it was restored to %v", name, got, v)
					}
				}
				if _, err := h.UpdatePerson("p", sim.PersonUpdate{PositionX: ptr(51)}); err != nil { // within the room
					t.Fatal(err)
				}
				got := map[string]any{}
				for name := range tc.want {
					got[name] = prop(t, h, "built-in", name)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("the built-in reads (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(events["twin"], events["built-in"]); diff != "" {
					t.Errorf("the built-in had other events than its twin (-twin +built-in):\n%s", diff)
				}
			})
		}
	}
}

// twinHome returns a home nobody watches where each of the built-in kinds
// named has a twin: a kind registered with the same properties and
// behaviour, named "Twin" and the kind's name, whose devices are told of
// every move, as any registered kind's are.
func twinHome(t *testing.T, kinds ...string) *sim.Home {
	t.Helper()
	h := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	for _, name := range kinds {
		k, err := h.Kinds().Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		k.Name, k.Service = "Twin"+name, ""
		if err := h.Kinds().Register(k); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// sensorRoom returns a home nobody watches with a room (0-100), a
// PresenceSensor in it and a person p at (x, y).
func sensorRoom(t *testing.T, sensor string, x, y int) *sim.Home {
	t.Helper()
	h := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
	if _, err := h.CreateZone(sim.ZoneSpec{ID: "room", RightX: 100, BottomY: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CreateDevice(sim.DeviceSpec{ID: sensor, Type: "PresenceSensor", PositionX: ptr(10), PositionY: ptr(10)}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CreatePerson(sim.PersonSpec{ID: "p", Type: "Woman", PositionX: ptr(x), PositionY: ptr(y)}); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestPresenceSensorRestoredAlone checks a PresenceSensor that
// RestoreDerived set to other than what its zone holds, in a home nobody
// watches and where no other device watches persons: it reads what was
// set, then the next move of a person in its zone sets it right.
func TestPresenceSensorRestoredAlone(t *testing.T) {
	h := sensorRoom(t, "sensor", 50, 50)
	if got := prop(t, h, "sensor", sim.PropSensedPresence); got != true {
		t.Fatalf("with a person in its zone the sensor reads %v", got)
	}
	if err := h.RestoreDerived("sensor", map[string]any{sim.PropSensedPresence: false}); err != nil {
		t.Fatal(err)
	}
	if got := prop(t, h, "sensor", sim.PropSensedPresence); got != false {
		t.Fatalf("restored to false, the sensor reads %v", got)
	}
	if _, err := h.UpdatePerson("p", sim.PersonUpdate{PositionX: ptr(51)}); err != nil { // within the room
		t.Fatal(err)
	}
	if got := prop(t, h, "sensor", sim.PropSensedPresence); got != true {
		t.Errorf("after a move in its zone the sensor reads %v, want true", got)
	}
}

// TestWatchersOfDeletedZone checks the built-in watchers of persons of an
// occupied zone deleted in a watched home: its persons leave it as it goes,
// without telling the devices still filed there, and each device, placed
// again (in no zone, an empty zone, an occupied one), publishes what it
// senses there from what it had published before, as a registered twin
// does.
func TestWatchersOfDeletedZone(t *testing.T) {
	for _, typ := range []string{"PresenceSensor", "Camera"} {
		for _, to := range []string{"no zone", "an empty zone", "an occupied zone"} {
			t.Run(typ+" to "+to, func(t *testing.T) {
				h := twinHome(t, typ)
				events := map[string][]string{}
				defer h.Observe(func(e sim.Event) {
					if e.Property != "" && e.Property != sim.PropLocation {
						events[e.DeviceID] = append(events[e.DeviceID], fmt.Sprintf("%s %s=%v %v (device: %v)", e.Type, e.Property, e.Value, e.OldValue, e.Device.Properties[e.Property]))
					}
				})()
				// The devices stand in "below" too, larger than "room" (the
				// smaller zone holds them), and are placed there once "room"
				// goes; "in" stands outside it.
				if to != "no zone" {
					if _, err := h.CreateZone(sim.ZoneSpec{ID: "below", RightX: 40, BottomY: 300}); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := h.CreateZone(sim.ZoneSpec{ID: "room", RightX: 100, BottomY: 100}); err != nil {
					t.Fatal(err)
				}
				for _, id := range []string{"built-in", "twin"} {
					kind := typ
					if id == "twin" {
						kind = "Twin" + typ
					}
					var props map[string]any
					if typ == "Camera" {
						props = map[string]any{sim.PropCameraStatus: true}
					}
					if _, err := h.CreateDevice(sim.DeviceSpec{ID: id, Type: kind, PositionX: ptr(10), PositionY: ptr(10), Properties: props}); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := h.CreatePerson(sim.PersonSpec{ID: "in", Type: "Woman", PositionX: ptr(50), PositionY: ptr(50)}); err != nil {
					t.Fatal(err)
				}
				if to == "an occupied zone" {
					if _, err := h.CreatePerson(sim.PersonSpec{ID: "below", Type: "Man", PositionX: ptr(20), PositionY: ptr(200)}); err != nil {
						t.Fatal(err)
					}
				}
				if err := h.DeleteZone("room"); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(events["twin"], events["built-in"]); diff != "" {
					t.Errorf("the built-in had other events than its twin (-twin +built-in):\n%s", diff)
				}
				b, tw := prop(t, h, "built-in", sim.PropSensedPresence), prop(t, h, "twin", sim.PropSensedPresence)
				if typ == "Camera" {
					b, tw = prop(t, h, "built-in", sim.PropCameraPersonCount), prop(t, h, "twin", sim.PropCameraPersonCount)
				}
				if b != tw {
					t.Errorf("the built-in reads %v, its twin %v", b, tw)
				}
			})
		}
	}
}

// TestPresenceSensorWatchedFromWhatItSensed checks that however a home
// nobody watched starts being watched (an observer, one given the current
// state, a tap, a subscription), a PresenceSensor's events start from what
// it senses, though the moves of the unwatched home did not tell it: the
// person who entered its zone unwatched leaves it watched, and the event
// says it senses no one, where it sensed someone.
func TestPresenceSensorWatchedFromWhatItSensed(t *testing.T) {
	for _, how := range []string{"Observe", "ObserveCurrent", "Tap", "Subscribe"} {
		t.Run(how, func(t *testing.T) {
			h := sensorRoom(t, "s", 500, 500)
			if _, err := h.UpdatePerson("p", sim.PersonUpdate{PositionX: ptr(50), PositionY: ptr(50)}); err != nil { // unwatched
				t.Fatal(err)
			}
			var got []string
			record := func(e sim.Event) {
				switch {
				case e.DeviceID != "s":
				case e.Property != "":
					got = append(got, fmt.Sprintf("%s %s=%v %v (device: %v)", e.Type, e.Property, e.Value, e.OldValue, e.Device.Properties[e.Property]))
				default:
					got = append(got, fmt.Sprintf("%s (device: %v)", e.Type, e.Device.Properties[sim.PropSensedPresence]))
				}
			}
			var s *sim.Subscription
			switch how {
			case "Observe":
				defer h.Observe(record)()
			case "ObserveCurrent":
				defer h.ObserveCurrent(record)()
			case "Tap":
				_, stop := h.Tap(record)
				defer stop()
			case "Subscribe":
				s = h.Subscribe(16)
				defer s.Close()
			}
			if _, err := h.UpdatePerson("p", sim.PersonUpdate{PositionX: ptr(500)}); err != nil {
				t.Fatal(err)
			}
			for s != nil && len(s.C) > 0 {
				record(<-s.C)
			}
			want := []string{"device-property-updated sensed_presence=false true (device: false)"}
			if how == "ObserveCurrent" {
				want = append([]string{"device-added (device: true)"}, want...)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the sensor's events (-want +got):\n%s", diff)
			}
		})
	}
}
