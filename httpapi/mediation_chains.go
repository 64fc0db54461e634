package httpapi

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"

	"github.com/pervasim/pervasim/dscilia"
	"github.com/pervasim/pervasim/internal/errkind"
	"github.com/pervasim/pervasim/mediation"
)

// chainOf returns the chain named in the path. The engine judges the id: a
// malformed one is invalid (400), an unknown one not found (404).
func (s *server) chainOf(r *http.Request) (*mediation.Chain, error) {
	return s.engine.Chain(routeVar(r, "chain"))
}

// withChain adapts a handler that needs the path's chain.
func (s *server) withChain(h func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ch, err := s.chainOf(r)
		if err != nil {
			writeError(w, r, err)
			return
		}
		h(w, r, ch)
	})
}

func (s *server) handleChainList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encode(w, http.StatusOK, map[string][]string{"chains": s.engine.Chains()})
	})
}

func (s *server) handleChainGet() http.Handler {
	return s.withChain(func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain) {
		if wantsXML(r) {
			c, err := dscilia.Export(ch)
			if err != nil {
				writeError(w, r, err)
				return
			}
			var b bytes.Buffer
			if err := dscilia.Write(&b, &dscilia.Document{Chains: []dscilia.Chain{c}}); err != nil {
				writeError(w, r, errkind.Errorf(errkind.Conflict, "the chain cannot be written as DSCilia: %v", err))
				return
			}
			w.Header().Set("Content-Type", "application/xml; charset=utf-8")
			w.Write(b.Bytes())
			return
		}
		ci, err := ch.Info()
		if err != nil {
			writeError(w, r, err)
			return
		}
		encode(w, http.StatusOK, newChainView(ci))
	})
}

// wantsXML reports whether the request asks for XML (DSCilia) rather
// than JSON: XML has a higher quality (q) in its Accept header than JSON,
// or the same and comes first.
func wantsXML(r *http.Request) bool {
	qJSON, qXML := -1.0, -1.0 // not named
	xmlFirst := false
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		for p := range strings.SplitSeq(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f >= 0 && f <= 1 {
					q = f
				}
			}
		}
		switch strings.ToLower(strings.TrimSpace(mt)) {
		case "application/json":
			qJSON = max(qJSON, q)
		case "application/xml", "text/xml":
			xmlFirst = xmlFirst || qJSON < 0
			qXML = max(qXML, q)
		}
	}
	return qXML > 0 && (qXML > qJSON || qXML == qJSON && xmlFirst)
}

// isXMLBody reports whether the request's body is XML by its Content-Type.
func isXMLBody(r *http.Request) bool {
	mt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/xml" || mt == "text/xml"
}

// handleImport creates the chains of a DSCilia document, all or nothing;
// ?placeholders=true stands in for the types the engine does not know.
func (s *server) handleImport() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isXMLBody(r) {
			writeError(w, r, invalidf("POST here takes a DSCilia document, as application/xml or text/xml; a chain is created with POST %s/<chain>", strings.TrimSuffix(r.URL.Path, "/")))
			return
		}
		body, err := readBody(w, r, s.maxBody)
		if err != nil {
			writeError(w, r, err)
			return
		}
		var opts dscilia.LoadOptions
		switch v := r.URL.Query().Get("placeholders"); v {
		case "", "false":
		case "true":
			opts.Placeholders = true
		default:
			writeError(w, r, invalidf("placeholders=%q: want true or false", v))
			return
		}
		d, err := dscilia.Parse(body)
		if err != nil {
			writeError(w, r, err)
			return
		}
		s.types.Lock()
		ids, err := dscilia.Load(s.engine, d, opts)
		s.types.Unlock()
		if err != nil {
			writeError(w, r, err)
			return
		}
		if ids == nil {
			ids = []string{} // a document without chains
		}
		encode(w, http.StatusOK, map[string][]string{"chains": ids})
	})
}

// prunePlaceholders unregisters the placeholder types no chain uses any
// more (dscilia.PrunePlaceholders), once a chain or a component is deleted:
// a placeholder type is listed while something uses it. Holding s.types
// alone, it cannot take a type from a component being created (which holds
// it shared) or from a load under way.
func (s *server) prunePlaceholders() {
	s.types.Lock()
	defer s.types.Unlock()
	dscilia.PrunePlaceholders(s.engine)
}

// handleChainCreate creates an empty chain and starts it at once.
func (s *server) handleChainCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := readParams(w, r, s.maxBody); err != nil {
			writeError(w, r, err)
			return
		}
		ch, err := s.engine.CreateChain(routeVar(r, "chain"))
		if err == nil {
			err = ch.Start()
		}
		if err != nil {
			writeError(w, r, err)
			return
		}
		ci, err := ch.Info()
		respond(w, r, newChainView(ci), err)
	})
}

func (s *server) handleChainDelete() http.Handler {
	return s.withChain(func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain) {
		err := s.engine.DeleteChain(ch.ID())
		if err == nil {
			s.prunePlaceholders() // its placeholder types, unless another chain uses them
		}
		respondEmpty(w, r, err)
	})
}

// handleComponentIDs lists a chain's component ids by kind, those of one
// kind only (`{"Mediators": [...]}` or `{"Adapters": [...]}`, as the
// original's /<chain>/mediators and /<chain>/adapters) when kind is set.
// Each list is in creation order, as every list: adapters are not grouped
// by pattern here (GET /<chain> does that).
func (s *server) handleComponentIDs(kind mediation.Kind) http.Handler {
	return s.withChain(func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain) {
		ci, err := ch.Info()
		if err != nil {
			writeError(w, r, err)
			return
		}
		ids := map[string][]string{"Mediators": ci.Mediators, "Adapters": ci.Adapters.All}
		switch kind {
		case mediation.KindMediator:
			delete(ids, "Adapters")
		case mediation.KindAdapter:
			delete(ids, "Mediators")
		}
		encode(w, http.StatusOK, ids)
	})
}

// handleComponentCommand runs command=copy or command=replace.
func (s *server) handleComponentCommand() http.Handler {
	return s.withChain(func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain) {
		p, err := readParams(w, r, s.maxBody)
		var args []string
		if err == nil {
			args, err = p.getAll("command", "from", "to")
		}
		if err != nil {
			writeError(w, r, err)
			return
		}
		command, from, to := strings.ToLower(args[0]), args[1], args[2]
		if command != "copy" && command != "replace" {
			writeError(w, r, invalidf("command must be \"copy\" or \"replace\", not %q", args[0]))
			return
		}
		if from == "" || to == "" {
			writeError(w, r, invalidf("parameters \"from\" and \"to\" are required"))
			return
		}
		if command == "copy" {
			c, err := ch.Copy(from, to)
			respond(w, r, newComponentView(c, false), err)
			return
		}
		if err := ch.Replace(from, to); err != nil {
			writeError(w, r, err)
			return
		}
		c, err := ch.Component(to)
		respond(w, r, newComponentView(c, false), err)
	})
}

func (s *server) handleBindingList() http.Handler {
	return s.withChain(func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain) {
		ci, err := ch.Info()
		if err != nil {
			writeError(w, r, err)
			return
		}
		encode(w, http.StatusOK, map[string][]bindingView{"Bindings": newChainView(ci).Bindings})
	})
}

func (s *server) handleBind() http.Handler {
	return s.withChain(func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain) {
		p, err := readParams(w, r, s.maxBody)
		var args []string
		if err == nil {
			args, err = p.getAll("from", "to", "linker")
		}
		if err != nil {
			writeError(w, r, err)
			return
		}
		if args[0] == "" || args[1] == "" {
			writeError(w, r, invalidf("parameters \"from\" and \"to\" are required, as <component>:<port>"))
			return
		}
		props, err := p.properties()
		if err != nil {
			writeError(w, r, err)
			return
		}
		b, err := ch.Bind(args[0], args[1], args[2], props)
		respond(w, r, bindingView{From: b.From, To: b.To, Linker: b.Linker}, err)
	})
}

func (s *server) handleUnbind() http.Handler {
	return s.withChain(func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain) {
		p, err := readParams(w, r, s.maxBody)
		if err != nil {
			writeError(w, r, err)
			return
		}
		from, to := p.values.Get("from"), p.values.Get("to")
		if from == "" || to == "" {
			writeError(w, r, invalidf("query parameters \"from\" and \"to\" are required, as <component>:<port>"))
			return
		}
		respondEmpty(w, r, ch.Unbind(from, to))
	})
}
