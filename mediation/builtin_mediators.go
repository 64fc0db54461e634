package mediation

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// Correlation properties set by the splitter and read by the aggregator.
const (
	// PropCorrelationID identifies the parts of one split message.
	PropCorrelationID = "correlation.id"
	// PropCorrelationIndex is the 0-based index of a part.
	PropCorrelationIndex = "correlation.index"
	// PropCorrelationTotal is the number of parts of the split message.
	PropCorrelationTotal = "correlation.total"
)

// builtinTypes returns the built-in types, mediators then adapters. The
// stateless ones keep nothing between messages (their fields are set by
// the constructor and only read; console writes whole lines to the engine's
// output, which serialises writes); the splitter counts the messages it
// splits, the aggregator keeps groups, rest-out keeps messages and
// number-generator its random source: those are stateful. Passthrough,
// filter, router and translator forward the properties they receive
// untouched, and console only prints them: they are read-only (propsKept,
// what Type.ReadOnly gives a user's type; not ReadOnly itself, which a
// copy of their Type would inherit); rest-out keeps what it gets without
// changing it (propsHeld); the enricher sizes what it changes
// (propsSized).
func builtinTypes() []Type {
	in, out := []string{"in"}, []string{"out"}
	return []Type{
		{Name: "passthrough", Kind: KindMediator, Stateless: true, props: propsKept, In: in, Out: out,
			Doc: "Forwards every message unchanged.", New: newPassthrough},
		{Name: "enricher", Kind: KindMediator, Stateless: true, props: propsSized, In: in, Out: out,
			Doc: "Adds each of its own properties to the properties of every message.", New: newEnricher},
		{Name: "filter", Kind: KindMediator, Stateless: true, props: propsKept, In: in, Out: out, Properties: map[string]any{"condition": ""},
			Doc: "Forwards the messages that match condition (an LDAP filter on properties, then map content); drops the others.",
			New: newFilter},
		{Name: "router", Kind: KindMediator, Stateless: true, props: propsKept, In: in, Out: []string{"default"},
			Properties: map[string]any{"conditions": map[string]any{}, "default": "default"},
			Doc: "Sends each message to every out port whose condition matches (conditions maps LDAP filter to port), " +
				"else to the default port. Its out ports are those named in conditions plus default.",
			New: newRouter},
		{Name: "splitter", Kind: KindMediator, In: in, Out: out, Properties: map[string]any{"separator": ","},
			Doc: "Splits string content (by the separator regular expression, which must not match the empty string) or array content " +
				"into one message per part, with properties correlation.id, correlation.index and correlation.total; " +
				"empty parts at the end of a string are dropped, as Java's String.split does. " +
				"A message of more than max-parts parts (default 10000) is refused whole.",
			New: newSplitter},
		{Name: "aggregator", Kind: KindMediator, In: in, Out: out,
			Properties: map[string]any{"count": 0, "max-groups": 1000},
			Doc: "Collects the messages of one correlation.id and emits one message whose content is the array of their contents " +
				"in correlation.index order, once count (0: the correlation.total of the group's first message) have arrived. " +
				"It holds at most max-groups groups, max-messages messages (default 10000) and max-bytes bytes (default 64 MiB), " +
				"dropping the oldest groups past them; a group larger than max-messages is refused.",
			New: newAggregator},
		{Name: "translator", Kind: KindMediator, Stateless: true, props: propsKept, In: in, Out: out, Properties: map[string]any{"dictionary": map[string]any{}},
			Doc: "Replaces whole words of string content according to dictionary (a map from word to word); " +
				"a key of several words or with other characters (CLIENT-ID) is replaced where it stands whole, not glued to a word.", New: newTranslator},

		{Name: "rest-in", Kind: KindAdapter, Stateless: true, Pattern: PatternInOnly, Out: out,
			Doc: "Messages sent with Chain.Send (POST on the adapter) enter the chain on port out.", New: newRestIn},
		{Name: "rest-out", Kind: KindAdapter, Pattern: PatternOutOnly, props: propsHeld, In: in, Properties: map[string]any{"capacity": 100},
			Doc: "Keeps the last capacity messages it receives, and at most max-bytes bytes of them (default 64 MiB), " +
				"readable with Chain.Messages (GET on the adapter).", New: newRestOut},
		{Name: "console", Kind: KindAdapter, Stateless: true, props: propsKept, Pattern: PatternOutOnly, In: in,
			Doc: "Writes each message it receives as one line to the engine's output (Config.Output).", New: newConsole},
		{Name: "number-generator", Kind: KindAdapter, Pattern: PatternInOnly, Out: out,
			Properties: map[string]any{"period": 5000, "min": 0, "max": 100, "seed": 0},
			Doc: "While the chain is started, emits a random number in [min, max) every period milliseconds " +
				"(on the engine's clock); seed 0 picks a random seed.", New: newNumberGenerator},
	}
}

// passthrough.

func newPassthrough(map[string]any, Env) (any, error) {
	return ProcessorFunc(func(_ string, m Message, out Emitter) error {
		out.Emit("out", m)
		return nil
	}), nil
}

// enricher.

type enricher struct {
	keys  []string
	vals  []any
	clone []bool // needsClone(vals[i]), decided once: each message gets its own copy
	sizes []int  // what mapSize counts for entry i
	size  int    // mapSize of a map of the entries alone
	// shared holds the entries alone, when none of them needs a copy: the
	// properties of every message that has none, shared by them all (see
	// run.shared), where a map of each message's own cost two allocations
	// and half of a short chain's time. Nobody writes to it.
	shared map[string]any
}

func newEnricher(props map[string]any, _ Env) (any, error) {
	e := &enricher{keys: sortedKeys(props)}
	e.size = mapSize(map[string]any{}, 0)
	for _, k := range e.keys {
		v := props[k]
		e.vals = append(e.vals, v)
		e.clone = append(e.clone, needsClone(v))
		e.sizes = append(e.sizes, entrySize(k, v, 0))
		e.size += e.sizes[len(e.sizes)-1]
	}
	if len(e.keys) > 0 && !slices.Contains(e.clone, true) {
		e.shared = make(map[string]any, len(e.keys))
		for i, k := range e.keys {
			e.shared[k] = e.vals[i]
		}
	}
	return e, nil
}

// Process adds the enricher's properties to m's. Given the size a queue
// counted for m's properties (see run.propsSize), it tells the run the
// size of the result, so that a queue ahead need not walk them. A message
// without properties gets the map its entries share, marked as shared on
// the run for as long as it travels on from here (comp.call gives those
// who may write to it or keep it a copy, but rest-out, which copies it
// when it hands it over).
func (e *enricher) Process(_ string, m Message, out Emitter) error {
	if len(e.keys) == 0 {
		out.Emit("out", m)
		return nil
	}
	r, _ := out.(*run)
	if m.Properties == nil && e.shared != nil && r != nil {
		m.Properties = e.shared
		in, inSize := r.in, r.inSize
		r.in, r.inSize, r.shared = mapAddr(e.shared), e.size, mapAddr(e.shared) // comp.call restores shared
		r.Emit("out", m)
		r.in, r.inSize = in, inSize
		return nil
	}
	ps := -1
	if m.Properties == nil {
		m.Properties = make(map[string]any, len(e.keys))
		for i, k := range e.keys {
			m.Properties[k] = e.value(i)
		}
		ps = e.size
	} else {
		if r != nil {
			ps = r.propsSize(m)
		}
		for i, k := range e.keys {
			if ps >= 0 {
				if old, ok := m.Properties[k]; ok {
					ps -= entrySize(k, old, 0)
				}
				ps += e.sizes[i]
			}
			m.Properties[k] = e.value(i)
		}
	}
	if r == nil {
		out.Emit("out", m)
		return nil
	}
	// What r.in said is now of m's properties as they were; the
	// components upstream gave m away and do not emit it again.
	in, inSize := r.in, r.inSize
	r.in, r.inSize = 0, 0
	if ps >= 0 {
		r.in, r.inSize = mapAddr(m.Properties), ps
	}
	r.Emit("out", m)
	r.in, r.inSize = in, inSize
	return nil
}

// value returns the value of property i for one message.
func (e *enricher) value(i int) any {
	if e.clone[i] {
		return cloneValue(e.vals[i])
	}
	return e.vals[i]
}

// filter.

type filterMediator struct{ f *Filter }

func newFilter(props map[string]any, _ Env) (any, error) {
	s, err := optString(props, "condition", "")
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(s) == "" {
		return nil, errorf(ErrInvalid, "filter: property condition is required (an LDAP filter such as (kind=temp))")
	}
	f, err := ParseFilter(s)
	if err != nil {
		return nil, errorf(ErrInvalid, "filter: condition: %v", err)
	}
	return &filterMediator{f: f}, nil
}

func (f *filterMediator) Process(_ string, m Message, out Emitter) error {
	if f.f.Match(m.Properties, m.Content) {
		out.Emit("out", m)
	} else {
		out.Drop(1)
	}
	return nil
}

// router.

type routerCase struct {
	f    *Filter
	port string
}

type router struct {
	cases []routerCase // sorted by filter text
	def   string
	ports []string // sorted distinct out ports, default included
}

func newRouter(props map[string]any, _ Env) (any, error) {
	def, err := optString(props, "default", "default")
	if err != nil {
		return nil, err
	}
	if !validPort(def) {
		return nil, errorf(ErrInvalid, "router: default port %q: want 1 to 128 letters, digits or -_.", def)
	}
	conds, err := optStringMap(props, "conditions")
	if err != nil {
		return nil, err
	}
	r := &router{def: def, ports: []string{def}}
	for _, text := range sortedKeys(conds) {
		port := conds[text]
		if !validPort(port) {
			return nil, errorf(ErrInvalid, "router: port %q of condition %s: want 1 to 128 letters, digits or -_.", port, text)
		}
		f, err := ParseFilter(text)
		if err != nil {
			return nil, errorf(ErrInvalid, "router: condition %q: %v", text, err)
		}
		r.cases = append(r.cases, routerCase{f: f, port: port})
		if !slices.Contains(r.ports, port) {
			r.ports = append(r.ports, port)
		}
	}
	slices.Sort(r.ports)
	return r, nil
}

// Ports implements Porter: the ports named by the conditions, and default.
func (r *router) Ports() (in, out []string) { return []string{"in"}, r.ports }

func (r *router) Process(_ string, m Message, out Emitter) error {
	var hit []string
	for _, c := range r.cases {
		if !slices.Contains(hit, c.port) && c.f.Match(m.Properties, m.Content) {
			hit = append(hit, c.port)
		}
	}
	if len(hit) == 0 {
		out.Emit(r.def, m)
		return nil
	}
	for i, p := range hit {
		if i < len(hit)-1 {
			out.Emit(p, m.Clone())
		} else {
			out.Emit(p, m)
		}
	}
	return nil
}

// splitter.

type splitter struct {
	re       *regexp.Regexp
	prefix   string
	n        uint64
	maxParts int
}

// DefaultMaxParts is the most parts a splitter makes of one message without
// a max-parts property.
const DefaultMaxParts = 10_000

func newSplitter(props map[string]any, env Env) (any, error) {
	sep, err := optString(props, "separator", ",")
	if err != nil {
		return nil, err
	}
	if sep == "" {
		return nil, errorf(ErrInvalid, "splitter: separator must not be empty")
	}
	re, err := regexp.Compile(sep)
	if err != nil {
		return nil, errorf(ErrInvalid, "splitter: separator: %v", err)
	}
	if re.MatchString("") {
		return nil, errorf(ErrInvalid, "splitter: separator %q matches the empty string, which would split between every character", sep)
	}
	maxParts, err := IntProperty(props, "max-parts", DefaultMaxParts, 1, 1_000_000)
	if err != nil {
		return nil, err
	}
	return &splitter{re: re, prefix: splitterPrefix(env), maxParts: maxParts}, nil
}

// splitterBuilds numbers the splitters built outside an engine.
var splitterBuilds atomic.Uint64

// splitterPrefix is the start of the correlation ids of a splitter:
// "<chain>/<component>.<n>", n counting the splitters its engine built, so
// that a program gives the same ids every run, whatever else the process
// ran before (another engine, another test), and a splitter rebuilt by
// UpdateProperties never reuses an id; a random one when the splitter is
// built outside a chain.
func splitterPrefix(env Env) string {
	builds := env.splitters
	if builds == nil {
		builds = &splitterBuilds
	}
	n := builds.Add(1)
	if env.Chain == "" || env.ID == "" {
		return newUUID()
	}
	return env.Chain + "/" + env.ID + "." + strconv.FormatUint(n, 10)
}

// onlySeparators reports whether rest is made of matches of re alone, one
// after the other (re matches no empty string), without splitting it.
func onlySeparators(re *regexp.Regexp, rest string) bool {
	for pos := 0; pos < len(rest); {
		loc := re.FindStringIndex(rest[pos:])
		if loc == nil || loc[0] != 0 {
			return false
		}
		pos += loc[1]
	}
	return true
}

func (s *splitter) Process(_ string, m Message, out Emitter) error {
	var parts []any
	switch c := m.Content.(type) {
	case string:
		split := s.re.Split(c, s.maxParts+1)
		if len(split) > 1 {
			// As Java's String.split, which Cilia's splitter used: the
			// empty parts at the end are dropped ("a,b," is two parts,
			// ",," none), unless the separator never matched ("" is one).
			if len(split) > s.maxParts && onlySeparators(s.re, split[len(split)-1]) {
				split = split[:len(split)-1] // the rest, unsplit, would be empty parts only
			}
			for len(split) > 0 && split[len(split)-1] == "" {
				split = split[:len(split)-1]
			}
		}
		if len(split) > s.maxParts {
			out.Drop(1)
			return errorf(ErrBusy, "splitter: the message splits into more than %d parts (max-parts)", s.maxParts)
		}
		parts = make([]any, len(split))
		for i, p := range split {
			parts[i] = p
		}
	case []any:
		parts = c
	case []string:
		parts = make([]any, len(c))
		for i, p := range c {
			parts[i] = p
		}
	default:
		parts = []any{c}
	}
	if len(parts) > s.maxParts {
		out.Drop(1)
		return errorf(ErrBusy, "splitter: the message has %d parts, more than %d (max-parts)", len(parts), s.maxParts)
	}
	if len(parts) == 0 { // an empty array, or separators only: no part to emit, the message is dropped
		out.Drop(1)
		return nil
	}
	s.n++
	id := s.prefix + "-" + strconv.FormatUint(s.n, 10)
	for i, p := range parts {
		props := make(map[string]any, len(m.Properties)+3)
		for k, v := range m.Properties {
			props[k] = cloneValue(v)
		}
		props[PropCorrelationID] = id
		props[PropCorrelationIndex] = i
		props[PropCorrelationTotal] = len(parts)
		out.Emit("out", Message{Content: p, Properties: props})
	}
	return nil
}

// aggregator.

type aggGroup struct {
	id    string
	want  int
	msgs  []aggItem
	bytes int
}

type aggItem struct {
	seq   uint64
	index int // correlation.index, or arrival position when absent
	size  int
	held  Held
}

type aggregator struct {
	count       int
	maxGroups   int
	maxMessages int
	maxBytes    int
	groups      map[string]*aggGroup
	order       []string // group ids, oldest first
	seq         uint64
	held, bytes int // messages and bytes held in all groups
}

// DefaultAggregatorMaxMessages is the most messages an aggregator holds
// without a max-messages property; DefaultAggregatorMaxBytes the most bytes
// without a max-bytes property (64 MiB).
const (
	DefaultAggregatorMaxMessages = 10_000
	DefaultAggregatorMaxBytes    = 64 << 20
)

func newAggregator(props map[string]any, _ Env) (any, error) {
	maxMessages, err := IntProperty(props, "max-messages", DefaultAggregatorMaxMessages, 1, 1_000_000)
	if err != nil {
		return nil, err
	}
	count, err := IntProperty(props, "count", 0, 0, maxMessages)
	if err != nil {
		return nil, err
	}
	maxGroups, err := IntProperty(props, "max-groups", 1000, 1, 1<<20)
	if err != nil {
		return nil, err
	}
	maxBytes, err := IntProperty(props, "max-bytes", DefaultAggregatorMaxBytes, 1024, 1<<30)
	if err != nil {
		return nil, err
	}
	return &aggregator{count: count, maxGroups: maxGroups, maxMessages: maxMessages, maxBytes: maxBytes,
		groups: map[string]*aggGroup{}}, nil
}

// evictOldest drops the oldest group other than keep; it reports false when
// there is none.
func (a *aggregator) evictOldest(keep string, out Emitter) bool {
	for i, id := range a.order {
		if id == keep {
			continue
		}
		g := a.groups[id]
		out.Drop(len(g.msgs))
		a.held -= len(g.msgs)
		a.bytes -= g.bytes
		delete(a.groups, id)
		a.order = slices.Delete(a.order, i, i+1)
		return true
	}
	return false
}

func (a *aggregator) Process(port string, m Message, out Emitter) error {
	idv, ok := m.Properties[PropCorrelationID]
	if !ok || idv == nil {
		out.Drop(1)
		return nil
	}
	id, ok := idv.(string)
	if !ok {
		id = fmt.Sprint(idv)
	}
	// A message refused for its size starts no group: an empty group
	// would count towards max-groups, and its making evict one under way.
	size := messageSize(m)
	if size > a.maxBytes {
		out.Drop(1)
		return errorf(ErrBusy, "aggregator: a message of %d bytes is more than it may hold (max-bytes %d)", size, a.maxBytes)
	}
	g := a.groups[id]
	if g == nil {
		want := a.count
		if want == 0 {
			n, err := optInt(m.Properties[PropCorrelationTotal])
			if err != nil || n < 1 {
				return fmt.Errorf("aggregator: message of group %s has no valid %s", id, PropCorrelationTotal)
			}
			want = n
		}
		if want > a.maxMessages {
			out.Drop(1)
			return errorf(ErrBusy, "aggregator: group %s would hold %d messages, more than %d (max-messages)", id, want, a.maxMessages)
		}
		if len(a.groups) >= a.maxGroups {
			a.evictOldest("", out)
		}
		g = &aggGroup{id: id, want: want}
		a.groups[id] = g
		a.order = append(a.order, id)
	}
	for a.held+1 > a.maxMessages || a.bytes+size > a.maxBytes {
		if !a.evictOldest(id, out) {
			break
		}
	}
	if a.held+1 > a.maxMessages || a.bytes+size > a.maxBytes {
		out.Drop(1)
		return errorf(ErrBusy, "aggregator: group %s holds %d messages (%d bytes), as many as it may (max-messages %d, max-bytes %d)",
			id, len(g.msgs), g.bytes, a.maxMessages, a.maxBytes)
	}
	idx := len(g.msgs)
	if n, err := optInt(m.Properties[PropCorrelationIndex]); err == nil {
		idx = n
	}
	a.seq++
	g.msgs = append(g.msgs, aggItem{seq: a.seq, index: idx, size: size, held: Held{Port: port, Message: m}})
	g.bytes += size
	a.held++
	a.bytes += size
	if len(g.msgs) < g.want {
		return nil
	}
	delete(a.groups, id)
	a.order = slices.DeleteFunc(a.order, func(s string) bool { return s == id })
	a.held -= len(g.msgs)
	a.bytes -= g.bytes
	slices.SortStableFunc(g.msgs, func(x, y aggItem) int { return cmp.Compare(x.index, y.index) })
	content := make([]any, len(g.msgs))
	for i, it := range g.msgs {
		content[i] = it.held.Message.Content
	}
	props := maps.Clone(g.msgs[0].held.Message.Properties)
	delete(props, PropCorrelationIndex)
	delete(props, PropCorrelationTotal)
	out.Emit("out", Message{Content: content, Properties: props})
	return nil
}

// Drain implements Drainer: the messages of the partial groups, in arrival order.
func (a *aggregator) Drain() []Held {
	var items []aggItem
	for _, g := range a.groups {
		items = append(items, g.msgs...)
	}
	slices.SortFunc(items, func(x, y aggItem) int { return cmp.Compare(x.seq, y.seq) })
	hs := make([]Held, len(items))
	for i, it := range items {
		hs[i] = it.held
	}
	clear(a.groups)
	a.order = nil
	a.held, a.bytes = 0, 0
	return hs
}

// translator.

// translator replaces whole words: the keys of its dictionary that are
// words (runs of letters, digits and underscores) by a lookup of each word
// of the content, and the keys that hold other characters as well
// (CLIENT-ID, "good morning", as Cilia's dictionaries have) wherever they
// appear not glued to a word on a side where they begin or end with a
// word character, nor ending inside a character of the content, the
// longest first where several begin at one place.
type translator struct {
	dict    map[string]string
	phrases []phrase  // sorted by key
	starts  [4]uint64 // the first bytes of the phrases, a bit each
}

// phrase is a dictionary key that is not a single word, and its value.
type phrase struct {
	key, value  string
	first, last bool // whether the key begins, ends, with a word rune
	utf8        bool // whether the key is UTF-8, and so ends where a rune does
}

func newTranslator(props map[string]any, _ Env) (any, error) {
	d, err := optStringMap(props, "dictionary")
	if err != nil {
		return nil, err
	}
	t := &translator{dict: d}
	for k, v := range d {
		if k == "" || isWordString(k) {
			continue
		}
		first, _ := utf8.DecodeRuneInString(k)
		last, _ := utf8.DecodeLastRuneInString(k)
		t.phrases = append(t.phrases, phrase{key: k, value: v, first: isWordRune(first), last: isWordRune(last), utf8: utf8.ValidString(k)})
		t.starts[k[0]/64] |= 1 << (k[0] % 64)
	}
	slices.SortFunc(t.phrases, func(a, b phrase) int { return strings.Compare(a.key, b.key) })
	return t, nil
}

func (t *translator) Process(_ string, m Message, out Emitter) error {
	if s, ok := m.Content.(string); ok && len(t.dict) > 0 {
		m.Content = t.translate(s)
	}
	out.Emit("out", m)
	return nil
}

// isWordRune reports whether r belongs to words: a letter, a digit or _.
func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// isWordString reports whether s is one word.
func isWordString(s string) bool {
	for _, r := range s {
		if !isWordRune(r) {
			return false
		}
	}
	return true
}

// translate replaces the words of s (maximal runs of letters, digits and
// underscores) found in the dictionary, and its phrases.
func (t *translator) translate(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	prevWord := false // whether the rune before i is a word rune
	for i := 0; i < len(s); {
		if k, v, ok := t.phraseAt(s, i, prevWord); ok {
			b.WriteString(v)
			i += len(k)
			r, _ := utf8.DecodeLastRuneInString(k)
			prevWord = isWordRune(r)
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			b.WriteString(s[i : i+n])
			i += n
			prevWord = false
			continue
		}
		j := i + n
		for j < len(s) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if !isWordRune(r) {
				break
			}
			j += n
		}
		w := s[i:j]
		if x, ok := t.dict[w]; ok {
			w = x
		}
		b.WriteString(w)
		i = j
		prevWord = true
	}
	return b.String()
}

// phraseAt returns the longest phrase that s holds at i, not glued to a
// word (one that begins with a word rune must not follow one, prevWord,
// and one that ends with a word rune must not be followed by one) and not
// ending inside a rune of s. The phrases that s holds at i are found
// byte by byte among the sorted keys, each byte narrowing the range of
// those that begin as s does there, shortest first, so that the cost is
// the length of the longest of them times the logarithm of their number,
// however many phrases the dictionary has.
func (t *translator) phraseAt(s string, i int, prevWord bool) (key, value string, ok bool) {
	if len(t.phrases) == 0 || t.starts[s[i]/64]&(1<<(s[i]%64)) == 0 {
		return "", "", false
	}
	best := -1
	lo, hi := 0, len(t.phrases)
	for d := 0; lo < hi; d++ {
		// The keys of [lo, hi) all begin with s[i:i+d]; one of length d,
		// if any, sorts first.
		if p := &t.phrases[lo]; len(p.key) == d {
			if t.fits(p, s, i, prevWord) {
				best = lo
			}
			if lo++; lo == hi {
				break
			}
		}
		if i+d >= len(s) {
			break
		}
		if hi-lo == 1 { // one key left: the rest of it at once
			if p := &t.phrases[lo]; strings.HasPrefix(s[i+d:], p.key[d:]) && t.fits(p, s, i, prevWord) {
				best = lo
			}
			break
		}
		c, base, ps := s[i+d], lo, t.phrases[lo:hi]
		lo = base + sort.Search(len(ps), func(k int) bool { return ps[k].key[d] >= c })
		hi = base + sort.Search(len(ps), func(k int) bool { return ps[k].key[d] > c })
	}
	if best < 0 {
		return "", "", false
	}
	return t.phrases[best].key, t.phrases[best].value, true
}

// fits reports whether p, which s holds at i, may be replaced there (see
// phraseAt).
func (t *translator) fits(p *phrase, s string, i int, prevWord bool) bool {
	if prevWord && p.first {
		return false
	}
	end := i + len(p.key)
	if end < len(s) && p.last {
		if next, _ := utf8.DecodeRuneInString(s[end:]); isWordRune(next) {
			return false
		}
	}
	if !p.utf8 { // "\xc3" must not take the first byte of an é
		for i < end {
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
		}
		return i == end
	}
	return true
}
