package httpapi

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/pervasim/pervasim/mediation"
)

// routes lists every route of the server. pre is the prefix of every path
// ("" or such as "/homes/lab"); p is the simulation root, such as
// "/platform" (with the prefix); m the mediation root, such as "/mediation",
// or "" when the server has no mediation engine.
func (s *server) routes(r *mux.Router, pre, p, m string) {
	// The root leads to the house plan.
	r.Handle(pre+"/", methods{"GET": http.RedirectHandler(pre+"/simulator", http.StatusFound)})
	health := methods{"GET": s.handleHealth()}
	r.Handle(pre+"/healthz", health)
	r.Handle(p+"/healthz", health)

	r.Handle(p+"/zones/zones", methods{"GET": s.handleZoneList()})
	r.Handle(p+"/zones/zone", methods{"POST": s.handleZoneCreate()})
	r.Handle(p+"/zones/zone/{id}", methods{
		"GET":    s.handleZoneGet(),
		"PUT":    s.handleZoneUpdate(),
		"POST":   s.handleZoneUpdate(),
		"DELETE": s.handleZoneDelete(),
	})

	r.Handle(p+"/devices/devices", methods{"GET": s.handleDeviceList()})
	r.Handle(p+"/devices/deviceTypes", methods{"GET": s.handleDeviceTypes()})
	r.Handle(p+"/devices/kinds", methods{"GET": s.handleKinds()})
	r.Handle(p+"/devices/device", methods{"POST": s.handleDeviceCreate()})
	r.Handle(p+"/devices/device/{id}", methods{
		"GET":    s.handleDeviceGet(),
		"PUT":    s.handleDeviceUpdate(),
		"POST":   s.handleDeviceUpdate(),
		"DELETE": s.handleDeviceDelete(),
	})

	r.Handle(p+"/clocks/clocks", methods{"GET": s.handleClockList()})
	r.Handle(p+"/clocks/clock/{id}", methods{
		"GET":  s.handleClockGet(),
		"PUT":  s.handleClockUpdate(),
		"POST": s.handleClockUpdate(),
	})

	r.Handle(p+"/persons/personTypes", methods{"GET": s.handlePersonTypes()})
	r.Handle(p+"/persons/persons", methods{"GET": s.handlePersonList()})
	r.Handle(p+"/persons/person", methods{"POST": s.handlePersonCreate()})
	r.Handle(p+"/persons/person/{id}", methods{
		"GET":    s.handlePersonGet(),
		"PUT":    s.handlePersonUpdate(),
		"POST":   s.handlePersonUpdate(),
		"DELETE": s.handlePersonDelete(),
	})

	r.Handle(p+"/environment", methods{
		"GET":  s.handleEnvironmentGet(),
		"PUT":  s.handleEnvironmentUpdate(),
		"POST": s.handleEnvironmentUpdate(),
	})
	r.Handle(p+"/simulation", methods{"DELETE": s.handleSimulationReset()})
	r.Handle(p+"/scriptPlayer/scripts", methods{"GET": s.handleScriptList()})
	r.Handle(p+"/scriptPlayer/script", methods{"POST": s.handleScriptCreate()})
	r.Handle(p+"/scriptPlayer/script/{id}", methods{
		"GET":  s.handleScriptGet(),
		"PUT":  s.handleScriptState(),
		"POST": s.handleScriptState(),
	})
	r.Handle(p+"/scriptPlayer/script/{id}/source", methods{"GET": s.handleScriptSource()})

	events := methods{"GET": s.handleEvents()}
	r.Handle(p+"/events", events)
	r.Handle(pre+"/events", events)
	r.Handle(pre+"/openapi.json", methods{"GET": s.handleOpenAPI(openAPI(pre, p, m, s.homes != nil))})
	r.Handle(pre+"/simulator", methods{"GET": s.handleSimulator(pre, p)})
	r.PathPrefix(pre + "/simulator/").Handler(methods{"GET": s.handleSimulator(pre, p)})

	if m == "" {
		return
	}
	r.Handle(m, methods{"GET": s.handleChainList(), "POST": s.handleImport()})
	r.Handle(m+"/", methods{"GET": s.handleChainList(), "POST": s.handleImport()})
	// The chain id "runtime" is reserved, so these never shadow a chain.
	r.Handle(m+"/runtime/types", methods{"GET": s.handleTypes()})
	r.Handle(m+"/runtime/{chain}", methods{"GET": s.handleChainState()})
	r.Handle(m+"/runtime/{chain}/start", methods{"PUT": s.handleChainStart(), "POST": s.handleChainStart()})
	r.Handle(m+"/runtime/{chain}/stop", methods{"PUT": s.handleChainStop(), "POST": s.handleChainStop()})
	r.Handle(m+"/runtime/{chain}/components/{id}", methods{"GET": s.handleRuntimeComponent()})
	r.Handle(m+"/runtime/{chain}/components/{id}/data", methods{"GET": s.handleDataOut(), "POST": s.handleDataIn()})

	r.Handle(m+"/{chain}", methods{
		"GET":    s.handleChainGet(),
		"POST":   s.handleChainCreate(),
		"DELETE": s.handleChainDelete(),
	})
	r.Handle(m+"/{chain}/components", methods{"GET": s.handleComponentIDs(), "PUT": s.handleComponentCommand()})
	r.Handle(m+"/{chain}/components/{id}", methods{
		"GET":    s.handleComponentGet(""),
		"PUT":    s.handleComponentUpdate(),
		"DELETE": s.handleComponentDelete(""),
	})
	r.Handle(m+"/{chain}/mediators/{id}", methods{
		"GET":    s.handleComponentGet(mediation.KindMediator),
		"POST":   s.handleComponentCreate(mediation.KindMediator),
		"DELETE": s.handleComponentDelete(mediation.KindMediator),
	})
	r.Handle(m+"/{chain}/adapters/{id}", methods{
		"GET":    s.handleComponentGet(mediation.KindAdapter),
		"POST":   s.handleComponentCreate(mediation.KindAdapter),
		"DELETE": s.handleComponentDelete(mediation.KindAdapter),
	})
	r.Handle(m+"/{chain}/mediator/{type}/{id}", methods{"POST": s.handleComponentCreate(mediation.KindMediator)})
	r.Handle(m+"/{chain}/adapter/{type}/{id}", methods{"POST": s.handleComponentCreate(mediation.KindAdapter)})
	r.Handle(m+"/{chain}/bindings", methods{
		"GET":    s.handleBindingList(),
		"POST":   s.handleBind(),
		"DELETE": s.handleUnbind(),
	})
}

// pathID returns the {id} variable of the route.
func pathID(r *http.Request) string { return mux.Vars(r)["id"] }
