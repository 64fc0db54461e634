package errkind_test

import (
	"testing"

	"github.com/pervasim/pervasim/internal/errkind"
)

// TestCut: a text over the bound is cut on a character boundary, at most
// max bytes of it kept, and "…" added; one within it is kept whole.
func TestCut(t *testing.T) {
	for _, tt := range []struct {
		s    string
		max  int
		want string
	}{
		{"kitchen", 7, "kitchen"},
		{"kitchen", 4, "kitc…"},
		{"", 0, ""},
		{"abc", 0, "…"},
		{"ééé", 3, "é…"}, // two bytes a character: the second would be split
		{"ééé", 4, "éé…"},
		{"a€b", 2, "a…"}, // three bytes
	} {
		if got := errkind.Cut(tt.s, tt.max); got != tt.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
		}
	}
}
