package terms

import (
	"strings"
	"unicode/utf8"
)

// Tokens appends the search tokens of text to dst and returns it: every
// run of letters split at lower-to-upper case changes (the words of
// FileTerms), lower-cased, of 2 letters or more, stop words left out, each
// reduced by Stem. Order and repetitions are kept (BM25 counts them).
// The full-text index (SPEC.md §8.7) indexes documents and reads queries
// with it, so a query word and a document word meet exactly when their
// tokens are equal.
func Tokens(dst []string, text string) []string {
	eachWord(text, func(lo, hi int, ascii bool) {
		w := text[lo:hi]
		if len(w) < 2 || !ascii && utf8.RuneCountInString(w) < 2 {
			return
		}
		w = strings.ToLower(w)
		if stopWords[w] {
			return
		}
		dst = append(dst, Stem(w))
	})
	return dst
}

// Stem removes the commonest English inflections from a lower-cased
// word, so that "retries", "retrying" and "retried" all read "retry": a
// few suffix rules (plural -s/-xes/-ies, -ing, -ed, -ied), applied once,
// only when at least three letters remain. It is deliberately small: it
// never merges words that differ in more than an inflection.
func Stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"), n > 4 && strings.HasSuffix(w, "ied"):
		return w[:n-3] + "y"
	case n > 5 && strings.HasSuffix(w, "sses"):
		return w[:n-2]
	case n > 5 && strings.HasSuffix(w, "ing"):
		return undouble(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		return undouble(w[:n-2])
	case n > 4 && strings.HasSuffix(w, "xes"):
		return w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:n-1]
	}
	return w
}

// undouble turns a doubled final consonant back into one ("stopp" of
// "stopping" → "stop"), the spelling rule of -ing and -ed.
func undouble(w string) string {
	n := len(w)
	if n >= 4 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouls", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// stopWords are function words of questions and prose that carry no topic
// ("what did we decide about retries" searches for decide and retry).
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or but not no of to in on at by for from with into
		onto over under about as is are was were be been being am do does did done doing have has had
		having it its this that these those there here what which who whom whose when where why how
		we us our ours you your i me my he she they them their his her so if then than too very can
		could should would will shall may might must just also any all some each every other such
		own same only both either neither more most less least again once`) {
		stopWords[w] = true
	}
}
