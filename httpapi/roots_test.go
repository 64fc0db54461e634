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

// TestCheckAllow: an -allow-origin entry is an origin or "*", an
// -allow-host entry a bare host name. The guard ignores any other entry,
// which no request could match: before CheckAllow, -allow-origin
// app.example.com (no scheme) or -allow-host pervasim.lan:8080 (a port)
// started the server, which then refused that page or that name.
func TestCheckAllow(t *testing.T) {
	for _, tt := range []struct {
		origins, hosts []string
		ok             bool
	}{
		{nil, nil, true},
		{[]string{"*"}, nil, true},
		{[]string{"https://app.example.com", " http://localhost:3000 ", "http://[::1]:8080", "https://a.example/", ""}, nil, true},
		{[]string{"app.example.com"}, nil, false},
		{[]string{"https://good.example", "good.example"}, nil, false},
		{[]string{"ftp://app.example.com"}, nil, false},
		{[]string{"https://app.example.com/path"}, nil, false},
		{[]string{"https://app.example.com?q=1"}, nil, false},
		{[]string{"https://user@app.example.com"}, nil, false},
		{[]string{"null"}, nil, false},
		{[]string{"https://*.example.com"}, nil, false}, // kept by the guard, matched by no Origin
		{[]string{"http://app%20x.example"}, nil, false},
		{[]string{"https://my_app-1.example:8443", "HTTP://APP.EXAMPLE"}, nil, true},
		{nil, []string{"pervasim.lan", "Foo.LAN.", "my_host-1", " x ", ""}, true},
		{nil, []string{"192.168.1.10", "[::1]", "::1"}, true},
		{nil, []string{"pervasim.lan:8080"}, false},
		{nil, []string{"http://pervasim.lan"}, false},
		{nil, []string{"pervasim.lan/"}, false},
		{nil, []string{"a b"}, false},
		{nil, []string{"."}, false},
	} {
		err := httpapi.CheckAllow(tt.origins, tt.hosts)
		if tt.ok && err != nil || !tt.ok && !errors.Is(err, errkind.Invalid) {
			t.Errorf("CheckAllow(%q, %q) = %v, want ok %v", tt.origins, tt.hosts, err, tt.ok)
		}
	}
}
