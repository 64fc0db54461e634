package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// simulate runs the command with args, its outputs in a temporary directory
// (the names events, csv and plot in args are relative to it), and returns
// the files written and what went to stderr.
func simulate(t *testing.T, args ...string) (files map[string][]byte, stderr string, err error) {
	t.Helper()
	dir := t.TempDir()
	for i, a := range args {
		if i > 0 && strings.HasPrefix(args[i-1], "-") && (args[i-1] == "-events" || args[i-1] == "-csv" || args[i-1] == "-plot") && a != "-" {
			args[i] = filepath.Join(dir, a)
		}
	}
	var errb bytes.Buffer
	err = run(args, io.Discard, &errb)
	files = map[string][]byte{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, rerr := os.ReadFile(filepath.Join(dir, e.Name()))
		if rerr != nil {
			t.Fatal(rerr)
		}
		files[e.Name()] = b
	}
	return files, errb.String(), err
}

// TestSimulateOutputs plays two scripts one after the other and checks
// each output, and that a second run gives the same bytes.
func TestSimulateOutputs(t *testing.T) {
	args := func() []string {
		return []string{"-events", "events.jsonl", "-csv", "day.csv", "-plot", "day.svg", "-every", "15m",
			"testdata/morning.bhv", "testdata/evening.bhv"}
	}
	first, stderr, err := simulate(t, args()...)
	if err != nil {
		t.Fatalf("run = %v (%s)", err, stderr)
	}
	second, _, _ := simulate(t, args()...)
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("a second run differs (-first +second):\n%.2000s", diff)
	}

	// Events: one JSON object per line, in order, stamped in simulated time.
	var types []string
	sc := bufio.NewScanner(bytes.NewReader(first["events.jsonl"]))
	var lastTime int64
	for n := 1; sc.Scan(); n++ {
		var e struct {
			EventType string `json:"eventType"`
			ID        string `json:"id"`
			Time      int64  `json:"time"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("event line %q: %v", sc.Text(), err)
		}
		if e.Time < lastTime {
			t.Errorf("event %s at %d goes back in time", e.EventType, e.Time)
		}
		if e.ID != strconv.Itoa(n) {
			t.Fatalf("event line %d has id %s: every event is written, from the first", n, e.ID)
		}
		lastTime = e.Time
		types = append(types, e.EventType)
	}
	// The clock set to the run's start, then the script's zone.
	if len(types) < 2 || types[0] != "clock-modified" || types[1] != "zone-added" || !strings.Contains(strings.Join(types, " "), "person-added") {
		t.Errorf("events = %.200v, want the clock's start, the zone, and the evening's person later", types)
	}
	// 06:00 + 1 h 30 of the morning + 15 min of the evening.
	if lastTime != 1705298400000+105*60*1000 {
		t.Errorf("last event at %d, want at the end of the evening script", lastTime)
	}

	// CSV: a header, then a row every 15 minutes from 06:00 to 07:45.
	lines := strings.Split(strings.TrimSpace(string(first["day.csv"])), "\n")
	wantHeader := "time,kitchen.Illuminance,kitchen.Temperature,thermometer.current_temperature"
	if lines[0] != wantHeader {
		t.Errorf("CSV header = %q, want %q", lines[0], wantHeader)
	}
	if len(lines) != 1+8 || lines[1] != "2024-01-15T06:00:00,0,290.15,290.15" || !strings.HasPrefix(lines[8], "2024-01-15T07:45:00,") {
		t.Errorf("CSV rows = %q", lines[1:])
	}
	if svg := string(first["day.svg"]); !strings.HasPrefix(svg, "<?xml") || !strings.Contains(svg, "Temperature") || !strings.Contains(svg, "kitchen") {
		t.Errorf("the plot is not an SVG of the kitchen's temperature: %.200q", svg)
	}
}

// TestSimulatePNG draws the plot as a PNG.
func TestSimulatePNG(t *testing.T) {
	files, stderr, err := simulate(t, "-plot", "day.png", "-physics", "realistic", "-for", "6h", "testdata/morning.bhv")
	if err != nil {
		t.Fatalf("run = %v (%s)", err, stderr)
	}
	if !bytes.HasPrefix(files["day.png"], []byte("\x89PNG")) {
		t.Errorf("day.png is not a PNG")
	}
	// The extension in any case.
	files, stderr, err = simulate(t, "-plot", "DAY.PNG", "-for", "1h", "testdata/morning.bhv")
	if err != nil || !bytes.HasPrefix(files["DAY.PNG"], []byte("\x89PNG")) {
		t.Errorf("-plot DAY.PNG: %v (%s), want a PNG", err, stderr)
	}
}

// TestSimulateErrors: errors name the file and the line; a failed action
// fails the run after everything was written.
func TestSimulateErrors(t *testing.T) {
	_, stderr, err := simulate(t, "testdata/morning.bhv", "testdata/malformed.bhv")
	if err == nil || !strings.Contains(err.Error(), "testdata/malformed.bhv: line 4: ") {
		t.Errorf("a script that does not parse: %v (%s), want its file and line", err, stderr)
	}
	// An action that can never run fails when played, as in iCasa.
	_, stderr, err = simulate(t, "testdata/morning.bhv", "testdata/broken.bhv")
	if err == nil || !strings.Contains(stderr, "testdata/broken.bhv: line 4: unknown command fly") {
		t.Errorf("an unknown command: %v, stderr %q; want an error and its file and line", err, stderr)
	}
	files, stderr, err := simulate(t, "-csv", "out.csv", "testdata/morning.bhv", "testdata/failing.bhv")
	if err == nil || !strings.Contains(stderr, "testdata/failing.bhv: line 4: ") {
		t.Errorf("a failing action: %v, stderr %q; want an error and its file and line", err, stderr)
	}
	if len(files["out.csv"]) == 0 {
		t.Errorf("the CSV was not written")
	}
	for _, args := range [][]string{
		{}, {"-physics", "fancy", "testdata/morning.bhv"}, {"-plot", "x.gif", "testdata/morning.bhv"},
		{"-every", "0s", "testdata/morning.bhv"}, {"-start", "yesterday", "testdata/morning.bhv"},
		{"-tz", "Mars/Olympus", "testdata/morning.bhv"}, {"testdata/missing.bhv"},
	} {
		if err := run(args, io.Discard, io.Discard); err == nil {
			t.Errorf("run(%q) = nil, want an error", args)
		}
	}
	if err := run([]string{"-h"}, io.Discard, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("run(-h) = %v, want flag.ErrHelp (exit 0)", err)
	}
}

// TestSimulateStart: -start moves the whole run.
func TestSimulateStart(t *testing.T) {
	files, _, err := simulate(t, "-start", "2024-06-21T12:00:00", "-csv", "x.csv", "-every", "1h", "testdata/morning.bhv")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(files["x.csv"]), "\n2024-06-21T12:00:00,") {
		t.Errorf("CSV = %q, want rows from 2024-06-21 12:00", files["x.csv"])
	}
}

// BenchmarkSimulateHouseDay plays a simulated day of the example house,
// every output on: events, CSV every minute and the plot.
func BenchmarkSimulateHouseDay(b *testing.B) {
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		args := []string{"-for", "24h", "-events", filepath.Join(dir, "e.jsonl"), "-csv", filepath.Join(dir, "d.csv"),
			"-plot", filepath.Join(dir, "d.svg"), "../../examples/scripts/house.bhv"}
		if err := run(args, io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

var update = flag.Bool("update", false, "rewrite docs/simulate.png")

// TestReadmeCommand runs the README's command and checks that the picture
// it shows is what the command draws (rewrite it with -update).
func TestReadmeCommand(t *testing.T) {
	files, stderr, err := simulate(t, "-for", "24h", "-physics", "realistic",
		"-events", "day.jsonl", "-csv", "day.csv", "-plot", "day.png", "../../examples/scripts/house.bhv")
	if err != nil {
		t.Fatalf("run = %v (%s)", err, stderr)
	}
	doc := filepath.Join("..", "..", "docs", "simulate.png")
	if *update {
		if err := os.WriteFile(doc, files["day.png"], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, files["day.png"]) {
		t.Errorf("docs/simulate.png is not what the README's command draws: go test ./cmd/simulate -run TestReadmeCommand -update")
	}
}

// TestProgressBar draws the bar as a terminal would see it.
func TestProgressBar(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, on: true, start: defaultStart, total: 24 * time.Hour}
	p.show(12*time.Hour, defaultStart.Add(12*time.Hour), 42)
	p.finish()
	got := b.String()
	for _, want := range []string{"\r[===============               ]  50%", "2024-01-15 12:00", "42 events", "real time", "\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress bar %q lacks %q", got, want)
		}
	}
	if isTerminal(&b) {
		t.Errorf("a buffer is not a terminal")
	}
}

// TestSimulateTrailingDelay: a script lasts until its last delay is over,
// trailing delays included, and the next script starts after it.
func TestSimulateTrailingDelay(t *testing.T) {
	files, stderr, err := simulate(t, "-csv", "out.csv", "testdata/settle.bhv")
	if err != nil {
		t.Fatalf("run = %v (%s)", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(files["out.csv"])), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "2024-01-15T06:05:00,") {
		t.Errorf("the last sample is %q, want at 06:05 (the trailing delay of 3 minutes played)", last)
	}
	files, stderr, err = simulate(t, "-events", "e.jsonl", "testdata/settle.bhv", "testdata/settle-next.bhv")
	if err != nil {
		t.Fatalf("run = %v (%s)", err, stderr)
	}
	// The second script's zone is added at 06:05.
	var added []int64
	sc := bufio.NewScanner(bytes.NewReader(files["e.jsonl"]))
	for sc.Scan() {
		var e struct {
			EventType string `json:"eventType"`
			Time      int64  `json:"time"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.EventType == "zone-added" {
			added = append(added, e.Time)
		}
	}
	start := time.Date(2024, 1, 15, 6, 0, 0, 0, time.UTC).UnixMilli()
	if want := []int64{start, start + 5*60*1000}; !cmp.Equal(added, want) {
		t.Errorf("zone-added at %v, want %v", added, want)
	}
}

// TestSimulateChains: -chains runs a DSCilia chain beside the home, on
// its devices: a thermostat turns the heater on, the room warms, and the
// heater goes off at 20 °C (the README's example).
func TestSimulateChains(t *testing.T) {
	args := func() []string {
		return []string{"-chains", "testdata/thermostat.dscilia", "-events", "e.jsonl", "-csv", "out.csv", "-every", "30m", "testdata/cold-room.bhv"}
	}
	files, stderr, err := simulate(t, args()...)
	if err != nil {
		t.Fatalf("run = %v (%s)", err, stderr)
	}
	if !strings.Contains(string(files["e.jsonl"]), `"property":"heater.powerLevel","value":1`) {
		t.Errorf("the chain never set the heater: %.2000s", files["e.jsonl"])
	}
	lines := strings.Split(strings.TrimSpace(string(files["out.csv"])), "\n")
	temp := func(line string) float64 {
		f, _ := strconv.ParseFloat(strings.Split(line, ",")[1], 64)
		return f
	}
	// The room is small: the heater's last 5 s step passes 20 °C by about 1 K.
	if len(lines) != 4 || temp(lines[1]) != 288.15 || temp(lines[2]) < 293.15 || temp(lines[2]) > 295.15 || temp(lines[3]) != temp(lines[2]) {
		t.Errorf("CSV = %q, want the room warming from 288.15 K to just over 293.15 K, and no further", lines)
	}
	again, _, _ := simulate(t, args()...)
	if diff := cmp.Diff(files, again); diff != "" {
		t.Errorf("a second run differs (-first +second):\n%.2000s", diff)
	}
	// A directory loads its files as the file itself did.
	fromDir := args()
	fromDir[1] = "testdata"
	if files, stderr, err := simulate(t, fromDir...); err != nil || !cmp.Equal(files, again) {
		t.Errorf("-chains testdata = %v (%s), want the run of -chains testdata/thermostat.dscilia", err, stderr)
	}

	// A chain file that does not load names itself; an unknown type is
	// refused unless -placeholders.
	dir := t.TempDir()
	unknown := filepath.Join(dir, "unknown.dscilia")
	os.WriteFile(unknown, []byte(`<cilia><chain id="c"><mediators><mediator-instance id="m" type="Mystery"/></mediators></chain></cilia>`), 0o644)
	if _, _, err := simulate(t, "-chains", unknown, "testdata/cold-room.bhv"); err == nil || !strings.Contains(err.Error(), "unknown.dscilia") || !strings.Contains(err.Error(), "Mystery") {
		t.Errorf("an unknown type: %v, want an error naming the file and the type", err)
	}
	if _, stderr, err := simulate(t, "-chains", unknown, "-placeholders", "testdata/cold-room.bhv"); err != nil {
		t.Errorf("with -placeholders: %v (%s)", err, stderr)
	}
	if _, _, err := simulate(t, "-chains", filepath.Join(dir, "missing.dscilia"), "testdata/cold-room.bhv"); err == nil {
		t.Errorf("a missing chain file: nil error")
	}
}

// TestSimulateOutputsApart: two outputs never share a file.
func TestSimulateOutputsApart(t *testing.T) {
	for _, args := range [][]string{
		{"-events", "same.out", "-csv", "same.out"},
		{"-csv", "x.svg", "-plot", "x.svg"},
		{"-events", "-", "-csv", "-"},
	} {
		if _, _, err := simulate(t, append(args, "testdata/morning.bhv")...); err == nil || !strings.Contains(err.Error(), "cannot both") {
			t.Errorf("simulate %q = %v, want an error: two outputs in one file", args, err)
		}
	}
}

// TestSimulateCSVColumnsLater: a column that appears during the run is in
// the header, and empty in the rows before it.
func TestSimulateCSVColumnsLater(t *testing.T) {
	files, stderr, err := simulate(t, "-csv", "out.csv", "testdata/late-sensor.bhv")
	if err != nil {
		t.Fatalf("run = %v (%s)", err, stderr)
	}
	want := "time,z.Temperature,t.current_temperature\n" +
		"2024-01-15T06:00:00,290,\n" +
		"2024-01-15T06:01:00,290,\n" +
		"2024-01-15T06:02:00,290,290\n" +
		"2024-01-15T06:03:00,290,290\n"
	if d := cmp.Diff(want, string(files["out.csv"])); d != "" {
		t.Errorf("CSV (-want +got):\n%s", d)
	}
}

// TestSimulateOutputOpenedFirst: an output that cannot be written fails
// the run before it simulates anything.
func TestSimulateOutputOpenedFirst(t *testing.T) {
	for _, args := range [][]string{
		{"-csv", filepath.Join(t.TempDir(), "missing", "x.csv")},
		{"-plot", filepath.Join(t.TempDir(), "missing", "x.png")},
	} {
		var progress bytes.Buffer
		err := run(append(args, "-for", "8760h", "testdata/morning.bhv"), io.Discard, &progress)
		if err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("run %q = %v, want an error naming %s", args, err, args[0])
		}
	}
}

// TestSimulateCSVTimesWithOffset: in a time zone with summer time, CSV
// times carry their UTC offset, so the hour the clock repeats in autumn
// reads twice, apart.
func TestSimulateCSVTimesWithOffset(t *testing.T) {
	files, stderr, err := simulate(t, "-start", "2024-10-27T01:00:00", "-tz", "Europe/Paris", "-for", "3h", "-every", "30m", "-csv", "out.csv", "testdata/morning.bhv")
	if err != nil {
		t.Fatalf("run = %v (%s)", err, stderr)
	}
	var times []string
	for _, line := range strings.Split(strings.TrimSpace(string(files["out.csv"])), "\n")[1:] {
		times = append(times, strings.Split(line, ",")[0])
	}
	want := []string{"2024-10-27T01:00:00+02:00", "2024-10-27T01:30:00+02:00", "2024-10-27T02:00:00+02:00", "2024-10-27T02:30:00+02:00",
		"2024-10-27T02:00:00+01:00", "2024-10-27T02:30:00+01:00", "2024-10-27T03:00:00+01:00"}
	if d := cmp.Diff(want, times); d != "" {
		t.Errorf("CSV times (-want +got):\n%s", d)
	}
}

// TestSimulateEndOfTime: a run that would pass the end of the year 9999
// plays to it and says so, with one sample per step, never the same
// instant twice.
func TestSimulateEndOfTime(t *testing.T) {
	files, stderr, err := simulate(t, "-start", "9999-12-31T23:00:00", "-for", "3h", "-every", "30m", "-csv", "x.csv", "testdata/morning.bhv")
	if err != nil {
		t.Fatalf("run = %v (%s)", err, stderr)
	}
	if !strings.Contains(stderr, "simulated time ends with the year 9999") {
		t.Errorf("stderr = %q, want it to say that simulated time ends", stderr)
	}
	var times []string
	for _, line := range strings.Split(strings.TrimSpace(string(files["x.csv"])), "\n")[1:] {
		times = append(times, strings.SplitN(line, ",", 2)[0])
	}
	// The last millisecond of the year: the sample is at 23:59:59.999.
	if want := []string{"9999-12-31T23:00:00", "9999-12-31T23:30:00", "9999-12-31T23:59:59.999"}; !cmp.Equal(times, want) {
		t.Errorf("samples at %v, want %v", times, want)
	}

	// East of UTC, time ends with the zone's year 9999.
	files, stderr, err = simulate(t, "-tz", "Asia/Tokyo", "-start", "9999-12-31T23:00:00", "-for", "3h", "-every", "30m", "-csv", "x.csv", "testdata/morning.bhv")
	if err != nil {
		t.Fatalf("run = %v (%s)", err, stderr)
	}
	last := strings.SplitN(lines(files["x.csv"])[len(lines(files["x.csv"]))-1], ",", 2)[0]
	if !strings.Contains(stderr, "simulated time ends") || !strings.HasPrefix(last, "9999-12-31T23:59:59") {
		t.Errorf("in Tokyo: stderr %q, last sample at %s; want the run stopped at the zone's end of 9999", stderr, last)
	}
}

func lines(b []byte) []string { return strings.Split(strings.TrimSpace(string(b)), "\n") }

// failingWriter refuses every write, as a full disk does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestSimulateEventsWriteError checks that events that could not be
// written make the run fail, rather than exit 0 with the log cut short.
func TestSimulateEventsWriteError(t *testing.T) {
	var errb bytes.Buffer
	err := run([]string{"-events", "-", "testdata/morning.bhv"}, failingWriter{}, &errb)
	if err == nil || !strings.Contains(err.Error(), "-events: no space left on device") {
		t.Fatalf("run = %v, want the -events write error", err)
	}
}

// TestSimulateInterrupted checks that a run stopped early (Ctrl-C) still
// writes what it played: a CSV with its header and rows, events as whole
// lines, a plot; and leaves no spool file behind.
func TestSimulateInterrupted(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir) // the CSV's spool file goes here
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := func(name string) string { return filepath.Join(dir, name) }
	var errb bytes.Buffer
	err := runContext(ctx, []string{"-for", "24h", "-events", out("e.jsonl"), "-csv", out("d.csv"), "-plot", out("d.svg"),
		"testdata/morning.bhv"}, io.Discard, &errb)
	if !errors.Is(err, errInterrupted) {
		t.Fatalf("run = %v, want it interrupted", err)
	}
	csv, _ := os.ReadFile(out("d.csv"))
	if rows := lines(csv); len(rows) < 2 || !strings.HasPrefix(rows[0], "time,") {
		t.Errorf("CSV of an interrupted run = %q, want its header and the rows sampled", csv)
	}
	events, _ := os.ReadFile(out("e.jsonl"))
	if len(events) == 0 || events[len(events)-1] != '\n' {
		t.Errorf("events of an interrupted run = %q, want whole lines", events)
	}
	if svg, _ := os.ReadFile(out("d.svg")); !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("plot of an interrupted run is not an SVG: %.100q", svg)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files left = %v, want only the three outputs", names)
	}
}

// TestSimulateUsageError: an error in the command line is printed once,
// with the usage, and exits with status 2, as Go's tools do; other errors
// exit with status 1.
func TestSimulateUsageError(t *testing.T) {
	var errb bytes.Buffer
	code := exitCode(run([]string{"-x", "testdata/morning.bhv"}, io.Discard, &errb), &errb)
	if n := strings.Count(errb.String(), "flag provided but not defined: -x"); code != 2 || n != 1 || !strings.Contains(errb.String(), "usage: simulate") {
		t.Errorf("-x: exit %d, stderr %q; want exit 2, the error once and the usage", code, errb.String())
	}
	for _, args := range [][]string{
		{"-physics", "fancy", "testdata/morning.bhv"}, {"-tz", "Mars/Olympus", "testdata/morning.bhv"},
		{"-start", "yesterday", "testdata/morning.bhv"}, {"-for", "soon", "testdata/morning.bhv"}, {},
	} {
		errb.Reset()
		code := exitCode(run(args, io.Discard, &errb), &errb)
		if code != 2 || strings.Count(errb.String(), "simulate: ")+strings.Count(errb.String(), "invalid value") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and the error once", args, code, errb.String())
		}
	}
	errb.Reset()
	if code := exitCode(run([]string{"testdata/malformed.bhv"}, io.Discard, &errb), &errb); code != 1 || !strings.Contains(errb.String(), "simulate: testdata/malformed.bhv") {
		t.Errorf("a script that does not parse: exit %d, stderr %q; want exit 1 and the error", code, errb.String())
	}
	if code := exitCode(run([]string{"-h"}, io.Discard, io.Discard), io.Discard); code != 0 {
		t.Errorf("-h: exit %d, want 0", code)
	}
}

// TestSimulateWholeMilliseconds: simulated time counts whole milliseconds,
// so a -for or -every with a fraction of one is a usage error. -every 1500us
// -for 3s advanced 1 ms a step and ended at 2 s; -every 1ns -for 1s took a
// billion steps without moving time.
func TestSimulateWholeMilliseconds(t *testing.T) {
	for _, args := range [][]string{
		{"-every", "1500us", "-for", "3s", "-csv", "-", "testdata/morning.bhv"},
		{"-every", "1ns", "-for", "1ms", "testdata/morning.bhv"},
		{"-for", "1500us", "testdata/morning.bhv"},
	} {
		var errb bytes.Buffer
		code := exitCode(run(args, io.Discard, &errb), &errb)
		if code != 2 || !strings.Contains(errb.String(), "whole milliseconds") {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and why", args, code, errb.String())
		}
	}
	if _, _, err := simulate(t, "-every", "1500ms", "-for", "3s", "testdata/morning.bhv"); err != nil {
		t.Errorf("-every 1500ms: %v, want it played", err)
	}
}

// TestSimulateCSVSubSecondTimes: a sample between two seconds shows its
// milliseconds, in UTC and with an offset; -every 500ms wrote each second
// twice. Whole seconds are written as ever.
func TestSimulateCSVSubSecondTimes(t *testing.T) {
	for tz, want := range map[string][]string{
		"UTC":          {"2024-01-15T06:00:00", "2024-01-15T06:00:00.5", "2024-01-15T06:00:01", "2024-01-15T06:00:01.25"},
		"Europe/Paris": {"2024-01-15T06:00:00+01:00", "2024-01-15T06:00:00.5+01:00", "2024-01-15T06:00:01+01:00", "2024-01-15T06:00:01.25+01:00"},
	} {
		files, stderr, err := simulate(t, "-tz", tz, "-start", "2024-01-15T06:00:00", "-every", "500ms", "-for", "1250ms", "-csv", "out.csv", "testdata/morning.bhv")
		if err != nil {
			t.Fatalf("%s: %v (%s)", tz, err, stderr)
		}
		var got []string
		for i, line := range strings.Split(strings.TrimSpace(string(files["out.csv"])), "\n") {
			if i > 0 {
				got = append(got, strings.SplitN(line, ",", 2)[0])
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("-tz %s: the CSV's times (-want +got):\n%s", tz, diff)
		}
	}
}

// TestSimulateStartOutOfTime: a start outside simulated time (the years 1
// to 9999, in UTC and in -tz) is refused in dates, naming -start or the
// script, not in milliseconds.
func TestSimulateStartOutOfTime(t *testing.T) {
	var errb bytes.Buffer
	err := run([]string{"-start", "0001-01-01T00:00:00", "-tz", "Asia/Tokyo", "testdata/morning.bhv"}, io.Discard, &errb)
	want := "-start: 0001-01-01 00:00:00 in Asia/Tokyo is before simulated time, which starts at 0001-01-01 09:18:59 there"
	if err == nil || !strings.HasPrefix(err.Error(), want) || exitCode(err, io.Discard) != 2 {
		t.Errorf("-start in the year 0 of UTC = %v, want %q… (exit 2)", err, want)
	}
	err = run([]string{"-start", "9999-12-31T23:59:59-01:00", "testdata/morning.bhv"}, io.Discard, &errb)
	if want := "-start: 10000-01-01 00:59:59 in UTC is after simulated time, which ends at 9999-12-31 23:59:59 there"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("-start in the year 10000 = %v, want %q…", err, want)
	}
	script := filepath.Join(t.TempDir(), "early.bhv")
	os.WriteFile(script, []byte(`<behavior startdate="01/01/0001-00:00:00"><delay value="1" unit="m"/></behavior>`), 0o644)
	err = run([]string{"-tz", "Asia/Tokyo", script}, io.Discard, &errb)
	if want := script + ": startdate: 0001-01-01 00:00:00 in Asia/Tokyo is before simulated time"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("a script's start date in the year 0 of UTC = %v, want %q…", err, want)
	}
}

// TestSimulateErrorLeavesOutputs: an error before the run (a script or a
// chain file that does not parse, an output that cannot be opened) creates
// no output and leaves those that exist as they were.
func TestSimulateErrorLeavesOutputs(t *testing.T) {
	badChain := filepath.Join(t.TempDir(), "bad.dscilia")
	os.WriteFile(badChain, []byte("<cilia><chain"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"a script that does not parse", []string{"testdata/malformed.bhv"}},
		{"a missing script", []string{"testdata/missing.bhv"}},
		{"a chain file that does not parse", []string{"-chains", badChain, "testdata/morning.bhv"}},
		{"a plot that cannot be opened", []string{"-plot", "missing/x.svg", "testdata/morning.bhv"}},
	} {
		dir := t.TempDir()
		old := filepath.Join(dir, "old.csv")
		os.WriteFile(old, []byte("kept\n"), 0o644)
		args := append([]string{"-csv", old, "-events", filepath.Join(dir, "new.jsonl")}, tc.args...)
		for i, a := range args {
			if strings.HasPrefix(a, "missing/") {
				args[i] = filepath.Join(dir, a)
			}
		}
		if err := run(args, io.Discard, io.Discard); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
		if b, _ := os.ReadFile(old); string(b) != "kept\n" {
			t.Errorf("%s: the CSV that existed holds %q, want it untouched", tc.name, b)
		}
		if _, err := os.Stat(filepath.Join(dir, "new.jsonl")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the events file was made (%v), want none", tc.name, err)
		}
	}
	// A run truncates what it overwrites.
	dir := t.TempDir()
	old := filepath.Join(dir, "old.csv")
	os.WriteFile(old, bytes.Repeat([]byte("x"), 1<<20), 0o644)
	if err := run([]string{"-csv", old, "-for", "1m", "testdata/morning.bhv"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(old); !bytes.HasPrefix(b, []byte("time,")) || bytes.Contains(b, []byte("xxx")) {
		t.Errorf("the CSV overwritten = %.100q…, want only the run's", b)
	}
}

// TestSimulateFailuresWithOtherError: the actions that failed are listed
// even when the run also ends in another error (here an output that could
// not be written).
func TestSimulateFailuresWithOtherError(t *testing.T) {
	var errb bytes.Buffer
	err := run([]string{"-csv", "-", "testdata/morning.bhv", "testdata/failing.bhv"}, failingWriter{}, &errb)
	if err == nil || !strings.Contains(err.Error(), "-csv: no space left on device") || !strings.Contains(err.Error(), "1 actions failed") {
		t.Errorf("run = %v, want the -csv error and the failed actions", err)
	}
	if !strings.Contains(errb.String(), "testdata/failing.bhv: line 4: ") {
		t.Errorf("stderr = %q, want the failed action listed", errb.String())
	}
}
