package ingest

import "github.com/memctl/memctl/terms"

// MaxFileTerms is how many terms a file payload keeps (its most frequent).
const MaxFileTerms = terms.MaxFileTerms

// FileTerms is the vocabulary of a source file as the engines' lexical
// similarity reads it (SPEC.md §9.3 "terms"); the tokenizer lives in
// package terms, which the engines share.
func FileTerms(src []byte) map[string]int { return terms.FileTerms(src) }
