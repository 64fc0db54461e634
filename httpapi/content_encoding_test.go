package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCompressedBodiesRefused: a body sent compressed (Content-Encoding
// gzip, say) is not read: 400 invalid saying so, the state as it was. It
// used to be read as it came and refused for what it looked like ("not
// valid UTF-8"). An identity encoding is no encoding.
func TestCompressedBodiesRefused(t *testing.T) {
	gz := func(s string) string {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.String()
	}
	zone := `{"zoneId":"kitchen","leftX":0,"topY":0,"rightX":10,"bottomY":10}`
	tests := []struct {
		name, method, path, ctype, encoding, body string
		status                                    int
	}{
		{"a zone, gzip", "POST", "/platform/zones/zone", "application/json", "gzip", gz(zone), 400},
		{"a chain's component, deflate", "POST", "/mediation/c/mediator/enricher/tag", "application/x-www-form-urlencoded", "deflate", "properties={a=1}", 400},
		{"a message, br", "POST", "/mediation/runtime/c/components/in/data", "text/plain", "br", "hello", 400},
		{"a script, gzip", "POST", "/platform/scriptPlayer/script?id=s.bhv", "application/xml", "gzip", gz("<behavior/>"), 400},
		{"a zone, identity", "POST", "/platform/zones/zone", "application/json", "identity", zone, 200},
		{"a zone, not encoded", "POST", "/platform/zones/zone", "application/json", "", zone, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := relayFixture(t)
			snapshot := func() string {
				return f.state(t) + f.mustDo(t, "GET", "/mediation/c", "").Body.String() +
					f.mustDo(t, "GET", "/mediation/runtime/c/components/out/data", "").Body.String() +
					f.mustDo(t, "GET", "/platform/scriptPlayer/scripts", "").Body.String()
			}
			before := snapshot()
			r := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
			r.Host = "127.0.0.1:8080"
			r.Header.Set("Content-Type", tt.ctype)
			if tt.encoding != "" {
				r.Header.Set("Content-Encoding", tt.encoding)
			}
			rec := httptest.NewRecorder()
			f.handler.ServeHTTP(rec, r)
			if rec.Code != tt.status {
				t.Fatalf("= %d %s, want %d", rec.Code, rec.Body, tt.status)
			}
			if tt.status == http.StatusOK {
				return
			}
			if code := errorCode(t, rec.Body.String()); code != "invalid" || !strings.Contains(rec.Body.String(), "Content-Encoding") {
				t.Errorf("= %s, want invalid, naming the Content-Encoding", rec.Body)
			}
			if diff := cmp.Diff(before, snapshot()); diff != "" {
				t.Errorf("a refused request changed the state (-before +after):\n%s", diff)
			}
		})
	}
}
