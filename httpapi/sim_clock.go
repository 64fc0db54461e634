package httpapi

import (
	"net/http"

	"github.com/pervasim/pervasim/sim"
)

func (s *server) handleClockList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encode(w, http.StatusOK, []sim.Clock{s.home.Clock()})
	})
}

func checkClockID(id string) error {
	if id != sim.ClockID {
		return &clockNotFound{id: id}
	}
	return nil
}

type clockNotFound struct{ id string }

func (e *clockNotFound) Error() string {
	return "clock \"" + e.id + "\" does not exist; the only clock is \"" + sim.ClockID + "\""
}
func (e *clockNotFound) Is(err error) bool { return err == errNotFound }

func (s *server) handleClockGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkClockID(pathID(r)); err != nil {
			writeError(w, r, err)
			return
		}
		encode(w, http.StatusOK, s.home.Clock())
	})
}

func (s *server) handleClockUpdate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := pathID(r)
		if err := checkClockID(id); err != nil {
			writeError(w, r, err)
			return
		}
		o, err := decodeObject(w, r, s.maxBody)
		if err != nil {
			writeError(w, r, err)
			return
		}
		u, err := clockUpdate(o, id)
		if err != nil {
			writeError(w, r, err)
			return
		}
		c, err := s.home.UpdateClock(u)
		respond(w, r, c, err)
	})
}

// clockUpdate reads a clock update payload: pause, startDate, factor. The
// read-only fields of the Clock shape (currentTime, date strings) are
// ignored, so a client may send back a clock it read.
func clockUpdate(o object, id string) (u sim.ClockUpdate, err error) {
	if err = o.checkPathID(id, "id"); err != nil {
		return u, err
	}
	if u.Pause, err = o.boolean("pause"); err != nil {
		return u, err
	}
	if u.StartDate, err = o.truncated("startDate"); err != nil {
		return u, err
	}
	f, err := o.integer("factor")
	if err != nil {
		return u, err
	}
	if f != nil {
		n := int(*f) // |f| <= 2^53 fits; the domain checks the range
		u.Factor = &n
	}
	return u, nil
}
