package httpapi

import (
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/pervasim/pervasim/internal/errkind"
)

// errForbidden is the kind of a request refused for its origin, its host or
// its token: 403 forbidden.
var errForbidden = errors.New("forbidden")

type forbiddenError struct{ msg string }

func (e *forbiddenError) Error() string     { return e.msg }
func (e *forbiddenError) Is(err error) bool { return err == errForbidden }

// guard decides who may use the server. A request passes three checks, in
// this order, and is refused with 403 forbidden at the first that fails:
//
//  1. Host: an IP literal, localhost, or a host of AllowHosts. A name that
//     resolves to the server only through an attacker's DNS (DNS
//     rebinding) is refused.
//  2. Token: with a token set, Authorization: Bearer <token> (or, for the
//     event stream, which a browser's EventSource cannot give headers, the
//     access_token query parameter), except for GET /healthz, the house
//     plan's own files (and / that leads there) and CORS preflights (OPTIONS
//     with an Origin and Access-Control-Request-Method, which a browser
//     sends without credentials). Under a home of /homes, the same but its
//     healthz, answered alike whether the home exists or not.
//  3. Origin: a request that may change state (any method but GET, HEAD and
//     OPTIONS) from a browser must come from an allowed origin: a loopback
//     origin (http or https, localhost, 127.0.0.1 or [::1], any port), the
//     server's own (the request's Host), or one of AllowOrigins; "*" there
//     allows every origin. Without an Origin, a request the browser marks
//     Sec-Fetch-Site: cross-site is refused too, unless "*" is allowed. The
//     same holds for opening an event stream (GET), which a foreign page
//     could not read but would keep open.
//
// Responses to an allowed Origin carry the CORS headers that let the page
// read them; others carry none, so a foreign page can neither read the API
// nor pass a preflight.
type guard struct {
	origins  map[string]bool // normalised scheme://host[:port]
	anyOrig  bool
	hosts    map[string]bool // lower-case host names, without port
	token    string
	exempt   func(r *http.Request) bool // what needs no token
	tokenArg func(r *http.Request) bool // where the query may carry it
	next     http.Handler
	lastHost atomic.Pointer[string] // the last Host header allowed, as it came
}

// newGuard returns the guard of cfg in front of next.
func newGuard(cfg Config, pre, platformRoot string, next http.Handler) *guard {
	g := &guard{token: cfg.Token, next: next}
	g.origins, g.anyOrig, g.hosts, _ = readAllow(cfg.AllowOrigins, cfg.AllowHosts) // an entry no request could match is left out
	homes := cfg.Homes
	// own returns p as the server's own path: a home's paths are the
	// server's under /homes/<name>, and home says whether p was one.
	own := func(p string) (path string, home bool) {
		if name, ok := underHome(p); ok && homes != nil {
			return pre + strings.TrimPrefix(p, "/homes/"+name), true
		}
		return p, false
	}
	g.exempt = func(r *http.Request) bool {
		if preflight(r) {
			return true
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return false
		}
		// Under a home, what passes answers alike whether the home exists
		// or not (see homeRoutes), so that names cannot be probed: its
		// healthz, which would tell, needs the token.
		p, home := own(r.URL.Path)
		return p == pre+"/healthz" && !home || p == pre+"/" || p == pre+"/simulator" || strings.HasPrefix(p, pre+"/simulator/")
	}
	events := map[string]bool{pre + "/events": true, platformRoot + "/events": true}
	g.tokenArg = func(r *http.Request) bool {
		p, _ := own(r.URL.Path)
		return r.Method == http.MethodGet && events[p]
	}
	return g
}

// preflight reports whether r is a browser's CORS preflight, which cannot
// carry the token: OPTIONS with an Origin, asking for a method.
func preflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" && r.Header.Get("Access-Control-Request-Method") != ""
}

// underHome reports whether p is a path inside a home of /homes
// (/homes/{home}/…), which that home's handler serves behind a guard of its
// own, and names the home.
func underHome(p string) (name string, ok bool) {
	rest, ok := strings.CutPrefix(p, "/homes/")
	i := strings.IndexByte(rest, '/')
	if !ok || i <= 0 {
		return "", false
	}
	return rest[:i], true
}

// The CORS headers of the responses to requests with an Origin, and of
// preflights.
var (
	corsMethods = []string{"GET, HEAD, POST, PUT, DELETE, OPTIONS"}
	corsHeaders = []string{"Origin, Content-Type, Accept, Authorization, X-Requested-With, Cache-Control, Last-Event-ID"}
	corsMaxAge  = []string{"600"}
	varyOrigin  = []string{"Origin"}
)

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostAllowed(r.Host) {
		writeError(w, r, &forbiddenError{"host " + quoteShort(r.Host) + " is not served: use an IP address or localhost, or start the server with -allow-host"})
		return
	}
	origin := r.Header.Get("Origin")
	allowed := origin == "" || g.originAllowed(origin, r)
	h := w.Header()
	if origin != "" && allowed {
		if g.anyOrig {
			h.Set("Access-Control-Allow-Origin", "*")
		} else {
			h.Set("Access-Control-Allow-Origin", origin)
		}
	}
	// Set directly, with keys already canonical and values made once. The
	// slices are shared, never written in place (Header.Set replaces a
	// value, Header.Add appends to a full slice, which copies it). Only a
	// browser's cross-origin request (it has an Origin) and a preflight
	// read the CORS headers; every response varies with the Origin.
	if origin != "" || r.Method == http.MethodOptions {
		h["Access-Control-Allow-Methods"] = corsMethods
		h["Access-Control-Allow-Headers"] = corsHeaders
		h["Access-Control-Max-Age"] = corsMaxAge
	}
	if v := h["Vary"]; len(v) == 0 {
		h["Vary"] = varyOrigin
	} else if !slices.Contains(v, "Origin") { // a home of /homes passes the server's guard, then its own
		h["Vary"] = append(v, "Origin")
	}
	if g.token != "" && !g.exempt(r) && !g.tokenGiven(r) {
		writeError(w, r, &forbiddenError{"this server needs a token: send Authorization: Bearer <token>"})
		return
	}
	// A browser that says the request comes from another site (Fetch
	// Metadata) but gives no Origin (an older one, a privacy extension
	// that strips it, a no-cors fetch) is not let through for the Origin it
	// left out. Most requests are neither, and pass without more.
	hidden := origin == "" && !g.anyOrig && r.Header.Get("Sec-Fetch-Site") == "cross-site"
	if !allowed || hidden {
		what := "change this server"
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			// A foreign page cannot read an event stream (it gets no CORS
			// headers), but one it opens (an EventSource, a fetch) would
			// hold one of the server's stream clients while it stays open.
			what = ""
			if g.tokenArg(r) {
				what = "open this server's event stream"
			}
		}
		switch {
		case what == "":
		case !allowed:
			writeError(w, r, &forbiddenError{"origin " + quoteShort(origin) + " may not " + what + ": start it with -allow-origin to allow it"})
			return
		default:
			writeError(w, r, &forbiddenError{"a cross-site request (Sec-Fetch-Site) without an Origin may not " + what + ": start the server with -allow-origin '*' to allow it"})
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// hostAllowed reports whether the Host header names this server in a way no
// foreign DNS can: an IP literal, localhost, or an allowed name.
func (g *guard) hostAllowed(host string) bool {
	// Clients send the same Host again and again: the last one allowed is
	// remembered, as it came.
	if last := g.lastHost.Load(); last != nil && *last == host {
		return true
	}
	if !g.hostNameAllowed(host) {
		return false
	}
	g.lastHost.Store(&host)
	return true
}

// hostNameAllowed is hostAllowed without the memory.
func (g *guard) hostNameAllowed(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "" {
		return false
	}
	if isIP(host) || host == "localhost" {
		return true
	}
	return g.hosts[host]
}

// isIP reports whether host is an IP address literal, as net.ParseIP
// reads them (no zone), without allocating.
func isIP(host string) bool {
	a, err := netip.ParseAddr(host)
	return err == nil && a.Zone() == ""
}

// originAllowed reports whether a browser page of origin may use the server.
func (g *guard) originAllowed(origin string, r *http.Request) bool {
	if g.anyOrig {
		return true
	}
	n, ok := normaliseOrigin(origin)
	if !ok {
		return false // "null" and anything else that is no origin
	}
	if g.origins[n] {
		return true
	}
	u, _ := url.Parse(n)
	switch strings.Trim(u.Hostname(), "[]") {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	own, ok := normaliseOrigin(u.Scheme + "://" + r.Host)
	return ok && own == n // the server's own origin
}

// tokenGiven reports whether the request carries the token.
func (g *guard) tokenGiven(r *http.Request) bool {
	scheme, got, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	ok = ok && strings.EqualFold(scheme, "Bearer") // a scheme's name is case-insensitive (RFC 9110)
	if !ok && g.tokenArg(r) {
		got, ok = r.URL.Query().Get("access_token"), true
	}
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(g.token)) == 1
}

// CheckAllow reports whether every entry of origins and hosts can be one
// of a Config's AllowOrigins and AllowHosts: "*" or an origin
// (scheme://host[:port], http or https, no path beyond "/", no query,
// its host a host name or an IP address) for the first, a host name
// (letters, digits, "-", "_" and ".", without a scheme or a port) or an
// IP address for the second. The handler leaves out an entry that is
// neither (a pattern such as https://*.example.com, a host with its port),
// since no request could match it; a program that takes them from its user
// (the server's -allow-origin and -allow-host) checks them first, so that
// a mistyped one is an error rather than a page or a name silently
// refused. Empty entries are skipped, as the handler skips them.
func CheckAllow(origins, hosts []string) error {
	_, _, _, err := readAllow(origins, hosts)
	return err
}

// readAllow reads a Config's AllowOrigins and AllowHosts as the guard
// keeps them: the origins normalised (normaliseOrigin), whether "*" was
// among them, and the host names in lower case without a final dot. An
// entry that is neither an origin nor a host name as CheckAllow says is
// left out, the first such one reported.
func readAllow(origins, hosts []string) (orig map[string]bool, anyOrigin bool, hs map[string]bool, err error) {
	orig, hs = map[string]bool{}, map[string]bool{}
	bad := func(e error) {
		if err == nil {
			err = e
		}
	}
	for _, o := range origins {
		switch o = strings.TrimSpace(o); o {
		case "":
		case "*":
			anyOrigin = true
		default:
			n, ok := normaliseOrigin(o)
			if ok {
				u, _ := url.Parse(n)
				ok = hostOK(u.Hostname())
			}
			if !ok {
				bad(errkind.Errorf(errkind.Invalid, "origin %s: want scheme://host[:port], http or https, such as https://app.example.com:8443 (no pattern), or *", quoteShort(o)))
				continue
			}
			orig[n] = true
		}
	}
	for _, h := range hosts {
		if h = strings.TrimSpace(h); h == "" {
			continue
		}
		if !hostOK(h) {
			bad(errkind.Errorf(errkind.Invalid, "host %s: want a host name alone, without a scheme or a port, such as pervasim.lan", quoteShort(h)))
			continue
		}
		hs[strings.TrimSuffix(strings.ToLower(h), ".")] = true
	}
	return orig, anyOrigin, hs, err
}

// hostOK reports whether h is an IP address (in brackets or not) or a host
// name: letters, digits, "-", "_" and ".", not dots alone.
func hostOK(h string) bool {
	if isIP(strings.Trim(h, "[]")) {
		return true
	}
	h = strings.TrimSuffix(h, ".")
	return h != "" && !strings.ContainsFunc(h, func(c rune) bool {
		return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.')
	})
}

// normaliseOrigin returns scheme://host[:port] in lower case, without a
// default port, or false when s is not an http(s) origin.
func normaliseOrigin(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == "" || scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		return scheme + "://" + host, true
	}
	return scheme + "://" + host + ":" + port, true
}

// quoteShort quotes s, cut to 100 bytes on a character boundary, what
// is not UTF-8 in it replaced.
func quoteShort(s string) string {
	return `"` + strings.ToValidUTF8(errkind.Cut(s, 100), "?") + `"`
}
