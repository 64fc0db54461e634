package httpapi

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorTablesDocumented checks that every status and code the handler
// answers an error with (errorClasses, and internal 500 for the rest) is
// a row of the README's table of errors and is in the package doc's list,
// so that neither leaves a code out.
func TestErrorTablesDocumented(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	pkgDoc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(strings.ReplaceAll(string(pkgDoc), "//", "")), " ")
	classes := append(append([]errorClass(nil), errorClasses...), errorClass{nil, http.StatusInternalServerError, "internal"})
	for _, c := range classes {
		row := fmt.Sprintf("| %d | `%s` |", c.status, c.code)
		if !strings.Contains(string(readme), row) {
			t.Errorf("README.md's table of errors has no row %q", row)
		}
		if item := fmt.Sprintf("%s %d", c.code, c.status); !strings.Contains(doc, item) {
			t.Errorf("the package doc (doc.go) does not list %q", item)
		}
	}
}
