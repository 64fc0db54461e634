package store_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/store"
)

// TestLoadChains: a file, or a directory's .dscilia files in name order;
// every file is parsed before any is loaded, so a malformed one leaves the
// engine as it was, and an error names the file.
func TestLoadChains(t *testing.T) {
	// A directory whose name holds what a glob pattern means.
	dir := filepath.Join(t.TempDir(), "chains [a*b?]")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(dir, name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	chain := func(id string) string {
		return `<cilia><chain id="` + id + `"><mediators><mediator-instance id="p" type="passthrough"/></mediators></chain></cilia>`
	}
	write(dir, "b.dscilia", chain("second"))
	file := write(dir, "a.dscilia", chain("first"))
	write(dir, "notes.txt", "not a chain")
	bad := t.TempDir()
	write(bad, "a.dscilia", chain("fine"))
	write(bad, "b.dscilia", `<cilia><chain id="cut">`)
	twice := t.TempDir()
	write(twice, "a.dscilia", chain("same"))
	write(twice, "b.dscilia", chain("same"))
	extended := t.TempDir()
	write(extended, "a.dscilia", chain("base"))
	write(extended, "b.dscilia", `<cilia><chain id="base" extension="true"><mediators><mediator-instance id="q" type="passthrough"/></mediators></chain></cilia>`)
	empty := t.TempDir()
	write(empty, "chain.xml", chain("named wrong"))

	for _, tt := range []struct {
		name, path string
		want       []string // the engine's chains after loading
		err        string   // in the error, when there is one
	}{
		{"a directory, in name order", dir, []string{"first", "second"}, ""},
		{"one file", file, []string{"first"}, ""},
		{"a malformed file loads nothing", bad, []string{}, "b.dscilia"},
		{"a missing path", filepath.Join(dir, "missing.dscilia"), []string{}, "missing.dscilia"},
		{"a chain in two files loads nothing", twice, []string{}, `"same" is defined in`},
		{"an extension in another file", extended, []string{"base"}, ""},
		{"a directory without a chain file", empty, []string{}, "no .dscilia file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := mediation.NewEngine(mediation.Config{})
			defer e.Close()
			err := store.LoadChains(e, tt.path, false)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("LoadChains(%s) = %v, want an error containing %q", tt.path, err, tt.err)
			}
			if diff := cmp.Diff(tt.want, e.Chains()); diff != "" {
				t.Errorf("chains after loading (-want +got):\n%s", diff)
			}
		})
	}
}

// TestScriptDirRemovesCutUploads: the temporary files of uploads a crash
// cut off are removed at the next start once they are an hour old (a
// fresh one may be another server's upload under way); they stayed for
// ever.
func TestScriptDirRemovesCutUploads(t *testing.T) {
	// A directory whose name holds what a glob pattern means.
	dir := filepath.Join(t.TempDir(), "scripts [a*b?]")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, age time.Duration) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("zone"), 0o644); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	write(".upload-123", 2*time.Hour)
	write(".upload-456", time.Minute)
	write("old.bhv", 2*time.Hour)
	// A script whose id (".upload-x", valid) starts like a temporary
	// file: it was removed an hour after its upload.
	write(".upload-x.bhv", 2*time.Hour)
	if _, err := store.NewScriptDir(dir); err != nil {
		t.Fatal(err)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if diff := cmp.Diff([]string{".upload-456", ".upload-x.bhv", "old.bhv"}, left); diff != "" {
		t.Errorf("files left (-want +got):\n%s", diff)
	}
}
