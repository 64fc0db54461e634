package httpapi

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

// webFiles holds the browser UI served under /simulator: a house plan that
// talks to the REST API and follows the event stream.
//
//go:embed web
var webFiles embed.FS

// contentTypes maps the extensions of the web files to their media types,
// so that serving does not depend on the machine's MIME tables.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".mjs":  "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".ico":  "image/x-icon",
	".json": "application/json; charset=utf-8",
	".txt":  "text/plain; charset=utf-8",
}

// The headers that keep foreign pages from framing the house plan: CSP's
// frame-ancestors, and X-Frame-Options for browsers without it.
var (
	frameSelf       = []string{"frame-ancestors 'self'"}
	frameSameOrigin = []string{"SAMEORIGIN"}
)

// The strings of index.html that the server fills in per request: the
// platform root the page talks to, and the prefix of the page's own files.
const (
	rootPlaceholder  = `<meta name="platform-root" content="platform">`
	assetPlaceholder = `="./`
)

// handleSimulator serves the browser UI: /simulator and /simulator/ answer
// index.html, other paths under /simulator/ the embedded files. platformRoot
// is the simulation root, such as "/platform". index.html gets the root and
// its asset paths as URLs relative to the requested path, so that the page
// works under any root and behind a proxy that adds a path prefix.
func (s *server) handleSimulator(pre, platformRoot string) http.Handler {
	files, index := webTree()
	root := strings.Trim(strings.TrimPrefix(platformRoot, pre), "/")
	start := time.Now()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := strings.TrimPrefix(r.URL.Path, pre)
		name := strings.TrimPrefix(p, "/simulator/")
		if p == "/simulator" || name == "" {
			name = "index.html"
		}
		var body []byte
		if name == "index.html" {
			body = renderIndex(index, p, root)
		} else if fs.ValidPath(name) {
			if b, err := fs.ReadFile(files, name); err == nil {
				body = b
			}
		}
		if body == nil {
			writeError(w, r, &routeError{path: r.URL.Path})
			return
		}
		h := w.Header()
		ct, ok := contentTypes[path.Ext(name)]
		if !ok {
			ct = "application/octet-stream"
		}
		h.Set("Content-Type", ct)
		h.Set("X-Content-Type-Options", "nosniff")
		// Only the server's own pages may frame the house plan: a foreign
		// page that framed it could have a visitor's clicks move, set and
		// delete things through it (clickjacking), as the page is of the
		// server's origin and passes the guard.
		h["Content-Security-Policy"] = frameSelf
		h["X-Frame-Options"] = frameSameOrigin
		h.Set("Cache-Control", "no-cache")
		sum := sha256.Sum256(body)
		h.Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
		http.ServeContent(w, r, name, start, bytes.NewReader(body))
	})
}

// webTree returns the house plan's files and its index.html, read once
// for every server and home.
var webTree = sync.OnceValues(func() (fs.FS, []byte) {
	files, err := fs.Sub(webFiles, "web")
	if err != nil {
		panic(err) // the embedded tree always has web/
	}
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		panic(err)
	}
	return files, index
})

// renderIndex fills in index.html for a request of path p: the platform
// root, and the prefix of the asset URLs, both relative to p.
func renderIndex(index []byte, p, root string) []byte {
	// The directory of the document is "/" for /simulator and /simulator/
	// for anything under /simulator/.
	up, assets := "", "./simulator/"
	if strings.HasPrefix(p, "/simulator/") {
		up, assets = strings.Repeat("../", strings.Count(p, "/")-1), "./"
	}
	out := bytes.Replace(index, []byte(rootPlaceholder),
		[]byte(`<meta name="platform-root" content="`+html.EscapeString(up+root)+`">`), 1)
	if assets != "./" {
		out = bytes.ReplaceAll(out, []byte(assetPlaceholder), []byte(`="`+assets))
	}
	return out
}
