package mediation

import (
	"encoding/json"

	"github.com/pervasim/pervasim/internal/jsonfast"
)

// Message is the unit of data that flows through a chain.
//
// Content is any JSON-able value (string, float64 or other number, bool,
// nil, []any, map[string]any). Properties are string-keyed metadata that
// filters and routers look at. Message is a plain value, safe for concurrent
// use as long as nobody modifies it; the runtime never lets two consumers
// share one (see Clone).
//
// Ownership: a Message handed to the runtime (Chain.Send, Emitter.Emit,
// Link.Send) belongs to the runtime afterwards; the caller must not modify
// its Properties map or its content maps and slices any more.
type Message struct {
	// Content is the payload.
	Content any `json:"content"`
	// Properties are the message's metadata. It may be nil.
	Properties map[string]any `json:"properties,omitempty"`
}

// Clone returns a deep copy of m: its Properties map and any map[string]any
// or []any found in its content or property values are copied recursively,
// so the copy shares no mutable map or slice of those kinds with m, down to
// 10,000 levels of nesting, as deep as JSON goes; deeper (only a value that
// holds itself, made in Go, is), the values are shared rather than copied
// without end. Other values are copied as they are. Clone is safe for
// concurrent use as long as nobody modifies m at the same time.
func (m Message) Clone() Message {
	return Message{Content: cloneValue(m.Content), Properties: cloneMap(m.Properties)}
}

// Printable returns m as JSON can print it: a copy in which a value
// encoding/json cannot print (NaN, infinities, channels, functions,
// complex numbers) is its text in a string instead, and one nested deeper
// than 64 levels or cyclic is nil, as [FormatProperties] prints them. A
// message JSON can print is returned as it is. Printable is safe for
// concurrent use as long as nobody modifies m at the same time.
func (m Message) Printable() Message {
	if _, err := json.Marshal(m); err == nil {
		return m
	}
	p := Message{Content: propSanitize(m.Content, 1)}
	if m.Properties != nil {
		p.Properties, _ = propSanitize(m.Properties, 1).(map[string]any)
	}
	return p
}

// cloneMap deep-copies a property map; nil stays nil.
func cloneMap(p map[string]any) map[string]any { return cloneMapAt(p, 0) }

// cloneMapAt is cloneMap for a map at depth.
func cloneMapAt(p map[string]any, depth int) map[string]any {
	if p == nil {
		return nil
	}
	q := make(map[string]any, len(p))
	for k, v := range p {
		q[k] = cloneValueAt(v, depth+1)
	}
	return q
}

// needsClone reports whether cloneValue copies v rather than returning it
// as it is: v is one of the container kinds it copies.
func needsClone(v any) bool {
	switch v.(type) {
	case map[string]any, []any, []string, map[string]string:
		return true
	}
	return false
}

// cloneValue deep-copies the JSON container kinds and returns other values
// unchanged (see needsClone), as deep as JSON nests (jsonfast.MaxDepth, as
// encoding/json), so that what a client sent is copied whole, and a value
// that holds itself is not copied without end.
func cloneValue(v any) any { return cloneValueAt(v, 0) }

// cloneValueAt is cloneValue for a value at depth: one deeper than
// jsonfast.MaxDepth is returned as it is.
func cloneValueAt(v any, depth int) any {
	if depth > jsonfast.MaxDepth {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		return cloneMapAt(x, depth)
	case []any:
		y := make([]any, len(x))
		for i, e := range x {
			y[i] = cloneValueAt(e, depth+1)
		}
		return y
	case []string:
		return append([]string(nil), x...)
	case map[string]string:
		y := make(map[string]string, len(x))
		for k, e := range x {
			y[k] = e
		}
		return y
	}
	return v
}

// messageSize estimates the bytes m holds, for the bounds on what links and
// components may hold: strings and byte slices by their length, maps and
// slices by their entries, plus a fixed overhead per value.
func messageSize(m Message) int {
	return messageBase + valueSize(m.Content, 0) + mapSize(m.Properties, 0)
}

// messageBase is what messageSize counts for a message itself.
const messageBase = 64

func valueSize(v any, depth int) int {
	if depth > 100 {
		return 16
	}
	switch x := v.(type) {
	case string:
		return 16 + len(x)
	case []byte:
		return 24 + len(x)
	case map[string]any:
		return mapSize(x, depth+1)
	case []any:
		n := 24
		for _, e := range x {
			n += valueSize(e, depth+1)
		}
		return n
	case []string:
		n := 24
		for _, e := range x {
			n += 16 + len(e)
		}
		return n
	default:
		return 16
	}
}

func mapSize(m map[string]any, depth int) int {
	if m == nil {
		return 0
	}
	n := 48
	for k, v := range m {
		n += entrySize(k, v, depth)
	}
	return n
}

// entrySize is what mapSize counts for the entry k: v of a map at depth.
func entrySize(k string, v any, depth int) int { return 16 + len(k) + valueSize(v, depth+1) }
