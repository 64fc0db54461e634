package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeDependencies checks that the README's list of dependencies
// names every module go.mod requires directly.
func TestReadmeDependencies(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(readme), "## Dependencies")
	if start < 0 {
		t.Fatal("the README has no section Dependencies")
	}
	deps := string(readme[start+1:])
	deps = deps[:strings.Index(deps, "\n## ")]
	mod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	in := false
	for _, l := range strings.Split(string(mod), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "require (":
			in = true
			continue
		case in && l == ")":
			in = false
			continue
		case strings.HasPrefix(l, "require "):
			l = strings.TrimPrefix(l, "require ")
		case !in:
			continue
		}
		f := strings.Fields(l)
		if len(f) < 2 || strings.Contains(l, "// indirect") {
			continue
		}
		n++
		// The full path, or without its host (`pb33f/libopenapi`).
		short := f[0][strings.Index(f[0], "/")+1:]
		if !strings.Contains(deps, "`"+f[0]+"`") && !strings.Contains(deps, "`"+f[0]+"/") && !strings.Contains(deps, "`"+short+"`") {
			t.Errorf("the README's Dependencies do not name %s, which go.mod requires", f[0])
		}
	}
	if n == 0 {
		t.Fatal("found no direct requirement in go.mod")
	}
}

// TestReadmeLayout checks that the README's Layout names every directory
// of Go code: each top-level one, and each command under cmd/.
func TestReadmeLayout(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(readme), "## Layout")
	if start < 0 {
		t.Fatal("the README has no section Layout")
	}
	layout := string(readme[start+1:])
	layout = layout[:strings.Index(layout, "\n## ")]
	root := filepath.Join("..", "..")
	dirs := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil || rel == "." {
			return err
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		dir := parts[0] + "/"
		if parts[0] == "cmd" && len(parts) > 1 {
			dir = "cmd/" + parts[1] + "/"
		}
		dirs[dir] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("found no directory of Go code")
	}
	for dir := range dirs {
		if !strings.Contains(layout, "\n"+dir) {
			t.Errorf("the README's Layout does not name %s", dir)
		}
	}
}
