package mediation

// Chain states, as reported by Chain.State and ChainInfo.State.
const (
	// StateIdle is the state of a chain that was never started.
	StateIdle = "idle"
	// StateStarted is the state of a running chain.
	StateStarted = "started"
	// StateStopped is the state of a chain stopped after (or instead of)
	// running; it keeps its components, bindings and held messages.
	StateStopped = "stopped"
)

// Internal chain states.
const (
	stIdle int32 = iota
	stStarted
	stStopping // Stop in progress: entries refused, links finish their current message
	stStopped
)

// errNotStarted is returned to links and senders when the chain does not run.
var errNotStarted = errorf(ErrConflict, "chain is not started")

// enter registers an entry point (Chain.Send, a tick) into the chain. It
// fails unless the chain is started. A successful enter must be paired with
// exit. Entries nest freely.
func (ch *Chain) enter() bool {
	ch.active.Add(1)
	if ch.state.Load() != stStarted {
		ch.exit()
		return false
	}
	return true
}

// enterLink is enter for link deliveries, which are still accepted while the
// chain is stopping (the link is then finishing its current message).
func (ch *Chain) enterLink() bool {
	ch.active.Add(1)
	if s := ch.state.Load(); s != stStarted && s != stStopping {
		ch.exit()
		return false
	}
	return true
}

// exit ends an entry; the last one out wakes a waiting Stop.
func (ch *Chain) exit() {
	if ch.active.Add(-1) == 0 && ch.state.Load() != stStarted {
		ch.gateMu.Lock()
		ch.gateCond.Broadcast()
		ch.gateMu.Unlock()
	}
}

// waitIdle waits until no entry is in progress. The state must not be
// stStarted.
func (ch *Chain) waitIdle() {
	ch.gateMu.Lock()
	for ch.active.Load() != 0 {
		ch.gateCond.Wait()
	}
	ch.gateMu.Unlock()
}
