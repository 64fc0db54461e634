package httpapi

import (
	"cmp"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pervasim/pervasim/internal/errkind"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

// DefaultMaxBodyBytes is the default limit of a request body: 1 MiB.
const DefaultMaxBodyBytes = 1 << 20

// Config configures the handler returned by [NewHandler]. Config is a plain
// value, safe for concurrent use as long as nobody modifies it.
type Config struct {
	// Home is the simulation served under PlatformRoot. Required:
	// NewHandler panics without it.
	Home *sim.Home
	// Engine is the mediation engine served under MediationRoot. Nil means
	// no mediation routes. The placeholder types that DSCilia documents
	// loaded with ?placeholders=true register are unregistered once no
	// chain of Engine uses them (see dscilia.PrunePlaceholders): give the
	// engine a registry of its own.
	Engine *mediation.Engine
	// PlatformRoot is the first path segment of the simulation service.
	// Empty means "platform". See CheckRoots.
	PlatformRoot string
	// MediationRoot is the first path segment of the mediation service.
	// Empty means "mediation". See CheckRoots.
	MediationRoot string
	// AllowOrigins lists the origins (scheme://host[:port]) whose pages may
	// use the server from a browser, beside the loopback origins and the
	// server's own, which always may; "*" allows every origin. A request
	// that may change state from another origin is 403 forbidden. An entry
	// that is no origin is ignored (see CheckAllow).
	AllowOrigins []string
	// AllowHosts lists the host names the server answers to, beside IP
	// literals and localhost, which it always does. A request for another
	// Host is 403 forbidden, so that a foreign name pointed at the server
	// (DNS rebinding) gets nothing. An entry with a scheme or a port is
	// ignored, as no Host could match it (see CheckAllow).
	AllowHosts []string
	// Token, when set, must come with every request as Authorization:
	// Bearer <token>, except GET /healthz, the house plan's own files and
	// CORS preflights; the event stream also takes it as the access_token
	// query parameter, since browsers cannot give EventSource headers.
	Token string
	// MaxBodyBytes limits request bodies; larger ones get 413. Zero means
	// [DefaultMaxBodyBytes].
	MaxBodyBytes int64
	// KeepAlive is how often an idle event stream gets a comment line.
	// Zero means [DefaultKeepAlive].
	KeepAlive time.Duration
	// MaxEventClients bounds the event streams open at once; one more is
	// 503 busy. Zero means [DefaultMaxEventClients].
	MaxEventClients int
	// EventWriteTimeout is how long a write to an event stream may wait
	// for a client that does not read before the client is dropped. Zero
	// means [DefaultEventWriteTimeout].
	EventWriteTimeout time.Duration
	// Scripts is where the script player's .bhv scripts are kept
	// (store.ScriptDir keeps them in a directory): files new or changed
	// since the last listing are read when the scripts are listed
	// (unchanged ones are not read again), scripts whose file is gone are
	// removed, and uploads and saves are written there. Nil means scripts
	// live in memory only.
	Scripts ScriptFiles
	// Logger receives one line per request (method, path, status, bytes,
	// duration) and the handler's own warnings and errors. Nil means no
	// request lines, and warnings to slog.Default().
	Logger *slog.Logger
	// ScriptsQuota bounds the bytes of scripts the player holds, their
	// text and their parsed actions (see sim.ScriptCost); an upload past
	// it is 503 busy. Zero means [DefaultScriptsQuota].
	ScriptsQuota int
	// Prefix, such as "/homes/lab", is put before every path the handler
	// serves: both roots, /simulator, /events, /healthz and /openapi.json.
	// Empty means none. [Homes] gives each home it creates its own.
	Prefix string
	// Middleware, when set, wraps the routes inside the guard and the
	// request log: it sees only requests the guard let through. The
	// durable state puts its journal there.
	Middleware func(http.Handler) http.Handler
	// Homes, when set, is served beside Home: GET /homes lists the homes
	// (Home first, as "default"), POST /homes/{home} creates one, DELETE
	// /homes/{home} removes it, and /homes/{home}/… is that home's
	// simulation and mediation, at the same paths as Home's. Each home
	// created gets this Config with its own Home, Engine and Prefix, no
	// Scripts (its scripts live in memory) and no Logger (this handler
	// logs its requests). The caller closes Homes after the server.
	// MaxEventClients and ScriptsQuota bound the server as a whole, its
	// homes included.
	Homes *Homes

	// shared holds the bounds a server and its homes share; NewHandler
	// makes it, and gives it to the homes it creates.
	shared *sharedBounds
}

// sharedBounds are the bounds of a whole server, whose homes under /homes
// count towards them too, and the router its homes share.
type sharedBounds struct {
	streams atomic.Int64 // event streams open
	// scriptsMu is held while a script is checked against the quota and
	// added, in any home, so that uploads cannot pass the quota together.
	scriptsMu  sync.Mutex
	homes      *Homes    // the server's homes (nil: none)
	home       *sim.Home // the server's own
	homeRoutes sharedRoutes
}

// scriptBytes returns the bytes of scripts that every home holds.
func (b *sharedBounds) scriptBytes() int {
	n := b.home.ScriptBytes()
	if b.homes != nil {
		n += b.homes.scriptBytes()
	}
	return n
}

// server holds the dependencies of the handlers.
type server struct {
	cfg    Config // as given, with the defaults filled in
	homes  *Homes // nil: one home
	home   *sim.Home
	engine *mediation.Engine

	devices     sync.Map     // id → *encodedDevice: see writeDevice
	devicesKept atomic.Int64 // entries in devices
	maxBody     int64
	keepAlive   time.Duration
	events      *eventHub
	scripts     ScriptFiles

	log          *slog.Logger
	scriptsMu    sync.Mutex       // serialises syncScripts and uploads to the directory
	types        sync.RWMutex     // held to load DSCilia and prune placeholder types (see prunePlaceholders); shared to create a component
	stamps       map[string]stamp // the script files last read; guarded by scriptsMu
	scriptsQuota int

	shared       *sharedBounds // event streams open, scripts held: by the whole server
	maxStreams   int
	writeTimeout time.Duration
}

// Handler serves both services. It is safe for concurrent use. Call Close
// when the server shuts down, to end the event streams, which otherwise
// stay open as long as their clients do.
type Handler struct {
	http.Handler
	srv    *server
	routes http.Handler
}

// API returns the routes alone: without the guard, the request log and the
// Middleware. The durable state replays its journal through it.
func (h *Handler) API() http.Handler { return h.routes }

// Close ends every event stream, stops the goroutine that feeds them and
// waits for it. Later event-stream requests get 404. Close is safe to call
// more than once.
func (h *Handler) Close() { h.srv.events.close() }

// EventStreams returns the number of event streams open now.
func (h *Handler) EventStreams() int { return int(h.srv.shared.streams.Load()) }

// reservedRoots are the first path segments of the server's own routes:
// a service root among them would shadow them, or they it.
var reservedRoots = []string{"homes", "simulator", "healthz", "events", "openapi.json"}

// CheckRoots reports whether platform and mediation can be a Config's
// PlatformRoot and MediationRoot: "" (the default) or one path segment
// (slashes around it are dropped) of letters, digits and "-._~", not "."
// or "..", not the first segment of one of the server's own routes (homes,
// simulator, healthz, events, openapi.json), and not the same for both.
func CheckRoots(platform, mediation string) error {
	platform = cmp.Or(strings.Trim(platform, "/"), "platform")
	mediation = cmp.Or(strings.Trim(mediation, "/"), "mediation")
	for _, r := range []struct{ name, root string }{{"platform", platform}, {"mediation", mediation}} {
		bad := r.root == "." || r.root == ".." || strings.ContainsFunc(r.root, func(c rune) bool {
			return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("-._~", c))
		})
		if bad {
			return errkind.Errorf(errkind.Invalid, "%s root %q: want one path segment of letters, digits and -._~", r.name, r.root)
		}
		if slices.Contains(reservedRoots, r.root) {
			return errkind.Errorf(errkind.Invalid, "%s root %q: the server's own routes start with %s", r.name, r.root, strings.Join(reservedRoots, ", "))
		}
	}
	if platform == mediation {
		return errkind.Errorf(errkind.Invalid, "the platform and mediation roots are both %q: they must differ", platform)
	}
	return nil
}

// NewHandler returns the HTTP handler of both services, as the REST contract
// describes them. It panics if cfg.Home is nil, or if its roots are not
// valid (see CheckRoots).
func NewHandler(cfg Config) *Handler {
	if cfg.Home == nil {
		panic("httpapi: NewHandler with a nil Config.Home")
	}
	if err := CheckRoots(cfg.PlatformRoot, cfg.MediationRoot); err != nil {
		panic("httpapi: NewHandler: " + err.Error())
	}
	if cfg.PlatformRoot == "" {
		cfg.PlatformRoot = "platform"
	}
	if cfg.MediationRoot == "" {
		cfg.MediationRoot = "mediation"
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = DefaultKeepAlive
	}
	home := cfg.shared != nil // a home of /homes: its server gave it what they share
	if !home {
		cfg.shared = &sharedBounds{homes: cfg.Homes, home: cfg.Home}
	}
	s := &server{cfg: cfg, homes: cfg.Homes, shared: cfg.shared, home: cfg.Home, engine: cfg.Engine, maxBody: cfg.MaxBodyBytes,
		keepAlive: cfg.KeepAlive, events: &eventHub{home: cfg.Home}, scripts: cfg.Scripts,
		maxStreams: cmp.Or(cfg.MaxEventClients, DefaultMaxEventClients), writeTimeout: cmp.Or(cfg.EventWriteTimeout, DefaultEventWriteTimeout),
		stamps: map[string]stamp{}, scriptsQuota: cmp.Or(cfg.ScriptsQuota, DefaultScriptsQuota), log: cmp.Or(cfg.Logger, slog.Default())}
	s.syncScripts()
	notFound := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, notFoundRoute(r))
	})
	pre := cleanPrefix(cfg.Prefix)
	m := ""
	if cfg.Engine != nil {
		m = pre + "/" + strings.Trim(cfg.MediationRoot, "/")
	}
	p := pre + "/" + strings.Trim(cfg.PlatformRoot, "/")
	var r http.Handler
	if home && pre != "" {
		l := &routeList{}
		s.routes(l, pre, p, m)
		r = cfg.shared.homeRoutes.routesOf(l, pre, notFound)
	} else {
		g := newRouteGroups(notFound)
		s.routes(g, pre, p, m)
		if s.homes != nil {
			s.homeRoutes(g)
		}
		r = g
	}
	var inner http.Handler = r
	if cfg.Middleware != nil {
		inner = cfg.Middleware(r)
	}
	var h http.Handler = recoverPanics(newGuard(cfg, pre, p, inner))
	if cfg.Logger != nil {
		h = logRequests(cfg.Logger, h)
	}
	return &Handler{Handler: h, srv: s, routes: recoverPanics(r)}
}

// cleanPrefix returns prefix with one leading slash and no trailing one,
// or "" for none.
func cleanPrefix(prefix string) string {
	if prefix = strings.Trim(prefix, "/"); prefix == "" {
		return ""
	}
	return "/" + prefix
}

func notFoundRoute(r *http.Request) error {
	return &routeError{path: r.URL.Path}
}

type routeError struct{ path string }

func (e *routeError) Error() string     { return "there is no resource at " + e.path }
func (e *routeError) Is(err error) bool { return err == errNotFound }

// methods routes a path's requests by method. OPTIONS answers the CORS
// preflight; HEAD is served by GET; other methods get 405 with Allow.
type methods map[string]http.Handler

func (m methods) allow() string {
	order := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions}
	var out []string
	for _, k := range order {
		_, ok := m[k]
		if ok || k == http.MethodOptions || k == http.MethodHead && m[http.MethodGet] != nil {
			out = append(out, k)
		}
	}
	return strings.Join(out, ", ")
}

func (m methods) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, ok := m[r.Method]
	if !ok && r.Method == http.MethodHead {
		h, ok = m[http.MethodGet]
	}
	switch {
	case ok:
		h.ServeHTTP(w, r)
	case r.Method == http.MethodOptions:
		w.Header().Set("Allow", m.allow())
		w.Header().Set("Access-Control-Allow-Methods", m.allow())
		if asked := r.Header.Get("Access-Control-Request-Headers"); asked != "" {
			w.Header().Set("Access-Control-Allow-Headers", asked) // a preflight gets what it asks for
		}
		w.WriteHeader(http.StatusOK)
	default:
		w.Header().Set("Allow", m.allow())
		writeError(w, r, &methodError{method: r.Method, allow: m.allow()})
	}
}

type methodError struct{ method, allow string }

func (e *methodError) Error() string {
	return "method " + e.method + " is not allowed here; allowed: " + e.allow
}
func (e *methodError) Is(err error) bool { return err == errMethod }

// recoverPanics turns a panic in a handler, which is a bug, into a 500.
func recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				loggerOf(r).Error("panic in handler", "method", r.Method, "path", r.URL.Path, "panic", v)
				encode(w, http.StatusInternalServerError, errorBody{Error: "internal error", Code: "internal"})
			}
		}()
		next.ServeHTTP(w, r)
	})
}
