package sim

import (
	"iter"
	"slices"
	"strings"
	"sync"
)

// props is a device's stored properties, kept compact: the names, sorted,
// live in a propNames shared by every device that has the same ones (the
// devices of one kind mostly do), and the device holds only the values.
// A map per device weighed about 320 bytes; this weighs 16 per property.
// The zero props has no property.
type props struct {
	names *propNames // shared: never changed once made
	vals  []any      // vals[i] is the value of names.s[i]; the device's own
}

// propNames is a sorted set of property names.
type propNames struct {
	s []string
}

// noNames is the empty set of names.
var noNames = &propNames{}

// names interns sets of property names, so that devices with the same
// names share them. It is bounded: past maxInterned sets, new ones are
// made for their device alone (a set is small, and most devices share a
// handful: their kind's properties with and without a Location).
var names = struct {
	sync.RWMutex
	m map[string]*propNames
}{m: map[string]*propNames{}}

// maxInterned bounds the interned sets of names: clients can invent free
// properties, and with them any number of sets.
const maxInterned = 4096

// internNames returns the shared set of the sorted, distinct names s,
// which it may keep.
func internNames(s []string) *propNames {
	if len(s) == 0 {
		return noNames
	}
	key := strings.Join(s, "\x00")
	names.RLock()
	n, ok := names.m[key]
	names.RUnlock()
	if ok {
		return n
	}
	names.Lock()
	defer names.Unlock()
	if n, ok := names.m[key]; ok {
		return n
	}
	n = &propNames{s: s}
	if len(names.m) < maxInterned {
		names.m[key] = n
	}
	return n
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

// toMap returns the properties as a map, values deep-copied.
func (p *props) toMap() map[string]any {
	m := make(map[string]any, len(p.vals))
	for i, v := range p.vals {
		m[p.names.s[i]] = cloneValue(v)
	}
	return m
}

// all yields the properties in name order.
func (p *props) all(yield func(string, any) bool) {
	for i, v := range p.vals {
		if !yield(p.names.s[i], v) {
			return
		}
	}
}

// Props is a read-only view of a device's properties. Numbers are float64.
// A Props is valid for the length of the call that received it: do not
// keep it. It is not safe for concurrent use with changes to its device,
// which the home's lock keeps apart.
type Props struct {
	p *props
}

// Get returns the named property's value and whether the device has it.
func (p Props) Get(name string) (any, bool) {
	if p.p == nil {
		return nil, false
	}
	return p.p.get(name)
}

// Len returns the number of properties.
func (p Props) Len() int {
	if p.p == nil {
		return 0
	}
	return p.p.len()
}

// At returns the i-th property in name order, for 0 <= i < p.Len(): a
// loop over At allocates nothing, where one over All may.
func (p Props) At(i int) (name string, value any) {
	return p.p.names.s[i], p.p.vals[i]
}

// All returns an iterator over the properties, in name order. The values
// are the device's own: do not change them.
func (p Props) All() iter.Seq2[string, any] {
	if p.p == nil {
		return func(func(string, any) bool) {}
	}
	return p.p.all
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
