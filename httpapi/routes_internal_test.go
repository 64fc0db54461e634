package httpapi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGroupOf(t *testing.T) {
	type split struct {
		Prefix, Rest string
		OK           bool
	}
	for _, tc := range []struct {
		path string
		want split
	}{
		{"/platform/devices/device/{id}", split{"/platform/devices", "/device/{id}", true}},
		{"/platform/zones/zones", split{"/platform/zones", "/zones", true}},
		{"/mediation/runtime/{chain}/start", split{"/mediation/runtime", "/{chain}/start", true}},
		{"/homes/lab/platform/events", split{"/homes/lab", "/platform/events", true}},
		{"/mediation/{chain}/components", split{}},
		{"/platform/environment", split{}},
		{"/platform/devices/", split{}},
		{"/healthz", split{}},
		{"/", split{}},
		{"", split{}},
	} {
		p, r, ok := groupOf(tc.path)
		if diff := cmp.Diff(tc.want, split{p, r, ok}); diff != "" {
			t.Errorf("groupOf(%q) (-want +got):\n%s", tc.path, diff)
		}
	}
}
