// Package xmlcharset is what pervasim's XML files (iCasa's scripts,
// Cilia's chain files) need of character sets, read and written.
//
// Reading: besides UTF-8, the single-byte encodings that files written by
// Java tools often declare (ISO-8859-1, Windows-1252, US-ASCII). ToUTF8
// converts a document's bytes up front (so that byte offsets, and the
// lines counted from them, are those of the text the decoder reads), and
// Converted is the Decoder.CharsetReader that lets encoding/xml read the
// converted bytes despite their declaration.
//
// Writing: the characters XML 1.0 can carry (Char, Text), and JSON text
// that an attribute can carry whatever the value holds (JSON).
package xmlcharset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Char reports whether XML 1.0 can carry r, as text or as a character
// reference: not a control character but tab, line feed and carriage
// return, nor U+FFFE or U+FFFF.
func Char(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' ||
		r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

// Text reports whether s is valid UTF-8 made of characters XML can carry.
func Text(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !Char(r) {
			return false
		}
	}
	return true
}

// JSON encodes v as JSON (without escaping HTML's characters) that XML can
// carry: JSON escapes control characters itself, and the characters XML
// cannot carry that are left (U+FFFE, U+FFFF) are escaped as \uXXXX too.
// Invalid UTF-8 in a string becomes U+FFFD, as encoding/json makes it.
func JSON(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	out := string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	if Text(out) {
		return out, nil
	}
	var e strings.Builder
	for _, r := range out {
		if Char(r) {
			e.WriteRune(r)
		} else {
			fmt.Fprintf(&e, `\u%04x`, r)
		}
	}
	return e.String(), nil
}

// declaration finds the encoding of an XML declaration.
var declaration = regexp.MustCompile(`^<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']`)

// ToUTF8 returns data as UTF-8, without the byte order mark an XML
// document may start with (Go's decoder takes it for text before the root):
// unchanged when its XML declaration names UTF-8 or no encoding, converted
// when it names one of the single-byte encodings this package knows.
// Another encoding is an error naming it.
func ToUTF8(data []byte) ([]byte, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	m := declaration.FindSubmatch(data)
	if m == nil {
		return data, nil
	}
	label := string(m[1])
	if isUTF8(label) {
		return data, nil
	}
	table, err := tableOf(label)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(data) + len(data)/8)
	for _, c := range data {
		if r := table[c]; r < utf8.RuneSelf {
			b.WriteByte(byte(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.Bytes(), nil
}

// Converted is a Decoder.CharsetReader for documents ToUTF8 converted: it
// reads input as it is for the encodings ToUTF8 converts.
func Converted(label string, input io.Reader) (io.Reader, error) {
	if _, err := tableOf(label); err != nil {
		return nil, err
	}
	return input, nil
}

func isUTF8(label string) bool {
	l := strings.ToLower(label)
	return l == "utf-8" || l == "utf8"
}

// tableOf returns the table of a single-byte encoding.
func tableOf(label string) (*[256]rune, error) {
	switch strings.ToLower(label) {
	case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "cp819", "ibm819",
		"us-ascii", "ascii", "iso646-us": // ASCII is ISO-8859-1's first half
		return &latin1, nil
	case "windows-1252", "cp1252", "x-cp1252":
		return &windows1252, nil
	}
	return nil, fmt.Errorf("encoding %q: want UTF-8, ISO-8859-1, Windows-1252 or US-ASCII", label)
}

// latin1 maps each byte to the code point of the same number.
var latin1 = func() (t [256]rune) {
	for i := range t {
		t[i] = rune(i)
	}
	return t
}()

// windows1252 is latin1 but for 0x80-0x9F, which hold punctuation and
// letters there (the five bytes Windows-1252 leaves undefined keep their
// ISO-8859-1 control characters).
var windows1252 = func() (t [256]rune) {
	t = latin1
	for i, c := range []rune{
		0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
		0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
	} {
		t[0x80+i] = c
	}
	return t
}()
