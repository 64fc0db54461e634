package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// encode writes v as JSON with the given status.
func encode(w http.ResponseWriter, status int, v any) { encodeOr(w, status, v, nil) }

// encodeOr writes v as JSON with the given status, or, when JSON cannot
// hold v and printable is not nil, what printable returns.
func encodeOr(w http.ResponseWriter, status int, v any, printable func() any) {
	b := encodeBuffers.Get().(*bytes.Buffer)
	defer func() {
		if b.Cap() <= 1<<20 {
			b.Reset()
			encodeBuffers.Put(b)
		}
	}()
	err := json.NewEncoder(b).Encode(v)
	if err != nil && printable != nil {
		b.Reset()
		err = json.NewEncoder(b).Encode(printable())
	}
	if err != nil {
		// Encoded before anything is sent, so that a value JSON cannot
		// hold (a NaN, say: a bug) is a 500, not a 200 cut short.
		v, status = errorBody{Error: "internal error: the answer cannot be written as JSON", Code: "internal"}, http.StatusInternalServerError
		b.Reset()
		json.NewEncoder(b).Encode(v)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// encodeBuffers holds the buffers encode writes answers into.
var encodeBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// ReadBody reads r's body as the REST handler reads it: at most limit
// bytes. A body over it, declared or read, is an error [WriteError]
// answers 413 too_large (the server then closes the connection rather
// than read the rest); one that cannot be read, 400 invalid.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	return readBody(w, r, limit)
}

// readBody reads the whole request body, at most limit bytes.
// A body whose declared length is over the limit is refused unread: a
// client that waits for 100 Continue is not asked to send it, and one that
// never sends it does not hold the request open.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if ce := strings.TrimSpace(r.Header.Get("Content-Encoding")); ce != "" && !strings.EqualFold(ce, "identity") && r.ContentLength != 0 {
		// Read as it is, a compressed body would be refused for what it
		// looks like (not UTF-8, not JSON), which says nothing of why.
		return nil, invalidf("a body sent with Content-Encoding %s is not read: send it uncompressed", quoteShort(ce))
	}
	if r.ContentLength > limit {
		return nil, invalidLimit(limit)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, invalidLimit(tooBig.Limit)
	}
	if err != nil {
		return nil, invalidf("cannot read the request body: %v", err)
	}
	return body, nil
}

func invalidLimit(limit int64) error {
	return &limitError{limit: limit}
}

type limitError struct{ limit int64 }

func (e *limitError) Error() string {
	return "request body is larger than " + formatBytes(e.limit)
}

func (e *limitError) Is(target error) bool { return target == errTooLarge }

func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return itoa(n>>20) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return itoa(n>>10) + " KiB"
	}
	return itoa(n) + " bytes"
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// object is a JSON object whose fields are decoded one at a time, so that an
// absent field can be told from a zero one and each bad field gets its own
// message. A field holding null counts as absent.
type object map[string]json.RawMessage

// decodeObject reads a JSON object from the request body.
func decodeObject(w http.ResponseWriter, r *http.Request, limit int64) (object, error) {
	body, err := readBody(w, r, limit)
	if err != nil {
		return nil, err
	}
	return parseObject(body)
}

// parseObject parses body as one JSON object.
func parseObject(body []byte) (object, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, invalidf("request body is empty: send a JSON object")
	}
	if !utf8.Valid(body) {
		return nil, invalidf("request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var o object
	if err := dec.Decode(&o); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, invalidf("request body must be a JSON object, not %s", typeErr.Value)
		}
		return nil, invalidf("request body is not valid JSON: %v", err)
	}
	if o == nil {
		return nil, invalidf("request body must be a JSON object, not null")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, invalidf("request body holds more than one JSON value")
	}
	return o, nil
}

// raw returns the field's raw JSON, or nil when absent or null.
func (o object) raw(name string) json.RawMessage {
	v, ok := o[name]
	if !ok || string(v) == "null" {
		return nil
	}
	return v
}

// str decodes a string field; nil when absent.
func (o object) str(name string) (*string, error) {
	raw := o.raw(name)
	if raw == nil {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, invalidf("field %q must be a string", name)
	}
	return &s, nil
}

// boolean decodes a boolean field; nil when absent.
func (o object) boolean(name string) (*bool, error) {
	raw := o.raw(name)
	if raw == nil {
		return nil, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, invalidf("field %q must be a boolean", name)
	}
	return &b, nil
}

// number decodes a finite number field; nil when absent.
func (o object) number(name string) (*float64, error) {
	raw := o.raw(name)
	if raw == nil {
		return nil, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		var rangeErr *json.UnmarshalTypeError
		if errors.As(err, &rangeErr) && rangeErr.Value == "number "+string(raw) {
			return nil, invalidf("field %q is out of range", name)
		}
		return nil, invalidf("field %q must be a number", name)
	}
	return &f, nil
}

// coordinate decodes a number field truncated toward zero to an integer.
// Values beyond ±2^31 are rejected here; the domain checks the exact range.
func (o object) coordinate(name string) (*int, error) {
	f, err := o.number(name)
	if f == nil || err != nil {
		return nil, err
	}
	t := math.Trunc(*f)
	if math.Abs(t) > math.MaxInt32 {
		return nil, invalidf("field %q is out of range: %g", name, *f)
	}
	n := int(t)
	return &n, nil
}

// integer decodes a field that must hold a whole number.
func (o object) integer(name string) (*int64, error) {
	f, err := o.number(name)
	if f == nil || err != nil {
		return nil, err
	}
	if *f != math.Trunc(*f) {
		return nil, invalidf("field %q must be an integer, not %g", name, *f)
	}
	if math.Abs(*f) > 1<<53 {
		return nil, invalidf("field %q is out of range: %g", name, *f)
	}
	n := int64(*f)
	return &n, nil
}

// truncated decodes a number field truncated toward zero to an int64, for
// millisecond timestamps.
func (o object) truncated(name string) (*int64, error) {
	f, err := o.number(name)
	if f == nil || err != nil {
		return nil, err
	}
	t := math.Trunc(*f)
	if math.Abs(t) > 1<<53 {
		return nil, invalidf("field %q is out of range: %g", name, *f)
	}
	n := int64(t)
	return &n, nil
}

// strInto decodes the named string fields into dst, leaving absent ones.
func (o object) strInto(dst map[string]*string) error {
	for name, p := range dst {
		v, err := o.str(name)
		if err != nil {
			return err
		}
		if v != nil {
			*p = *v
		}
	}
	return nil
}

// position decodes positionX and positionY, each nil when absent.
func (o object) position() (x, y *int, err error) {
	if x, err = o.coordinate("positionX"); err != nil {
		return nil, nil, err
	}
	y, err = o.coordinate("positionY")
	return x, y, err
}

// values decodes a field holding an object of arbitrary JSON values.
func (o object) values(name string) (map[string]any, error) {
	raw := o.raw(name)
	if raw == nil {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, invalidf("field %q must be an object", name)
	}
	return m, nil
}

// id returns the id sent under any of the given names. Two names holding
// different ids are an error.
func (o object) id(names ...string) (string, error) {
	var id, from string
	for _, n := range names {
		s, err := o.str(n)
		if err != nil {
			return "", err
		}
		if s == nil {
			continue
		}
		if from != "" && *s != id {
			return "", invalidf("fields %q and %q name different ids", from, n)
		}
		id, from = *s, n
	}
	return id, nil
}

// checkPathID rejects a body whose id fields differ from the id in the path.
func (o object) checkPathID(pathID string, names ...string) error {
	for _, n := range names {
		s, err := o.str(n)
		if err != nil {
			return err
		}
		if s != nil && *s != pathID {
			return invalidf("field %q (%q) differs from the id in the path (%q)", n, *s, pathID)
		}
	}
	return nil
}
