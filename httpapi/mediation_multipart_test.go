package httpapi_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// multipartBody returns fields as a multipart/form-data body (what curl -F
// and an HTML form with enctype="multipart/form-data" send) and its
// Content-Type.
func multipartBody(t *testing.T, fields ...string) (string, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for i := 0; i+1 < len(fields); i += 2 {
		if err := mw.WriteField(fields[i], fields[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String(), mw.FormDataContentType()
}

// TestMediationMultipartRefused: the mediation routes read their parameters
// from the query, a urlencoded form or JSON. A multipart form was read as a
// urlencoded one, its fields lost in the part headers: a mediator was made
// without its properties, a property change changed nothing, and both
// answered 200. Now it is 400 invalid and the chain is as it was.
func TestMediationMultipartRefused(t *testing.T) {
	tests := []struct {
		name, method, path string
		fields             []string
	}{
		{"mediator with properties", "POST", "/mediation/c/mediator/enricher/tag", []string{"properties", "{site=lab}"}},
		{"component properties", "PUT", "/mediation/c/components/in", []string{"properties", "{a=1}"}},
		{"binding", "POST", "/mediation/c/bindings", []string{"from", "in:out", "to", "out:in"}},
		{"command", "PUT", "/mediation/c/components", []string{"command", "copy", "from", "out", "to", "out2"}},
		{"chain", "POST", "/mediation/d", []string{"x", "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.noSpec = true
			f.mustDo(t, "POST", "/mediation/c", "")
			f.mustDo(t, "POST", "/mediation/c/adapter/rest-in/in", "")
			f.mustDo(t, "POST", "/mediation/c/adapter/rest-out/out", "")
			before := f.mustDo(t, "GET", "/mediation", "").Body.String() + f.mustDo(t, "GET", "/mediation/c", "").Body.String() +
				f.mustDo(t, "GET", "/mediation/c/components/in", "").Body.String()
			body, ctype := multipartBody(t, tt.fields...)
			rec := f.doType(t, tt.method, tt.path, ctype, body)
			if diff := cmp.Diff([]any{http.StatusBadRequest, "invalid"}, []any{rec.Code, errorCode(t, rec.Body.String())}); diff != "" {
				t.Errorf("%s %s with a multipart body (-want +got):\n%s\n%s", tt.method, tt.path, diff, rec.Body)
			}
			after := f.mustDo(t, "GET", "/mediation", "").Body.String() + f.mustDo(t, "GET", "/mediation/c", "").Body.String() +
				f.mustDo(t, "GET", "/mediation/c/components/in", "").Body.String()
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("a refused request changed the chains (-before +after):\n%s", diff)
			}
		})
	}
}
