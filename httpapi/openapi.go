package httpapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

// The OpenAPI 3.1 document of both services, served at GET /openapi.json
// with the server's actual roots. It is built here, beside routes.go, and a
// test validates every request and response of the REST test suites
// against it, so it cannot drift from what the server does.

// obj is a JSON object of the document.
type obj = map[string]any

// ref points at a schema of components.schemas.
func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

func arrayOf(items obj) obj { return obj{"type": "array", "items": items} }

func str(desc string) obj { return obj{"type": "string", "description": desc} }

func num(desc string) obj { return obj{"type": "number", "description": desc} }

func integer(desc string) obj { return obj{"type": "integer", "description": desc} }

func boolean(desc string) obj { return obj{"type": "boolean", "description": desc} }

// schemas are the components.schemas of the document.
func schemas() obj {
	anyValue := obj{"description": "any JSON value"}
	errCodes := []string{"invalid", "not_found", "method_not_allowed", "conflict", "too_large", "forbidden", "busy", "insufficient_storage", "internal"}
	return obj{
		"Error": obj{"type": "object", "required": []string{"error", "code"}, "properties": obj{
			"error": str("what is wrong, as a sentence"),
			"code":  obj{"type": "string", "enum": errCodes, "description": "the kind of error"},
		}},
		"Health": obj{"type": "object", "properties": obj{"status": str("ok")}},
		"Home": obj{"type": "object", "required": []string{"id", "platform", "mediation", "physics"}, "properties": obj{
			"id": str("the home's name; the server's own is \"default\""), "platform": str("the path of its simulation service"),
			"mediation": str("the path of its mediation service"), "physics": obj{"type": "string", "enum": []string{"contract", "realistic"}},
		}},
		"HomeCreate": obj{"type": "object", "description": "optional; other fields are ignored (a Home read can be sent back)", "properties": obj{
			"physics": obj{"type": "string", "enum": []string{"contract", "realistic"}, "description": "contract unless given"},
		}},
		"Zone": obj{"type": "object", "required": []string{"id", "name", "leftX", "topY", "rightX", "bottomY", "variables"}, "properties": obj{
			"id": str("the zone's id"), "name": str("display name; the id when not set"), "isRoom": boolean("stored as sent"),
			"leftX": integer(""), "topY": integer(""), "rightX": integer(""), "bottomY": integer(""),
			"variables": obj{"type": "object", "additionalProperties": obj{"type": "number"}, "description": "Temperature (K), Illuminance (lx), Volume (m³), …"},
		}},
		"ZoneCreate": obj{"type": "object", "description": "id (or zoneId) and the four edges are required", "properties": obj{
			"id": str(""), "zoneId": str("same as id"), "name": str(""), "isRoom": boolean(""),
			"leftX": num("truncated to an integer"), "topY": num(""), "rightX": num(""), "bottomY": num(""),
			"variables": obj{"type": "object", "additionalProperties": obj{"type": []string{"number", "null"}}},
		}},
		"ZoneUpdate": obj{"type": "object", "description": "partial: absent fields keep their value; a null variable is removed", "properties": obj{
			"id": str("must be the path's id when given"), "zoneId": str(""), "name": str(""), "isRoom": boolean(""),
			"leftX": num(""), "topY": num(""), "rightX": num(""), "bottomY": num(""),
			"variables": obj{"type": "object", "additionalProperties": obj{"type": []string{"number", "null"}}},
		}},
		"Device": obj{"type": "object", "required": []string{"id", "name", "type", "positionX", "positionY", "state", "fault", "services", "properties"}, "properties": obj{
			"id": str(""), "name": str(""), "type": str("<namespace>.<Kind>, such as iCasa.Heater"),
			"location":  str("the zone holding it; absent outside every zone"),
			"positionX": integer("-1 while not placed"), "positionY": integer("-1 while not placed"),
			"width": integer(""), "height": integer(""),
			"state":      obj{"type": "string", "enum": []string{"activated", "deactivated"}},
			"fault":      obj{"type": "string", "enum": []string{"yes", "no"}},
			"services":   arrayOf(str("")),
			"properties": obj{"type": "object", "additionalProperties": anyValue, "description": "the kind's properties (see /devices/kinds), free ones, state, fault and Location"},
		}},
		"DeviceCreate": obj{"type": "object", "description": "id (or deviceId) and type are required", "properties": obj{
			"id": str(""), "deviceId": str(""), "type": str(""), "name": str(""), "positionX": num(""), "positionY": num(""),
			"width": num(""), "height": num(""), "properties": obj{"type": "object", "additionalProperties": anyValue},
		}},
		"DeviceUpdate": obj{"type": "object", "description": "partial; a null property is removed", "properties": obj{
			"id": str(""), "deviceId": str(""), "type": str("must be the device's"), "name": str(""), "positionX": num(""), "positionY": num(""),
			"width": num(""), "height": num(""), "location": str("moves it to the zone's centre"),
			"state":      obj{"type": "string", "enum": []string{"activated", "deactivated"}},
			"fault":      obj{"type": "string", "enum": []string{"yes", "no"}},
			"properties": obj{"type": "object", "additionalProperties": anyValue},
		}},
		"DeviceType": obj{"type": "object", "properties": obj{"id": str(""), "name": str(""), "services": arrayOf(str(""))}},
		"Kind": obj{"type": "object", "properties": obj{
			"id": str(""), "name": str(""), "services": arrayOf(str("")), "doc": str(""),
			"properties": arrayOf(obj{"type": "object", "properties": obj{
				"name": str(""), "type": obj{"type": "string", "enum": []string{"number", "boolean", "string"}},
				"default": anyValue, "min": num(""), "max": num(""), "derived": boolean(""), "follows": str(""),
				"unit": str(""), "doc": str(""), "aliases": arrayOf(str("")),
			}}),
		}},
		"Person": obj{"type": "object", "required": []string{"id", "name", "type", "location", "positionX", "positionY"}, "properties": obj{
			"id": str(""), "name": str(""), "type": str("Grandfather, Mother, Boy, …"), "location": str("a zone, or unknown"),
			"positionX": integer(""), "positionY": integer(""),
		}},
		"PersonWrite": obj{"type": "object", "description": "create: id (or personId) and type are required; update: partial", "properties": obj{
			"id": str(""), "personId": str(""), "name": str(""), "type": str(""), "positionX": num(""), "positionY": num(""),
			"location": str("moves the person to the zone's centre"),
		}},
		"PersonType": obj{"type": "object", "properties": obj{"id": str(""), "name": str("")}},
		"Clock": obj{"type": "object", "properties": obj{
			"id": str("default"), "startDateStr": str("dd/MM/yyyy-HH:mm:ss"), "startDate": integer("ms since the epoch"),
			"currentDateStr": str(""), "currentTime": integer("simulated ms since the epoch"), "factor": integer(""), "pause": boolean(""),
		}},
		"ClockUpdate": obj{"type": "object", "description": "partial", "properties": obj{
			"id": str(""), "startDate": num("ms since the epoch: restarts simulated time there"), "factor": num("an integer from 1 to 10⁹"), "pause": boolean(""),
		}},
		"Environment": obj{"type": "object", "properties": obj{
			"physics":            obj{"type": "string", "enum": []string{"contract", "realistic"}, "description": "read-only"},
			"outdoorTemperature": num("K"), "outdoorMin": num("K, a daily curve"), "outdoorMax": num("K, a daily curve"),
			"latitude": num("degrees"), "longitude": num("degrees"),
			"sky":         obj{"type": "string", "enum": []string{"clear", "partly-cloudy", "overcast"}},
			"windowShare": num("window area per floor area"), "sunElevation": num("degrees, read-only"), "outdoorIlluminance": num("lx, read-only"),
		}},
		"Script": obj{"type": "object", "properties": obj{
			"id": str("such as morning.bhv"), "name": str(""),
			"state":           obj{"type": "string", "enum": []string{"started", "paused", "stopped"}},
			"completePercent": num(""), "actionNumber": integer(""), "startDate": str("dd/MM/yyyy-HH:mm:ss, or empty"),
			"factor": integer(""), "executionTime": integer("ms: the sum of every delay"), "errors": integer("actions that failed in the last run"),
			"lastError": str(""),
			"problems":  arrayOf(str("an action that fails whenever the script plays, with its line")),
		}},
		"ScriptUpload": obj{"type": "object", "description": "with content: upload it; with only id: save the current home as a script", "properties": obj{
			"id": str(""), "name": str("same as id"), "content": str("the .bhv text"),
		}},
		"ScriptState": obj{"type": "object", "required": []string{"state"}, "properties": obj{
			"id": str(""), "state": obj{"type": "string", "enum": []string{"started", "paused", "stopped"}},
		}},
		"ChainList": obj{"type": "object", "properties": obj{"chains": arrayOf(str(""))}},
		"Chain": obj{"type": "object", "properties": obj{
			"ID": str(""), "State": obj{"type": "string", "enum": []string{"idle", "started", "stopped"}},
			"Mediators": arrayOf(str("")),
			"Adapters":  obj{"type": "object", "properties": obj{"in-only": arrayOf(str("")), "out-only": arrayOf(str("")), "in-out": arrayOf(str(""))}},
			"Bindings":  arrayOf(ref("Binding")),
		}},
		"ChainState": obj{"type": "object", "properties": obj{"state": obj{"type": "string", "enum": []string{"idle", "started", "stopped"}}}},
		"Binding": obj{"type": "object", "properties": obj{
			"from": str("<component>:<out port>"), "to": str("<component>:<in port>"), "linker": str("direct, queue, …"),
			"properties": obj{"type": "object", "additionalProperties": anyValue},
		}},
		"Bindings":     obj{"type": "object", "properties": obj{"Bindings": arrayOf(ref("Binding"))}},
		"ComponentIDs": obj{"type": "object", "properties": obj{"Adapters": arrayOf(str("")), "Mediators": arrayOf(str(""))}},
		"Component": obj{"type": "object", "properties": obj{
			"ID": str(""), "Type": str(""), "Namespace": str(""), "UUID": str(""),
			"State":         obj{"type": "string", "enum": []string{"valid", "stopped", "invalid"}},
			"Creation date": str("yyyy-MM-dd HH:mm:ss.SSS"),
			"Properties":    obj{"type": "object", "additionalProperties": anyValue},
			"Pattern":       obj{"type": "string", "enum": []string{"in-only", "out-only", "in-out"}},
			"Counters": obj{"type": "object", "properties": obj{
				"in": integer(""), "out": integer(""), "dropped": integer(""), "errors": integer(""), "queue": integer(""),
			}},
		}},
		"ComponentType": obj{"type": "object", "properties": obj{
			"name": str(""), "kind": obj{"type": "string", "enum": []string{"mediator", "adapter"}},
			"pattern": obj{"type": []string{"string", "null"}, "description": "an adapter's pattern; null for a mediator"},
			"in":      arrayOf(str("")), "out": arrayOf(str("")),
			"properties": obj{"type": "object", "additionalProperties": anyValue},
		}},
		"Message": obj{"type": "object", "properties": obj{
			"content": anyValue, "properties": obj{"type": "object", "additionalProperties": anyValue},
		}},
		"Messages": obj{"type": "object", "properties": obj{"messages": arrayOf(ref("Message"))}},
		"Form":     obj{"type": "object", "description": "form fields, as curl -d (urlencoded) or curl -F (multipart) sends them: properties in Cilia's {key=value; …} syntax, type, from, to, linker, command", "additionalProperties": obj{"type": "string"}},
	}
}

// op describes one operation.
type op struct {
	summary string
	params  []obj
	body    obj // the request's content, by media type
	status  int // the success status: 200 unless set
	ok      obj // the success response's content, by media type; nil: no body
	errors  []int
	open    bool // needs no token (security: none)
}

func jsonBody(schema obj) obj { return obj{"application/json": obj{"schema": schema}} }

// jsonOrForm is a request body that is JSON or form fields (urlencoded or
// multipart).
func jsonOrForm(schema obj) obj {
	return obj{"application/json": obj{"schema": schema}, "application/x-www-form-urlencoded": obj{"schema": ref("Form")},
		"multipart/form-data": obj{"schema": ref("Form")}}
}

func pathParam(name, desc string) obj {
	return obj{"name": name, "in": "path", "required": true, "schema": obj{"type": "string"}, "description": desc}
}

func queryParam(name, desc string) obj {
	return obj{"name": name, "in": "query", "schema": obj{"type": "string"}, "description": desc}
}

// errorResponses are the error statuses every operation may answer.
var errorResponses = []int{400, 403, 404, 405, 409, 413, 503}

func (o op) build() obj {
	responses := obj{}
	status := o.status
	if status == 0 {
		status = http.StatusOK
	}
	success := obj{"description": http.StatusText(status)}
	if o.ok != nil {
		success["content"] = o.ok
	}
	responses[itoa(int64(status))] = success
	errs := o.errors
	if errs == nil {
		errs = errorResponses
	}
	// Every request may be refused by the guard (its Host, its Origin, the
	// token).
	for _, s := range append(errs, http.StatusForbidden) {
		responses[itoa(int64(s))] = obj{"description": http.StatusText(s), "content": jsonBody(ref("Error"))}
	}
	responses["500"] = obj{"description": "a bug", "content": jsonBody(ref("Error"))}
	out := obj{"summary": o.summary, "responses": responses}
	if o.open {
		out["security"] = []obj{{}} // no token needed
	}
	if len(o.params) > 0 {
		out["parameters"] = o.params
	}
	if o.body != nil {
		out["requestBody"] = obj{"content": o.body}
	}
	return out
}

// addHomes adds the routes of the homes.
func addHomes(add func(path, method string, o op)) {
	home := []obj{pathParam("home", "the home's name: 1 to 64 letters, digits, - or _")}
	add("/homes", "GET", op{summary: "Every home: the server's own (\"default\") first, then the others by name", ok: jsonBody(arrayOf(ref("Home")))})
	add("/homes/{home}", "GET", op{summary: "A home", params: home, ok: jsonBody(ref("Home"))})
	add("/homes/{home}", "POST", op{summary: "Create a home, with its own clock, physics, scripts and chains, served under /homes/{home}/ at the same paths as the server's own",
		params: home, body: jsonBody(ref("HomeCreate")), ok: jsonBody(ref("Home"))})
	add("/homes/{home}", "DELETE", op{summary: "Delete a home and stop everything it runs (an empty body, as every DELETE)", params: home})
}

// openAPI returns the document for the prefix pre ("" or such as
// "/homes/lab"), the roots p (such as "/platform") and m (such as
// "/mediation", or "" without mediation), both with the prefix, and, when
// homes is set, the routes of the homes.
func openAPI(pre, p, m string, homes bool) []byte {
	paths := obj{}
	add := func(path, method string, o op) {
		item, _ := paths[path].(obj)
		if item == nil {
			item = obj{}
			paths[path] = item
		}
		if method != "GET" && o.errors == nil {
			// A change the disk refuses (with -state, or a scripts
			// directory) is not made.
			o.errors = append(slices.Clone(errorResponses), http.StatusInsufficientStorage)
		}
		item[strings.ToLower(method)] = o.build()
	}
	// fields declares form fields that the query string may carry too.
	fields := func(names ...string) []obj {
		var out []obj
		for _, n := range names {
			out = append(out, queryParam(n, "also a form or JSON field of the body"))
		}
		return out
	}
	id := func(what string) []obj { return []obj{pathParam("id", "the "+what+"'s id")} }
	j := jsonBody

	add(pre+"/", "GET", op{summary: "Leads to the house plan", status: http.StatusFound, errors: []int{}, open: true})
	// A home's healthz needs the token, so that the names of homes cannot
	// be probed without it (see newGuard): only the server's own is open.
	add(pre+"/healthz", "GET", op{summary: "Health check", ok: j(ref("Health")), errors: []int{}, open: pre == ""})
	add(p+"/healthz", "GET", op{summary: "Health check", ok: j(ref("Health")), errors: []int{}})
	add(pre+"/openapi.json", "GET", op{summary: "This document", ok: j(obj{"type": "object"}), errors: []int{}})
	add(pre+"/simulator", "GET", op{summary: "The house plan (HTML)", ok: obj{"text/html": obj{"schema": obj{"type": "string"}}}, errors: []int{404}, open: true})
	add(pre+"/simulator/{file}", "GET", op{summary: "The house plan's files", params: []obj{pathParam("file", "app.js, style.css, …")},
		ok: obj{"*/*": obj{"schema": obj{"type": "string"}}}, errors: []int{404}, open: true})

	add(p+"/zones/zones", "GET", op{summary: "Every zone, in creation order", ok: j(arrayOf(ref("Zone")))})
	add(p+"/zones/zone", "POST", op{summary: "Create a zone", body: j(ref("ZoneCreate")), ok: j(ref("Zone"))})
	for _, method := range []string{"GET", "PUT", "POST", "DELETE"} {
		o := op{summary: "A zone", params: id("zone"), ok: j(ref("Zone"))}
		switch method {
		case "PUT", "POST":
			o.summary, o.body = "Update a zone (partial)", j(ref("ZoneUpdate"))
		case "DELETE":
			o.summary, o.ok = "Delete a zone", nil
		}
		add(p+"/zones/zone/{id}", method, o)
	}
	add(p+"/devices/devices", "GET", op{summary: "Every device, in creation order", ok: j(arrayOf(ref("Device")))})
	add(p+"/devices/deviceTypes", "GET", op{summary: "The device types", ok: j(arrayOf(ref("DeviceType")))})
	add(p+"/devices/kinds", "GET", op{summary: "Every device kind with its property specs", ok: j(arrayOf(ref("Kind")))})
	add(p+"/devices/device", "POST", op{summary: "Create a device", body: j(ref("DeviceCreate")), ok: j(ref("Device"))})
	for _, method := range []string{"GET", "PUT", "POST", "DELETE"} {
		o := op{summary: "A device", params: id("device"), ok: j(ref("Device"))}
		switch method {
		case "PUT", "POST":
			o.summary, o.body = "Update a device (partial)", j(ref("DeviceUpdate"))
		case "DELETE":
			o.summary, o.ok = "Delete a device", nil
		}
		add(p+"/devices/device/{id}", method, o)
	}
	add(p+"/clocks/clocks", "GET", op{summary: "The clocks (one: default)", ok: j(arrayOf(ref("Clock")))})
	for _, method := range []string{"GET", "PUT", "POST"} {
		o := op{summary: "The clock", params: id("clock"), ok: j(ref("Clock"))}
		if method != "GET" {
			o.summary, o.body = "Change the clock (partial)", j(ref("ClockUpdate"))
		}
		add(p+"/clocks/clock/{id}", method, o)
	}
	add(p+"/persons/personTypes", "GET", op{summary: "The person types", ok: j(arrayOf(ref("PersonType")))})
	add(p+"/persons/persons", "GET", op{summary: "Every person, in creation order", ok: j(arrayOf(ref("Person")))})
	add(p+"/persons/person", "POST", op{summary: "Create a person", body: j(ref("PersonWrite")), ok: j(ref("Person"))})
	for _, method := range []string{"GET", "PUT", "POST", "DELETE"} {
		o := op{summary: "A person", params: id("person"), ok: j(ref("Person"))}
		switch method {
		case "PUT", "POST":
			o.summary, o.body = "Update a person (partial)", j(ref("PersonWrite"))
		case "DELETE":
			o.summary, o.ok = "Delete a person", nil
		}
		add(p+"/persons/person/{id}", method, o)
	}
	for _, method := range []string{"GET", "PUT", "POST"} {
		o := op{summary: "The outdoors and the physics model", ok: j(ref("Environment"))}
		if method != "GET" {
			o.summary, o.body = "Change the outdoors (partial)", j(ref("Environment"))
		}
		add(p+"/environment", method, o)
	}
	add(p+"/simulation", "DELETE", op{summary: "Stop the script playing and remove every zone, device and person"})
	add(p+"/scriptPlayer/scripts", "GET", op{summary: "The player's scripts", ok: j(arrayOf(ref("Script")))})
	add(p+"/scriptPlayer/script", "POST", op{summary: "Upload a script (JSON, or the .bhv file as the body with ?id), or save the home as one",
		params: []obj{queryParam("id", "the script's id, with a .bhv body")},
		body: obj{
			"application/json": obj{"schema": ref("ScriptUpload")},
			"application/xml":  obj{"schema": obj{"type": "string"}},
			"text/xml":         obj{"schema": obj{"type": "string"}},
			"text/plain":       obj{"schema": obj{"type": "string"}},
		}, ok: j(ref("Script"))})
	for _, method := range []string{"GET", "PUT", "POST"} {
		o := op{summary: "A script", params: id("script"), ok: j(ref("Script"))}
		if method != "GET" {
			o.summary, o.body = "Play, pause or stop a script", j(ref("ScriptState"))
		}
		add(p+"/scriptPlayer/script/{id}", method, o)
	}
	add(p+"/scriptPlayer/script/{id}/source", "GET", op{summary: "A script's text", params: id("script"),
		ok: obj{"application/xml": obj{"schema": obj{"type": "string"}}}})
	events := op{summary: "Every change, as Server-Sent Events (Last-Event-ID resumes)",
		params: []obj{{"name": "Last-Event-ID", "in": "header", "schema": obj{"type": "string"}},
			queryParam("access_token", "the server's token, for browsers' EventSource")},
		ok: obj{"text/event-stream": obj{"schema": obj{"type": "string"}}}, errors: []int{403, 404, 503}}
	add(p+"/events", "GET", events)
	add(pre+"/events", "GET", events)
	if homes {
		addHomes(add)
	}

	if m != "" {
		chain := pathParam("chain", "the chain's id")
		comp := pathParam("id", "the component's id")
		add(m, "GET", op{summary: "The chains", ok: j(ref("ChainList"))})
		add(m+"/", "GET", op{summary: "The chains", ok: j(ref("ChainList"))})
		xml := obj{"application/xml": obj{"schema": obj{"type": "string"}}, "text/xml": obj{"schema": obj{"type": "string"}}}
		imp := op{summary: "Create the chains of a DSCilia document (Cilia's XML), all or nothing; the answer lists them",
			params: []obj{queryParam("placeholders", "true: stand in for unknown types with placeholders")}, body: xml, ok: j(ref("ChainList"))}
		add(m, "POST", imp)
		add(m+"/", "POST", imp)
		add(m+"/runtime/types", "GET", op{summary: "Every component type", ok: j(arrayOf(ref("ComponentType")))})
		add(m+"/runtime/{chain}", "GET", op{summary: "A chain's state", params: []obj{chain}, ok: j(ref("ChainState"))})
		for _, action := range []string{"start", "stop"} {
			for _, method := range []string{"PUT", "POST"} {
				add(m+"/runtime/{chain}/"+action, method, op{summary: strings.ToUpper(action[:1]) + action[1:] + " a chain",
					params: []obj{chain}, ok: j(ref("ChainState"))})
			}
		}
		add(m+"/runtime/{chain}/components/{id}", "GET", op{summary: "A component with its counters", params: []obj{chain, comp}, ok: j(ref("Component"))})
		add(m+"/runtime/{chain}/components/{id}/data", "GET", op{summary: "What a rest-out adapter kept", params: []obj{chain, comp}, ok: j(ref("Messages"))})
		add(m+"/runtime/{chain}/components/{id}/data", "POST", op{summary: "Send a message in through a rest-in adapter: a JSON body is the content; a form's content field, or any other body, the content as text; prop.<name> query or form fields its properties (another form field is 400)",
			params: []obj{chain, comp}, body: obj{
				"application/json":                  obj{"schema": obj{}},
				"application/x-www-form-urlencoded": obj{"schema": ref("Form")},
				"multipart/form-data":               obj{"schema": ref("Form")},
				"text/plain":                        obj{"schema": obj{"type": "string"}},
			}})
		add(m+"/{chain}", "GET", op{summary: "A chain; as DSCilia with Accept: application/xml", params: []obj{chain},
			ok: obj{"application/json": obj{"schema": ref("Chain")}, "application/xml": obj{"schema": obj{"type": "string"}}}})
		add(m+"/{chain}", "POST", op{summary: "Create a chain (started at once)", params: []obj{chain}, ok: j(ref("Chain"))})
		add(m+"/{chain}", "DELETE", op{summary: "Delete a chain", params: []obj{chain}})
		add(m+"/{chain}/components", "GET", op{summary: "A chain's component ids", params: []obj{chain}, ok: j(ref("ComponentIDs"))})
		add(m+"/{chain}/mediators", "GET", op{summary: "A chain's mediator ids", params: []obj{chain}, ok: j(obj{"type": "object", "properties": obj{"Mediators": arrayOf(str(""))}})})
		add(m+"/{chain}/adapters", "GET", op{summary: "A chain's adapter ids", params: []obj{chain}, ok: j(obj{"type": "object", "properties": obj{"Adapters": arrayOf(str(""))}})})
		add(m+"/{chain}/components", "PUT", op{summary: "copy (from, to) or replace (from, to) a component", params: append([]obj{chain}, fields("command", "from", "to")...),
			body: jsonOrForm(obj{"type": "object"}), ok: j(ref("Component"))})
		add(m+"/{chain}/components/{id}", "GET", op{summary: "A component", params: []obj{chain, comp}, ok: j(ref("Component"))})
		add(m+"/{chain}/components/{id}", "PUT", op{summary: "Change a component's properties (merged, live)", params: append([]obj{chain, comp}, fields("properties")...),
			body: jsonOrForm(obj{"type": "object"}), ok: j(ref("Component"))})
		add(m+"/{chain}/components/{id}", "DELETE", op{summary: "Remove a component and its bindings", params: []obj{chain, comp}})
		for _, kind := range []string{"mediators", "adapters"} {
			add(m+"/{chain}/"+kind+"/{id}", "GET", op{summary: "A component of this kind", params: []obj{chain, comp}, ok: j(ref("Component"))})
			add(m+"/{chain}/"+kind+"/{id}", "POST", op{summary: "Create a component of this kind (type and properties as fields)", params: append([]obj{chain, comp}, fields("type", "properties")...),
				body: jsonOrForm(obj{"type": "object"}), ok: j(ref("Component"))})
			add(m+"/{chain}/"+kind+"/{id}", "DELETE", op{summary: "Remove a component of this kind", params: []obj{chain, comp}})
		}
		for _, kind := range []string{"mediator", "adapter"} {
			add(m+"/{chain}/"+kind+"/{type}/{id}", "POST", op{summary: "Create a " + kind + " of a type",
				params: append([]obj{chain, pathParam("type", "the component type, such as rest-in"), comp}, fields("properties")...),
				body:   jsonOrForm(obj{"type": "object"}), ok: j(ref("Component"))})
		}
		add(m+"/{chain}/bindings", "GET", op{summary: "A chain's bindings", params: []obj{chain}, ok: j(ref("Bindings"))})
		add(m+"/{chain}/bindings", "POST", op{summary: "Bind from (<component>:<port>) to (<component>:<port>) with a linker", params: append([]obj{chain}, fields("from", "to", "linker", "properties")...),
			body: jsonOrForm(ref("Binding")), ok: j(ref("Binding"))})
		add(m+"/{chain}/bindings", "DELETE", op{summary: "Unbind", params: []obj{chain, queryParam("from", ""), queryParam("to", "")},
			body: jsonOrForm(ref("Binding"))})
	}
	// Every route answers the CORS preflight, and HEAD where it answers
	// GET (the same answer without its body).
	for _, item := range paths {
		item := item.(obj)
		item["options"] = op{summary: "CORS preflight: the allowed methods and headers", errors: []int{403}, open: true}.build()
		if get, ok := item["get"].(obj); ok {
			head := obj{"summary": get["summary"], "responses": obj{}}
			for k, v := range get {
				if k != "responses" && k != "summary" {
					head[k] = v
				}
			}
			for code, r := range get["responses"].(obj) {
				head["responses"].(obj)[code] = obj{"description": r.(obj)["description"]}
			}
			item["head"] = head
		}
	}
	doc := obj{
		"openapi": "3.1.0",
		"info": obj{
			"title":   "pervasim",
			"version": "1",
			"description": "The home simulation (under " + p + ") and the mediation engine" + map[bool]string{true: " (under " + m + ")", false: ""}[m != ""] +
				". Every success is 200, creates too; every error is {\"error\", \"code\"}.",
		},
		"paths": paths,
		"components": obj{"schemas": schemas(), "securitySchemes": obj{
			"token": obj{"type": "http", "scheme": "bearer", "description": "with -token: Authorization: Bearer <token> (the event stream also takes ?access_token)"},
		}},
		// Without -token no credential is needed; with it, the token.
		"security": []obj{{}, {"token": []string{}}},
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(err) // maps of plain values always encode
	}
	return b
}

// handleOpenAPI serves the document doc gives, made at the first request
// (a home of /homes that is never asked for it does not hold it).
func (s *server) handleOpenAPI(doc func() []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(doc())
	})
}
