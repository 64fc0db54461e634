package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/pervasim/pervasim/sim"
)

func (s *server) handleZoneList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encode(w, http.StatusOK, s.home.Zones())
	})
}

func (s *server) handleZoneGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		z, err := s.home.Zone(pathID(r))
		respond(w, r, z, err)
	})
}

func (s *server) handleZoneCreate() http.Handler {
	return handleBody(s, withoutID(zoneSpec), withoutID(s.home.CreateZone))
}

// zoneSpec reads a zone creation payload.
func zoneSpec(o object) (spec sim.ZoneSpec, err error) {
	if spec.ID, err = o.id("id", "zoneId"); err != nil {
		return spec, err
	}
	if spec.ID == "" {
		return spec, invalidf("field \"zoneId\" (or \"id\") is required")
	}
	name, err := o.str("name")
	if err != nil {
		return spec, err
	}
	if name != nil {
		spec.Name = *name
	}
	if spec.IsRoom, err = o.boolean("isRoom"); err != nil {
		return spec, err
	}
	for _, c := range []struct {
		name string
		dst  *int
	}{{"leftX", &spec.LeftX}, {"topY", &spec.TopY}, {"rightX", &spec.RightX}, {"bottomY", &spec.BottomY}} {
		v, err := o.coordinate(c.name)
		if err != nil {
			return spec, err
		}
		if v == nil {
			return spec, invalidf("field %q is required", c.name)
		}
		*c.dst = *v
	}
	vars, err := o.variables()
	if err != nil {
		return spec, err
	}
	for k, v := range vars {
		if v == nil {
			continue
		}
		if spec.Variables == nil {
			spec.Variables = map[string]float64{}
		}
		spec.Variables[k] = *v
	}
	return spec, nil
}

func (s *server) handleZoneUpdate() http.Handler {
	return handleBody(s, zoneUpdate, s.home.UpdateZone)
}

// zoneUpdate reads a zone update payload.
func zoneUpdate(id string, o object) (u sim.ZoneUpdate, err error) {
	if err = o.checkPathID(id, "id", "zoneId"); err != nil {
		return u, err
	}
	if u.Name, err = o.str("name"); err != nil {
		return u, err
	}
	if u.IsRoom, err = o.boolean("isRoom"); err != nil {
		return u, err
	}
	for _, c := range []struct {
		name string
		dst  **int
	}{{"leftX", &u.LeftX}, {"topY", &u.TopY}, {"rightX", &u.RightX}, {"bottomY", &u.BottomY}} {
		if *c.dst, err = o.coordinate(c.name); err != nil {
			return u, err
		}
	}
	u.Variables, err = o.variables()
	return u, err
}

// variables decodes the "variables" field: an object of numbers, where null
// removes a variable.
func (o object) variables() (map[string]*float64, error) {
	raw := o.raw("variables")
	if raw == nil {
		return nil, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, invalidf("field \"variables\" must be an object of numbers")
	}
	out := make(map[string]*float64, len(fields))
	for k := range fields {
		v, err := object(fields).number(k)
		if err != nil {
			return nil, invalidf("variable %q must be a number or null", k)
		}
		out[k] = v
	}
	return out, nil
}

func (s *server) handleZoneDelete() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		respondEmpty(w, r, s.home.DeleteZone(pathID(r)))
	})
}

// handleBody answers a request whose body is a JSON object: parse reads it
// (with the path's id, if any), call runs the domain method with what parse
// read, and its result or error is the answer.
func handleBody[T, R any](s *server, parse func(id string, o object) (T, error), call func(id string, v T) (R, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		o, err := decodeObject(w, r, s.maxBody)
		if err != nil {
			writeError(w, r, err)
			return
		}
		v, err := parse(id, o)
		if err != nil {
			writeError(w, r, err)
			return
		}
		res, err := call(id, v)
		respond(w, r, res, err)
	})
}

// withoutID adapts a function that needs no path id to handleBody.
func withoutID[T, R any](f func(T) (R, error)) func(string, T) (R, error) {
	return func(_ string, v T) (R, error) { return f(v) }
}

// respond encodes v with 200, or the error.
func respond(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		writeError(w, r, err)
		return
	}
	encode(w, http.StatusOK, v)
}

// respondEmpty answers 200 with an empty body, or the error.
func respondEmpty(w http.ResponseWriter, r *http.Request, err error) {
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}
