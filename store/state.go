package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pervasim/pervasim/dscilia"
	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/internal/errkind"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

// DefaultSnapshotEvery is how often, in real time, a State writes a
// snapshot of the values the simulation derives.
const DefaultSnapshotEvery = time.Second

// Config configures [Open]. Config is a plain value, safe for concurrent
// use as long as nobody modifies it.
type Config struct {
	// Dir is the state directory; it is made when missing.
	Dir string
	// Home and Engine are the server's own home and mediation engine.
	// Both are required: New panics without them.
	Home   *sim.Home
	Engine *mediation.Engine
	// Handler is the REST API the journal's changes are replayed into at
	// start, and that State.Wrap puts the journal in front of.
	Handler http.Handler
	// Location writes the snapshot's dates; nil means time.Local.
	Location *time.Location
	// SnapshotEvery is the real time between snapshots; zero means
	// DefaultSnapshotEvery.
	SnapshotEvery time.Duration
	// Logger receives warnings (a torn journal tail dropped); nil means
	// slog.Default().
	Logger *slog.Logger
	// MaxChange bounds the body of a change the journal takes: a change
	// whose body is larger is refused 413 too_large, as the handler
	// refuses a body over its bound, and never reaches Handler (one that
	// reads no body, a DELETE, would make it unjournaled).
	// Set it to the handler's own bound (httpapi.Config.MaxBodyBytes) if
	// that is not the default: a change the handler would take past
	// MaxChange is refused, and one it refuses below would be
	// journaled (and refused again at every start). Zero means
	// DefaultMaxChange; more than MaxChangeLimit means MaxChangeLimit.
	MaxChange int64
}

// DefaultMaxChange is Config.MaxChange's default: the REST handler's own
// (httpapi.DefaultMaxBodyBytes, 1 MiB).
const DefaultMaxChange = 1 << 20

// MaxChangeLimit is the most Config.MaxChange can be: a journal record
// holds at most MaxRecord bytes, the body in base64 among them.
const MaxChangeLimit = 8 << 20

// State keeps the server's home and chains in a directory: every change the
// REST API acknowledges is journaled (fsynced) before it is applied, and a
// snapshot of everything (the home as a .bhv script, the chains as DSCilia,
// the clock, the environment and which chains are stopped) is written every
// SnapshotEvery and at Close, after which older journals and snapshots are
// removed. State is safe for concurrent use.
//
// On disk, generation g is a snapshot directory snapshot-g holding the
// state after every change of the journals before journal-g, and journal-g
// the changes since. At start the newest complete snapshot is loaded and
// the journals from its generation on are replayed, in order.
type State struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex // orders journal appends and tickets
	journal *Journal
	gen     int
	ticket  uint64 // the next ticket to hand out

	turnMu sync.Mutex
	turn   sync.Cond
	served uint64 // tickets below this are done

	snapMu sync.Mutex // one snapshot at a time
	lock   *os.File   // holds the directory's lock while open (nil without flock)
	// openJournal opens a new journal; tests give one on a full disk.
	openJournal func(path string) (*Journal, error)
	closed      chan struct{}
	running     bool // guarded by mu: Open succeeded, and its loop runs
	ended       bool // guarded by mu: Close took its last snapshot
	closeOnce   sync.Once
	closeErr    error // what Close returns
	done        chan struct{}
}

// record is a journaled change: a REST request; or, first in every
// journal, its header, which holds the journal's generation and the
// home's physics model.
type record struct {
	Journal int         `json:"journal,omitempty"`
	Physics sim.Physics `json:"physics,omitempty"` // in the header
	// For, when set, makes this record what the change For left that its
	// own record could not say (see Wrap): that the server refused it for
	// want of disk (Void: it is not replayed), the clock it left, the
	// identities of the components it made.
	For        *recordID            `json:"for,omitempty"`
	Void       bool                 `json:"void,omitempty"`
	Clock      *meta                `json:"clock,omitempty"`
	Identities []mediation.Identity `json:"identities,omitempty"`

	// Action, when set, makes this record an action of a playing script
	// (see applyAction), not a request.
	Action *actionRecord `json:"action,omitempty"`

	Method string `json:"method,omitempty"`
	Path   string `json:"path"` // decoded, as url.URL's Path
	// RawPath is the path as the client escaped it (url.URL's RawPath),
	// when that differs from Path's default escaping: "a%2Fb" or "%3F" in a
	// segment route differently from "/" or "?".
	RawPath     string `json:"rawPath,omitempty"`
	Query       string `json:"query,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	Body        []byte `json:"body,omitempty"`
}

// actionRecord is a script's action as the journal keeps it: what
// sim.Action applies.
type actionRecord struct {
	Command string            `json:"command"`
	Args    map[string]string `json:"args,omitempty"`
	Line    int               `json:"line,omitempty"`
}

// recordID is where a record is: its journal's generation and its
// sequence number there.
type recordID struct {
	Journal int    `json:"journal"`
	Seq     uint64 `json:"seq"`
}

// metaFormat is the Format of the snapshots written now: their journals
// begin with a header. Snapshots without it (format 0) were written by
// versions whose journals had none.
const metaFormat = 2

// meta is what a snapshot keeps beside the home and the chains.
type meta struct {
	Format      int                   `json:"format,omitempty"`
	StartDate   int64                 `json:"startDate"` // simulated ms
	Time        int64                 `json:"time"`      // simulated ms
	Factor      int                   `json:"factor"`
	Paused      bool                  `json:"paused"`
	Environment sim.EnvironmentUpdate `json:"environment"`
	Stopped     []string              `json:"stoppedChains,omitempty"`
	// Derived holds what devices of the home's own kinds, and of the
	// built-in kinds that read on a schedule, derived over time
	// (sim.Home.OwnDerived), which home.bhv leaves out.
	Derived map[string]map[string]any `json:"derived,omitempty"`
	// Identities are the components' UUIDs and creation times.
	Identities []mediation.Identity `json:"identities,omitempty"`
}

// Open opens the state directory: it loads the newest snapshot into the
// configured home and engine and replays the journals after it through
// the handler, then starts a new journal. A torn last record is dropped
// (with a warning); any other damage is an error naming the file. The
// second result reports whether there was a state to restore.
func Open(cfg Config) (*State, bool, error) {
	s := New(cfg)
	restored, err := s.Open(cfg.Handler)
	if err != nil {
		return nil, false, err
	}
	return s, restored, nil
}

// New returns a State over cfg that is not open yet: its Wrap can be given
// to the REST API's handler before the handler exists, and the handler then
// to Open. Config.Handler is not used. New panics if cfg.Home or
// cfg.Engine is nil.
func New(cfg Config) *State {
	switch {
	case cfg.Home == nil:
		panic("store: New with a nil Config.Home")
	case cfg.Engine == nil:
		panic("store: New with a nil Config.Engine")
	}
	if cfg.SnapshotEvery <= 0 {
		cfg.SnapshotEvery = DefaultSnapshotEvery
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.MaxChange <= 0 {
		cfg.MaxChange = DefaultMaxChange
	}
	cfg.MaxChange = min(cfg.MaxChange, MaxChangeLimit)
	s := &State{cfg: cfg, log: cfg.Logger, closed: make(chan struct{}), done: make(chan struct{})}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.turn.L = &s.turnMu
	s.openJournal = func(path string) (*Journal, error) { return OpenJournal(path, 0, 0) }
	return s
}

// Open restores the state into the configured home and engine, replaying
// the journals' changes through api (the REST API's routes, without their
// guard: replayed changes were let through once), and starts a new journal
// and the snapshots. It reports whether there was a state to restore.
func (s *State) Open(api http.Handler) (bool, error) {
	select {
	case <-s.closed:
		return false, ErrClosed
	default:
	}
	s.cfg.Handler = api
	cfg := s.cfg
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return false, err
	}
	lock, err := lockDir(cfg.Dir)
	if err != nil {
		return false, err
	}
	s.lock = lock
	restored, err := s.open()
	if err != nil {
		s.unlock()
		return false, err
	}
	s.mu.Lock()
	select {
	case <-s.closed: // Close came while Open ran, and found nothing to close
		j := s.journal
		s.journal = nil
		s.mu.Unlock()
		j.Close()
		s.unlock()
		return false, ErrClosed
	default:
	}
	s.running = true
	s.mu.Unlock()
	s.cfg.Home.SetActionHook(s.applyAction)
	go s.run()
	return restored, nil
}

// applyAction is the home's action hook (sim.Home.SetActionHook): an
// action of a playing script is a change like a request's, journaled
// before it is applied and applied in its turn, so that a change that
// builds on it (a device put in the zone a script made) is replayed after
// it. What a script's start did (its clock) and its run are not kept: a
// script is not resumed. An action the journal cannot take is not applied,
// and counts among the script's errors, as a request would be refused.
func (s *State) applyAction(a sim.Action, apply func() error) error {
	payload, err := json.Marshal(record{Action: &actionRecord{Command: a.Command, Args: a.Args, Line: a.Line}})
	if err != nil {
		return err
	}
	t, g, wait, open := s.take(payload)
	if !open { // the hook is set once it is
		return apply()
	}
	seq, jerr := wait()
	s.waitTurn(t)
	defer s.endTurn(t)
	if jerr != nil {
		return errkind.Errorf(errkind.Storage, "the action could not be written to the state directory, so it was not applied: %v", jerr)
	}
	before := s.cfg.Home.Clock()
	err = apply()
	if c := s.cfg.Home.Clock(); clockMoved(before, c) {
		after := record{For: &recordID{Journal: g, Seq: seq}, Clock: clockMeta(c)}
		if aerr := s.append(after); aerr != nil {
			s.log.Warn("the clock an action left was not journaled", "err", aerr)
		}
	}
	return err
}

// ErrClosed is the error of a State's Open and Snapshot once Close was
// called, and of Snapshot before Open.
var ErrClosed = errors.New("store: the state is not open")

// unlock lets the directory's lock go.
func (s *State) unlock() {
	if s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
}

// open is Open once the directory is locked, but for the snapshots' loop.
func (s *State) open() (bool, error) {
	cfg := s.cfg
	snaps, journals, err := s.listing()
	if err != nil {
		return false, err
	}
	base := 0
	if len(snaps) > 0 {
		base = snaps[len(snaps)-1]
	}
	strict := true // journals begin with their header
	if base > 0 {
		m, err := s.readMeta(base)
		if err != nil {
			return false, err
		}
		if m.Format > metaFormat {
			// What it holds beside what this version reads would be
			// dropped, and its journals may say what this one cannot.
			return false, fmt.Errorf("%s: the state directory was written by a newer version of pervasim (format %d; this one reads formats up to %d)", filepath.Join(s.snapshotPath(base), "meta.json"), m.Format, metaFormat)
		}
		strict = m.Format >= metaFormat
	}
	js, voids, err := s.checkJournals(base, journals, strict)
	if err != nil {
		return false, err
	}
	// Journals of headers alone, without a snapshot, are no state: the
	// first start made them, and stopped before its first snapshot.
	restored := base > 0
	for _, j := range js {
		restored = restored || j.changes > 0
	}
	if base > 0 {
		if err := s.loadSnapshot(base); err != nil {
			return false, err
		}
	}
	last := base
	first := base
	if len(js) > 0 {
		first = js[0].g
	}
	for _, j := range js {
		if err := s.replay(j, first, voids); err != nil {
			return false, err
		}
		last = j.g
	}
	// New changes go to a journal of their own, after what was replayed;
	// one left empty by a crash (or a full disk) while it was made is
	// made again, so that no journal without its header stays before
	// another.
	s.gen = last + 1
	if n := len(js); n > 0 && !js[n-1].header && js[n-1].changes == 0 {
		s.gen = last
	}
	j, err := s.newJournal(s.gen)
	if err != nil {
		return false, err
	}
	if err := syncDir(cfg.Dir); err != nil {
		j.Close()
		return false, err
	}
	s.mu.Lock()
	s.journal = j // from now on, Wrap takes changes
	s.mu.Unlock()
	// What the replay made is kept as it came out at once: a change
	// journaled whose follow-up (the identities of the components it made,
	// the clock it left) a crash cut off is replayed the same way at every
	// later start only once a snapshot holds it.
	replayed := 0
	for _, j := range js {
		replayed += j.changes
	}
	if replayed > 0 {
		if err := s.Snapshot(); err != nil {
			s.log.Warn("no snapshot after the replay", "err", err)
		}
	}
	return restored, nil
}

// HasState reports whether dir holds a state that Open would restore: a
// snapshot, or a journal holding a change (a directory that does not exist
// holds none; one Open made, whose first snapshot a crash or a full disk
// cut off, neither). It reads the directory without taking its lock, so
// that a server can set a new state up (its -demo home, its -chains)
// before it opens it: a start that fails meanwhile leaves the directory
// new, where one that opened it first would leave a state, which every
// later start restores instead of setting it up. A journal it cannot
// read counts as a state, for Open to report.
func HasState(dir string) (bool, error) {
	snaps, journals, _, err := stateFiles(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil || len(snaps) > 0 {
		return err == nil, err
	}
	for _, g := range journals {
		changes := false
		_, _, _, err := Scan(journalFile(dir, g), func(_ uint64, payload []byte) error {
			var r record
			changes = changes || json.Unmarshal(payload, &r) != nil || r.Journal == 0 // not a header
			return nil
		})
		if err != nil || changes {
			return true, nil
		}
	}
	return false, nil
}

// lockName is the file of the state directory that a server holds a lock
// on while it uses the directory (see lockDir).
const lockName = "lock"

func (s *State) journalPath(g int) string { return journalFile(s.cfg.Dir, g) }

// journalFile is the path of journal g in dir.
func journalFile(dir string, g int) string {
	return filepath.Join(dir, fmt.Sprintf("journal-%09d", g))
}

func (s *State) snapshotPath(g int) string {
	return filepath.Join(s.cfg.Dir, fmt.Sprintf("snapshot-%09d", g))
}

// listing returns the generations of the complete snapshots and of the
// journals, in order. Unfinished snapshots (a crash while writing one) are
// removed.
func (s *State) listing() (snaps, journals []int, err error) {
	snaps, journals, unfinished, err := stateFiles(s.cfg.Dir)
	for _, name := range unfinished {
		os.RemoveAll(filepath.Join(s.cfg.Dir, name))
	}
	return snaps, journals, err
}

// stateFiles returns the generations of dir's complete snapshots and of
// its journals, in order, and the names of its unfinished snapshots. A
// name that starts as theirs but has no generation is an error.
func stateFiles(dir string) (snaps, journals []int, unfinished []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, e := range entries {
		name := e.Name()
		var list *[]int
		switch {
		case strings.HasPrefix(name, "snapshot-") && strings.HasSuffix(name, ".tmp"):
			unfinished = append(unfinished, name)
			continue
		case strings.HasPrefix(name, "snapshot-"):
			list = &snaps
		case strings.HasPrefix(name, "journal-"):
			list = &journals
		default:
			continue
		}
		g, err := strconv.Atoi(name[strings.IndexByte(name, '-')+1:])
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: not a file of pervasim's state", filepath.Join(dir, name))
		}
		*list = append(*list, g)
	}
	slices.Sort(snaps)
	slices.Sort(journals)
	return snaps, journals, unfinished, nil
}

// readMeta reads snapshot g's meta.json.
func (s *State) readMeta(g int) (meta, error) {
	path := filepath.Join(s.snapshotPath(g), "meta.json")
	var m meta
	data, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("%s: %v", path, err)
	}
	return m, nil
}

// loadSnapshot restores snapshot g.
func (s *State) loadSnapshot(g int) error {
	dir := s.snapshotPath(g)
	name := func(f string) string { return filepath.Join(dir, f) }
	m, err := s.readMeta(g)
	if err != nil {
		return err
	}
	home := s.cfg.Home
	if p := m.Environment.Physics; p != nil {
		if err := s.samePhysics(*p, name("meta.json")); err != nil {
			return err
		}
	}
	src, err := os.ReadFile(name("home.bhv"))
	if err != nil {
		return err
	}
	script, err := home.ParseLargeScript(bytes.NewReader(src)) // it grows with the home
	if err != nil {
		return fmt.Errorf("%s: %v", name("home.bhv"), err)
	}
	for _, a := range script.Actions {
		if err := a.Apply(home); err != nil {
			return fmt.Errorf("%s: %v", name("home.bhv"), err)
		}
	}
	if _, err := home.UpdateEnvironment(m.Environment); err != nil {
		return fmt.Errorf("%s: environment: %v", name("meta.json"), err)
	}
	start, t, f, p := m.StartDate, m.Time, m.Factor, m.Paused
	if start == 0 {
		start = t
	}
	if _, err := home.UpdateClock(sim.ClockUpdate{StartDate: &start, CurrentTime: &t, Factor: &f, Pause: &p}); err != nil {
		return fmt.Errorf("%s: clock: %v", name("meta.json"), err)
	}
	for _, id := range slices.Sorted(maps.Keys(m.Derived)) {
		if err := home.RestoreDerived(id, m.Derived[id]); err != nil {
			// The kind changed since (its code is the program's): the
			// device keeps what its behaviour derives now.
			s.log.Warn("a device's derived values were not restored", "file", name("meta.json"), "device", id, "err", err)
		}
	}
	chains, err := os.ReadFile(name("chains.dscilia"))
	if err != nil {
		return err
	}
	doc, err := dscilia.Parse(chains)
	if err != nil {
		return fmt.Errorf("%s: %v", name("chains.dscilia"), err)
	}
	err = s.cfg.Engine.Restore(func() error { // a device a chain names may have been deleted since
		_, err := dscilia.Load(s.cfg.Engine, doc, dscilia.LoadOptions{Placeholders: true})
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: %v", name("chains.dscilia"), err)
	}
	for _, id := range m.Stopped {
		if ch, err := s.cfg.Engine.Chain(id); err == nil {
			ch.Stop()
		}
	}
	s.setIdentities(m.Identities)
	return nil
}

// samePhysics refuses a state saved by a home of another physics model
// (saved, "" when the file does not say) than the configured home's: the
// model is chosen when a home is made, and the saved values follow from it.
func (s *State) samePhysics(saved sim.Physics, file string) error {
	if now := s.cfg.Home.Environment().Physics; saved != "" && saved != now {
		return fmt.Errorf("%s: the saved home uses the %s physics model, this one the %s model: a model is chosen when a home is made (start the server with -physics %s)", file, saved, now, saved)
	}
	return nil
}

// setIdentities gives the components the identities recorded for them.
func (s *State) setIdentities(ids []mediation.Identity) {
	for _, id := range ids {
		if ch, err := s.cfg.Engine.Chain(id.Chain); err == nil {
			ch.SetIdentity(id.ID, id.UUID, id.Created)
		}
	}
}

// journalInfo is what checkJournals found in a journal.
type journalInfo struct {
	g       int
	header  bool  // its first record is its header
	changes int   // records of changes
	good    int64 // bytes of whole records
	torn    bool  // a torn tail follows them
}

// checkJournals reads the journals to replay after snapshot base (0: none)
// and checks that they are the whole of what was written since: journals
// base, base+1, ... (from 1 without a snapshot) with none missing, each
// beginning with its header, and a torn tail only where a crash can leave
// one. A journal is made, header first, before any later one, and a later
// one takes changes only once every record of the earlier ones is on disk;
// so a journal without its header can only be the last one (a crash while
// making it), and a torn tail is followed by no change. Anything else is
// damage: an error wrapping ErrCorrupt that names the file.
//
// Without strict (the journals of a snapshot written by a version whose
// journals had no header), headers are not asked for.
func (s *State) checkJournals(base int, all []int, strict bool) ([]journalInfo, map[recordID]bool, error) {
	var js []journalInfo
	voids := map[recordID]bool{}
	for _, g := range all {
		if g < base {
			continue // made obsolete by the snapshot; removed by the next one
		}
		path := s.journalPath(g)
		want := max(base, 1) + len(js)
		if g != want {
			if len(js) == 0 && base > 0 {
				return nil, nil, fmt.Errorf("%w: %s is missing: snapshot %s is followed by its journal", ErrCorrupt, s.journalPath(want), s.snapshotPath(base))
			}
			if len(js) == 0 {
				return nil, nil, fmt.Errorf("%w: %s follows no snapshot: %s is missing", ErrCorrupt, path, s.snapshotPath(g))
			}
			return nil, nil, fmt.Errorf("%w: %s is missing", ErrCorrupt, s.journalPath(want))
		}
		j := journalInfo{g: g}
		var err error
		j.good, _, j.torn, err = Scan(path, func(seq uint64, payload []byte) error {
			var r record
			if err := json.Unmarshal(payload, &r); err != nil {
				return fmt.Errorf("%w: %s: record %d is not a change: %v", ErrCorrupt, path, seq, err)
			}
			if r.Void && r.For != nil {
				voids[*r.For] = true
			}
			switch {
			case r.Journal == 0:
				j.changes++
			case seq != 1 || r.Journal != g:
				return fmt.Errorf("%w: %s: record %d is the header of journal %d", ErrCorrupt, path, seq, r.Journal)
			default:
				j.header = true
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		js = append(js, j)
	}
	if base > 0 && (len(js) == 0 || js[0].g != base) {
		return nil, nil, fmt.Errorf("%w: %s is missing: snapshot %s is followed by its journal", ErrCorrupt, s.journalPath(base), s.snapshotPath(base))
	}
	for i, j := range js {
		later := 0
		for _, k := range js[i+1:] {
			later += k.changes
		}
		switch {
		case !strict || j.header:
		case i == 0 && base > 0:
			// Journal base is made before snapshot base is written.
			return nil, nil, fmt.Errorf("%w: %s is empty or cut short: snapshot %s is followed by its whole journal", ErrCorrupt, s.journalPath(j.g), s.snapshotPath(base))
		case j.changes > 0 && base == 0 && i == 0:
			// A journal of a version without headers, before its first
			// snapshot: taken as it is.
			strict = false
		case i < len(js)-1 && j.changes == 0:
			return nil, nil, fmt.Errorf("%w: %s is empty or cut short, and journals follow it", ErrCorrupt, s.journalPath(j.g))
		case i < len(js)-1 || j.changes > 0:
			return nil, nil, fmt.Errorf("%w: %s lacks its header", ErrCorrupt, s.journalPath(j.g))
		}
		if j.torn && later > 0 {
			return nil, nil, fmt.Errorf("%w: %s is cut short at byte %d, and later journals hold changes", ErrCorrupt, s.journalPath(j.g), j.good)
		}
	}
	return js, voids, nil
}

// replay applies the changes of journal j through the handler, but those
// voided, and the clocks changes left when their change is replayed too
// (journal first on: one before is in the snapshot, and so is its clock,
// later); and it cuts a torn tail off j (with a warning).
func (s *State) replay(j journalInfo, first int, voids map[recordID]bool) error {
	path := s.journalPath(j.g)
	_, _, _, err := Scan(path, func(seq uint64, payload []byte) error {
		var r record
		if err := json.Unmarshal(payload, &r); err != nil {
			return fmt.Errorf("%s: a record is not a change: %v", path, err)
		}
		switch {
		case r.Journal != 0: // the header
			if err := s.samePhysics(r.Physics, path); err != nil {
				return err
			}
		case r.For == nil:
			if !voids[recordID{j.g, seq}] {
				if a := r.Action; a != nil {
					// It failed, if it did, as it did live (a used id, a
					// bound reached): the script counted the error then.
					sim.Action{Command: a.Command, Args: a.Args, Line: a.Line}.Apply(s.cfg.Home)
				} else if rec := s.apply(r); rec.Code == http.StatusServiceUnavailable || rec.Code == http.StatusInsufficientStorage {
					// It was made (a change refused so is voided), unless a
					// crash came before its answer: the server's bounds are
					// lower now (-max-chains…), or the disk is full.
					s.log.Warn("a change of the journal is refused at its replay, and lost if it had been acknowledged: start the server with the bounds it had, or free disk space",
						"file", path, "record", seq, "method", r.Method, "path", r.Path, "status", rec.Code, "answer", strings.TrimSpace(rec.Body.String()))
				}
				// What the change set off in the home's scheduler at this
				// simulated instant (a chain's device-out applies through
				// it) ran, live, as soon as the driver ran, before the next
				// request: it runs now too, and not after the changes that
				// followed it (the driver starts once the replay is done).
				// As the driver does it: a running clock's fast factor
				// makes no long series of periodic updates.
				s.cfg.Home.RunDue()
			}
		case r.Void || r.For.Journal < first:
			// Not replayed, or in the snapshot with what it left.
		default:
			s.setIdentities(r.Identities)
			if c := r.Clock; c != nil {
				if _, err := s.cfg.Home.UpdateClock(sim.ClockUpdate{StartDate: &c.StartDate, CurrentTime: &c.Time, Factor: &c.Factor, Pause: &c.Paused}); err != nil {
					return fmt.Errorf("%w: %s: the clock of a change: %v", ErrCorrupt, path, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if j.torn {
		s.log.Warn("dropped the torn last write of the journal", "file", path, "at", j.good)
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := f.Truncate(j.good); err != nil {
			return err
		}
		return f.Sync()
	}
	return nil
}

// newJournal makes journal g, its header written and on disk.
func (s *State) newJournal(g int) (*Journal, error) {
	j, err := s.openJournal(s.journalPath(g))
	if err != nil {
		return nil, err
	}
	h, _ := json.Marshal(record{Journal: g, Physics: s.cfg.Home.Environment().Physics})
	if _, err := j.Append(h); err != nil {
		j.Close()
		return nil, err
	}
	return j, nil
}

// apply serves a recorded change, and returns the response. The request
// gets the recorded URL as it was parsed, never parsed again, so that any
// path the server took (spaces, escaped "?" or "/") routes as it did.
func (s *State) apply(r record) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(r.Body))
	req.Method = r.Method
	req.URL = &url.URL{Path: r.Path, RawPath: r.RawPath, RawQuery: r.Query}
	req.RequestURI = req.URL.RequestURI()
	req.Host = "localhost"
	req.RemoteAddr = "127.0.0.1:0"
	if r.ContentType != "" {
		req.Header.Set("Content-Type", r.ContentType)
	}
	rec := httptest.NewRecorder()
	s.cfg.Handler.ServeHTTP(rec, req)
	return rec
}

// Journaled reports whether a request is a change the state keeps: any
// method but GET, HEAD and OPTIONS, except messages sent into chains
// (<root>/runtime/<chain>/components/<id>/data) and a script's playing,
// pausing or stopping (<root>/scriptPlayer/script/<id>): they are what
// runs, not what is; and the homes made under /homes (they are not kept).
// Paths are matched segment by segment, so that a zone, device, chain or
// component whose id is "data" or "script" is kept like any other.
func Journaled(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	seg := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	switch {
	case seg[0] == "homes":
		return false
	case len(seg) == 6 && seg[1] == "runtime" && seg[3] == "components" && seg[5] == "data":
		return false
	case len(seg) == 4 && seg[1] == "scriptPlayer" && seg[2] == "script":
		return false
	}
	return true
}

// Wrap returns h with the journal in front: a change is written to the
// journal and fsynced (sharing the fsync with the changes that come at the
// same moment) before h applies it, in the journal's order, so that a
// change that is acknowledged is on disk, and one that the disk refuses
// (full) is neither applied nor acknowledged: 507 insufficient_storage.
// The handler's own answer goes out as it is; a change it refuses is
// replayed at start and refused again, the same way. A change whose body
// is over Config.MaxChange, which the journal does not take, is refused
// 413 too_large before the handler sees it.
func (s *State) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !Journaled(r) {
			h.ServeHTTP(w, r)
			return
		}
		// A change the journal cannot take is refused here, as the
		// handler refuses a body over its bound, not left to the handler:
		// one that reads no body (a DELETE) would make it, acknowledged
		// but not journaled, and a restart would undo it. A declared
		// length decides unread, so that a client waiting for 100
		// Continue is not asked to send it.
		// Read as the handler reads it, refused in its words: a declared
		// length over the bound unread (a client waiting for 100
		// Continue is not asked to send it), a longer body with the
		// connection closed rather than the rest read.
		body, err := httpapi.ReadBody(w, r, s.cfg.MaxChange)
		if err != nil {
			httpapi.WriteError(w, r, err)
			return
		}
		rec := record{Method: r.Method, Path: r.URL.Path, RawPath: r.URL.RawPath, Query: r.URL.RawQuery, ContentType: r.Header.Get("Content-Type"), Body: body}
		payload, err := json.Marshal(rec)
		if err != nil {
			httpapi.WriteError(w, r, err) // 500: strings and bytes always marshal
			return
		}
		t, g, wait, open := s.take(payload)
		if !open {
			// Not open yet: the state is being restored (a device update
			// over NATS may come meanwhile), and a change now would be
			// neither journaled nor ordered after what is replayed.
			httpapi.WriteError(w, r, errkind.Errorf(errkind.Busy, "the server is starting: its state is being restored"))
			return
		}
		seq, jerr := wait()
		s.waitTurn(t)
		turn := true // held: ended below, or here should h panic
		defer func() {
			if turn {
				s.endTurn(t)
			}
		}()
		if jerr != nil {
			httpapi.WriteError(w, r, errkind.Errorf(errkind.Storage, "the change could not be written to the state directory, so it was not made: %v", jerr))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		before, made := s.cfg.Home.Clock(), s.cfg.Engine.Made()
		held := &heldAnswer{w: w}
		h.ServeHTTP(held, r)
		// What the change left that its own record cannot say goes to the
		// journal in one more record, before the answer: the identities of
		// the components it made (kept at replay), the clock it left (a
		// pause or a new factor would otherwise take effect at the instant
		// of the replay), and that it was refused for want of disk (a
		// script the scripts directory could not take: not made at replay
		// either, when there may be room) or for a bound reached (503: not
		// made at replay either, should the server restart with higher
		// bounds).
		after := record{For: &recordID{Journal: g, Seq: seq}, Void: held.status == http.StatusInsufficientStorage || held.status == http.StatusServiceUnavailable}
		if s.cfg.Engine.Made() != made {
			after.Identities = s.cfg.Engine.Identities(made)
		}
		if c := s.cfg.Home.Clock(); clockMoved(before, c) {
			after.Clock = clockMeta(c)
		}
		if after.Void || after.Identities != nil || after.Clock != nil {
			if err := s.append(after); err != nil {
				s.log.Warn("what a change left was not journaled: after a crash, it may be made again, or its clock instant or new components' identities differ", "err", err)
			}
		}
		turn = false
		s.endTurn(t)
		held.send()
	})
}

// take queues payload in the journal and hands it a ticket, its turn
// among the changes, with the journal's generation and the function that
// waits for the record to be on disk; false when the journal is not open.
func (s *State) take(payload []byte) (t uint64, g int, wait func() (uint64, error), open bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.journal == nil {
		return 0, 0, nil, false
	}
	t, g = s.ticket, s.gen
	s.ticket++
	return t, g, s.journal.enqueue(payload), true
}

// clockMeta is what a record keeps of clock c.
func clockMeta(c sim.Clock) *meta {
	return &meta{StartDate: c.StartDate, Time: c.CurrentTime, Factor: c.Factor, Paused: c.Pause}
}

// clockMoved reports whether the clock was changed between two readings:
// its start date, factor or pause, or its time set back (a start date set
// again restarts simulated time there). Time running on is no change.
func clockMoved(before, after sim.Clock) bool {
	return after.StartDate != before.StartDate || after.Factor != before.Factor || after.Pause != before.Pause ||
		after.CurrentTime < before.CurrentTime
}

// append journals r and returns once it is on disk; it is called by a
// change holding its turn.
func (s *State) append(r record) error {
	payload, err := json.Marshal(r)
	if err != nil {
		return err
	}
	s.mu.Lock()
	wait := s.journal.enqueue(payload)
	s.mu.Unlock()
	_, err = wait()
	return err
}

// heldAnswer keeps a handler's answer (its status and body; headers go to
// w as they are set) until send.
type heldAnswer struct {
	w      http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (a *heldAnswer) Header() http.Header { return a.w.Header() }

func (a *heldAnswer) WriteHeader(code int) {
	if a.status == 0 {
		a.status = code
	}
}

func (a *heldAnswer) Write(p []byte) (int, error) {
	a.WriteHeader(http.StatusOK)
	return a.body.Write(p)
}

// send writes the answer.
func (a *heldAnswer) send() {
	a.WriteHeader(http.StatusOK)
	a.w.WriteHeader(a.status)
	a.w.Write(a.body.Bytes())
}

// waitTurn waits until every ticket before t is served.
func (s *State) waitTurn(t uint64) {
	s.turnMu.Lock()
	for s.served != t {
		s.turn.Wait()
	}
	s.turnMu.Unlock()
}

// endTurn lets ticket t+1 go.
func (s *State) endTurn(t uint64) {
	s.turnMu.Lock()
	s.served = t + 1
	s.turnMu.Unlock()
	s.turn.Broadcast()
}

// run writes a snapshot every SnapshotEvery, or less often for a home so
// large that one takes more than a tenth of that (see snapshotPause), until
// Close.
func (s *State) run() {
	defer close(s.done)
	timer := time.NewTimer(s.cfg.SnapshotEvery)
	defer timer.Stop()
	for {
		select {
		case <-s.closed:
			return
		case <-timer.C:
		}
		start := time.Now()
		if err := s.Snapshot(); err != nil {
			s.log.Error("snapshot", "err", err)
		}
		timer.Reset(snapshotPause(s.cfg.SnapshotEvery, time.Since(start)))
	}
}

// snapshotPause is the time from the end of a snapshot that took took to
// the start of the next: the rest of every, or nine times took when that
// is more. Changes wait while a snapshot captures the state, so snapshots
// take at most a tenth of the time: a snapshot of 10,000 devices takes
// about 30 ms (BenchmarkSnapshot), one of 60,000 seconds on a loaded
// machine, where snapshots every second held nearly every change up.
func snapshotPause(every, took time.Duration) time.Duration {
	return max(every-took, 9*took)
}

// Snapshot writes a snapshot of the state now and removes what it makes
// obsolete. It takes its turn among the changes, so that it holds exactly
// the changes journaled before it. Before Open (or after one that
// failed) and after Close it writes nothing and returns ErrClosed: the
// directory is not the State's then (another server may hold it).
func (s *State) Snapshot() error {
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	s.mu.Lock()
	open := s.journal != nil && !s.ended
	s.mu.Unlock()
	if !open {
		return ErrClosed
	}
	return s.snapshot()
}

// snapshot is Snapshot, snapMu held.
func (s *State) snapshot() error {
	// Make the next journal, then take a turn and switch to it: changes
	// after the snapshot go there, and only once every record of the old
	// one is on disk, so that a crash can leave a torn tail only where no
	// change follows it (see checkJournals).
	s.mu.Lock()
	g := s.gen + 1
	s.mu.Unlock()
	next, err := s.newJournal(g) // only Snapshot changes s.gen, one at a time
	if err != nil {
		return err
	}
	s.mu.Lock()
	t := s.ticket
	s.ticket++
	old := s.journal
	old.Close() // every record enqueued in it is on disk (or cut off) first
	s.journal, s.gen = next, g
	s.mu.Unlock()

	s.waitTurn(t)
	var home, chains bytes.Buffer
	m, err := s.capture(&home, &chains)
	s.endTurn(t)
	if err != nil {
		return err
	}
	return s.writeSnapshot(g, m, home.Bytes(), chains.Bytes())
}

// capture writes the home and the chains as they are now.
func (s *State) capture(home, chains io.Writer) (meta, error) {
	h := s.cfg.Home
	if err := sim.WriteScript(home, h, s.cfg.Location); err != nil {
		return meta{}, err
	}
	var doc dscilia.Document
	var m meta
	for _, id := range s.cfg.Engine.Chains() {
		ch, err := s.cfg.Engine.Chain(id)
		if err != nil {
			continue
		}
		c, err := dscilia.Export(ch)
		if err != nil {
			return meta{}, err
		}
		doc.Chains = append(doc.Chains, c)
		if ch.State() != "started" {
			m.Stopped = append(m.Stopped, id)
		}
	}
	if err := dscilia.Write(chains, &doc); err != nil {
		return meta{}, err
	}
	m.Identities = s.cfg.Engine.Identities(0)
	m.Derived = h.OwnDerived()
	c := h.Clock()
	m.Format = metaFormat
	m.StartDate, m.Time, m.Factor, m.Paused = c.StartDate, c.CurrentTime, c.Factor, c.Pause
	env := h.Environment()
	m.Environment = sim.EnvironmentUpdate{Physics: &env.Physics, Latitude: &env.Latitude, Longitude: &env.Longitude, Sky: &env.Sky, WindowShare: &env.WindowShare}
	if env.OutdoorMin != nil {
		m.Environment.OutdoorMin, m.Environment.OutdoorMax = env.OutdoorMin, env.OutdoorMax
	} else {
		m.Environment.OutdoorTemperature = &env.OutdoorTemperature
	}
	return m, nil
}

// writeSnapshot writes generation g's snapshot: into a temporary directory,
// fsynced, then renamed, so that a snapshot is whole or absent. Then it
// removes the older journals and snapshots.
func (s *State) writeSnapshot(g int, m meta, home, chains []byte) error {
	tmp := s.snapshotPath(g) + ".tmp"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{"home.bhv": home, "chains.dscilia": chains, "meta.json": mb} {
		if err := writeFileSync(filepath.Join(tmp, name), data); err != nil {
			return err
		}
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, s.snapshotPath(g)); err != nil {
		return err
	}
	if err := syncDir(s.cfg.Dir); err != nil {
		return err
	}
	snaps, journals, err := s.listing()
	if err != nil {
		return err
	}
	for _, x := range snaps {
		if x < g {
			os.RemoveAll(s.snapshotPath(x))
		}
	}
	for _, x := range journals {
		if x < g {
			os.Remove(s.journalPath(x))
		}
	}
	return syncDir(s.cfg.Dir)
}

func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir fsyncs a directory, so that the names in it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// Close writes a last snapshot and closes the journal. It is safe to call
// more than once, and concurrently: every call returns once that is done,
// with its error. Close of a State never opened, or whose Open failed, does
// nothing and returns nil; the State cannot be opened after it.
func (s *State) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *State) close() error {
	s.mu.Lock()
	close(s.closed)
	running := s.running
	s.mu.Unlock()
	if !running { // never opened, or its Open failed: nothing to close
		return nil
	}
	<-s.done
	// The script player's actions apply as without a state from now on:
	// the last snapshot holds what they did until it.
	s.cfg.Home.SetActionHook(nil)
	s.snapMu.Lock()
	err := s.snapshot()
	s.mu.Lock()
	s.ended = true
	j := s.journal
	s.mu.Unlock()
	s.snapMu.Unlock()
	if cerr := j.Close(); err == nil {
		err = cerr
	}
	s.unlock()
	return err
}
