package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TestLongErrorsAreCut: an error quotes what was sent (a type, an id, a
// value), which could be as long as the body; the message is cut to a
// sentence's length, valid UTF-8, with the status and code of the error.
func TestLongErrorsAreCut(t *testing.T) {
	long := strings.Repeat("é", 200_000) // 400 kB, two bytes a character
	tests := []struct {
		name, method, path, ctype, body string
		status                          int
	}{
		{"unknown mediator type", "POST", "/mediation/c/mediator/" + strings.Repeat("q", 100_000) + "/m", "", "", http.StatusBadRequest},
		{"bad filter", "POST", "/mediation/c/mediator/filter/f", "application/x-www-form-urlencoded", "properties={condition=(" + strings.Repeat("a", 60_000) + ")}", http.StatusBadRequest},
		{"DSCilia unknown type", "POST", "/mediation/", "application/xml",
			`<cilia><chain id="a"><mediators><mediator-instance type="` + strings.Repeat("T", 500_000) + `" id="p"/></mediators></chain></cilia>`, http.StatusBadRequest},
		{"DSCilia bad json value", "POST", "/mediation/", "application/xml",
			`<cilia><chain id="a"><mediators><mediator-instance type="passthrough" id="p"><property name="n" type="json" value="` + long + `"/></mediator-instance></mediators></chain></cilia>`, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.noSpec = true
			f.mustDo(t, "POST", "/mediation/c", "")
			rec := f.doType(t, tt.method, tt.path, tt.ctype, tt.body)
			var got struct{ Error, Code string }
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("%d %.200s: not a JSON error: %v", rec.Code, rec.Body, err)
			}
			if diff := cmp.Diff([]any{tt.status, "invalid"}, []any{rec.Code, got.Code}); diff != "" {
				t.Errorf("status and code (-want +got):\n%s", diff)
			}
			if n := len(got.Error); n > 4096 || !utf8.ValidString(got.Error) || !strings.HasSuffix(got.Error, "…") {
				t.Errorf("error message of %d bytes (valid UTF-8: %v): %.100s…%s", n, utf8.ValidString(got.Error), got.Error, got.Error[max(0, n-20):])
			}
		})
	}
}
