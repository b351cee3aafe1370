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
	"bytes"
	"cmp"
	"slices"
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
	idx := map[string]int{} // term → index into terms and counts
	var terms []string
	var counts []int
	var low []byte
	eachWord(src, func(lo, hi int, ascii bool) {
		w := src[lo:hi]
		if ascii {
			if len(w) < 3 {
				return
			}
			low = low[:0]
			for _, c := range w {
				low = append(low, c|0x20) // w holds ASCII letters only
			}
		} else {
			if utf8.RuneCount(w) < 3 {
				return
			}
			low = append(low[:0], bytes.ToLower(w)...)
		}
		if i, ok := idx[string(low)]; ok { // no allocation to look up
			counts[i]++
			return
		}
		t := string(low)
		idx[t] = len(terms)
		terms = append(terms, t)
		counts = append(counts, 1)
	})
	if len(terms) == 0 {
		return nil
	}
	keep := make([]int, 0, min(len(terms), MaxFileTerms))
	if len(terms) <= MaxFileTerms {
		for i := range terms {
			keep = append(keep, i)
		}
	} else {
		// The MaxFileTerms most frequent: every term counted more often
		// than the count at that rank, then the smallest of those that tie
		// with it.
		byCount := slices.Clone(counts)
		slices.SortFunc(byCount, func(a, b int) int { return cmp.Compare(b, a) })
		edge := byCount[MaxFileTerms-1]
		var ties []int
		for i, c := range counts {
			switch {
			case c > edge:
				keep = append(keep, i)
			case c == edge:
				ties = append(ties, i)
			}
		}
		slices.SortFunc(ties, func(a, b int) int { return cmp.Compare(terms[a], terms[b]) })
		keep = append(keep, ties[:MaxFileTerms-len(keep)]...)
	}
	out := make(map[string]int, len(keep))
	for _, i := range keep {
		out[terms[i]] = counts[i]
	}
	return out
}
