package httpapi

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/pervasim/pervasim/mediation"
)

func (s *server) handleTypes() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encode(w, http.StatusOK, newTypeViews(s.engine.Registry().Types()))
	})
}

func (s *server) handleChainState() http.Handler {
	return s.withChain(func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain) {
		encode(w, http.StatusOK, map[string]string{"state": ch.State()})
	})
}

func (s *server) handleChainStart() http.Handler {
	return s.withChain(func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain) {
		respondState(w, r, ch, ch.Start())
	})
}

func (s *server) handleChainStop() http.Handler {
	return s.withChain(func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain) {
		respondState(w, r, ch, ch.Stop())
	})
}

func respondState(w http.ResponseWriter, r *http.Request, ch *mediation.Chain, err error) {
	respond(w, r, map[string]string{"state": ch.State()}, err)
}

// handleRuntimeComponent answers a component with its counters.
func (s *server) handleRuntimeComponent() http.Handler {
	return s.withChain(func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain) {
		c, err := s.component(r, ch, "")
		respond(w, r, newComponentView(c, true), err)
	})
}

// handleDataIn sends the request into the chain through a rest-in adapter:
// a JSON body is the content, a form's "content" field or any other body is
// the content as a string, and prop.<name> fields become properties.
func (s *server) handleDataIn() http.Handler {
	return s.withChain(func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain) {
		m, err := s.readMessage(w, r)
		if err != nil {
			writeError(w, r, err)
			return
		}
		respondEmpty(w, r, ch.SendContext(r.Context(), pathID(r), m))
	})
}

func (s *server) readMessage(w http.ResponseWriter, r *http.Request) (mediation.Message, error) {
	var m mediation.Message
	q, err := parseForm(r.URL.RawQuery)
	if err != nil {
		return m, err
	}
	body, err := readBody(w, r, s.maxBody)
	if err != nil {
		return m, err
	}
	fields := q
	mt, mp, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	text := strings.HasPrefix(mt, "text/") // even empty or blank, the content as it is
	// form takes the fields of a form body: the content and properties.
	form := func(form url.Values) error {
		for k := range form {
			if !messageField(k) {
				return invalidf("form field %q is neither content nor prop.<name>: it would be lost", k)
			}
		}
		for k, v := range form {
			fields[k] = append(fields[k], v...)
		}
		if c, ok := fields["content"]; ok { // the form's, else the query's
			m.Content = c[len(c)-1]
		}
		return nil
	}
	switch {
	case !text && len(bytes.TrimSpace(body)) == 0:
		// No body: the query's content field, if any, is the content.
		if c, ok := q["content"]; ok {
			m.Content = c[len(c)-1]
		}
	case !text && json.Valid(body):
		// curl -d sends JSON labelled as a form: a valid JSON body is JSON.
		if err := json.Unmarshal(body, &m.Content); err != nil {
			return m, invalidf("request body is not valid JSON: %v", err)
		}
	case mt == "application/x-www-form-urlencoded" && isForm(body):
		f, err := parseForm(string(body))
		if err != nil {
			return m, err
		}
		if err := form(f); err != nil {
			return m, err
		}
	case mt == "multipart/form-data": // curl -F content=hello -F prop.site=lab
		f, err := parseMultipart(body, mp["boundary"])
		if err != nil {
			return m, err
		}
		if err := form(f); err != nil {
			return m, err
		}
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return m, invalidf("request body is not valid JSON")
	default:
		if !utf8.Valid(body) {
			return m, invalidf("request body is not valid UTF-8")
		}
		m.Content = string(body)
	}
	for k, v := range fields {
		if k == "prop." {
			return m, invalidf("field %q names no property: send prop.<name>=<value>", k)
		}
		if name, ok := strings.CutPrefix(k, "prop."); ok {
			if m.Properties == nil {
				m.Properties = map[string]any{}
			}
			m.Properties[name] = v[len(v)-1]
		}
	}
	return m, nil
}

// messageField reports whether a form field names a part of a message:
// its content, or one of its properties (prop.<name>).
func messageField(k string) bool { return k == "content" || strings.HasPrefix(k, "prop.") }

// isForm reports whether a body labelled as a form is one: pairs of
// name=value naming the content or properties. curl -d labels any text as
// a form; "hello world" is a message, not a form.
func isForm(body []byte) bool {
	named := false
	for pair := range strings.SplitSeq(string(body), "&") {
		k, _, ok := strings.Cut(pair, "=")
		if !ok {
			return false
		}
		k = formUnescape(k)
		if messageField(k) {
			named = true
		}
	}
	return named
}

// handleDataOut answers the messages a rest-out adapter kept, oldest first.
func (s *server) handleDataOut() http.Handler {
	return s.withChain(func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain) {
		msgs, err := ch.Messages(pathID(r))
		if err != nil {
			writeError(w, r, err)
			return
		}
		view := func(print bool) any {
			out := make([]messageView, len(msgs))
			for i, m := range msgs {
				if print { // a message a Go component made may hold a NaN, say
					m = m.Printable()
				}
				out[i] = messageView{Content: m.Content, Properties: m.Properties}
				if out[i].Properties == nil {
					out[i].Properties = map[string]any{}
				}
			}
			return map[string][]messageView{"messages": out}
		}
		encodeOr(w, http.StatusOK, view(false), func() any { return view(true) })
	})
}
