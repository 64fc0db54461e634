package httpapi

import (
	"errors"
	"net/http"

	"github.com/pervasim/pervasim/internal/errkind"
)

// Error kinds of this package, for failures found before a domain method is
// called (a malformed body, an unknown route, …).
var (
	errInvalid   = errkind.Invalid
	errNotFound  = errkind.NotFound
	errTooLarge  = errors.New("too large")
	errMethod    = errors.New("method not allowed")
	errBusy      = errkind.Busy
	errorClasses = []errorClass{
		{errkind.Invalid, http.StatusBadRequest, "invalid"},
		{errkind.NotFound, http.StatusNotFound, "not_found"},
		{errkind.Conflict, http.StatusConflict, "conflict"},
		{errkind.Busy, http.StatusServiceUnavailable, "busy"},
		{errkind.Storage, http.StatusInsufficientStorage, "insufficient_storage"},
		{errMethod, http.StatusMethodNotAllowed, "method_not_allowed"},
		{errTooLarge, http.StatusRequestEntityTooLarge, "too_large"},
		{errForbidden, http.StatusForbidden, "forbidden"},
	}
)

func invalidf(format string, args ...any) error {
	return errkind.Errorf(errInvalid, format, args...)
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

// classify maps err to its status, code and message, by its kind alone
// (errors.Is): the message is the error's own, which never names its kind.
// Errors of no known kind are internal: their details are logged, never
// sent.
func classify(err error) (status int, code, msg string) {
	for _, c := range errorClasses {
		if errors.Is(err, c.kind) {
			return c.status, c.code, errkind.Cut(err.Error(), maxErrorMessage)
		}
	}
	return http.StatusInternalServerError, "internal", "internal error"
}

// maxErrorMessage bounds the message of an error response, in bytes. A
// message quotes what was sent (an id, a type, a value), which may be as
// long as the body: past the bound it is cut, so that an error stays a
// sentence to read, not the request sent back.
const maxErrorMessage = 2048

// WriteError answers r with the JSON error for err as the REST handler
// does: the status and code of err's kind, Retry-After on 503, and for an
// error of no kind this package knows a 500 whose details are logged, not
// sent. It is for what stands in front of the handler (the durable state's
// journal), so that its refusals read as the handler's.
func WriteError(w http.ResponseWriter, r *http.Request, err error) { writeError(w, r, err) }

// writeError answers with the JSON error for err.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, code, msg := classify(err)
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	if status == http.StatusInternalServerError {
		loggerOf(r).Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	encode(w, status, errorBody{Error: msg, Code: code})
}
