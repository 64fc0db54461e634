package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

// memScripts is a scripts directory in memory. Its onList, when set, runs
// once, inside the next List, after the files were read: what a listing of
// a real directory sees can be as old as that.
type memScripts struct {
	mu     sync.Mutex
	files  map[string][]byte
	mods   map[string]time.Time
	writes int64
	onList func()
}

func (m *memScripts) List() ([]ScriptFile, error) {
	m.mu.Lock()
	var out []ScriptFile
	for name, src := range m.files {
		out = append(out, ScriptFile{Name: name, Size: int64(len(src)), ModTime: m.mods[name]})
	}
	hook := m.onList
	m.onList = nil
	m.mu.Unlock()
	if hook != nil {
		hook()
	}
	return out, nil
}

func (m *memScripts) Read(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	src, ok := m.files[name]
	if !ok {
		return nil, sim.ErrNotFound
	}
	return slices.Clone(src), nil
}

func (m *memScripts) Write(name string, src []byte) (ScriptFile, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes++
	m.files[name] = slices.Clone(src)
	m.mods[name] = time.Unix(m.writes, 0)
	return ScriptFile{Name: name, Size: int64(len(src)), ModTime: m.mods[name]}, nil
}

// TestUploadDuringListing: a script upload acknowledged while a listing
// reads the scripts directory is in the player at once, with the text it
// was acknowledged with, and stays there: the listing, whose files were
// read before the upload wrote its own, does not take it for a file
// removed (nor an older text for a newer one).
func TestUploadDuringListing(t *testing.T) {
	const old, newer = "<behavior><delay value=\"1\" unit=\"m\"/></behavior>", "<behavior><delay value=\"2\" unit=\"m\"/></behavior>"
	for _, tc := range []struct {
		name   string
		before map[string]string // the directory's files at the start
		body   string            // the upload
		id     string
		want   string // the script's text after the upload; "" for the text written
	}{
		{"a new script", nil, `{"id":"up","content":` + quote(old) + `}`, "up.bhv", old},
		{"a script replaced", map[string]string{"up.bhv": old}, `{"id":"up","content":` + quote(newer) + `}`, "up.bhv", newer},
		{"the home saved", nil, `{"id":"saved"}`, "saved.bhv", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := &memScripts{files: map[string][]byte{}, mods: map[string]time.Time{}}
			for name, src := range tc.before {
				files.Write(name, []byte(src))
			}
			home := sim.MustNew(sim.Config{WallClock: clock.NewMock(), Location: time.UTC})
			h := NewHandler(Config{Home: home, Scripts: files})
			defer h.Close()
			do := func(method, path, body string) *httptest.ResponseRecorder {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(method, "http://localhost"+path, strings.NewReader(body)))
				return rec
			}

			// The upload runs while the listing is in List. When the
			// listing holds no lock there, the upload is let finish
			// before List returns, the worst case for the listing; when
			// it holds scriptsMu, the upload can only wait for it.
			var up *httptest.ResponseRecorder
			uploaded := make(chan struct{})
			files.onList = func() {
				go func() {
					defer close(uploaded)
					up = do("POST", "/platform/scriptPlayer/script", tc.body)
				}()
				if h.srv.scriptsMu.TryLock() {
					h.srv.scriptsMu.Unlock()
					<-uploaded
				}
			}
			if rec := do("GET", "/platform/scriptPlayer/scripts", ""); rec.Code != 200 {
				t.Fatalf("listing = %d %s", rec.Code, rec.Body)
			}
			<-uploaded
			if up.Code != 200 {
				t.Fatalf("upload = %d %s, want 200", up.Code, up.Body)
			}

			type read struct {
				Status int
				Text   string
			}
			source := func() read {
				rec := do("GET", "/platform/scriptPlayer/script/"+tc.id+"/source", "")
				return read{rec.Code, rec.Body.String()}
			}
			want := read{200, tc.want}
			if tc.want == "" {
				src, err := files.Read(tc.id)
				if err != nil {
					t.Fatalf("the upload wrote no file: %v", err)
				}
				want.Text = string(src)
			}
			if diff := cmp.Diff(want, source()); diff != "" {
				t.Errorf("the source after the upload (-want +got):\n%s", diff)
			}
			// The next listing reads the directory after the upload:
			// the script stays, with the same text.
			if rec := do("GET", "/platform/scriptPlayer/scripts", ""); !strings.Contains(rec.Body.String(), `"id":"`+tc.id+`"`) {
				t.Errorf("the next listing = %s, want %s in it", rec.Body, tc.id)
			}
			if diff := cmp.Diff(want, source()); diff != "" {
				t.Errorf("the source after the next listing (-want +got):\n%s", diff)
			}
		})
	}
}

// quote returns s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
