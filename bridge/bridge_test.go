package bridge_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/bridge"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

func ptr[T any](v T) *T { return &v }

// setup returns a home with one room (30 m³), a thermometer, a heater and a
// cooler standing for the room's heat loss, joined to an engine.
func setup(t *testing.T) (*sim.Home, *mediation.Engine, *bytes.Buffer) {
	t.Helper()
	mock := clock.NewMock()
	home := sim.MustNew(sim.Config{WallClock: mock, Location: time.UTC})
	out := &bytes.Buffer{}
	engine := mediation.NewEngine(mediation.Config{Clock: mock, Output: out})
	t.Cleanup(func() { engine.Close() })
	b, err := bridge.New(home, engine)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(home.CreateZone(sim.ZoneSpec{ID: "room", RightX: 100, BottomY: 100, Variables: map[string]float64{"Volume": 30}}))
	must(home.CreateDevice(sim.DeviceSpec{ID: "thermo", Type: "Thermometer", PositionX: ptr(10), PositionY: ptr(10)}))
	must(home.CreateDevice(sim.DeviceSpec{ID: "heater", Type: "Heater", PositionX: ptr(50), PositionY: ptr(50)}))
	must(home.CreateDevice(sim.DeviceSpec{ID: "loss", Type: "Cooler", PositionX: ptr(90), PositionY: ptr(90),
		Properties: map[string]any{"cooler.powerLevel": 0.3}}))
	return home, engine, out
}

func build(t *testing.T, ch *mediation.Chain, steps ...func() (mediation.ComponentInfo, error)) {
	t.Helper()
	for _, s := range steps {
		if _, err := s(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestThermostatChain runs thermometer → router → heater for a simulated
// day with Advance: the room must stay in its band, the heater switching on
// and off all day.
func TestThermostatChain(t *testing.T) {
	home, engine, _ := setup(t)
	ch, _ := engine.CreateChain("thermostat")
	build(t, ch,
		func() (mediation.ComponentInfo, error) {
			return ch.AddAdapter("device-in", "thermometer", map[string]any{"devices": "thermo", "property": "current_temperature"})
		},
		func() (mediation.ComponentInfo, error) {
			return ch.AddMediator("router", "band", map[string]any{
				"conditions": map[string]any{"(value<=292)": "cold", "(value>=294)": "warm"}})
		},
		func() (mediation.ComponentInfo, error) {
			return ch.AddAdapter("device-out", "heat", map[string]any{"device": "heater", "property": "heater.powerLevel", "value": 1.0})
		},
		func() (mediation.ComponentInfo, error) {
			return ch.AddAdapter("device-out", "rest", map[string]any{"device": "heater", "property": "heater.powerLevel", "value": 0.0})
		},
	)
	for _, b := range [][2]string{{"thermometer:out", "band:in"}, {"band:cold", "heat:in"}, {"band:warm", "rest:in"}} {
		if _, err := ch.Bind(b[0], b[1], "", nil); err != nil {
			t.Fatal(err)
		}
	}
	ch.Start()

	lo, hi, switches := 1e9, 0.0, 0
	var last any
	settled := false
	home.Observe(func(e sim.Event) {
		if e.DeviceID == "heater" && e.Property == "heater.powerLevel" && e.Value != last {
			switches++
			last = e.Value
		}
		if e.ZoneID == "room" && e.Property == "Temperature" {
			v := e.Value.(float64)
			if v <= 292.1 {
				settled = true
			}
			if settled {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	})
	if err := home.Advance(24 * time.Hour); err != nil {
		t.Fatal(err)
	}
	t.Logf("band %.3f..%.3f K, heater switched %d times", lo, hi, switches)
	// One heater update past each threshold at most: net +700 W, or -300 W,
	// for 5 s in 30 m³.
	const step = 700 * 5 / (1200 * 30.0)
	if lo < 292-step || hi > 294+step {
		t.Errorf("the room went from %.3f to %.3f K, want within [292, 294] ± %.3f", lo, hi, step)
	}
	if switches < 20 {
		t.Errorf("the heater switched %d times in a day; the thermostat is not working", switches)
	}
	info, _ := ch.Component("heat")
	if info.Counters.In == 0 || info.Counters.Errors != 0 {
		t.Errorf("heat counters = %+v", info.Counters)
	}
}

// TestDeviceInMessages checks the messages a device-in adapter emits, and
// its selection.
func TestDeviceInMessages(t *testing.T) {
	home, engine, _ := setup(t)
	ch, _ := engine.CreateChain("c")
	build(t, ch,
		func() (mediation.ComponentInfo, error) {
			return ch.AddAdapter("device-in", "heaters", map[string]any{"kinds": []any{"Heater"}, "zone": "room"})
		},
		func() (mediation.ComponentInfo, error) { return ch.AddAdapter("rest-out", "out", nil) },
	)
	ch.Bind("heaters:out", "out:in", "", nil)
	ch.Start()
	home.UpdateDevice("heater", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": 0.5}})
	home.UpdateDevice("loss", sim.DeviceUpdate{Properties: map[string]any{"cooler.powerLevel": 0.5}}) // not selected
	home.UpdateDevice("heater", sim.DeviceUpdate{State: ptr("deactivated")})
	// A reading of one's own, sent as REST's POST .../components/heaters/data does.
	if err := ch.Send("heaters", mediation.Message{Content: map[string]any{"device": "mine", "value": 1.0}}); err != nil {
		t.Fatal(err)
	}
	msgs, _ := ch.Messages("out")
	now := home.Now().UnixMilli()
	want := []mediation.Message{
		{Content: map[string]any{"device": "heater", "property": "heater.powerLevel", "value": 0.5},
			Properties: map[string]any{"deviceId": "heater", "type": "iCasa.Heater", "location": "room", "property": "heater.powerLevel", "time": now}},
		{Content: map[string]any{"device": "heater", "property": "state", "value": "deactivated"},
			Properties: map[string]any{"deviceId": "heater", "type": "iCasa.Heater", "location": "room", "property": "state", "time": now}},
		{Content: map[string]any{"device": "mine", "value": 1.0}},
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

// TestDeviceInCountsWhatAFullQueueRefuses: the home does not wait for a
// chain; a reading a full queue refuses is lost, and the device-in's
// dropped counter shows it.
func TestDeviceInCountsWhatAFullQueueRefuses(t *testing.T) {
	home, engine, _ := setup(t)
	ch, _ := engine.CreateChain("c")
	tokens := make(chan struct{})
	if err := engine.Registry().Register(mediation.Type{Name: "gate", Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"},
		New: func(map[string]any, mediation.Env) (any, error) {
			return mediation.ProcessorFunc(func(_ string, m mediation.Message, out mediation.Emitter) error {
				<-tokens
				return nil
			}), nil
		}}); err != nil {
		t.Fatal(err)
	}
	build(t, ch,
		func() (mediation.ComponentInfo, error) {
			return ch.AddAdapter("device-in", "in", map[string]any{"devices": "heater", "property": "heater.powerLevel"})
		},
		func() (mediation.ComponentInfo, error) { return ch.AddMediator("gate", "g", nil) },
	)
	if _, err := ch.Bind("in:out", "g:in", "queue", map[string]any{"capacity": 1}); err != nil {
		t.Fatal(err)
	}
	ch.Start()
	defer close(tokens)
	for i := range 10 {
		home.UpdateDevice("heater", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": float64(i+1) / 10}})
	}
	info, _ := ch.Component("in")
	// At most two taken: one held in the gate, one in the queue.
	if c := info.Counters; c.Out+c.Dropped != 10 || c.Dropped < 8 {
		t.Errorf("counters %+v: want the 10 readings emitted or dropped, 8 or more dropped", c)
	}
}

// TestDeviceInCarriesEvents: with events, a device-in carries its devices'
// events too: a motion sensor's is its only signal.
func TestDeviceInCarriesEvents(t *testing.T) {
	home, engine, _ := setup(t)
	if _, err := home.CreateDevice(sim.DeviceSpec{ID: "motion", Type: "MotionSensor", PositionX: ptr(20), PositionY: ptr(20)}); err != nil {
		t.Fatal(err)
	}
	ch, _ := engine.CreateChain("c")
	for _, events := range []bool{true, false} {
		id := fmt.Sprintf("in-%v", events)
		build(t, ch,
			func() (mediation.ComponentInfo, error) {
				return ch.AddAdapter("device-in", id, map[string]any{"kinds": "MotionSensor", "events": events})
			},
			func() (mediation.ComponentInfo, error) { return ch.AddAdapter("rest-out", "out-"+id, nil) },
		)
		ch.Bind(id+":out", "out-"+id+":in", "", nil)
	}
	ch.Start()
	if _, err := home.CreatePerson(sim.PersonSpec{ID: "ada", Type: "Woman", PositionX: ptr(50), PositionY: ptr(50)}); err != nil {
		t.Fatal(err)
	}
	msgs, _ := ch.Messages("out-in-true")
	want := []mediation.Message{{Content: map[string]any{"device": "motion", "event": map[string]any{"personId": "ada", "motion": "enter"}},
		Properties: map[string]any{"deviceId": "motion", "type": "iCasa.MotionSensor", "location": "room", "event": true, "time": home.Now().UnixMilli()}}}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("with events (-want +got):\n%s", diff)
	}
	if msgs, _ := ch.Messages("out-in-false"); len(msgs) != 0 {
		t.Errorf("without events: %v, want none", msgs)
	}
}

// TestDeviceInSeesRemovals: a property removed is a change too, its value
// null: a device leaving every zone loses its Location.
func TestDeviceInSeesRemovals(t *testing.T) {
	home, engine, _ := setup(t)
	ch, _ := engine.CreateChain("c")
	build(t, ch,
		func() (mediation.ComponentInfo, error) {
			return ch.AddAdapter("device-in", "where", map[string]any{"devices": "heater", "property": "Location"})
		},
		func() (mediation.ComponentInfo, error) { return ch.AddAdapter("rest-out", "out", nil) },
	)
	ch.Bind("where:out", "out:in", "", nil)
	ch.Start()
	for _, x := range []int{500, 50} {
		if _, err := home.UpdateDevice("heater", sim.DeviceUpdate{PositionX: ptr(x)}); err != nil {
			t.Fatal(err)
		}
	}
	msgs, _ := ch.Messages("out")
	var got []any
	for _, m := range msgs {
		got = append(got, m.Content.(map[string]any)["value"])
	}
	if diff := cmp.Diff([]any{nil, "room"}, got); diff != "" {
		t.Errorf("Location values (-want +got):\n%s", diff)
	}
}

// TestDeviceInTakesOlderNames: a property selected by an older name (an
// alias) is the property itself: its changes come out, under its own name.
func TestDeviceInTakesOlderNames(t *testing.T) {
	home, engine, _ := setup(t)
	ch, _ := engine.CreateChain("c")
	build(t, ch,
		func() (mediation.ComponentInfo, error) {
			return ch.AddAdapter("device-in", "t", map[string]any{"devices": "thermo", "property": "thermometer.currentTemperature"})
		},
		func() (mediation.ComponentInfo, error) { return ch.AddAdapter("rest-out", "out", nil) },
	)
	ch.Bind("t:out", "out:in", "", nil)
	ch.Start()
	if _, err := home.UpdateZone("room", sim.ZoneUpdate{Variables: map[string]*float64{"Temperature": ptr(300.0)}}); err != nil {
		t.Fatal(err)
	}
	msgs, _ := ch.Messages("out")
	if len(msgs) != 1 || msgs[0].Properties["property"] != "current_temperature" {
		t.Errorf("messages %v, want one for current_temperature", msgs)
	}
	// The current value is announced under the older name too.
	build(t, ch,
		func() (mediation.ComponentInfo, error) {
			return ch.AddAdapter("device-in", "now", map[string]any{"devices": "thermo", "property": "thermometer.currentTemperature", "current": true})
		},
		func() (mediation.ComponentInfo, error) { return ch.AddAdapter("rest-out", "nowout", nil) },
	)
	ch.Bind("now:out", "nowout:in", "", nil)
	if msgs, _ := ch.Messages("nowout"); len(msgs) != 1 || msgs[0].Properties["current"] != true {
		t.Errorf("announced %v, want the current temperature", msgs)
	}
	// powerSwitch.currentStatus is a PowerSwitchMeter's own name and a
	// ToggleSwitch's older one: selected alone, it stands for both.
	for _, d := range []sim.DeviceSpec{{ID: "ts", Type: "ToggleSwitch"}, {ID: "pm", Type: "PowerSwitchMeter"}} {
		if _, err := home.CreateDevice(d); err != nil {
			t.Fatal(err)
		}
	}
	build(t, ch,
		func() (mediation.ComponentInfo, error) {
			return ch.AddAdapter("device-in", "switches", map[string]any{"property": "powerSwitch.currentStatus"})
		},
		func() (mediation.ComponentInfo, error) { return ch.AddAdapter("rest-out", "sw", nil) },
	)
	ch.Bind("switches:out", "sw:in", "", nil)
	for _, id := range []string{"ts", "pm"} {
		if _, err := home.UpdateDevice(id, sim.DeviceUpdate{Properties: map[string]any{"powerSwitch.currentStatus": true}}); err != nil {
			t.Fatal(err)
		}
	}
	msgs, _ = ch.Messages("sw")
	var got []any
	for _, m := range msgs {
		got = append(got, m.Properties["deviceId"], m.Properties["property"])
	}
	if diff := cmp.Diff([]any{"ts", "current_status", "pm", "powerSwitch.currentStatus"}, got); diff != "" {
		t.Errorf("switch messages (-want +got):\n%s", diff)
	}
}

func TestAdapterPropertiesAreChecked(t *testing.T) {
	_, engine, _ := setup(t)
	ch, _ := engine.CreateChain("c")
	tests := []struct {
		typ   string
		props map[string]any
		want  string
	}{
		{"device-in", map[string]any{"devices": "nope"}, "nope"},
		{"device-in", map[string]any{"kinds": "Toaster"}, "Toaster"},
		{"device-in", map[string]any{"zone": "attic"}, "attic"},
		{"device-in", map[string]any{"kinds": "Heater", "property": "current_temperature"}, "current_temperature"},
		{"device-in", map[string]any{"devices": 3.0}, "devices"},
		{"device-in", map[string]any{"devices": "thermo", "kinds": "Photometer, Heater"}, "is of the selected kinds"},
		{"device-out", map[string]any{"device": "nope"}, "nope"},
		{"device-out", map[string]any{"device": "thermo", "property": "current_temperature"}, "derived"},
		{"device-out", map[string]any{"device": "heater", "property": "heater.powerLevel", "value": 7.0}, "between 0 and 1"},
		{"device-out", map[string]any{"property": "current_temperature"}, "derived"},
		{"device-out", map[string]any{"property": "Location"}, "derived"},
		{"device-out", map[string]any{"property": "heater.powerLevel", "value": 7.0}, "between 0 and 1"},
		{"device-out", map[string]any{"property": "fault", "value": "maybe"}, "fault"},
		{"device-out", map[string]any{"property": "state", "value": 42.0}, "state"},
	}
	for _, tt := range tests {
		_, err := ch.AddAdapter(tt.typ, "a", tt.props)
		if !errors.Is(err, mediation.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("AddAdapter(%s, %v) = %v, want an invalid error naming %q", tt.typ, tt.props, err, tt.want)
		}
	}
	for i, props := range []map[string]any{
		{"kinds": "iCasa.Thermometer, Photometer", "property": "state"},
		{"devices": "thermo, heater", "kinds": "Heater"},                    // the heater is selected
		{"devices": "thermo", "property": "thermometer.currentTemperature"}, // an older name
		{"kinds": "Thermometer", "property": "thermometer.currentTemperature"},
	} {
		if _, err := ch.AddAdapter("device-in", fmt.Sprintf("ok%d", i), props); err != nil {
			t.Errorf("a valid device-in %v: %v", props, err)
		}
	}
	for i, props := range []map[string]any{
		{"property": "heater.powerLevel", "value": 0.5},
		{"property": "power_level"},           // the dimmer's, settable
		{"property": "mine", "value": "free"}, // a device's own
		{"property": "state", "value": "deactivated"},
	} {
		if _, err := ch.AddAdapter("device-out", fmt.Sprintf("out%d", i), props); err != nil {
			t.Errorf("a valid device-out %v: %v", props, err)
		}
	}
}

// TestRestoredAdaptersWaitForWhatWasDeleted: made again from a saved
// state (Engine.Restore), adapters naming a device or zone deleted since
// load, as they lived before the restart, and work once it is back;
// a client's request naming them is still refused.
func TestRestoredAdaptersWaitForWhatWasDeleted(t *testing.T) {
	home, engine, _ := setup(t)
	ch, _ := engine.CreateChain("c")
	in := map[string]any{"devices": "ghost", "zone": "attic", "property": "heater.powerLevel"}
	out := map[string]any{"device": "ghost", "property": "heater.powerLevel", "value": 1.0}
	if _, err := ch.AddAdapter("device-in", "watch", in); !errors.Is(err, mediation.ErrInvalid) {
		t.Fatalf("a device-in naming nothing, outside Restore: %v, want invalid", err)
	}
	err := engine.Restore(func() error {
		build(t, ch,
			func() (mediation.ComponentInfo, error) { return ch.AddAdapter("device-in", "watch", in) },
			func() (mediation.ComponentInfo, error) { return ch.AddAdapter("rest-out", "seen", nil) },
			func() (mediation.ComponentInfo, error) { return ch.AddAdapter("rest-in", "cmd", nil) },
			func() (mediation.ComponentInfo, error) { return ch.AddAdapter("device-out", "switch", out) },
		)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Restored too: a device made again as another kind, and a list with
	// a device deleted beside one that lacks the property.
	err = engine.Restore(func() error {
		_, err := ch.AddAdapter("device-in", "kind", map[string]any{"devices": "heater", "kinds": "Thermometer"})
		if err == nil {
			_, err = ch.AddAdapter("device-in", "mixed", map[string]any{"devices": "ghost, thermo", "property": "heater.powerLevel"})
		}
		if err == nil { // a property derived since in every kind that has it
			_, err = ch.AddAdapter("device-out", "derived", map[string]any{"property": "current_temperature"})
		}
		return err
	})
	if err != nil {
		t.Errorf("restoring adapters whose devices changed: %v", err)
	}
	if _, err := ch.AddAdapter("device-out", "late", out); !errors.Is(err, mediation.ErrInvalid) {
		t.Errorf("a device-out naming nothing, after Restore: %v, want invalid", err)
	}
	ch.Bind("watch:out", "seen:in", "", nil)
	ch.Bind("cmd:out", "switch:in", "", nil)
	ch.Start()
	if err := ch.Send("cmd", mediation.Message{Content: "on"}); err != nil {
		t.Fatal(err)
	}
	if info, _ := ch.Component("switch"); info.Counters.Errors != 1 {
		t.Errorf("device-out without its device: %d errors, want 1", info.Counters.Errors)
	}
	if _, err := home.CreateZone(sim.ZoneSpec{ID: "attic", LeftX: 200, RightX: 300, BottomY: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := home.CreateDevice(sim.DeviceSpec{ID: "ghost", Type: "Heater", PositionX: ptr(250), PositionY: ptr(50)}); err != nil {
		t.Fatal(err)
	}
	if err := ch.Send("cmd", mediation.Message{Content: "on"}); err != nil {
		t.Fatal(err)
	}
	home.Advance(0) // device-out applies through the scheduler
	if d, _ := home.Device("ghost"); d.Properties["heater.powerLevel"] != 1.0 {
		t.Errorf("the device back: power level %v, want 1", d.Properties["heater.powerLevel"])
	}
	msgs, _ := ch.Messages("seen")
	if len(msgs) != 1 || msgs[0].Properties["deviceId"] != "ghost" {
		t.Errorf("device-in saw %v, want the change of ghost", msgs)
	}
}

// TestDeviceOutMessages: messages name their target in the content or the
// properties; an invalid one is counted as an error, reported, and not
// applied at all.
func TestDeviceOutMessages(t *testing.T) {
	home, engine, out := setup(t)
	ch, _ := engine.CreateChain("c")
	ch.AddAdapter("rest-in", "in", nil)
	ch.AddAdapter("device-out", "apply", nil)
	ch.Bind("in:out", "apply:in", "", nil)
	ch.Start()
	send := func(m mediation.Message) {
		if err := ch.Send("in", m); err != nil {
			t.Fatal(err)
		}
		home.Advance(0) // device-out applies through the scheduler
	}
	send(mediation.Message{Content: map[string]any{"device": "heater", "property": "heater.powerLevel", "value": 0.75}})
	send(mediation.Message{Content: "on", Properties: map[string]any{"deviceId": "loss", "property": "cooler.powerLevel", "value": 0.1}})
	for _, bad := range []mediation.Message{
		{Content: map[string]any{"device": "heater", "property": "heater.powerLevel", "value": 3.0}},
		{Content: map[string]any{"device": "thermo", "property": "current_temperature", "value": 3.0}},
		{Content: map[string]any{"device": "ghost", "property": "x", "value": 1.0}},
		{Content: map[string]any{"property": "heater.powerLevel", "value": 1.0}},
		{Content: "hello"},
	} {
		send(bad)
	}
	h, _ := home.Device("heater")
	l, _ := home.Device("loss")
	if h.Properties["heater.powerLevel"] != 0.75 || l.Properties["cooler.powerLevel"] != 0.1 {
		t.Errorf("heater %v, cooler %v; want 0.75 and 0.1", h.Properties["heater.powerLevel"], l.Properties["cooler.powerLevel"])
	}
	info, _ := ch.Component("apply")
	if info.Counters.Errors != 5 {
		t.Errorf("errors = %d, want the 5 bad messages", info.Counters.Errors)
	}
	if n := strings.Count(out.String(), "c/apply: "); n != 5 {
		t.Errorf("reported %d errors:\n%s", n, out)
	}
}

func TestTypesAreListed(t *testing.T) {
	_, engine, _ := setup(t)
	var names []string
	for _, ty := range engine.Registry().Types() {
		names = append(names, ty.Name)
	}
	for _, n := range []string{"device-in", "device-out"} {
		if !strings.Contains(strings.Join(names, ","), n) {
			t.Errorf("types %v lack %s", names, n)
		}
	}
	if _, err := bridge.New(sim.MustNew(sim.Config{}), engine); err == nil {
		t.Error("a second bridge on the same registry = nil error")
	}
}

// TestDeviceInCurrent checks that a device-in adapter with "current" emits
// the current readings when its chain starts and when a binding from it is
// added to a started chain, and that without it only changes count.
func TestDeviceInCurrent(t *testing.T) {
	home, engine, _ := setup(t)
	for _, current := range []bool{true, false} {
		id := "levels"
		if !current {
			id = "edges"
		}
		ch, err := engine.CreateChain(id)
		if err != nil {
			t.Fatal(err)
		}
		build(t, ch,
			func() (mediation.ComponentInfo, error) {
				return ch.AddAdapter("device-in", "in", map[string]any{"devices": "thermo", "property": "current_temperature", "current": current})
			},
			func() (mediation.ComponentInfo, error) { return ch.AddAdapter("rest-out", "out", nil) },
			func() (mediation.ComponentInfo, error) { return ch.AddAdapter("rest-out", "late", nil) },
		)
		if _, err := ch.Bind("in:out", "out:in", "", nil); err != nil {
			t.Fatal(err)
		}
		if err := ch.Start(); err != nil {
			t.Fatal(err)
		}
		msgs, _ := ch.Messages("out")
		want := 0
		if current {
			want = 1
		}
		if len(msgs) != want {
			t.Fatalf("current=%v: %d messages after Start, want %d: %+v", current, len(msgs), want, msgs)
		}
		if current {
			c := msgs[0].Content.(map[string]any)
			if c["device"] != "thermo" || c["value"] != sim.DefaultTemperature || msgs[0].Properties["current"] != true {
				t.Errorf("message = %+v, want thermo's current temperature", msgs[0])
			}
		}
		if _, err := ch.Bind("in:out", "late:in", "", nil); err != nil {
			t.Fatal(err)
		}
		if late, _ := ch.Messages("late"); len(late) != want {
			t.Errorf("current=%v: %d messages on a binding added to the started chain, want %d", current, len(late), want)
		}
	}
	if _, err := engine.CreateChain("bad"); err != nil {
		t.Fatal(err)
	}
	ch, _ := engine.Chain("bad")
	if _, err := ch.AddAdapter("device-in", "in", map[string]any{"current": "yes"}); !errors.Is(err, mediation.ErrInvalid) {
		t.Errorf("current \"yes\": AddAdapter = %v, want ErrInvalid", err)
	}
	_ = home
}

// TestDeviceOutAppliesOnTheNextStep checks the documented timing: a message
// into device-out is checked at once but applied at the current simulated
// time by whoever drives the home next (here Advance(0)), not before.
func TestDeviceOutAppliesOnTheNextStep(t *testing.T) {
	home, engine, _ := setup(t)
	ch, err := engine.CreateChain("drive")
	if err != nil {
		t.Fatal(err)
	}
	build(t, ch,
		func() (mediation.ComponentInfo, error) { return ch.AddAdapter("rest-in", "cmd", nil) },
		func() (mediation.ComponentInfo, error) {
			return ch.AddAdapter("device-out", "heat", map[string]any{"device": "heater", "property": "heater.powerLevel"})
		},
	)
	if _, err := ch.Bind("cmd:out", "heat:in", "", nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.Start(); err != nil {
		t.Fatal(err)
	}
	before := home.Now()
	if err := ch.Send("cmd", mediation.Message{Content: map[string]any{"value": 0.8}}); err != nil {
		t.Fatal(err)
	}
	if d, _ := home.Device("heater"); d.Properties["heater.powerLevel"] != 0.0 {
		t.Fatalf("powerLevel = %v before the home is driven, want 0", d.Properties["heater.powerLevel"])
	}
	if err := home.Advance(0); err != nil {
		t.Fatal(err)
	}
	if d, _ := home.Device("heater"); d.Properties["heater.powerLevel"] != 0.8 || !home.Now().Equal(before) {
		t.Errorf("after Advance(0): powerLevel = %v at %v, want 0.8 at %v", d.Properties["heater.powerLevel"], home.Now(), before)
	}
}

// TestNewNil: a nil home or engine is a programming error, and New says so
// before it registers anything.
func TestNewNil(t *testing.T) {
	engine := mediation.NewEngine(mediation.Config{})
	defer engine.Close()
	for _, c := range []struct {
		home   *sim.Home
		engine *mediation.Engine
		want   string
	}{
		{nil, engine, "bridge: New with a nil home"},
		{sim.MustNew(sim.Config{}), nil, "bridge: New with a nil engine"},
	} {
		func() {
			defer func() {
				if got := recover(); got != c.want {
					t.Errorf("panic %v, want %q", got, c.want)
				}
			}()
			bridge.New(c.home, c.engine)
		}()
	}
	if _, err := engine.Registry().Type(bridge.DeviceIn); err == nil {
		t.Error("a New that panicked registered device-in")
	}
}

// TestDeviceOutCountsWhatTheHomeRefusesLater: a message checked at once but
// refused when the home applies it (the device deleted in between) is an
// error of the component, counted, as one refused at once.
func TestDeviceOutCountsWhatTheHomeRefusesLater(t *testing.T) {
	home, engine, out := setup(t)
	ch, _ := engine.CreateChain("c")
	if _, err := ch.AddAdapter("device-out", "o", map[string]any{"property": "heater.powerLevel"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.AddAdapter("rest-in", "src", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Bind("src:out", "o:in", "", nil); err != nil {
		t.Fatal(err)
	}
	ch.Start()
	if err := ch.Send("src", mediation.Message{Content: map[string]any{"device": "heater", "value": 0.5}}); err != nil {
		t.Fatal(err)
	}
	if err := home.DeleteDevice("heater"); err != nil {
		t.Fatal(err)
	}
	if err := home.Advance(0); err != nil {
		t.Fatal(err)
	}
	info, _ := ch.Component("o")
	if info.Counters.Errors != 1 {
		t.Errorf("errors = %d, want 1 (counters %+v)", info.Counters.Errors, info.Counters)
	}
	if !strings.Contains(out.String(), `c/o: device "heater" does not exist`) {
		t.Errorf("output %q does not report the refused change", out.String())
	}
}

// TestDeviceOutLoopThroughTheHomeIsCut: a chain that turns the heater off
// when on and on when off sets off a change at the same simulated instant
// for ever; Advance must still return, the loop cut after MaxCascade
// changes, which counts one error. Changes from outside the chain, however
// many at one instant, are not a cascade.
func TestDeviceOutLoopThroughTheHomeIsCut(t *testing.T) {
	home, engine, out := setup(t)
	ch, _ := engine.CreateChain("loop")
	build(t, ch,
		func() (mediation.ComponentInfo, error) {
			return ch.AddAdapter("device-in", "in", map[string]any{"devices": "heater", "property": "heater.powerLevel"})
		},
		func() (mediation.ComponentInfo, error) {
			return ch.AddMediator("router", "r", map[string]any{
				"conditions": map[string]any{"(value<=0.4)": "lo", "(value>=0.5)": "hi"}})
		},
		func() (mediation.ComponentInfo, error) {
			return ch.AddAdapter("device-out", "on", map[string]any{"device": "heater", "property": "heater.powerLevel", "value": 1.0})
		},
		func() (mediation.ComponentInfo, error) {
			return ch.AddAdapter("device-out", "off", map[string]any{"device": "heater", "property": "heater.powerLevel", "value": 0.0})
		},
	)
	for _, b := range [][2]string{{"in:out", "r:in"}, {"r:lo", "on:in"}, {"r:hi", "off:in"}} {
		if _, err := ch.Bind(b[0], b[1], "", nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := ch.Start(); err != nil {
		t.Fatal(err)
	}
	changes := 0
	stop := home.Observe(func(e sim.Event) {
		if e.DeviceID == "heater" && e.Property == "heater.powerLevel" {
			if changes++; changes > 10*bridge.MaxCascade {
				t.Fatalf("the heater changed %d times at %v: the loop is not cut", changes, e.Time)
			}
		}
	})
	defer stop()
	if _, err := home.UpdateDevice("heater", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": 1.0}}); err != nil {
		t.Fatal(err)
	}
	if err := home.Advance(time.Second); err != nil {
		t.Fatal(err)
	}
	if want := bridge.MaxCascade + 1; changes != want {
		t.Errorf("the heater changed %d times, want %d (the client's, then MaxCascade)", changes, want)
	}
	var errs uint64
	for _, id := range []string{"on", "off"} {
		info, _ := ch.Component(id)
		errs += info.Counters.Errors
	}
	if errs != 1 || !strings.Contains(out.String(), "MaxCascade") {
		t.Errorf("%d errors, output %q; want the cut loop reported once", errs, out.String())
	}

	// Many changes from outside at one instant: each applied.
	if err := ch.Stop(); err != nil {
		t.Fatal(err)
	}
	feed, _ := engine.CreateChain("feed")
	build(t, feed,
		func() (mediation.ComponentInfo, error) { return feed.AddAdapter("rest-in", "src", nil) },
		func() (mediation.ComponentInfo, error) {
			return feed.AddAdapter("device-out", "set", map[string]any{"device": "heater", "property": "heater.powerLevel"})
		},
	)
	if _, err := feed.Bind("src:out", "set:in", "", nil); err != nil {
		t.Fatal(err)
	}
	if err := feed.Start(); err != nil {
		t.Fatal(err)
	}
	changes = 0
	for i := range 2 * bridge.MaxCascade {
		if err := feed.Send("src", mediation.Message{Content: map[string]any{"value": float64(i%2) / 2}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := home.Advance(0); err != nil {
		t.Fatal(err)
	}
	if info, _ := feed.Component("set"); info.Counters.Errors != 0 || changes != 2*bridge.MaxCascade {
		t.Errorf("%d changes, counters %+v; want %d, no error", changes, info.Counters, 2*bridge.MaxCascade)
	}
}

// TestDeviceInReconfiguredWhileChangesFlow: a device-in reconfigured
// (UpdateProperties) while the device changes passes each change on once,
// though for a moment both its old and its new implementation are
// registered.
func TestDeviceInReconfiguredWhileChangesFlow(t *testing.T) {
	home, engine, _ := setup(t)
	const n = 5000
	if _, err := home.UpdateDevice("heater", sim.DeviceUpdate{Properties: map[string]any{"custom": -1}}); err != nil {
		t.Fatal(err)
	}
	ch, _ := engine.CreateChain("c")
	build(t, ch,
		func() (mediation.ComponentInfo, error) {
			return ch.AddAdapter("device-in", "in", map[string]any{"devices": "heater", "property": "custom"})
		},
		func() (mediation.ComponentInfo, error) {
			return ch.AddAdapter("rest-out", "log", map[string]any{"capacity": 2 * n})
		},
	)
	if _, err := ch.Bind("in:out", "log:in", "", nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.Start(); err != nil {
		t.Fatal(err)
	}
	done, stopped := make(chan struct{}), make(chan error)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-done:
				close(stopped)
				return
			default:
			}
			if _, err := ch.UpdateProperties("in", map[string]any{"events": i%2 == 0}); err != nil {
				stopped <- err
				return
			}
		}
	}()
	for i := range n {
		if _, err := home.UpdateDevice("heater", sim.DeviceUpdate{Properties: map[string]any{"custom": i}}); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	msgs, _ := ch.Messages("log")
	seen := map[any]bool{}
	for _, m := range msgs {
		v := m.Content.(map[string]any)["value"]
		if seen[v] {
			t.Fatalf("the change to %v came twice (%d messages for %d changes)", v, len(msgs), n)
		}
		seen[v] = true
	}
	if len(msgs) != n {
		t.Errorf("%d messages for %d changes", len(msgs), n)
	}
}

// scribble is a mediator that writes into the value map of the messages it
// processes, which it owns.
type scribble struct{}

func (scribble) Process(_ string, m mediation.Message, out mediation.Emitter) error {
	if c, ok := m.Content.(map[string]any); ok {
		if v, ok := c["value"].(map[string]any); ok {
			v["x"] = "scribbled"
		}
	}
	out.Emit("out", m)
	return nil
}

// TestDeviceInMessagesAreTheirChainsOwn: a mediator may modify the message
// it is handed; a device-in's message with a value of maps must then not
// share it with another chain's, nor with what the home's other observers
// are handed.
func TestDeviceInMessagesAreTheirChainsOwn(t *testing.T) {
	home, engine, _ := setup(t)
	if err := engine.Registry().Register(mediation.Type{Name: "scribble", Kind: mediation.KindMediator, In: []string{"in"}, Out: []string{"out"},
		New: func(map[string]any, mediation.Env) (any, error) { return scribble{}, nil }}); err != nil {
		t.Fatal(err)
	}
	if _, err := home.UpdateDevice("heater", sim.DeviceUpdate{Properties: map[string]any{"cfg": map[string]any{"x": "a"}}}); err != nil {
		t.Fatal(err)
	}
	a, _ := engine.CreateChain("a")
	b, _ := engine.CreateChain("b")
	build(t, a,
		func() (mediation.ComponentInfo, error) {
			return a.AddAdapter("device-in", "in", map[string]any{"devices": "heater", "property": "cfg"})
		},
		func() (mediation.ComponentInfo, error) { return a.AddMediator("scribble", "s", nil) },
		func() (mediation.ComponentInfo, error) { return a.AddAdapter("rest-out", "log", nil) },
		func() (mediation.ComponentInfo, error) {
			return b.AddAdapter("device-in", "in", map[string]any{"devices": "heater", "property": "cfg"})
		},
		func() (mediation.ComponentInfo, error) { return b.AddAdapter("rest-out", "log", nil) },
	)
	for _, bd := range []struct {
		ch       *mediation.Chain
		from, to string
	}{{a, "in:out", "s:in"}, {a, "s:out", "log:in"}, {b, "in:out", "log:in"}} {
		if _, err := bd.ch.Bind(bd.from, bd.to, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, ch := range []*mediation.Chain{a, b} {
		if err := ch.Start(); err != nil {
			t.Fatal(err)
		}
	}
	var seen any
	stop := home.Observe(func(e sim.Event) {
		if e.Property == "cfg" {
			seen = e.Value
		}
	})
	defer stop()
	if _, err := home.UpdateDevice("heater", sim.DeviceUpdate{Properties: map[string]any{"cfg": map[string]any{"x": "b"}}}); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"x": "b"}
	msgs, _ := b.Messages("log")
	if len(msgs) != 1 || !cmp.Equal(msgs[0].Content.(map[string]any)["value"], want) {
		t.Errorf("chain b got %v, want the value %v", msgs, want)
	}
	if !cmp.Equal(seen, want) {
		t.Errorf("another observer of the home saw %v, want %v", seen, want)
	}
}

// TestDeviceInListsAreTrimmed: the entries of a list property are read as
// those of a comma-separated string: trimmed of spaces, empty ones left
// out (" heater" named no device).
func TestDeviceInListsAreTrimmed(t *testing.T) {
	_, engine, _ := setup(t)
	ch, _ := engine.CreateChain("c")
	for i, devices := range []any{" heater, loss ,", []any{" heater", "loss ", ""}} {
		if _, err := ch.AddAdapter("device-in", fmt.Sprint("in", i), map[string]any{"devices": devices, "kinds": []any{" Heater ", "Cooler"}}); err != nil {
			t.Errorf("devices %q: %v", devices, err)
		}
	}
}

// TestAdapterErrorsHaveOneKind checks that a device-in or device-out naming
// a device or zone that does not exist fails with ErrInvalid alone, as the
// package documents and as mediation promises of every error ("wraps exactly
// one" kind): the home's not-found error it quotes must not make it a
// not-found error too, which a caller testing errors.Is(err,
// mediation.ErrNotFound) would take for a missing chain or component.
func TestAdapterErrorsHaveOneKind(t *testing.T) {
	_, engine, _ := setup(t)
	ch, _ := engine.CreateChain("c")
	for _, tt := range []struct {
		typ   string
		props map[string]any
	}{
		{"device-in", map[string]any{"devices": "nope"}},
		{"device-in", map[string]any{"zone": "attic"}},
		{"device-in", map[string]any{"kinds": "Toaster"}},
		{"device-out", map[string]any{"device": "nope"}},
	} {
		_, err := ch.AddAdapter(tt.typ, "a", tt.props)
		if !errors.Is(err, mediation.ErrInvalid) {
			t.Errorf("AddAdapter(%s, %v) = %v, want an invalid error", tt.typ, tt.props, err)
		}
		for _, k := range []error{mediation.ErrNotFound, mediation.ErrConflict, mediation.ErrBusy} {
			if errors.Is(err, k) {
				t.Errorf("AddAdapter(%s, %v) = %v: of kind %v too", tt.typ, tt.props, err, k)
			}
		}
	}
}
