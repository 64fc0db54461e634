package httpapi

import (
	"net/http"

	"github.com/pervasim/pervasim/mediation"
)

// handleComponentGet answers a component; kind "" accepts either kind, and a
// component of the other kind is 404.
func (s *server) handleComponentGet(kind mediation.Kind) http.Handler {
	return s.withChain(func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain) {
		c, err := s.component(r, ch, kind)
		respond(w, r, newComponentView(c, false), err)
	})
}

// component finds the path's component, of the given kind unless kind is "".
func (s *server) component(r *http.Request, ch *mediation.Chain, kind mediation.Kind) (mediation.ComponentInfo, error) {
	id := pathID(r)
	c, err := ch.Component(id)
	if err != nil {
		return c, err
	}
	if kind != "" && c.Kind != kind {
		return mediation.ComponentInfo{}, &kindError{id: id, kind: kind, actual: c.Kind}
	}
	return c, nil
}

type kindError struct {
	id           string
	kind, actual mediation.Kind
}

func (e *kindError) Error() string {
	return "component " + e.id + " is a" + article(e.actual) + " " + string(e.actual) + ", not a" + article(e.kind) + " " + string(e.kind)
}
func (e *kindError) Is(err error) bool { return err == errNotFound }

func article(k mediation.Kind) string {
	if k == mediation.KindAdapter {
		return "n"
	}
	return ""
}

// withComponentParams adapts a handler that needs the path's chain and
// component id and the request's parameters.
func (s *server) withComponentParams(h func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain, id string, p params)) http.Handler {
	return s.withChain(func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain) {
		p, err := readParams(w, r, s.maxBody)
		if err != nil {
			writeError(w, r, err)
			return
		}
		h(w, r, ch, pathID(r), p)
	})
}

// handleComponentCreate creates a component whose type comes from the path
// (/mediator/<TYPE>/<ID>) or, when the path has none, from the "type"
// parameter (/mediators/<ID>).
func (s *server) handleComponentCreate(kind mediation.Kind) http.Handler {
	return s.withComponentParams(func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain, id string, p params) {
		typ := routeVar(r, "type") // set on the routes that name a type
		var err error
		switch {
		case typ == "":
			if typ, err = p.get("type"); err == nil && typ == "" {
				err = invalidf("parameter \"type\" is required")
			}
		default:
			// The path's type is authoritative; another one sent beside
			// it is a client's mistake, not to be ignored.
			err = sameType(p, typ, "the path's type", "")
		}
		var props map[string]any
		if err == nil {
			props, err = p.properties()
		}
		if err != nil {
			writeError(w, r, err)
			return
		}
		s.types.RLock() // no placeholder type goes meanwhile
		c, err := ch.AddComponent(kind, typ, id, props)
		s.types.RUnlock()
		respond(w, r, newComponentView(c, false), err)
	})
}

// sameType checks that a "type" parameter, when sent, is want, which what
// names; hint ends the error's sentence.
func sameType(p params, want, what, hint string) error {
	if !p.has("type") {
		return nil
	}
	sent, err := p.get("type")
	if err == nil && sent != want {
		err = invalidf("parameter \"type\" (%q) differs from %s %q%s", truncateID(sent), what, want, hint)
	}
	return err
}

// handleComponentUpdate merges the "properties" parameter into the
// component's properties. A "type" sent beside them must be the
// component's: a type does not change (command=replace swaps components).
func (s *server) handleComponentUpdate() http.Handler {
	return s.withComponentParams(func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain, id string, p params) {
		if !p.has("properties") {
			writeError(w, r, invalidf("parameter \"properties\" is required"))
			return
		}
		props, err := p.properties()
		if err == nil && p.has("type") {
			var c mediation.ComponentInfo
			if c, err = ch.Component(id); err == nil {
				err = sameType(p, c.Type, "component "+id+"'s type", ": a type does not change (command=replace puts another component in its place)")
			}
		}
		if err != nil {
			writeError(w, r, err)
			return
		}
		c, err := ch.UpdateProperties(id, props)
		respond(w, r, newComponentView(c, false), err)
	})
}

func (s *server) handleComponentDelete(kind mediation.Kind) http.Handler {
	return s.withChain(func(w http.ResponseWriter, r *http.Request, ch *mediation.Chain) {
		c, err := s.component(r, ch, kind)
		if err != nil {
			writeError(w, r, err)
			return
		}
		err = ch.RemoveComponent(c.Kind, c.ID)
		if err == nil {
			s.prunePlaceholders() // its type, if a placeholder nothing else uses
		}
		respondEmpty(w, r, err)
	})
}
