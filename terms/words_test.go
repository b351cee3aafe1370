package terms

import (
	"cmp"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	gocmp "github.com/google/go-cmp/cmp"
)

// The tokenizers as first written, rune by rune (a second implementation
// of the word rules, kept as the oracle of the byte-classifying ones).

func fileTermsRef(src []byte) map[string]int {
	counts := map[string]int{}
	var word []rune
	flush := func() {
		start := 0
		for i := 1; i <= len(word); i++ {
			if i == len(word) || (unicode.IsUpper(word[i]) && !unicode.IsUpper(word[i-1])) {
				if i-start >= 3 {
					counts[strings.ToLower(string(word[start:i]))]++
				}
				start = i
			}
		}
		word = word[:0]
	}
	for len(src) > 0 {
		r, n := utf8.DecodeRune(src)
		src = src[n:]
		if r != utf8.RuneError && unicode.IsLetter(r) {
			word = append(word, r)
			continue
		}
		flush()
	}
	flush()
	if len(counts) == 0 {
		return nil
	}
	if len(counts) > MaxFileTerms {
		type tc struct {
			t string
			c int
		}
		all := make([]tc, 0, len(counts))
		for t, c := range counts {
			all = append(all, tc{t, c})
		}
		slices.SortFunc(all, func(a, b tc) int {
			if a.c != b.c {
				return cmp.Compare(b.c, a.c)
			}
			return cmp.Compare(a.t, b.t)
		})
		for _, x := range all[MaxFileTerms:] {
			delete(counts, x.t)
		}
	}
	return counts
}

func tokensRef(dst []string, text string) []string {
	start := -1
	prevUpper := false
	emit := func(lo, hi int) {
		w := text[lo:hi]
		if utf8.RuneCountInString(w) < 2 {
			return
		}
		w = strings.ToLower(w)
		if stopWords[w] {
			return
		}
		dst = append(dst, Stem(w))
	}
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		letter := r != utf8.RuneError && unicode.IsLetter(r)
		switch {
		case !letter:
			if start >= 0 {
				emit(start, i)
				start = -1
			}
		case start < 0:
			start = i
		case unicode.IsUpper(r) && !prevUpper:
			emit(start, i)
			start = i
		}
		prevUpper = letter && unicode.IsUpper(r)
		i += n
	}
	if start >= 0 {
		emit(start, len(text))
	}
	return dst
}

// randomText mixes what the byte classification must get right: ASCII
// letters of both cases, digits and punctuation, letters outside ASCII
// (upper, lower, title case, letters without case), combining marks,
// U+FFFD spelled out, and invalid UTF-8 (stray continuation bytes, a
// truncated sequence, an overlong encoding, a surrogate).
func randomText(r *rand.Rand, n int) []byte {
	pieces := []string{"a", "z", "A", "Z", "q", "Q", "_", "-", " ", "\n", "0", "9", ".", "(",
		"é", "É", "ß", "ǅ", "Ω", "ω", "ж", "Ж", "中", "ا", "\u0301", "\ufffd",
		"\x80", "\xbf", "\xc3", "\xe4\xb8", "\xc0\xaf", "\xed\xa0\x80", "\xff",
		"http", "HTTP", "Server", "retrying", "the", "cached", "boxes"}
	var b []byte
	for len(b) < n {
		b = append(b, pieces[r.IntN(len(pieces))]...)
	}
	return b
}

func TestTokenizersMatchRuneByRune(t *testing.T) {
	check := func(name string, src []byte) {
		t.Helper()
		if d := gocmp.Diff(fileTermsRef(src), FileTerms(src)); d != "" {
			t.Fatalf("FileTerms(%s) (-ref +got):\n%s", name, d)
		}
		if d := gocmp.Diff(tokensRef(nil, string(src)), Tokens(nil, string(src))); d != "" {
			t.Fatalf("Tokens(%s) (-ref +got):\n%s", name, d)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		check("random text "+string(rune('0'+i%10)), randomText(r, r.IntN(400)))
	}
	// Enough distinct terms to exercise the MaxFileTerms cut and its ties.
	check("long random text", randomText(r, 200_000))
	// Real source text: this repository's files.
	files := 0
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return fs.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, ".md") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		check(p, b)
		return nil
	})
	if err != nil || files < 50 {
		t.Fatalf("walked %d files of the repository: %v", files, err)
	}
}

// BenchmarkFileTerms: the byte-classifying FileTerms against the
// rune-by-rune one, on a Go source file of this repository.
func BenchmarkFileTerms(b *testing.B) {
	src, err := os.ReadFile("../lmdbstore/bulk.go")
	if err != nil {
		b.Fatal(err)
	}
	for _, impl := range []struct {
		name string
		fn   func([]byte) map[string]int
	}{{"bytes", FileTerms}, {"runes", fileTermsRef}} {
		b.Run(impl.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				impl.fn(src)
			}
		})
	}
}
