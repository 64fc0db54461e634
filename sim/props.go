package sim

import (
	"encoding/binary"
	"iter"
	"runtime"
	"slices"
	"strings"
	"sync"
	"weak"
)

// props is a device's stored properties, kept compact: the names, sorted,
// live in a propNames shared by every device that has the same ones (the
// devices of one kind mostly do), and the device holds only the values.
// A map per device weighed about 320 bytes; this weighs 16 per property.
// The zero props has no property. State, fault and Location are not among
// them: the device holds them in its fields, and Props shows them in their
// place (see propNames).
type props struct {
	names *propNames // shared: never changed once made
	vals  []any      // vals[i] is the value of names.s[i]; the device's own
}

// propNames is a sorted set of property names.
type propNames struct {
	s []string
	// The properties of a device with these stored names, in name order,
	// outside every zone ([0]) and in one ([1]): an index in s, or
	// fieldFault, fieldState or fieldLocation for the properties the
	// device holds in its fields.
	order [2][]int32
}

// The entries of propNames.order that are not indices in s.
const (
	fieldLocation = -1 - iota
	fieldFault
	fieldState
)

// newPropNames returns the set of the sorted, distinct names s.
func newPropNames(s []string) *propNames {
	n := &propNames{s: s}
	for zoned := range 2 {
		fields := []struct {
			name string
			code int32
		}{{PropLocation, fieldLocation}, {PropFault, fieldFault}, {PropState, fieldState}}
		if zoned == 0 {
			fields = fields[1:]
		}
		order := make([]int32, 0, len(s)+len(fields))
		for i, name := range s {
			for len(fields) > 0 && fields[0].name < name {
				order = append(order, fields[0].code)
				fields = fields[1:]
			}
			order = append(order, int32(i))
		}
		for _, f := range fields {
			order = append(order, f.code)
		}
		n.order[zoned] = order
	}
	return n
}

// fieldNames names the properties a device holds in its fields, by their
// code in propNames.order: fieldNames[-code-1].
var fieldNames = [...]string{PropLocation, PropFault, PropState}

// noNames is the empty set of names.
var noNames = newPropNames(nil)

// names interns sets of property names, so that devices with the same
// names share them: most devices share one, their kind's properties. It
// holds them weakly, by a key no other list of names has (each name after
// its length): a set no device holds any more is collected, and its entry
// goes with it (forgetNames), so names invented by clients are held only
// as long as the devices that have them.
var names = struct {
	sync.RWMutex
	m map[string]weak.Pointer[propNames]
}{m: map[string]weak.Pointer[propNames]{}}

// namesKey appends to b the key of the list of names s.
func namesKey(b []byte, s []string) []byte {
	for _, k := range s {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
	}
	return b
}

// internNames returns the shared set of the sorted, distinct names s,
// which it may keep.
func internNames(s []string) *propNames {
	if len(s) == 0 {
		return noNames
	}
	var buf [256]byte
	key := namesKey(buf[:0], s)
	names.RLock()
	wp, ok := names.m[string(key)]
	names.RUnlock()
	if n := wp.Value(); ok && n != nil {
		return n
	}
	names.Lock()
	defer names.Unlock()
	if n := names.m[string(key)].Value(); n != nil {
		return n
	}
	n := newPropNames(s)
	k := string(key)
	names.m[k] = weak.Make(n)
	runtime.AddCleanup(n, forgetNames, k)
	return n
}

// forgetNames drops the entry of key once its set was collected (unless a
// new set took its place meanwhile).
func forgetNames(key string) {
	names.Lock()
	defer names.Unlock()
	if wp, ok := names.m[key]; ok && wp.Value() == nil {
		delete(names.m, key)
	}
}

// newProps returns the properties of m.
func newProps(m map[string]any) props {
	s := make([]string, 0, len(m))
	for k := range m {
		s = append(s, k)
	}
	slices.Sort(s)
	p := props{names: internNames(s), vals: make([]any, len(s))}
	for i, k := range p.names.s {
		p.vals[i] = m[k]
	}
	return p
}

// index returns the position of name, or -1.
func (p *props) index(name string) int {
	if p.names == nil {
		return -1
	}
	s := p.names.s
	if len(s) <= 8 {
		for i, k := range s {
			if k == name {
				return i
			}
		}
		return -1
	}
	if i, ok := slices.BinarySearch(s, name); ok {
		return i
	}
	return -1
}

// get returns the value of name.
func (p *props) get(name string) (any, bool) {
	if i := p.index(name); i >= 0 {
		return p.vals[i], true
	}
	return nil, false
}

// value returns the value of name, nil when it has none.
func (p *props) value(name string) any {
	v, _ := p.get(name)
	return v
}

// len returns the number of properties.
func (p *props) len() int { return len(p.vals) }

// set sets name to v, adding it when absent. The values are written in
// place: a working copy must be made with clone first.
func (p *props) set(name string, v any) {
	if i := p.index(name); i >= 0 {
		p.vals[i] = v
		return
	}
	var old []string
	if p.names != nil {
		old = p.names.s
	}
	i, _ := slices.BinarySearch(old, name)
	s := make([]string, 0, len(old)+1)
	s = append(append(append(s, old[:i]...), name), old[i:]...)
	vals := make([]any, 0, len(p.vals)+1) // exactly: most devices keep their names
	vals = append(append(append(vals, p.vals[:i]...), v), p.vals[i:]...)
	p.names, p.vals = internNames(s), vals
}

// propChange is a change of one property for props.apply: its new value,
// or its removal.
type propChange struct {
	name   string
	value  any
	remove bool
}

// apply makes the changes cs, in their order (a later change of a name
// wins over an earlier one), making and interning one new set of names at
// most: a change of thousands of names costs their sorting, not a set per
// name. The values are written in place: a working copy must be made with
// clone first. cs is reordered.
func (p *props) apply(cs []propChange) {
	slices.SortStableFunc(cs, func(a, b propChange) int { return strings.Compare(a.name, b.name) })
	last := cs[:0] // the last change of each name
	for i, c := range cs {
		if i+1 < len(cs) && cs[i+1].name == c.name {
			continue
		}
		last = append(last, c)
	}
	cs = last
	reshape := false
	for _, c := range cs {
		switch i := p.index(c.name); {
		case i >= 0 && !c.remove:
			p.vals[i] = c.value
		case i >= 0 || !c.remove:
			reshape = true
		}
	}
	if !reshape {
		return
	}
	var old []string
	if p.names != nil {
		old = p.names.s
	}
	ns := make([]string, 0, len(old)+len(cs))
	vals := make([]any, 0, len(old)+len(cs))
	i, j := 0, 0
	for i < len(old) || j < len(cs) {
		switch {
		case j == len(cs) || i < len(old) && old[i] < cs[j].name:
			ns, vals = append(ns, old[i]), append(vals, p.vals[i])
			i++
		case i == len(old) || cs[j].name < old[i]:
			if !cs[j].remove {
				ns, vals = append(ns, cs[j].name), append(vals, cs[j].value)
			}
			j++
		default: // the same name
			if !cs[j].remove {
				ns, vals = append(ns, old[i]), append(vals, cs[j].value)
			}
			i++
			j++
		}
	}
	if len(vals) < cap(vals) { // fewer than the room made: keep none spare
		ns, vals = slices.Clone(ns), slices.Clone(vals)
	}
	p.names, p.vals = internNames(ns), vals
}

// del removes name, if present.
func (p *props) del(name string) {
	i := p.index(name)
	if i < 0 {
		return
	}
	s := make([]string, 0, len(p.names.s)-1)
	s = append(append(s, p.names.s[:i]...), p.names.s[i+1:]...)
	vals := make([]any, 0, len(p.vals)-1)
	vals = append(append(vals, p.vals[:i]...), p.vals[i+1:]...)
	p.names, p.vals = internNames(s), vals
}

// clone returns a copy whose values can be changed apart from p's. The
// values themselves are shared: they are never changed in place.
func (p props) clone() props {
	p.vals = slices.Clone(p.vals)
	return p
}

// Props is a read-only view of a device's properties. Numbers are float64.
// A Props is valid for the length of the call that received it: do not
// keep it. It is not safe for concurrent use with changes to its device,
// which the home's lock keeps apart.
//
// The Props of [Home.EachDevice] and [Home.ViewDevice] show the device as
// a snapshot does: a sensor's properties that follow a variable of its
// zone hold its reading, as do a PresenceSensor's sensed presence and a
// Camera's count in a home nobody watches. A behaviour's
// ([DeviceContext.Props], the old properties of Changed) hold what the
// device stores.
type Props struct {
	d *device
	h *Home // set: the live view, readings in place of the stored values
}

// stored returns the value of d's j-th stored property, or, in the live
// view, its reading if it follows a zone variable or its zone's occupancy.
func (p Props) stored(j int) any {
	if p.h != nil {
		if p.d.follows {
			name := p.d.props.names.s[j]
			for _, spec := range p.d.kind.Properties {
				if spec.Follows != "" && spec.Name == name {
					return p.d.reading(spec)
				}
			}
		}
		if p.d.sensesPersons() && !p.h.watchedLocked() {
			// Only while nobody watches (see device.sensesPersons): in a
			// watched home what it stores is what it published, which
			// may differ from its zone within a change (its zone deleted,
			// whose persons left it untold; RestoreDerived setting it),
			// and events' snapshots and OldValues must agree with it.
			if p.d.props.names.s[j] == p.d.sensing().prop {
				_, v := p.h.sensedLocked(p.d)
				return v
			}
		}
	}
	return p.d.props.vals[j]
}

// order returns d's properties in name order, as propNames.order does.
func (d *device) order() []int32 {
	n := d.props.names
	if n == nil {
		n = noNames
	}
	if d.zone != nil {
		return n.order[1]
	}
	return n.order[0]
}

// fieldValue returns the value of the property name that d holds in its
// fields, without allocating but for a Location.
func (d *device) fieldValue(name string) any {
	switch name {
	case PropState:
		if d.active {
			return StateActivated
		}
		return StateDeactivated
	case PropFault:
		if d.faulty {
			return FaultYes
		}
		return FaultNo
	}
	return d.zone.ID
}

// Get returns the named property's value and whether the device has it.
func (p Props) Get(name string) (any, bool) {
	switch {
	case p.d == nil, name == PropLocation && p.d.zone == nil:
		return nil, false
	case name == PropState, name == PropFault, name == PropLocation:
		return p.d.fieldValue(name), true
	}
	if j := p.d.props.index(name); j >= 0 {
		return p.stored(j), true
	}
	return nil, false
}

// Len returns the number of properties.
func (p Props) Len() int {
	if p.d == nil {
		return 0
	}
	return len(p.d.order())
}

// At returns the i-th property in name order, for 0 <= i < p.Len(). A
// loop over At allocates nothing but the value of a Location (a string
// made an any), where one over All may allocate more.
func (p Props) At(i int) (name string, value any) {
	j := p.d.order()[i]
	if j < 0 {
		name = fieldNames[-j-1]
		return name, p.d.fieldValue(name)
	}
	return p.d.props.names.s[j], p.stored(int(j))
}

// Name returns the name of the i-th property in name order, for
// 0 <= i < p.Len(), without its value: nothing allocates.
func (p Props) Name(i int) string {
	j := p.d.order()[i]
	if j < 0 {
		return fieldNames[-j-1]
	}
	return p.d.props.names.s[j]
}

// All returns an iterator over the properties, in name order. The values
// are the device's own: do not change them.
func (p Props) All() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		for i := range p.Len() {
			if !yield(p.At(i)) {
				return
			}
		}
	}
}

// Number returns the named property as a number; 0 when it is absent or not
// a number.
func (p Props) Number(name string) float64 {
	v, _ := p.Get(name)
	f, _ := toFloat(v)
	return f
}

// Bool returns the named property as a boolean; false when it is absent or
// not a boolean.
func (p Props) Bool(name string) bool {
	v, _ := p.Get(name)
	b, _ := v.(bool)
	return b
}

// Text returns the named property as a string; "" when it is absent or not
// a string.
func (p Props) Text(name string) string {
	v, _ := p.Get(name)
	s, _ := v.(string)
	return s
}
