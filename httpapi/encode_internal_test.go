package httpapi

import (
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestEncodeWhatJSONCannotHold: an answer JSON cannot hold (a NaN, which
// would be a bug) is a 500 with a JSON error, never a 200 cut short.
func TestEncodeWhatJSONCannotHold(t *testing.T) {
	rec := httptest.NewRecorder()
	encode(rec, http.StatusOK, map[string]float64{"x": math.NaN()})
	if got, want := rec.Body.String(), "{\"error\":\"internal error: the answer cannot be written as JSON\",\"code\":\"internal\"}\n"; rec.Code != http.StatusInternalServerError || got != want {
		t.Errorf("encode(NaN) = %d %q, want 500 %q", rec.Code, got, want)
	}
	rec = httptest.NewRecorder()
	encode(rec, http.StatusOK, map[string]int{"x": 1})
	if rec.Code != http.StatusOK || rec.Body.String() != "{\"x\":1}\n" || rec.Header().Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("encode(x=1) = %d %q %v", rec.Code, rec.Body, rec.Header())
	}
}
