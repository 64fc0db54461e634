package sim_test

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

// drain returns the events buffered in s without blocking. Events are
// published synchronously, so after a call returns its events are buffered.
func drain(tb testing.TB, s *sim.Subscription) []sim.Event {
	tb.Helper()
	var out []sim.Event
	for {
		select {
		case e, ok := <-s.C:
			if !ok {
				return out
			}
			out = append(out, e)
		default:
			return out
		}
	}
}

// ev is the part of an event most tests compare.
type ev struct {
	Type                       sim.EventType
	ZoneID, DeviceID, PersonID string
	Property                   string
	Value, OldValue            any
}

func summarize(es []sim.Event) []ev {
	out := []ev{}
	for _, e := range es {
		out = append(out, ev{e.Type, e.ZoneID, e.DeviceID, e.PersonID, e.Property, e.Value, e.OldValue})
	}
	return out
}

func TestEvents(t *testing.T) {
	h, mock := newHome(t)
	sub := h.Subscribe(256)
	defer sub.Close()
	var lastSeq uint64

	steps := []struct {
		name string
		do   func(t *testing.T)
		want []ev
		// check inspects the events' snapshots.
		check func(t *testing.T, es []sim.Event)
	}{
		{
			name: "zone added",
			do:   func(t *testing.T) { mustZone(t, h, rect("kitchen", 0, 0, 100, 100)) },
			want: []ev{{Type: sim.EventZoneAdded, ZoneID: "kitchen"}},
			check: func(t *testing.T, es []sim.Event) {
				want := sim.Zone{ID: "kitchen", Name: "kitchen", IsRoom: true, RightX: 100, BottomY: 100, Variables: map[string]float64{}}
				if es[0].Zone == nil {
					t.Fatal("zone-added event has no Zone snapshot")
				}
				if diff := cmp.Diff(want, *es[0].Zone); diff != "" {
					t.Errorf("zone-added Zone (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "device added",
			do: func(t *testing.T) {
				mustDevice(t, h, sim.DeviceSpec{ID: "h1", Type: "Heater", PositionX: ptr(50), PositionY: ptr(50)})
			},
			want: []ev{{Type: sim.EventDeviceAdded, DeviceID: "h1"}},
			check: func(t *testing.T, es []sim.Event) {
				if diff := cmp.Diff(mustGetDevice(t, h, "h1"), *es[0].Device); diff != "" {
					t.Errorf("device-added Device (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "person added",
			do: func(t *testing.T) {
				mustPerson(t, h, sim.PersonSpec{ID: "p1", Type: "Man", PositionX: ptr(10), PositionY: ptr(10)})
			},
			want: []ev{{Type: sim.EventPersonAdded, PersonID: "p1"}},
			check: func(t *testing.T, es []sim.Event) {
				want := sim.Person{ID: "p1", Name: "p1", Type: "Man", Location: "kitchen", PositionX: 10, PositionY: 10}
				if diff := cmp.Diff(want, *es[0].Person); diff != "" {
					t.Errorf("person-added Person (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "zone variable added",
			do: func(t *testing.T) {
				mustUpdateZone(t, h, "kitchen", sim.ZoneUpdate{Variables: map[string]*float64{"Temperature": ptr(293.15)}})
			},
			want: []ev{{Type: sim.EventZoneVariableAdded, ZoneID: "kitchen", Property: "Temperature", Value: 293.15}},
			check: func(t *testing.T, es []sim.Event) {
				if got := es[0].Zone.Variables["Temperature"]; got != 293.15 {
					t.Errorf("zone snapshot Temperature = %v, want 293.15", got)
				}
			},
		},
		{
			name: "zone variable updated",
			do: func(t *testing.T) {
				mustUpdateZone(t, h, "kitchen", sim.ZoneUpdate{Variables: map[string]*float64{"Temperature": ptr(300.0)}})
			},
			want: []ev{{Type: sim.EventZoneVariableUpdated, ZoneID: "kitchen", Property: "Temperature", Value: 300.0, OldValue: 293.15}},
		},
		{
			name: "zone variable removed",
			do: func(t *testing.T) {
				mustUpdateZone(t, h, "kitchen", sim.ZoneUpdate{Variables: map[string]*float64{"Temperature": nil}})
			},
			want: []ev{{Type: sim.EventZoneVariableRemoved, ZoneID: "kitchen", Property: "Temperature", OldValue: 300.0}},
		},
		{
			name: "kind property updated",
			do: func(t *testing.T) {
				mustUpdateDevice(t, h, "h1", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": 0.5}})
			},
			want: []ev{{Type: sim.EventDevicePropertyUpdated, DeviceID: "h1", Property: "heater.powerLevel", Value: 0.5, OldValue: 0.0}},
			check: func(t *testing.T, es []sim.Event) {
				if got := es[0].Device.Properties["heater.powerLevel"]; got != 0.5 {
					t.Errorf("device snapshot heater.powerLevel = %v, want 0.5", got)
				}
			},
		},
		{
			name: "free property added",
			do: func(t *testing.T) {
				mustUpdateDevice(t, h, "h1", sim.DeviceUpdate{Properties: map[string]any{"color": "red"}})
			},
			want: []ev{{Type: sim.EventDevicePropertyAdded, DeviceID: "h1", Property: "color", Value: "red"}},
		},
		{
			name: "free property removed",
			do: func(t *testing.T) {
				mustUpdateDevice(t, h, "h1", sim.DeviceUpdate{Properties: map[string]any{"color": nil}})
			},
			want: []ev{{Type: sim.EventDevicePropertyRemoved, DeviceID: "h1", Property: "color", OldValue: "red"}},
		},
		{
			name: "state and name changed",
			do: func(t *testing.T) {
				mustUpdateDevice(t, h, "h1", sim.DeviceUpdate{Name: ptr("Radiator"), State: ptr("deactivated")})
			},
			want: []ev{
				{Type: sim.EventDeviceUpdated, DeviceID: "h1"},
				{Type: sim.EventDevicePropertyUpdated, DeviceID: "h1", Property: "state", Value: "deactivated", OldValue: "activated"},
			},
		},
		{
			name: "device moved within its zone",
			do: func(t *testing.T) {
				mustUpdateDevice(t, h, "h1", sim.DeviceUpdate{PositionX: ptr(60), PositionY: ptr(60)})
			},
			want: []ev{{Type: sim.EventDevicePositionUpdate, DeviceID: "h1"}},
			check: func(t *testing.T, es []sim.Event) {
				if d := es[0].Device; d.PositionX != 60 || d.PositionY != 60 || d.Location != "kitchen" {
					t.Errorf("device-position-update Device = %+v, want at (60,60) in kitchen", d)
				}
			},
		},
		{
			name: "person moved",
			do: func(t *testing.T) {
				if _, err := h.UpdatePerson("p1", sim.PersonUpdate{PositionX: ptr(20), PositionY: ptr(20)}); err != nil {
					t.Fatal(err)
				}
			},
			want: []ev{{Type: sim.EventPersonPositionUpdate, PersonID: "p1"}},
			check: func(t *testing.T, es []sim.Event) {
				want := sim.Person{ID: "p1", Name: "p1", Type: "Man", Location: "kitchen", PositionX: 20, PositionY: 20}
				if diff := cmp.Diff(want, *es[0].Person); diff != "" {
					t.Errorf("person-position-update Person (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "person type changed",
			do: func(t *testing.T) {
				if _, err := h.UpdatePerson("p1", sim.PersonUpdate{Type: ptr("boy")}); err != nil {
					t.Fatal(err)
				}
			},
			want: []ev{{Type: sim.EventPersonUpdated, PersonID: "p1"}},
		},
		{
			name: "zone moved, nobody relocated",
			do:   func(t *testing.T) { mustUpdateZone(t, h, "kitchen", sim.ZoneUpdate{LeftX: ptr(5), RightX: ptr(105)}) },
			want: []ev{{Type: sim.EventZoneMoved, ZoneID: "kitchen"}},
			check: func(t *testing.T, es []sim.Event) {
				if z := es[0].Zone; z.LeftX != 5 || z.RightX != 105 {
					t.Errorf("zone-moved Zone = %+v, want from 5 to 105", z)
				}
			},
		},
		{
			name: "zone resized, device left out",
			do:   func(t *testing.T) { mustUpdateZone(t, h, "kitchen", sim.ZoneUpdate{RightX: ptr(30), BottomY: ptr(30)}) },
			want: []ev{
				{Type: sim.EventZoneResized, ZoneID: "kitchen"},
				{Type: sim.EventDevicePropertyRemoved, DeviceID: "h1", Property: "Location", OldValue: "kitchen"},
			},
			check: func(t *testing.T, es []sim.Event) {
				if d := es[1].Device; d.Location != "" {
					t.Errorf("device snapshot Location = %q, want none", d.Location)
				}
			},
		},
		{
			name: "zone moved relocates device and person",
			do: func(t *testing.T) {
				mustUpdateZone(t, h, "kitchen", sim.ZoneUpdate{LeftX: ptr(35), RightX: ptr(60), TopY: ptr(35), BottomY: ptr(65)})
			},
			want: []ev{
				{Type: sim.EventZoneMoved, ZoneID: "kitchen"},
				{Type: sim.EventPersonPositionUpdate, PersonID: "p1"}, // persons are relocated first
				{Type: sim.EventDevicePropertyAdded, DeviceID: "h1", Property: "Location", Value: "kitchen"},
			},
			check: func(t *testing.T, es []sim.Event) {
				want := sim.Person{ID: "p1", Name: "p1", Type: "Boy", Location: "unknown", PositionX: 20, PositionY: 20}
				if diff := cmp.Diff(want, *es[1].Person); diff != "" {
					t.Errorf("person-position-update Person (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "zone renamed",
			do:   func(t *testing.T) { mustUpdateZone(t, h, "kitchen", sim.ZoneUpdate{Name: ptr("Cuisine")}) },
			want: []ev{{Type: sim.EventZoneUpdated, ZoneID: "kitchen"}},
		},
		{
			name: "clock modified",
			do: func(t *testing.T) {
				mock.Add(time.Second)
				mustUpdateClock(t, h, sim.ClockUpdate{Factor: ptr(60)})
			},
			want: []ev{{Type: sim.EventClockModified}},
			check: func(t *testing.T, es []sim.Event) {
				want := sim.Clock{ID: "default", StartDateStr: "01/01/1970-00:00:00", CurrentDateStr: "01/01/1970-00:00:01",
					CurrentTime: 1000, Factor: 60}
				if diff := cmp.Diff(&want, es[0].Clock); diff != "" {
					t.Errorf("clock-modified Clock (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "device removed",
			do: func(t *testing.T) {
				if err := h.DeleteDevice("h1"); err != nil {
					t.Fatal(err)
				}
			},
			want: []ev{{Type: sim.EventDeviceRemoved, DeviceID: "h1"}},
		},
		{
			name: "person removed",
			do: func(t *testing.T) {
				if err := h.DeletePerson("p1"); err != nil {
					t.Fatal(err)
				}
			},
			want: []ev{{Type: sim.EventPersonRemoved, PersonID: "p1"}},
		},
		{
			name: "zone removed",
			do: func(t *testing.T) {
				if err := h.DeleteZone("kitchen"); err != nil {
					t.Fatal(err)
				}
			},
			want: []ev{{Type: sim.EventZoneRemoved, ZoneID: "kitchen"}},
		},
		{
			name: "reset",
			do: func(t *testing.T) {
				mustZone(t, h, rect("z", 0, 0, 10, 10))
				mustDevice(t, h, sim.DeviceSpec{ID: "d", Type: "Cooler"})
				mustPerson(t, h, sim.PersonSpec{ID: "p", Type: "Girl"})
				drain(t, sub)
				h.Reset()
			},
			want: []ev{
				{Type: sim.EventPersonRemoved, PersonID: "p"},
				{Type: sim.EventDeviceRemoved, DeviceID: "d"},
				{Type: sim.EventZoneRemoved, ZoneID: "z"},
			},
		},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.do(t)
			es := drain(t, sub)
			if diff := cmp.Diff(s.want, summarize(es)); diff != "" {
				t.Fatalf("events (-want +got):\n%s", diff)
			}
			now := h.Clock().CurrentTime
			for _, e := range es {
				if e.Seq <= lastSeq {
					t.Errorf("%s: Seq = %d, want more than %d", e.Type, e.Seq, lastSeq)
				}
				lastSeq = e.Seq
				if e.Time != now {
					t.Errorf("%s: Time = %d, want the simulated time %d", e.Type, e.Time, now)
				}
			}
			if s.check != nil {
				s.check(t, es)
			}
		})
	}
	if err := sub.Err(); err != nil {
		t.Errorf("Err() = %v, want nil", err)
	}
}

func TestNoEventForFailureOrNoop(t *testing.T) {
	tests := []struct {
		name string
		fail bool // the call must fail; else it must succeed
		call func(h *sim.Home) error
	}{
		{"failed CreateZone", true, func(h *sim.Home) error { _, err := h.CreateZone(rect("bad/id", 0, 0, 1, 1)); return err }},
		{"duplicate zone", true, func(h *sim.Home) error { _, err := h.CreateZone(rect("kitchen", 0, 0, 1, 1)); return err }},
		{"failed UpdateZone", true, func(h *sim.Home) error {
			_, err := h.UpdateZone("kitchen", sim.ZoneUpdate{Name: ptr("x"), RightX: ptr(-1)})
			return err
		}},
		{"failed DeleteZone", true, func(h *sim.Home) error { return h.DeleteZone("nope") }},
		{"failed CreateDevice", true, func(h *sim.Home) error {
			_, err := h.CreateDevice(sim.DeviceSpec{ID: "x", Type: "Heater", Properties: map[string]any{"heater.powerLevel": 2}})
			return err
		}},
		{"failed UpdateDevice", true, func(h *sim.Home) error {
			_, err := h.UpdateDevice("h1", sim.DeviceUpdate{Name: ptr("x"), PositionX: ptr(1), Fault: ptr("maybe")})
			return err
		}},
		{"failed DeleteDevice", true, func(h *sim.Home) error { return h.DeleteDevice("nope") }},
		{"failed CreatePerson", true, func(h *sim.Home) error { _, err := h.CreatePerson(sim.PersonSpec{ID: "x", Type: "Robot"}); return err }},
		{"failed UpdatePerson", true, func(h *sim.Home) error {
			_, err := h.UpdatePerson("p1", sim.PersonUpdate{Name: ptr("x"), Location: ptr("attic")})
			return err
		}},
		{"failed DeletePerson", true, func(h *sim.Home) error { return h.DeletePerson("nope") }},
		{"failed UpdateClock", true, func(h *sim.Home) error {
			_, err := h.UpdateClock(sim.ClockUpdate{Pause: ptr(true), Factor: ptr(0)})
			return err
		}},
		{"empty zone update", false, func(h *sim.Home) error { _, err := h.UpdateZone("kitchen", sim.ZoneUpdate{}); return err }},
		{"zone update to the same values", false, func(h *sim.Home) error {
			_, err := h.UpdateZone("kitchen", sim.ZoneUpdate{Name: ptr("kitchen"), IsRoom: ptr(true), LeftX: ptr(0), RightX: ptr(100),
				Variables: map[string]*float64{"Volume": ptr(10.0), "absent": nil}})
			return err
		}},
		{"empty device update", false, func(h *sim.Home) error { _, err := h.UpdateDevice("h1", sim.DeviceUpdate{}); return err }},
		{"device update to the same values", false, func(h *sim.Home) error {
			_, err := h.UpdateDevice("h1", sim.DeviceUpdate{Name: ptr(""), Type: ptr("heater"), PositionX: ptr(50), State: ptr("activated"),
				Location: ptr("kitchen"), Properties: map[string]any{"heater.powerLevel": 0, "Location": "kitchen", "absent": nil}})
			return err
		}},
		{"empty person update", false, func(h *sim.Home) error { _, err := h.UpdatePerson("p1", sim.PersonUpdate{}); return err }},
		{"person update to the same values", false, func(h *sim.Home) error {
			_, err := h.UpdatePerson("p1", sim.PersonUpdate{Name: ptr("p1"), Type: ptr("MAN"), PositionX: ptr(10), PositionY: ptr(10)})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			mustZone(t, h, sim.ZoneSpec{ID: "kitchen", RightX: 100, BottomY: 100, Variables: map[string]float64{"Volume": 10}})
			mustDevice(t, h, sim.DeviceSpec{ID: "h1", Type: "Heater", PositionX: ptr(50), PositionY: ptr(50)})
			mustPerson(t, h, sim.PersonSpec{ID: "p1", Type: "Man", PositionX: ptr(10), PositionY: ptr(10)})
			sub := h.Subscribe(16)
			defer sub.Close()
			if err := tt.call(h); (err != nil) != tt.fail {
				t.Fatalf("%s = %v, want failure %v", tt.name, err, tt.fail)
			}
			if es := drain(t, sub); len(es) != 0 {
				t.Errorf("events = %+v, want none", summarize(es))
			}
		})
	}
}

func TestNoEventForNoopClockUpdate(t *testing.T) {
	tests := []struct {
		name   string
		update sim.ClockUpdate
	}{
		{"empty update", sim.ClockUpdate{}},
		{"resume while running", sim.ClockUpdate{Pause: ptr(false)}},
		{"same factor", sim.ClockUpdate{Factor: ptr(1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			sub := h.Subscribe(16)
			defer sub.Close()
			mustUpdateClock(t, h, tt.update)
			if es := drain(t, sub); len(es) != 0 {
				t.Errorf("UpdateClock(%+v) events = %+v, want none", tt.update, summarize(es))
			}
		})
	}
}

func TestSlowSubscriber(t *testing.T) {
	h, _ := newHome(t)
	slow := h.Subscribe(1)
	fast := h.Subscribe(100)
	defer fast.Close()

	mustZone(t, h, rect("a", 0, 0, 1, 1))
	if err := slow.Err(); err != nil {
		t.Errorf("Err() with a full buffer = %v, want nil", err)
	}
	mustZone(t, h, rect("b", 0, 0, 1, 1)) // the buffer is full: slow is dropped
	mustZone(t, h, rect("c", 0, 0, 1, 1)) // the home keeps working

	if err := slow.Err(); !errors.Is(err, sim.ErrSlowSubscriber) {
		t.Errorf("Err() = %v, want %v", err, sim.ErrSlowSubscriber)
	}
	var got []string
	for _, e := range drain(t, slow) {
		got = append(got, e.ZoneID)
	}
	if diff := cmp.Diff([]string{"a"}, got); diff != "" {
		t.Errorf("events read by the slow subscriber (-want +got):\n%s", diff)
	}
	select {
	case _, ok := <-slow.C:
		if ok {
			t.Error("slow subscriber's C delivered an event after the drop, want it closed")
		}
	default:
		t.Error("slow subscriber's C is still open, want it closed")
	}
	slow.Close() // after the drop: harmless, and the error stays
	if err := slow.Err(); !errors.Is(err, sim.ErrSlowSubscriber) {
		t.Errorf("Err() after Close = %v, want %v", err, sim.ErrSlowSubscriber)
	}

	mustZone(t, h, rect("d", 0, 0, 1, 1))
	var ids []string
	for _, e := range drain(t, fast) {
		ids = append(ids, e.ZoneID)
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "d"}, ids); diff != "" {
		t.Errorf("events of the fast subscriber (-want +got):\n%s", diff)
	}
	if err := fast.Err(); err != nil {
		t.Errorf("fast Err() = %v, want nil", err)
	}
}

func TestSubscriptionClose(t *testing.T) {
	tests := []struct {
		name     string
		buffer   int
		wantCap  int
		preEvent bool
	}{
		{"buffer 10", 10, 10, false},
		{"buffer 0 means 1", 0, 1, false},
		{"negative buffer means 1", -3, 1, false},
		{"close with events buffered", 10, 10, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			s := h.Subscribe(tt.buffer)
			if got := cap(s.C); got != tt.wantCap {
				t.Errorf("cap(Subscribe(%d).C) = %d, want %d", tt.buffer, got, tt.wantCap)
			}
			if tt.preEvent {
				mustZone(t, h, rect("z", 0, 0, 1, 1))
			}
			s.Close()
			s.Close() // twice is fine
			n := len(drain(t, s))
			select {
			case _, ok := <-s.C:
				if ok {
					t.Error("C delivered an event after Close")
				}
			default:
				t.Error("C is still open after Close, want it closed")
			}
			if tt.preEvent && n != 1 {
				t.Errorf("read %d buffered events after Close, want 1", n)
			}
			if err := s.Err(); err != nil {
				t.Errorf("Err() after Close = %v, want nil", err)
			}
			mustZone(t, h, rect("after", 0, 0, 1, 1))
		})
	}
}

func TestSubscribeConcurrent(t *testing.T) {
	h, _ := newHome(t)
	done := make(chan struct{})
	var mutators, subscribers sync.WaitGroup
	for w := range 4 {
		mutators.Go(func() {
			for i := range 50 {
				id := fmt.Sprintf("z%d-%d", w, i)
				if _, err := h.CreateZone(rect(id, 0, 0, 10, 10)); err != nil {
					t.Errorf("CreateZone(%s) = %v", id, err)
					continue
				}
				if _, err := h.UpdateZone(id, sim.ZoneUpdate{Variables: map[string]*float64{"v": ptr(float64(i))}}); err != nil {
					t.Errorf("UpdateZone(%s) = %v", id, err)
				}
				if err := h.DeleteZone(id); err != nil {
					t.Errorf("DeleteZone(%s) = %v", id, err)
				}
			}
		})
	}
	for range 8 {
		subscribers.Go(func() {
			for range 20 {
				s := h.Subscribe(8)
				var last uint64
			read:
				for range 5 {
					select {
					case e, ok := <-s.C:
						if !ok {
							break read
						}
						if e.Seq <= last {
							t.Errorf("Seq %d after %d, want increasing", e.Seq, last)
						}
						last = e.Seq
					case <-done:
						break read
					}
				}
				s.Close()
				for range s.C {
				}
				if err := s.Err(); err != nil && !errors.Is(err, sim.ErrSlowSubscriber) {
					t.Errorf("Err() = %v, want nil or %v", err, sim.ErrSlowSubscriber)
				}
			}
		})
	}
	mutators.Wait()
	close(done)
	subscribers.Wait()
	if got := h.Zones(); len(got) != 0 {
		t.Errorf("Zones() = %d zones, want none", len(got))
	}
}

// TestEventSnapshotsAreIsolated checks that an event's snapshots are copies
// taken from the home: changing them changes nothing in the home. (They are
// shared by all subscribers, who must treat them as read-only.)
func TestEventSnapshotsAreIsolated(t *testing.T) {
	h, _ := newHome(t)
	s := h.Subscribe(4)
	defer s.Close()
	mustZone(t, h, sim.ZoneSpec{ID: "z", RightX: 1, BottomY: 1, Variables: map[string]float64{"v": 1}})
	mustDevice(t, h, sim.DeviceSpec{ID: "d", Type: "Heater"})
	es := drain(t, s)
	if len(es) != 2 {
		t.Fatalf("got %d events, want 2", len(es))
	}
	es[0].Zone.Variables["v"] = 99
	es[1].Device.Properties["state"] = "mutated"
	es[1].Device.Services[0] = "mutated"
	if got := mustGetZone(t, h, "z").Variables["v"]; got != 1 {
		t.Errorf("Zone(z).Variables[v] = %v after changing the event's snapshot, want 1", got)
	}
	d, err := h.Device("d")
	if err != nil {
		t.Fatal(err)
	}
	if d.Properties["state"] != "activated" || d.Services[0] == "mutated" {
		t.Errorf("Device(d) = %+v after changing the event's snapshot, want it unchanged", d)
	}
}

// An observer costs a change no more allocations than a subscription: the
// list of observers is not copied for every event, nor the queue of events
// made anew for every change.
func TestObserverAllocations(t *testing.T) {
	change := func(h *sim.Home) func() {
		v := 0.0
		return func() {
			v++
			if _, err := h.UpdateZone("kitchen", sim.ZoneUpdate{Variables: map[string]*float64{"Temperature": &v}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	newHome := func() *sim.Home {
		h := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Paused: true})
		if _, err := h.CreateZone(sim.ZoneSpec{ID: "kitchen", RightX: 10, BottomY: 10}); err != nil {
			t.Fatal(err)
		}
		return h
	}
	subscribed := newHome()
	sub := subscribed.Subscribe(1)
	defer sub.Close()
	subscribedChange := change(subscribed)
	withSub := testing.AllocsPerRun(200, func() {
		subscribedChange()
		<-sub.C
	})
	observed := newHome()
	seen := 0
	for range 3 {
		defer observed.Observe(func(sim.Event) { seen++ })()
	}
	withObservers := testing.AllocsPerRun(200, change(observed))
	if withObservers > withSub {
		t.Errorf("a change allocates %v times with three observers, %v with a subscription", withObservers, withSub)
	}
	if seen == 0 {
		t.Error("the observers saw nothing")
	}
}

// A tap gets every change from the sequence number Tap returned on, in
// order, as it is made, before the observers; nothing once stopped; and
// none of the events ObserveCurrent makes of the home as it is.
func TestTap(t *testing.T) {
	h := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Paused: true})
	if _, err := h.CreateZone(sim.ZoneSpec{ID: "kitchen", RightX: 10, BottomY: 10}); err != nil {
		t.Fatal(err)
	}
	var tapped []uint64
	var observed []uint64
	seq, stop := h.Tap(func(e sim.Event) { tapped = append(tapped, e.Seq) })
	defer h.ObserveCurrent(func(e sim.Event) {
		if !e.Current && e.Seq <= seq+3 && (len(tapped) == 0 || tapped[len(tapped)-1] < e.Seq) {
			t.Errorf("event %d observed before it was tapped", e.Seq)
		}
		observed = append(observed, e.Seq)
	})()
	for i := range 3 {
		v := float64(i)
		if _, err := h.UpdateZone("kitchen", sim.ZoneUpdate{Variables: map[string]*float64{"Temperature": &v}}); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	stop()
	if _, err := h.CreateZone(sim.ZoneSpec{ID: "hall", RightX: 10, BottomY: 10}); err != nil {
		t.Fatal(err)
	}
	if want := []uint64{seq + 1, seq + 2, seq + 3}; !cmp.Equal(tapped, want) {
		t.Errorf("tapped %v, want %v", tapped, want)
	}
	if want := []uint64{0, seq + 1, seq + 2, seq + 3, seq + 4}; !cmp.Equal(observed, want) {
		t.Errorf("observed %v, want %v (the zone as it is, then every change)", observed, want)
	}
}

// An observer that starts while the home delivers its events (here, from
// within another observer) gets none of the changes made before it
// started, which wait for the other observers: ObserveCurrent's observer
// gets the home as it is first, then the changes after it, as it does
// when the home delivers nothing; Observe's gets the changes after it.
func TestObserveDuringDelivery(t *testing.T) {
	for _, current := range []bool{false, true} {
		t.Run(fmt.Sprint("current=", current), func(t *testing.T) {
			h := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Paused: true})
			if _, err := h.CreateZone(sim.ZoneSpec{ID: "kitchen", RightX: 10, BottomY: 10}); err != nil {
				t.Fatal(err)
			}
			v := 0.0
			change := func() {
				v++
				if _, err := h.UpdateZone("kitchen", sim.ZoneUpdate{Variables: map[string]*float64{"Temperature": &v}}); err != nil {
					t.Fatal(err)
				}
			}
			var got []sim.Event
			var from uint64
			var stop func()
			defer func() { stop() }()
			defer h.Observe(func(sim.Event) {
				if stop != nil {
					return
				}
				change() // both wait for this observer
				change()
				from = h.EventSeq()
				observe := h.Observe
				if current {
					observe = h.ObserveCurrent
				}
				stop = observe(func(e sim.Event) { got = append(got, e) })
				change()
			})()
			change()
			if len(got) == 0 {
				t.Fatal("the observer got nothing")
			}
			seen := false
			for i, e := range got {
				switch {
				case e.Current && (!current || seen):
					t.Errorf("event %d: the home as it is, after a change", i)
				case !e.Current && e.Seq <= from:
					t.Errorf("event %d: change %d, made before the observer started (after %d)", i, e.Seq, from)
				case !e.Current:
					seen = true
				}
			}
			if last := got[len(got)-1]; last.Seq != h.EventSeq() {
				t.Errorf("the last event is %d, want %d", last.Seq, h.EventSeq())
			}
		})
	}
}

// TestSubscribeHugeBuffer checks that Subscribe takes any buffer size, as its
// doc allows: math.MaxInt made make panic with "makechan: size out of
// range" (and a smaller huge one would exhaust memory); past
// MaxSubscriptionBuffer it is MaxSubscriptionBuffer, and the subscription
// works.
func TestSubscribeHugeBuffer(t *testing.T) {
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock()})
	sub := home.Subscribe(math.MaxInt)
	defer sub.Close()
	if c := cap(sub.C); c != sim.MaxSubscriptionBuffer {
		t.Errorf("Subscribe(math.MaxInt) buffers %d events, want %d", c, sim.MaxSubscriptionBuffer)
	}
	if _, err := home.CreateZone(sim.ZoneSpec{ID: "z", RightX: 1, BottomY: 1}); err != nil {
		t.Fatal(err)
	}
	if e := <-sub.C; e.Type != sim.EventZoneAdded {
		t.Errorf("got %s, want zone-added", e.Type)
	}
}
