package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type step struct{ method, path, body string }

// simRow is one line of the contract's simulation section: a request after
// some setup, and the status and body it must answer. Error rows also prove
// that the failed request changed nothing.
type simRow struct {
	name   string
	house  bool   // create livingroom, kitchen, bathroom first
	given  []step // more setup, each must answer 200
	req    step
	status int
	want   string // the exact JSON body of a success, when set
	code   string // the error code of a failure
	msg    string // a substring of the error message
	then   *step  // a request whose 200 body must equal thenWant
	thenW  string
}

const (
	heater    = `{"deviceId":"h1","name":"","type":"iCasa.Heater"}`
	services  = `"services":["fr.liglab.adele.icasa.device.temperature.Heater","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]`
	heaterDef = `"heater.powerLevel":0,"heater.maxPowerLevel":1000,"heater.updaterThread.period":5000,"state":"activated","fault":"no"`
	bob       = `{"personId":"bob","name":"Bob","type":"Father","positionX":10,"positionY":10}`
	clockAt   = `{"id":"default","startDateStr":"18/04/2013-10:00:00","startDate":1366279200000,"currentDateStr":"18/04/2013-10:00:00","currentTime":1366279200000,"factor":1,"pause":false}`
)

func TestSimulationContract(t *testing.T) {
	long := strings.Repeat("a", 129)
	rows := []simRow{
		// Zones.
		{name: "zone create with zoneId keeps isRoom false and starts with empty variables",
			req:    step{"POST", "/platform/zones/zone", `{"zoneId":"kitchen","name":"Kitchen","isRoom":false,"leftX":410,"topY":370,"rightX":655,"bottomY":580}`},
			status: 200, want: `{"id":"kitchen","name":"Kitchen","isRoom":false,"leftX":410,"topY":370,"rightX":655,"bottomY":580,"variables":{}}`},
		{name: "zone create with id, name defaults to id, isRoom to true",
			req:    step{"POST", "/platform/zones/zone", `{"id":"hall","leftX":0,"topY":0,"rightX":10,"bottomY":10}`},
			status: 200, want: `{"id":"hall","name":"hall","isRoom":true,"leftX":0,"topY":0,"rightX":10,"bottomY":10,"variables":{}}`},
		{name: "zone coordinates are truncated toward zero",
			req:    step{"POST", "/platform/zones/zone", `{"id":"z","leftX":1.9,"topY":2.5,"rightX":10.99,"bottomY":20.01}`},
			status: 200, want: `{"id":"z","name":"z","isRoom":true,"leftX":1,"topY":2,"rightX":10,"bottomY":20,"variables":{}}`},
		{name: "zone of zero size is allowed",
			req:    step{"POST", "/platform/zones/zone", `{"id":"z","leftX":5,"topY":5,"rightX":5,"bottomY":5}`},
			status: 200, want: `{"id":"z","name":"z","isRoom":true,"leftX":5,"topY":5,"rightX":5,"bottomY":5,"variables":{}}`},
		{name: "zone create without id", req: step{"POST", "/platform/zones/zone", `{"leftX":0,"topY":0,"rightX":1,"bottomY":1}`},
			status: 400, code: "invalid", msg: "zoneId"},
		{name: "zone id and zoneId disagree", req: step{"POST", "/platform/zones/zone", `{"id":"a","zoneId":"b","leftX":0,"topY":0,"rightX":1,"bottomY":1}`},
			status: 400, code: "invalid"},
		{name: "zone id longer than 128", req: step{"POST", "/platform/zones/zone", `{"id":"` + long + `","leftX":0,"topY":0,"rightX":1,"bottomY":1}`},
			status: 400, code: "invalid"},
		{name: "zone id of exactly 128 is fine", req: step{"POST", "/platform/zones/zone", `{"id":"` + long[:128] + `","leftX":0,"topY":0,"rightX":1,"bottomY":1}`},
			status: 200},
		{name: "zone id with slash", req: step{"POST", "/platform/zones/zone", `{"id":"a/b","leftX":0,"topY":0,"rightX":1,"bottomY":1}`},
			status: 400, code: "invalid"},
		{name: "zone id with space", req: step{"POST", "/platform/zones/zone", `{"id":"a b","leftX":0,"topY":0,"rightX":1,"bottomY":1}`},
			status: 400, code: "invalid"},
		{name: "zone id unknown is reserved for persons outside every zone", req: step{"POST", "/platform/zones/zone", `{"id":"unknown","leftX":0,"topY":0,"rightX":1,"bottomY":1}`},
			status: 400, code: "invalid", msg: "reserved"},
		{name: "zone id with allowed punctuation", req: step{"POST", "/platform/zones/zone", `{"id":"a-b_c.d:e","leftX":0,"topY":0,"rightX":1,"bottomY":1}`},
			status: 200},
		{name: "zone duplicate id", house: true, req: step{"POST", "/platform/zones/zone", `{"id":"kitchen","leftX":0,"topY":0,"rightX":1,"bottomY":1}`},
			status: 409, code: "conflict"},
		{name: "zone missing coordinate", req: step{"POST", "/platform/zones/zone", `{"id":"z","leftX":0,"topY":0,"rightX":1}`},
			status: 400, code: "invalid", msg: "bottomY"},
		{name: "zone inverted x", req: step{"POST", "/platform/zones/zone", `{"id":"z","leftX":10,"topY":0,"rightX":1,"bottomY":5}`},
			status: 400, code: "invalid", msg: "rightX"},
		{name: "zone inverted y", req: step{"POST", "/platform/zones/zone", `{"id":"z","leftX":0,"topY":10,"rightX":1,"bottomY":5}`},
			status: 400, code: "invalid", msg: "bottomY"},
		{name: "zone negative coordinates, truncated toward zero", req: step{"POST", "/platform/zones/zone", `{"id":"z","leftX":-5.9,"topY":-0.5,"rightX":1,"bottomY":5}`},
			status: 200, want: `{"id":"z","name":"z","isRoom":true,"leftX":-5,"topY":0,"rightX":1,"bottomY":5,"variables":{}}`},
		{name: "zone huge coordinate", req: step{"POST", "/platform/zones/zone", `{"id":"z","leftX":0,"topY":0,"rightX":1e12,"bottomY":5}`},
			status: 400, code: "invalid"},
		{name: "zone coordinate beyond float64", req: step{"POST", "/platform/zones/zone", `{"id":"z","leftX":0,"topY":0,"rightX":1e400,"bottomY":5}`},
			status: 400, code: "invalid"},
		{name: "zone coordinate as string", req: step{"POST", "/platform/zones/zone", `{"id":"z","leftX":"0","topY":0,"rightX":1,"bottomY":5}`},
			status: 400, code: "invalid", msg: "leftX"},
		{name: "zone get", house: true, req: step{"GET", "/platform/zones/zone/kitchen", ""},
			status: 200, want: `{"id":"kitchen","name":"kitchen","isRoom":true,"leftX":410,"topY":370,"rightX":655,"bottomY":580,"variables":{}}`},
		{name: "zone get unknown", req: step{"GET", "/platform/zones/zone/nowhere", ""}, status: 404, code: "not_found"},
		{name: "zone list in creation order", house: true, req: step{"GET", "/platform/zones/zones", ""}, status: 200,
			want: `[{"id":"livingroom","name":"livingroom","isRoom":true,"leftX":410,"topY":28,"rightX":655,"bottomY":378,"variables":{}},
				{"id":"kitchen","name":"kitchen","isRoom":true,"leftX":410,"topY":370,"rightX":655,"bottomY":580,"variables":{}},
				{"id":"bathroom","name":"bathroom","isRoom":true,"leftX":55,"topY":20,"rightX":315,"bottomY":370,"variables":{}}]`},
		{name: "zone list empty is an empty array", req: step{"GET", "/platform/zones/zones", ""}, status: 200, want: `[]`},
		{name: "zone update by PUT is partial", house: true, req: step{"PUT", "/platform/zones/zone/kitchen", `{"name":"Cuisine"}`}, status: 200,
			want: `{"id":"kitchen","name":"Cuisine","isRoom":true,"leftX":410,"topY":370,"rightX":655,"bottomY":580,"variables":{}}`},
		{name: "zone update by POST with the sent coordinates", house: true,
			req:    step{"POST", "/platform/zones/zone/kitchen", `{"id":"kitchen","leftX":400,"topY":360,"rightX":700,"bottomY":600,"isRoom":false}`},
			status: 200, want: `{"id":"kitchen","name":"kitchen","isRoom":false,"leftX":400,"topY":360,"rightX":700,"bottomY":600,"variables":{}}`},
		{name: "zone update sets and removes variables", house: true,
			given:  []step{{"PUT", "/platform/zones/zone/kitchen", `{"variables":{"Temperature":295.15,"Volume":10}}`}},
			req:    step{"PUT", "/platform/zones/zone/kitchen", `{"variables":{"Volume":null,"Illuminance":5}}`},
			status: 200, want: `{"id":"kitchen","name":"kitchen","isRoom":true,"leftX":410,"topY":370,"rightX":655,"bottomY":580,"variables":{"Temperature":295.15,"Illuminance":5}}`},
		{name: "zone variable must be a number", house: true, req: step{"PUT", "/platform/zones/zone/kitchen", `{"variables":{"Temperature":"hot"}}`},
			status: 400, code: "invalid", msg: "Temperature"},
		{name: "zone update body id differs from path", house: true, req: step{"PUT", "/platform/zones/zone/kitchen", `{"id":"bathroom","name":"x"}`},
			status: 400, code: "invalid"},
		{name: "zone update inverted leaves the zone untouched", house: true,
			req:    step{"PUT", "/platform/zones/zone/kitchen", `{"name":"renamed","variables":{"Temperature":300},"rightX":1}`},
			status: 400, code: "invalid",
			then:  &step{"GET", "/platform/zones/zone/kitchen", ""},
			thenW: `{"id":"kitchen","name":"kitchen","isRoom":true,"leftX":410,"topY":370,"rightX":655,"bottomY":580,"variables":{}}`},
		{name: "zone update unknown", req: step{"PUT", "/platform/zones/zone/nowhere", `{"name":"x"}`}, status: 404, code: "not_found"},
		{name: "zone delete answers 200 with an empty body", house: true, req: step{"DELETE", "/platform/zones/zone/kitchen", ""}, status: 200,
			then: &step{"GET", "/platform/zones/zone/kitchen", ""}, thenW: ""},
		{name: "zone delete unknown", req: step{"DELETE", "/platform/zones/zone/nowhere", ""}, status: 404, code: "not_found"},

		// Geometry and location.
		{name: "device on a shared wall goes to the smaller zone", house: true,
			req:    step{"POST", "/platform/devices/device", `{"deviceId":"t","type":"iCasa.Thermometer","positionX":500,"positionY":370}`},
			status: 200, want: `{"id":"t","name":"t","type":"iCasa.Thermometer","location":"kitchen","positionX":500,"positionY":370,"state":"activated","fault":"no",
				"services":["fr.liglab.adele.icasa.device.temperature.Thermometer","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"],
				"properties":{"current_temperature":293.15,"state":"activated","fault":"no","Location":"kitchen"}}`},
		{name: "device on an edge is inside", house: true,
			given: []step{{"POST", "/platform/devices/device", heater}},
			req:   step{"PUT", "/platform/devices/device/h1", `{"positionX":655,"positionY":580}`}, status: 200,
			want: `{"id":"h1","name":"h1","type":"iCasa.Heater","location":"kitchen","positionX":655,"positionY":580,"state":"activated","fault":"no",` + services + `,"properties":{` + heaterDef + `,"Location":"kitchen"}}`},
		{name: "device just outside every zone has no location", house: true,
			given: []step{{"POST", "/platform/devices/device", heater}},
			req:   step{"PUT", "/platform/devices/device/h1", `{"positionX":656,"positionY":580}`}, status: 200,
			want: `{"id":"h1","name":"h1","type":"iCasa.Heater","positionX":656,"positionY":580,"state":"activated","fault":"no",` + services + `,"properties":{` + heaterDef + `}}`},
		{name: "equal-area zones: the older wins",
			given: []step{
				{"POST", "/platform/zones/zone", `{"id":"first","leftX":0,"topY":0,"rightX":10,"bottomY":10}`},
				{"POST", "/platform/zones/zone", `{"id":"second","leftX":5,"topY":5,"rightX":15,"bottomY":15}`},
				{"POST", "/platform/persons/person", `{"id":"p","type":"Boy","positionX":7,"positionY":7}`},
			},
			req: step{"GET", "/platform/persons/person/p", ""}, status: 200,
			want: `{"id":"p","name":"p","type":"Boy","location":"first","positionX":7,"positionY":7}`},
		{name: "deleting a zone relocates who was in it", house: true,
			given: []step{
				{"POST", "/platform/persons/person", `{"id":"p","type":"Boy","positionX":500,"positionY":370}`},
				{"DELETE", "/platform/zones/zone/kitchen", ""},
			},
			req: step{"GET", "/platform/persons/person/p", ""}, status: 200,
			want: `{"id":"p","name":"p","type":"Boy","location":"livingroom","positionX":500,"positionY":370}`},
		{name: "moving a zone relocates devices", house: true,
			given: []step{
				{"POST", "/platform/devices/device", `{"deviceId":"h1","type":"Heater","positionX":100,"positionY":100}`},
				{"PUT", "/platform/zones/zone/kitchen", `{"leftX":50,"topY":50,"rightX":150,"bottomY":150}`},
			},
			req: step{"GET", "/platform/devices/device/h1", ""}, status: 200,
			want: `{"id":"h1","name":"h1","type":"iCasa.Heater","location":"kitchen","positionX":100,"positionY":100,"state":"activated","fault":"no",` + services + `,"properties":{` + heaterDef + `,"Location":"kitchen"}}`},

		// Devices.
		{name: "device create: name defaults to id, unplaced at -1, defaults merged", req: step{"POST", "/platform/devices/device", heater}, status: 200,
			want: `{"id":"h1","name":"h1","type":"iCasa.Heater","positionX":-1,"positionY":-1,"state":"activated","fault":"no",` + services + `,"properties":{` + heaterDef + `}}`},
		{name: "device create with id, bare kind and sent properties",
			req:    step{"POST", "/platform/devices/device", `{"id":"l1","name":"Lamp","type":"DimmerLight","properties":{"power_level":0.5,"brand":"acme"}}`},
			status: 200, want: `{"id":"l1","name":"Lamp","type":"iCasa.DimmerLight","positionX":-1,"positionY":-1,"state":"activated","fault":"no",
				"services":["fr.liglab.adele.icasa.device.light.DimmerLight","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"],
				"properties":{"power_level":0.5,"max_power":100,"max_illuminance":0,"brand":"acme","state":"activated","fault":"no"}}`},
		{name: "device type namespace in any case", req: step{"POST", "/platform/devices/device", `{"id":"h","type":"ICASA.Heater"}`}, status: 200},
		{name: "device unknown type lists the kinds", req: step{"POST", "/platform/devices/device", `{"id":"h","type":"iCasa.Toaster"}`},
			status: 400, code: "invalid", msg: "Heater"},
		{name: "device foreign namespace", req: step{"POST", "/platform/devices/device", `{"id":"h","type":"acme.Heater"}`}, status: 400, code: "invalid"},
		{name: "device missing type", req: step{"POST", "/platform/devices/device", `{"id":"h"}`}, status: 400, code: "invalid"},
		{name: "device duplicate", given: []step{{"POST", "/platform/devices/device", heater}},
			req: step{"POST", "/platform/devices/device", heater}, status: 409, code: "conflict"},
		{name: "device create with a bad property", req: step{"POST", "/platform/devices/device", `{"id":"h","type":"Heater","properties":{"heater.powerLevel":2}}`},
			status: 400, code: "invalid", msg: "heater.powerLevel"},
		{name: "device update: fractional positions truncated, location derived", house: true,
			given: []step{{"POST", "/platform/devices/device", heater}},
			req:   step{"POST", "/platform/devices/device/h1", `{"positionX":500.7,"positionY":400.2}`}, status: 200,
			want: `{"id":"h1","name":"h1","type":"iCasa.Heater","location":"kitchen","positionX":500,"positionY":400,"state":"activated","fault":"no",` + services + `,"properties":{` + heaterDef + `,"Location":"kitchen"}}`},
		{name: "device update: state, fault, properties merged, size stored",
			given: []step{{"POST", "/platform/devices/device", heater}},
			req:   step{"PUT", "/platform/devices/device/h1", `{"state":"deactivated","fault":"yes","width":32,"height":16,"properties":{"heater.powerLevel":0.25,"note":"x"}}`}, status: 200,
			want: `{"id":"h1","name":"h1","type":"iCasa.Heater","positionX":-1,"positionY":-1,"width":32,"height":16,"state":"deactivated","fault":"yes",` + services +
				`,"properties":{"heater.powerLevel":0.25,"heater.maxPowerLevel":1000,"heater.updaterThread.period":5000,"state":"deactivated","fault":"yes","note":"x"}}`},
		{name: "device moved with its new Location sent back", house: true,
			given: []step{{"POST", "/platform/devices/device", heater}},
			req:   step{"PUT", "/platform/devices/device/h1", `{"positionX":500,"positionY":400,"properties":{"Location":"kitchen"}}`}, status: 200},
		{name: "device sent back whole after a move: the stale Location is ignored", house: true,
			given: []step{{"POST", "/platform/devices/device", heater}},
			req: step{"PUT", "/platform/devices/device/h1", `{"id":"h1","name":"h1","type":"iCasa.Heater","location":"bathroom","positionX":500,"positionY":400,
				"state":"activated","fault":"no","properties":{"Location":"bathroom","heater.powerLevel":0,"state":"activated","fault":"no"}}`}, status: 200,
			want: `{"id":"h1","name":"h1","type":"iCasa.Heater","location":"kitchen","positionX":500,"positionY":400,"state":"activated","fault":"no",` + services + `,"properties":{` + heaterDef + `,"Location":"kitchen"}}`},
		{name: "device bad state", given: []step{{"POST", "/platform/devices/device", heater}},
			req: step{"PUT", "/platform/devices/device/h1", `{"state":"on"}`}, status: 400, code: "invalid", msg: "state"},
		{name: "device bad fault", given: []step{{"POST", "/platform/devices/device", heater}},
			req: step{"PUT", "/platform/devices/device/h1", `{"fault":"maybe"}`}, status: 400, code: "invalid", msg: "fault"},
		{name: "device power level out of range changes nothing", given: []step{{"POST", "/platform/devices/device", heater}},
			req:    step{"PUT", "/platform/devices/device/h1", `{"name":"renamed","positionX":3,"properties":{"heater.powerLevel":1.5}}`},
			status: 400, code: "invalid", msg: "between 0 and 1",
			then:  &step{"GET", "/platform/devices/device/h1", ""},
			thenW: `{"id":"h1","name":"h1","type":"iCasa.Heater","positionX":-1,"positionY":-1,"state":"activated","fault":"no",` + services + `,"properties":{` + heaterDef + `}}`},
		{name: "device property of the wrong type", given: []step{{"POST", "/platform/devices/device", heater}},
			req: step{"PUT", "/platform/devices/device/h1", `{"properties":{"heater.powerLevel":"0.5"}}`}, status: 400, code: "invalid"},
		{name: "device type cannot change", given: []step{{"POST", "/platform/devices/device", heater}},
			req: step{"PUT", "/platform/devices/device/h1", `{"type":"iCasa.Cooler"}`}, status: 400, code: "invalid", msg: "cannot change"},
		{name: "device type sent back unchanged is fine", given: []step{{"POST", "/platform/devices/device", heater}},
			req: step{"PUT", "/platform/devices/device/h1", `{"type":"iCasa.Heater","deviceId":"h1"}`}, status: 200},
		{name: "device body id differs", given: []step{{"POST", "/platform/devices/device", heater}},
			req: step{"PUT", "/platform/devices/device/h1", `{"deviceId":"h2"}`}, status: 400, code: "invalid"},
		{name: "device negative position truncated toward zero", given: []step{{"POST", "/platform/devices/device", heater}},
			req: step{"PUT", "/platform/devices/device/h1", `{"positionX":-7.8,"positionY":-0.2}`}, status: 200,
			want: `{"id":"h1","name":"h1","type":"iCasa.Heater","positionX":-7,"positionY":0,"state":"activated","fault":"no",` + services + `,"properties":{` + heaterDef + `}}`},
		{name: "device position beyond the plan", given: []step{{"POST", "/platform/devices/device", heater}},
			req: step{"PUT", "/platform/devices/device/h1", `{"positionX":2e9}`}, status: 400, code: "invalid"},
		{name: "device get unknown", req: step{"GET", "/platform/devices/device/nope", ""}, status: 404, code: "not_found"},
		{name: "device delete", given: []step{{"POST", "/platform/devices/device", heater}},
			req: step{"DELETE", "/platform/devices/device/h1", ""}, status: 200,
			then: &step{"GET", "/platform/devices/devices", ""}, thenW: `[]`},
		{name: "device delete unknown", req: step{"DELETE", "/platform/devices/device/nope", ""}, status: 404, code: "not_found"},
		{name: "device types", req: step{"GET", "/platform/devices/deviceTypes", ""}, status: 200,
			want: `[{"id":"iCasa.Heater","name":"Heater",` + services + `},
				{"id":"iCasa.Cooler","name":"Cooler","services":["fr.liglab.adele.icasa.device.temperature.Cooler","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.Thermometer","name":"Thermometer","services":["fr.liglab.adele.icasa.device.temperature.Thermometer","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.Photometer","name":"Photometer","services":["fr.liglab.adele.icasa.device.light.Photometer","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.DimmerLight","name":"DimmerLight","services":["fr.liglab.adele.icasa.device.light.DimmerLight","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.BinaryLight","name":"BinaryLight","services":["fr.liglab.adele.icasa.device.light.BinaryLight","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.PresenceSensor","name":"PresenceSensor","services":["fr.liglab.adele.icasa.device.presence.PresenceSensor","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.MotionSensor","name":"MotionSensor","services":["fr.liglab.adele.icasa.device.motion.MotionSensor","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.PushButton","name":"PushButton","services":["fr.liglab.adele.icasa.device.button.PushButton","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.ToggleSwitch","name":"ToggleSwitch","services":["fr.liglab.adele.icasa.device.power.PowerSwitch","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.Sprinkler","name":"Sprinkler","services":["fr.liglab.adele.icasa.device.sprinkler.Sprinkler","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.COGasSensor","name":"COGasSensor","services":["fr.liglab.adele.icasa.device.gasSensor.CarbonMonoxydeSensor","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.CO2GasSensor","name":"CO2GasSensor","services":["fr.liglab.adele.icasa.device.gasSensor.CarbonDioxydeSensor","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.AudioSource","name":"AudioSource","services":["fr.liglab.adele.icasa.device.sound.AudioSource","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.Speaker","name":"Speaker","services":["fr.liglab.adele.icasa.device.sound.Speaker","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.DoorWindowSensor","name":"DoorWindowSensor","services":["fr.liglab.adele.icasa.device.doorWindow.DoorWindowSensor","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.FloodSensor","name":"FloodSensor","services":["fr.liglab.adele.icasa.device.security.FloodSensor","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.Siren","name":"Siren","services":["fr.liglab.adele.icasa.device.security.Siren","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.Camera","name":"Camera","services":["fr.liglab.adele.icasa.device.security.Camera","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.PowerSwitchMeter","name":"PowerSwitchMeter","services":["fr.liglab.adele.icasa.device.power.PowerSwitchMeter","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.BathroomScale","name":"BathroomScale","services":["fr.liglab.adele.icasa.device.bathroomscale.BathroomScale","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.Sphygmometer","name":"Sphygmometer","services":["fr.liglab.adele.icasa.device.sphygmometer.Sphygmometer","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.MedicalThermometer","name":"MedicalThermometer","services":["fr.liglab.adele.icasa.device.medical.MedicalThermometer","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]},
				{"id":"iCasa.Tablet","name":"Tablet","services":["fr.liglab.adele.icasa.device.tablet.Tablet","fr.liglab.adele.icasa.simulator.SimulatedDevice","fr.liglab.adele.icasa.device.GenericDevice"]}]`},

		// Persons.
		{name: "person create: location unknown, sent position and name, canonical type",
			req:    step{"POST", "/platform/persons/person", `{"personId":"bob","name":"Bob","type":"father","positionX":10,"positionY":10}`},
			status: 200, want: `{"id":"bob","name":"Bob","type":"Father","location":"unknown","positionX":10,"positionY":10}`},
		{name: "person create with id and a two-word type", req: step{"POST", "/platform/persons/person", `{"id":"al","type":"old MAN"}`},
			status: 200, want: `{"id":"al","name":"al","type":"Old man","location":"unknown","positionX":-1,"positionY":-1}`},
		{name: "person unknown type", req: step{"POST", "/platform/persons/person", `{"id":"x","type":"Robot"}`}, status: 400, code: "invalid", msg: "Grandfather"},
		{name: "person missing id", req: step{"POST", "/platform/persons/person", `{"name":"x","type":"Boy"}`}, status: 400, code: "invalid"},
		{name: "person duplicate", given: []step{{"POST", "/platform/persons/person", bob}},
			req: step{"POST", "/platform/persons/person", bob}, status: 409, code: "conflict"},
		{name: "person update: the position wins over the sent location", house: true, given: []step{{"POST", "/platform/persons/person", bob}},
			req:    step{"PUT", "/platform/persons/person/bob", `{"personId":"bob","name":"Bob","type":"Father","positionX":542,"positionY":294,"location":"kitchen"}`},
			status: 200, want: `{"id":"bob","name":"Bob","type":"Father","location":"livingroom","positionX":542,"positionY":294}`},
		{name: "person update: location alone moves to the zone's centre", house: true, given: []step{{"POST", "/platform/persons/person", bob}},
			req:    step{"PUT", "/platform/persons/person/bob", `{"location":"kitchen"}`},
			status: 200, want: `{"id":"bob","name":"Bob","type":"Father","location":"kitchen","positionX":532,"positionY":475}`},
		{name: "person update: unknown location", given: []step{{"POST", "/platform/persons/person", bob}},
			req: step{"PUT", "/platform/persons/person/bob", `{"location":"attic"}`}, status: 404, code: "not_found"},
		{name: "person update by POST", given: []step{{"POST", "/platform/persons/person", bob}},
			req: step{"POST", "/platform/persons/person/bob", `{"name":"Robert"}`}, status: 200,
			want: `{"id":"bob","name":"Robert","type":"Father","location":"unknown","positionX":10,"positionY":10}`},
		{name: "person get", given: []step{{"POST", "/platform/persons/person", bob}}, req: step{"GET", "/platform/persons/person/bob", ""}, status: 200,
			want: `{"id":"bob","name":"Bob","type":"Father","location":"unknown","positionX":10,"positionY":10}`},
		{name: "person get unknown", req: step{"GET", "/platform/persons/person/x", ""}, status: 404, code: "not_found"},
		{name: "person delete", given: []step{{"POST", "/platform/persons/person", bob}}, req: step{"DELETE", "/platform/persons/person/bob", ""}, status: 200,
			then: &step{"GET", "/platform/persons/persons", ""}, thenW: `[]`},
		{name: "person types", req: step{"GET", "/platform/persons/personTypes", ""}, status: 200,
			want: `[{"id":"Grandfather","name":"Grandfather"},{"id":"Grandmother","name":"Grandmother"},{"id":"Father","name":"Father"},{"id":"Mother","name":"Mother"},
				{"id":"Boy","name":"Boy"},{"id":"Girl","name":"Girl"},{"id":"Old man","name":"Old man"},{"id":"Old woman","name":"Old woman"},{"id":"Man","name":"Man"},{"id":"Woman","name":"Woman"}]`},

		// Clock.
		{name: "clock get", req: step{"GET", "/platform/clocks/clock/default", ""}, status: 200, want: clockAt},
		{name: "clock list", req: step{"GET", "/platform/clocks/clocks", ""}, status: 200, want: `[` + clockAt + `]`},
		{name: "clock other id", req: step{"GET", "/platform/clocks/clock/other", ""}, status: 404, code: "not_found"},
		{name: "clock update other id", req: step{"PUT", "/platform/clocks/clock/other", `{"factor":2}`}, status: 404, code: "not_found"},
		{name: "clock update pause is applied and answered", req: step{"POST", "/platform/clocks/clock/default", `{"pause":true}`}, status: 200,
			want: strings.Replace(clockAt, `"pause":false`, `"pause":true`, 1)},
		{name: "clock update start date restarts time there", req: step{"PUT", "/platform/clocks/clock/default", `{"startDate":1000000000000,"factor":60}`}, status: 200,
			want: `{"id":"default","startDateStr":"09/09/2001-01:46:40","startDate":1000000000000,"currentDateStr":"09/09/2001-01:46:40","currentTime":1000000000000,"factor":60,"pause":false}`},
		{name: "clock factor 0", req: step{"PUT", "/platform/clocks/clock/default", `{"factor":0}`}, status: 400, code: "invalid", msg: "factor"},
		{name: "clock factor negative", req: step{"PUT", "/platform/clocks/clock/default", `{"factor":-3}`}, status: 400, code: "invalid"},
		{name: "clock factor fraction", req: step{"PUT", "/platform/clocks/clock/default", `{"factor":1.5}`}, status: 400, code: "invalid"},
		{name: "clock factor huge", req: step{"PUT", "/platform/clocks/clock/default", `{"factor":1e300}`}, status: 400, code: "invalid"},
		{name: "clock factor as string", req: step{"PUT", "/platform/clocks/clock/default", `{"factor":"2"}`}, status: 400, code: "invalid"},
		{name: "clock bad factor with a good pause changes nothing", req: step{"PUT", "/platform/clocks/clock/default", `{"pause":true,"factor":0}`}, status: 400, code: "invalid",
			then: &step{"GET", "/platform/clocks/clock/default", ""}, thenW: clockAt},
		{name: "clock read-only fields are ignored", req: step{"PUT", "/platform/clocks/clock/default", `{"id":"default","currentTime":5,"currentDateStr":"x","factor":1}`}, status: 200, want: clockAt},

		// Extras and the error model.
		{name: "reset removes everything but the clock", house: true,
			given: []step{{"POST", "/platform/devices/device", heater}, {"POST", "/platform/persons/person", bob}, {"PUT", "/platform/clocks/clock/default", `{"factor":5}`}},
			req:   step{"DELETE", "/platform/simulation", ""}, status: 200,
			then: &step{"GET", "/platform/clocks/clock/default", ""}, thenW: strings.Replace(clockAt, `"factor":1`, `"factor":5`, 1)},
		{name: "healthz", req: step{"GET", "/healthz", ""}, status: 200, want: `{"status":"ok"}`},
		{name: "unknown route", req: step{"GET", "/platform/nothing", ""}, status: 404, code: "not_found"},
		{name: "the singular zone base is not a route", req: step{"GET", "/platform/zone/kitchen", ""}, status: 404, code: "not_found"},
		{name: "method not allowed", req: step{"PATCH", "/platform/zones/zones", ""}, status: 405, code: "method_not_allowed"},
		{name: "empty body", req: step{"POST", "/platform/zones/zone", ""}, status: 400, code: "invalid", msg: "empty"},
		{name: "malformed JSON", req: step{"POST", "/platform/zones/zone", `{"id":`}, status: 400, code: "invalid"},
		{name: "JSON array body", req: step{"POST", "/platform/devices/device", `[]`}, status: 400, code: "invalid"},
		{name: "JSON null body", req: step{"POST", "/platform/devices/device", `null`}, status: 400, code: "invalid"},
		{name: "two JSON values", req: step{"POST", "/platform/zones/zone", `{"id":"a","leftX":0,"topY":0,"rightX":1,"bottomY":1}{}`}, status: 400, code: "invalid"},
		{name: "invalid UTF-8", req: step{"POST", "/platform/persons/person", "{\"id\":\"p\",\"name\":\"\xff\xfe\",\"type\":\"Boy\"}"}, status: 400, code: "invalid", msg: "UTF-8"},
		{name: "deeply nested property", given: []step{{"POST", "/platform/devices/device", heater}},
			req: step{"PUT", "/platform/devices/device/h1", `{"properties":{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}`}, status: 400, code: "invalid"},
		{name: "very deep JSON", req: step{"POST", "/platform/devices/device", strings.Repeat("[", 20000) + strings.Repeat("]", 20000)}, status: 400, code: "invalid"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			f := newFixture(t)
			if row.house {
				f.house(t)
			}
			for _, s := range row.given {
				f.mustDo(t, s.method, s.path, s.body)
			}
			before := f.state(t)
			rec := f.do(t, row.req.method, row.req.path, row.req.body)
			if rec.Code != row.status {
				t.Fatalf("%s %s = %d %s, want %d", row.req.method, row.req.path, rec.Code, rec.Body, row.status)
			}
			if row.status == http.StatusOK {
				if row.want != "" {
					if d := jsonDiff(t, row.want, rec.Body.String()); d != "" {
						t.Errorf("body (-want +got):\n%s", d)
					}
				}
				if row.req.method == "DELETE" && rec.Body.Len() != 0 {
					t.Errorf("DELETE body = %q, want empty", rec.Body)
				}
			} else {
				if got := errorCode(t, rec.Body.String()); got != row.code {
					t.Errorf("code = %q, want %q", got, row.code)
				}
				if !strings.Contains(rec.Body.String(), row.msg) {
					t.Errorf("error %s does not mention %q", rec.Body, row.msg)
				}
				if after := f.state(t); after != before {
					t.Errorf("failed request changed the state:\nbefore %s\nafter  %s", before, after)
				}
			}
			if row.then != nil {
				got := f.do(t, row.then.method, row.then.path, row.then.body)
				if row.thenW == "" {
					if got.Code != http.StatusNotFound {
						t.Errorf("then %s %s = %d, want 404", row.then.method, row.then.path, got.Code)
					}
				} else if d := jsonDiff(t, row.thenW, got.Body.String()); d != "" {
					t.Errorf("then %s %s (-want +got):\n%s", row.then.method, row.then.path, d)
				}
			}
		})
	}
}

func TestMethodNotAllowedListsAllow(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		method, path, allow string
	}{
		{"DELETE", "/platform/zones/zones", "GET, HEAD, OPTIONS"},
		{"GET", "/platform/zones/zone", "POST, OPTIONS"},
		{"PATCH", "/platform/devices/device/x", "GET, HEAD, POST, PUT, DELETE, OPTIONS"},
		{"DELETE", "/platform/clocks/clock/default", "GET, HEAD, POST, PUT, OPTIONS"},
		{"GET", "/platform/simulation", "DELETE, OPTIONS"},
	}
	for _, tt := range tests {
		rec := f.do(t, tt.method, tt.path, "")
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != tt.allow {
			t.Errorf("%s %s = %d Allow %q, want 405 Allow %q", tt.method, tt.path, rec.Code, rec.Header().Get("Allow"), tt.allow)
		}
		if got := errorCode(t, rec.Body.String()); got != "method_not_allowed" {
			t.Errorf("%s %s code = %q", tt.method, tt.path, got)
		}
	}
}

func TestOptionsOnEveryRoute(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{
		"/platform/zones/zones", "/platform/zones/zone", "/platform/zones/zone/k",
		"/platform/devices/devices", "/platform/devices/deviceTypes", "/platform/devices/device", "/platform/devices/device/d",
		"/platform/clocks/clocks", "/platform/clocks/clock/default",
		"/platform/persons/personTypes", "/platform/persons/persons", "/platform/persons/person", "/platform/persons/person/p",
		"/platform/simulation", "/healthz",
	} {
		req := newRequest("OPTIONS", p, nil)
		req.Header.Set("Origin", "http://localhost:5173")
		rec := httptest.NewRecorder()
		f.handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && rec.Code != http.StatusNoContent {
			t.Errorf("OPTIONS %s = %d, want 200", p, rec.Code)
		}
		h := rec.Header()
		if h.Get("Access-Control-Allow-Origin") != "http://localhost:5173" || h.Get("Access-Control-Allow-Methods") == "" || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") {
			t.Errorf("OPTIONS %s CORS headers = %v", p, h)
		}
	}
}

func TestBodyTooLarge(t *testing.T) {
	f := newFixture(t)
	body := `{"id":"z","name":"` + strings.Repeat("x", 1<<20) + `","leftX":0,"topY":0,"rightX":1,"bottomY":1}`
	rec := f.do(t, "POST", "/platform/zones/zone", body)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("POST of %d bytes = %d %s, want 413", len(body), rec.Code, rec.Body)
	}
	if got := errorCode(t, rec.Body.String()); got != "too_large" {
		t.Errorf("code = %q, want too_large", got)
	}
	if got := f.mustDo(t, "GET", "/platform/zones/zones", "").Body.String(); strings.TrimSpace(got) != "[]" {
		t.Errorf("zones after a rejected body = %s, want []", got)
	}
}

// unreadBody is a request body that fails the test when read.
type unreadBody struct{ t *testing.T }

func (b unreadBody) Read([]byte) (int, error) {
	b.t.Error("the body of a request declared over the limit was read")
	return 0, io.EOF
}

// TestDeclaredBodyTooLargeIsNotRead: a body whose Content-Length is over
// the limit is refused before it is read, so that a client waiting for
// 100 Continue is not asked for it and one that never sends it does not
// hold the request.
func TestDeclaredBodyTooLargeIsNotRead(t *testing.T) {
	f := newFixture(t)
	f.mustDo(t, "POST", "/mediation/c", "")
	f.mustDo(t, "POST", "/mediation/c/adapter/rest-in/in", "")
	for _, tc := range []struct{ method, path, contentType string }{
		{"POST", "/platform/zones/zone", "application/json"},
		{"PUT", "/platform/clocks/clock/default", "application/json"},
		{"POST", "/platform/scriptPlayer/script?id=s", "application/xml"},
		{"POST", "/mediation/c/bindings", "application/x-www-form-urlencoded"},
		{"POST", "/mediation/", "application/xml"},
		{"POST", "/mediation/runtime/c/components/in/data", "text/plain"},
	} {
		req := newRequest(tc.method, tc.path, unreadBody{t})
		req.ContentLength = 1<<20 + 1
		req.Header.Set("Content-Type", tc.contentType)
		req.Header.Set("Expect", "100-continue")
		rec := httptest.NewRecorder()
		f.handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusRequestEntityTooLarge || errorCode(t, rec.Body.String()) != "too_large" {
			t.Errorf("%s %s declaring %d bytes = %d %s, want 413 too_large", tc.method, tc.path, req.ContentLength, rec.Code, rec.Body)
		}
	}
	if got := f.mustDo(t, "GET", "/platform/zones/zones", "").Body.String(); strings.TrimSpace(got) != "[]" {
		t.Errorf("zones after rejected bodies = %s, want []", got)
	}
}

func TestClockFollowsMockedWallClock(t *testing.T) {
	f := newFixture(t)
	f.mustDo(t, "PUT", "/platform/clocks/clock/default", `{"factor":60}`)
	f.clock.Add(1000 * 1e6) // one real second
	want := strings.NewReplacer(`"factor":1`, `"factor":60`, `"currentDateStr":"18/04/2013-10:00:00"`, `"currentDateStr":"18/04/2013-10:01:00"`,
		`"currentTime":1366279200000`, `"currentTime":1366279260000`).Replace(clockAt)
	if d := jsonDiff(t, want, f.mustDo(t, "GET", "/platform/clocks/clock/default", "").Body.String()); d != "" {
		t.Errorf("clock after 1 s at factor 60 (-want +got):\n%s", d)
	}
}

func TestCustomRootsAndOrigin(t *testing.T) {
	f := newFixture(t)
	h := httpapiHandler(f, "icasa", "https://example.org")
	req := newRequest("GET", "/icasa/zones/zones", nil)
	req.Header.Set("Origin", "https://example.org")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Header().Get("Access-Control-Allow-Origin") != "https://example.org" {
		t.Errorf("GET /icasa/zones/zones = %d, origin %q", rec.Code, rec.Header().Get("Access-Control-Allow-Origin"))
	}
	if rec := serve(h, "GET", "/platform/zones/zones"); rec.Code != 404 {
		t.Errorf("GET /platform/zones/zones with root icasa = %d, want 404", rec.Code)
	}
}

func TestPreflightEchoesRequestedHeaders(t *testing.T) {
	f := newFixture(t)
	req := newRequest("OPTIONS", "/platform/zones/zone", nil)
	req.Header.Set("Access-Control-Request-Headers", "X-Custom, Content-Type")
	rec := httptest.NewRecorder()
	f.handler.ServeHTTP(rec, req)
	if got := rec.Header().Get("Access-Control-Allow-Headers"); rec.Code != 200 || got != "X-Custom, Content-Type" {
		t.Errorf("preflight = %d, Allow-Headers %q", rec.Code, got)
	}
}

func TestEventsAtTheRootToo(t *testing.T) {
	f := newFixture(t)
	rec := f.do(t, "HEAD", "/events", "")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/event-stream" {
		t.Errorf("HEAD /events = %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}
