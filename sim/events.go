package sim

import (
	"errors"
	"slices"
)

// EventType names a change, with the event names of the original iCasa.
type EventType string

// The event types a [Home] produces.
const (
	EventZoneAdded           EventType = "zone-added"
	EventZoneRemoved         EventType = "zone-removed"
	EventZoneMoved           EventType = "zone-moved"
	EventZoneResized         EventType = "zone-resized"
	EventZoneUpdated         EventType = "zone-updated" // name or isRoom changed
	EventZoneVariableAdded   EventType = "zone-variable-added"
	EventZoneVariableUpdated EventType = "zone-variable-updated"
	EventZoneVariableRemoved EventType = "zone-variable-removed"

	EventDeviceAdded           EventType = "device-added"
	EventDeviceRemoved         EventType = "device-removed"
	EventDevicePositionUpdate  EventType = "device-position-update"
	EventDeviceUpdated         EventType = "device-updated" // name, width or height changed
	EventDevicePropertyAdded   EventType = "device-property-added"
	EventDevicePropertyUpdated EventType = "device-property-updated"
	EventDevicePropertyRemoved EventType = "device-property-removed"
	EventDeviceEvent           EventType = "device-event"

	EventPersonAdded          EventType = "person-added"
	EventPersonRemoved        EventType = "person-removed"
	EventPersonPositionUpdate EventType = "person-position-update"
	EventPersonUpdated        EventType = "person-updated" // name or type changed

	EventClockModified EventType = "clock-modified"

	// EventEnvironmentModified reports a change of the environment
	// (an extension of iCasa's events).
	EventEnvironmentModified EventType = "environment-modified"
)

// Event is one change of a [Home]. The snapshot fields (Zone, Device, Person,
// Clock) hold the whole entity after the change, copied from the home when
// the event was made; for removals only the id is set. One event value goes
// to every subscriber, so its snapshots (and Value, OldValue) are shared:
// treat them as read-only, and copy before changing them.
type Event struct {
	// Seq orders the events of a Home: it grows with every change.
	Seq uint64
	// Type is the kind of change.
	Type EventType
	// Time is the simulated time of the change, in ms since the epoch.
	Time int64

	// ZoneID and Zone are set on zone events; DeviceID and Device on
	// device events (Device.Location names the device's zone); PersonID
	// and Person on person events.
	ZoneID   string
	Zone     *Zone
	DeviceID string
	Device   *Device
	PersonID string
	Person   *Person
	// Clock is set on clock events.
	Clock *Clock
	// Environment is set on environment-modified events.
	Environment *Environment
	// ScriptID and Script are set on script events.
	ScriptID string
	Script   *ScriptInfo

	// Property names the changed property (device events) or variable (zone
	// events); Value is its new value, nil when removed, and OldValue the
	// previous one, nil when added.
	Property string
	Value    any
	OldValue any

	// Current marks the events that [Home.ObserveCurrent] makes of the
	// home as it is: they describe the state, not a change, and have no Seq.
	Current bool
}

// ErrSlowSubscriber is reported by [Subscription.Err] when a subscriber did
// not keep up: its buffer filled, so it was disconnected rather than let it
// slow the simulation down.
var ErrSlowSubscriber = errors.New("subscriber too slow: disconnected")

// MaxSubscriptionBuffer is the largest buffer a subscription gets
// ([Home.Subscribe]): a channel of 1<<20 events, some 200 MiB of address
// space.
const MaxSubscriptionBuffer = 1 << 20

// Subscription receives the events of a [Home] on C, in order, until it is
// closed. It is safe for concurrent use. Get one from [Home.Subscribe]: the
// zero Subscription is not usable (its Close and Err panic).
type Subscription struct {
	// C delivers the events. It is closed when the subscription ends, by
	// Close or because the subscriber fell behind.
	C <-chan Event

	ch   chan Event
	home *Home
	err  error // guarded by home.mu
}

// Subscribe starts a subscription whose channel buffers up to buffer events
// (at least 1, at most [MaxSubscriptionBuffer]: a larger buffer is that
// many). Events are never blocked on: when the buffer is full the
// subscription is closed and Err returns [ErrSlowSubscriber]. Call Close when
// done.
func (h *Home) Subscribe(buffer int) *Subscription {
	buffer = min(max(buffer, 1), MaxSubscriptionBuffer)
	ch := make(chan Event, buffer)
	s := &Subscription{C: ch, ch: ch, home: h}
	h.mu.Lock()
	h.watchStartsLocked()
	h.subs = append(h.subs, s)
	h.mu.Unlock()
	return s
}

// Close ends the subscription and closes C. It is safe to call more than once.
func (s *Subscription) Close() {
	s.home.mu.Lock()
	defer s.home.mu.Unlock()
	s.home.dropLocked(s, nil)
}

// Err returns nil while the subscription runs or after Close, and
// [ErrSlowSubscriber] if it was closed because the subscriber fell behind.
func (s *Subscription) Err() error {
	s.home.mu.Lock()
	defer s.home.mu.Unlock()
	return s.err
}

// dropLocked removes s from the subscribers and closes its channel, once.
func (h *Home) dropLocked(s *Subscription, err error) {
	i := slices.Index(h.subs, s)
	if i < 0 {
		return
	}
	h.subs = slices.Delete(h.subs, i, i+1)
	s.err = err
	close(s.ch)
}

// watchStartsLocked readies the home for an observer or a subscription
// about to start: if none ran, what the home left unsaid while nobody
// watched is brought up to date (see syncSensedLocked).
func (h *Home) watchStartsLocked() {
	if !h.watchedLocked() {
		h.syncSensedLocked()
	}
}

// watchedLocked reports whether anyone receives events, so that callers can
// skip building snapshots nobody reads.
func (h *Home) watchedLocked() bool { return len(h.subs) > 0 || len(h.observers) > 0 }

// observer is an observer of the home (see Observe), or a tap (see Tap).
type observer struct {
	fn  func(Event)
	tap bool
	// after is the sequence number of the last change before the observer
	// started: the changes up to it, which may still wait for the other
	// observers when it starts during a delivery, are not its own.
	after uint64
}

// observedLocked reports whether observers other than taps receive events.
func (h *Home) observedLocked() bool { return len(h.observers) > int(h.taps) }

// Tap calls fn with every change of the home from now on, in order, as it
// is made: on the goroutine that makes it, with the home's lock held, as a
// subscription's channel receives it. It returns the sequence number of
// the last change before the tap (every event fn gets is numbered above
// it) and the function that ends the tap; fn is not called once stop has
// returned, which is safe to call more than once.
//
// fn must return at once, must not call the home (it would deadlock) and
// must not panic: Tap is for code that hands the events on to a goroutine
// of its own, through a queue of its own (one that grows with what waits,
// where a subscription's channel is allocated whole), unaffected by what
// observers do. Code that acts on the home observes it (see [Home.Observe]).
func (h *Home) Tap(fn func(Event)) (seq uint64, stop func()) {
	if fn == nil {
		panic("sim: Tap with a nil function")
	}
	t := &observer{fn: fn, tap: true}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.watchStartsLocked()
	h.observers = append(slices.Clip(h.observers), t)
	h.taps++
	return h.seq, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if i := slices.Index(h.observers, t); i >= 0 {
			h.observers = slices.Delete(slices.Clone(h.observers), i, i+1)
			h.taps--
		}
	}
}

// pendingEvent is an event waiting for the observers; only, when set, is
// the one observer it is for.
type pendingEvent struct {
	e    Event
	only *observer
}

// Observe calls fn with every event of the home from now on (none made
// before it started, though the other observers may still be getting
// them when it starts during a delivery), in order, synchronously:
// on the goroutine that made the change, once the home's lock is released
// (during Advance, after each timer, with the home's time still reading the
// timer's time). fn may call any Home method. The events caused by what fn
// does are delivered after fn returns, never to a nested call, so observers
// that act on the home cannot recurse into themselves. This is how code that
// reacts to the simulation (a device adapter, an application under test)
// stays deterministic under Advance. One goroutine delivers at a time: a
// change made while another goroutine is delivering (its fn still running)
// is delivered by that goroutine, after the events before it, and the
// method that made it may return before fn has seen it. Call the returned stop to end the
// observation; it is safe to call more than once. Called on another
// goroutine than the one delivering, stop may return while an event already
// on its way still reaches fn. A panic in fn (or t.Fatal) reaches the caller
// of the method that made the change, and the home stays usable; fn must
// not be nil.
func (h *Home) Observe(fn func(Event)) (stop func()) { return h.observe(fn, false) }

// ObserveCurrent is like [Home.Observe], but fn first receives the home as
// it is: a zone-added event for each zone, then a device-added event for
// each device and a person-added event for each person, in creation order,
// each with Current set; then every change after that moment. So code that
// reacts to the home (a thermostat) acts on the room as it is, not only on
// what changes later.
func (h *Home) ObserveCurrent(fn func(Event)) (stop func()) { return h.observe(fn, true) }

func (h *Home) observe(fn func(Event), current bool) (stop func()) {
	if fn == nil {
		panic("sim: Observe with a nil function")
	}
	o := &observer{fn: fn}
	h.mu.Lock()
	h.watchStartsLocked()
	o.after = h.seq
	// The list of observers is replaced, never changed in place, so that
	// deliver can call those of the moment without copying the list.
	h.observers = append(slices.Clip(h.observers), o)
	if current {
		now := h.nowLocked()
		add := func(e Event) {
			e.Time, e.Current = now, true
			h.outbox = append(h.outbox, pendingEvent{e: e, only: o})
		}
		for _, z := range h.zones.all() {
			c := z.clone()
			add(Event{Type: EventZoneAdded, ZoneID: z.ID, Zone: &c})
		}
		for _, d := range h.devices.all() {
			s := d.snapshot(h)
			add(Event{Type: EventDeviceAdded, DeviceID: d.ID, Device: &s})
		}
		for _, p := range h.persons.all() {
			c := *p
			add(Event{Type: EventPersonAdded, PersonID: p.ID, Person: &c})
		}
	}
	h.unlockChange()
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.observers = slices.DeleteFunc(slices.Clone(h.observers), func(x *observer) bool { return x == o })
		if !h.observedLocked() {
			h.outbox = nil
		}
	}
}

// deliver hands the pending events to the observers, as unlockChange
// does. Call it without the lock.
func (h *Home) deliver() {
	h.mu.Lock()
	h.unlockChange()
}

// unlockChange ends a change begun with lockChange (or any holding of the
// lock for writing): it hands the pending events to the observers, unless
// a delivery is already running (which will deliver them), releasing the
// lock around each observer's call, and releases the lock. A change that
// left none (nobody observes the home, say) only releases it: taking the
// lock again to find nothing to deliver was a third of a person's move in
// a small home.
func (h *Home) unlockChange() {
	if h.delivering || len(h.outbox) == 0 {
		h.mu.Unlock()
		return
	}
	h.delivering = true
	// An observer may panic, or end its goroutine (t.Fatal in a test):
	// the lock is then not held, and must be taken again before it is
	// released, or the home would be left delivering for good and the
	// process die of "Unlock of unlocked RWMutex".
	locked := true
	defer func() {
		if !locked {
			h.mu.Lock()
		}
		h.delivering = false
		h.mu.Unlock()
	}()
	// The queue's array is used again for the next change's events
	// (unless it grew past 8, a change of many events): one allocation a
	// change would otherwise make one. It is cleared first, whole (at
	// most 8 events): delivered events are zeroed, but when the queue
	// left the array (grown by a change an observer made, or dropped by
	// a stop) while events waited, their copies stay there.
	reuse := h.outbox[:0]
	for len(h.outbox) > 0 {
		p := h.outbox[0]
		h.outbox[0] = pendingEvent{}
		h.outbox = h.outbox[1:]
		obs := h.observers // never changed in place: see observe
		h.mu.Unlock()
		locked = false
		for _, o := range obs {
			if !o.tap && (p.only == o || p.only == nil && p.e.Seq > o.after) {
				o.fn(p.e)
			}
		}
		h.mu.Lock()
		locked = true
	}
	h.outbox = nil
	if cap(reuse) <= 8 {
		clear(reuse[:cap(reuse)])
		h.outbox = reuse
	}
}

// EventSeq returns the sequence number (Event.Seq) of the last change of the
// home: a subscriber that saw that number missed nothing.
func (h *Home) EventSeq() uint64 {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.seq
}

// publishLocked numbers e and hands it to every tap and subscriber
// without blocking, and queues it for the observers.
func (h *Home) publishLocked(e Event) {
	h.seq++
	if !h.watchedLocked() {
		return
	}
	e.Seq = h.seq
	e.Time = h.nowLocked()
	if h.observedLocked() {
		h.outbox = append(h.outbox, pendingEvent{e: e})
	}
	if h.taps > 0 {
		for _, o := range h.observers {
			if o.tap {
				o.fn(e)
			}
		}
	}
	for i := 0; i < len(h.subs); {
		s := h.subs[i]
		select {
		case s.ch <- e:
			i++
		default:
			h.dropLocked(s, ErrSlowSubscriber)
		}
	}
}
