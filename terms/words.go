package terms

import (
	"unicode"
	"unicode/utf8"
)

// The words both tokenizers read: every run of letters (unicode.IsLetter;
// digits, punctuation, spaces and invalid UTF-8 end a run), split before
// an upper-case letter that follows a letter that is not upper case
// (camelCase, PascalCase; HTTPServer stays one word). ASCII, nearly all
// of source text, is classified by byte; other runes are decoded.

// eachWord calls emit with the byte range [lo, hi) of every word of text,
// in order, and whether the word is all ASCII.
func eachWord[T string | []byte](text T, emit func(lo, hi int, ascii bool)) {
	start := -1 // byte offset of the current word; -1 outside a run of letters
	ascii := true
	prevUpper := false
	for i := 0; i < len(text); {
		c := text[i]
		var letter, upper bool
		n := 1
		if c < utf8.RuneSelf {
			letter = (c|0x20)-'a' < 26
			upper = c-'A' < 26
		} else {
			var buf [utf8.UTFMax]byte
			var r rune
			r, n = utf8.DecodeRune(buf[:copy(buf[:], text[i:])])
			letter = r != utf8.RuneError && unicode.IsLetter(r)
			upper = letter && unicode.IsUpper(r)
		}
		switch {
		case !letter:
			if start >= 0 {
				emit(start, i, ascii)
				start = -1
			}
		case start < 0:
			start, ascii = i, true
		case upper && !prevUpper:
			emit(start, i, ascii)
			start, ascii = i, true
		}
		if letter && n > 1 {
			ascii = false
		}
		prevUpper = upper
		i += n
	}
	if start >= 0 {
		emit(start, len(text), ascii)
	}
}
