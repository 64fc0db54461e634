package httpapi

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pervasim/pervasim/internal/errkind"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

// DefaultHome is the name of the home a server serves at the contract's
// paths, outside /homes/.
const DefaultHome = "default"

// DefaultMaxHomes is the default bound of the homes a [Homes] creates.
const DefaultMaxHomes = 1000

// HomeSpec is what a request to create a home may choose. HomeSpec is a
// plain value, safe for concurrent use as long as nobody modifies it.
type HomeSpec struct {
	// Physics is the physics model: "contract" (the default) or
	// "realistic".
	Physics string `json:"physics,omitempty"`
}

// HomeParts is what a [HomeFactory] builds for one home. HomeParts is a
// plain value, safe for concurrent use as long as nobody modifies it.
type HomeParts struct {
	// Home is the home's simulation. Required.
	Home *sim.Home
	// Engine is the home's mediation engine. Required.
	Engine *mediation.Engine
	// Stop stops everything the factory started for the home (its
	// simulation driver, its bridge, its engine, …); it is called once,
	// when the home is deleted or the server closes. Nil means nothing to
	// stop.
	Stop func()
}

// HomeFactory builds the parts of a new home named name, as spec asks. An
// error of kind Invalid (an unknown physics model, say) is 400 over REST.
// It must be safe for concurrent use.
type HomeFactory func(name string, spec HomeSpec) (HomeParts, error)

// Homes holds the homes a server creates beside its default home, each
// with its own clock, physics, scripts, chains and everything its
// [HomeFactory] gives it, served under /homes/{home}/ with the same paths as
// the default home. Give it to [Config].Homes; create it with [NewHomes].
// Homes is safe for concurrent use.
type Homes struct {
	factory HomeFactory
	max     int

	mu       sync.RWMutex
	homes    map[string]*homeEntry
	closed   bool
	building sync.WaitGroup // creations and deletions under way, which Close waits for
	done     chan struct{}  // closed once Close has stopped every home
}

// homeEntry is one home of a Homes. Its parts and handler are set once,
// under Homes.mu: read them after seeing handler non-nil under that lock.
type homeEntry struct {
	name    string
	parts   HomeParts
	handler *Handler
	// stopping is set, under Homes.mu, once a DELETE took the home: it
	// serves nothing more, but keeps its name (and its place among
	// -max-homes) until what it runs has stopped, so that a home of the
	// same name cannot run beside it (on the same NATS subjects, say).
	stopping bool
	// inflight counts the requests being served (see Homes.enter): a
	// DELETE lets them finish, against a home still running, before it
	// stops the home's parts (for homeDrain at most), so that none of
	// them fails half-way as a closed engine.
	inflight sync.WaitGroup
}

// serving reports whether e is built and not being deleted; Homes.mu is
// held.
func (e *homeEntry) serving() bool { return e != nil && e.handler != nil && !e.stopping }

// NewHomes returns an empty set of homes built by factory, holding at most
// max homes (zero or less means [DefaultMaxHomes]). It panics if factory is
// nil: every home is built by it.
func NewHomes(factory HomeFactory, max int) *Homes {
	if factory == nil {
		panic("httpapi: NewHomes with a nil factory")
	}
	if max <= 0 {
		max = DefaultMaxHomes
	}
	return &Homes{factory: factory, max: max, homes: map[string]*homeEntry{}, done: make(chan struct{})}
}

// ValidHomeName reports whether name can name a home: 1 to 64 ASCII
// letters, digits, '-' and '_', so that it is one segment of a path, of a
// NATS subject and of an MQTT topic. ValidHomeName is safe for concurrent
// use.
func ValidHomeName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// HomeInfo describes a home, as GET /homes lists it. HomeInfo is a plain
// value, safe for concurrent use as long as nobody modifies it.
type HomeInfo struct {
	// ID is the home's name.
	ID string `json:"id"`
	// Platform is the path of the home's simulation service.
	Platform string `json:"platform"`
	// Mediation is the path of the home's mediation service.
	Mediation string `json:"mediation"`
	// Physics is the home's physics model.
	Physics string `json:"physics"`
}

// create adds the home name, built from the parent handler's config cfg.
func (hs *Homes) create(cfg Config, name string, spec HomeSpec) (HomeInfo, error) {
	if name == DefaultHome {
		return HomeInfo{}, errkind.Errorf(errkind.Conflict, "home %q exists: it is the server's own, at the contract's paths", name)
	}
	if !ValidHomeName(name) {
		return HomeInfo{}, invalidf("home name %q: want 1 to 64 letters, digits, - or _", name)
	}
	if spec.Physics != "" && spec.Physics != string(sim.PhysicsContract) && spec.Physics != string(sim.PhysicsRealistic) {
		return HomeInfo{}, invalidf("physics %q: want contract or realistic", spec.Physics)
	}
	// Reserve the name first, so that two requests for one name build one
	// home, and the factory runs without the lock.
	hs.mu.Lock()
	switch {
	case hs.closed:
		hs.mu.Unlock()
		return HomeInfo{}, errkind.Errorf(errkind.Busy, "the server is shutting down")
	case hs.homes[name] != nil && hs.homes[name].stopping:
		hs.mu.Unlock()
		return HomeInfo{}, errkind.Errorf(errkind.Conflict, "home %q is being deleted; try again once its DELETE answered", name)
	case hs.homes[name] != nil:
		hs.mu.Unlock()
		return HomeInfo{}, errkind.Errorf(errkind.Conflict, "home %q exists", name)
	case len(hs.homes) >= hs.max:
		hs.mu.Unlock()
		return HomeInfo{}, errkind.Errorf(errkind.Busy, "the server holds %d homes, the most it keeps (-max-homes); delete one first", hs.max)
	}
	e := &homeEntry{name: name}
	hs.homes[name] = e
	hs.building.Add(1) // before Close, which sets closed under this lock, waits
	hs.mu.Unlock()
	defer hs.building.Done()

	parts, err := hs.factory(name, spec)
	if err == nil && (parts.Home == nil || parts.Engine == nil) {
		err = errkind.Errorf(errkind.Invalid, "the home factory built no home or no engine")
	}
	if err != nil {
		hs.mu.Lock()
		delete(hs.homes, name)
		hs.mu.Unlock()
		return HomeInfo{}, err
	}
	c := cfg
	c.Home, c.Engine, c.Homes = parts.Home, parts.Engine, nil
	c.Prefix = "/homes/" + name
	c.Scripts = nil    // a home's scripts live with it, in memory
	c.Logger = nil     // the parent logs its requests
	c.Middleware = nil // nor is a home of /homes kept on disk
	h := NewHandler(c)

	hs.mu.Lock()
	e.parts, e.handler = parts, h
	closed := hs.closed
	hs.mu.Unlock()
	if closed { // Close ran meanwhile and left this one to us
		e.stop()
		return HomeInfo{}, errkind.Errorf(errkind.Busy, "the server is shutting down")
	}
	return e.info(cfg), nil
}

// info describes e.
func (e *homeEntry) info(cfg Config) HomeInfo {
	return homeInfo(e.name, "/homes/"+e.name, cfg, e.parts.Home)
}

func homeInfo(name, pre string, cfg Config, home *sim.Home) HomeInfo {
	return HomeInfo{ID: name, Platform: pre + "/" + trimRoot(cfg.PlatformRoot, "platform"),
		Mediation: pre + "/" + trimRoot(cfg.MediationRoot, "mediation"), Physics: string(home.Physics())}
}

// homeDrain is how long a DELETE of a home, and Homes.Close, let the
// requests in flight finish before they stop the home's parts anyway. A
// request ends on its own within a bound (a send waits at most the send
// timeout, a nats-out 1 minute), but for the write of its answer: the REST
// answers have no write deadline, and a client that stopped reading a big
// one would hold the DELETE forever.
const homeDrain = 10 * time.Second

// stop ends what the home runs: its event streams, then, once the
// requests in flight are answered or homeDrain passed, its parts.
// Homes.mu is not held, and stopping is set (no request enters any more).
func (e *homeEntry) stop() {
	e.handler.Close()
	answered := make(chan struct{})
	go func() { // ends with the last request, if it outlives the wait
		e.inflight.Wait()
		close(answered)
	}()
	wait := time.NewTimer(homeDrain)
	select {
	case <-answered:
	case <-wait.C:
	}
	wait.Stop()
	if e.parts.Stop != nil {
		e.parts.Stop()
	}
}

// enter returns the home name, ready to serve, counted in flight until
// the caller calls its inflight.Done; or a NotFound error.
func (hs *Homes) enter(name string) (*homeEntry, error) {
	hs.mu.RLock()
	defer hs.mu.RUnlock()
	e := hs.homes[name]
	if !e.serving() {
		return nil, errkind.Errorf(errkind.NotFound, "home %q does not exist", name)
	}
	// Under the lock that stopping is set under, so before the Wait of
	// a DELETE that sets it.
	e.inflight.Add(1)
	return e, nil
}

// remove deletes the home name and stops everything it runs.
func (hs *Homes) remove(cfg Config, name string) (HomeInfo, error) {
	if name == DefaultHome {
		return HomeInfo{}, errkind.Errorf(errkind.Conflict, "the default home cannot be deleted; DELETE /%s/simulation empties it", trimRoot(cfg.PlatformRoot, "platform"))
	}
	hs.mu.Lock()
	e := hs.homes[name]
	if !e.serving() {
		hs.mu.Unlock()
		return HomeInfo{}, errkind.Errorf(errkind.NotFound, "home %q does not exist", name)
	}
	e.stopping = true
	hs.building.Add(1) // as in create
	hs.mu.Unlock()
	defer hs.building.Done()
	e.stop()
	hs.mu.Lock()
	if hs.homes[name] == e { // Close may have taken it meanwhile
		delete(hs.homes, name)
	}
	hs.mu.Unlock()
	return e.info(cfg), nil
}

// list returns the homes built, sorted by name.
func (hs *Homes) list(cfg Config) []HomeInfo {
	hs.mu.RLock()
	out := make([]HomeInfo, 0, len(hs.homes))
	for _, e := range hs.homes {
		if e.serving() {
			out = append(out, e.info(cfg))
		}
	}
	hs.mu.RUnlock()
	slices.SortFunc(out, func(a, b HomeInfo) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// scriptBytes returns the bytes of scripts the homes hold.
func (hs *Homes) scriptBytes() int {
	hs.mu.RLock()
	defer hs.mu.RUnlock()
	n := 0
	for _, e := range hs.homes {
		if e.handler != nil { // a home being deleted still holds its scripts
			n += e.parts.Home.ScriptBytes()
		}
	}
	return n
}

// Len returns the number of homes created and not deleted (one whose
// DELETE has not answered yet counts).
func (hs *Homes) Len() int {
	hs.mu.RLock()
	defer hs.mu.RUnlock()
	return len(hs.homes)
}

// Close deletes every home and stops everything they run; later creations
// are 503 busy (the server is shutting down). Close is safe to call more
// than once, and concurrently: every call returns once the homes are
// stopped.
func (hs *Homes) Close() {
	hs.mu.Lock()
	if hs.closed {
		hs.mu.Unlock()
		<-hs.done
		return
	}
	hs.closed = true
	var entries []*homeEntry
	for name, e := range hs.homes {
		if e.serving() { // one being built is stopped by its creator, one being deleted by its DELETE
			entries = append(entries, e)
		}
		delete(hs.homes, name)
	}
	hs.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range entries {
		wg.Go(e.stop)
	}
	wg.Wait()
	hs.building.Wait() // a home built or deleted meanwhile is stopped by its caller
	close(hs.done)
}

// trimRoot returns root without slashes, or def when it is empty.
func trimRoot(root, def string) string {
	return cmp.Or(strings.Trim(root, "/"), def)
}

// homeRoutes adds the routes of the homes to r.
func (s *server) homeRoutes(r router) {
	r.Handle("/homes", methods{"GET": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := append([]HomeInfo{homeInfo(DefaultHome, "", s.cfg, s.home)}, s.homes.list(s.cfg)...)
		encode(w, http.StatusOK, out)
	})})
	r.Handle("/homes/{home}", methods{
		"GET": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			name := routeVar(r, "home")
			if name == DefaultHome {
				encode(w, http.StatusOK, homeInfo(DefaultHome, "", s.cfg, s.home))
				return
			}
			e, err := s.homes.enter(name)
			if err != nil {
				writeError(w, r, err)
				return
			}
			defer e.inflight.Done()
			encode(w, http.StatusOK, e.info(s.cfg))
		}),
		"POST": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, err := readBody(w, r, s.maxBody)
			if err != nil {
				writeError(w, r, err)
				return
			}
			var spec HomeSpec
			if len(bytes.TrimSpace(body)) > 0 {
				dec := json.NewDecoder(bytes.NewReader(body)) // unknown fields ignored: what GET gave can be sent back
				if err := dec.Decode(&spec); err != nil {
					writeError(w, r, invalidf("the body must be a JSON object with an optional \"physics\": %v", err))
					return
				}
				// More would let a "]" or "}" after the object through.
				if _, err := dec.Token(); err != io.EOF {
					writeError(w, r, invalidf("the body must hold one JSON object"))
					return
				}
			}
			info, err := s.homes.create(s.cfg, routeVar(r, "home"), spec)
			respond(w, r, info, err)
		}),
		"DELETE": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, err := s.homes.remove(s.cfg, routeVar(r, "home"))
			respondEmpty(w, r, err) // as every DELETE
		}),
	})
	// A home's house plan, the address that leads there and preflights
	// are what a client without the token gets (see newGuard): they answer
	// alike for every name, whether its home exists or not, so that names
	// cannot be probed. The page's own requests need the token.
	// The default home's plan is the server's own, at /simulator.
	plan := s.handleSimulator("", "/"+trimRoot(s.cfg.PlatformRoot, "platform"))
	homePlan := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pre := "/homes/" + routeVar(r, "home")
		if routeVar(r, "home") == DefaultHome {
			http.Redirect(w, r, strings.TrimPrefix(r.URL.Path, pre), http.StatusFound)
			return
		}
		http.StripPrefix(pre, plan).ServeHTTP(w, r)
	})
	r.Handle("/homes/{home}/", methods{"GET": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if routeVar(r, "home") == DefaultHome {
			http.Redirect(w, r, "/simulator", http.StatusFound)
			return
		}
		http.Redirect(w, r, "/homes/"+url.PathEscape(routeVar(r, "home"))+"/simulator", http.StatusFound)
	})})
	r.Handle("/homes/{home}/simulator", methods{"GET": homePlan})
	r.HandlePrefix("/homes/{home}/simulator/", methods{"GET": homePlan})
	r.HandlePrefix("/homes/{home}/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if preflight(r) {
			w.Header()["Allow"] = corsMethods
			w.WriteHeader(http.StatusOK)
			return
		}
		if routeVar(r, "home") == DefaultHome { // it exists, elsewhere: say where
			writeError(w, r, errkind.Errorf(errkind.NotFound, "the default home is served at the contract's paths, not under /homes: %s",
				quoteShort(strings.TrimPrefix(r.URL.Path, "/homes/"+DefaultHome))))
			return
		}
		e, err := s.homes.enter(routeVar(r, "home"))
		if err != nil {
			writeError(w, r, err)
			return
		}
		defer e.inflight.Done()
		e.handler.ServeHTTP(w, r)
	}))
}
