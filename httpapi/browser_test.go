package httpapi_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/bridge"
	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "write ../docs/simulator.png from TestSimulatorScreenshot")

// browser is a headless Chromium tab, and the JavaScript errors its page
// reported.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

// newBrowser starts headless Chromium, found on the PATH, in a fresh
// profile. It skips the test with -short, or when there is none: chromedp never downloads
// a browser.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Skip("no Chromium: install Debian's chromium (.ci/run does)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	// The first action starts the browser, bound to ctx, which has no
	// deadline: the steps get their own.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	b := &browser{ctx: ctx}
	err := chromedp.Listen(ctx, func(ev any) {
		var msg string
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg = ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				msg += " " + ev.ExceptionDetails.Exception.Description
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type != runtime.ConsoleAPICalledTypeError {
				return
			}
			msg = "console.error:"
			for _, a := range ev.Args {
				msg += " " + string(a.Value) + a.Description
			}
		default:
			return
		}
		b.mu.Lock()
		b.errors = append(b.errors, msg)
		b.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkNoErrors fails the test if the page threw or logged an error.
func (b *browser) checkNoErrors(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.errors {
		t.Errorf("the page reported: %s", e)
	}
}

// openPlan serves home, opens its house plan in b and returns a context
// of the page that ends after timeout; the server and the context end with
// the test.
func (b *browser) openPlan(t *testing.T, home *sim.Home, timeout time.Duration) context.Context {
	t.Helper()
	srv, stop := serveHome(t, home)
	t.Cleanup(stop)
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/simulator")); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// serveHome serves home over HTTP. The returned func stops the server, after
// ending the event streams.
func serveHome(t *testing.T, home *sim.Home) (*httptest.Server, func()) {
	t.Helper()
	return serveConfig(t, httpapi.Config{Home: home})
}

// serveConfig serves the handler of cfg over HTTP, as serveHome does.
func serveConfig(t *testing.T, cfg httpapi.Config) (*httptest.Server, func()) {
	t.Helper()
	h := httpapi.NewHandler(cfg)
	srv := httptest.NewServer(h)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			h.Close()
			srv.Close()
		})
	}
	t.Cleanup(stop)
	return srv, stop
}

// byTestID is the CSS selector of a data-testid.
func byTestID(id string) chromedp.CSS {
	return chromedp.CSS(fmt.Sprintf("[data-testid=%q]", id))
}

// centre returns the centre, in viewport pixels, of the element the CSS
// selector sel finds.
func centre(ctx context.Context, sel string) (x, y float64, err error) {
	js := fmt.Sprintf(`(() => {
		const e = document.querySelector(%q);
		if (!e) return null;
		const r = e.getBoundingClientRect();
		return [r.left + r.width / 2, r.top + r.height / 2];
	})()`, sel)
	xy, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](js))
	if err != nil {
		return 0, 0, err
	}
	if len(xy) != 2 {
		return 0, 0, fmt.Errorf("no element %s", sel)
	}
	return xy[0], xy[1], nil
}

// drag presses the left button at x0, y0, moves to x1, y1 in steps and
// releases it there, as a person with a mouse does.
func drag(x0, y0, x1, y1 float64) chromedp.Action[chromedp.Void] {
	held := func(p *input.DispatchMouseEventParams) { p.Buttons = 1 }
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		steps := []chromedp.Action[chromedp.Void]{
			chromedp.MouseEvent(chromedp.MouseMoved, x0, y0),
			chromedp.MouseEvent(chromedp.MousePressed, x0, y0, chromedp.ButtonLeft, held, chromedp.ClickCount(1)),
		}
		const n = 12
		for i := 1; i <= n; i++ {
			f := float64(i) / n
			steps = append(steps, chromedp.MouseEvent(chromedp.MouseMoved, x0+(x1-x0)*f, y0+(y1-y0)*f, chromedp.ButtonLeft, held))
		}
		steps = append(steps, chromedp.MouseEvent(chromedp.MouseReleased, x1, y1, chromedp.ButtonLeft, chromedp.ClickCount(1)))
		return chromedp.Do(ctx, steps...)
	})
}

// click clicks the centre of the element the CSS selector sel finds.
func click(ctx context.Context, sel string) error {
	x, y, err := centre(ctx, sel)
	if err != nil {
		return err
	}
	return chromedp.Do(ctx, chromedp.MouseClickXY(x, y))
}

// eventually calls cond every 50 ms until it reports true, and fails the
// test when ctx ends first. cond's message says what it saw last.
func eventually(t *testing.T, ctx context.Context, what string, cond func() (bool, string)) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := ""
	for {
		ok, msg := cond()
		if ok {
			return
		}
		last = msg
		select {
		case <-ctx.Done():
			t.Fatalf("%s: gave up (%v); last seen: %s", what, ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// must fails the test on err: must(t)(home.CreateZone(spec)).
func must(t *testing.T) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestSimulatorInBrowser drives the house plan in headless Chromium: it
// drags a person into a room, sets a heater's power from its panel and
// watches the room's temperature change on the page as simulated time
// passes.
func TestSimulatorInBrowser(t *testing.T) {
	b := newBrowser(t)

	home := sim.MustNew(sim.Config{}) // the real wall clock
	for _, z := range []sim.ZoneSpec{
		{ID: "kitchen", Name: "Kitchen", LeftX: 410, TopY: 370, RightX: 655, BottomY: 580, Variables: map[string]float64{"Temperature": 290.15}},
		{ID: "livingroom", Name: "Living room", LeftX: 410, TopY: 20, RightX: 655, BottomY: 370, Variables: map[string]float64{"Temperature": 291.15}},
		{ID: "bedroom", Name: "Bedroom", LeftX: 55, TopY: 370, RightX: 314, BottomY: 580, Variables: map[string]float64{"Temperature": 291.65}},
		{ID: "bathroom", Name: "Bathroom", LeftX: 55, TopY: 20, RightX: 315, BottomY: 370, Variables: map[string]float64{"Temperature": 289.15}},
	} {
		must(t)(home.CreateZone(z))
	}
	at := func(x, y int) (*int, *int) { return &x, &y }
	hx, hy := at(425, 560)
	must(t)(home.CreateDevice(sim.DeviceSpec{ID: "heater", Name: "Kitchen radiator", Type: "iCasa.Heater", PositionX: hx, PositionY: hy}))
	tx, ty := at(640, 390)
	must(t)(home.CreateDevice(sim.DeviceSpec{ID: "thermometer", Type: "iCasa.Thermometer", PositionX: tx, PositionY: ty}))
	// A kind of the user's own: the page knows its properties only from
	// /devices/kinds.
	must(t)(nil, home.Kinds().Register(sim.Kind{Name: "Kettle", Namespace: "acme", Properties: []sim.PropertySpec{
		{Name: "kettle.waterLevel", Type: sim.Number, Default: 0.5, Min: 0, Max: 1, Doc: "share of the tank filled"},
	}}))
	kx, ky := at(600, 530)
	must(t)(home.CreateDevice(sim.DeviceSpec{ID: "kettle", Type: "acme.Kettle", PositionX: kx, PositionY: ky}))
	px, py := at(730, 300)
	alice, err := home.CreatePerson(sim.PersonSpec{ID: "alice", Name: "Alice", Type: "Mother", PositionX: px, PositionY: py})
	if err != nil {
		t.Fatal(err)
	}
	if alice.Location != sim.LocationUnknown {
		t.Fatalf("alice starts in %q, want outside every zone", alice.Location)
	}

	runCtx, stopRun := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		home.Run(runCtx)
	}()
	defer func() {
		stopRun()
		<-ran
	}()
	srv, stopServer := serveHome(t, home)
	defer stopServer()

	ctx, cancel := context.WithTimeout(b.ctx, 25*time.Second)
	defer cancel()

	// The plan renders the home.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/simulator"),
		chromedp.WaitVisible(byTestID("zone-bedroom")),
		chromedp.WaitVisible(byTestID("person-alice")),
		chromedp.WaitVisible(byTestID("device-heater")),
	); err != nil {
		t.Fatalf("the plan did not render: %v", err)
	}
	initial, err := chromedp.Run(ctx, chromedp.TextContent(byTestID("zone-temp-kitchen")))
	if err != nil {
		t.Fatal(err)
	}
	if initial != "17.0 °C" {
		t.Errorf("kitchen temperature reads %q, want 17.0 °C", initial)
	}
	eventually(t, ctx, "the clock shows the simulated time", func() (bool, string) {
		s, err := chromedp.Run(ctx, chromedp.TextContent(byTestID("clock-time")))
		return err == nil && strings.Contains(s, fmt.Sprint(home.Now().Year())), s
	})

	// Drag Alice into the bedroom with the mouse.
	x0, y0, err := centre(ctx, `[data-testid="person-alice"] .icon`)
	if err != nil {
		t.Fatal(err)
	}
	x1, y1, err := centre(ctx, `[data-testid="zone-bedroom"] .zone-rect`)
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, drag(x0, y0, x1, y1)); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "alice is in the bedroom", func() (bool, string) {
		p, err := home.Person("alice")
		return err == nil && p.Location == "bedroom", fmt.Sprintf("%+v %v", p, err)
	})

	// Open the heater's panel, set its power level to 1 and save. The plan is
	// redrawn as live events arrive, so a click that lands during a redraw
	// is retried until the panel shows.
	eventually(t, ctx, "the heater's panel opens", func() (bool, string) {
		if err := click(ctx, `[data-testid="device-heater"] .icon`); err != nil {
			return false, err.Error()
		}
		try, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		err := chromedp.Do(try, chromedp.WaitVisible(byTestID("device-panel")))
		return err == nil, fmt.Sprint(err)
	})
	power := byTestID("prop-heater.powerLevel")
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(power),
		chromedp.SetValue(power, ""),
		chromedp.SendKeys(power, "1"),
		chromedp.Click(byTestID("device-save")),
	); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the heater's power level is 1", func() (bool, string) {
		d, err := home.Device("heater")
		return err == nil && d.Properties[sim.PropHeaterPowerLevel] == 1.0, fmt.Sprintf("%v %v", d.Properties, err)
	})

	// A simulated minute warms the kitchen; the page shows it live.
	if err := home.Advance(time.Minute); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the page shows the kitchen warmer", func() (bool, string) {
		s, err := chromedp.Run(ctx, chromedp.TextContent(byTestID("zone-temp-kitchen")))
		return err == nil && s != initial && strings.HasSuffix(s, "°C"), s
	})
	// The kettle's panel offers its level, read from the kind's spec.
	eventually(t, ctx, "the kettle's panel shows its water level", func() (bool, string) {
		if err := click(ctx, `[data-testid="device-kettle"] .icon`); err != nil {
			return false, err.Error()
		}
		try, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if err := chromedp.Do(try, chromedp.WaitVisible(byTestID("prop-kettle.waterLevel"))); err != nil {
			return false, err.Error()
		}
		value, err := chromedp.Run(try, chromedp.Value(byTestID("prop-kettle.waterLevel")))
		if err != nil {
			return false, err.Error()
		}
		label, err := chromedp.Run(try, chromedp.TextContent(`label[for="f-prop_kettle_waterLevel"]`))
		return err == nil && value == "0.5" && strings.HasPrefix(label, "Water level"), fmt.Sprintf("%q %q %v", label, value, err)
	})
	if status, err := chromedp.Run(ctx, chromedp.TextContent(byTestID("panel-error"))); err != nil || status != "" {
		t.Errorf("the panel shows an error: %q %v", status, err)
	}
	b.checkNoErrors(t)
}

// TestSimulatorScreenshot renders the example house as the server's -demo
// plays it (cmd/server's setupDemo: the realistic model, a winter day, the
// thermostat chain in the living room) at 10:30, with the living-room
// lamp's panel open, and, with -update-screenshot, writes the picture to
// docs/simulator.png, which the README shows as such.
func TestSimulatorScreenshot(t *testing.T) {
	b := newBrowser(t)

	src, err := os.ReadFile(filepath.Join("..", "examples", "scripts", "house.bhv"))
	if err != nil {
		t.Fatal(err)
	}
	home := sim.MustNew(sim.Config{Physics: sim.PhysicsRealistic, WallClock: clock.NewMock()})
	engine := mediation.NewEngine(mediation.Config{})
	defer engine.Close()
	br, err := bridge.New(home, engine)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	// As setupDemo does: a clear January day, -3 °C before dawn, 5 °C at
	// 15:00; the house; the thermostat holding the living room between 19
	// and 21 °C.
	must(t)(home.UpdateEnvironment(sim.EnvironmentUpdate{OutdoorMin: new(270.15), OutdoorMax: new(278.15)}))
	must(t)(home.AddScript("house.bhv", src))
	must(t)(home.SetScriptState("house.bhv", sim.ScriptStarted))
	if err := home.Advance(0); err != nil {
		t.Fatal(err)
	}
	ch, err := engine.CreateChain("thermostat")
	if err != nil {
		t.Fatal(err)
	}
	must(t)(ch.AddAdapter("device-in", "thermometer", map[string]any{
		"devices": "livingroom-thermometer", "property": "current_temperature", "current": true}))
	must(t)(ch.AddMediator("router", "band", map[string]any{
		"conditions": map[string]any{"(value<=292.15)": "cold", "(value>=294.15)": "warm"}}))
	must(t)(ch.AddAdapter("device-out", "heat", map[string]any{
		"device": "livingroom-heater", "property": "heater.powerLevel", "value": 1.0}))
	must(t)(ch.AddAdapter("device-out", "rest", map[string]any{
		"device": "livingroom-heater", "property": "heater.powerLevel", "value": 0.0}))
	must(t)(ch.Bind("thermometer:out", "band:in", "", nil))
	must(t)(ch.Bind("band:cold", "heat:in", "", nil))
	must(t)(ch.Bind("band:warm", "rest:in", "", nil))
	if err := ch.Start(); err != nil {
		t.Fatal(err)
	}
	// 10:30: daylight in every room, Mother in the living room.
	if err := home.Advance(4 * time.Hour); err != nil {
		t.Fatal(err)
	}
	lr, _ := home.Zone("livingroom")
	if c := lr.Variables[sim.VarTemperature] - 273.15; c < 19 || c > 21 {
		t.Errorf("the living room is at %.2f °C at 10:30, want the thermostat's 19 to 21", c)
	}
	srv, stopServer := serveConfig(t, httpapi.Config{Home: home, Engine: engine})
	defer stopServer()

	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/simulator/"),
		chromedp.WaitVisible(byTestID("zone-kitchen")),
		chromedp.WaitVisible(byTestID("person-mother")),
		chromedp.WaitVisible(byTestID("device-livingroom-light")),
	); err != nil {
		t.Fatalf("the plan did not render: %v", err)
	}
	placed := 0
	for _, d := range home.Devices() {
		if d.PositionX != -1 || d.PositionY != -1 {
			placed++
		}
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#devices-layer [data-entity=device]').length`))
	if err != nil || n != placed {
		t.Errorf("the plan draws %d devices (%v), want %d", n, err, placed)
	}
	if err := click(ctx, `[data-testid="device-livingroom-light"] .icon`); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(byTestID("device-panel"))); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the script player shows house.bhv", func() (bool, string) {
		s, err := chromedp.Run(ctx, chromedp.TextContent(byTestID("script-state")))
		return err == nil && strings.HasPrefix(s, sim.ScriptStarted), s
	})
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("the screenshot is not a PNG")
	}
	b.checkNoErrors(t)
	if *updateScreenshot {
		out := filepath.Join("..", "docs", "simulator.png")
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", out, len(png))
	}
}

// TestSimulatorWithToken opens the house plan of a server started with a
// token, given in the page's address: the page reads the home and follows
// its event stream with it, and drops it from the address.
func TestSimulatorWithToken(t *testing.T) {
	b := newBrowser(t)
	home := sim.MustNew(sim.Config{})
	must(t)(home.CreateZone(sim.ZoneSpec{ID: "hall", LeftX: 10, TopY: 10, RightX: 200, BottomY: 150}))
	srv, stop := serveConfig(t, httpapi.Config{Home: home, Token: "tok-123"})
	defer stop()

	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/simulator#token=tok-123"),
		chromedp.WaitVisible(byTestID("zone-hall")),
	); err != nil {
		t.Fatalf("the plan did not render with the token: %v", err)
	}
	// A change made meanwhile arrives over the event stream.
	must(t)(home.CreateZone(sim.ZoneSpec{ID: "study", LeftX: 210, TopY: 10, RightX: 400, BottomY: 150}))
	if err := chromedp.Do(ctx, chromedp.WaitVisible(byTestID("zone-study"))); err != nil {
		t.Fatalf("the event stream did not deliver: %v", err)
	}
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
	if err != nil || strings.Contains(href, "tok-123") {
		t.Errorf("the address still holds the token: %q %v", href, err)
	}
	b.checkNoErrors(t)
}

// TestSimulatorWithoutToken opens the house plan of a server started with a
// token without giving it, then with a wrong one: the page says that it
// needs the token and where to find it, rather than "Loading the home…" and
// "Disconnected" for ever.
func TestSimulatorWithoutToken(t *testing.T) {
	b := newBrowser(t)
	srv, stop := serveConfig(t, httpapi.Config{Home: sim.MustNew(sim.Config{}), Token: "tok-123"})
	defer stop()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	for _, c := range []struct{ hash, conn, says string }{
		{"", "Needs a token", "This server needs a token"},
		{"#token=wrong", "Token refused", "The server refused this tab’s token"},
	} {
		// about:blank first: a change of the fragment alone loads nothing.
		if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(srv.URL+"/simulator"+c.hash)); err != nil {
			t.Fatal(err)
		}
		eventually(t, ctx, "the page says why it shows nothing", func() (bool, string) {
			conn, err := chromedp.Run(ctx, chromedp.TextContent(byTestID("connection")))
			if err != nil {
				return false, err.Error()
			}
			plan, err := chromedp.Run(ctx, chromedp.TextContent(byTestID("plan-empty")))
			return err == nil && strings.Contains(conn, c.conn) && strings.HasPrefix(plan, c.says) &&
				strings.Contains(plan, "/simulator#token="), fmt.Sprintf("%q %q %v", conn, plan, err)
		})
	}
	b.checkNoErrors(t)
}

// TestSimulatorOfNoHome: the house plan of a home of /homes that does not
// exist, or is deleted while the page is open, says so; it said "Loading
// the home…" for ever.
func TestSimulatorOfNoHome(t *testing.T) {
	b := newBrowser(t)
	homes := httpapi.NewHomes(func(string, httpapi.HomeSpec) (httpapi.HomeParts, error) {
		engine := mediation.NewEngine(mediation.Config{})
		return httpapi.HomeParts{Home: sim.MustNew(sim.Config{}), Engine: engine, Stop: func() { engine.Close() }}, nil
	}, 0)
	defer homes.Close()
	srv, stop := serveConfig(t, httpapi.Config{Home: sim.MustNew(sim.Config{}), Homes: homes})
	defer stop()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	says := func(what, conn string) {
		t.Helper()
		eventually(t, ctx, what, func() (bool, string) {
			c, err := chromedp.Run(ctx, chromedp.TextContent(byTestID("connection")))
			if err != nil {
				return false, err.Error()
			}
			plan, err := chromedp.Run(ctx, chromedp.TextContent(byTestID("plan-empty")))
			return err == nil && strings.Contains(c, conn) && strings.HasPrefix(plan, "There is no home here"), fmt.Sprintf("%q %q %v", c, plan, err)
		})
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/homes/nowhere/simulator")); err != nil {
		t.Fatal(err)
	}
	says("the page of a home that does not exist says so", "No such home")
	do := func(method, path string) {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("%s %s: %v %v", method, path, res, err)
		}
		res.Body.Close()
	}
	do("POST", "/homes/lab")
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/homes/lab/simulator"), chromedp.WaitVisible(byTestID("plan-empty"))); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the home's page is live", func() (bool, string) {
		c, err := chromedp.Run(ctx, chromedp.TextContent(byTestID("connection")))
		return err == nil && strings.Contains(c, "Live"), fmt.Sprint(c, err)
	})
	do("DELETE", "/homes/lab")
	says("the page of a home deleted says so", "No such home")
}

// TestSimulatorInheritedNames: a variable or property named like what every
// JavaScript object inherits ("constructor", "toString") is the home's only
// while it exists: removed, its field goes from the zone's panel, and a
// device's panel shows its property empty, not the source of Object.
func TestSimulatorInheritedNames(t *testing.T) {
	b := newBrowser(t)
	home := sim.MustNew(sim.Config{})
	one := 1.0
	must(t)(home.CreateZone(sim.ZoneSpec{ID: "hall", LeftX: 0, TopY: 0, RightX: 400, BottomY: 300,
		Variables: map[string]float64{"constructor": 1, "toString": 2}}))
	x, y := 100, 100
	must(t)(home.CreateDevice(sim.DeviceSpec{ID: "lamp", Type: "iCasa.BinaryLight", PositionX: &x, PositionY: &y}))
	must(t)(home.UpdateDevice("lamp", sim.DeviceUpdate{Properties: map[string]any{"constructor": "c"}}))
	srv, stop := serveHome(t, home)
	defer stop()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	field := func(key string) (string, error) {
		return chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(
			`(() => { const e = document.querySelector('[data-key=%q]'); return e ? 'field ' + e.value : 'none'; })()`, key)))
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/simulator"),
		chromedp.WaitVisible(byTestID("zone-hall")),
		chromedp.Click(byTestID("zone-item-hall")),
		chromedp.WaitVisible(byTestID("var-constructor")),
	); err != nil {
		t.Fatal(err)
	}
	must(t)(home.UpdateZone("hall", sim.ZoneUpdate{Variables: map[string]*float64{"constructor": nil, "toString": &one}}))
	eventually(t, ctx, "the removed variable's field goes", func() (bool, string) {
		c, err1 := field("var:constructor")
		s, err2 := field("var:toString")
		return err1 == nil && err2 == nil && c == "none" && s == "field 1", c + "; " + s
	})

	if err := chromedp.Do(ctx, chromedp.Click(byTestID("panel-close"))); err != nil {
		t.Fatal(err)
	}
	if err := click(ctx, `[data-testid="device-lamp"] .icon`); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(byTestID("prop-constructor"))); err != nil {
		t.Fatal(err)
	}
	must(t)(home.UpdateDevice("lamp", sim.DeviceUpdate{Properties: map[string]any{"constructor": nil}}))
	eventually(t, ctx, "the removed property shows empty", func() (bool, string) {
		s, err := field("prop:constructor")
		return err == nil && s == "field ", s
	})
	b.checkNoErrors(t)
}

// TestSimulatorStartDateAcrossDST: the start date is shown, and read back,
// in the offset its own date has. In Paris, a clock started on 15 January at
// 13:00 (UTC+1) and now in April (UTC+2) showed its start at 14:00.
func TestSimulatorStartDateAcrossDST(t *testing.T) {
	b := newBrowser(t)
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip(err)
	}
	start := time.Date(2026, time.January, 15, 12, 0, 0, 0, time.UTC)
	home := sim.MustNew(sim.Config{Location: paris, StartDate: start})
	pause, now := true, time.Date(2026, time.April, 18, 10, 0, 0, 0, time.UTC).UnixMilli()
	must(t)(home.UpdateClock(sim.ClockUpdate{Pause: &pause, CurrentTime: &now}))
	ctx := b.openPlan(t, home, 20*time.Second)
	input := byTestID("clock-start")
	eventually(t, ctx, "the start date shows 13:00", func() (bool, string) {
		v, err := chromedp.Run(ctx, chromedp.Value(input))
		return err == nil && strings.HasPrefix(v, "2026-01-15T13:00"), fmt.Sprint(v, err)
	})
	// 14:00 in Paris on 15 January is 13:00 UTC.
	if err := chromedp.Do(ctx,
		chromedp.SetValue(input, "2026-01-15T14:00"),
		chromedp.Click(byTestID("clock-start-set")),
	); err != nil {
		t.Fatal(err)
	}
	want := start.Add(time.Hour).UnixMilli()
	eventually(t, ctx, "the start date is 13:00 UTC", func() (bool, string) {
		c := home.Clock()
		return c.StartDate == want, fmt.Sprint(c.StartDate, " ", c.StartDateStr)
	})
	b.checkNoErrors(t)
}

// TestSimulatorLegendLoadingAndNames: the legend explains each colour, an
// empty home says so once loaded (not while loading), and a device names
// itself on hover.
func TestSimulatorLegendLoadingAndNames(t *testing.T) {
	b := newBrowser(t)
	home := sim.MustNew(sim.Config{})
	ctx := b.openPlan(t, home, 20*time.Second)
	eventually(t, ctx, "the empty home says so", func() (bool, string) {
		s, err := chromedp.Run(ctx, chromedp.TextContent(byTestID("plan-empty")))
		return err == nil && strings.HasPrefix(s, "No zones yet"), s
	})
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid=legend] li[title]').length`))
	if err != nil || n < 12 {
		t.Errorf("the legend explains %d colours (%v), want every one drawn", n, err)
	}
	must(t)(home.CreateZone(sim.ZoneSpec{ID: "hall", LeftX: 10, TopY: 10, RightX: 300, BottomY: 200}))
	x, y := 100, 100
	must(t)(home.CreateDevice(sim.DeviceSpec{ID: "lamp", Name: "Hall lamp", Type: "iCasa.BinaryLight", PositionX: &x, PositionY: &y}))
	eventually(t, ctx, "the lamp's name is on the plan", func() (bool, string) {
		s, err := chromedp.Run(ctx, chromedp.TextContent(byTestID("device-label-lamp")))
		return err == nil && s == "Hall lamp", s
	})
	b.checkNoErrors(t)
}

// TestSimulatorPanelSavesOnlyEdits renames a device and a zone from their
// panels: only the name changes. The panel shows numbers rounded and has no
// input for an object, so sending back every field it shows would round a
// lamp's level, zero a small variable and turn an object into text.
func TestSimulatorPanelSavesOnlyEdits(t *testing.T) {
	b := newBrowser(t)
	home := sim.MustNew(sim.Config{})
	must(t)(home.CreateZone(sim.ZoneSpec{ID: "hall", LeftX: 0, TopY: 0, RightX: 400, BottomY: 300,
		Variables: map[string]float64{"Temperature": 293.123456, "Humidity": 0.00012}}))
	x, y := 100, 100
	must(t)(home.CreateDevice(sim.DeviceSpec{ID: "lamp", Type: "iCasa.DimmerLight", PositionX: &x, PositionY: &y}))
	must(t)(home.UpdateDevice("lamp", sim.DeviceUpdate{Properties: map[string]any{
		"power_level": 0.123456,
		"calibration": map[string]any{"gain": 1.5},
		"channels":    []any{1.0, 2.0},
	}}))
	wantDevice, err := home.Device("lamp")
	if err != nil {
		t.Fatal(err)
	}
	wantZone, err := home.Zone("hall")
	if err != nil {
		t.Fatal(err)
	}
	srv, stop := serveHome(t, home)
	defer stop()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/simulator"), chromedp.WaitVisible(byTestID("device-lamp"))); err != nil {
		t.Fatalf("the plan did not render: %v", err)
	}

	rename := func(entity string, open chromedp.Action[chromedp.Void], name string) {
		t.Helper()
		field := byTestID(entity + "-name")
		if err := chromedp.Do(ctx,
			open,
			chromedp.WaitVisible(byTestID(entity+"-panel")),
			// SetValue fires input, as typing does (SetValue(field, "") would
			// write "undefined": chromedp drops an empty argument).
			chromedp.SetValue(field, name),
			chromedp.Click(byTestID(entity+"-save")),
		); err != nil {
			t.Fatalf("renaming the %s: %v", entity, err)
		}
		eventually(t, ctx, entity+" saved", func() (bool, string) {
			s, err := chromedp.Run(ctx, chromedp.TextContent(byTestID("panel-status")))
			return err == nil && s == "Saved.", s
		})
	}

	rename("device", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		return click(ctx, `[data-testid="device-lamp"] .icon`)
	}), "Lamp")
	got, err := home.Device("lamp")
	if err != nil {
		t.Fatal(err)
	}
	wantDevice.Name = "Lamp"
	if diff := cmp.Diff(wantDevice.Properties, got.Properties); diff != "" || got.Name != "Lamp" {
		t.Errorf("after renaming, the lamp is named %q; properties (-want +got):\n%s", got.Name, diff)
	}
	shown, err := chromedp.Run(ctx, chromedp.TextContent(byTestID("prop-calibration")))
	if err != nil || shown != `{"gain":1.5}` {
		t.Errorf("the panel shows the object property as %q (%v), want its JSON", shown, err)
	}

	rename("zone", chromedp.Click(byTestID("zone-item-hall")), "Hall")
	gotZone, err := home.Zone("hall")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantZone.Variables, gotZone.Variables); diff != "" || gotZone.Name != "Hall" {
		t.Errorf("after renaming, the zone is named %q; variables (-want +got):\n%s", gotZone.Name, diff)
	}
	b.checkNoErrors(t)
}
