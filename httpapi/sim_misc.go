package httpapi

import "net/http"

func (s *server) handleHealth() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encode(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

func (s *server) handleSimulationReset() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.home.Reset()
		w.WriteHeader(http.StatusOK)
	})
}
