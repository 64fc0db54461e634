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
)

// serverFlags returns the server's flags and their defaults ("" for none),
// as -h prints them.
func serverFlags(t *testing.T) map[string]string {
	t.Helper()
	var usage bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("parseFlags(-h) = %v, want flag.ErrHelp", err)
	}
	flags := map[string]string{}
	name := regexp.MustCompile(`^  -([a-z-]+)`)
	def := regexp.MustCompile(`\(default "?([^")]*)"?\)$`)
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
	return flags
}

// TestReadmeFlags checks the README's list of the server's flags against
// the flags themselves: every flag listed exists, with the default the
// list gives it (where it gives one as "(default V"), and every flag of the
// server is named somewhere in the README.
func TestReadmeFlags(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	flags := serverFlags(t)

	start := strings.Index(readme, "go run ./cmd/server [flags]\n")
	if start < 0 {
		t.Fatal("the README has no list of the server's flags (go run ./cmd/server [flags])")
	}
	block := readme[start:]
	block = block[:strings.Index(block, "```")]
	// Each flag of the list, its description joined across its lines.
	var names, texts []string
	listed := regexp.MustCompile(`^  -([a-z-]+)\s+(.*)$`)
	for _, l := range strings.Split(block, "\n") {
		if m := listed.FindStringSubmatch(l); m != nil {
			names, texts = append(names, m[1]), append(texts, m[2])
		} else if len(texts) > 0 && strings.HasPrefix(l, "    ") {
			texts[len(texts)-1] += " " + strings.TrimSpace(l)
		}
	}
	defaults := regexp.MustCompile(`\(default ([^;)\s]+)[;)]`)
	n := 0
	for i, name := range names {
		n++
		got, ok := flags[name]
		if !ok {
			t.Errorf("the README lists -%s, which the server does not have", name)
			continue
		}
		if d := defaults.FindStringSubmatch(texts[i]); d != nil {
			want := d[1]
			if want == "none" {
				want = ""
			}
			if got != want {
				t.Errorf("the README gives -%s the default %q; it is %q", name, d[1], got)
			}
		}
	}
	if n == 0 {
		t.Fatal("found no flag in the README's list")
	}
	for f := range flags {
		if !strings.Contains(readme, "`-"+f) && !regexp.MustCompile(`(?m)^  -`+regexp.QuoteMeta(f)+`\s`).MatchString(block) {
			t.Errorf("the README does not name the server's flag -%s", f)
		}
	}
}
