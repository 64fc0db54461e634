package sim

import (
	"bytes"
	"slices"
	"strings"
	"time"
)

// Script states, as the script player reports them.
const (
	ScriptStarted = "started"
	ScriptPaused  = "paused"
	ScriptStopped = "stopped"
)

// ScriptInfo describes a script of the player, in the shape of the original
// iCasa script player.
type ScriptInfo struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// State is "started", "paused" or "stopped".
	State string `json:"state"`
	// CompletePercent is the share of the script's actions done, 0 to 100.
	CompletePercent float64 `json:"completePercent"`
	// ActionNumber is how many actions the script has.
	ActionNumber int `json:"actionNumber"`
	// StartDate is the script's start date, dd/MM/yyyy-HH:mm:ss, or "" when
	// the script keeps the clock's time.
	StartDate string `json:"startDate"`
	// Factor is the clock factor the script sets.
	Factor int `json:"factor"`
	// ExecutionTime is the sum of the script's delays, in ms, those after
	// the last action included (iCasa's execution time). The player does
	// not wait for those: a script is stopped, at 100 %, once its last
	// action has run, and one without actions as it starts, at 0 % (see
	// Home.SetScriptState).
	ExecutionTime int64 `json:"executionTime"`
	// Problems lists the actions that will fail whenever the script is
	// played (see [Script.Problems]), with their lines.
	Problems []string `json:"problems,omitempty"`
	// Errors counts the actions that failed during the last run; LastError
	// says why the last one did.
	Errors    int    `json:"errors"`
	LastError string `json:"lastError,omitempty"`
}

// scriptPlayer is the script player: its scripts, and the hook its actions
// are applied through (see Home.SetActionHook). It is apart from the Home,
// which keeps within a size class of the allocator, and made with the
// first script or hook: a nil one has neither (its get, all and remove
// say so), and most homes never play a script.
type scriptPlayer struct {
	ordered[playerScript, *playerScript]
	hook func(Action, func() error) error
}

func (sp *scriptPlayer) get(id string) (*playerScript, bool) {
	if sp == nil {
		return nil, false
	}
	return sp.ordered.get(id)
}

func (sp *scriptPlayer) all() []*playerScript {
	if sp == nil {
		return nil
	}
	return sp.ordered.all()
}

func (sp *scriptPlayer) remove(id string) {
	if sp != nil {
		sp.ordered.remove(id)
	}
}

// playerScript is a script known to the player, and its run.
type playerScript struct {
	id     string
	source []byte
	script *Script
	cost   int // ScriptCost(source, script)
	state  string
	done   int // actions applied in this run
	next   int // the next action to apply
	errors int
	last   string
	gen    int      // bumped whenever the scheduled timers stop counting
	run    int      // bumped when a run starts or the script is replaced
	origin int64    // simulated time the run started, moved by pauses
	paused int64    // when it was paused
	timers []*timer // the scheduled timers of actions next..
}

func (p *playerScript) info(loc *time.Location) ScriptInfo {
	s := ScriptInfo{
		ID: p.id, Name: strings.TrimSuffix(p.id, ".bhv"), State: p.state,
		ActionNumber: len(p.script.Actions), Factor: p.script.Factor,
		ExecutionTime: p.script.Length.Milliseconds(),
		Problems:      slices.Clone(p.script.Problems),
		Errors:        p.errors, LastError: p.last,
	}
	if n := len(p.script.Actions); n > 0 {
		s.CompletePercent = 100 * float64(p.done) / float64(n)
	}
	if !p.script.StartDate.IsZero() {
		s.StartDate = p.script.StartDate.In(loc).Format(DateLayout)
	}
	return s
}

// Script events.
const (
	EventScriptAdded   EventType = "script-added"
	EventScriptUpdated EventType = "script-updated"
	EventScriptRemoved EventType = "script-removed"
	EventScriptStarted EventType = "script-started"
	EventScriptPaused  EventType = "script-paused"
	EventScriptResumed EventType = "script-resumed"
	EventScriptStopped EventType = "script-stopped"
)

func (h *Home) publishScriptLocked(t EventType, p *playerScript) {
	e := Event{Type: t, ScriptID: p.id}
	if h.watchedLocked() {
		s := p.info(h.loc)
		e.Script = &s
	}
	h.publishLocked(e)
}

// AddScript parses source as a .bhv script and adds it to the player under
// id (a valid id, such as "house.bhv"), replacing the script of that id
// unless it is running. A script that does not parse is an error of kind
// [ErrInvalid] naming the line; replacing a running or paused script is
// [ErrConflict]. Adding the very text the script of that id has changes
// nothing, whatever its state, and returns it as it is.
func (h *Home) AddScript(id string, source []byte) (ScriptInfo, error) {
	if err := checkID("script", id); err != nil {
		return ScriptInfo{}, err
	}
	h.lockChange()
	if old, exists := h.scripts.get(id); exists && bytes.Equal(old.source, source) {
		info := old.info(h.loc) // the same text: nothing to parse again
		h.mu.Unlock()
		return info, nil
	}
	h.mu.Unlock()
	s, err := h.ParseScript(bytes.NewReader(source))
	if err != nil {
		return ScriptInfo{}, err
	}
	h.lockChange()
	defer h.unlockChange()
	old, exists := h.scripts.get(id)
	if exists && old.state != ScriptStopped {
		return ScriptInfo{}, conflictf("script %q is %s: stop it before replacing it", id, old.state)
	}
	if exists && bytes.Equal(old.source, source) {
		return old.info(h.loc), nil
	}
	p := &playerScript{id: id, source: bytes.Clone(source), script: s, cost: ScriptCost(source, s), state: ScriptStopped}
	if exists {
		// An action of the old text still applying does not count, nor
		// does a timer of it that fired and waits for the lock.
		p.run, p.gen = old.run+1, old.gen+1
		*old = *p
		h.publishScriptLocked(EventScriptUpdated, old)
		return old.info(h.loc), nil
	}
	if h.scripts == nil {
		h.scripts = new(scriptPlayer)
	}
	h.scripts.add(id, p)
	h.publishScriptLocked(EventScriptAdded, p)
	return p.info(h.loc), nil
}

// RemoveScript removes a script from the player. Removing a running or
// paused script is [ErrConflict]; an unknown one [ErrNotFound].
func (h *Home) RemoveScript(id string) error {
	h.lockChange()
	defer h.unlockChange()
	p, ok := h.scripts.get(id)
	if !ok {
		return notFoundf("script %q", id)
	}
	if p.state != ScriptStopped {
		return conflictf("script %q is %s: stop it before removing it", id, p.state)
	}
	h.scripts.remove(id)
	h.publishScriptLocked(EventScriptRemoved, p)
	return nil
}

// What a script counts for beside its text (see [ScriptCost]): the actions
// parsed from it, which weigh more than the text they come from (a 1 MiB
// script of empty elements held 24 MB of actions; one of
// set-device-property elements 8 MB).
const (
	// ScriptActionBytes is what each action counts for.
	ScriptActionBytes = 128
	// ScriptAttributeBytes is what each attribute of an action counts for.
	ScriptAttributeBytes = 64
)

// ScriptCost returns what a script of source, parsed as s, counts for in
// [Home.ScriptBytes]: the bytes of its text, [ScriptActionBytes] for each
// action and [ScriptAttributeBytes] for each of their attributes, about
// what the player holds for it.
//
// It panics if s is nil.
func ScriptCost(source []byte, s *Script) int {
	n := len(source) + ScriptActionBytes*len(s.Actions)
	for _, a := range s.Actions {
		n += ScriptAttributeBytes * len(a.Args)
	}
	return n
}

// ScriptBytes returns what the player's scripts hold, in bytes: the sum of
// their [ScriptCost].
func (h *Home) ScriptBytes() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	n := 0
	for _, p := range h.scripts.all() {
		n += p.cost
	}
	return n
}

// ScriptSize returns what script id counts for in [Home.ScriptBytes] (see
// [ScriptCost]); an unknown id is an error of kind [ErrNotFound].
func (h *Home) ScriptSize(id string) (int, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	p, ok := h.scripts.get(id)
	if !ok {
		return 0, notFoundf("script %q does not exist", truncate(id))
	}
	return p.cost, nil
}

// Scripts returns the player's scripts, in the order they were added.
func (h *Home) Scripts() []ScriptInfo {
	h.mu.RLock()
	defer h.mu.RUnlock()
	all := h.scripts.all()
	out := make([]ScriptInfo, len(all))
	for i, p := range all {
		out[i] = p.info(h.loc)
	}
	return out
}

// Script returns one script of the player, or an error of kind
// [ErrNotFound].
func (h *Home) Script(id string) (ScriptInfo, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	p, ok := h.scripts.get(id)
	if !ok {
		return ScriptInfo{}, notFoundf("script %q does not exist", truncate(id))
	}
	return p.info(h.loc), nil
}

// ScriptSource returns the text of one script of the player.
func (h *Home) ScriptSource(id string) ([]byte, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	p, ok := h.scripts.get(id)
	if !ok {
		return nil, notFoundf("script %q does not exist", truncate(id))
	}
	return bytes.Clone(p.source), nil
}

// SetScriptState plays, pauses or stops a script, as the original player:
//
//   - "started" on a stopped script runs it from its start: the clock is set
//     to the script's start date (if it has one) and factor, and resumed,
//     and each action runs when simulated time reaches its offset from the
//     start. Once its last action has run, the script is stopped: delays
//     after it do not keep it playing, so a script without actions stops
//     as it starts. On a paused script, it resumes it (and the clock).
//   - "paused" pauses the script and the clock; its remaining actions wait.
//     Pausing or resuming the clock (UpdateClock) pauses or resumes the
//     script that plays likewise.
//   - "stopped" cancels the remaining actions.
//
// One script plays at a time: starting another while one is started or
// paused is an error of kind [ErrConflict]. Setting the state a script
// already has changes nothing. An unknown state is [ErrInvalid].
func (h *Home) SetScriptState(id, state string) (ScriptInfo, error) {
	if state != ScriptStarted && state != ScriptPaused && state != ScriptStopped {
		return ScriptInfo{}, invalidf("state must be %q, %q or %q, not %q", ScriptStarted, ScriptPaused, ScriptStopped, truncate(state))
	}
	h.lockChange()
	defer h.unlockChange()
	p, ok := h.scripts.get(id)
	if !ok {
		return ScriptInfo{}, notFoundf("script %q does not exist", truncate(id))
	}
	if state == p.state {
		return p.info(h.loc), nil
	}
	switch state {
	case ScriptStarted:
		if p.state == ScriptPaused {
			h.setClockLocked(ClockUpdate{Pause: new(bool)}) // and the script with it
			break
		}
		for _, o := range h.scripts.all() {
			if o != p && o.state != ScriptStopped {
				return ScriptInfo{}, conflictf("script %q is %s: one script plays at a time", o.id, o.state)
			}
		}
		h.startScriptLocked(p)
	case ScriptPaused:
		if p.state == ScriptStopped {
			return ScriptInfo{}, conflictf("script %q is stopped: only a started script can pause", id)
		}
		h.setClockLocked(ClockUpdate{Pause: new(true)}) // and the script with it
	case ScriptStopped:
		h.stopScriptLocked(p)
	}
	return p.info(h.loc), nil
}

func (h *Home) startScriptLocked(p *playerScript) {
	s := p.script
	u := ClockUpdate{Factor: &s.Factor, Pause: new(bool)}
	if !s.StartDate.IsZero() {
		ms := s.StartDate.UnixMilli()
		u.StartDate = &ms
	}
	h.setClockLocked(u)
	p.state, p.done, p.next, p.errors, p.last = ScriptStarted, 0, 0, 0, ""
	p.run++
	p.origin = h.nowLocked()
	h.publishScriptLocked(EventScriptStarted, p)
	if len(s.Actions) == 0 {
		p.state = ScriptStopped
		h.publishScriptLocked(EventScriptStopped, p)
		return
	}
	h.scheduleActionsLocked(p)
}

// scheduleActionsLocked schedules the actions not yet applied, each at the
// run's origin plus its offset.
func (h *Home) scheduleActionsLocked(p *playerScript) {
	p.gen++
	gen := p.gen
	p.timers = p.timers[:0]
	for i := p.next; i < len(p.script.Actions); i++ {
		t := &timer{unlocked: true, fire: func(*Home, int64) { h.runAction(p, gen, i) }}
		p.timers = append(p.timers, t)
		h.scheduleLocked(t, p.origin+p.script.Actions[i].Offset.Milliseconds())
	}
}

// cancelActionsLocked cancels the scheduled actions; a timer already fired
// finds its generation stale and does nothing.
func (h *Home) cancelActionsLocked(p *playerScript) {
	p.gen++
	for _, t := range p.timers {
		h.cancelLocked(t)
	}
	p.timers = p.timers[:0]
}

// runAction applies action i of a run of generation gen. It claims the
// action under the lock first, so that a pause or stop racing with it
// neither loses it nor runs it twice, then applies it without the lock.
// Meanwhile the script may be stopped and started again, or replaced (by
// an observer of the action's changes, or another goroutine): the action
// then counts in none of the new run's figures.
func (h *Home) runAction(p *playerScript, gen, i int) {
	h.lockChange()
	if gen != p.gen || i != p.next {
		h.mu.Unlock()
		return
	}
	p.next++
	a, run, hook := p.script.Actions[i], p.run, h.scripts.hook // a replacement overwrites *p
	h.mu.Unlock()

	var err error
	if hook != nil {
		err = hook(a, func() error { return a.Apply(h) })
	} else {
		err = a.Apply(h)
	}

	h.lockChange()
	defer h.mu.Unlock()
	if run != p.run {
		return
	}
	p.done++
	if err != nil {
		p.errors++
		p.last = err.Error()
	}
	if p.done == len(p.script.Actions) && p.state != ScriptStopped {
		h.cancelActionsLocked(p)
		p.state = ScriptStopped
		h.publishScriptLocked(EventScriptStopped, p)
	}
}

// scriptFollowsClockLocked pauses or resumes the script that plays, if
// any, once the clock was paused or resumed (setClockLocked): as in iCasa,
// where a playing script's state was the clock's, a script is paused
// exactly while the clock is. Pausing a script is pausing the clock. A
// paused script's remaining actions wait; resumed, it goes on where it was
// held, the simulated time that passed meanwhile not counting.
func (h *Home) scriptFollowsClockLocked() {
	for _, p := range h.scripts.all() {
		switch {
		case p.state == ScriptStarted && h.clock.paused:
			h.cancelActionsLocked(p)
			p.paused, p.state = h.nowLocked(), ScriptPaused
			h.publishScriptLocked(EventScriptPaused, p)
		case p.state == ScriptPaused && !h.clock.paused:
			p.origin += h.nowLocked() - p.paused
			p.state = ScriptStarted
			h.scheduleActionsLocked(p)
			h.publishScriptLocked(EventScriptResumed, p)
		}
	}
}

func (h *Home) stopScriptLocked(p *playerScript) {
	h.cancelActionsLocked(p)
	p.state = ScriptStopped
	h.publishScriptLocked(EventScriptStopped, p)
}

// SaveScript saves the current home as a script of the player under id: a
// script that, played on any home, restores this one (see [WriteScript]).
// It replaces a stopped script of the same id.
func (h *Home) SaveScript(id string) (ScriptInfo, error) {
	if err := checkID("script", id); err != nil {
		return ScriptInfo{}, err
	}
	var b bytes.Buffer
	if err := WriteScript(&b, h, h.loc); err != nil {
		return ScriptInfo{}, err
	}
	return h.AddScript(id, b.Bytes())
}
