// Package mediation is the mediation engine of pervasim: chains of
// mediators and adapters connected by bindings, through which messages flow.
//
// An Engine holds chains by id. A Chain holds components of two kinds, in a
// single id space: mediators (passthrough, enricher, filter, router,
// splitter, aggregator, translator, or types of your own) and adapters at
// the border of the chain (rest-in, rest-out, console, number-generator, or
// your own). Bindings connect an out port of one component to an in port of
// another, through a linker: "direct" (synchronous) or "queue" (asynchronous,
// bounded). Types and linkers come from a Registry, to which programs add
// their own with Registry.Register and Registry.RegisterLinker.
//
//	e := mediation.NewEngine(mediation.Config{})
//	defer e.Close()
//	ch, _ := e.CreateChain("demo")
//	ch.AddAdapter("rest-in", "in", nil)
//	ch.AddMediator("enricher", "tag", map[string]any{"site": "lab"})
//	ch.AddAdapter("rest-out", "out", nil)
//	ch.Bind("in:out", "tag:in", "", nil)
//	ch.Bind("tag:out", "out:in", "queue", nil)
//	ch.Start()
//	ch.Send("in", mediation.Message{Content: "hello"})
//
// The package does no I/O of its own besides writing console lines to
// Config.Output; the REST interface lives elsewhere.
//
// # Concurrency
//
// Engine, Chain and Registry are safe for concurrent use. Structural
// operations on a chain (adding, removing, binding, replacing, starting,
// stopping) are serialised per chain; message operations (Chain.Send,
// Chain.Messages) run concurrently with them and with each other, without a
// chain-wide lock.
//
// A component of a stateful type (the default; splitter, aggregator,
// rest-out, number-generator) processes one message at a time, in arrival
// order: its implementation (Processor, Injector, Periodic, ...) never runs
// concurrently with itself and needs no locking of its own. A component of
// a type declared stateless (Type.Stateless; passthrough, enricher, filter,
// router, translator, rest-in, console) processes the messages of several
// senders at once: several goroutines calling Chain.Send, or several queue
// bindings, run through it in parallel, with no lock serialising them, and
// its counters are kept per core. The messages of one sender (one goroutine
// sending, one queue binding) still arrive in order. Its other calls
// (ticks, announcements, hand-overs, Retained, Check) are still made one at
// a time, and reconfiguration (Replace, UpdateProperties, RemoveComponent,
// Unbind, Stop) waits for the calls in progress and holds new ones back
// while it works, so it stays lossless with concurrent senders.
//
// A direct binding processes the message on the sender's goroutine; a queue
// binding has a FIFO drained by its own goroutine, which takes the queued
// messages in batches. Queues give backpressure at the entry of the chain:
// Chain.Send waits, holding no lock, while a queue its message may reach is
// full (the messages being delivered count towards the capacity: the
// binding property "capacity", default DefaultQueueCapacity; while a sender
// waits, room comes back every capacity/8 deliveries, at least one), and
// gives up with ErrBusy when its context ends or Config.SendTimeout passes;
// TrySend does not wait. Inside the chain nothing waits: a queue takes what
// components emit beyond its capacity, up to its "max-bytes" (past which
// the message is dropped and counted). When Stop begins, senders waiting
// for room are released (the chain no longer runs: ErrConflict). Each message entering a chain may
// cause at most Config.MaxDeliveries deliveries, fan-outs and queues
// included. The engine owns every goroutine it starts: Stop and
// Engine.Close return only once they have stopped, and they always do,
// provided each call into a component (Process, Tick, Drain...) returns:
// they wait for the call under way, and one that blocks for ever holds them.
//
// Component implementations must not call methods of their own chain, nor
// block waiting for other goroutines that do: structural operations and
// Stop wait for the processing in progress, and a component sending to
// itself would wait for itself.
//
// A message belongs to one component at a time. Where a message is sent to
// several bindings (an out port bound twice, a router matching several
// ports) every consumer but the last gets a deep copy (Message.Clone).
// One exception saves a copy per message: an enricher gives every message
// without properties one map of its entries, which those messages share;
// components of read-only types (Type.ReadOnly: the built-in passthrough,
// filter, router, translator and console, and types that declare it) get
// it as it is, and only read it, as does rest-out, which keeps it as it is
// and hands over copies when it is replaced or its properties change; any
// other component, and any link but the engine's queues, gets a copy of
// its own before it sees the message.
//
// # Errors
//
// Every error returned by this package wraps exactly one of ErrNotFound
// (a chain, component, binding or type that does not exist), ErrInvalid (a
// malformed or unacceptable request), ErrConflict (a clash with the
// current state: duplicate id or binding, chain not started, engine
// closed) and ErrBusy (a bound reached: a queue that stays full, too many
// deliveries, chains, components or bindings), with a message that says
// what is wrong without naming its kind; test them with errors.Is. They
// are the same values as package sim's. Every operation validates its
// request first and then either applies fully or changes nothing.
//
// # Runtime
//
// A component is an implementation built by its Type's constructor from its
// properties, run by the engine. For a mediator the engine provides the
// scheduler (when the implementation runs: on each message, as it arrives;
// on a period, for Periodic implementations, measured with Config.Clock;
// correlation groups are the implementation's business, as the aggregator
// shows) and the dispatcher (the Emitter, which sends what the
// implementation emits to the bindings of the port it names); the
// implementation is the processor.
//
// A chain is "idle" until started, then "started" or "stopped". While it is
// not started, nothing is processed: Send is refused, queue links keep
// their messages, periodic components do not tick, and components that take
// messages in from outside (Stopper, such as a NATS subscription) take none;
// components and bindings may still be added and changed. Start resumes
// everything where it was (Announcer components announce again).
//
// Chain.Replace swaps a component for another without losing, duplicating
// or reordering messages: the bindings keep their identity and only their
// ends move, deliveries waiting for the old component follow the move, and
// what the old component holds (see Drainer) is processed by the new one
// before any newer message. Chain.UpdateProperties uses the same hand-over
// between the old and the new implementation of a component.
//
// A chain must not loop: a binding that would close a cycle is refused
// (ErrInvalid, naming the cycle), whatever the linkers on the way. A loop of
// direct bindings would deadlock on the components' locks, and a loop
// through queues would keep a message going round without end.
package mediation
