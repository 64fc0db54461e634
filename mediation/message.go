package mediation

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
// so the copy shares no mutable map or slice of those kinds with m. Other
// values are copied as they are. Clone is safe for concurrent use as long as
// nobody modifies m at the same time.
func (m Message) Clone() Message {
	return Message{Content: cloneValue(m.Content), Properties: cloneMap(m.Properties)}
}

// cloneMap deep-copies a property map; nil stays nil.
func cloneMap(p map[string]any) map[string]any {
	if p == nil {
		return nil
	}
	q := make(map[string]any, len(p))
	for k, v := range p {
		q[k] = cloneValue(v)
	}
	return q
}

// cloneValue deep-copies the JSON container kinds and returns other values unchanged.
func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneMap(x)
	case []any:
		y := make([]any, len(x))
		for i, e := range x {
			y[i] = cloneValue(e)
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
