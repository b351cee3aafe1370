package bpe

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	"github.com/tiktoken-go/tokenizer"
)

// o200kPattern is the library's o200k_base split expression, verbatim.
const o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

var (
	refOnce sync.Once
	refEnc  tokenizer.Codec
	refRe   *regexp2.Regexp
)

// reference is the library this package's table comes from, and the split
// expression run by a regular-expression engine: the independent
// expectations every test compares with.
func reference(t testing.TB) (tokenizer.Codec, *regexp2.Regexp) {
	refOnce.Do(func() {
		var err error
		if refEnc, err = tokenizer.Get(tokenizer.O200kBase); err != nil {
			t.Fatal(err)
		}
		refRe = regexp2.MustCompile(o200kPattern, regexp2.None)
	})
	return refEnc, refRe
}

// refPieces splits s with the regular expression.
func refPieces(t testing.TB, s string) []string {
	_, re := reference(t)
	var out []string
	m, err := re.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func pieces(s string) []string {
	var out []string
	for s != "" {
		n := splitO200k(s)
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// libraryDropsDEL: regexp2 leaves U+007F (DEL) out of every class of the
// expression, so the library skips it (no token at all); tiktoken, and this
// package, count it like any other control character. Texts with DEL are
// compared with the reference only through TestDEL.
func libraryDropsDEL(s string) bool { return strings.ContainsRune(s, 0x7f) }

func checkText(t *testing.T, name, s string) {
	t.Helper()
	if libraryDropsDEL(s) {
		return
	}
	ref, _ := reference(t)
	got, want := pieces(s), refPieces(t, s)
	if strings.Join(want, "") != s {
		t.Fatalf("%s: the reference pieces do not cover the text", name)
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i] != want[i] {
			t.Fatalf("%s: piece %d = %q, want %q (context %q)", name, i, got[i], want[i], strings.Join(want[max(0, i-2):min(len(want), i+3)], "|"))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d pieces, want %d", name, len(got), len(want))
	}
	wantIDs, _, err := ref.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	gotIDs := O200kBase().Encode(s)
	if len(gotIDs) != len(wantIDs) {
		t.Fatalf("%s: %d tokens, want %d", name, len(gotIDs), len(wantIDs))
	}
	for i := range gotIDs {
		if uint(gotIDs[i]) != wantIDs[i] {
			t.Fatalf("%s: token %d = %d, want %d", name, i, gotIDs[i], wantIDs[i])
		}
	}
	if n := O200kBase().Count(s); n != len(wantIDs) {
		t.Fatalf("%s: Count = %d, want %d", name, n, len(wantIDs))
	}
}

// TestTableMatchesLibrary: every token of the embedded table has the bytes
// the library decodes its id to, and looking those bytes up gives the id.
func TestTableMatchesLibrary(t *testing.T) {
	ref, _ := reference(t)
	e := O200kBase()
	if e.Size() != 199998 {
		t.Fatalf("vocabulary size %d, want 199998 (o200k_base without special tokens)", e.Size())
	}
	for id := 0; id < e.Size(); id++ {
		want, err := ref.Decode([]uint{uint(id)})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Token(id); got != want {
			t.Fatalf("token %d = %q, want %q", id, got, want)
		}
		if r, ok := e.t.rank(want); !ok || int(r) != id {
			t.Fatalf("rank(%q) = %d, %v, want %d", want, r, ok, id)
		}
	}
	if _, ok := e.t.rank("\x00\x01definitely not a token\x02"); ok {
		t.Fatal("a string that is no token was found")
	}
}

// TestRepositoryText: every Go and Markdown file of the repository splits
// and encodes exactly as the reference does.
func TestRepositoryText(t *testing.T) {
	n := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != ".." || d.Name() == "bench") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, ".md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil || !utf8.Valid(b) {
			return err
		}
		checkText(t, path, string(b))
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("only %d files checked", n)
	}
}

// alphabet mixes every character class the expression distinguishes.
var alphabet = []string{
	"a", "z", "A", "Z", "é", "É", "ß", "ſ", "中", "文", "ǅ", "ʰ", "\u0301", "\u0903", "ا", "ж", "Ж", "Ω",
	"0", "9", "٣", "Ⅷ", "²", "½",
	" ", " ", " ", "\t", "\n", "\r", "\r\n", "\v", "\f", "\u00a0", "\u2028", "\u3000", "\u0085",
	"'", "'s", "'S", "'t", "'re", "'RE", "'ve", "'m", "'ll", "'LL", "'d", "'ſ",
	".", ",", "/", "//", "-", "_", "(", ")", "{", "}", "`", "\"", "#", "*", "→", "😀", "€",
	"the", "The", "HTTP", "Server", "func", " net/http/server.go", "rev 12", "12345678",
}

func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

func TestRandomText(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		checkText(t, "random", randomText(r, 1+r.IntN(40)))
		_ = i
	}
}

func TestEdgeCases(t *testing.T) {
	for _, s := range []string{
		"", " ", "  ", "\n", " \n ", "a", "'s", "don't", "DON'T", "I'LL", "x'ſ", "  hello", "\t\tfoo",
		"\u0301", "a\u0301", "\u0301a", "ʰA", "Aʰ", "ǅx", "AB'sC", "123456", " 1", "a1", "...\n\n/", "x  \n\n  y",
		strings.Repeat("=", 500), strings.Repeat("ab", 300), strings.Repeat(" ", 100) + "x",
		strings.Repeat("xyzzy", 2000), "Q" + strings.Repeat("aQ0", 90), strings.Repeat("中文", 100),
	} {
		checkText(t, "edge", s)
	}
}

// TestEveryCharacter: each character, alone and between letters and
// spaces, splits and encodes as the reference does.
func TestEveryCharacter(t *testing.T) {
	// Every 13th character by default (a few seconds); all of them (about
	// 40 s) with MEMCTL_BPE_ALL=1.
	step := rune(13)
	if os.Getenv("MEMCTL_BPE_ALL") == "1" {
		step = 1
	}
	for r := rune(0); r <= unicode.MaxRune; r += step {
		if r == 0x7f || !utf8.ValidRune(r) {
			continue
		}
		c := string(r)
		checkText(t, "char", "x"+c+" "+c+"'s"+c+c+"\n"+c)
	}
}

func TestDEL(t *testing.T) {
	e := O200kBase()
	// DEL is a byte token of its own, and a piece (A4) between letters.
	if got := e.Encode("a\x7fb"); len(got) != 3 || e.Token(got[1]) != "\x7f" {
		t.Fatalf("a DEL b encodes to %v", got)
	}
	if got := pieces(" \x7f\x7f/\n"); len(got) != 1 {
		t.Fatalf("pieces %q, want one (A4)", got)
	}
}

// TestLongPieces: pieces past longPiece (merged through the heap) encode
// as the reference does, and as the scan does.
func TestLongPieces(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	letters := "abcdefghijklmnopqrstuvwxyzéßABC"
	for range 200 {
		var b strings.Builder
		for range longPiece + r.IntN(400) {
			b.WriteByte(letters[r.IntN(26)])
		}
		s := b.String()
		checkText(t, "long", s)
		e := O200kBase()
		var scan []uint32
		sc := new(scratch)
		e.mergeScanForTest(s, sc, func(id uint32) { scan = append(scan, id) })
		got := e.Encode(s)
		if len(scan) != len(got) {
			t.Fatalf("scan %d tokens, heap %d", len(scan), len(got))
		}
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{"hello world", "don't", " \n x", "AḂc'LL", "12345", "a\u0301b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		checkText(t, "fuzz", s)
	})
}

// BenchmarkCount counts a 8 KB Markdown-like text (the size of a 2,000-token
// context pack).
func BenchmarkCount(b *testing.B) {
	raw, err := os.ReadFile("../SPEC.md")
	if err != nil {
		b.Fatal(err)
	}
	s := string(raw[:8192])
	e := O200kBase()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		e.Count(s)
	}
}

// BenchmarkReference is the library on the same text (its vocabulary
// already built): the baseline for BenchmarkCount.
func BenchmarkReference(b *testing.B) {
	raw, err := os.ReadFile("../SPEC.md")
	if err != nil {
		b.Fatal(err)
	}
	s := string(raw[:8192])
	ref, _ := reference(b)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if _, err := ref.Count(s); err != nil {
			b.Fatal(err)
		}
	}
}

// mergeScanForTest runs the quadratic scan whatever the length.
func (e *Encoding) mergeScanForTest(piece string, sc *scratch, yield func(uint32)) {
	if _, ok := e.t.rank(piece); ok {
		id, _ := e.t.rank(piece)
		yield(id)
		return
	}
	e.mergeScan(piece, sc, yield)
}

// TestCountUpTo: for random texts and every limit around the count, the
// reference library's count when it is at most the limit, and more than
// the limit otherwise, never more than the count (it stops, it does not
// guess).
func TestCountUpTo(t *testing.T) {
	ref, _ := reference(t)
	e := O200kBase()
	r := rand.New(rand.NewPCG(3, 4))
	over := 0
	for range 500 {
		s := randomText(r, 1+r.IntN(60))
		if libraryDropsDEL(s) {
			continue
		}
		ids, _, err := ref.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		want := len(ids)
		for limit := 0; limit <= want+2; limit++ {
			got := e.CountUpTo(s, limit)
			switch {
			case want <= limit && got != want:
				t.Fatalf("CountUpTo(%q, %d) = %d, want the count %d", s, limit, got, want)
			case want > limit && (got <= limit || got > want):
				t.Fatalf("CountUpTo(%q, %d) = %d, want in (%d, %d]", s, limit, got, limit, want)
			case want > limit && got < want:
				over++ // stopped early
			}
		}
	}
	if over == 0 {
		t.Error("CountUpTo never stopped before the end of a text")
	}
}

// TestSeparate: whenever Separate(a, b) holds, the reference library
// counts a+b as a and b apart; and it refuses the pairs where the rule does
// not hold (a text ending in white space, a b that does not begin with a
// space), some of which the library does count otherwise.
func TestSeparate(t *testing.T) {
	ref, _ := reference(t)
	count := func(s string) int {
		ids, _, err := ref.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		return len(ids)
	}
	e := O200kBase()
	r := rand.New(rand.NewPCG(5, 6))
	held, refusedDiffers := 0, 0
	heads := []string{"- sym:net/http.(*Server).Serve", "- file:a/b.go · a/b.go:12-30", "x)", "héllo", "中文", "1234", "a'", "--", ".",
		"- rev 3 · run r\n", "x)\n", "a \n", "\n\n", "·\r\n", "\n"}
	tails := []string{" · 0.0123 · rev 1\n", " · rev 12 · run r1 · task t\n", " 's", " /x", "  \n", " ", "\n/x", "/x", "'s", "x",
		"- sym:x\n", "## Related\n", "\n## Related\n", "-", "'s", "\u00a0x", "/x\n"}
	for range 4000 {
		a := randomText(r, r.IntN(12))
		b := randomText(r, r.IntN(12))
		switch r.IntN(3) {
		case 0:
			a += heads[r.IntN(len(heads))]
		case 1:
			b = tails[r.IntN(len(tails))] + b
		}
		if libraryDropsDEL(a + b) {
			continue
		}
		sum, whole := count(a)+count(b), count(a+b)
		if e.Separate(a, b) {
			held++
			if sum != whole {
				t.Fatalf("Separate(%q, %q) but the library counts %d for the whole, %d apart", a, b, whole, sum)
			}
		} else if sum != whole {
			refusedDiffers++
		}
	}
	if held < 500 || refusedDiffers == 0 {
		t.Errorf("%d pairs held, %d refused that count otherwise: the test does not tell", held, refusedDiffers)
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"- key", " · 1", true}, {"x)", " /y", true}, {"x ", " y", false}, {"x", "\ny", false},
		{"x\n", " y", false}, {"x", "/y", false}, {"", " y", false}, {"x", "", false}, {"x\xff", " y", false},
		{"x\n", "- y", true}, {"x)\n", "#", true}, {"x\n", "/y", false}, {"x\n", "\ny", false}, {"x\n", "\ty", false},
		{"x\n", "\xffy", false}, {"x\r", "- y", false},
	} {
		if got := e.Separate(c.a, c.b); got != c.want {
			t.Errorf("Separate(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
