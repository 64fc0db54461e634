package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/sim"
)

// Error kinds of this package, for failures found before a domain method is
// called (a malformed body, an unknown route, …).
var (
	errInvalid   = errors.New("invalid")
	errNotFound  = errors.New("not found")
	errTooLarge  = errors.New("too large")
	errMethod    = errors.New("method not allowed")
	errBusy      = errors.New("busy")
	errorClasses = []errorClass{
		{sim.ErrInvalid, http.StatusBadRequest, "invalid"},
		{errInvalid, http.StatusBadRequest, "invalid"},
		{sim.ErrNotFound, http.StatusNotFound, "not_found"},
		{errNotFound, http.StatusNotFound, "not_found"},
		{sim.ErrConflict, http.StatusConflict, "conflict"},
		{mediation.ErrInvalid, http.StatusBadRequest, "invalid"},
		{mediation.ErrNotFound, http.StatusNotFound, "not_found"},
		{mediation.ErrConflict, http.StatusConflict, "conflict"},
		{mediation.ErrBusy, http.StatusServiceUnavailable, "busy"},
		{errBusy, http.StatusServiceUnavailable, "busy"},
		{errMethod, http.StatusMethodNotAllowed, "method_not_allowed"},
		{errTooLarge, http.StatusRequestEntityTooLarge, "too_large"},
		{errForbidden, http.StatusForbidden, "forbidden"},
	}
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, errInvalid)...)
}

// errorClass maps an error kind to its status and code.
type errorClass struct {
	kind   error
	status int
	code   string
}

// errorBody is the JSON body of every error response.
type errorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// classify maps err to its status, code and message. Errors of no known kind
// are internal: their details are logged, never sent.
func classify(err error) (status int, code, msg string) {
	for _, c := range errorClasses {
		if errors.Is(err, c.kind) {
			// Messages read "what: kind" (sim) or "kind: what" (mediation);
			// the code already says the kind.
			msg := strings.TrimSuffix(err.Error(), ": "+c.kind.Error())
			msg = strings.TrimPrefix(msg, c.kind.Error()+": ")
			return c.status, c.code, msg
		}
	}
	return http.StatusInternalServerError, "internal", "internal error"
}

// writeError answers with the JSON error for err.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, code, msg := classify(err)
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	if status == http.StatusInternalServerError {
		slog.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	encode(w, status, errorBody{Error: msg, Code: code})
}
