package httpapi

import (
	"net/http"

	"github.com/gorilla/mux"
)

// routes lists every route of the server. p is the simulation root, such as
// "/platform".
func (s *server) routes(r *mux.Router, p string) {
	health := methods{"GET": s.handleHealth()}
	r.Handle("/healthz", health)
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

	r.Handle(p+"/simulation", methods{"DELETE": s.handleSimulationReset()})
}

// pathID returns the {id} variable of the route.
func pathID(r *http.Request) string { return mux.Vars(r)["id"] }
