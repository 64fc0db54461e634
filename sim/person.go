package sim

import "strings"

// LocationUnknown is the location of a person outside every zone.
const LocationUnknown = "unknown"

// Person is a simulated person.
type Person struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Type is the id of a [PersonType].
	Type string `json:"type"`
	// Location is the id of the zone holding the person, or
	// [LocationUnknown]; it is always derived from the position.
	Location  string `json:"location"`
	PositionX int    `json:"positionX"`
	PositionY int    `json:"positionY"`
}

// PersonType is a kind of person. Its id and name are the same.
type PersonType struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// personTypes are the fixed person types, in their listing order.
var personTypes = []string{
	"Grandfather", "Grandmother", "Father", "Mother", "Boy", "Girl",
	"Old man", "Old woman", "Man", "Woman",
}

// PersonTypes returns the fixed person types.
func PersonTypes() []PersonType {
	out := make([]PersonType, len(personTypes))
	for i, t := range personTypes {
		out[i] = PersonType{ID: t, Name: t}
	}
	return out
}

// lookupPersonType matches a person type case-insensitively and returns its
// canonical id.
func lookupPersonType(t string) (string, error) {
	for _, pt := range personTypes {
		if strings.EqualFold(pt, t) {
			return pt, nil
		}
	}
	if t == "" {
		return "", invalidf("person type is missing; known types: %s", strings.Join(personTypes, ", "))
	}
	return "", invalidf("unknown person type %q; known types: %s", truncate(t), strings.Join(personTypes, ", "))
}

// PersonSpec describes a person to create.
type PersonSpec struct {
	// ID is required: see [ValidID].
	ID string
	// Name defaults to the id.
	Name string
	// Type must name a person type, in any letter case.
	Type string
	// PositionX and PositionY place the person; nil leaves them at -1.
	PositionX, PositionY *int
}

// PersonUpdate is a partial change of a person: a nil field keeps its value.
type PersonUpdate struct {
	// Name, when set to "", resets the name to the id.
	Name *string
	// Type must name a person type.
	Type *string
	// PositionX and PositionY move the person.
	PositionX, PositionY *int
	// Location, when no position is given and it names another zone than
	// the person's, moves the person to the centre of that zone.
	Location *string
}

// CreatePerson adds a person and returns it. A bad id, name, type or position
// is an error of kind [ErrInvalid]; a used id is [ErrConflict].
func (h *Home) CreatePerson(spec PersonSpec) (Person, error) {
	if err := checkID("person", spec.ID); err != nil {
		return Person{}, err
	}
	typ, err := lookupPersonType(spec.Type)
	if err != nil {
		return Person{}, err
	}
	p := &Person{ID: spec.ID, Name: spec.Name, Type: typ, PositionX: -1, PositionY: -1}
	if p.Name == "" {
		p.Name = p.ID
	}
	if err := checkName("person name", p.Name); err != nil {
		return Person{}, err
	}
	if err := setPosition(&p.PositionX, &p.PositionY, spec.PositionX, spec.PositionY); err != nil {
		return Person{}, err
	}
	h.lockChange()
	defer h.unlockChange()
	if _, ok := h.persons.get(p.ID); ok {
		return Person{}, conflictf("person %q already exists", p.ID)
	}
	if err := full(h.persons.len(), h.maxPersons, "persons", "MaxPersons", "max-persons"); err != nil {
		return Person{}, err
	}
	to, _ := h.placePersonLocked(p)
	h.persons.add(p.ID, p)
	h.countPersonLocked(nil, to)
	h.countingPersonsLocked() // past scanned persons, counted: see personsHereLocked
	h.publishPersonLocked(EventPersonAdded, p)
	h.personMovedLocked(p, LocationUnknown, nil, to, true, false)
	return *p, nil
}

// Person returns the person with the given id, or an error of kind
// [ErrNotFound].
func (h *Home) Person(id string) (Person, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	p, ok := h.persons.get(id)
	if !ok {
		return Person{}, notFoundf("person %q does not exist", truncate(id))
	}
	return *p, nil
}

// Persons returns every person, in creation order.
func (h *Home) Persons() []Person {
	h.mu.RLock()
	defer h.mu.RUnlock()
	all := h.persons.all()
	out := make([]Person, len(all))
	for i, p := range all {
		out[i] = *p
	}
	return out
}

// UpdatePerson applies a partial change to a person and returns the person
// after it. A position wins over a location; a location naming no zone is an
// error of kind [ErrNotFound]. On error nothing changes.
func (h *Home) UpdatePerson(id string, u PersonUpdate) (Person, error) {
	h.lockChange()
	defer h.unlockChange()
	cur, ok := h.persons.get(id)
	if !ok {
		return Person{}, notFoundf("person %q does not exist", truncate(id))
	}
	next := *cur
	if u.Name != nil {
		next.Name = *u.Name
		if next.Name == "" {
			next.Name = next.ID
		}
		if err := checkName("person name", next.Name); err != nil {
			return Person{}, err
		}
	}
	if u.Type != nil {
		t, err := lookupPersonType(*u.Type)
		if err != nil {
			return Person{}, err
		}
		next.Type = t
	}
	if _, err := h.moveLocked(&next.PositionX, &next.PositionY, u.PositionX, u.PositionY, u.Location); err != nil {
		return Person{}, err
	}
	to, _ := h.placePersonLocked(&next)
	old := *cur
	*cur = next
	from := to
	if old.Location != cur.Location {
		from, _ = h.zones.get(old.Location)
		h.countPersonLocked(from, to)
	}
	if old.Name != cur.Name || old.Type != cur.Type {
		h.publishPersonLocked(EventPersonUpdated, cur)
	}
	if moved := old.PositionX != cur.PositionX || old.PositionY != cur.PositionY; moved || old.Location != cur.Location {
		h.publishPersonLocked(EventPersonPositionUpdate, cur)
		h.personMovedLocked(cur, old.Location, from, to, moved, false)
	}
	return *cur, nil
}

// DeletePerson removes a person. An unknown id is an error of kind
// [ErrNotFound].
func (h *Home) DeletePerson(id string) error {
	h.lockChange()
	defer h.unlockChange()
	p, ok := h.persons.get(id)
	if !ok {
		return notFoundf("person %q does not exist", truncate(id))
	}
	h.persons.remove(id)
	from, _ := h.zones.get(p.Location)
	h.countPersonLocked(from, nil)
	h.publishLocked(Event{Type: EventPersonRemoved, PersonID: id})
	h.personMovedLocked(p, p.Location, from, nil, false, true)
	return nil
}

// personsInLocked returns how many persons are in zone z (nil: none). A
// home with few persons and zones walks its persons; past scanned of
// either (a step of the realistic model asks for every zone), they are
// counted once and the counts kept from then on, in the zones' entries of
// the zone index (see zoneEntry.persons).
func (h *Home) personsInLocked(z *Zone) int {
	if z == nil {
		return 0
	}
	if !h.countingPersonsLocked() {
		n := 0
		for _, p := range h.persons.all() {
			if p.Location == z.ID {
				n++
			}
		}
		return n
	}
	return h.inZone.lookup(z).personCount()
}

// personsHereLocked returns how many persons are in zone z (nil: none), as
// personsInLocked does, without changing the home: readers ask it under
// the read lock (see device.sensesPersons). A home that does not count its
// persons by zone has at most scanned of them (CreatePerson starts the
// counts past that), so the walk stays short.
func (h *Home) personsHereLocked(z *Zone) int {
	if z == nil {
		return 0
	}
	if h.personsCounted {
		return h.inZone.lookup(z).personCount()
	}
	n := 0
	for _, p := range h.persons.all() {
		if p.Location == z.ID {
			n++
		}
	}
	return n
}

// sensedLocked returns the property a device that senses its zone's
// persons (see device.sensesPersons) reads them in, and what it reads
// there now, as its Derive would set.
func (h *Home) sensedLocked(d *device) (name string, v any) {
	s := d.sensing()
	return s.prop, s.read(d, h.personsHereLocked(d.zone))
}

// syncSensedLocked stores in each device that senses its zone's persons
// (see device.sensesPersons) what it reads. The moves of a home nobody
// watches call none of them, so what they store may lag; once watched,
// each is called when its zone becomes empty or occupied (a
// PresenceSensor) or gains or loses a person (a Camera), and publishes
// the change from what it stores. Call it before the first observer or
// subscription starts.
func (h *Home) syncSensedLocked() {
	h.inZone.each(func(z *Zone, e *zoneEntry) {
		if e.watch&(needOccupancy|needCount) == 0 {
			return
		}
		for _, w := range e.watchers {
			if w.d.sensesPersons() {
				w.d.props.set(h.sensedLocked(w.d))
			}
		}
	})
}

// countingPersonsLocked reports whether the home counts its persons by
// zone, starting to if it has outgrown walking them (see personsInLocked).
func (h *Home) countingPersonsLocked() bool {
	if !h.personsCounted {
		if len(h.persons.all()) <= scanned && len(h.zones.all()) <= scanned {
			return false
		}
		h.personsCounted = true
		for _, p := range h.persons.all() {
			if in, ok := h.zones.get(p.Location); ok {
				h.inZone.entry(in).persons++
			}
		}
	}
	return true
}

// countPersonLocked counts a person of the home as moved from zone from to
// zone to (nil: none, when created or removed, or a deleted zone, whose
// count went with it: see zoneIndex.retire).
func (h *Home) countPersonLocked(from, to *Zone) {
	if from == to || !h.personsCounted {
		return // nothing counted yet: see personsInLocked
	}
	if e := h.inZone.lookup(from); e != nil {
		e.persons--
	}
	if to != nil {
		h.inZone.entry(to).persons++
	}
}

// placePersonLocked recomputes the person's location from its position,
// and returns the zone it is in (nil: none) and whether its location
// changed.
func (h *Home) placePersonLocked(p *Person) (*Zone, bool) {
	loc := LocationUnknown
	z := h.locateLocked(p.PositionX, p.PositionY)
	if z != nil {
		loc = z.ID
	}
	changed := loc != p.Location
	p.Location = loc
	return z, changed
}

func (h *Home) publishPersonLocked(t EventType, p *Person) {
	e := Event{Type: t, PersonID: p.ID}
	if h.watchedLocked() {
		c := *p
		e.Person = &c
	}
	h.publishLocked(e)
}
