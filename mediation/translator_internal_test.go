package mediation

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// translateByScan is the definition the translator must agree with: at
// each place, from the left, the longest key that s holds there and that
// is not glued to a word (a key beginning with a word rune does not follow
// one, a key ending with one is not followed by one) and does not end
// inside a rune of s is replaced; where none is, one rune (or one byte
// that is not UTF-8) is kept. A word key is so replaced where it stands as
// a whole word, as the translator always did.
func translateByScan(dict map[string]string, s string) string {
	runeEnds := map[int]bool{len(s): true}
	for i := 0; i < len(s); {
		_, n := utf8.DecodeRuneInString(s[i:])
		runeEnds[i] = true
		i += n
	}
	var b strings.Builder
	prevWord := false
	for i := 0; i < len(s); {
		best := ""
		for k := range dict {
			if k == "" || len(k) <= len(best) || !strings.HasPrefix(s[i:], k) || !runeEnds[i+len(k)] {
				continue
			}
			first, _ := utf8.DecodeRuneInString(k)
			last, _ := utf8.DecodeLastRuneInString(k)
			next, n := utf8.DecodeRuneInString(s[i+len(k):])
			if prevWord && isWordRune(first) || n > 0 && isWordRune(last) && isWordRune(next) {
				continue
			}
			best = k
		}
		if best != "" {
			b.WriteString(dict[best])
			i += len(best)
			r, _ := utf8.DecodeLastRuneInString(best)
			prevWord = isWordRune(r)
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteString(s[i : i+n])
		i += n
		prevWord = isWordRune(r)
	}
	return b.String()
}

// translatorPieces are what the random keys and contents are made of:
// words, separators, letters of two and three bytes, a byte that is no
// UTF-8 anywhere and a first byte of a two-byte letter alone.
var translatorPieces = []string{"a", "b", "ab", "-", " ", "_", "1", "é", "日", "é-", "\xff", "\xc3", "\xa9", ".", "->"}

func randomPieces(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(translatorPieces[r.IntN(len(translatorPieces))])
	}
	return b.String()
}

// TestTranslatorAgreesWithScan compares the translator with
// translateByScan on random dictionaries of words and phrases (keys of
// several words, beginning or ending with separators, with letters of
// several bytes, with bytes that are not UTF-8) and random contents.
func TestTranslatorAgreesWithScan(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for round := range 20_000 {
		dict := map[string]any{}
		for i := range r.IntN(8) {
			dict[randomPieces(r, 1+r.IntN(4))] = "<" + strconv.Itoa(i) + ">"
		}
		impl, err := newTranslator(map[string]any{"dictionary": dict}, Env{})
		if err != nil {
			t.Fatal(err)
		}
		ref := map[string]string{}
		for k, v := range dict {
			ref[k] = v.(string)
		}
		s := randomPieces(r, r.IntN(16))
		if got, want := impl.(*translator).translate(s), translateByScan(ref, s); got != want {
			t.Fatalf("round %d: dictionary %q: translate(%q) = %q, want %q", round, ref, s, got, want)
		}
	}
}

// FuzzTranslator is TestTranslatorAgreesWithScan for go test -fuzz: the
// dictionary is made of the keys that sep separates in keys.
func FuzzTranslator(f *testing.F) {
	f.Add("CLIENT-ID|good morning|good|->|a-b|a-b-c|-z", "|", "<CLIENT-ID>7</CLIENT-ID> CLIENT-IDS good morning a->b a-b-cd q-z")
	f.Add("é-x|\xffa|a\xff|日 本", "|", "é-x \xffa a\xffb 日 本日")
	f.Fuzz(func(t *testing.T, keys, sep, s string) {
		if sep == "" {
			return
		}
		dict, ref := map[string]any{}, map[string]string{}
		for i, k := range strings.Split(keys, sep) {
			dict[k], ref[k] = "<"+strconv.Itoa(i)+">", "<"+strconv.Itoa(i)+">"
		}
		impl, err := newTranslator(map[string]any{"dictionary": dict}, Env{})
		if err != nil {
			t.Skip(err)
		}
		if got, want := impl.(*translator).translate(s), translateByScan(ref, s); got != want {
			t.Fatalf("dictionary %q: translate(%q) = %q, want %q", ref, s, got, want)
		}
	})
}

// bigPhraseDictionary returns a translator of 50,000 phrases that begin
// alike ("CLIENT-ID-<n>") and 300 kB of content that holds none of them
// whole but begins one wherever it can.
func bigPhraseDictionary(tb testing.TB) (*translator, string) {
	tb.Helper()
	dict := map[string]any{}
	for i := range 50_000 {
		dict["CLIENT-ID-"+strconv.Itoa(i)] = "c" + strconv.Itoa(i)
	}
	impl, err := newTranslator(map[string]any{"dictionary": dict}, Env{})
	if err != nil {
		tb.Fatal(err)
	}
	return impl.(*translator), strings.Repeat("CLIENT-ID-x ", 300_000/12) + "CLIENT-ID-49999"
}

// TestTranslatorBigDictionaryOfPhrases: a dictionary of many phrases that
// begin alike still replaces the one the content holds, and nothing else
// (its cost, which looking for them one after the other made seconds, is
// BenchmarkTranslatorBigDictionaryOfPhrases's).
func TestTranslatorBigDictionaryOfPhrases(t *testing.T) {
	tr, s := bigPhraseDictionary(t)
	want := strings.Repeat("CLIENT-ID-x ", 300_000/12) + "c49999"
	if got := tr.translate(s); got != want {
		t.Fatalf("translate: %d bytes, want %d (only the last phrase replaced)", len(got), len(want))
	}
}

// BenchmarkTranslatorBigDictionaryOfPhrases: 300 kB through 50,000
// phrases beginning alike, each place looked up among sorted keys (some
// 50 ms; looked for one after the other, 6.5 s).
func BenchmarkTranslatorBigDictionaryOfPhrases(b *testing.B) {
	tr, s := bigPhraseDictionary(b)
	b.ReportAllocs()
	for b.Loop() {
		tr.translate(s)
	}
}
