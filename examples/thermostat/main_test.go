package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRun checks what the example prints: every hour of the winter day the
// room is within its 19–21 °C band (give or take the minute between two
// readings), while it is below 5 °C outdoors.
func TestRun(t *testing.T) {
	var b strings.Builder
	run(&b)
	hours := 0
	for _, line := range strings.Split(b.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || !strings.HasSuffix(f[0], ":00") {
			continue
		}
		room, err1 := strconv.ParseFloat(f[1], 64)
		out, err2 := strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("unreadable line %q", line)
		}
		hours++
		if room < 18.9 || room > 21.1 || out > 5.01 {
			t.Errorf("%s: room %.2f °C, outdoors %.1f °C; want the room in 19–21 °C and a winter outdoors", f[0], room, out)
		}
	}
	if hours != 25 || !strings.Contains(b.String(), "the router handled") {
		t.Errorf("printed %d hours, want 25:\n%s", hours, b.String())
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
