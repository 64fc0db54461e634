package httpapi

import (
	"net/http"

	"github.com/pervasim/pervasim/sim"
)

func (s *server) handlePersonTypes() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encode(w, http.StatusOK, sim.PersonTypes())
	})
}

func (s *server) handlePersonList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encode(w, http.StatusOK, s.home.Persons())
	})
}

func (s *server) handlePersonGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.home.Person(pathID(r))
		respond(w, r, p, err)
	})
}

func (s *server) handlePersonCreate() http.Handler {
	return handleBody(s, withoutID(personSpec), withoutID(s.home.CreatePerson))
}

// personSpec reads a person creation payload.
func personSpec(o object) (spec sim.PersonSpec, err error) {
	if spec.ID, err = o.id("id", "personId"); err != nil {
		return spec, err
	}
	if spec.ID == "" {
		return spec, invalidf("field \"personId\" (or \"id\") is required")
	}
	if err = o.strInto(map[string]*string{"name": &spec.Name, "type": &spec.Type}); err != nil {
		return spec, err
	}
	spec.PositionX, spec.PositionY, err = o.position()
	return spec, err
}

func (s *server) handlePersonUpdate() http.Handler {
	return handleBody(s, personUpdate, s.home.UpdatePerson)
}

// personUpdate reads a person update payload. width and height are accepted
// and ignored: persons have no size.
func personUpdate(id string, o object) (u sim.PersonUpdate, err error) {
	if err = o.checkPathID(id, "id", "personId"); err != nil {
		return u, err
	}
	for _, f := range []struct {
		name string
		dst  **string
	}{{"name", &u.Name}, {"type", &u.Type}, {"location", &u.Location}} {
		if *f.dst, err = o.str(f.name); err != nil {
			return u, err
		}
	}
	for _, f := range []struct {
		name string
		dst  **int
	}{{"positionX", &u.PositionX}, {"positionY", &u.PositionY}} {
		if *f.dst, err = o.coordinate(f.name); err != nil {
			return u, err
		}
	}
	for _, n := range []string{"width", "height"} {
		if _, err = o.coordinate(n); err != nil {
			return u, err
		}
	}
	return u, nil
}

func (s *server) handlePersonDelete() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		respondEmpty(w, r, s.home.DeletePerson(pathID(r)))
	})
}
