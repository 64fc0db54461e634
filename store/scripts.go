package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pervasim/pervasim/dscilia"
	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/mediation"
)

// ScriptDir keeps the script player's scripts as the .bhv files of a
// directory; it implements httpapi.ScriptFiles. Files people put there or
// edit are seen at the next listing. ScriptDir is safe for concurrent use.
type ScriptDir struct {
	dir string
}

// NewScriptDir returns the scripts of dir, making it when missing. It
// removes what uploads cut off by a crash left there (their temporary
// files, after an hour: another server may share the directory). A
// script's file is never taken for one, though its name may start like
// them: the script id ".upload-x" is valid.
func NewScriptDir(dir string) (*ScriptDir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// Read, not globbed: the directory's name may hold what a pattern means.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, uploadPrefix) || strings.HasSuffix(name, ".bhv") {
			continue // a script: temporary files end in CreateTemp's random digits
		}
		f := filepath.Join(dir, name)
		if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > time.Hour {
			os.Remove(f)
		}
	}
	return &ScriptDir{dir: dir}, nil
}

// uploadPrefix starts the names of the temporary files of uploads.
const uploadPrefix = ".upload-"

// Dir returns the directory.
func (d *ScriptDir) Dir() string { return d.dir }

// List returns the regular .bhv files, with their size and time.
func (d *ScriptDir) List() ([]httpapi.ScriptFile, error) {
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return nil, err
	}
	var out []httpapi.ScriptFile
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".bhv") || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // gone meanwhile
		}
		out = append(out, httpapi.ScriptFile{Name: e.Name(), Size: info.Size(), ModTime: info.ModTime()})
	}
	return out, nil
}

// Read returns a file's text.
func (d *ScriptDir) Read(name string) ([]byte, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(d.dir, name))
}

// Write writes a file whole (through a temporary file, fsynced, renamed),
// so that a reader never sees part of it, and returns what List will say
// of it.
func (d *ScriptDir) Write(name string, src []byte) (httpapi.ScriptFile, error) {
	if err := checkName(name); err != nil {
		return httpapi.ScriptFile{}, err
	}
	tmp, err := os.CreateTemp(d.dir, uploadPrefix+"*")
	if err != nil {
		return httpapi.ScriptFile{}, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(src); err != nil {
		tmp.Close()
		return httpapi.ScriptFile{}, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return httpapi.ScriptFile{}, err
	}
	if err := tmp.Close(); err != nil {
		return httpapi.ScriptFile{}, err
	}
	path := filepath.Join(d.dir, name)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return httpapi.ScriptFile{}, err
	}
	if err := syncDir(d.dir); err != nil {
		return httpapi.ScriptFile{}, err
	}
	info, err := os.Stat(path)
	if err != nil {
		return httpapi.ScriptFile{}, err
	}
	return httpapi.ScriptFile{Name: name, Size: info.Size(), ModTime: info.ModTime()}, nil
}

// checkName refuses names that are not one file of the directory.
func checkName(name string) error {
	if name == "" || name != filepath.Base(name) || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return errors.New("a script's name is one file name")
	}
	return nil
}

// ChainFile is a parsed DSCilia file and the path it was read from. It is a
// plain value, but [ChainFile.Load] changes its Doc: do not load one from
// two goroutines, nor read its Doc while it loads.
type ChainFile struct {
	// Path is the file's path, as given or as found in a directory.
	Path string
	// Doc is the file's content, parsed.
	Doc *dscilia.Document
}

// ReadChains reads and parses path: one DSCilia file or, for a directory,
// its .dscilia files in name order. An error names the file; nothing is
// loaded, so a caller can check every file before changing anything. A
// directory without a .dscilia file is an error, and so is a chain that
// two of its files define (but for extensions, which add to a chain):
// the second would be left out without a word.
func ReadChains(path string) ([]ChainFile, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	files := []string{path}
	if fi.IsDir() {
		// Read, not globbed: the directory's name may hold what a
		// pattern means ("chains [old]" matched nothing).
		entries, err := os.ReadDir(path) // in name order
		if err != nil {
			return nil, err
		}
		files = files[:0]
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".dscilia") && !e.IsDir() {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no .dscilia file in the directory", path)
		}
	}
	out := make([]ChainFile, 0, len(files))
	defined := map[string]string{} // chain id: the file defining it
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		d, err := dscilia.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, c := range d.Chains {
			if c.Extension {
				continue
			}
			if first, ok := defined[c.ID]; ok && first != f {
				return nil, fmt.Errorf("%s: chain %q is defined in %s already", f, c.ID, first)
			}
			defined[c.ID] = f
		}
		out = append(out, ChainFile{Path: f, Doc: d})
	}
	return out, nil
}

// Load loads f into engine (see dscilia.Load), leaving out the chains the
// engine has already (made by -demo, say, or by a file before) unless they
// are extensions. An error names the file. Load changes f.Doc: load a
// ChainFile once.
func (f ChainFile) Load(engine *mediation.Engine, placeholders bool) error {
	d := f.Doc
	d.Chains = slices.DeleteFunc(d.Chains, func(c dscilia.Chain) bool {
		_, err := engine.Chain(c.ID)
		return err == nil && !c.Extension
	})
	if _, err := dscilia.Load(engine, d, dscilia.LoadOptions{Placeholders: placeholders}); err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	return nil
}

// LoadChains loads path, one DSCilia file or a directory's (see
// ReadChains), into engine: every file is read and parsed before any is
// loaded. An error names the file.
func LoadChains(engine *mediation.Engine, path string, placeholders bool) error {
	files, err := ReadChains(path)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := f.Load(engine, placeholders); err != nil {
			return err
		}
	}
	return nil
}
