package xmlcharset_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"reflect"
	"strings"
	"testing"

	"github.com/pervasim/pervasim/internal/xmlcharset"
)

func TestToUTF8(t *testing.T) {
	decl := func(enc string) string { return `<?xml version="1.0" encoding="` + enc + `"?>` }
	for _, tt := range []struct {
		in, want string
	}{
		{decl("ISO-8859-1") + "caf\xe9 \xc0 \xff", decl("ISO-8859-1") + "café À ÿ"},
		{decl("latin1") + "\xe9t\xe9", decl("latin1") + "été"},
		{"<?xml version='1.0' encoding='US-ASCII' ?>plain", "<?xml version='1.0' encoding='US-ASCII' ?>plain"},
		{decl("windows-1252") + "\x80 \x93quoted\x94 \x9c", decl("windows-1252") + "€ “quoted” œ"},
		{decl("UTF-8") + "déjà", decl("UTF-8") + "déjà"},
		{"<behavior>déjà</behavior>", "<behavior>déjà</behavior>"},
		{"\xef\xbb\xbf" + decl("UTF-8") + "<a/>", decl("UTF-8") + "<a/>"}, // a byte order mark goes
		{"\xef\xbb\xbf<a>\xef\xbb\xbf</a>", "<a>\ufeff</a>"},              // only the first
	} {
		got, err := xmlcharset.ToUTF8([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("ToUTF8(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := xmlcharset.ToUTF8([]byte(decl("EBCDIC") + "x")); err == nil || !strings.Contains(err.Error(), "EBCDIC") {
		t.Errorf("an unknown encoding: %v, want an error naming it", err)
	}
}

// TestDecoder: a document declaring ISO-8859-1 reads as its text.
func TestDecoder(t *testing.T) {
	data, err := xmlcharset.ToUTF8([]byte("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><zone name=\"s\xe9jour\"/>"))
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = xmlcharset.Converted
	var z struct {
		Name string `xml:"name,attr"`
	}
	if err := d.Decode(&z); err != nil || z.Name != "séjour" {
		t.Errorf("Decode = %q, %v; want séjour", z.Name, err)
	}
}

// TestText: what XML 1.0 carries, and JSON of any value that it carries.
func TestText(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"plain <&>\"'", true}, {"tab\tline\nreturn\r", true}, {"é😀", true},
		{"bell\x07", false}, {"nul\x00", false}, {"\uFFFE", false}, {"\uFFFF", false}, {"bad \xff", false},
	} {
		if got := xmlcharset.Text(tt.s); got != tt.want {
			t.Errorf("Text(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
	for _, v := range []any{"a\x01b", "x\uFFFEy\uFFFF", map[string]any{"k\x02": []any{"<&>", 1.5, nil}}} {
		out, err := xmlcharset.JSON(v)
		if err != nil || !xmlcharset.Text(out) {
			t.Errorf("JSON(%q) = %q, %v; want text XML carries", v, out, err)
			continue
		}
		var back any
		if err := json.Unmarshal([]byte(out), &back); err != nil || !reflect.DeepEqual(back, v) {
			t.Errorf("JSON(%q) = %q reads back as %q, %v", v, out, back, err)
		}
	}
}
