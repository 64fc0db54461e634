package natsbus

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/pervasim/pervasim/internal/jsonfast"
	"github.com/pervasim/pervasim/mediation"
)

// The headers of a chain message on the wire.
const (
	// HeaderProperty is the prefix of the header of each message
	// property: Pervasim-Property-<name>, its value the property's value
	// as JSON. Bytes of the name other than ASCII letters, digits, '-',
	// '_' and '~' are written %XX.
	HeaderProperty = "Pervasim-Property-"
	// HeaderMsgID carries the message's id: JetStream drops a message
	// published twice with one id, and receivers drop one delivered twice.
	HeaderMsgID = nats.MsgIdHdr
	// HeaderStatus is set on the replies of device requests: the status the
	// same REST request would have had (200, 400, 404, …).
	HeaderStatus = "Pervasim-Status"
	// HeaderBatch marks a batch of the nats linker: several chain
	// messages in one NATS message, whose data is a JSON array of
	// {"id", "content", "properties"}, and this header their number.
	HeaderBatch = "Pervasim-Batch"
)

// PropID is the message property holding a message's id once it came in
// from NATS. A message sent out with it keeps that id, so that a message
// forwarded again after a crash is recognised as the same one.
const PropID = "nats.id"

// appendBatchItem appends m, as an element of a batch, to b:
// {"id":…,"content":…,"properties":{…}}, the id taken from the PropID
// property or made new.
func appendBatchItem(b []byte, m mediation.Message) ([]byte, error) {
	mark := len(b)
	if mark > 0 && b[mark-1] != '[' {
		b = append(b, ',')
	}
	id, _ := m.Properties[PropID].(string)
	if id == "" {
		id = nuid.Next()
	}
	b = append(b, `{"id":`...)
	b = jsonfast.AppendString(b, id)
	b = append(b, `,"content":`...)
	var err error
	if b, err = jsonfast.Append(b, m.Content); err != nil {
		return b[:mark], err
	}
	b = append(b, `,"properties":{`...)
	first := true
	keys := make([]string, 0, len(m.Properties))
	for k := range m.Properties {
		if k != PropID {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(jsonfast.AppendString(b, k), ':')
		if b, err = jsonfast.Append(b, m.Properties[k]); err != nil {
			return b[:mark], err
		}
	}
	return append(b, '}', '}'), nil
}

// decodeBatch reads the messages of a batch: a JSON array of objects with
// "id", "content" and "properties"; other fields are ignored.
func decodeBatch(data []byte) ([]mediation.Message, error) {
	p := &jsonfast.Parser{Data: data}
	p.Space()
	if p.I >= len(data) || data[p.I] != '[' {
		return nil, p.Errorf("a batch is an array")
	}
	p.I++
	var out []mediation.Message
	p.Space()
	if p.I < len(data) && data[p.I] == ']' {
		p.I++
		if p.Space(); p.I != len(data) {
			return nil, p.Errorf("data after the batch")
		}
		return out, nil
	}
	for {
		p.Space()
		if p.I >= len(data) || data[p.I] != '{' {
			return nil, p.Errorf("a batch holds objects")
		}
		m, err := batchItem(p)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
		p.Space()
		if p.I >= len(data) {
			return nil, p.Errorf("unexpected end in a batch")
		}
		switch data[p.I] {
		case ',':
			p.I++
		case ']':
			p.I++
			p.Space()
			if p.I != len(data) {
				return nil, p.Errorf("data after the batch")
			}
			return out, nil
		default:
			return nil, p.Errorf("want , or ] in a batch")
		}
	}
}

// batchItem reads one object of a batch into a message, without making a
// map of the object itself.
func batchItem(p *jsonfast.Parser) (mediation.Message, error) {
	var m mediation.Message
	var id string
	p.I++ // {
	for first := true; ; first = false {
		p.Space()
		if p.I >= len(p.Data) {
			return m, p.Errorf("unexpected end in a batch")
		}
		if p.Data[p.I] == '}' && first {
			p.I++
			break
		}
		if p.Data[p.I] != '"' {
			return m, p.Errorf("want a key")
		}
		k, err := p.Key()
		if err != nil {
			return m, err
		}
		p.Space()
		if p.I >= len(p.Data) || p.Data[p.I] != ':' {
			return m, p.Errorf("want : after a key")
		}
		p.I++
		v, err := p.Value(1)
		if err != nil {
			return m, err
		}
		switch string(k) { // no allocation: the compiler compares in place
		case "id":
			id, _ = v.(string)
		case "content":
			m.Content = v
		case "properties":
			props, ok := v.(map[string]any)
			if !ok && v != nil {
				return m, p.Errorf("properties must be an object")
			}
			m.Properties = props
		}
		p.Space()
		if p.I >= len(p.Data) {
			return m, p.Errorf("unexpected end in a batch")
		}
		if p.Data[p.I] == '}' {
			p.I++
			break
		}
		if p.Data[p.I] != ',' {
			return m, p.Errorf("want , or } in an object")
		}
		p.I++
	}
	if m.Properties == nil {
		m.Properties = make(map[string]any, 1)
	}
	if id != "" {
		m.Properties[PropID] = id
	}
	return m, nil
}

// Encode makes the NATS message of m for subject: its content as JSON in
// the data, each property in a header (see [HeaderProperty]), and its id in
// [HeaderMsgID]: the PropID property when m has one, else a new unique id.
// A NaN or an infinity, which JSON cannot hold, is written as text, as
// the REST interface shows it ([mediation.Message.Printable]); Encode fails
// when the content or a property cannot be written as JSON otherwise (a
// channel, say). Encode is safe for concurrent use.
func Encode(subject string, m mediation.Message) (*nats.Msg, error) {
	msg, err := encode(subject, m)
	var unsupported *json.UnsupportedValueError
	if errors.As(err, &unsupported) {
		msg, err = encode(subject, m.Printable())
	}
	return msg, err
}

func encode(subject string, m mediation.Message) (*nats.Msg, error) {
	data, err := json.Marshal(m.Content)
	if err != nil {
		return nil, fmt.Errorf("message content: %w", err)
	}
	out := &nats.Msg{Subject: subject, Data: data, Header: make(nats.Header, len(m.Properties)+1)}
	id, _ := m.Properties[PropID].(string)
	if id == "" {
		id = nuid.Next()
	}
	out.Header[HeaderMsgID] = []string{id}
	for k, v := range m.Properties {
		if k == PropID {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("message property %q: %w", k, err)
		}
		out.Header[HeaderProperty+escape(k)] = []string{string(b)}
	}
	return out, nil
}

// Decode reads a message written by [Encode]: the content from the data
// (JSON; data that is not JSON is taken as a string, so plain publishers
// such as MQTT clients can send text), the properties from their headers,
// and the id, when there is one, into the PropID property. Text that is not
// valid UTF-8 has its bad bytes replaced by U+FFFD. A property
// header that is not JSON is an error. Decode is safe for concurrent use;
// it panics if msg is nil.
func Decode(msg *nats.Msg) (mediation.Message, error) {
	var m mediation.Message
	if len(msg.Data) > 0 {
		if err := json.Unmarshal(msg.Data, &m.Content); err != nil {
			m.Content = strings.ToValidUTF8(string(msg.Data), "\uFFFD") // as JSON would carry it on
		}
	}
	m.Properties = map[string]any{}
	for k, vs := range msg.Header {
		if k == HeaderMsgID && len(vs) > 0 && vs[0] != "" {
			m.Properties[PropID] = vs[0]
			continue
		}
		rest, ok := cutPrefixFold(k, HeaderProperty)
		if !ok || len(vs) == 0 {
			continue
		}
		name, err := unescape(rest)
		if err != nil {
			return mediation.Message{}, fmt.Errorf("header %s: %w", k, err)
		}
		var v any
		if err := json.Unmarshal([]byte(vs[0]), &v); err != nil {
			return mediation.Message{}, fmt.Errorf("header %s is not JSON: %w", k, err)
		}
		m.Properties[name] = v
	}
	return m, nil
}

// cutPrefixFold is strings.CutPrefix ignoring ASCII case, since some
// clients change the case of header names.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

// escape writes s so that it is one token of a NATS subject and of an MQTT
// topic, and a header name: bytes other than ASCII letters, digits, '-',
// '_' and '~' become %XX.
func escape(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if !plain(s[i]) {
			clean = false
			break
		}
	}
	if clean && s != "" {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; plain(c) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func plain(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '~'
}

// unescape reverses escape.
func unescape(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("%q: a %% escape is cut short", s)
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", fmt.Errorf("%q: %q is no %%XX escape", s, s[i:i+3])
		}
		b.WriteByte(hi<<4 | lo)
		i += 2
	}
	return b.String(), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
