package xmlcharset_test

import (
	"bytes"
	"encoding/xml"
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
