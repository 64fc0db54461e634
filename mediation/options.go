package mediation

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// optInt reads an integral number given as any Go number, a json.Number or
// a numeric string.
func optInt(v any) (int, error) {
	f, err := optFloat(v)
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return 0, fmt.Errorf("%v is not an integer", v)
	}
	return int(f), nil
}

// optFloat reads a number given as any Go number, a json.Number or a
// numeric string.
func optFloat(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case int:
		return float64(x), nil
	case int8:
		return float64(x), nil
	case int16:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case uint:
		return float64(x), nil
	case uint8:
		return float64(x), nil
	case uint16:
		return float64(x), nil
	case uint32:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case json.Number:
		return x.Float64()
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", x)
		}
		return f, nil
	}
	return 0, fmt.Errorf("%v (%T) is not a number", v, v)
}

// optString reads a string property; def is used when absent or nil.
func optString(props map[string]any, key, def string) (string, error) {
	v, ok := props[key]
	if !ok || v == nil {
		return def, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", errorf(ErrInvalid, "property %s: %v (%T) is not a string", key, v, v)
	}
	return s, nil
}

// IntProperty reads the integer property key of a component's properties,
// within [lo, hi], as the built-in types read theirs: any Go number, a
// json.Number or a numeric string ("12", "1e3", "5.0"), whole; def when it
// is absent or nil. Anything else is an error of kind [ErrInvalid]. It is
// for the constructors of component types (a [Type]'s New).
func IntProperty(props map[string]any, key string, def, lo, hi int) (int, error) {
	v, ok := props[key]
	if !ok || v == nil {
		return def, nil
	}
	n, err := optInt(v)
	if err != nil || n < lo || n > hi {
		return 0, errorf(ErrInvalid, "property %s: %v: want an integer from %d to %d", key, v, lo, hi)
	}
	return n, nil
}

// optStringMap reads a map of strings given as map[string]any,
// map[string]string, or a string in ParseProperties syntax. A nil or absent
// value gives an empty map.
func optStringMap(props map[string]any, key string) (map[string]string, error) {
	v, ok := props[key]
	if !ok || v == nil {
		return map[string]string{}, nil
	}
	var m map[string]any
	switch x := v.(type) {
	case map[string]string:
		out := make(map[string]string, len(x))
		for k, s := range x {
			out[k] = s
		}
		return out, nil
	case map[string]any:
		m = x
	case string:
		p, err := ParseProperties(x)
		if err != nil {
			return nil, errorf(ErrInvalid, "property %s: %v", key, err)
		}
		m = p
	default:
		return nil, errorf(ErrInvalid, "property %s: %v (%T) is not a map", key, v, v)
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		s, ok := e.(string)
		if !ok {
			return nil, errorf(ErrInvalid, "property %s: value of %q is %v (%T), not a string", key, k, e, e)
		}
		out[k] = s
	}
	return out, nil
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
