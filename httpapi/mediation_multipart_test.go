package httpapi_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
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

// urlencodedBody returns fields as an application/x-www-form-urlencoded body.
func urlencodedBody(fields ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(fields); i += 2 {
		v.Add(fields[i], fields[i+1])
	}
	return v.Encode()
}

// uuids matches a component's UUID.
var uuids = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// relayFixture returns a fixture, not checked against the OpenAPI document,
// with a started chain "c" relaying from a rest-in "in" to a rest-out "out",
// and the rest-outs of more, unbound.
func relayFixture(t *testing.T, more ...string) *fixture {
	t.Helper()
	f := newFixture(t)
	f.noSpec = true
	f.mustDo(t, "POST", "/mediation/c", "")
	f.mustDo(t, "POST", "/mediation/c/adapter/rest-in/in", "")
	for _, id := range append([]string{"out"}, more...) {
		f.mustDo(t, "POST", "/mediation/c/adapter/rest-out/"+id, "")
	}
	f.mustDo(t, "POST", "/mediation/c/bindings", `{"from":"in:out","to":"out:in"}`)
	return f
}

// TestMediationMultipartForms: the mediation routes read a multipart form
// (curl -F) as they read a urlencoded one (curl -d): the same request in
// either encoding leaves the same chains and answers the same. Read as a
// urlencoded form, its fields were lost in the part headers: a mediator was
// made without its properties, a message sent its form as text, and both
// answered 200.
func TestMediationMultipartForms(t *testing.T) {
	tests := []struct {
		name, method, path string
		fields             []string
		status             int
	}{
		{"mediator with properties", "POST", "/mediation/c/mediator/enricher/tag", []string{"properties", "{site=lab; n=2}"}, 200},
		{"component properties", "PUT", "/mediation/c/components/in", []string{"properties", "{a=1}"}, 200},
		{"binding", "POST", "/mediation/c/bindings", []string{"from", "in:out", "to", "out2:in"}, 200},
		{"command", "PUT", "/mediation/c/components", []string{"command", "copy", "from", "out", "to", "out3"}, 200},
		{"a message", "POST", "/mediation/runtime/c/components/in/data", []string{"content", "héllo", "prop.site", "lab"}, 200},
		{"a message's unknown field", "POST", "/mediation/runtime/c/components/in/data", []string{"content", "x", "extra", "1"}, 400},
		{"a bad property", "POST", "/mediation/c/mediator/enricher/tag", []string{"properties", "{a=1"}, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := func(ctype, body string) string {
				f := relayFixture(t, "out2")
				rec := f.doType(t, tt.method, tt.path, ctype, body)
				if rec.Code != tt.status {
					t.Errorf("%s %s (%s) = %d %s, want %d", tt.method, tt.path, ctype, rec.Code, rec.Body, tt.status)
				}
				answer := rec.Body.String()
				if rec.Code != http.StatusOK {
					answer = errorCode(t, answer)
				}
				var chains []string
				for _, p := range []string{"/mediation", "/mediation/c", "/mediation/c/components/in", "/mediation/runtime/c/components/out/data"} {
					chains = append(chains, f.mustDo(t, "GET", p, "").Body.String())
				}
				// Each fixture gives its components UUIDs of their own.
				return uuids.ReplaceAllString(strings.Join(append([]string{answer}, chains...), "\n"), "<uuid>")
			}
			body, ctype := multipartBody(t, tt.fields...)
			want := state("application/x-www-form-urlencoded", urlencodedBody(tt.fields...))
			if diff := cmp.Diff(want, state(ctype, body)); diff != "" {
				t.Errorf("multipart against urlencoded (-urlencoded +multipart):\n%s", diff)
			}
		})
	}
}

// TestMediationMultipartRefused: a multipart body that is not a form, or
// not one that can be read, is 400 invalid and changes nothing.
func TestMediationMultipartRefused(t *testing.T) {
	form, ctype := multipartBody(t, "properties", "{a=1}")
	boundary := strings.TrimPrefix(ctype, "multipart/form-data; boundary=")
	tests := []struct {
		name, path, ctype, body string
	}{
		{"multipart/mixed", "/mediation/c/mediator/enricher/tag", "multipart/mixed; boundary=" + boundary, form},
		{"no boundary", "/mediation/c/mediator/enricher/tag", "multipart/form-data", form},
		{"cut short", "/mediation/c/mediator/enricher/tag", ctype, form[:len(form)/2]},
		{"a part without a name", "/mediation/c/mediator/enricher/tag", ctype,
			"--" + boundary + "\r\nContent-Disposition: form-data\r\n\r\nx\r\n--" + boundary + "--\r\n"},
		{"not UTF-8", "/mediation/c/mediator/enricher/tag", ctype,
			"--" + boundary + "\r\nContent-Disposition: form-data; name=\"properties\"\r\n\r\n{a=\xff}\r\n--" + boundary + "--\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := relayFixture(t)
			snapshot := func() string {
				return f.mustDo(t, "GET", "/mediation/c", "").Body.String() + f.mustDo(t, "GET", "/mediation/runtime/c/components/out/data", "").Body.String()
			}
			before := snapshot()
			rec := f.doType(t, "POST", tt.path, tt.ctype, tt.body)
			if diff := cmp.Diff([]any{http.StatusBadRequest, "invalid"}, []any{rec.Code, errorCode(t, rec.Body.String())}); diff != "" {
				t.Errorf("(-want +got):\n%s\n%s", diff, rec.Body)
			}
			if diff := cmp.Diff(before, snapshot()); diff != "" {
				t.Errorf("a refused request changed the chain (-before +after):\n%s", diff)
			}
		})
	}
}
