package sim_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pervasim/pervasim/sim"
)

func mustDevice(tb testing.TB, h *sim.Home, spec sim.DeviceSpec) sim.Device {
	tb.Helper()
	d, err := h.CreateDevice(spec)
	if err != nil {
		tb.Fatalf("CreateDevice(%+v) = %v, want nil error", spec, err)
	}
	return d
}

func mustGetDevice(tb testing.TB, h *sim.Home, id string) sim.Device {
	tb.Helper()
	d, err := h.Device(id)
	if err != nil {
		tb.Fatalf("Device(%q) = %v, want nil error", id, err)
	}
	return d
}

func mustUpdateDevice(tb testing.TB, h *sim.Home, id string, u sim.DeviceUpdate) sim.Device {
	tb.Helper()
	d, err := h.UpdateDevice(id, u)
	if err != nil {
		tb.Fatalf("UpdateDevice(%q, %+v) = %v, want nil error", id, u, err)
	}
	return d
}

var heaterServices = []string{
	"fr.liglab.adele.icasa.device.temperature.Heater",
	"fr.liglab.adele.icasa.simulator.SimulatedDevice",
	"fr.liglab.adele.icasa.device.GenericDevice",
}

// heaterProps returns the properties of a new heater, with extra merged over.
func heaterProps(extra map[string]any) map[string]any {
	m := map[string]any{
		"heater.powerLevel":           0.0,
		"heater.maxPowerLevel":        1000.0,
		"heater.updaterThread.period": 5000.0,
		"state":                       "activated",
		"fault":                       "no",
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// kindNames are the built-in kinds, in registry order: the contract's,
// then the rest of iCasa's catalogue.
var kindNames = []string{
	"Heater", "Cooler", "Thermometer", "Photometer", "DimmerLight", "BinaryLight",
	"PresenceSensor", "MotionSensor", "PushButton", "ToggleSwitch", "Sprinkler",
	"COGasSensor", "CO2GasSensor",
	"AudioSource", "Speaker", "DoorWindowSensor", "FloodSensor", "Siren", "Camera", "PowerSwitchMeter",
	"BathroomScale", "Sphygmometer", "MedicalThermometer", "Tablet",
}

// ignoreBehavior compares kinds without their behaviour: functions are
// never equal to cmp.
var ignoreBehavior = cmpopts.IgnoreFields(sim.Kind{}, "Behavior")

func TestKinds(t *testing.T) {
	kinds := sim.Kinds()
	var names []string
	for _, k := range kinds {
		names = append(names, k.Name)
	}
	if diff := cmp.Diff(kindNames, names); diff != "" {
		t.Fatalf("Kinds() names (-want +got):\n%s", diff)
	}
	for _, k := range kinds {
		t.Run(k.Name, func(t *testing.T) {
			if got, want := k.Type(), "iCasa."+k.Name; got != want {
				t.Errorf("Type() = %q, want %q", got, want)
			}
			want := []string{k.Service, sim.ServiceSimulatedDevice, sim.ServiceGenericDevice}
			if diff := cmp.Diff(want, k.Services()); diff != "" {
				t.Errorf("Services() (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(k.Service, "fr.liglab.adele.icasa.device.") {
				t.Errorf("Service = %q, want a qualified iCasa device interface", k.Service)
			}
			got, err := sim.LookupKind(k.Type())
			if err != nil {
				t.Fatalf("LookupKind(%q) = %v", k.Type(), err)
			}
			if diff := cmp.Diff(k, got, ignoreBehavior); diff != "" {
				t.Errorf("LookupKind(%q) (-want +got):\n%s", k.Type(), diff)
			}
		})
	}
	t.Run("Kinds returns copies", func(t *testing.T) {
		mutated := sim.Kinds()
		mutated[0].Name = "Toaster"
		mutated[0].Properties[0].Name = "toast"
		if diff := cmp.Diff(kinds, sim.Kinds(), ignoreBehavior); diff != "" {
			t.Errorf("Kinds() after mutating a previous result (-want +got):\n%s", diff)
		}
	})
}

func TestCreateDeviceEveryKind(t *testing.T) {
	for _, k := range sim.Kinds() {
		for _, typ := range []string{
			k.Type(),
			k.Name,
			"ICASA." + k.Name,
			"icasa." + strings.ToLower(k.Name),
			"iCasa." + strings.ToUpper(k.Name),
		} {
			t.Run(typ, func(t *testing.T) {
				h, _ := newHome(t)
				d, err := h.CreateDevice(sim.DeviceSpec{ID: "dev", Type: typ})
				if err != nil {
					t.Fatalf("CreateDevice(type %q) = %v, want nil error", typ, err)
				}
				props := map[string]any{"state": "activated", "fault": "no"}
				for _, p := range k.Properties {
					props[p.Name] = p.Default // a sensor outside every zone reads its default
				}
				want := sim.Device{
					ID: "dev", Name: "dev", Type: "iCasa." + k.Name, PositionX: -1, PositionY: -1,
					State: "activated", Fault: "no",
					Services:   []string{k.Service, sim.ServiceSimulatedDevice, sim.ServiceGenericDevice},
					Properties: props,
				}
				if diff := cmp.Diff(want, d); diff != "" {
					t.Errorf("CreateDevice(type %q) (-want +got):\n%s", typ, diff)
				}
			})
		}
	}
}

func TestCreateDeviceUnknownType(t *testing.T) {
	for _, typ := range []string{"iCasa.Toaster", "foo.Heater", "", "iCasa.", ".Heater", "iCasa.Heater.x", "Heaters", "iCasa.Heater "} {
		t.Run(fmt.Sprintf("%q", typ), func(t *testing.T) {
			h, _ := newHome(t)
			_, err := h.CreateDevice(sim.DeviceSpec{ID: "d", Type: typ})
			if !errors.Is(err, sim.ErrInvalid) {
				t.Fatalf("CreateDevice(type %q) = %v, want an error wrapping %v", typ, err, sim.ErrInvalid)
			}
			for _, k := range kindNames {
				if !strings.Contains(err.Error(), k) {
					t.Errorf("CreateDevice(type %q) error %q does not list kind %s", typ, err, k)
				}
			}
			if _, err := sim.LookupKind(typ); !errors.Is(err, sim.ErrInvalid) {
				t.Errorf("LookupKind(%q) = %v, want an error wrapping %v", typ, err, sim.ErrInvalid)
			}
			if got := h.Devices(); len(got) != 0 {
				t.Errorf("Devices() after failed create = %+v, want none", got)
			}
		})
	}
}

func TestCreateDevice(t *testing.T) {
	tests := []struct {
		name string
		spec sim.DeviceSpec
		want sim.Device
	}{
		{
			name: "defaults",
			spec: sim.DeviceSpec{ID: "h1", Type: "iCasa.Heater"},
			want: sim.Device{ID: "h1", Name: "h1", Type: "iCasa.Heater", PositionX: -1, PositionY: -1,
				State: "activated", Fault: "no", Services: heaterServices, Properties: heaterProps(nil)},
		},
		{
			name: "name and position in a zone",
			spec: sim.DeviceSpec{ID: "h1", Name: "Radiator", Type: "heater", PositionX: ptr(500), PositionY: ptr(400)},
			want: sim.Device{ID: "h1", Name: "Radiator", Type: "iCasa.Heater", Location: "kitchen", PositionX: 500, PositionY: 400,
				State: "activated", Fault: "no", Services: heaterServices, Properties: heaterProps(map[string]any{"Location": "kitchen"})},
		},
		{
			name: "properties merged over defaults",
			spec: sim.DeviceSpec{ID: "h1", Type: "Heater", Properties: map[string]any{
				"heater.powerLevel": 0.25, "heater.maxPowerLevel": 2000, "color": "red",
				"tags": []any{"a", 1, true}, "meta": map[string]any{"floor": 2}, "nothing": nil,
			}},
			want: sim.Device{ID: "h1", Name: "h1", Type: "iCasa.Heater", PositionX: -1, PositionY: -1,
				State: "activated", Fault: "no", Services: heaterServices, Properties: heaterProps(map[string]any{
					"heater.powerLevel": 0.25, "heater.maxPowerLevel": 2000.0, "color": "red",
					"tags": []any{"a", 1.0, true}, "meta": map[string]any{"floor": 2.0},
				})},
		},
		{
			name: "state and fault in properties are ignored: a new device is activated, not faulty",
			spec: sim.DeviceSpec{ID: "h1", Type: "Heater", Properties: map[string]any{"state": "deactivated", "fault": "maybe"}},
			want: sim.Device{ID: "h1", Name: "h1", Type: "iCasa.Heater", PositionX: -1, PositionY: -1,
				State: "activated", Fault: "no", Services: heaterServices, Properties: heaterProps(nil)},
		},
		{
			name: "derived properties sent at creation are ignored",
			spec: sim.DeviceSpec{ID: "h1", Type: "Heater", PositionX: ptr(500), PositionY: ptr(400), Properties: map[string]any{"Location": "hall"}},
			want: sim.Device{ID: "h1", Name: "h1", Type: "iCasa.Heater", Location: "kitchen", PositionX: 500, PositionY: 400,
				State: "activated", Fault: "no", Services: heaterServices, Properties: heaterProps(map[string]any{"Location": "kitchen"})},
		},
		{
			name: "current Location property sent back",
			spec: sim.DeviceSpec{ID: "h1", Type: "Heater", PositionX: ptr(500), PositionY: ptr(400), Properties: map[string]any{"Location": "kitchen"}},
			want: sim.Device{ID: "h1", Name: "h1", Type: "iCasa.Heater", Location: "kitchen", PositionX: 500, PositionY: 400,
				State: "activated", Fault: "no", Services: heaterServices, Properties: heaterProps(map[string]any{"Location": "kitchen"})},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			mustZone(t, h, rect("kitchen", 410, 370, 655, 580))
			got, err := h.CreateDevice(tt.spec)
			if err != nil {
				t.Fatalf("CreateDevice(%+v) = %v, want nil error", tt.spec, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CreateDevice(%+v) (-want +got):\n%s", tt.spec, diff)
			}
			if diff := cmp.Diff(tt.want, mustGetDevice(t, h, tt.spec.ID)); diff != "" {
				t.Errorf("Device(%q) after create (-want +got):\n%s", tt.spec.ID, diff)
			}
		})
	}
}

func TestCreateDeviceInvalid(t *testing.T) {
	tests := []struct {
		name string
		spec sim.DeviceSpec
		want error
	}{
		{"empty id", sim.DeviceSpec{Type: "Heater"}, sim.ErrInvalid},
		{"id of 129 chars", sim.DeviceSpec{ID: strings.Repeat("d", sim.MaxIDLength+1), Type: "Heater"}, sim.ErrInvalid},
		{"id with slash", sim.DeviceSpec{ID: "a/b", Type: "Heater"}, sim.ErrInvalid},
		{"id with space", sim.DeviceSpec{ID: "a b", Type: "Heater"}, sim.ErrInvalid},
		{"id with unicode", sim.DeviceSpec{ID: "chauffé", Type: "Heater"}, sim.ErrInvalid},
		{"positionX below the plan", sim.DeviceSpec{ID: "d", Type: "Heater", PositionX: ptr(-sim.MaxCoordinate - 1), PositionY: ptr(0)}, sim.ErrInvalid},
		{"positionY beyond MaxCoordinate", sim.DeviceSpec{ID: "d", Type: "Heater", PositionX: ptr(0), PositionY: ptr(sim.MaxCoordinate + 1)}, sim.ErrInvalid},
		{"powerLevel above 1", sim.DeviceSpec{ID: "d", Type: "Heater", Properties: map[string]any{"heater.powerLevel": 1.5}}, sim.ErrInvalid},
		{"powerLevel as string", sim.DeviceSpec{ID: "d", Type: "Heater", Properties: map[string]any{"heater.powerLevel": "0.5"}}, sim.ErrInvalid},
		{"kind property nil", sim.DeviceSpec{ID: "d", Type: "Heater", Properties: map[string]any{"heater.maxPowerLevel": nil}}, sim.ErrInvalid},
		{"power_status not a bool", sim.DeviceSpec{ID: "d", Type: "BinaryLight", Properties: map[string]any{"power_status": 1}}, sim.ErrInvalid},
		{"free property NaN", sim.DeviceSpec{ID: "d", Type: "Heater", Properties: map[string]any{"x": math.NaN()}}, sim.ErrInvalid},
		{"free property not JSON", sim.DeviceSpec{ID: "d", Type: "Heater", Properties: map[string]any{"x": struct{}{}}}, sim.ErrInvalid},
		{"empty property name", sim.DeviceSpec{ID: "d", Type: "Heater", Properties: map[string]any{"": 1.0}}, sim.ErrInvalid},
		{"duplicate id", sim.DeviceSpec{ID: "taken", Type: "Cooler"}, sim.ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			mustZone(t, h, rect("kitchen", 0, 0, 10, 10))
			mustDevice(t, h, sim.DeviceSpec{ID: "taken", Type: "Heater"})
			before := h.Devices()
			got, err := h.CreateDevice(tt.spec)
			if !errors.Is(err, tt.want) {
				t.Fatalf("CreateDevice(%+v) = %v, want an error wrapping %v", tt.spec, err, tt.want)
			}
			if diff := cmp.Diff(sim.Device{}, got); diff != "" {
				t.Errorf("CreateDevice returned a device with its error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, h.Devices()); diff != "" {
				t.Errorf("Devices() after failed create (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUpdateDevice(t *testing.T) {
	tests := []struct {
		name   string
		update sim.DeviceUpdate
		edit   func(d *sim.Device) // turns the base device into the wanted one
	}{
		{"empty update", sim.DeviceUpdate{}, func(*sim.Device) {}},
		{"name", sim.DeviceUpdate{Name: ptr("Radiator")}, func(d *sim.Device) { d.Name = "Radiator" }},
		{"empty name resets to id", sim.DeviceUpdate{Name: ptr("")}, func(d *sim.Device) { d.Name = "h1" }},
		{"state deactivated", sim.DeviceUpdate{State: ptr("deactivated")}, func(d *sim.Device) {
			d.State, d.Properties["state"] = "deactivated", "deactivated"
		}},
		{"state activated again", sim.DeviceUpdate{State: ptr("activated")}, func(*sim.Device) {}},
		{"fault yes", sim.DeviceUpdate{Fault: ptr("yes")}, func(d *sim.Device) { d.Fault, d.Properties["fault"] = "yes", "yes" }},
		{"fault no", sim.DeviceUpdate{Fault: ptr("no")}, func(*sim.Device) {}},
		{"state and fault as properties", sim.DeviceUpdate{Properties: map[string]any{"state": "deactivated", "fault": "yes"}}, func(d *sim.Device) {
			d.State, d.Properties["state"] = "deactivated", "deactivated"
			d.Fault, d.Properties["fault"] = "yes", "yes"
		}},
		{"powerLevel 0.5", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": 0.5}}, func(d *sim.Device) { d.Properties["heater.powerLevel"] = 0.5 }},
		{"powerLevel bounds", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": 1}}, func(d *sim.Device) { d.Properties["heater.powerLevel"] = 1.0 }},
		{"powerLevel 0 as int", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": 0}}, func(*sim.Device) {}},
		{"period", sim.DeviceUpdate{Properties: map[string]any{"heater.updaterThread.period": 1000.0}}, func(d *sim.Device) {
			d.Properties["heater.updaterThread.period"] = 1000.0
		}},
		{"free string added", sim.DeviceUpdate{Properties: map[string]any{"owner": "Ann"}}, func(d *sim.Device) { d.Properties["owner"] = "Ann" }},
		{"free string updated", sim.DeviceUpdate{Properties: map[string]any{"color": "blue"}}, func(d *sim.Device) { d.Properties["color"] = "blue" }},
		{"free prop changes type", sim.DeviceUpdate{Properties: map[string]any{"color": 7}}, func(d *sim.Device) { d.Properties["color"] = 7.0 }},
		{"free bool, array and object", sim.DeviceUpdate{Properties: map[string]any{
			"b": false, "a": []any{1, "x", nil}, "o": map[string]any{"k": []any{true}},
		}}, func(d *sim.Device) {
			d.Properties["b"] = false
			d.Properties["a"] = []any{1.0, "x", nil}
			d.Properties["o"] = map[string]any{"k": []any{true}}
		}},
		{"nil removes a free prop", sim.DeviceUpdate{Properties: map[string]any{"color": nil}}, func(d *sim.Device) { delete(d.Properties, "color") }},
		{"nil for an absent free prop", sim.DeviceUpdate{Properties: map[string]any{"nope": nil}}, func(*sim.Device) {}},
		{"width and height", sim.DeviceUpdate{Width: ptr(20), Height: ptr(30)}, func(d *sim.Device) { d.Width, d.Height = 20, 30 }},
		{"same type canonical", sim.DeviceUpdate{Type: ptr("iCasa.Heater")}, func(*sim.Device) {}},
		{"same type bare", sim.DeviceUpdate{Type: ptr("Heater")}, func(*sim.Device) {}},
		{"same type other case", sim.DeviceUpdate{Type: ptr("ICASA.HEATER")}, func(*sim.Device) {}},
		{"position", sim.DeviceUpdate{PositionX: ptr(5), PositionY: ptr(6)}, func(d *sim.Device) { d.PositionX, d.PositionY = 5, 6 }},
		{"only positionX keeps Y", sim.DeviceUpdate{PositionX: ptr(5)}, func(d *sim.Device) { d.PositionX = 5 }},
		{"only positionY keeps X", sim.DeviceUpdate{PositionY: ptr(6)}, func(d *sim.Device) { d.PositionY = 6 }},
		{"Location unknown sent back while unplaced", sim.DeviceUpdate{Properties: map[string]any{"Location": "unknown"}}, func(*sim.Device) {}},
		{"everything at once", sim.DeviceUpdate{
			Name: ptr("R"), Type: ptr("heater"), PositionX: ptr(1), PositionY: ptr(2), Width: ptr(3), Height: ptr(4),
			State: ptr("deactivated"), Fault: ptr("yes"), Properties: map[string]any{"heater.maxPowerLevel": 1500.0, "color": nil},
		}, func(d *sim.Device) {
			d.Name, d.PositionX, d.PositionY, d.Width, d.Height = "R", 1, 2, 3, 4
			d.State, d.Fault = "deactivated", "yes"
			d.Properties["state"], d.Properties["fault"] = "deactivated", "yes"
			d.Properties["heater.maxPowerLevel"] = 1500.0
			delete(d.Properties, "color")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			mustDevice(t, h, sim.DeviceSpec{ID: "h1", Name: "Heater one", Type: "Heater", Properties: map[string]any{"color": "red"}})
			want := sim.Device{ID: "h1", Name: "Heater one", Type: "iCasa.Heater", PositionX: -1, PositionY: -1,
				State: "activated", Fault: "no", Services: heaterServices, Properties: heaterProps(map[string]any{"color": "red"})}
			tt.edit(&want)
			got, err := h.UpdateDevice("h1", tt.update)
			if err != nil {
				t.Fatalf("UpdateDevice(h1, %+v) = %v, want nil error", tt.update, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("UpdateDevice(h1, %+v) (-want +got):\n%s", tt.update, diff)
			}
			if diff := cmp.Diff(want, mustGetDevice(t, h, "h1")); diff != "" {
				t.Errorf("Device(h1) after update (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUpdateDeviceInvalidChangesNothing(t *testing.T) {
	tests := []struct {
		name   string
		update sim.DeviceUpdate
		want   error
	}{
		{"state on", sim.DeviceUpdate{State: ptr("on")}, sim.ErrInvalid},
		{"state empty", sim.DeviceUpdate{State: ptr("")}, sim.ErrInvalid},
		{"state in other case", sim.DeviceUpdate{State: ptr("Activated")}, sim.ErrInvalid},
		{"state property not a string", sim.DeviceUpdate{Properties: map[string]any{"state": true}}, sim.ErrInvalid},
		{"fault maybe", sim.DeviceUpdate{Fault: ptr("maybe")}, sim.ErrInvalid},
		{"fault YES", sim.DeviceUpdate{Fault: ptr("YES")}, sim.ErrInvalid},
		{"fault property", sim.DeviceUpdate{Properties: map[string]any{"fault": "broken"}}, sim.ErrInvalid},
		{"powerLevel 1.5", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": 1.5}}, sim.ErrInvalid},
		{"powerLevel -0.1", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": -0.1}}, sim.ErrInvalid},
		{"powerLevel string", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": "0.5"}}, sim.ErrInvalid},
		{"powerLevel bool", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": true}}, sim.ErrInvalid},
		{"powerLevel NaN", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": math.NaN()}}, sim.ErrInvalid},
		{"powerLevel nil", sim.DeviceUpdate{Properties: map[string]any{"heater.powerLevel": nil}}, sim.ErrInvalid},
		{"period 0", sim.DeviceUpdate{Properties: map[string]any{"heater.updaterThread.period": 0}}, sim.ErrInvalid},
		{"free prop NaN", sim.DeviceUpdate{Properties: map[string]any{"x": math.Inf(1)}}, sim.ErrInvalid},
		{"free prop nested NaN", sim.DeviceUpdate{Properties: map[string]any{"x": []any{1.0, math.NaN()}}}, sim.ErrInvalid},
		{"free prop not JSON", sim.DeviceUpdate{Properties: map[string]any{"x": complex(1, 2)}}, sim.ErrInvalid},
		{"type changed", sim.DeviceUpdate{Type: ptr("iCasa.Cooler")}, sim.ErrInvalid},
		{"type changed bare", sim.DeviceUpdate{Type: ptr("Cooler")}, sim.ErrInvalid},
		{"type unknown", sim.DeviceUpdate{Type: ptr("iCasa.Toaster")}, sim.ErrInvalid},
		{"type empty", sim.DeviceUpdate{Type: ptr("")}, sim.ErrInvalid},
		{"width negative", sim.DeviceUpdate{Width: ptr(-1)}, sim.ErrInvalid},
		{"height beyond MaxCoordinate", sim.DeviceUpdate{Height: ptr(sim.MaxCoordinate + 1)}, sim.ErrInvalid},
		{"positionX below the plan", sim.DeviceUpdate{PositionX: ptr(-sim.MaxCoordinate - 1)}, sim.ErrInvalid},
		{"positionY beyond MaxCoordinate", sim.DeviceUpdate{PositionY: ptr(sim.MaxCoordinate + 1)}, sim.ErrInvalid},
		{"location of no zone", sim.DeviceUpdate{Location: ptr("attic")}, sim.ErrNotFound},
		{"empty location", sim.DeviceUpdate{Location: ptr("")}, sim.ErrNotFound},
		{"location unknown", sim.DeviceUpdate{Location: ptr("unknown")}, sim.ErrNotFound},
		{"many valid changes and a bad fault", sim.DeviceUpdate{
			Name: ptr("R"), PositionX: ptr(150), PositionY: ptr(50), Width: ptr(3), Height: ptr(4), State: ptr("deactivated"),
			Properties: map[string]any{"heater.powerLevel": 0.5, "color": "blue", "owner": "Ann"}, Fault: ptr("maybe"),
		}, sim.ErrInvalid},
		{"many valid changes and a bad property", sim.DeviceUpdate{
			Name: ptr("R"), Location: ptr("hall"), Fault: ptr("yes"),
			Properties: map[string]any{"heater.powerLevel": 0.5, "color": nil, "heater.maxPowerLevel": -1},
		}, sim.ErrInvalid},
		{"many valid changes and an unknown location", sim.DeviceUpdate{
			Name: ptr("R"), Width: ptr(3), Properties: map[string]any{"heater.powerLevel": 0.5}, Location: ptr("attic"),
		}, sim.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			mustZone(t, h, rect("kitchen", 0, 0, 100, 100))
			mustZone(t, h, rect("hall", 100, 0, 200, 100))
			mustDevice(t, h, sim.DeviceSpec{ID: "h1", Type: "Heater", PositionX: ptr(50), PositionY: ptr(50), Properties: map[string]any{"color": "red"}})
			before := mustGetDevice(t, h, "h1")
			got, err := h.UpdateDevice("h1", tt.update)
			if !errors.Is(err, tt.want) {
				t.Fatalf("UpdateDevice(h1, %+v) = %v, want an error wrapping %v", tt.update, err, tt.want)
			}
			if diff := cmp.Diff(sim.Device{}, got); diff != "" {
				t.Errorf("UpdateDevice returned a device with its error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, mustGetDevice(t, h, "h1")); diff != "" {
				t.Errorf("Device(h1) after failed update (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("unknown device", func(t *testing.T) {
		h, _ := newHome(t)
		if _, err := h.UpdateDevice("nope", sim.DeviceUpdate{Name: ptr("x")}); !errors.Is(err, sim.ErrNotFound) {
			t.Errorf("UpdateDevice(nope) = %v, want an error wrapping %v", err, sim.ErrNotFound)
		}
		if _, err := h.Device("nope"); !errors.Is(err, sim.ErrNotFound) {
			t.Errorf("Device(nope) = %v, want an error wrapping %v", err, sim.ErrNotFound)
		}
	})
}

func TestUpdateDeviceKindProperties(t *testing.T) {
	tests := []struct {
		typ   string
		prop  string
		value any
		want  any   // stored value on success
		err   error // wanted error kind, nil for success
	}{
		{"BinaryLight", "power_status", true, true, nil},
		{"BinaryLight", "power_status", "true", nil, sim.ErrInvalid},
		{"BinaryLight", "power_status", 1, nil, sim.ErrInvalid},
		{"BinaryLight", "max_power", 60, 60.0, nil},
		{"BinaryLight", "max_power", -1, nil, sim.ErrInvalid},
		{"Sprinkler", "power_status", false, false, nil},
		{"Sprinkler", "power_status", nil, nil, sim.ErrInvalid},
		{"ToggleSwitch", "current_status", true, true, nil},
		{"PushButton", "push_and_hold", "yes", nil, sim.ErrInvalid},
		// Sensor readings are derived: what is sent is ignored, the reading
		// stays what the simulation says.
		{"PresenceSensor", "sensed_presence", true, false, nil},
		{"Thermometer", "current_temperature", 300.5, -1.0, nil},
		{"Thermometer", "current_temperature", "hot", -1.0, nil},
		{"Photometer", "current_illuminance", float32(12.5), -1.0, nil},
		{"Cooler", "cooler.powerLevel", 2, nil, sim.ErrInvalid},
		{"Cooler", "cooler.powerLevel", 0.75, 0.75, nil},
		{"DimmerLight", "power_level", 1.01, nil, sim.ErrInvalid},
		{"DimmerLight", "power_level", 0.3, 0.3, nil},
		{"COGasSensor", "current_concentration", uint8(3), 0.0, nil},
		{"CO2GasSensor", "current_concentration", []any{1.0}, 0.0, nil},
		{"MotionSensor", "anything", "free", "free", nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %s=%v", tt.typ, tt.prop, tt.value), func(t *testing.T) {
			h, _ := newHome(t)
			before := mustDevice(t, h, sim.DeviceSpec{ID: "d", Type: tt.typ})
			got, err := h.UpdateDevice("d", sim.DeviceUpdate{Properties: map[string]any{tt.prop: tt.value}})
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("UpdateDevice(%s=%#v) = %v, want an error wrapping %v", tt.prop, tt.value, err, tt.err)
				}
				if diff := cmp.Diff(before, mustGetDevice(t, h, "d")); diff != "" {
					t.Errorf("Device(d) after failed update (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("UpdateDevice(%s=%#v) = %v, want nil error", tt.prop, tt.value, err)
			}
			if diff := cmp.Diff(tt.want, got.Properties[tt.prop]); diff != "" {
				t.Errorf("Properties[%q] (-want +got):\n%s", tt.prop, diff)
			}
		})
	}
}

func TestUpdateDeviceLocation(t *testing.T) {
	tests := []struct {
		name   string
		start  [2]*int
		update sim.DeviceUpdate
		wantXY [2]int
		want   string
	}{
		{"location only moves to the zone's centre", [2]*int{ptr(10), ptr(10)}, sim.DeviceUpdate{Location: ptr("bedroom")}, [2]int{250, 50}, "bedroom"},
		{"location of an unplaced device", [2]*int{}, sim.DeviceUpdate{Location: ptr("kitchen")}, [2]int{50, 50}, "kitchen"},
		{"location of the current zone moves to its centre", [2]*int{ptr(10), ptr(10)}, sim.DeviceUpdate{Location: ptr("kitchen")}, [2]int{50, 50}, "kitchen"},
		{"position wins over location", [2]*int{ptr(10), ptr(10)}, sim.DeviceUpdate{PositionX: ptr(20), PositionY: ptr(30), Location: ptr("bedroom")}, [2]int{20, 30}, "kitchen"},
		{"position moves out of every zone", [2]*int{ptr(10), ptr(10)}, sim.DeviceUpdate{PositionX: ptr(1000)}, [2]int{1000, 10}, ""},
		{"position moves between zones", [2]*int{ptr(10), ptr(10)}, sim.DeviceUpdate{PositionX: ptr(300), PositionY: ptr(101)}, [2]int{300, 101}, "bedroom"},
		{"unplaced by position", [2]*int{ptr(10), ptr(10)}, sim.DeviceUpdate{PositionX: ptr(-1), PositionY: ptr(-1)}, [2]int{-1, -1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			mustZone(t, h, rect("kitchen", 0, 0, 100, 100))
			mustZone(t, h, rect("bedroom", 200, 0, 301, 101))
			mustDevice(t, h, sim.DeviceSpec{ID: "d", Type: "Heater", PositionX: tt.start[0], PositionY: tt.start[1]})
			got := mustUpdateDevice(t, h, "d", tt.update)
			if xy := [2]int{got.PositionX, got.PositionY}; xy != tt.wantXY {
				t.Errorf("UpdateDevice(%+v) position = %v, want %v", tt.update, xy, tt.wantXY)
			}
			checkDeviceLocation(t, got, tt.want)
		})
	}
}

func TestUpdateDeviceLocationProperty(t *testing.T) {
	tests := []struct {
		name   string
		placed bool
		value  any
		err    error
	}{
		// Location is derived from the position: whatever is sent (a stale
		// value from a device read earlier included) is ignored.
		{"current zone sent back", true, "kitchen", nil},
		{"nil is ignored", true, nil, nil},
		{"another zone", true, "hall", nil},
		{"a zone that does not exist", true, "attic", nil},
		{"unknown while placed", true, "unknown", nil},
		{"not a string", true, 1.0, nil},
		{"unknown while unplaced", false, "unknown", nil},
		{"a zone while unplaced", false, "kitchen", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			mustZone(t, h, rect("kitchen", 0, 0, 100, 100))
			mustZone(t, h, rect("hall", 100, 0, 200, 100))
			spec := sim.DeviceSpec{ID: "d", Type: "Heater"}
			if tt.placed {
				spec.PositionX, spec.PositionY = ptr(50), ptr(50)
			}
			before := mustDevice(t, h, spec)
			got, err := h.UpdateDevice("d", sim.DeviceUpdate{Properties: map[string]any{"Location": tt.value}})
			checkErr(t, fmt.Sprintf("UpdateDevice(Location=%#v)", tt.value), err, tt.err)
			if err == nil {
				if diff := cmp.Diff(before, got); diff != "" {
					t.Errorf("UpdateDevice(Location=%#v) (-want +got):\n%s", tt.value, diff)
				}
			}
			if diff := cmp.Diff(before, mustGetDevice(t, h, "d")); diff != "" {
				t.Errorf("Device(d) (-want +got):\n%s", diff)
			}
		})
	}
}

// maxIlluminance is the contract's derived max_illuminance of a dimmer light
// of maxPower watts in a zone of w × h plan units.
func maxIlluminance(maxPower float64, w, h int) float64 {
	return maxPower * 680 / ((float64(w) * 0.014) * (float64(h) * 0.014))
}

func TestDimmerLightMaxIlluminance(t *testing.T) {
	h, _ := newHome(t)
	mustZone(t, h, rect("room", 0, 0, 100, 200))
	check := func(t *testing.T, id string, want float64) {
		t.Helper()
		d := mustGetDevice(t, h, id)
		got, ok := d.Properties["max_illuminance"].(float64)
		if !ok || math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: Properties[max_illuminance] = %#v, want %v", id, d.Properties["max_illuminance"], want)
		}
	}
	mustDevice(t, h, sim.DeviceSpec{ID: "in", Type: "DimmerLight", PositionX: ptr(50), PositionY: ptr(50)})
	mustDevice(t, h, sim.DeviceSpec{ID: "strong", Type: "DimmerLight", PositionX: ptr(50), PositionY: ptr(50), Properties: map[string]any{"max_power": 250}})
	mustDevice(t, h, sim.DeviceSpec{ID: "out", Type: "DimmerLight", PositionX: ptr(500), PositionY: ptr(500)})
	mustDevice(t, h, sim.DeviceSpec{ID: "unplaced", Type: "DimmerLight"})

	steps := []struct {
		name string
		do   func(t *testing.T)
		want map[string]float64
	}{
		{"created", func(*testing.T) {}, map[string]float64{
			"in": maxIlluminance(100, 100, 200), "strong": maxIlluminance(250, 100, 200), "out": 0, "unplaced": 0}},
		{"max_power updated", func(t *testing.T) {
			mustUpdateDevice(t, h, "in", sim.DeviceUpdate{Properties: map[string]any{"max_power": 40.0}})
		}, map[string]float64{
			"in": maxIlluminance(40, 100, 200), "strong": maxIlluminance(250, 100, 200), "out": 0, "unplaced": 0}},
		{"zone resized", func(t *testing.T) {
			mustUpdateZone(t, h, "room", sim.ZoneUpdate{RightX: ptr(300)})
		}, map[string]float64{
			"in": maxIlluminance(40, 300, 200), "strong": maxIlluminance(250, 300, 200), "out": 0, "unplaced": 0}},
		{"faulty: still follows its zone (a light is not a sensor)", func(t *testing.T) {
			mustUpdateDevice(t, h, "in", sim.DeviceUpdate{Fault: ptr("yes")})
			mustUpdateZone(t, h, "room", sim.ZoneUpdate{RightX: ptr(200)})
		}, map[string]float64{
			"in": maxIlluminance(40, 200, 200), "strong": maxIlluminance(250, 200, 200), "out": 0, "unplaced": 0}},
		{"faulty and moved", func(t *testing.T) {
			mustUpdateDevice(t, h, "in", sim.DeviceUpdate{PositionX: ptr(500)})
			check(t, "in", 0)
			mustUpdateZone(t, h, "room", sim.ZoneUpdate{RightX: ptr(300)})
			mustUpdateDevice(t, h, "in", sim.DeviceUpdate{PositionX: ptr(50)})
			check(t, "in", maxIlluminance(40, 300, 200))
			mustUpdateDevice(t, h, "in", sim.DeviceUpdate{Fault: ptr("no")})
			mustUpdateDevice(t, h, "out", sim.DeviceUpdate{Fault: ptr("yes")})
			mustUpdateDevice(t, h, "out", sim.DeviceUpdate{PositionX: ptr(60), PositionY: ptr(60)})
			mustUpdateDevice(t, h, "out", sim.DeviceUpdate{PositionX: ptr(500), PositionY: ptr(500), Fault: ptr("no")})
		}, map[string]float64{
			"in": maxIlluminance(40, 300, 200), "strong": maxIlluminance(250, 300, 200), "out": 0, "unplaced": 0}},
		{"moved out of the zone", func(t *testing.T) {
			mustUpdateDevice(t, h, "strong", sim.DeviceUpdate{PositionX: ptr(400)})
		}, map[string]float64{
			"in": maxIlluminance(40, 300, 200), "strong": 0, "out": 0, "unplaced": 0}},
		{"moved into the zone by location", func(t *testing.T) {
			mustUpdateDevice(t, h, "unplaced", sim.DeviceUpdate{Location: ptr("room")})
		}, map[string]float64{
			"in": maxIlluminance(40, 300, 200), "strong": 0, "out": 0, "unplaced": maxIlluminance(100, 300, 200)}},
		{"zone deleted", func(t *testing.T) {
			if err := h.DeleteZone("room"); err != nil {
				t.Fatalf("DeleteZone(room) = %v", err)
			}
		}, map[string]float64{"in": 0, "strong": 0, "out": 0, "unplaced": 0}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.do(t)
			for id, want := range s.want {
				check(t, id, want)
			}
		})
	}

	t.Run("what is sent for it is ignored", func(t *testing.T) {
		mustZone(t, h, rect("room", 0, 0, 100, 200))
		before := mustGetDevice(t, h, "in")
		cur := before.Properties["max_illuminance"]
		for _, v := range []any{cur.(float64) + 1, 0.0, "x", true, cur, nil} {
			if _, err := h.UpdateDevice("in", sim.DeviceUpdate{Properties: map[string]any{"max_illuminance": v}}); err != nil {
				t.Errorf("UpdateDevice(max_illuminance=%#v) = %v, want nil error", v, err)
			}
		}
		if diff := cmp.Diff(before, mustGetDevice(t, h, "in")); diff != "" {
			t.Errorf("Device(in) (-want +got):\n%s", diff)
		}
	})
}

func TestDeviceReturnsCopies(t *testing.T) {
	h, _ := newHome(t)
	nested := map[string]any{"k": []any{"v"}}
	spec := sim.DeviceSpec{ID: "d", Type: "Heater", Properties: map[string]any{"meta": nested}}
	created := mustDevice(t, h, spec)
	want := sim.Device{ID: "d", Name: "d", Type: "iCasa.Heater", PositionX: -1, PositionY: -1, State: "activated", Fault: "no",
		Services: heaterServices, Properties: heaterProps(map[string]any{"meta": map[string]any{"k": []any{"v"}}})}

	nested["k"].([]any)[0] = "spec"
	nested["added"] = true
	spec.Properties["late"] = 1.0
	created.Properties["state"] = "deactivated"
	created.Services[0] = "created"
	got := mustGetDevice(t, h, "d")
	got.Properties["meta"].(map[string]any)["k"].([]any)[0] = "got"
	got.Services[0] = "got"
	listed := h.Devices()[0]
	listed.Properties["listed"] = 1.0
	listed.Services[1] = "listed"
	updated := mustUpdateDevice(t, h, "d", sim.DeviceUpdate{})
	updated.Properties["updated"] = 1.0
	updated.Services[2] = "updated"

	if diff := cmp.Diff(want, mustGetDevice(t, h, "d")); diff != "" {
		t.Errorf("Device(d) after mutating returned values (-want +got):\n%s", diff)
	}
}

func TestDeleteDevice(t *testing.T) {
	h, _ := newHome(t)
	mustDevice(t, h, sim.DeviceSpec{ID: "a", Type: "Heater"})
	mustDevice(t, h, sim.DeviceSpec{ID: "b", Type: "Cooler"})
	mustDevice(t, h, sim.DeviceSpec{ID: "c", Type: "Sprinkler"})
	if err := h.DeleteDevice("b"); err != nil {
		t.Fatalf("DeleteDevice(b) = %v, want nil error", err)
	}
	if err := h.DeleteDevice("b"); !errors.Is(err, sim.ErrNotFound) {
		t.Errorf("DeleteDevice(b) twice = %v, want an error wrapping %v", err, sim.ErrNotFound)
	}
	if _, err := h.Device("b"); !errors.Is(err, sim.ErrNotFound) {
		t.Errorf("Device(b) after delete = %v, want an error wrapping %v", err, sim.ErrNotFound)
	}
	var ids []string
	for _, d := range h.Devices() {
		ids = append(ids, d.ID)
	}
	if diff := cmp.Diff([]string{"a", "c"}, ids); diff != "" {
		t.Errorf("Devices() ids (-want +got):\n%s", diff)
	}
	mustDevice(t, h, sim.DeviceSpec{ID: "b", Type: "Thermometer"})
}

// TestConcurrentHome hammers one home from many goroutines; run it with -race.
func TestConcurrentHome(t *testing.T) {
	h, _ := newHome(t)
	const workers, perWorker = 8, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			zone := fmt.Sprintf("z%d", w)
			if _, err := h.CreateZone(rect(zone, w*100, 0, w*100+99, 99)); err != nil {
				t.Errorf("CreateZone(%s) = %v", zone, err)
				return
			}
			for i := range perWorker {
				dev, person := fmt.Sprintf("d%d-%d", w, i), fmt.Sprintf("p%d-%d", w, i)
				if _, err := h.CreateDevice(sim.DeviceSpec{ID: dev, Type: kindNames[i%len(kindNames)], PositionX: ptr(w*100 + i), PositionY: ptr(i)}); err != nil {
					t.Errorf("CreateDevice(%s) = %v", dev, err)
				}
				if _, err := h.CreatePerson(sim.PersonSpec{ID: person, Type: "Man", PositionX: ptr(w*100 + i), PositionY: ptr(i)}); err != nil {
					t.Errorf("CreatePerson(%s) = %v", person, err)
				}
				if _, err := h.UpdateDevice(dev, sim.DeviceUpdate{Name: ptr("n"), PositionX: ptr(((w + 1) % workers) * 100)}); err != nil {
					t.Errorf("UpdateDevice(%s) = %v", dev, err)
				}
				if _, err := h.UpdatePerson(person, sim.PersonUpdate{Location: ptr(zone)}); err != nil {
					t.Errorf("UpdatePerson(%s) = %v", person, err)
				}
				if _, err := h.UpdateZone(zone, sim.ZoneUpdate{Variables: map[string]*float64{"Temperature": ptr(float64(i))}}); err != nil {
					t.Errorf("UpdateZone(%s) = %v", zone, err)
				}
				_ = h.Devices()
				_ = h.Persons()
				_ = h.Zones()
				_ = h.Clock()
				if i%5 == 0 {
					if _, err := h.UpdateZone(zone, sim.ZoneUpdate{BottomY: ptr(99 + i)}); err != nil {
						t.Errorf("UpdateZone(%s) = %v", zone, err)
					}
				}
			}
			// A zone that comes and goes, relocating everyone each time.
			tmp := fmt.Sprintf("tmp%d", w)
			for range 5 {
				if _, err := h.CreateZone(rect(tmp, 0, 0, 50, 50)); err != nil {
					t.Errorf("CreateZone(%s) = %v", tmp, err)
					continue
				}
				if err := h.DeleteZone(tmp); err != nil {
					t.Errorf("DeleteZone(%s) = %v", tmp, err)
				}
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			_, _ = h.UpdateClock(sim.ClockUpdate{Factor: ptr(2)})
			_ = h.Now()
		}
	})
	wg.Wait()

	zones := h.Zones()
	if len(zones) != workers {
		t.Errorf("len(Zones()) = %d, want %d", len(zones), workers)
	}
	devices, persons := h.Devices(), h.Persons()
	if len(devices) != workers*perWorker || len(persons) != workers*perWorker {
		t.Errorf("got %d devices and %d persons, want %d of each", len(devices), len(persons), workers*perWorker)
	}
	for _, d := range devices {
		checkDeviceLocation(t, d, wantLocation(zones, d.PositionX, d.PositionY))
		if d.Name != "n" {
			t.Errorf("device %s: Name = %q, want %q", d.ID, d.Name, "n")
		}
	}
	for _, p := range persons {
		want := wantLocation(zones, p.PositionX, p.PositionY)
		if want == "" {
			want = sim.LocationUnknown
		}
		if p.Location != want {
			t.Errorf("person %s at (%d,%d): Location = %q, want %q", p.ID, p.PositionX, p.PositionY, p.Location, want)
		}
	}
}
