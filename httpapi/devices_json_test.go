package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
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
