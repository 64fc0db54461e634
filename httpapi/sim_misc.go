package httpapi

import (
	"net/http"

	"github.com/pervasim/pervasim/sim"
)

func (s *server) handleHealth() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encode(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

func (s *server) handleSimulationReset() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A script playing would go on acting on the emptied home, and the
		// next start would be refused: stop it first.
		for _, sc := range s.home.Scripts() {
			if sc.State != sim.ScriptStopped {
				_, _ = s.home.SetScriptState(sc.ID, sim.ScriptStopped)
			}
		}
		s.home.Reset()
		w.WriteHeader(http.StatusOK)
	})
}
