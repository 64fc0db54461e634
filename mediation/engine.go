package mediation

import (
	"cmp"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
)

// Config configures an Engine. The zero Config is valid: every field has a
// default. Config is a plain value, safe for concurrent use as long as nobody modifies it.
type Config struct {
	// Clock is used for timed behaviour only: the periods of Periodic
	// components (number-generator), and the Created time of components.
	// Default: the real clock (clock.New()).
	Clock clock.Clock
	// Registry holds the types and linkers the engine can create.
	// Default: NewRegistry() (the built-in types and linkers).
	Registry *Registry
	// Output receives the lines written by console adapters (and by any
	// component using Env.Output); the engine serialises writes to it.
	// Default: io.Discard.
	Output io.Writer
	// SendTimeout is how long Chain.Send waits for room in the queues
	// ahead of its message before it fails with ErrBusy. Default:
	// DefaultSendTimeout (2 s).
	SendTimeout time.Duration
	// MaxDeliveries bounds the deliveries that one message entering a
	// chain (through Send, a tick or an announcement) may cause, fan-outs
	// and queues included; past it the rest is dropped and Send fails with
	// ErrBusy. Default: DefaultMaxDeliveries (100,000).
	MaxDeliveries int
	// MaxChains, MaxComponents and MaxBindings bound the chains of the
	// engine and the components and bindings of each chain; creating one
	// more fails with ErrBusy. Defaults: DefaultMaxChains (1,000),
	// DefaultMaxComponents (1,000) and DefaultMaxBindings (10,000).
	// A negative bound, as a negative MaxDeliveries, allows none: no
	// chain, component or binding can be made, no message delivered.
	MaxChains, MaxComponents, MaxBindings int
}

// The default bounds of an Engine (see Config).
const (
	DefaultMaxChains     = 1_000
	DefaultMaxComponents = 1_000
	DefaultMaxBindings   = 10_000
)

// Engine holds mediation chains by id. An Engine is safe for concurrent use.
// It owns the goroutines of its chains (queue links, periodic components):
// Close stops every chain and waits for them.
//
// The zero value is not usable (it has no registry, and its bounds are
// zero, so it takes no chain): create an Engine with [NewEngine], whose
// zero Config gives the defaults.
type Engine struct {
	clock    clock.Clock
	registry *Registry
	output   io.Writer

	sendTimeout                           time.Duration
	maxDeliveries                         int
	maxChains, maxComponents, maxBindings int

	mu     sync.Mutex
	chains map[string]*Chain
	order  []string
	closed bool

	made      atomic.Uint64 // components made so far (see Made)
	restoring atomic.Int32  // Restore calls in progress
	splitters atomic.Uint64 // splitters built so far, which number their correlation ids (see splitterPrefix)
}

// Restore runs f, the loading of saved chains, with Env.Restoring set for
// every component made meanwhile: their constructors accept references to
// what no longer exists (a device deleted after the chain was saved), as
// the components did when they were saved. Call it before the engine serves
// anyone else: components others make during f see Restoring too. Restore
// is safe for concurrent use and returns f's error.
func (e *Engine) Restore(f func() error) error {
	e.restoring.Add(1)
	defer e.restoring.Add(-1)
	return f()
}

// Restoring reports whether a Restore call is in progress: a component
// that acts on the world when its chain starts (an Announcer) can tell a
// chain loaded again as it was saved, whose effects the saved state holds
// already, from one that starts.
func (e *Engine) Restoring() bool { return e.restoring.Load() > 0 }

// NewEngine returns an engine configured by cfg (see Config for defaults).
func NewEngine(cfg Config) *Engine {
	e := &Engine{clock: cfg.Clock, registry: cfg.Registry, chains: map[string]*Chain{},
		sendTimeout: cmp.Or(cfg.SendTimeout, DefaultSendTimeout), maxDeliveries: cmp.Or(cfg.MaxDeliveries, DefaultMaxDeliveries),
		maxChains: cmp.Or(cfg.MaxChains, DefaultMaxChains), maxComponents: cmp.Or(cfg.MaxComponents, DefaultMaxComponents),
		maxBindings: cmp.Or(cfg.MaxBindings, DefaultMaxBindings)}
	if e.clock == nil {
		e.clock = clock.New()
	}
	if e.registry == nil {
		e.registry = NewRegistry()
	}
	out := cfg.Output
	if out == nil {
		out = io.Discard
	}
	e.output = &lockedWriter{w: out}
	return e
}

// Registry returns the engine's registry.
func (e *Engine) Registry() *Registry { return e.registry }

// Clock returns the engine's clock.
func (e *Engine) Clock() clock.Clock { return e.clock }

// RuntimeID is the reserved id that no chain may take.
const RuntimeID = "runtime"

// TypesID is reserved too: over REST, /runtime/types lists the types, where
// /runtime/<chain> would give a chain's state.
const TypesID = "types"

// CreateChain creates an idle, empty chain. It fails with ErrInvalid for a
// malformed or reserved id (RuntimeID, TypesID), and with ErrConflict when a
// chain of that id exists or the engine is closed.
func (e *Engine) CreateChain(id string) (*Chain, error) {
	if err := checkID("chain", id); err != nil {
		return nil, err
	}
	if id == RuntimeID || id == TypesID {
		return nil, errorf(ErrInvalid, "chain id %q is reserved (the REST paths /%s and /runtime/types are not chains)", id, RuntimeID)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errorf(ErrConflict, "engine closed")
	}
	if _, dup := e.chains[id]; dup {
		return nil, errorf(ErrConflict, "chain %s already exists", id)
	}
	if len(e.chains) >= e.maxChains {
		return nil, errorf(ErrBusy, "the engine has %d chains, the most it may hold (the engine's MaxChains; the server's -max-chains); delete one first", len(e.chains))
	}
	ch := newChain(e, id)
	e.chains[id] = ch
	e.order = append(e.order, id)
	return ch, nil
}

// Chain returns the chain of that id, or an error wrapping ErrNotFound, or
// ErrInvalid for a malformed id.
func (e *Engine) Chain(id string) (*Chain, error) {
	if err := checkID("chain", id); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ch := e.chains[id]
	if ch == nil {
		return nil, errorf(ErrNotFound, "chain %q does not exist", id)
	}
	return ch, nil
}

// Chains returns the ids of the chains in creation order.
func (e *Engine) Chains() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string{}, e.order...)
}

// DeleteChain stops the chain, discards what it holds and removes it; its
// handle then fails with ErrNotFound. It fails with ErrNotFound when there
// is no such chain.
func (e *Engine) DeleteChain(id string) error {
	e.mu.Lock()
	ch := e.chains[id]
	if ch == nil {
		e.mu.Unlock()
		return errorf(ErrNotFound, "chain %q does not exist", id)
	}
	delete(e.chains, id)
	e.order = slices.DeleteFunc(e.order, func(s string) bool { return s == id })
	e.mu.Unlock()
	ch.destroy()
	return nil
}

// Close stops every chain for good, frees what their links and components
// hold (links' goroutines and connections; components whose
// implementation is an io.Closer are closed) and waits for all the
// engine's goroutines. Messages links still held are discarded, counted as
// dropped by their targets. Chains keep their components, bindings and
// counters and can still be read (or deleted), but cannot be started or
// changed again (ErrConflict), and no chain can be created. Close is
// idempotent and returns nil.
func (e *Engine) Close() error {
	e.mu.Lock()
	e.closed = true
	chains := make([]*Chain, 0, len(e.chains))
	for _, id := range e.order {
		chains = append(chains, e.chains[id])
	}
	e.mu.Unlock()
	for _, ch := range chains {
		ch.release()
	}
	return nil
}

func (e *Engine) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
