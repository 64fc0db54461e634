package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
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

// TestRouteGroups checks that grouping routes changes no answer: a route
// of a group is found through the group, and a request of a group's
// prefix that none of the group's routes matches goes on to the root's.
func TestRouteGroups(t *testing.T) {
	reply := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, name+" "+mux.Vars(r)["x"])
		})
	}
	g := newRouteGroups(reply("404"))
	g.Handle("/a/b/c", reply("group"))
	g.Handle("/a/{x}/d", reply("root"))
	g.Handle("/a/b/{x}/e", reply("group-var"))
	g.Handle("/top", reply("top"))
	g.PathPrefix("/files/").Handler(reply("files"))
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
		req := httptest.NewRequest("GET", "http://localhost/", nil)
		req.URL.Path = path
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		if got := rec.Body.String(); got != want {
			t.Errorf("%q: got %q, want %q", path, got, want)
		}
	}
}
