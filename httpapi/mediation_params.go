package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/pervasim/pervasim/mediation"
)

// params are the parameters of a mediation request, from the query string
// and the body: a form (application/x-www-form-urlencoded) or a JSON object.
// Body values win over query values of the same name.
type params struct {
	values url.Values
	json   map[string]any // the JSON body, when it was one
}

// readParams reads the query string and the body of r.
func readParams(w http.ResponseWriter, r *http.Request, limit int64) (params, error) {
	p := params{values: url.Values{}}
	q, err := parseForm(r.URL.RawQuery)
	if err != nil {
		return p, err
	}
	for k, v := range q {
		p.values[k] = v
	}
	body, err := readBody(w, r, limit)
	if err != nil {
		return p, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return p, nil
	}
	if isJSONBody(r, body) {
		o, err := parseObject(body)
		if err != nil {
			return p, err
		}
		p.json = map[string]any{}
		for k, raw := range o {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return p, invalidf("field %q: %v", k, err)
			}
			p.json[k] = v
			if s, ok := v.(string); ok {
				p.values.Set(k, s)
			} else {
				p.values.Del(k)
			}
		}
		return p, nil
	}
	var form url.Values
	if mt, mp, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); strings.HasPrefix(mt, "multipart/") {
		// Read as a urlencoded form, its fields would be lost in the part
		// headers.
		if mt != "multipart/form-data" {
			return p, invalidf("a %s body is not read: send the parameters as a form (curl -d or -F), in the query string or as a JSON object", mt)
		}
		form, err = parseMultipart(body, mp["boundary"])
	} else {
		form, err = parseForm(string(body))
	}
	if err != nil {
		return p, err
	}
	for k, v := range form {
		p.values[k] = v
	}
	return p, nil
}

// parseMultipart decodes a multipart/form-data body (curl -F, an HTML form
// of that encoding): each part is a field, its text the value, a file's
// included (curl -F properties=@props.txt). The body is whole in memory,
// within the request's bound. A part without a name, a body that is not
// well formed, or a name or value that is not valid UTF-8 is an error.
func parseMultipart(body []byte, boundary string) (url.Values, error) {
	if boundary == "" {
		return nil, invalidf("a multipart/form-data body needs the boundary parameter of its Content-Type")
	}
	if !bytes.Contains(body, []byte("--"+boundary+"--")) {
		// The reader takes a body cut short before a part for one that ends.
		return nil, invalidf("the multipart/form-data body is cut short: it has no closing boundary")
	}
	v := url.Values{}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		part, err := mr.NextRawPart() // as sent: no Content-Transfer-Encoding decoding
		if err == io.EOF {
			return v, nil
		}
		if err != nil {
			return nil, invalidf("the multipart/form-data body is not well formed: %v", err)
		}
		name := part.FormName()
		if name == "" {
			return nil, invalidf("a part of the multipart/form-data body has no name (Content-Disposition: form-data; name=...)")
		}
		val, err := io.ReadAll(part)
		if err != nil {
			return nil, invalidf("the multipart/form-data body is not well formed: %v", err)
		}
		if !utf8.ValidString(name) || !utf8.Valid(val) {
			return nil, invalidf("field %q is not valid UTF-8", strings.ToValidUTF8(name, "\ufffd"))
		}
		v.Add(name, string(val))
	}
}

// parseForm decodes a query string or form body leniently: pairs are split
// on "&" only (the relaxed properties notation uses ";"), "+" is a space, and
// text that is not valid percent-encoding is kept as sent, so that
// curl -d "properties={a=1; b=50%}" works unencoded. A name or value that
// is not valid UTF-8 once decoded is an error, as a body that is not.
func parseForm(s string) (url.Values, error) {
	v := url.Values{}
	for pair := range strings.SplitSeq(s, "&") {
		if pair == "" {
			continue
		}
		k, val, _ := strings.Cut(pair, "=")
		k, val = formUnescape(k), formUnescape(val)
		if !utf8.ValidString(k) || !utf8.ValidString(val) {
			return nil, invalidf("field %q is not valid UTF-8 once decoded", strings.ToValidUTF8(k, "\ufffd"))
		}
		v.Add(k, val)
	}
	return v, nil
}

func formUnescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return strings.ReplaceAll(s, "+", " ")
}

// isJSONBody tells a JSON body from a form. A body that is a JSON object is
// JSON whatever its label: curl -d labels everything as a form, and no form
// starts with "{". A body labelled JSON is JSON (and an error if it is not).
func isJSONBody(r *http.Request, body []byte) bool {
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) && json.Valid(body) {
		return true
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// get returns a string parameter; a JSON value that is not a string is an
// error.
func (p params) get(name string) (string, error) {
	if v, ok := p.json[name]; ok && v != nil {
		if _, isStr := v.(string); !isStr {
			return "", invalidf("parameter %q must be a string", name)
		}
	}
	return p.values.Get(name), nil
}

// getAll returns the named string parameters, in order.
func (p params) getAll(names ...string) ([]string, error) {
	out := make([]string, len(names))
	for i, n := range names {
		v, err := p.get(n)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// has reports whether the parameter was sent at all.
func (p params) has(name string) bool {
	if v, ok := p.json[name]; ok && v != nil {
		return true
	}
	_, ok := p.values[name]
	return ok
}

// properties returns the "properties" parameter: a JSON object in a JSON
// body, or a string in strict JSON or the relaxed {k=v} notation. Absent or
// empty gives nil.
func (p params) properties() (map[string]any, error) {
	if v, ok := p.json["properties"]; ok && v != nil {
		switch x := v.(type) {
		case map[string]any:
			return x, nil
		case string:
			return parseProperties(x)
		default:
			return nil, invalidf("parameter \"properties\" must be an object")
		}
	}
	return parseProperties(p.values.Get("properties"))
}

func parseProperties(s string) (map[string]any, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	m, err := mediation.ParseProperties(s)
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}
