package httpapi_test

import (
	"errors"
	"testing"

	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/internal/errkind"
)

// TestCheckRoots: a service root is one path segment that none of the
// server's own routes starts with; "homes" took the homes' routes (and
// the state kept none of its changes), "simulator" the house plan's.
func TestCheckRoots(t *testing.T) {
	for _, tt := range []struct {
		platform, mediation string
		ok                  bool
	}{
		{"", "", true},
		{"icasa", "cilia", true},
		{"/icasa/", "cilia", true},
		{"a-b_c.d~e", "M1", true},
		{"x", "x", false},
		{"", "platform", false},
		{"mediation", "", false},
		{"homes", "", false},
		{"", "simulator", false},
		{"healthz", "", false},
		{"events", "", false},
		{"openapi.json", "", false},
		{"a/b", "", false},
		{"a b", "", false},
		{"..", "", false},
		{".", "", false},
		{"é", "", false},
		{"a%2Fb", "", false},
		{"", "{chain}", false},
	} {
		err := httpapi.CheckRoots(tt.platform, tt.mediation)
		if tt.ok && err != nil || !tt.ok && !errors.Is(err, errkind.Invalid) {
			t.Errorf("CheckRoots(%q, %q) = %v, want ok %v", tt.platform, tt.mediation, err, tt.ok)
		}
	}
}
