package httpapi

import (
	"net"
	"testing"
)

// FuzzIsIP: isIP takes the host literals net.ParseIP takes, and no other.
func FuzzIsIP(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "::1", "fe80::1%eth0", "::ffff:10.0.0.1", "1.2.3", "01.2.3.4",
		"256.0.0.1", "localhost", "", "1.2.3.4.", "[::1]", "2001:db8::", ":::", "1.2.3.4%x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isIP(s), net.ParseIP(s) != nil; got != want {
			t.Errorf("isIP(%q) = %v, net.ParseIP says %v", s, got, want)
		}
	})
}
