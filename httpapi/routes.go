package httpapi

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/pervasim/pervasim/mediation"
)

// routes lists every route of the server. pre is the prefix of every path
// ("" or such as "/homes/lab"); p is the simulation root, such as
// "/platform" (with the prefix); m the mediation root, such as "/mediation",
// or "" when the server has no mediation engine.
func (s *server) routes(root *mux.Router, pre, p, m string) {
	r := &routeGroups{root: root, groups: map[string]*mux.Router{}}
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

// routeGroups registers the routes whose first two path segments are
// fixed (such as /platform/devices/device/{id}) on a subrouter per such
// prefix, and the others on the root. gorilla/mux tries routes one after
// the other, each with a regular expression, so a request is then tried
// against the routes of its own collection rather than against all of
// them: a GET of one device tried a dozen expressions, it now tries five.
// A prefix matches only whole routes, never a route of another group.
type routeGroups struct {
	root   *mux.Router
	groups map[string]*mux.Router
}

// Handle registers h for the path template path.
func (g *routeGroups) Handle(path string, h http.Handler) {
	prefix, rest, ok := groupOf(path)
	if !ok {
		g.root.Handle(path, h)
		return
	}
	sub := g.groups[prefix]
	if sub == nil {
		sub = g.root.PathPrefix(prefix).Subrouter()
		g.groups[prefix] = sub
	}
	sub.Handle(rest, h)
}

// PathPrefix registers a prefix route on the root.
func (g *routeGroups) PathPrefix(prefix string) *mux.Route { return g.root.PathPrefix(prefix) }

// groupOf splits a path template of at least three segments whose first
// two are fixed into "/a/b" and the rest, "/c...".
func groupOf(path string) (prefix, rest string, ok bool) {
	i := strings.IndexByte(path[min(1, len(path)):], '/') + 1 // end of the first segment
	if i <= 0 {
		return "", "", false
	}
	j := strings.IndexByte(path[i+1:], '/')
	if j < 0 {
		return "", "", false
	}
	j += i + 1 // end of the second segment
	prefix, rest = path[:j], path[j:]
	if strings.Contains(prefix, "{") || len(rest) < 2 {
		return "", "", false
	}
	return prefix, rest, true
}

// pathID returns the {id} variable of the route.
func pathID(r *http.Request) string { return mux.Vars(r)["id"] }
