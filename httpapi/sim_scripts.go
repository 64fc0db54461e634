package httpapi

import (
	"bytes"
	"errors"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/pervasim/pervasim/internal/errkind"
	"github.com/pervasim/pervasim/sim"
)

// scriptID returns id with the ".bhv" extension, which script files have.
func scriptID(id string) string {
	if strings.HasSuffix(id, ".bhv") {
		return id
	}
	return id + ".bhv"
}

// DefaultScriptsQuota is how many bytes of scripts the player may hold by
// default (Config.ScriptsQuota): 256 MiB.
const DefaultScriptsQuota = 256 << 20

// ScriptFile describes a stored script: its name (the script's id, ending
// in .bhv) and what tells its versions apart without reading it. ScriptFile
// is a plain value, safe for concurrent use as long as nobody modifies it.
type ScriptFile struct {
	Name    string
	Size    int64
	ModTime time.Time
}

// ScriptFiles keeps the script player's scripts (see Config.Scripts). Its
// methods must be safe for concurrent use.
type ScriptFiles interface {
	// List returns the stored scripts.
	List() ([]ScriptFile, error)
	// Read returns a stored script's text.
	Read(name string) ([]byte, error)
	// Write stores a script whole and returns what List will say of it.
	Write(name string, src []byte) (ScriptFile, error)
}

// stamp identifies a version of a script file without reading it.
type stamp struct {
	size int64
	mod  time.Time
}

// syncScripts brings the player up to date with the scripts directory: a
// file that is new or changed (by size or modification time) is read and
// parsed, one that is gone is removed from the player (unless it plays).
// Unchanged files cost a stat each, so listing the scripts stays cheap. A
// file that does not parse is logged and left out.
//
// The directory is listed with scriptsMu held, as uploads write it: a
// listing taken before an upload and used after it would not have the
// uploaded file, and would remove the acknowledged script from the player
// until the next listing.
func (s *server) syncScripts() {
	if s.scripts == nil {
		return
	}
	s.scriptsMu.Lock()
	defer s.scriptsMu.Unlock()
	files, err := s.scripts.List()
	if err != nil {
		s.log.Warn("scripts not listed", "err", err)
		return
	}
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		id := f.Name
		if !sim.ValidID(id) {
			continue
		}
		seen[id] = true
		st := stamp{size: f.Size, mod: f.ModTime}
		if old, ok := s.stamps[id]; ok && old == st {
			continue
		}
		s.stamps[id] = st
		if f.Size > sim.MaxScriptSize {
			s.log.Warn("script left out", "file", id, "err", "larger than 1 MiB")
			continue
		}
		src, err := s.scripts.Read(id)
		if err != nil {
			continue
		}
		if _, err := s.home.AddScript(id, src); err != nil {
			s.log.Warn("script left out", "file", id, "err", err)
		}
	}
	for id := range s.stamps {
		if !seen[id] {
			delete(s.stamps, id)
			if err := s.home.RemoveScript(id); err != nil && !errors.Is(err, sim.ErrNotFound) {
				s.log.Warn("script file gone, but the script stays", "id", id, "err", err)
			}
		}
	}
}

// checkQuota refuses a script that counts n bytes (see sim.ScriptCost) for
// id when the player would hold more than the quota.
func (s *server) checkQuota(id string, n int) error {
	total := s.shared.scriptBytes() + n
	if old, err := s.home.ScriptSize(id); err == nil {
		total -= old
	}
	if total > s.scriptsQuota {
		return errkind.Errorf(errBusy, "the scripts would take %d bytes, more than the %d the server keeps (-scripts-quota); remove some first",
			total, s.scriptsQuota)
	}
	return nil
}

// saveScriptFile stores a script, if scripts are stored, and notes its
// stamp so that the next listing does not read it again; s.scriptsMu is
// held.
func (s *server) saveScriptFileLocked(id string, src []byte) error {
	if s.scripts == nil {
		return nil
	}
	f, err := s.scripts.Write(id, src)
	if err != nil {
		return err
	}
	s.stamps[id] = stamp{size: f.Size, mod: f.ModTime}
	return nil
}

func (s *server) handleScriptList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.syncScripts()
		encode(w, http.StatusOK, s.home.Scripts())
	})
}

func (s *server) handleScriptGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, err := s.home.Script(pathID(r))
		respond(w, r, info, err)
	})
}

// handleScriptSource answers a script's text.
func (s *server) handleScriptSource() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		src, err := s.home.ScriptSource(pathID(r))
		if err != nil {
			writeError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		w.Write(src)
	})
}

// handleScriptState plays, pauses or stops a script: {"state": ...}. It
// holds scriptsMu, as an upload does, so that no script starts between an
// upload's change and its rollback when the disk refuses the file.
func (s *server) handleScriptState() http.Handler {
	return handleBody(s, scriptState, func(id, state string) (sim.ScriptInfo, error) {
		s.scriptsMu.Lock()
		defer s.scriptsMu.Unlock()
		return s.home.SetScriptState(id, state)
	})
}

// scriptState reads {"state": "started"|"paused"|"stopped"}; the player
// judges the value.
func scriptState(id string, o object) (string, error) {
	if err := o.checkPathID(id, "id"); err != nil {
		return "", err
	}
	state, err := o.str("state")
	if err == nil && state == nil {
		err = invalidf("field \"state\" is required: \"started\", \"paused\" or \"stopped\"")
	}
	if err != nil {
		return "", err
	}
	return *state, nil
}

// rawScript reports whether a script upload carries the .bhv file as its
// body (an XML or plain-text content type) rather than as JSON.
func rawScript(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/xml", "text/xml", "text/plain":
		return true
	}
	return false
}

// handleScriptCreate uploads a script: a .bhv file as the body, with an XML
// or plain-text content type and ?id=NAME, or JSON {"id", "content"}; JSON
// with only {"id"} saves the current home as one.
func (s *server) handleScriptCreate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var id string
		var content *string
		if rawScript(r) {
			id = r.URL.Query().Get("id")
			if id == "" {
				writeError(w, r, invalidf("query parameter \"id\" is required with a .bhv body, such as ?id=morning.bhv"))
				return
			}
			body, err := readBody(w, r, s.maxBody)
			if err != nil {
				writeError(w, r, err)
				return
			}
			text := string(body)
			content = &text
		} else {
			o, err := decodeObject(w, r, s.maxBody)
			if err != nil {
				writeError(w, r, err)
				return
			}
			if id, err = o.id("id", "name"); err != nil {
				writeError(w, r, err)
				return
			}
			if id == "" {
				id = r.URL.Query().Get("id")
			}
			if id == "" {
				writeError(w, r, invalidf("field \"id\" is required, such as \"morning.bhv\""))
				return
			}
			if content, err = o.str("content"); err != nil {
				writeError(w, r, err)
				return
			}
		}
		if !sim.ValidID(id) {
			writeError(w, r, invalidf("script id %q: want 1 to 128 letters, digits or -_.:", truncateID(id)))
			return
		}
		id = scriptID(id)
		var err error
		var info sim.ScriptInfo
		// The scripts directory is written under scriptsMu, and the
		// player's script with it, so that a script the disk refuses goes
		// back to what it was (or away) before anyone else writes.
		s.shared.scriptsMu.Lock()
		defer s.shared.scriptsMu.Unlock()
		s.scriptsMu.Lock()
		defer s.scriptsMu.Unlock()
		prev, prevErr := s.home.ScriptSource(id)
		undo := func() { // puts back the script id had, or none
			if prevErr == nil {
				s.home.AddScript(id, prev)
			} else {
				s.home.RemoveScript(id)
			}
		}
		var src []byte
		if content != nil {
			src = []byte(*content)
		} else { // the home saved as a script: written first, to count towards the quota as an upload does
			var b bytes.Buffer
			if err := sim.WriteScript(&b, s.home, s.home.Location()); err != nil {
				writeError(w, r, err)
				return
			}
			src = b.Bytes()
		}
		// Parsed first, to count what its actions will hold.
		sc, err := s.home.ParseScript(bytes.NewReader(src))
		if err != nil {
			writeError(w, r, err)
			return
		}
		if err := s.checkQuota(id, sim.ScriptCost(src, sc)); err != nil {
			writeError(w, r, err)
			return
		}
		info, err = s.home.AddScript(id, src)
		if err != nil {
			writeError(w, r, err)
			return
		}
		if src, err := s.home.ScriptSource(id); err == nil {
			if err := s.saveScriptFileLocked(id, src); err != nil {
				undo()
				writeError(w, r, errkind.Errorf(errkind.Storage, "script %s could not be stored, so it was not added: %v", id, err))
				return
			}
		}
		encode(w, http.StatusOK, info)
	})
}

// truncateID cuts an id for an error message.
func truncateID(s string) string { return errkind.Cut(s, 64) }
