package mediation

import (
	"io"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
)

// Namespace is the namespace reported for every component of this package.
const Namespace = "github.com/pervasim/pervasim/mediation"

// Kind tells mediators from adapters. Kind values are plain strings and safe
// for concurrent use.
type Kind string

// The component kinds.
const (
	// KindMediator is the kind of components that transform, filter or
	// route messages inside a chain.
	KindMediator Kind = "mediator"
	// KindAdapter is the kind of components at the border of a chain:
	// they bring messages in, take them out, or both.
	KindAdapter Kind = "adapter"
)

// Pattern is the exchange pattern of an adapter, seen from the chain. Pattern
// values are plain strings and safe for concurrent use.
type Pattern string

// The adapter patterns. Mediators have the empty pattern.
const (
	// PatternInOnly adapters bring messages into the chain: they have out
	// ports and no in port (for example rest-in, number-generator).
	PatternInOnly Pattern = "in-only"
	// PatternOutOnly adapters take messages out of the chain: they have in
	// ports and no out port (for example rest-out, console).
	PatternOutOnly Pattern = "out-only"
	// PatternInOut adapters have both in and out ports.
	PatternInOut Pattern = "in-out"
)

// Component states reported in ComponentInfo.State.
const (
	// ComponentValid is the state of a component of a started chain.
	ComponentValid = "valid"
	// ComponentStopped is the state of a component of a chain that is idle
	// or stopped: it keeps its properties, bindings and held messages but
	// processes nothing.
	ComponentStopped = "stopped"
	// ComponentInvalid is the state of a component whose implementation
	// implements Checker and currently reports an error. The built-in types
	// never are invalid, because properties are validated before they are
	// applied.
	ComponentInvalid = "invalid"
)

// Processor handles the messages that reach a component's in ports. The
// runtime calls Process for one component at a time, in arrival order, never
// concurrently, so an implementation needs no locking of its own state;
// unless its Type is Stateless, in which case calls from several senders
// may run at once (see Type.Stateless).
//
// in is the in port the message arrived on. The implementation owns m and
// may modify it (unless its Type is ReadOnly: then m's Properties may be a
// map other messages share, only to be read during the call); it passes
// results on with out.Emit (which takes ownership of the message given to
// it) and reports discarded messages with out.Drop.
// out is valid only during the call, on the goroutine that made it. A
// non-nil error is counted in the component's Errors counter; the message
// is considered consumed. Implementations need not be safe for concurrent
// use, except those of Stateless types. Process must return: Stop, Replace
// and Engine.Close wait for the call under way.
type Processor interface {
	Process(in string, m Message, out Emitter) error
}

// ProcessorFunc adapts a function to the Processor interface. It is as safe
// for concurrent use as the function is.
type ProcessorFunc func(in string, m Message, out Emitter) error

// Process calls f(in, m, out).
func (f ProcessorFunc) Process(in string, m Message, out Emitter) error { return f(in, m, out) }

// Emitter is the dispatcher the runtime gives to a component while it runs:
// it sends messages to the bindings of the component's out ports and keeps
// the component's counters. An Emitter is only valid during the call it was
// given to, on the goroutine that made the call, and must not be used
// concurrently or kept: the runtime reuses it.
type Emitter interface {
	// Emit sends m on the out port named port: to every binding of that
	// port (a copy to each but the last when there are several). A
	// message emitted on a port with no binding is counted as dropped.
	// Emit takes ownership of m.
	Emit(port string, m Message)
	// Drop records n messages as dropped (for example by a filter).
	Drop(n int)
}

// Bound reports whether a message emitted on port through out now would
// reach a binding, that is whether Emit would not count it as dropped
// because the port has none (as after Chain.Replace handed the component's
// bindings to another, or while an in-out adapter's Process runs, whose
// emits are dropped). A source that can hand a message back to where it
// came from, such as a stream consumer that can ask for it again, uses it
// to refuse what would be lost. The answer is how things stand at the
// instant of the call: Chain.Replace waits for the calls of the component
// it replaces to end, so it cannot turn that one's answer false within a
// call, but a Chain.Bind or Chain.Unbind made meanwhile can change it, as
// can a Replace that hands bindings to the component (true, then). A true
// answer is no promise: a message emitted after an Unbind is dropped. For
// an Emitter that is not the runtime's, Bound reports true.
func Bound(out Emitter, port string) bool {
	if b, ok := out.(interface{ bound(string) bool }); ok {
		return b.bound(port)
	}
	return true
}

// Injector is implemented by components that accept messages from outside
// the chain through Chain.Send, such as the rest-in adapter. The runtime
// calls Inject under the same serialisation as Process, so implementations
// need not be safe for concurrent use, except those of Stateless types,
// whose Inject and Process calls may run concurrently.
type Injector interface {
	Inject(m Message, out Emitter) error
}

// InjectorFunc adapts a function to the Injector interface. It is as safe
// for concurrent use as the function is.
type InjectorFunc func(m Message, out Emitter) error

// Inject calls f(m, out).
func (f InjectorFunc) Inject(m Message, out Emitter) error { return f(m, out) }

// Retainer is implemented by components whose messages can be read through
// Chain.Messages, such as the rest-out adapter. Retained returns the retained
// messages, oldest first, without removing them; the runtime calls it under
// the component's serialisation and copies the result, so implementations
// need not be safe for concurrent use.
type Retainer interface {
	Retained() []Message
}

// RetainerFunc adapts a function to the Retainer interface. It is as safe
// for concurrent use as the function is.
type RetainerFunc func() []Message

// Retained calls f().
func (f RetainerFunc) Retained() []Message { return f() }

// Held is a message a component keeps between calls, with the in port it
// arrived on. Held is a plain value, safe for concurrent use as long as nobody modifies it.
type Held struct {
	// Port is the in port the message arrived on.
	Port string
	// Message is the held message.
	Message Message
}

// Drainer is implemented by components that keep messages between calls
// (partial aggregation groups, retained or buffered messages). Drain removes
// and returns them in arrival order; the runtime then hands them to the
// component that takes over (Chain.Replace, or the new implementation built
// by Chain.UpdateProperties), which processes them again (or restores them,
// see Restorer) before any newer message. The runtime calls Drain under the
// component's serialisation, so implementations need not be safe for
// concurrent use.
type Drainer interface {
	Drain() []Held
}

// DrainerFunc adapts a function to the Drainer interface. It is as safe for
// concurrent use as the function is.
type DrainerFunc func() []Held

// Drain calls f().
func (f DrainerFunc) Drain() []Held { return f() }

// Restorer is implemented by components that take over held messages as
// state instead of processing them again. When the component taking over
// (after Chain.Replace or Chain.UpdateProperties) implements Restorer, the
// runtime calls Restore once with the handed-over messages, in arrival order,
// before any newer message, instead of calling Process for each. The runtime
// calls Restore under the component's serialisation, so implementations
// need not be safe for concurrent use.
type Restorer interface {
	Restore(held []Held, out Emitter) error
}

// RestorerFunc adapts a function to the Restorer interface. It is as safe
// for concurrent use as the function is.
type RestorerFunc func(held []Held, out Emitter) error

// Restore calls f(held, out).
func (f RestorerFunc) Restore(held []Held, out Emitter) error { return f(held, out) }

// Periodic is implemented by components that act on a period, such as the
// number-generator adapter. While the chain is started, the runtime calls
// Tick every Period (measured with Config.Clock), under the component's
// serialisation (implementations need not be safe for concurrent use). A
// Period of zero or less disables the ticks; Period is read when the ticks
// start.
type Periodic interface {
	Period() time.Duration
	Tick(now time.Time, out Emitter) error
}

// Announcer is implemented by components that have something to tell new
// listeners, such as a device-in adapter's current readings, so that a chain
// acts on the state things are in and not only on later changes. The
// runtime calls Announce when the chain starts (once every link is
// started; only for a component with an out binding: an unbound one has no
// one to tell), when a binding from the component is added to a started
// chain, and when its properties change in a started chain, under the
// component's serialisation (implementations need not be safe for
// concurrent use).
type Announcer interface {
	Announce(out Emitter) error
}

// Stopper is implemented by components that take in messages from outside
// the chain while it runs, such as the nats-in adapter's subscription. The
// runtime calls Stop when the chain stops (and so when its engine closes)
// and when the component is left without an out binding in a started chain
// (Unbind, the removal of what it fed, Replace handing its bindings to
// another), so that a component with nowhere to send takes nothing in (a
// member of a queue group would take messages the others could deliver).
// Announce, called again when the chain starts with the component bound,
// when a binding from it is added to a started chain, and after its
// properties change, is where it takes in again. Stop runs under the
// component's serialisation.
type Stopper interface {
	Stop() error
}

// Porter is implemented by components whose ports depend on their
// properties, such as the router. When implemented, its ports replace the
// ones declared by the Type for binding validation and ComponentInfo. The
// runtime calls Ports once, right after construction, so implementations
// need not be safe for concurrent use.
type Porter interface {
	Ports() (in, out []string)
}

// PorterFunc adapts a function to the Porter interface. It is as safe for
// concurrent use as the function is.
type PorterFunc func() (in, out []string)

// Ports calls f().
func (f PorterFunc) Ports() (in, out []string) { return f() }

// Checker is implemented by components that can be misconfigured at run
// time. A component whose Check returns an error is reported in the
// ComponentInvalid state. The runtime calls Check under the component's
// serialisation, so implementations need not be safe for concurrent use.
type Checker interface {
	Check() error
}

// CheckerFunc adapts a function to the Checker interface. It is as safe for
// concurrent use as the function is.
type CheckerFunc func() error

// Check calls f().
func (f CheckerFunc) Check() error { return f() }

// Env is what a Type's constructor gets besides the properties. Env is
// a plain value, safe for concurrent use as long as nobody modifies it.
type Env struct {
	// Chain is the id of the chain the component belongs to.
	Chain string
	// ID is the component's id.
	ID string
	// Clock is the engine's clock (Config.Clock).
	Clock clock.Clock
	// Output is the engine's output writer (Config.Output); writes to it
	// are serialised by the engine.
	Output io.Writer
	// Restoring is set when the component is made again from a saved
	// state (Engine.Restore), not at a client's request: a constructor
	// should then accept what it only refuses because the world changed
	// since (a reference to something deleted), as the saved component
	// lived with it.
	Restoring bool
	// CountError counts one error of the component (Counters.Errors) met
	// outside a processing call: what an adapter takes in from outside the
	// chain and cannot pass on (a message it cannot decode, say). It is
	// safe for concurrent use, and counts nothing once the component is
	// removed.
	CountError func()

	splitters *atomic.Uint64 // the engine's count of splitters built (see splitterPrefix); nil outside an engine
}

// Constructor builds the implementation of one component from its
// properties (the Type's defaults merged with the given ones; the map is the
// constructor's own). It validates the properties and returns an error
// (which the engine wraps with ErrInvalid when it wraps none of this
// package's kinds) when they are unacceptable.
//
// The returned value must implement Processor when the type has in ports.
// It may also implement Injector, Retainer, Drainer, Restorer, Periodic,
// Porter, Checker and io.Closer (Close is called once, when the component is
// removed, replaced by a new implementation, its chain deleted or the
// engine closed).
//
// A Constructor must be safe for concurrent use: engines may call it from
// several goroutines.
type Constructor func(props map[string]any, env Env) (any, error)

// Type describes a component type: its name, kind, ports, default
// properties, documentation and constructor. Type is a plain value, safe for concurrent use as long as nobody modifies it;
// once registered, the Registry keeps its own copy.
type Type struct {
	// Name is the type's name, unique per registry (same syntax as ids).
	Name string
	// Kind is KindMediator or KindAdapter.
	Kind Kind
	// Pattern is the exchange pattern of an adapter; it must agree with
	// the ports. It is empty for mediators.
	Pattern Pattern
	// In lists the in ports (instances may refine them with Porter).
	In []string
	// Out lists the out ports (instances may refine them with Porter).
	Out []string
	// Properties holds the default properties, merged under the
	// properties given at creation.
	Properties map[string]any
	// Doc is a short description.
	Doc string
	// New builds instances; it must not be nil.
	New Constructor
	// Stateless declares that the type's implementations keep no state
	// that Process or Inject change, or guard what they share themselves:
	// their Process and Inject must be safe for concurrent use. The
	// runtime then lets the messages of several senders (several
	// goroutines calling Chain.Send, several queue bindings) run through
	// a component of the type at once, with no lock serialising them;
	// the messages of one sender, or of one binding, still arrive in
	// order. Its other calls (Tick, Announce, Drain, Restore, Retained,
	// Check, Close) are still made one at a time, with no Process or
	// Inject in progress, as are changes of the implementation
	// (UpdateProperties), Replace and RemoveComponent. A type is stateful
	// by default: its calls never overlap and arrive in order. The
	// built-in passthrough, enricher, filter, router, translator, rest-in
	// and console are stateless.
	Stateless bool
	// ReadOnly declares that the type's Process only reads the Properties
	// of the messages it is given, and only while it runs: it never
	// writes to their map (nor to a map or slice in it), keeps no
	// reference to the map once it returns (it may keep values read from
	// it), and passes the message on only with out.Emit during the call
	// (never to Chain.Send, a channel or another goroutine). The runtime
	// may then hand it a properties map that other messages share, where
	// a component of another type gets a copy of its own (but the
	// built-in rest-out, which keeps the map as it is and copies it when
	// it hands its messages over): an enricher gives every message that
	// has no properties the same map of its entries, and a chain whose
	// components after it are read-only carries them without a copy,
	// allocating nothing for them. The built-in passthrough, filter,
	// router, translator and console are read-only too, as the engine
	// knows (their Type values leave ReadOnly false, so that a type copied
	// from one with another constructor is not). A type that changes
	// properties, or keeps messages (a buffer, a sink that retains them),
	// must leave it false, the default.
	ReadOnly bool

	// props says what the type does with the Properties of the messages
	// it receives (see run.propsSize and run.shared): for a type
	// registered by anyone but NewRegistry, propsKept when it is
	// ReadOnly, else propsChanged.
	props propsHandling
}

// propsHandling is what a type does with the Properties of the messages it
// receives.
type propsHandling uint8

const (
	// propsChanged: it may change them (the default).
	propsChanged propsHandling = iota
	// propsKept: it never changes them, nor keeps them past the call
	// (see Type.ReadOnly).
	propsKept
	// propsSized: it changes them and tells the run their new size.
	propsSized
	// propsHeld: it never changes them, but keeps messages past the call
	// (rest-out); what it hands over (Drain) is copied first, so that a
	// map other messages share leaves it only as a copy.
	propsHeld
)

// reads reports whether a component of a type that does p with the
// properties of the messages it receives may get a map other messages
// share (run.shared) as it is.
func (p propsHandling) reads() bool { return p == propsKept || p == propsHeld }

// TypeInfo describes a registered type, as listed by Registry.Types. GET
// /runtime/types lists the same types with the REST contract's keys only:
// name, kind, pattern (null for a mediator), in, out and properties, without
// Doc and Stateless. TypeInfo is a plain value, safe for concurrent use as
// long as nobody modifies it.
type TypeInfo struct {
	Name       string         `json:"name"`
	Kind       Kind           `json:"kind"`
	Pattern    Pattern        `json:"pattern,omitempty"`
	In         []string       `json:"in"`
	Out        []string       `json:"out"`
	Properties map[string]any `json:"properties"`
	Doc        string         `json:"doc,omitempty"`
	// Stateless is the type's Type.Stateless.
	Stateless bool `json:"stateless,omitempty"`
}

// Counters are the per-component message counters. Counters is
// a plain value, safe for concurrent use as long as nobody modifies it.
type Counters struct {
	// In counts messages received (through bindings or Chain.Send).
	In uint64 `json:"in"`
	// Out counts messages emitted on a bound port (a fan-out counts once).
	Out uint64 `json:"out"`
	// Dropped counts messages discarded: filtered out, emitted on an
	// unbound port, evicted, or held when the component was removed.
	Dropped uint64 `json:"dropped"`
	// Errors counts failed processing calls (errors and recovered panics).
	Errors uint64 `json:"errors"`
	// Queue is the number of messages currently waiting for the
	// component: in the queues of its incoming bindings plus those handed
	// over by a Replace and not processed yet.
	Queue int `json:"queue"`
}

// ComponentInfo is a snapshot of one component; its maps and slices are
// copies. ComponentInfo is a plain value, safe for concurrent use as long as nobody modifies it.
type ComponentInfo struct {
	ID   string `json:"id"`
	Kind Kind   `json:"kind"`
	// Type is the name of the component's registered type.
	Type string `json:"type"`
	// Namespace is always [Namespace].
	Namespace string `json:"namespace"`
	// UUID and Created tell this component from another of the same id
	// made at another time (see Identity).
	UUID    string    `json:"uuid"`
	Created time.Time `json:"created"`
	// State is ComponentValid, ComponentStopped or ComponentInvalid.
	State      string         `json:"state"`
	Properties map[string]any `json:"properties"`
	// Pattern is an adapter's exchange pattern (see Type.Pattern).
	Pattern Pattern `json:"pattern,omitempty"`
	// In and Out are the component's port names.
	In       []string `json:"in"`
	Out      []string `json:"out"`
	Counters Counters `json:"counters"`
}

// ValidID reports whether s is a valid chain or component id: 1 to 128
// ASCII letters, digits and the characters - _ . :, other than "." and ".."
// (as a path segment they name the parent: an HTTP client resolves
// /mediation/.. to /, so such a chain could be made but not reached).
// Type and linker names follow the same rule; port names also exclude ':'.
// ValidID is safe for concurrent use.
func ValidID(s string) bool { return validID(s) }

// validID implements ValidID.
func validID(s string) bool {
	if len(s) == 0 || len(s) > 128 || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-' || c == '_' || c == '.' || c == ':':
		default:
			return false
		}
	}
	return true
}

// checkID returns an ErrInvalid error when s is not a valid id.
func checkID(what, s string) error {
	if !validID(s) {
		return errorf(ErrInvalid, "%s id %q: want 1 to 128 letters, digits or -_.:, other than . and ..", what, s)
	}
	return nil
}

// validPort reports whether s is a valid port name: an id without ':'.
func validPort(s string) bool {
	if !validID(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			return false
		}
	}
	return true
}
