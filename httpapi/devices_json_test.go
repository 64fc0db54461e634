package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestDeviceListBytes: GET /devices/devices writes, byte for byte, what
// encoding/json writes of the home's devices, for every kind, placed or
// not, in a zone or not, faulty, sized, and with free properties of every
// JSON shape and strings that need escaping.
func TestDeviceListBytes(t *testing.T) {
	f := newFixture(t)
	f.house(t)
	kinds := []string{"Heater", "Cooler", "Thermometer", "DimmerLight", "BinaryLight", "PresenceSensor", "Photometer", "MotionSensor",
		"COGasSensor", "CO2GasSensor", "Speaker", "Siren", "PowerSwitchMeter", "Tablet"}
	for i, k := range kinds {
		f.mustDo(t, "POST", "/platform/devices/device", fmt.Sprintf(`{"deviceId":"d%d","type":"iCasa.%s","positionX":%d,"positionY":%d}`, i, k, 420+i*10, 40+i*20))
	}
	f.mustDo(t, "POST", "/platform/devices/device", `{"deviceId":"outside","type":"iCasa.Thermometer"}`)
	f.mustDo(t, "POST", "/platform/devices/device", `{"deviceId":"odd.one","name":"Ünïcode <&> \"quoted\" \u2028","type":"iCasa.Heater","positionX":5,"positionY":5}`)
	f.mustDo(t, "PUT", "/platform/devices/device/d0", `{"width":30,"height":12,"fault":"yes","state":"deactivated",
		"properties":{"note":"<b>&amp;</b>","list":[1,2.5,"x",null,true,{"k":[]}],"nested":{"z":1e-7,"a":1e21,"m":-0.000001},"big":123456789012345678}}`)
	f.mustDo(t, "PUT", "/platform/devices/device/d2", `{"fault":"yes"}`) // a faulty thermometer keeps its reading
	// Heaters of one type whose property names differ, in name but not in
	// number and in number: each device's own names are written.
	for i, props := range []string{`{"note":"a"}`, `{"memo":"b"}`, `{}`, `{"memo":"c","zz":1}`, `{"note":"d"}`} {
		f.mustDo(t, "POST", "/platform/devices/device", fmt.Sprintf(`{"deviceId":"h%d","type":"iCasa.Heater","positionX":%d,"positionY":50,"properties":%s}`, i, 430+i*5, props))
	}
	f.mustDo(t, "PUT", "/platform/zones/zone/kitchen", `{"variables":{"Temperature":299.5}}`)

	got := f.mustDo(t, "GET", "/platform/devices/devices", "").Body.Bytes()
	var want bytes.Buffer
	if err := json.NewEncoder(&want).Encode(f.home.Devices()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		for i := range min(len(got), want.Len()) {
			if got[i] != want.Bytes()[i] {
				t.Fatalf("differs at byte %d:\ngot  %s\nwant %s", i, got[max(0, i-80):min(len(got), i+80)], want.Bytes()[max(0, i-80):min(want.Len(), i+80)])
			}
		}
		t.Fatalf("lengths differ: %d and %d", len(got), want.Len())
	}
	// An empty home lists [].
	g := newFixture(t)
	if got := g.mustDo(t, "GET", "/platform/devices/devices", "").Body.String(); got != "[]\n" {
		t.Errorf("no devices = %q", got)
	}
}

// TestDeviceGetBytes: GET /devices/device/{id} writes what encoding/json
// writes of Home.Device, for every device of the list test's home.
func TestDeviceGetBytes(t *testing.T) {
	f := newFixture(t)
	f.house(t)
	f.mustDo(t, "POST", "/platform/devices/device", `{"deviceId":"t","type":"iCasa.Thermometer","positionX":500,"positionY":400}`)
	f.mustDo(t, "POST", "/platform/devices/device", `{"deviceId":"h","type":"iCasa.Heater","properties":{"note":"<x>"}}`)
	for _, id := range []string{"t", "h"} {
		got := f.mustDo(t, "GET", "/platform/devices/device/"+id, "").Body.Bytes()
		d, err := f.home.Device(id)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		json.NewEncoder(&want).Encode(d)
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("GET %s:\ngot  %s\nwant %s", id, got, want.Bytes())
		}
	}
	if rec := f.do(t, "GET", "/platform/devices/device/nope", ""); rec.Code != 404 {
		t.Errorf("unknown device = %d", rec.Code)
	}
}

// TestDeviceGetKeptUntilChange checks that a device GET answers what the
// home holds now, although the encoded device is kept between reads:
// after an update of the device, a change of its zone that its reading
// follows, simulated time warming the zone, and its removal.
func TestDeviceGetKeptUntilChange(t *testing.T) {
	f := newFixture(t)
	f.mustDo(t, "POST", "/platform/zones/zone", `{"id":"kitchen","leftX":0,"topY":0,"rightX":100,"bottomY":100}`)
	f.mustDo(t, "POST", "/platform/devices/device", `{"id":"thermo","type":"Thermometer","positionX":10,"positionY":10}`)
	f.mustDo(t, "POST", "/platform/devices/device", `{"id":"heater","type":"Heater","positionX":20,"positionY":20,"properties":{"heater.powerLevel":1}}`)
	get := func() map[string]any {
		t.Helper()
		var d map[string]any
		if err := json.Unmarshal(f.mustDo(t, "GET", "/platform/devices/device/thermo", "").Body.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		// The kept answer and the one written fresh must be the same bytes.
		want, err := f.home.Device("thermo")
		if err != nil {
			t.Fatal(err)
		}
		wantJSON, _ := json.Marshal(want)
		var w map[string]any
		json.Unmarshal(wantJSON, &w)
		if diff := cmp.Diff(w, d); diff != "" {
			t.Fatalf("GET differs from the home (-home +GET):\n%s", diff)
		}
		return d
	}
	reading := func(d map[string]any) any { return d["properties"].(map[string]any)["current_temperature"] }
	first := get()
	get() // from what was kept
	f.mustDo(t, "PUT", "/platform/devices/device/thermo", `{"name":"Kitchen thermometer"}`)
	if d := get(); d["name"] != "Kitchen thermometer" {
		t.Fatalf("name %v after the update", d["name"])
	}
	f.mustDo(t, "PUT", "/platform/zones/zone/kitchen", `{"variables":{"Temperature":300}}`)
	if d := get(); reading(d) != 300.0 {
		t.Fatalf("reading %v after the zone changed", reading(d))
	}
	if err := f.home.Advance(time.Minute); err != nil {
		t.Fatal(err)
	}
	if d := get(); reading(d) == 300.0 || reading(d) == reading(first) {
		t.Fatalf("reading %v after a simulated minute of heating", reading(d))
	}
	f.mustDo(t, "DELETE", "/platform/devices/device/thermo", "")
	if rec := f.do(t, "GET", "/platform/devices/device/thermo", ""); rec.Code != 404 {
		t.Fatalf("GET of a removed device: %d", rec.Code)
	}
}
