package bpe

// The o200k_base pre-tokenizer: text is cut into pieces before byte-pair
// merging, by this regular expression (tiktoken's, as the library compiles
// it with github.com/dlclark/regexp2, .NET semantics: \s is Go's
// unicode.IsSpace, \p{..} Go's unicode tables):
//
//	A1  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	A2 |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	A3 |\p{N}{1,3}
//	A4 | ?[^\s\p{L}\p{N}]+[\r\n/]*
//	A5 |\s*[\r\n]+          (as regexp2 runs it: see below)
//	A6 |\s+(?!\S)
//	A7 |\s+
//
// splitO200k is that expression written out by hand (a backtracking
// matcher costs far more than the merges). Every character matches some
// alternative (letters A1/A2, numbers A3, spaces A5–A7, the rest A4), so
// the pieces cover the text. The tests compare it with regexp2 running the
// expression itself, on real text and under fuzzing.

import (
	"unicode"
	"unicode/utf8"
)

// char is one decoded character and its width in bytes.
func char(s string, i int) (rune, int) {
	if i >= len(s) {
		return -1, 0
	}
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r)
}

func isNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9'
	}
	return unicode.IsNumber(r)
}

func isSpace(r rune) bool { return r >= 0 && unicode.IsSpace(r) }

// isUpperish: [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}].
func isUpperish(r rune) bool {
	if r < utf8.RuneSelf {
		return 'A' <= r && r <= 'Z'
	}
	return unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M)
}

// isLowerish: [\p{Ll}\p{Lm}\p{Lo}\p{M}].
func isLowerish(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z'
	}
	return unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M)
}

// isPrefix: [^\r\n\p{L}\p{N}].
func isPrefix(r rune) bool {
	return r >= 0 && r != '\r' && r != '\n' && !isLetter(r) && !isNumber(r)
}

// isOther: [^\s\p{L}\p{N}].
func isOther(r rune) bool { return r >= 0 && !isSpace(r) && !isLetter(r) && !isNumber(r) }

// splitO200k returns the length in bytes of the first piece of s (> 0 when
// s is not empty).
func splitO200k(s string) int {
	r0, w0 := char(s, 0)
	if r0 < 0 {
		return 0
	}
	// A1, first with the optional prefix character, then without.
	if isPrefix(r0) {
		if n := wordLower(s, w0); n > 0 {
			return n
		}
	}
	if n := wordLower(s, 0); n > 0 {
		return n
	}
	// A2 likewise.
	if isPrefix(r0) {
		if n := wordUpper(s, w0); n > 0 {
			return n
		}
	}
	if n := wordUpper(s, 0); n > 0 {
		return n
	}
	// A3.
	if isNumber(r0) {
		i := w0
		for k := 1; k < 3; k++ {
			r, w := char(s, i)
			if !isNumber(r) {
				break
			}
			i += w
		}
		return i
	}
	// A4.
	if i := punct(s, r0, w0); i > 0 {
		return i
	}
	// A5. regexp2 (so the library) matches \s*[\r\n]+ as if \s* were lazy:
	// the spaces before the first CR or LF, then that run of CRs and LFs
	// ("\n  \n" is two pieces, "\n" and "  \n"; a greedy engine, as Python
	// tiktoken's, makes it one). The counts follow the library.
	i := 0
	for i < len(s) {
		r, w := char(s, i)
		if !isSpace(r) || r == '\r' || r == '\n' {
			break
		}
		i += w
	}
	if i < len(s) && (s[i] == '\r' || s[i] == '\n') {
		for i < len(s) && (s[i] == '\r' || s[i] == '\n') {
			i++
		}
		return i
	}
	end := i
	for end < len(s) {
		r, w := char(s, end)
		if !isSpace(r) {
			break
		}
		end += w
	}
	// A6: the run but its last character, when something follows it and
	// that leaves at least one; A7: the whole run.
	if end < len(s) {
		if _, w := utf8.DecodeLastRuneInString(s[:end]); end-w > 0 {
			return end - w
		}
	}
	if end > 0 {
		return end
	}
	return w0 // unreachable for valid text: every character matches above
}

// wordLower matches A1 from byte i (after the optional prefix, which ends at
// i): U* then Lw+ with backtracking, then an optional contraction. It
// returns the end of the match, or 0.
func wordLower(s string, i int) int {
	// u: end of the maximal U run; lastLw: end of the last Lw character in it.
	u, lastLw := i, -1
	for {
		r, w := char(s, u)
		if !isUpperish(r) {
			break
		}
		u += w
		if isLowerish(r) {
			lastLw = u
		}
	}
	end := -1
	if r, _ := char(s, u); isLowerish(r) {
		end = u
		for {
			r, w := char(s, end)
			if !isLowerish(r) {
				break
			}
			end += w
		}
	} else if lastLw > 0 {
		// U* gives back characters until Lw+ can start: at the last Lw
		// character of the run, which then matches alone.
		end = lastLw
	}
	if end < 0 {
		return 0
	}
	return end + contraction(s, end)
}

// wordUpper matches A2 from byte i: U+ then Lw* then an optional
// contraction; 0 when s[i] is not in U.
func wordUpper(s string, i int) int {
	end := i
	for {
		r, w := char(s, end)
		if !isUpperish(r) {
			break
		}
		end += w
	}
	if end == i {
		return 0
	}
	for {
		r, w := char(s, end)
		if !isLowerish(r) {
			break
		}
		end += w
	}
	return end + contraction(s, end)
}

// contraction is the length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at s[i:], or 0.
// Case folding follows regexp2: 's' also matches U+017F (ſ).
func contraction(s string, i int) int {
	if i >= len(s) || s[i] != '\'' {
		return 0
	}
	r1, w1 := char(s, i+1)
	r2, w2 := char(s, i+1+w1)
	switch {
	case r1 == 's' || r1 == 'S' || r1 == 'ſ', r1 == 't' || r1 == 'T', r1 == 'm' || r1 == 'M', r1 == 'd' || r1 == 'D':
		return 1 + w1
	case (r1 == 'r' || r1 == 'R' || r1 == 'v' || r1 == 'V') && (r2 == 'e' || r2 == 'E'):
		return 1 + w1 + w2
	case (r1 == 'l' || r1 == 'L') && (r2 == 'l' || r2 == 'L'):
		return 1 + w1 + w2
	}
	return 0
}

// punct matches A4 (` ?[^\s\p{L}\p{N}]+[\r\n/]*`) at the start of s, or 0.
func punct(s string, r0 rune, w0 int) int {
	i := 0
	if r0 == ' ' {
		if r, _ := char(s, w0); isOther(r) {
			i = w0
		}
	}
	if r, _ := char(s, i); !isOther(r) {
		return 0
	}
	for {
		r, w := char(s, i)
		if !isOther(r) {
			break
		}
		i += w
	}
	for i < len(s) && (s[i] == '\r' || s[i] == '\n' || s[i] == '/') {
		i++
	}
	return i
}
