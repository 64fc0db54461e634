package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestReadmeFlags checks that the README's section on cmd/simulate names
// every flag of the command, and gives the defaults it states ("-tz
// (default UTC)", "-every (default 1m)") as the flags have them.
func TestReadmeFlags(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	start := strings.Index(readme, "## A simulated day from the command line")
	if start < 0 {
		t.Fatal("the README has no section on cmd/simulate")
	}
	section := readme[start+1:]
	section = section[:strings.Index(section, "\n## ")]

	var usage bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("parseFlags(-h) = %v, want flag.ErrHelp", err)
	}
	name := regexp.MustCompile(`^  -([a-z-]+)`)
	def := regexp.MustCompile(`\(default "?([^")]*)"?\)$`)
	flags := map[string]string{}
	last := ""
	for _, l := range strings.Split(usage.String(), "\n") {
		if m := name.FindStringSubmatch(l); m != nil {
			last = m[1]
			flags[last] = ""
		} else if m := def.FindStringSubmatch(l); m != nil && last != "" {
			flags[last] = m[1]
		}
	}
	if len(flags) == 0 {
		t.Fatalf("no flag in the usage:\n%s", usage.String())
	}
	for f := range flags {
		if !strings.Contains(section, "`-"+f) {
			t.Errorf("the README's section on cmd/simulate does not name -%s", f)
		}
	}
	// "-every` of simulated time (default 1m)": the default stated after a
	// flag, on the same bullet, before the next flag.
	checked := 0
	stated := regexp.MustCompile("`-([a-z-]+)[^`]*`[^`]*?\\(default ([^)]+)\\)")
	for _, m := range stated.FindAllStringSubmatch(section, -1) {
		got, ok := flags[m[1]]
		if !ok {
			t.Errorf("the README names -%s, which cmd/simulate does not have", m[1])
			continue
		}
		want := m[2]
		if strings.HasPrefix(want, ":") {
			continue // "(default: to the end of the scripts)": prose
		}
		checked++
		same := got == want
		if dg, err := time.ParseDuration(got); err == nil {
			dw, err := time.ParseDuration(want)
			same = err == nil && dg == dw
		}
		if !same {
			t.Errorf("the README gives -%s the default %q; it is %q", m[1], want, got)
		}
	}
	if checked == 0 {
		t.Error("found no default stated in the README's section on cmd/simulate")
	}
}
