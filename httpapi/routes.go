package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/gorilla/mux"

	"github.com/pervasim/pervasim/mediation"
)

// routes lists every route of the server. pre is the prefix of every path
// ("" or such as "/homes/lab"); p is the simulation root, such as
// "/platform" (with the prefix); m the mediation root, such as "/mediation",
// or "" when the server has no mediation engine.
func (s *server) routes(r router, pre, p, m string) {
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
	r.Handle(pre+"/openapi.json", methods{"GET": s.handleOpenAPI(sync.OnceValue(func() []byte { return openAPI(pre, p, m, s.homes != nil) }))})
	plan := methods{"GET": s.handleSimulator(pre, p)}
	r.Handle(pre+"/simulator", plan)
	r.HandlePrefix(pre+"/simulator/", plan)

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
	r.Handle(m+"/{chain}/components", methods{"GET": s.handleComponentIDs(""), "PUT": s.handleComponentCommand()})
	r.Handle(m+"/{chain}/mediators", methods{"GET": s.handleComponentIDs(mediation.KindMediator)})
	r.Handle(m+"/{chain}/adapters", methods{"GET": s.handleComponentIDs(mediation.KindAdapter)})
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

// router is what routes and homeRoutes register on: routeGroups, or (to
// check that groups change no answer) anything with gorilla/mux's order.
// Handle registers a path template, HandlePrefix a prefix of paths.
type router interface {
	Handle(path string, h http.Handler)
	HandlePrefix(prefix string, h http.Handler)
}

// routeGroups is the server's router. gorilla/mux tries routes one after
// the other, each with a regular expression; a GET of one device tried a
// dozen. So the routes whose first two path segments are fixed (such as
// /platform/devices/device/{id}) are registered on a router per such
// prefix, found by a map lookup on the request's first two segments, and
// the others on the root router. A request its group does not match goes
// on to the root, as it would have in one router: groups only skip routes
// that cannot match.
//
// Within a group, a route whose template is a fixed path and one variable
// segment at the end (".../device/{id}") is a tail: a request under its
// fixed part with one more segment goes straight to its handler, the
// request's Pattern set to the route's template (its variable is read with
// routeVar), without a regular expression. Only the tails that mux would
// try first are taken so: those after nothing but fixed routes and other
// tails of the group; a request for one of the group's fixed routes goes
// to mux. It is safe for concurrent use once built.
type routeGroups struct {
	root   *mux.Router
	groups map[string]*routeGroup
}

// routeGroup is the routes of one two-segment prefix.
type routeGroup struct {
	r        *mux.Router
	fixed    map[string]bool // the paths of the group's routes without variables
	tails    []tailRoute     // the tails mux would try before any other variable route
	variable bool            // a route with variables other than a tail was registered
}

// tailRoute is a route "<prefix>{<name>}": prefix ends with '/'; pattern
// is the template.
type tailRoute struct {
	prefix, pattern string
	h               http.Handler
}

// newRouteGroups returns an empty router answering what no route matches
// with notFound.
func newRouteGroups(notFound http.Handler) *routeGroups {
	// No path cleaning: mux would answer "//" or "/./" with a redirect,
	// even to a POST; such paths get a JSON 404 instead.
	root := mux.NewRouter().SkipClean(true)
	root.NotFoundHandler, root.MethodNotAllowedHandler = notFound, notFound
	return &routeGroups{root: root, groups: map[string]*routeGroup{}}
}

// Handle registers h for the path template path.
func (g *routeGroups) Handle(path string, h http.Handler) {
	prefix, ok := groupOf(path)
	if !ok {
		g.root.Handle(path, h)
		return
	}
	sub := g.groups[prefix]
	if sub == nil {
		r := mux.NewRouter().SkipClean(true)
		r.NotFoundHandler, r.MethodNotAllowedHandler = g.root, g.root
		sub = &routeGroup{r: r, fixed: map[string]bool{}}
		g.groups[prefix] = sub
	}
	sub.r.Handle(path, h)
	switch tail, name, ok := tailOf(path); {
	case !strings.Contains(path, "{"):
		sub.fixed[path] = true
	case ok && !sub.variable:
		sub.tails = append(sub.tails, tailRoute{prefix: tail, pattern: tail + "{" + name + "}", h: h})
	default:
		sub.variable = true
	}
}

// tailOf splits a template "<prefix>{<name>}" whose prefix has no
// variable and ends with '/', and whose variable has no pattern.
func tailOf(path string) (prefix, name string, ok bool) {
	i := strings.LastIndexByte(path, '/') + 1
	if i == 0 || !strings.HasSuffix(path, "}") || strings.ContainsAny(path[:i], "{}") {
		return "", "", false
	}
	name, found := strings.CutPrefix(path[i:len(path)-1], "{")
	if !found || name == "" || strings.ContainsAny(name, "{}:") {
		return "", "", false
	}
	return path[:i], name, true
}

// routeVar returns the variable name of the route r was matched by. A
// tail route sets the request's Pattern to its template (as http.ServeMux
// does); its one variable is the path's last segment. Other routes clear
// Pattern and keep their variables with mux.
func routeVar(r *http.Request, name string) string {
	p := r.Pattern
	if p == "" {
		return mux.Vars(r)[name]
	}
	n := len(p) - 1 - len(name) // where name starts in "...{name}"
	if n < 1 || p[n-1] != '{' || p[len(p)-1] != '}' || p[n:len(p)-1] != name {
		return ""
	}
	path := r.URL.Path
	return path[strings.LastIndexByte(path, '/')+1:]
}

// HandlePrefix registers a prefix route on the root.
func (g *routeGroups) HandlePrefix(prefix string, h http.Handler) {
	g.root.PathPrefix(prefix).Handler(h)
}

// escapedSlash answers a request whose path escapes a slash, and reports
// whether it did. Routes match the decoded path, where an escaped slash
// would split an id into two segments, or make another route's path of
// it: no id holds a slash, so a path that escapes one is 400. (RawPath is
// set only when the path's escaping is not the default, as %2F's is.)
func escapedSlash(w http.ResponseWriter, r *http.Request) bool {
	if raw := r.URL.RawPath; raw != "" && strings.Contains(strings.ToLower(raw), "%2f") {
		writeError(w, r, invalidf("%s: no id or name contains \"/\" (sent as %%2F)", truncateID(r.URL.Path)))
		return true
	}
	return false
}

func (g *routeGroups) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if escapedSlash(w, r) {
		return
	}
	path := r.URL.Path
	r.Pattern = "" // set by a ServeMux in front, if any: routeVar reads ours
	sub := g.groups[firstTwo(path)]
	if sub == nil {
		g.root.ServeHTTP(w, r)
		return
	}
	if !sub.fixed[path] {
		for _, t := range sub.tails {
			if v, ok := strings.CutPrefix(path, t.prefix); ok && v != "" && strings.IndexByte(v, '/') < 0 {
				r.Pattern = t.pattern
				t.h.ServeHTTP(w, r)
				return
			}
		}
	}
	sub.r.ServeHTTP(w, r)
}

// firstTwo returns the first two segments of path, "/a/b", when it has a
// third; "" otherwise.
func firstTwo(path string) string {
	if len(path) < 2 || path[0] != '/' {
		return ""
	}
	i := strings.IndexByte(path[1:], '/') + 1
	if i <= 0 {
		return ""
	}
	j := strings.IndexByte(path[i+1:], '/')
	if j < 0 {
		return ""
	}
	return path[:i+1+j]
}

// groupOf returns the group of a path template of at least three
// segments whose first two are fixed: "/a/b".
func groupOf(path string) (string, bool) {
	prefix := firstTwo(path)
	if prefix == "" || strings.Contains(prefix, "{") || len(path) < len(prefix)+2 {
		return "", false
	}
	return prefix, true
}

// pathID returns the {id} variable of the route; the domain judges it.
func pathID(r *http.Request) string { return routeVar(r, "id") }

// sharedRoutes is the router the homes of one server share. Every home of
// /homes serves the same routes under its own prefix, and compiled for
// each home (gorilla/mux makes a regular expression of every route) they
// took 290 KB a home. They are compiled once instead, without the prefix,
// each route with a slot: a home matches a request's path without its
// prefix there, and the slot calls the home's own handler of that route
// with the request as it came. It is safe for concurrent use.
type sharedRoutes struct {
	once   sync.Once
	r      *routeGroups
	routes []listedRoute // the templates, without the prefix, in slot order
}

// routesOf returns the routes l of a home, whose paths all start with
// pre: on the shared router, or, should the home's routes not be the
// shared ones (they are: every home has the same roots and an engine), on
// a router of its own.
func (sr *sharedRoutes) routesOf(l *routeList, pre string, notFound http.Handler) http.Handler {
	sr.once.Do(func() {
		sr.r = newRouteGroups(slot(-1))
		for i, rt := range l.routes {
			rt.path = strings.TrimPrefix(rt.path, pre)
			sr.routes = append(sr.routes, rt)
			rt.register(sr.r, slot(i))
		}
	})
	if !sr.fits(l, pre) {
		r := newRouteGroups(notFound)
		for _, rt := range l.routes {
			rt.register(r, rt.h)
		}
		return r
	}
	return &prefixedRoutes{pre: pre, l: l, notFound: notFound, shared: sr.r}
}

// fits reports whether l is the shared routes under the prefix pre.
func (sr *sharedRoutes) fits(l *routeList, pre string) bool {
	if len(l.routes) != len(sr.routes) {
		return false
	}
	for i, rt := range l.routes {
		if shared := sr.routes[i]; rt.prefix != shared.prefix || rt.path != pre+shared.path {
			return false
		}
	}
	return true
}

// routeList is a router that lists the routes registered, in order.
type routeList struct{ routes []listedRoute }

// listedRoute is one route of a routeList: a path template, or a prefix.
type listedRoute struct {
	path   string
	prefix bool
	h      http.Handler
}

func (l *routeList) Handle(path string, h http.Handler) {
	l.routes = append(l.routes, listedRoute{path: path, h: h})
}

func (l *routeList) HandlePrefix(prefix string, h http.Handler) {
	l.routes = append(l.routes, listedRoute{path: prefix, prefix: true, h: h})
}

// register registers the route on r, with the handler h.
func (rt listedRoute) register(r router, h http.Handler) {
	if rt.prefix {
		r.HandlePrefix(rt.path, h)
	} else {
		r.Handle(rt.path, h)
	}
}

// prefixedRoutes serves the routes of one home, l, through the shared
// router: its paths are those of the shared routes under the prefix pre.
type prefixedRoutes struct {
	pre      string
	l        *routeList
	notFound http.Handler
	shared   *routeGroups
}

// slotCall is what a slot of the shared router needs of the request it
// serves: the home's routes, and the request's URL as it came; stripped is
// the URL without the prefix, which the shared router matches.
type slotCall struct {
	routes   *prefixedRoutes
	url      *url.URL
	stripped url.URL
}

type slotKey struct{}

func (p *prefixedRoutes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if escapedSlash(w, r) {
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, p.pre)
	if !ok || !strings.HasPrefix(rest, "/") {
		p.notFound.ServeHTTP(w, r)
		return
	}
	c := &slotCall{routes: p, url: r.URL, stripped: *r.URL}
	c.stripped.Path, c.stripped.RawPath = rest, ""
	matched := r.WithContext(context.WithValue(r.Context(), slotKey{}, c))
	matched.URL = &c.stripped
	p.shared.ServeHTTP(w, matched)
}

// slot is the handler of the shared router's route i (-1: no route): it
// calls the handler of that route of the home whose request it is, with
// the request's URL as it came, and the route's variables.
func slot(i int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Context().Value(slotKey{}).(*slotCall)
		if c == nil { // not through prefixedRoutes: cannot happen
			writeError(w, r, notFoundRoute(r))
			return
		}
		r = r.WithContext(r.Context())
		r.URL = c.url
		if i < 0 {
			c.routes.notFound.ServeHTTP(w, r)
			return
		}
		c.routes.l.routes[i].h.ServeHTTP(w, r)
	})
}
