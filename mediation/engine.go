package mediation

import (
	"fmt"
	"io"
	"slices"
	"sync"

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
}

// Engine holds mediation chains by id. An Engine is safe for concurrent use.
// It owns the goroutines of its chains (queue links, periodic components):
// Close stops every chain and waits for them.
type Engine struct {
	clock    clock.Clock
	registry *Registry
	output   io.Writer

	mu     sync.Mutex
	chains map[string]*Chain
	order  []string
	closed bool
}

// NewEngine returns an engine configured by cfg (see Config for defaults).
func NewEngine(cfg Config) *Engine {
	e := &Engine{clock: cfg.Clock, registry: cfg.Registry, chains: map[string]*Chain{}}
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

// CreateChain creates an idle, empty chain. It fails with ErrInvalid for a
// malformed or reserved id ("runtime"), and with ErrConflict when a chain of
// that id exists or the engine is closed.
func (e *Engine) CreateChain(id string) (*Chain, error) {
	if err := checkID("chain", id); err != nil {
		return nil, err
	}
	if id == RuntimeID {
		return nil, fmt.Errorf("%w: chain id %q is reserved", ErrInvalid, id)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, fmt.Errorf("%w: engine closed", ErrConflict)
	}
	if _, dup := e.chains[id]; dup {
		return nil, fmt.Errorf("%w: chain %s already exists", ErrConflict, id)
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
		return nil, fmt.Errorf("%w: chain %q does not exist", ErrNotFound, id)
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
		return fmt.Errorf("%w: chain %q does not exist", ErrNotFound, id)
	}
	delete(e.chains, id)
	e.order = slices.DeleteFunc(e.order, func(s string) bool { return s == id })
	e.mu.Unlock()
	ch.destroy()
	return nil
}

// Close stops every chain and waits for all the engine's goroutines. Chains
// keep their state and can still be inspected, but cannot be started again,
// and no chain can be created. Close is idempotent and returns nil.
func (e *Engine) Close() error {
	e.mu.Lock()
	e.closed = true
	chains := make([]*Chain, 0, len(e.chains))
	for _, id := range e.order {
		chains = append(chains, e.chains[id])
	}
	e.mu.Unlock()
	for _, ch := range chains {
		_ = ch.Stop() // fails only for deleted chains
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
