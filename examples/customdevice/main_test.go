package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun checks what the example prints: the plug's energy adds up the
// heater's schedule (3 kWh by 06:00, 6 kWh by 09:00, 11 kWh at midnight).
func TestRun(t *testing.T) {
	var b strings.Builder
	run(&b)
	for _, want := range []string{
		"06:00    50 %     500      3000",
		"09:00   100 %    1000      6000",
		"24:00    50 %     500     11000",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}

// TestOutputGolden checks the whole output against testdata/output.golden.
func TestOutputGolden(t *testing.T) {
	var b strings.Builder
	run(&b)
	want, err := os.ReadFile(filepath.Join("testdata", "output.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("output differs from testdata/output.golden; got:\n%s", b.String())
	}
}
