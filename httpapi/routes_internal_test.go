package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/mux"
)

func TestGroupOf(t *testing.T) {
	type split struct {
		Prefix string
		OK     bool
	}
	for _, tc := range []struct {
		path string
		want split
	}{
		{"/platform/devices/device/{id}", split{"/platform/devices", true}},
		{"/platform/zones/zones", split{"/platform/zones", true}},
		{"/mediation/runtime/{chain}/start", split{"/mediation/runtime", true}},
		{"/homes/lab/platform/events", split{"/homes/lab", true}},
		{"/mediation/{chain}/components", split{}},
		{"/platform/environment", split{}},
		{"/platform/devices/", split{}},
		{"/healthz", split{}},
		{"/", split{}},
		{"", split{}},
	} {
		p, ok := groupOf(tc.path)
		if diff := cmp.Diff(tc.want, split{p, ok}); diff != "" {
			t.Errorf("groupOf(%q) (-want +got):\n%s", tc.path, diff)
		}
	}
}

// answerPath returns what h writes for a GET of path (set as is, not
// cleaned or escaped).
func answerPath(h http.Handler, path string) string {
	req := httptest.NewRequest("GET", "http://localhost/", nil)
	req.URL.Path = path
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Body.String()
}

// TestRouteGroups checks that grouping routes changes no answer: a route
// of a group is found through the group, and a request of a group's
// prefix that none of the group's routes matches goes on to the root's.
func TestRouteGroups(t *testing.T) {
	reply := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, name+" "+routeVar(r, "x"))
		})
	}
	g := newRouteGroups(reply("404"))
	g.Handle("/a/b/c", reply("group"))
	g.Handle("/a/{x}/d", reply("root"))
	g.Handle("/a/b/{x}/e", reply("group-var"))
	g.Handle("/top", reply("top"))
	g.HandlePrefix("/files/", reply("files"))
	for path, want := range map[string]string{
		"/a/b/c":     "group ",
		"/a/b/d":     "root b",
		"/a/z/d":     "root z",
		"/a/b/q/e":   "group-var q",
		"/top":       "top ",
		"/files/x/y": "files ",
		"/a/b/zz":    "404 ",
		"/a/b":       "404 ",
		"":           "404 ",
		"/":          "404 ",
	} {
		if got := answerPath(g, path); got != want {
			t.Errorf("%q: got %q, want %q", path, got, want)
		}
	}
}

// TestRouteGroupsAnswerAsOneRouter registers the same routes, in the same
// order, on route groups and on one gorilla/mux router, and checks that
// every path gets the same handler and variable from both: tails taken
// without mux, fixed routes, variable routes registered before or after a
// tail, and paths no route matches.
func TestRouteGroupsAnswerAsOneRouter(t *testing.T) {
	routes := []string{
		"/t/u/fixed",
		"/t/u/v/{x}",
		"/t/u/{x}",
		"/t/u/{x}/w",
		"/t/u/q/{x}",
		"/t/v/{x}/a",
		"/t/v/{x}",
		"/t/w/{x:[0-9]+}",
		"/t/{x}/z",
		"/other",
	}
	reply := func(name string, vars func(*http.Request) string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, name+" "+vars(r))
		})
	}
	g := newRouteGroups(reply("404", func(*http.Request) string { return "" }))
	one := mux.NewRouter().SkipClean(true)
	one.NotFoundHandler = reply("404", func(*http.Request) string { return "" })
	for _, p := range routes {
		g.Handle(p, reply(p, func(r *http.Request) string { return routeVar(r, "x") }))
		one.Handle(p, reply(p, func(r *http.Request) string { return mux.Vars(r)["x"] }))
	}
	if n := len(g.groups["/t/u"].tails); n != 2 {
		t.Errorf("group /t/u has %d tails, want 2 (v/{x} and {x}; q/{x} comes after {x}/w, which matches /t/u/q/w first)", n)
	}
	for _, path := range []string{
		"/t/u/fixed", "/t/u/v/q", "/t/u/q", "/t/u/v", "/t/u/q/w", "/t/u/q/z", "/t/u/w", "/t/u/v/",
		"/t/u/", "/t/u", "/t/u/a/b/c", "/t/v/q", "/t/v/q/a", "/t/v/q/b", "/t/w/12", "/t/w/ab",
		"/t/q/z", "/t/u/z", "/other", "/", "",
	} {
		want := answerPath(one, path)
		if got := answerPath(g, path); got != want {
			t.Errorf("%q: route groups answer %q, one router %q", path, got, want)
		}
		if strings.HasPrefix(path, "/t/") {
			// Behind a ServeMux, which sets the request's Pattern.
			front := http.NewServeMux()
			front.Handle("/t/{rest...}", g)
			if got := answerPath(front, path); got != want {
				t.Errorf("%q behind a ServeMux: route groups answer %q, one router %q", path, got, want)
			}
		}
	}
}

// recordedRoute is one registration of the server's routes.
type recordedRoute struct {
	template string
	prefix   bool
}

// routeRecorder is a router that records the server's registrations, in
// order.
type routeRecorder struct {
	routes []recordedRoute
}

func (r *routeRecorder) Handle(path string, _ http.Handler) {
	r.routes = append(r.routes, recordedRoute{template: path})
}

func (r *routeRecorder) HandlePrefix(prefix string, _ http.Handler) {
	r.routes = append(r.routes, recordedRoute{template: prefix, prefix: true})
}

// serverRoutes returns the server's routes, with homes and mediation.
func serverRoutes(t testing.TB) []recordedRoute {
	s := &server{homes: &Homes{}}
	rec := &routeRecorder{}
	s.routes(rec, "", "/platform", "/mediation")
	s.homeRoutes(rec)
	return rec.routes
}

// FuzzServerRoutesAsOneRouter: for any path, the server's routes on route
// groups (with tails taken without mux) pick the same route, with the same
// variables, as the same routes in the same order on one mux router.
func FuzzServerRoutesAsOneRouter(f *testing.F) {
	routes := serverRoutes(f)
	reply := func(name string, vars func(*http.Request, string) string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, name)
			for _, v := range []string{"id", "chain", "home", "type", "kind"} {
				io.WriteString(w, " "+v+"="+vars(r, v))
			}
		})
	}
	none := func(*http.Request, string) string { return "" }
	g := newRouteGroups(reply("404", none))
	one := mux.NewRouter().SkipClean(true)
	one.NotFoundHandler, one.MethodNotAllowedHandler = reply("404", none), reply("404", none)
	for _, rt := range routes {
		ours := reply(rt.template, routeVar)
		theirs := reply(rt.template, func(r *http.Request, v string) string { return mux.Vars(r)[v] })
		if rt.prefix {
			g.HandlePrefix(rt.template, ours)
			one.PathPrefix(rt.template).Handler(theirs)
			continue
		}
		g.Handle(rt.template, ours)
		one.Handle(rt.template, theirs)
	}
	for _, p := range []string{"/platform/devices/device/d7", "/platform/devices/device/", "/platform/devices/device/a/b",
		"/platform/devices/devices", "/platform/zones/zone/kitchen", "/mediation/chains/c1", "/homes/lab/platform/devices/device/x",
		"/homes/lab", "/homes", "/platform/persons/person/p", "/platform/clocks/clock/default", "/simulator/app.js", "//", "/"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		if got, want := answerPath(g, path), answerPath(one, path); got != want {
			t.Errorf("%q: route groups answer %q, one router %q", path, got, want)
		}
	})
}

// FuzzHomeRoutesAsTheirOwn: for any path, a home's routes served through
// the router its server's homes share pick the route, the variables and
// the path that the same routes would on a router of the home's own.
func FuzzHomeRoutesAsTheirOwn(f *testing.F) {
	reply := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, name+" path="+r.URL.Path)
			for _, v := range []string{"id", "chain", "type"} {
				io.WriteString(w, " "+v+"="+routeVar(r, v))
			}
		})
	}
	listOf := func(pre string) *routeList {
		l := &routeList{}
		(&server{}).routes(l, pre, pre+"/platform", pre+"/mediation")
		for i := range l.routes {
			l.routes[i].h = reply(l.routes[i].path)
		}
		return l
	}
	sr := &sharedRoutes{}
	if _, ok := sr.routesOf(listOf("/homes/first"), "/homes/first", reply("404")).(*prefixedRoutes); !ok {
		f.Fatal("the first home's routes are not on the shared router")
	}
	lab := listOf("/homes/lab")
	shared, ok := sr.routesOf(lab, "/homes/lab", reply("404")).(*prefixedRoutes)
	if !ok {
		f.Fatal("the lab's routes are not on the shared router")
	}
	// A home whose routes are not the shared ones (none is: every home
	// has the same roots and an engine) gets a router of its own.
	odd := &routeList{}
	odd.Handle("/homes/odd/x/y/{id}", reply("odd"))
	if r, ok := sr.routesOf(odd, "/homes/odd", reply("404")).(*routeGroups); !ok {
		f.Error("a home with other routes is on the shared router")
	} else if got := answerPath(r, "/homes/odd/x/y/7"); got != "odd path=/homes/odd/x/y/7 id=7 chain= type=" {
		f.Errorf("a home with other routes answers %q", got)
	}
	own := newRouteGroups(reply("404"))
	for _, rt := range lab.routes {
		rt.register(own, rt.h)
	}
	for _, p := range []string{"/homes/lab/platform/devices/device/d7", "/homes/lab/platform/devices/device/",
		"/homes/lab/platform/devices/devices", "/homes/lab/mediation/c1/components/x", "/homes/lab/mediation/runtime/c1/components/a/data",
		"/homes/lab/mediation/c/adapter/rest-in/i", "/homes/lab/", "/homes/lab", "/homes/labx/platform/zones/zones",
		"/homes/lab/simulator/app.js", "/homes/lab/simulator", "/homes/lab//platform", "/homes/first/healthz", "/"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		if got, want := answerPath(shared, path), answerPath(own, path); got != want {
			t.Errorf("%q: the shared router answers %q, the home's own %q", path, got, want)
		}
	})
}
