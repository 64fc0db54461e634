package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/chromedp/chromedp"

	"github.com/pervasim/pervasim/sim"
)

// TestSimulatorUpdateRedrawsOnlyItsDevice: with a thousand devices on the
// plan, renaming one redraws that device only. The page neither reads nor
// writes the others, nor asks for their layout (a text's length, a box, a
// computed style: each lays the page out): redrawing and measuring
// everything on every event made a large home slow.
func TestSimulatorUpdateRedrawsOnlyItsDevice(t *testing.T) {
	b := newBrowser(t)
	home := sim.MustNew(sim.Config{})
	pause := true
	must(t)(home.UpdateClock(sim.ClockUpdate{Pause: &pause}))
	for i := range 4 {
		must(t)(home.CreateZone(sim.ZoneSpec{ID: fmt.Sprintf("room%d", i), LeftX: i * 400, TopY: 0, RightX: i*400 + 390, BottomY: 400,
			Variables: map[string]float64{"Temperature": 293.15, "Illuminance": 100}}))
	}
	const n = 1000
	for i := range n {
		x, y := (i%4)*400+10+(i/4)%15*25, 10+(i/4)/15*25
		must(t)(home.CreateDevice(sim.DeviceSpec{ID: fmt.Sprintf("dev%d", i), Type: "iCasa.DimmerLight", PositionX: &x, PositionY: &y}))
	}
	ctx := b.openPlan(t, home, 60*time.Second)
	eventually(t, ctx, "every device is on the plan", func() (bool, string) {
		c, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#devices-layer > g').length`))
		return err == nil && c == n, fmt.Sprint(c, err)
	})
	eventually(t, ctx, "the home is loaded", func() (bool, string) {
		s, err := chromedp.Run(ctx, chromedp.TextContent(byTestID("plan-empty")))
		return err == nil && strings.HasPrefix(s, "No zones yet"), fmt.Sprint(s, err)
	})
	// From now on: every change to the plan, and every attribute or layout
	// read of an element of the plan.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const plan = document.querySelector('#plan');
		const mine = document.querySelector('[data-testid="device-dev7"]');
		window.__other = [];
		const other = (e) => e instanceof Element && plan.contains(e) && !mine.contains(e);
		const note = (e, what) => { if (other(e) && window.__other.length < 20) window.__other.push(what + ' ' + (e.closest('[data-testid]')?.dataset.testid || e.id)); };
		new MutationObserver((records) => { for (const r of records) note(r.target, r.type + ':' + (r.attributeName || '')); })
			.observe(plan, { subtree: true, childList: true, attributes: true, characterData: true });
		const watch = (proto, name) => {
			const f = proto[name];
			proto[name] = function (...args) { note(this, 'read:' + name + (args.length ? ':' + args[0] : '')); return f.apply(this, args); };
		};
		watch(Element.prototype, 'getAttribute');
		watch(Element.prototype, 'getBoundingClientRect');
		watch(SVGGraphicsElement.prototype, 'getBBox');
		watch(SVGTextContentElement.prototype, 'getComputedTextLength');
		const style = window.getComputedStyle;
		window.getComputedStyle = (e, ...rest) => { note(e, 'read:getComputedStyle'); return style(e, ...rest); };
		return true;
	})()`)); err != nil {
		t.Fatal(err)
	}
	name := "Renamed lamp"
	must(t)(home.UpdateDevice("dev7", sim.DeviceUpdate{Name: &name}))
	eventually(t, ctx, "the device shows its new name", func() (bool, string) {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="device-dev7"]').getAttribute('aria-label')`))
		return err == nil && strings.HasPrefix(s, name), fmt.Sprint(s, err)
	})
	// The frame that drew the name drew everything the event changed.
	other, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__other`))
	if err != nil {
		t.Fatal(err)
	}
	if len(other) > 0 {
		t.Errorf("renaming dev7 touched other elements of the plan: %q", other)
	}
	b.checkNoErrors(t)
}

// TestSimulatorClockStopsAtEndOfTime: the server's clock stops at the last
// millisecond of the year 9999, and so does the page's: it ticked on past
// it (into the year 10092) and jumped back at each reading.
func TestSimulatorClockStopsAtEndOfTime(t *testing.T) {
	b := newBrowser(t)
	home := sim.MustNew(sim.Config{Location: time.UTC})
	start, factor := int64(253402300790000), sim.MaxFactor // 10 s before the end
	must(t)(home.UpdateClock(sim.ClockUpdate{StartDate: &start, Factor: &factor}))
	ctx := b.openPlan(t, home, 20*time.Second)
	const end = "Fri 31 Dec 9999, 23:59:59"
	eventually(t, ctx, "the clock shows the end of time", func() (bool, string) {
		s, err := chromedp.Run(ctx, chromedp.TextContent(byTestID("clock-time")))
		return err == nil && s == end, fmt.Sprint(s, err)
	})
	// Every time shown for the next 1.5 s, by the page's own clock: the
	// clock ticks four times a second.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const t = document.querySelector('[data-testid="clock-time"]');
		window.__since = performance.now();
		window.__shown = [t.textContent];
		new MutationObserver(() => window.__shown.push(t.textContent)).observe(t, { subtree: true, childList: true, characterData: true });
		return true;
	})()`)); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "1.5 s passed in the page", func() (bool, string) {
		ms, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`performance.now() - window.__since`))
		return err == nil && ms > 1500, fmt.Sprint(ms, err)
	})
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__shown.concat([document.querySelector('[data-testid="clock-time"]').textContent])`))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range shown {
		if s != end {
			t.Errorf("the clock showed %q past the end of time, want %q", s, end)
			break
		}
	}
	b.checkNoErrors(t)
}

// TestSimulatorLongZoneNameAndFieldIDs: a zone's long name is cut to the
// zone's width, whole in its tooltip; the panel's fields all have ids of
// their own, so that each label focuses its own input, even for variables
// named a.b and a_b, whose ids were both f-var_a_b.
func TestSimulatorLongZoneNameAndFieldIDs(t *testing.T) {
	b := newBrowser(t)
	home := sim.MustNew(sim.Config{})
	long := "The very long name of a small hall that goes on well past the walls of its zone"
	must(t)(home.CreateZone(sim.ZoneSpec{ID: "hall", Name: long, LeftX: 0, TopY: 0, RightX: 200, BottomY: 150,
		Variables: map[string]float64{"a.b": 1, "a_b": 2, "Temperature": 293.15}}))
	must(t)(home.CreateZone(sim.ZoneSpec{ID: "big", LeftX: 0, TopY: 150, RightX: 1200, BottomY: 800}))
	ctx := b.openPlan(t, home, 20*time.Second)
	eventually(t, ctx, "the hall's name is cut to its width", func() (bool, string) {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
			const g = document.querySelector('[data-testid="zone-hall"]');
			if (!g) return 'no zone';
			const name = g.querySelector('.zone-name'), rect = g.querySelector('.zone-rect').getBoundingClientRect();
			const r = name.getBoundingClientRect();
			if (!name.textContent.endsWith('…')) return 'not cut: ' + name.textContent;
			if (r.left < rect.left - 0.5 || r.right > rect.right + 0.5) return 'overflows: ' + r.left + '-' + r.right + ' in ' + rect.left + '-' + rect.right;
			if (!g.querySelector('title').textContent.includes(`+"`"+long+"`"+`)) return 'no full name in the title';
			return 'ok';
		})()`))
		return err == nil && s == "ok", fmt.Sprint(s, err)
	})
	if err := click(ctx, `[data-testid="zone-item-hall"]`); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "each label of the panel is for its own input", func() (bool, string) {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
			const panel = document.querySelector('[data-testid="zone-panel"]');
			if (!panel || !panel.querySelector('[data-testid="var-a_b"]')) return 'no panel';
			const ids = [...document.querySelectorAll('[id]')].map((e) => e.id);
			const dup = ids.filter((id, i) => ids.indexOf(id) !== i);
			if (dup.length) return 'ids used twice: ' + dup.join(' ');
			for (const row of panel.querySelectorAll('.field')) {
				const label = row.querySelector('label'), input = row.querySelector('[data-key]');
				if (label.control !== input) return 'the label ' + label.textContent + ' is for ' + (label.control?.dataset.key || 'nothing') + ', not ' + input.dataset.key;
			}
			return 'ok';
		})()`))
		return err == nil && s == "ok", fmt.Sprint(s, err)
	})
	b.checkNoErrors(t)
}

// TestSimulatorZoneListFollowsResize: the zone list gives each zone's size
// and place, and says the new ones once the zone is moved or resized.
func TestSimulatorZoneListFollowsResize(t *testing.T) {
	b := newBrowser(t)
	home := sim.MustNew(sim.Config{})
	must(t)(home.CreateZone(sim.ZoneSpec{ID: "hall", LeftX: 0, TopY: 0, RightX: 200, BottomY: 150}))
	ctx := b.openPlan(t, home, 20*time.Second)
	listed := func(want string) {
		t.Helper()
		eventually(t, ctx, "the zone list says "+want, func() (bool, string) {
			s, err := chromedp.Run(ctx, chromedp.Evaluate[string](
				`document.querySelector('[data-testid="zone-item-hall"]')?.parentElement.querySelector('.muted')?.textContent || ''`))
			return err == nil && s == want, fmt.Sprint(s, err)
		})
	}
	listed("200 × 150 at 0,0")
	x, y, r, btm := 10, 20, 410, 320
	must(t)(home.UpdateZone("hall", sim.ZoneUpdate{LeftX: &x, TopY: &y, RightX: &r, BottomY: &btm}))
	listed("400 × 300 at 10,20")
	b.checkNoErrors(t)
}

// TestSimulatorRedrawsWhatDependsOnAChange: what a change affects beyond
// its own element is redrawn too. Selecting another element unmarks the
// first; a device moved into the corner of a zone's label moves the label;
// a zone far away shrinks every icon, the unchanged ones too.
func TestSimulatorRedrawsWhatDependsOnAChange(t *testing.T) {
	b := newBrowser(t)
	home := sim.MustNew(sim.Config{})
	must(t)(home.CreateZone(sim.ZoneSpec{ID: "hall", LeftX: 0, TopY: 0, RightX: 400, BottomY: 300}))
	x, y := 300, 200
	must(t)(home.CreateDevice(sim.DeviceSpec{ID: "lamp", Type: "iCasa.BinaryLight", PositionX: &x, PositionY: &y}))
	ctx := b.openPlan(t, home, 20*time.Second)
	eval := func(js string) string {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			return err.Error()
		}
		return s
	}
	state := `(() => {
		const z = document.querySelector('[data-testid="zone-hall"]'), d = document.querySelector('[data-testid="device-lamp"]');
		if (!z || !d) return 'not drawn';
		return [z.classList.contains('selected'), d.classList.contains('selected'), z.dataset.spot, d.getAttribute('transform')].join(' ');
	})()`
	var before string
	eventually(t, ctx, "the plan is drawn", func() (bool, string) {
		before = eval(state)
		return strings.HasPrefix(before, "false false tl translate(300 200)"), before
	})
	scale := before[strings.LastIndex(before, " "):]

	if err := click(ctx, `[data-testid="zone-item-hall"]`); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the zone is selected", func() (bool, string) {
		s := eval(state)
		return strings.HasPrefix(s, "true false "), s
	})
	if err := click(ctx, `[data-testid="device-lamp"] .icon`); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the device only is selected", func() (bool, string) {
		s := eval(state)
		return strings.HasPrefix(s, "false true "), s
	})

	x, y = 20, 20
	must(t)(home.UpdateDevice("lamp", sim.DeviceUpdate{PositionX: &x, PositionY: &y}))
	eventually(t, ctx, "the label leaves the corner the device covers", func() (bool, string) {
		s := eval(state)
		return strings.HasPrefix(s, "false true tr translate(20 20)"), s
	})

	must(t)(home.CreateZone(sim.ZoneSpec{ID: "far", LeftX: 4000, TopY: 0, RightX: 4400, BottomY: 300}))
	eventually(t, ctx, "the unchanged device is drawn to the new scale", func() (bool, string) {
		s := eval(state)
		return strings.HasPrefix(s, "false true tr translate(20 20)") && !strings.HasSuffix(s, scale), s + " was" + scale
	})
	b.checkNoErrors(t)
}

// TestSimulatorDeletedZoneStaysGone deletes a zone holding lit lamps: it
// leaves the plan and the zone list. Its lamps leave it after its
// zone-removed, each with an event of its Illuminance, and the page put the
// zone back from those, until the page was reloaded.
func TestSimulatorDeletedZoneStaysGone(t *testing.T) {
	b := newBrowser(t)
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock()})
	must(t)(home.CreateZone(sim.ZoneSpec{ID: "hall", LeftX: 0, TopY: 0, RightX: 300, BottomY: 200}))
	for i, id := range []string{"lamp1", "lamp2"} {
		x, y := 100+50*i, 100
		must(t)(home.CreateDevice(sim.DeviceSpec{ID: id, Type: "iCasa.BinaryLight", PositionX: &x, PositionY: &y,
			Properties: map[string]any{"power_status": true}}))
	}
	ctx := b.openPlan(t, home, 20*time.Second)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(byTestID("zone-hall"))); err != nil {
		t.Fatal(err)
	}
	must(t)(nil, home.DeleteZone("hall"))
	// Events arrive in order: once the zone made after the deletion shows,
	// every event of the deletion was applied.
	must(t)(home.CreateZone(sim.ZoneSpec{ID: "study", LeftX: 400, TopY: 0, RightX: 600, BottomY: 200}))
	if err := chromedp.Do(ctx, chromedp.WaitVisible(byTestID("zone-study"))); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the deleted zone is gone from the plan and the list", func() (bool, string) {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](
			`[...document.querySelectorAll('[data-entity=zone], [data-testid^="zone-item-"]')].map((e) => e.dataset.testid).join(' ')`))
		return err == nil && s == "zone-study zone-item-study", fmt.Sprint(s, " ", err)
	})
	b.checkNoErrors(t)
}

// TestSimulatorPlacedAtMinusOne: a device or person at -1,-1 in a zone that
// covers that point is placed there, as the server says (its location is
// the zone), and is drawn; only a device at -1,-1 in no zone is "not
// placed". The page hid both and listed the device as unplaced.
func TestSimulatorPlacedAtMinusOne(t *testing.T) {
	b := newBrowser(t)
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock()})
	must(t)(home.CreateZone(sim.ZoneSpec{ID: "hall", LeftX: -100, TopY: -100, RightX: 100, BottomY: 100}))
	x, y := 50, 50
	must(t)(home.CreateDevice(sim.DeviceSpec{ID: "lamp", Type: "iCasa.BinaryLight", PositionX: &x, PositionY: &y}))
	must(t)(home.UpdateDevice("lamp", sim.DeviceUpdate{PositionX: new(-1), PositionY: new(-1)}))
	must(t)(home.CreateDevice(sim.DeviceSpec{ID: "spare", Type: "iCasa.BinaryLight"})) // not placed
	must(t)(home.CreatePerson(sim.PersonSpec{ID: "bob", Type: "Man", PositionX: new(-1), PositionY: new(-1)}))
	if d, _ := home.Device("lamp"); d.Location != "hall" {
		t.Fatalf("the lamp is in %q, want hall", d.Location)
	}
	ctx := b.openPlan(t, home, 20*time.Second)
	eventually(t, ctx, "the lamp and bob are drawn, the spare lamp listed as unplaced", func() (bool, string) {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[
			...document.querySelectorAll('#devices-layer > g, #persons-layer > g, li[data-testid^="unplaced-"]'),
		].map((e) => e.dataset.testid).join(' ')`))
		return err == nil && s == "device-lamp person-bob unplaced-spare", fmt.Sprint(s, " ", err)
	})
	b.checkNoErrors(t)
}

// TestSimulatorProtoNamedEdits edits, from the panels, a zone variable and a
// device property named "__proto__", and adds a variable of that name: each
// is saved. Set on the plain object of the request's body, the name set
// its prototype instead, so nothing was sent, and the panel said "Saved.".
func TestSimulatorProtoNamedEdits(t *testing.T) {
	b := newBrowser(t)
	home := sim.MustNew(sim.Config{WallClock: clock.NewMock()})
	must(t)(home.CreateZone(sim.ZoneSpec{ID: "hall", LeftX: 0, TopY: 0, RightX: 400, BottomY: 300,
		Variables: map[string]float64{"__proto__": 5}}))
	must(t)(home.CreateZone(sim.ZoneSpec{ID: "attic", LeftX: 500, TopY: 0, RightX: 700, BottomY: 300}))
	x, y := 100, 100
	must(t)(home.CreateDevice(sim.DeviceSpec{ID: "lamp", Type: "iCasa.BinaryLight", PositionX: &x, PositionY: &y,
		Properties: map[string]any{"__proto__": 1.0}}))
	ctx := b.openPlan(t, home, 20*time.Second)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(byTestID("device-lamp"))); err != nil {
		t.Fatal(err)
	}
	save := func(entity string, open chromedp.Action[chromedp.Void], fields map[string]string) {
		t.Helper()
		steps := []chromedp.Action[chromedp.Void]{open, chromedp.WaitVisible(byTestID(entity + "-panel"))}
		for id, v := range fields {
			steps = append(steps, chromedp.SetValue(byTestID(id), v))
		}
		steps = append(steps, chromedp.Click(byTestID(entity+"-save")))
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatal(err)
		}
		eventually(t, ctx, entity+" saved", func() (bool, string) {
			s, err := chromedp.Run(ctx, chromedp.TextContent(byTestID("panel-status")))
			return err == nil && s == "Saved.", s
		})
	}
	save("zone", chromedp.Click(byTestID("zone-item-hall")), map[string]string{"var-__proto__": "7"})
	save("zone", chromedp.Click(byTestID("zone-item-attic")), map[string]string{"var-new-name": "__proto__", "var-new-value": "3"})
	save("device", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		return click(ctx, `[data-testid="device-lamp"] .icon`)
	}), map[string]string{"prop-__proto__": "2"})
	hall, _ := home.Zone("hall")
	attic, _ := home.Zone("attic")
	lamp, _ := home.Device("lamp")
	if hall.Variables["__proto__"] != 7 || attic.Variables["__proto__"] != 3 || lamp.Properties["__proto__"] != 2.0 {
		t.Errorf("__proto__ of hall %v, of attic %v, of the lamp %v; want 7, 3 and 2",
			hall.Variables["__proto__"], attic.Variables["__proto__"], lamp.Properties["__proto__"])
	}
	b.checkNoErrors(t)
}
