package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/pervasim/pervasim/bridge"
	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/internal/logbuf"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/natsbus"
	"github.com/pervasim/pervasim/sim"
	"github.com/pervasim/pervasim/store"
)

// options are the command-line flags.
type options struct {
	addr          string
	platformRoot  string
	mediationRoot string
	tz            string
	allowOrigins  string
	allowHosts    string
	token         string
	scriptsDir    string
	physics       string
	demo          bool
	logFormat     string
	cpuProfile    string
	version       bool

	maxEventClients int
	scriptsQuota    int
	sendTimeout     time.Duration
	maxDeliveries   int
	maxChains       int
	maxComponents   int
	maxBindings     int
	maxHomes        int
	maxZones        int
	maxDevices      int
	maxPersons      int

	chains       string
	stateDir     string
	placeholders bool

	natsAddr   string
	natsStore  string
	natsURL    string
	natsCreds  string
	natsPrefix string
	mqttAddr   string
}

// The default bounds of each home's zones, devices and persons: far past
// what iCasa's clients make (its largest demo home has dozens of devices),
// and within what one home simulates a day of in seconds.
const (
	defaultMaxZones   = 10_000
	defaultMaxDevices = 100_000
	defaultMaxPersons = 10_000
)

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on (port 0 picks a free port)")
	fs.StringVar(&o.platformRoot, "platform-root", "platform", "first path segment of the simulation service")
	fs.StringVar(&o.mediationRoot, "mediation-root", "mediation", "first path segment of the mediation service")
	fs.StringVar(&o.tz, "tz", "", "IANA time zone of the clock's date strings (default: the machine's local zone)")
	fs.StringVar(&o.allowOrigins, "allow-origin", "", "comma-separated origins (scheme://host[:port]) whose pages may use the server, beside loopback and its own; * allows every origin")
	fs.StringVar(&o.allowHosts, "allow-host", "", "comma-separated host names the server answers to, beside IP addresses and localhost")
	fs.StringVar(&o.token, "token", "", "require Authorization: Bearer <token> on every request but /healthz and the house plan's files")
	fs.StringVar(&o.scriptsDir, "scripts", "", "directory of the script player's .bhv scripts (default: none, scripts live in memory)")
	fs.StringVar(&o.physics, "physics", "contract", "physics model: contract (the REST contract's, the default) or realistic (heat loss, daylight, …; -demo's)")
	fs.IntVar(&o.maxEventClients, "max-event-clients", httpapi.DefaultMaxEventClients, "most event streams open at once")
	fs.IntVar(&o.scriptsQuota, "scripts-quota", httpapi.DefaultScriptsQuota, "most bytes of scripts the player holds")
	fs.DurationVar(&o.sendTimeout, "send-timeout", mediation.DefaultSendTimeout, "longest a message sent into a chain waits for room in a full queue")
	fs.IntVar(&o.maxDeliveries, "max-deliveries", mediation.DefaultMaxDeliveries, "most deliveries one message sent into a chain may cause")
	fs.IntVar(&o.maxChains, "max-chains", mediation.DefaultMaxChains, "most mediation chains")
	fs.IntVar(&o.maxComponents, "max-components", mediation.DefaultMaxComponents, "most components per chain")
	fs.IntVar(&o.maxBindings, "max-bindings", mediation.DefaultMaxBindings, "most bindings per chain")
	fs.IntVar(&o.maxHomes, "max-homes", httpapi.DefaultMaxHomes, "most homes created under /homes beside the server's own")
	fs.IntVar(&o.maxZones, "max-zones", defaultMaxZones, "most zones per home")
	fs.IntVar(&o.maxDevices, "max-devices", defaultMaxDevices, "most devices per home")
	fs.IntVar(&o.maxPersons, "max-persons", defaultMaxPersons, "most persons per home")
	fs.StringVar(&o.stateDir, "state", "", "directory that keeps the home, its scripts and the chains across restarts (journal and snapshots); off by default")
	fs.StringVar(&o.chains, "chains", "", "DSCilia chain file, or directory of them (*.dscilia, loaded in name order), loaded at start")
	fs.BoolVar(&o.placeholders, "placeholders", false, "with -chains, stand in for the component types pervasim does not have with placeholders")
	fs.StringVar(&o.natsAddr, "nats", "", "start an embedded NATS server (with JetStream) on this host:port: chains get nats-in, nats-out and the nats linker, and homes publish their events")
	fs.StringVar(&o.natsStore, "nats-store", "", "directory of the embedded NATS server's JetStream streams (default: a temporary one)")
	fs.StringVar(&o.natsURL, "nats-url", "", "connect to this NATS server or cluster (nats://host:port[,nats://…]) instead of embedding one")
	fs.StringVar(&o.natsCreds, "nats-creds", "", "NATS credentials file for -nats-url")
	fs.StringVar(&o.natsPrefix, "nats-prefix", natsbus.DefaultPrefix, "first token of the homes' subjects: <prefix>.<home>.<eventType>.<id>")
	fs.StringVar(&o.mqttAddr, "mqtt", "", "with -nats, the host:port of the embedded server's MQTT listener")
	fs.StringVar(&o.logFormat, "log", "text", "request log on stderr: text, json or off")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file, for go tool pprof")
	fs.BoolVar(&o.demo, "demo", false, "start with a winter day in the example house playing, in the realistic model, and a thermostat chain running")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch o.logFormat {
	case "text", "json", "off":
	default:
		return o, fmt.Errorf("-log: %q is not text, json or off", o.logFormat)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	// As the handler serves them: without surrounding slashes, empty
	// meaning the default. What the server prints and the requests it makes
	// to itself then name the paths it serves.
	o.platformRoot = cmp.Or(strings.Trim(o.platformRoot, "/"), "platform")
	o.mediationRoot = cmp.Or(strings.Trim(o.mediationRoot, "/"), "mediation")
	if err := httpapi.CheckRoots(o.platformRoot, o.mediationRoot); err != nil {
		return o, fmt.Errorf("-platform-root, -mediation-root: %w", err)
	}
	if err := httpapi.CheckAllow(splitList(o.allowOrigins), nil); err != nil {
		return o, fmt.Errorf("-allow-origin: %w", err)
	}
	if err := httpapi.CheckAllow(nil, splitList(o.allowHosts)); err != nil {
		return o, fmt.Errorf("-allow-host: %w", err)
	}
	for name, v := range map[string]int{"-max-event-clients": o.maxEventClients, "-scripts-quota": o.scriptsQuota,
		"-max-deliveries": o.maxDeliveries, "-max-chains": o.maxChains, "-max-components": o.maxComponents, "-max-bindings": o.maxBindings, "-max-homes": o.maxHomes,
		"-max-zones": o.maxZones, "-max-devices": o.maxDevices, "-max-persons": o.maxPersons} {
		if v < 1 {
			return o, fmt.Errorf("%s must be at least 1", name)
		}
	}
	if o.natsAddr != "" && o.natsURL != "" {
		return o, fmt.Errorf("-nats and -nats-url: embed a server or connect to one, not both")
	}
	if o.mqttAddr != "" && o.natsAddr == "" {
		return o, fmt.Errorf("-mqtt needs -nats: MQTT is the embedded NATS server's listener")
	}
	if o.natsStore != "" && o.natsAddr == "" {
		return o, fmt.Errorf("-nats-store needs -nats")
	}
	if o.natsCreds != "" && o.natsURL == "" {
		return o, fmt.Errorf("-nats-creds needs -nats-url")
	}
	if !httpapi.ValidHomeName(o.natsPrefix) {
		return o, fmt.Errorf("-nats-prefix %q: want letters, digits, - or _", o.natsPrefix)
	}
	if o.sendTimeout <= 0 {
		return o, fmt.Errorf("-send-timeout must be positive")
	}
	return o, nil
}

// splitList returns the non-empty items of a comma-separated list.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// loopbackAddr reports whether the host of host:port is a loopback address
// or localhost.
func loopbackAddr(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopback reports whether addr is a loopback address only.
func loopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// browsable returns addr as a browser on this machine opens it: an
// unspecified IP (0.0.0.0, ::), which a server listens on but nobody can
// open, as 127.0.0.1.
func browsable(addr net.Addr) string {
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
	}
	return addr.String()
}

// run starts the server and serves until ctx is done, then shuts down
// gracefully. It writes "listening on http://<addr>" to stdout once the
// listener is open, so a caller that asked for port 0 learns the port.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil // the flags are printed: asking for them is no error
	}
	if err != nil {
		return err
	}
	if o.version {
		fmt.Fprintln(stdout, "pervasim server", version())
		return nil
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	// The log is batched: one write every 100 ms rather than one per
	// request, which would cost more than answering a GET.
	logOut := logbuf.New(stderr, 100*time.Millisecond)
	defer logOut.Close()
	var logger *slog.Logger
	switch o.logFormat {
	case "text":
		logger = slog.New(slog.NewTextHandler(logOut, nil))
	case "json":
		logger = slog.New(slog.NewJSONHandler(logOut, nil))
	}
	loc := time.Local
	if o.tz != "" {
		if loc, err = time.LoadLocation(o.tz); err != nil {
			return fmt.Errorf("-tz: %w", err)
		}
	}
	if p := sim.Physics(o.physics); p != sim.PhysicsContract && p != sim.PhysicsRealistic {
		return fmt.Errorf("-physics: %q is not contract or realistic", o.physics)
	}
	physics := sim.Physics(o.physics)
	if o.demo {
		physics = sim.PhysicsRealistic
	}
	for _, a := range []struct{ flag, addr string }{{"-nats", o.natsAddr}, {"-mqtt", o.mqttAddr}} {
		if a.addr != "" && !loopbackAddr(a.addr) {
			fmt.Fprintf(stderr, "warning: %s %s is reachable from other machines and has no authentication: anyone who can reach it can read the homes' events, set devices and join chains\n", a.flag, a.addr)
		}
	}
	nc, natsLines, stopNATS, err := connectNATS(o, cmp.Or(logger, slog.New(slog.NewTextHandler(stderr, nil))))
	if err != nil {
		return err
	}
	defer stopNATS()
	build := func(name string, spec httpapi.HomeSpec) (httpapi.HomeParts, error) {
		parts, start, err := buildHome(o, name, nc, loc, sim.Physics(cmp.Or(spec.Physics, string(sim.PhysicsContract))), stdout, nil)
		if err == nil {
			start()
		}
		return parts, err
	}
	// Device updates over NATS or MQTT to the server's own home go through
	// its REST API, behind the -state journal when there is one, so that
	// they are kept as REST changes are.
	var api atomic.Pointer[http.Handler]
	devices := func(id string, body []byte) (int, []byte) {
		h := api.Load()
		if h == nil {
			return http.StatusServiceUnavailable, []byte(`{"error":"the server is starting","code":"busy"}`)
		}
		req := httptest.NewRequest(http.MethodPut, "/"+strings.Trim(o.platformRoot, "/")+"/devices/device/"+url.PathEscape(id), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		(*h).ServeHTTP(rec, req)
		return rec.Code, bytes.TrimSpace(rec.Body.Bytes())
	}
	parts, startDriver, err := buildHome(o, httpapi.DefaultHome, nc, loc, physics, stdout, devices)
	if err != nil {
		return err
	}
	defer parts.Stop()
	home, engine := parts.Home, parts.Engine
	var st *store.State
	var journal func(http.Handler) http.Handler
	scriptsFlag := "-scripts"
	if o.stateDir != "" {
		st = store.New(store.Config{Dir: o.stateDir, Home: home, Engine: engine, Location: loc, Logger: cmp.Or(logger, slog.New(slog.NewTextHandler(stderr, nil)))})
		journal = st.Wrap
		if o.scriptsDir == "" {
			o.scriptsDir = filepath.Join(o.stateDir, "scripts")
			scriptsFlag = "-state" // what to blame when it cannot be made
		}
	}
	var scripts httpapi.ScriptFiles
	if o.scriptsDir != "" {
		d, err := store.NewScriptDir(o.scriptsDir)
		if err != nil {
			return fmt.Errorf("%s: %w", scriptsFlag, err)
		}
		scripts = d
	}
	homes := httpapi.NewHomes(build, o.maxHomes)
	defer homes.Close()
	handler := httpapi.NewHandler(httpapi.Config{
		Home:            home,
		Engine:          engine,
		PlatformRoot:    o.platformRoot,
		MediationRoot:   o.mediationRoot,
		AllowOrigins:    splitList(o.allowOrigins),
		AllowHosts:      splitList(o.allowHosts),
		Token:           o.token,
		MaxEventClients: o.maxEventClients,
		Logger:          logger,
		ScriptsQuota:    o.scriptsQuota,
		Scripts:         scripts,
		Homes:           homes,
		Middleware:      journal,
	})
	var inner http.Handler = handler.API()
	if st != nil {
		inner = st.Wrap(inner)
	}
	// -demo and -chains set up a new state only: a restored one has them
	// as they were left (a chain deleted stays deleted). They are set up
	// before the state directory is opened, so that a start they stop
	// leaves it new for the next.
	fresh := true
	if st != nil {
		has, err := store.HasState(o.stateDir)
		if err != nil {
			return fmt.Errorf("-state: %w", err)
		}
		fresh = !has
	}
	if o.demo && fresh {
		if err := setupDemo(home, engine); err != nil {
			return err
		}
	}
	if o.chains != "" && fresh {
		if err := store.LoadChains(engine, o.chains, o.placeholders); err != nil {
			return fmt.Errorf("-chains: %w", err)
		}
	}
	restored := false
	if st != nil {
		if restored, err = st.Open(handler.API()); err != nil {
			return fmt.Errorf("-state: %w", err)
		}
		defer func() { // a last snapshot, before the home and the engine stop
			if err := st.Close(); err != nil {
				fmt.Fprintf(stderr, "warning: -state: the last snapshot was not written (the journal keeps every change): %v\n", err)
			}
		}()
	}
	if stateOpened != nil {
		stateOpened(devices)
	}
	if st != nil && !restored {
		if err := st.Snapshot(); err != nil { // what -demo and -chains made, kept at once
			return fmt.Errorf("-state: %w", err)
		}
	}
	// Device updates are taken only now: one journaled before the first
	// snapshot of a new state would make it a state that holds neither
	// the -demo home nor the -chains, and a crash then would leave the
	// next start restoring that instead of setting them up.
	api.Store(&inner)
	startDriver() // the home is set up: simulated time may run

	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	conns := &openConns{m: map[net.Conn]struct{}{}}
	srv := &http.Server{
		Handler:           handler,
		ConnState:         conns.track,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute, // a body announced but never sent ends; streams are responses, not bounded
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(slog.NewTextHandler(stderr, nil), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(handler.Close) // end the event streams, or Shutdown waits for them
	srv.RegisterOnShutdown(homes.Close)   // and those of the other homes
	if o.token == "" && !loopback(ln.Addr()) {
		fmt.Fprintf(stderr, "warning: %s is reachable from other machines and has no -token: anyone who can reach it can change the home\n", ln.Addr())
	}
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	base := "http://" + browsable(ln.Addr())
	page := base + "/simulator"
	if o.token != "" {
		page += "#token=" + url.QueryEscape(o.token)
	}
	fmt.Fprintf(stdout, "  house plan     %s\n", page)
	fmt.Fprintf(stdout, "  simulation     %s/%s/  (zones, devices, persons, clocks, scriptPlayer, environment)\n", base, o.platformRoot)
	fmt.Fprintf(stdout, "  event stream   %s/%s/events\n", base, o.platformRoot)
	fmt.Fprintf(stdout, "  mediation      %s/%s/\n", base, o.mediationRoot)
	fmt.Fprintf(stdout, "  more homes     %s/homes  (POST /homes/<name> makes one, served under /homes/<name>/)\n", base)
	fmt.Fprintf(stdout, "  OpenAPI        %s/openapi.json\n", base)
	fmt.Fprintf(stdout, "  health         %s/healthz\n", base)
	fmt.Fprint(stdout, natsLines)
	if o.demo {
		fmt.Fprintf(stdout, "demo: the example house is playing; open %s\n", page)
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Shutdown waits for the requests in flight. One whose client stalls
	// (a body or headers it never finishes, a response it never reads)
	// would hold it to its deadline: past shutdownGrace, its reads and
	// writes fail, so its handler ends (a body cut short changes nothing).
	cutting := make(chan struct{})
	var cutter sync.WaitGroup
	cutter.Go(func() { conns.cutAfter(shutdownGrace, cutting) })
	err = srv.Shutdown(shutdownCtx)
	close(cutting)
	cutter.Wait()
	if err != nil {
		srv.Close() // the deadline passed: cut the connections still open
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// stateOpened, when a test sets it, is called once the state directory is
// open (or would be, without -state), before the first snapshot of a new
// state, with the device updater of NATS and MQTT.
var stateOpened func(devices func(id string, body []byte) (int, []byte))

// shutdownGrace is how long the requests in flight at shutdown have to
// finish before the connections that still hold them are cut.
const shutdownGrace = 2 * time.Second

// openConns are the server's connections that are reading a request or
// serving one. It is safe for concurrent use.
type openConns struct {
	mu sync.Mutex // guards m
	m  map[net.Conn]struct{}
}

// track is the server's ConnState hook.
func (o *openConns) track(c net.Conn, state http.ConnState) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch state {
	case http.StateNew, http.StateActive:
		o.m[c] = struct{}{}
	default: // idle (Shutdown closes those), hijacked or closed
		delete(o.m, c)
	}
}

// cutAfter waits d, then makes every read and write of the open
// connections fail, again every 100 ms (net/http moves a connection's read
// deadline as it reads a request), until done is closed.
func (o *openConns) cutAfter(d time.Duration, done <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		o.mu.Lock()
		for c := range o.m {
			c.SetDeadline(time.Now())
		}
		o.mu.Unlock()
		t.Reset(100 * time.Millisecond)
	}
}

// natsWriteTimeout is how long a write to the NATS server may take before
// the connection counts as lost (and is made again). The client's default,
// a minute, let a server that hangs (connected, reading nothing) hold a
// publication, and with it the connection's lock, that long: a chain's
// send through a nats-out, and the shutdown, which closes the connection,
// waited for it, and closing waited as long again for a last flush.
const natsWriteTimeout = 5 * time.Second

// connectNATS starts the embedded NATS server or connects to the one of
// -nats-url, as the flags ask, and says where it is in lines to print;
// without either flag it returns no connection. stop closes the connection and stops the
// server. What befalls the connection later (lost, back, closed for good,
// an error the server sent) is logged on log.
func connectNATS(o options, log *slog.Logger) (nc *nats.Conn, lines string, stop func(), err error) {
	if o.natsAddr == "" && o.natsURL == "" {
		return nil, "", func() {}, nil
	}
	var srv *natsbus.Server
	url := o.natsURL
	var opts []nats.Option
	if o.natsCreds != "" {
		opts = append(opts, nats.UserCredentials(o.natsCreds))
	}
	if o.natsAddr != "" {
		srv, err = natsbus.StartServer(natsbus.ServerConfig{Addr: o.natsAddr, StoreDir: o.natsStore, MQTTAddr: o.mqttAddr})
		if err != nil {
			return nil, "", nil, fmt.Errorf("-nats: %w", err)
		}
		url = srv.URL()
	}
	opts = append(opts, nats.Name("pervasim"), nats.MaxReconnects(-1), nats.FlusherTimeout(natsWriteTimeout),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			log.Warn("NATS connection lost; reconnecting", "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("NATS connection back", "url", nc.ConnectedUrlRedacted())
		}),
		nats.ClosedHandler(func(nc *nats.Conn) {
			if err := nc.LastError(); err != nil {
				log.Error("NATS connection closed for good: chains and homes no longer reach NATS until a restart", "err", err)
			}
		}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			if sub != nil {
				log.Warn("NATS", "subject", sub.Subject, "err", err)
			} else {
				log.Warn("NATS", "err", err)
			}
		}))
	nc, err = nats.Connect(url, opts...)
	if err != nil {
		if srv != nil {
			srv.Shutdown()
		}
		return nil, "", nil, fmt.Errorf("NATS %s: %w", url, err)
	}
	lines = fmt.Sprintf("  NATS           %s  (events on %s.<home>.<eventType>.<id>)\n", url, o.natsPrefix)
	if srv != nil && srv.MQTTAddr() != "" {
		lines += fmt.Sprintf("  MQTT           mqtt://%s  (topics %s/<home>/…)\n", srv.MQTTAddr(), o.natsPrefix)
	}
	return nc, lines, func() {
		// Closed on purpose: neither a loss to report nor the end of a
		// connection that chains and homes still need.
		nc.SetDisconnectErrHandler(nil)
		nc.SetClosedHandler(nil)
		nc.Drain()
		nc.Close()
		if srv != nil {
			srv.Shutdown()
		}
	}, nil
}

// buildHome builds a home, its mediation engine and the bridge between
// them; startDriver starts its live driver (simulated time follows the wall
// clock), once the home is set up.
// With a NATS connection, the engine gets the NATS adapters and linker, and
// the home's events go out on NATS as name. The parts' Stop stops them all.
func buildHome(o options, name string, nc *nats.Conn, loc *time.Location, physics sim.Physics, stdout io.Writer, updater natsbus.DeviceUpdater) (parts httpapi.HomeParts, startDriver func(), err error) {
	home, err := sim.New(sim.Config{Location: loc, Physics: physics, MaxZones: o.maxZones, MaxDevices: o.maxDevices, MaxPersons: o.maxPersons})
	if err != nil {
		return httpapi.HomeParts{}, nil, err
	}
	engine := mediation.NewEngine(mediation.Config{Output: stdout, SendTimeout: o.sendTimeout, MaxDeliveries: o.maxDeliveries,
		MaxChains: o.maxChains, MaxComponents: o.maxComponents, MaxBindings: o.maxBindings})
	devices, err := bridge.New(home, engine) // the device-in and device-out adapters
	if err != nil {
		engine.Close()
		return httpapi.HomeParts{}, nil, err
	}
	unpublish := func() {}
	if nc != nil {
		if _, err := natsbus.AttachEngine(engine, nc); err != nil {
			devices.Close()
			engine.Close()
			return httpapi.HomeParts{}, nil, err
		}
		update := func(id string, body []byte) (int, []byte) { return httpapi.UpdateDeviceJSON(home, id, body) }
		if updater != nil {
			update = updater
		}
		if unpublish, err = natsbus.PublishHomeWith(nc, o.natsPrefix, name, home, update); err != nil {
			devices.Close()
			engine.Close()
			return httpapi.HomeParts{}, nil, err
		}
	}
	ctx, stopSim := context.WithCancel(context.Background())
	simDone := make(chan struct{})
	var once sync.Once
	start := func() { once.Do(func() { go func() { home.Run(ctx); close(simDone) }() }) }
	return httpapi.HomeParts{Home: home, Engine: engine, Stop: func() {
		stopSim()
		start() // so that simDone closes, whether it ran or not
		<-simDone
		unpublish()
		devices.Close()
		engine.Close() // NATS subscriptions and the nats linker's publishers go too
	}}, start, nil
}

// version returns the module's version, and the commit it was built from
// when known: "(devel)" for go run from a checkout.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += " (modified)"
		}
	}
	return v
}
