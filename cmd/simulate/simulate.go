package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pervasim/pervasim/bridge"
	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
	"github.com/pervasim/pervasim/store"
)

// defaultStart is where simulated time starts when neither -start nor the
// first script gives a date: a fixed date, so that outputs do not depend on
// when the command runs.
var defaultStart = time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC)

// options are the command-line flags.
type options struct {
	dur     time.Duration
	physics string
	start   string
	tz      string
	loc     *time.Location // of -tz
	startAt time.Time      // -start read, or zero
	events  string
	csv     string
	plot    string
	every   time.Duration
	chains  []string
	holders bool
	scripts []string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: simulate [flags] SCRIPT.bhv…")
		fmt.Fprintln(fs.Output(), "Plays the scripts in simulated time, one after the other, as fast as the machine allows.")
		fs.PrintDefaults()
	}
	fs.DurationVar(&o.dur, "for", 0, "simulated duration (default: to the end of the scripts)")
	fs.StringVar(&o.physics, "physics", "contract", "physics model: contract or realistic")
	fs.StringVar(&o.start, "start", "", "start date, dd/MM/yyyy-HH:mm:ss or 2006-01-02T15:04:05 (default: the first script's, else 15/01/2024-00:00:00)")
	fs.StringVar(&o.tz, "tz", "UTC", "IANA time zone of dates, in and out")
	fs.StringVar(&o.events, "events", "", "write every event to FILE as one JSON object per line (- for stdout)")
	fs.StringVar(&o.csv, "csv", "", "write each zone's variables and each sensor's readings to FILE as CSV, sampled every -every (- for stdout)")
	fs.StringVar(&o.plot, "plot", "", "draw each zone's temperature and illuminance to FILE (.svg or .png)")
	fs.DurationVar(&o.every, "every", time.Minute, "sampling period of -csv and -plot, in simulated time")
	fs.Func("chains", "run the chains of this DSCilia file (or of the *.dscilia files of this directory) beside the home, from the scripts' first instant on; may be repeated", func(v string) error {
		o.chains = append(o.chains, v)
		return nil
	})
	fs.BoolVar(&o.holders, "placeholders", false, "with -chains, stand in for the component types pervasim does not have with placeholders")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		// The flag package has printed the error and the usage.
		return o, &usageError{err: err, printed: true}
	}
	o.scripts = fs.Args()
	switch {
	case len(o.scripts) == 0:
		fs.Usage()
		return o, &usageError{err: errors.New("no script given")}
	case o.dur < 0:
		return o, &usageError{err: errors.New("-for must not be negative")}
	case o.every <= 0:
		return o, &usageError{err: errors.New("-every must be positive")}
	// Simulated time counts whole milliseconds (sim.Home.Advance truncates
	// to them): -every 1500us played 1 ms a step, so that -for 3s ended at
	// 2 s, and -every 1ns took a billion steps that moved time by nothing.
	case o.dur%time.Millisecond != 0:
		return o, &usageError{err: fmt.Errorf("-for %v: simulated time counts whole milliseconds", o.dur)}
	case o.every%time.Millisecond != 0:
		return o, &usageError{err: fmt.Errorf("-every %v: simulated time counts whole milliseconds", o.every)}
	case sim.Physics(o.physics) != sim.PhysicsContract && sim.Physics(o.physics) != sim.PhysicsRealistic:
		return o, &usageError{err: fmt.Errorf("-physics: %q is not contract or realistic", o.physics)}
	case o.plot != "" && plotFormat(o.plot) == "":
		return o, &usageError{err: fmt.Errorf("-plot: %q: want a .svg or .png file", o.plot)}
	}
	// Two outputs in one file would overwrite each other.
	seen := map[string]string{}
	for _, out := range []struct{ flag, name string }{{"-events", o.events}, {"-csv", o.csv}, {"-plot", o.plot}} {
		if out.name == "" {
			continue
		}
		key := out.name
		if key != "-" {
			if abs, err := filepath.Abs(key); err == nil {
				key = abs
			}
		}
		if other, ok := seen[key]; ok {
			if key == "-" {
				return o, &usageError{err: fmt.Errorf("%s and %s cannot both go to stdout", other, out.flag)}
			}
			return o, &usageError{err: fmt.Errorf("%s and %s cannot both write %s", other, out.flag, out.name)}
		}
		seen[key] = out.flag
	}
	var err error
	if o.loc, err = time.LoadLocation(o.tz); err != nil {
		return o, &usageError{err: fmt.Errorf("-tz: %w", err)}
	}
	if o.start != "" {
		if o.startAt, err = parseStart(o.start, o.loc); err != nil {
			return o, &usageError{err: err}
		}
		if err := inTimeSpan(o.startAt, o.loc); err != nil {
			return o, &usageError{err: fmt.Errorf("-start: %w", err)}
		}
	}
	return o, nil
}

// usageError is an error in the command line: the flags or the arguments.
// The command exits with status 2 for it, as Go's tools do.
type usageError struct {
	err     error
	printed bool // by the flag package, with the usage
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// exitCode prints err to stderr, unless the flag package did, and returns
// the command's exit status: 0 without error (or for -h), 2 for an error in
// the command line, 1 for any other.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ue *usageError
	if errors.As(err, &ue) {
		if !ue.printed {
			fmt.Fprintln(stderr, "simulate:", err)
		}
		return 2
	}
	fmt.Fprintln(stderr, "simulate:", err)
	return 1
}

// plotFormat returns "svg" or "png" after the file name's extension, in
// any case, or "" for another.
func plotFormat(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".svg":
		return "svg"
	case ".png":
		return "png"
	}
	return ""
}

// parseStart reads -start.
func parseStart(s string, loc *time.Location) (time.Time, error) {
	for _, layout := range []string{sim.DateLayout, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("-start: %q is not a date such as 15/01/2024-06:30:00 or 2024-01-15T06:30:00", s)
}

// inTimeSpan checks that t is in simulated time ([sim.TimeSpan]), with an
// error that says so in dates rather than in milliseconds.
func inTimeSpan(t time.Time, loc *time.Location) error {
	first, last := sim.TimeSpan(loc)
	years := "in UTC"
	if loc != time.UTC {
		years = "in UTC and in " + loc.String()
	}
	switch {
	case t.Before(first):
		return fmt.Errorf("%s in %s is before simulated time, which starts at %s there (the year 1 %s)",
			t.In(loc).Format(time.DateTime), loc, first.In(loc).Format(time.DateTime), years)
	case t.After(last):
		return fmt.Errorf("%s in %s is after simulated time, which ends at %s there (the year 9999 %s)",
			t.In(loc).Format(time.DateTime), loc, last.In(loc).Format(time.DateTime), years)
	}
	return nil
}

// output is one of the command's outputs: its flag and the file it names
// ("-" for stdout); once open, where it writes.
type output struct {
	flag, name string
	w          io.Writer
	f          *os.File // nil for stdout
}

// close closes the output's file, if any and not closed yet.
func (o *output) close() error {
	f := o.f
	if f == nil {
		return nil
	}
	o.f = nil
	return f.Close()
}

// openOutputs opens the outputs that name a file ("-" for stdout) for
// writing, all or none, and returns them in their order, nil for those
// without a name. A file is truncated only once every one is open; if one
// cannot be, those opened are closed, and those made removed, so that the
// files are as they were.
func openOutputs(stdout io.Writer, outs ...output) ([]*output, error) {
	opened := make([]*output, len(outs))
	var made []string
	undo := func() {
		for _, o := range opened {
			if o != nil {
				o.close()
			}
		}
		for _, name := range made {
			os.Remove(name)
		}
	}
	for i, o := range outs {
		switch o.name {
		case "":
			continue
		case "-":
			o.w = stdout
			opened[i] = &o
			continue
		}
		f, err := os.OpenFile(o.name, os.O_WRONLY, 0)
		if errors.Is(err, fs.ErrNotExist) {
			if f, err = os.OpenFile(o.name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666); err == nil {
				made = append(made, o.name)
			}
		}
		if err != nil {
			undo()
			return nil, fmt.Errorf("%s: %w", o.flag, err)
		}
		o.w, o.f = f, f
		opened[i] = &o
	}
	for _, o := range opened {
		if o == nil || o.f == nil {
			continue
		}
		// As os.Create would: a regular file starts empty (a device or a
		// pipe cannot be truncated, and need not be).
		if fi, err := o.f.Stat(); err == nil && fi.Mode().IsRegular() {
			if err := o.f.Truncate(0); err != nil {
				undo()
				return nil, fmt.Errorf("%s: %w", o.flag, err)
			}
		}
	}
	return opened, nil
}

// readChains reads and parses the DSCilia files of -chains (a file, or
// the *.dscilia files of a directory), so that one missing or malformed is
// an error before the run; loading them, once the scripts' first instant
// has run, may still fail (an unknown type, say).
func readChains(paths []string) ([]store.ChainFile, error) {
	var files []store.ChainFile
	for _, path := range paths {
		f, err := store.ReadChains(path)
		if err != nil {
			return nil, fmt.Errorf("-chains: %w", err)
		}
		files = append(files, f...)
	}
	return files, nil
}

// scriptFile is a parsed script and where it came from.
type scriptFile struct {
	path   string
	script *sim.Script
}

// loadChains loads the chains of the DSCilia files into engine, all of
// them started, as the server's -chains does.
func loadChains(engine *mediation.Engine, files []store.ChainFile, placeholders bool) error {
	for _, f := range files {
		if err := f.Load(engine, placeholders); err != nil {
			return fmt.Errorf("-chains: %w", err)
		}
	}
	return nil
}

func run(args []string, stdout, stderr io.Writer) error {
	return runContext(context.Background(), args, stdout, stderr)
}

// errInterrupted is the error of a run whose context was cancelled (by
// Ctrl-C or SIGTERM): what was played until then is written.
var errInterrupted = errors.New("interrupted")

// runContext is run, stopping early, between two steps of -every, when
// ctx is done: the outputs then hold the run up to that instant, the CSV
// and the plot as complete files and the events as whole lines.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	loc := o.loc
	home, err := sim.New(sim.Config{WallClock: clock.NewMock(), Location: loc, Physics: sim.Physics(o.physics), StartDate: defaultStart})
	if err != nil {
		return err
	}
	var scripts []scriptFile
	for _, path := range o.scripts {
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		s, err := home.ParseLargeScript(bytes.NewReader(src)) // the user's own files
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		scripts = append(scripts, scriptFile{path: path, script: s})
	}
	start := defaultStart
	switch {
	case o.start != "":
		start = o.startAt
	case !scripts[0].script.StartDate.IsZero():
		start = scripts[0].script.StartDate
		if err := inTimeSpan(start, loc); err != nil {
			return fmt.Errorf("%s: startdate: %w", scripts[0].path, err)
		}
	}
	// Everything that can be checked is before an output is created or
	// truncated: an error before the run leaves the files as they were.
	chains, err := readChains(o.chains)
	if err != nil {
		return err
	}
	var samples *sampler
	if o.csv != "" || o.plot != "" {
		if samples, err = newSampler(home, loc, o.csv != "", o.plot != ""); err != nil {
			return err
		}
		defer samples.close()
	}
	// The CSV and the plot are written at the end (the CSV's header holds
	// every column the run saw), but their files are opened now, with the
	// events', so that one that cannot be is an error before the run, not
	// after it.
	outs, err := openOutputs(stdout, output{flag: "-events", name: o.events}, output{flag: "-csv", name: o.csv}, output{flag: "-plot", name: o.plot})
	if err != nil {
		return err
	}
	eventsOut, csvOut, plotOut := outs[0], outs[1], outs[2]
	defer func() { // on an early return; after writing, closing again does nothing
		for _, o := range outs {
			if o != nil {
				o.close()
			}
		}
	}()
	// The events, from the first: the clock set to the run's start too.
	var events *bufio.Writer
	nEvents := 0
	if eventsOut != nil {
		events = bufio.NewWriterSize(eventsOut.w, 1<<16)
		// The deferred function sets run's own err, or a write that failed
		// (a full disk) would exit 0 with the events cut.
		defer func() {
			ferr := events.Flush()
			if cerr := eventsOut.close(); ferr == nil {
				ferr = cerr
			}
			if ferr != nil {
				err = errors.Join(err, fmt.Errorf("-events: %w", ferr))
			}
		}()
		stop := home.Observe(func(e sim.Event) {
			events.Write(httpapi.EventJSON(e))
			events.WriteByte('\n')
			nEvents++
		})
		defer stop()
	}
	ms := start.UnixMilli()
	if _, err := home.UpdateClock(sim.ClockUpdate{StartDate: &ms}); err != nil {
		return err
	}

	// The scripts' actions, one script after the other.
	var failures []string
	var end time.Duration
	for _, sf := range scripts {
		for _, a := range sf.script.Actions {
			home.After(end+a.Offset, func() {
				if err := a.Apply(home); err != nil {
					failures = append(failures, fmt.Sprintf("%s: %v", sf.path, err))
				}
			})
		}
		end += sf.script.Length // trailing delays included: the next script starts after them
	}

	// The chains, once the scripts' first instant has made the devices
	// their adapters name.
	var chainErr error
	var engineClock *clock.Mock // follows simulated time, with -chains
	if len(o.chains) > 0 {
		engineClock = clock.NewMock()
		engineClock.Set(start)
		engine := mediation.NewEngine(mediation.Config{Clock: engineClock, Output: stderr})
		defer engine.Close()
		b, err := bridge.New(home, engine)
		if err != nil {
			return err
		}
		defer b.Close()
		home.After(0, func() { chainErr = loadChains(engine, chains, o.holders) })
	}
	total := end
	if o.dur > 0 {
		total = o.dur
	}
	if end := home.End(); total.Milliseconds() > end.UnixMilli()-ms {
		total = time.Duration(end.UnixMilli()-ms) * time.Millisecond
		fmt.Fprintf(stderr, "simulate: simulated time ends with the year 9999: playing to %s only\n", end.Format(time.DateTime))
	}

	progress := newProgress(stderr, start, total)

	// Play: step by -every, sampling after each step.
	played := func() error {
		if err := home.Advance(0); err != nil {
			return err
		}
		if chainErr != nil {
			return chainErr
		}
		if err := samples.take(); err != nil {
			return err
		}
		for done := time.Duration(0); done < total; {
			if ctx.Err() != nil {
				progress.finish()
				return fmt.Errorf("%w at %s: the outputs hold the run until then", errInterrupted, home.Now().In(loc).Format(time.DateTime))
			}
			step := min(o.every, total-done)
			if err := home.Advance(step); err != nil {
				return err
			}
			done += step
			if engineClock != nil {
				engineClock.Set(home.Now())
			}
			if err := samples.take(); err != nil {
				return err
			}
			progress.show(done, home.Now(), nEvents)
		}
		progress.finish()
		return nil
	}()

	// What can be written is, whatever else failed.
	var errs []error
	if played != nil {
		errs = append(errs, played)
	}
	if csvOut != nil {
		werr := samples.writeCSV(csvOut.w)
		if cerr := csvOut.close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			errs = append(errs, fmt.Errorf("-csv: %w", werr))
		}
	}
	if plotOut != nil {
		perr := samples.plot(plotOut.f, loc) // a file: -plot cannot be stdout
		if cerr := plotOut.close(); perr == nil {
			perr = cerr
		}
		if perr != nil {
			errs = append(errs, fmt.Errorf("-plot: %w", perr))
		}
	}
	// The actions that failed are listed whatever else went wrong.
	for _, f := range failures {
		fmt.Fprintln(stderr, f)
	}
	if len(failures) > 0 {
		errs = append(errs, fmt.Errorf("%d actions failed", len(failures)))
	}
	return errors.Join(errs...)
}
