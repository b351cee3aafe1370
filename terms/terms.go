// Package terms is memctl's tokenizer of identifiers and prose, shared by
// ingest (the "terms" vocabulary of file payloads, SPEC.md §9.3) and the
// engines (the lexical similarity of §8.2.1 and the full-text search of
// §8.7). It is a leaf: it imports only the standard library.
//
// Both tokenizers read runs of letters (digits, punctuation and invalid
// UTF-8 separate words) and split them at lower-to-upper case changes
// (camelCase, PascalCase; snake_case and kebab-case split at the
// separators), lower-cased.
package terms

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxFileTerms is how many terms a file payload keeps (its most frequent).
const MaxFileTerms = 128

// FileTerms is the vocabulary of a source file as the engines' lexical
// similarity reads it (SPEC.md §9.3 "terms"): every run of letters in the
// text (identifiers, comments, strings alike) split at lower-to-upper case
// changes (camelCase, PascalCase; snake_case splits at the underscores,
// which are not letters), lower-cased, of 3 letters or more, counted; the
// MaxFileTerms most frequent are kept (ties: the smaller term). Nil for a
// text without such terms. Invalid UTF-8 bytes separate words.
func FileTerms(src []byte) map[string]int {
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
