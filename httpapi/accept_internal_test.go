package httpapi

import (
	"net/http/httptest"
	"testing"
)

// TestWantsXML: the Accept header's qualities decide between JSON and XML;
// at equal quality the first named wins; JSON by default.
func TestWantsXML(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                                  false,
		"*/*":                               false,
		"application/xml":                   true,
		"text/xml":                          true,
		"application/json":                  false,
		"application/xml, application/json": true,
		"application/json, application/xml": false,
		"application/xml;q=0.5, application/json":   false,
		"application/json;q=0.4, application/xml":   true,
		"Application/XML; charset=utf-8; Q=0.9":     true,
		"application/xml;q=0":                       false,
		"application/xml;q=0.8, text/xml;q=0.9":     true,
		"application/json;q=0.9, text/xml;q=0.9":    false,
		"text/xml;q=0.9, application/json;q=0.9":    true,
		"application/xml;q=bogus, application/json": true, // a bad q counts as 1
	} {
		r := httptest.NewRequest("GET", "/mediation/c", nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if got := wantsXML(r); got != want {
			t.Errorf("wantsXML(Accept: %q) = %v, want %v", accept, got, want)
		}
	}
}
