package httpapi

import (
	"errors"
	"net/url"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pervasim/pervasim/internal/errkind"
)

// FuzzParseForm gives parseForm, which reads every mediation request's
// query string and form body, any text: it never panics; it refuses only
// what is not valid UTF-8 once decoded, with an error of kind Invalid
// (400); what the standard library's strict url.ParseQuery reads, it reads
// the same; and any fields, encoded as a client encodes them, read back as
// they were sent.
func FuzzParseForm(f *testing.F) {
	f.Add("properties={a=1; b=50%}&x=y", "k", "v")
	f.Add("command=copy&from=tag&to=tag2", "properties", "{floor=2}")
	f.Add("from=p:out&to=out:in&linker=JMS_Joram&properties={jms.topic=wiki}", "a b", "c+d&e=f")
	f.Add("content=hi+there&prop.k=v&&=&a==b", "é", "%zz")
	f.Add("x=%ff&y=%C3%A9", "", "")
	f.Add("%", "\xff", "%41")
	f.Fuzz(func(t *testing.T, s, k, v string) {
		got, err := parseForm(s)
		if err != nil {
			if !errors.Is(err, errkind.Invalid) {
				t.Fatalf("parseForm(%q) = %v: no kind Invalid", s, err)
			}
		} else {
			for name, vals := range got {
				for _, val := range vals {
					if !utf8.ValidString(name) || !utf8.ValidString(val) {
						t.Fatalf("parseForm(%q) gave %q=%q, not valid UTF-8", s, name, val)
					}
				}
			}
		}
		if want, werr := url.ParseQuery(s); werr == nil {
			valid := true
			for name, vals := range want {
				valid = valid && utf8.ValidString(name)
				for _, val := range vals {
					valid = valid && utf8.ValidString(val)
				}
			}
			if valid && err != nil {
				t.Fatalf("parseForm(%q) = %v; url.ParseQuery reads %v", s, err, want)
			}
			if valid && !cmp.Equal(want, got, cmpopts.EquateEmpty()) {
				t.Fatalf("parseForm(%q) = %v; url.ParseQuery reads %v", s, got, want)
			}
		}
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return
		}
		sent := url.Values{k: {v}, "properties": {"{a=1}"}}
		back, err := parseForm(sent.Encode())
		if err != nil || !cmp.Equal(sent, back) {
			t.Fatalf("parseForm(%q) = %v, %v; want %v", sent.Encode(), back, err, sent)
		}
	})
}
