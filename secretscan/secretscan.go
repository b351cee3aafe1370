// Package secretscan finds credentials in text an agent is about to store
// and replaces them with [REDACTED:<kind>] (SPEC.md §2, "Secrets").
//
// The rules are gitleaks' default rule set (github.com/zricethezav/gitleaks/v8,
// pinned in go.mod: about 200 maintained rules for cloud keys, VCS, chat and
// payment tokens, private keys, JWTs and generic high-entropy assignments),
// used as a library, plus memctl's own rules (rules.go) for what that set
// does not catch in agents' text. JSON payloads are scanned string by
// string, decoded (json.go), so a match never spans two values and an
// escape never hides a token.
//
// Invariants: a Scanner is immutable after New and safe for concurrent use
// (the gitleaks detector's Detect only reads its configuration). Redact
// never lengthens a secret's surroundings: it only replaces the matched
// secret bytes, so text without findings comes back unchanged.
package secretscan

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/rs/zerolog"
	"github.com/rs/zerolog/log"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// Finding is one redacted secret: its kind (the rule id) and byte span in
// the scanned text.
type Finding struct {
	Kind       string
	Start, End int
}

// Scanner redacts secrets. Make one with New and share it.
type Scanner struct {
	d *detect.Detector
	// keywords finds the rules' keywords in lower-cased text, as the
	// detector's own prefilter does (same keywords, same library): text
	// where it finds none makes no rule run, so it is not handed to the
	// detector, whose per-call cost (a walk over every rule and its
	// keywords) is most of a scan. nil when some rule runs without a
	// keyword or the detector decodes text (then every text is scanned).
	keywords *ahocorasick.Trie
	// blankSafe: the keywords are such that trailingPunct's copy of a
	// text holds one only if the text does (keywordsSurviveBlanking), so
	// a text without a keyword is not scanned a second time blanked.
	blankSafe bool
}

// New builds a scanner with gitleaks' default rules and memctl's own. It
// reads the rules from a private viper instance (no global state).
func New() (*Scanner, error) {
	cfg, err := loadRules()
	if err != nil {
		return nil, err
	}
	// gitleaks logs each skipped finding through zerolog's global logger, on
	// stderr; memctl's stderr is one line per failure, so it is silenced.
	log.Logger = zerolog.Nop()
	logging.Logger = zerolog.Nop()
	d := detect.NewDetector(cfg)
	sc := &Scanner{d: d}
	if prefilterExact(cfg, d) {
		kws := make([]string, 0, len(cfg.Keywords))
		for k := range cfg.Keywords {
			kws = append(kws, k)
		}
		sc.keywords = ahocorasick.NewTrieBuilder().AddStrings(kws).Build()
		sc.blankSafe = keywordsSurviveBlanking(kws)
	}
	return sc, nil
}

// loadRules is gitleaks' default rule set with memctl's own rules added
// (a rule of the same id replaces gitleaks', keeping its allowlist).
func loadRules() (config.Config, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return config.Config{}, fmt.Errorf("secretscan: gitleaks default rules: %w", err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return config.Config{}, fmt.Errorf("secretscan: gitleaks default rules: %w", err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		return config.Config{}, fmt.Errorf("secretscan: gitleaks default rules: %w", err)
	}
	for _, r := range ownRules() {
		if def, ok := cfg.Rules[r.RuleID]; ok {
			r.Allowlists = append(r.Allowlists, def.Allowlists...) // keep gitleaks' allowlist for a kind it has
		} else {
			cfg.OrderedRules = append(cfg.OrderedRules, r.RuleID)
		}
		if err := r.Validate(); err != nil {
			return config.Config{}, fmt.Errorf("secretscan: rule %s: %w", r.RuleID, err)
		}
		cfg.Rules[r.RuleID] = r
		for _, k := range r.Keywords {
			cfg.Keywords[k] = struct{}{}
		}
	}
	return cfg, nil
}

// prefilterExact reports whether the detector finds nothing in text that
// holds none of cfg's keywords: every rule with a pattern has keywords (a
// rule without, other than one matching file paths, runs on every text)
// and the detector does not decode text (a decoded segment is scanned
// again, and could hold a keyword the text does not).
func prefilterExact(cfg config.Config, d *detect.Detector) bool {
	if d.MaxDecodeDepth != 0 {
		return false
	}
	for _, r := range cfg.Rules {
		if len(r.Keywords) == 0 && r.Regex != nil {
			return false
		}
	}
	return true
}

// keywordsSurviveBlanking reports whether every keyword found in the
// lower-cased trailingPunct copy of a text is found in the lower-cased
// text too. Blanking only writes spaces, and lower-casing maps each rune
// on its own, so a keyword without a space found in the copy is in the
// text; one with a space is too when a part of it between spaces holds
// a keyword without one (gitleaks' "<add key=" holds "key").
func keywordsSurviveBlanking(kws []string) bool {
	for _, k := range kws {
		if !strings.Contains(k, " ") {
			continue
		}
		held := false
		for _, part := range strings.Split(k, " ") {
			for _, other := range kws {
				held = held || (other != "" && !strings.Contains(other, " ") && strings.Contains(part, other))
			}
		}
		if !held {
			return false
		}
	}
	return true
}

// mayHold reports whether text holds one of the rules' keywords (or the
// prefilter is off).
func (s *Scanner) mayHold(text string) bool {
	if s.keywords == nil {
		return true
	}
	var buf [256]byte // a key's or a short string's lower case, not allocated
	found := false
	s.keywords.Walk(lowerCase(buf[:0], text), func(end, n, pattern int64) bool {
		found = true
		return false
	})
	return found
}

// lowerCase is text lower-cased as the keyword prefilters match it:
// strings.ToLower's result, appended to dst when text is ASCII.
func lowerCase(dst []byte, text string) []byte {
	if lower, ok := asciiLower(dst, text); ok {
		return lower
	}
	return []byte(strings.ToLower(text))
}

// asciiLower appends text lower-cased to dst, which is strings.ToLower's
// result when text is ASCII; it reports false for other text.
func asciiLower(dst []byte, text string) ([]byte, bool) {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= utf8.RuneSelf {
			return nil, false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst, true
}

// Redact returns text with every secret replaced by [REDACTED:<kind>], and
// the findings (in text order). Overlapping findings are merged, the first
// rule's kind kept.
//
// A token followed by punctuation is still a token: most of gitleaks' rules
// end a secret only at a quote, white space, ';' or the end of the text, so
// the text is scanned a second time with trailing punctuation blanked
// (trailingPunct), and the findings of both passes are redacted. Blanking
// keeps every byte offset, so a span found in the copy is the same span of
// the text.
func (s *Scanner) Redact(text string) (string, []Finding) {
	if text == "" {
		return text, nil
	}
	hold := s.mayHold(text)
	var spans []Finding
	if hold {
		spans = s.detect(text, nil)
	}
	// A text without a keyword has none blanked either (blankSafe).
	if hold || !s.blankSafe {
		if blanked := trailingPunct(text); blanked != text {
			spans = s.find(blanked, spans)
		}
	}
	if len(spans) == 0 {
		return text, nil
	}
	// Deterministic: by start, longest first, then the specific kind
	// before a generic one (a token in a URL is a github-pat before it is
	// a connection-string password), then by kind.
	sort.Slice(spans, func(i, j int) bool {
		a, b := spans[i], spans[j]
		switch {
		case a.Start != b.Start:
			return a.Start < b.Start
		case a.End != b.End:
			return a.End > b.End
		case generic(a.Kind) != generic(b.Kind):
			return !generic(a.Kind)
		}
		return a.Kind < b.Kind
	})
	merged := spans[:1]
	for _, sp := range spans[1:] {
		last := &merged[len(merged)-1]
		if sp.Start < last.End {
			last.End = max(last.End, sp.End)
			continue
		}
		merged = append(merged, sp)
	}
	var b strings.Builder
	prev := 0
	for _, sp := range merged {
		b.WriteString(text[prev:sp.Start])
		b.WriteString("[REDACTED:" + sp.Kind + "]")
		prev = sp.End
	}
	b.WriteString(text[prev:])
	return b.String(), merged
}

// find appends the spans of every secret the rules find in text. Every
// occurrence of a secret counts, not only the one reported: the same token
// pasted twice is redacted twice.
func (s *Scanner) find(text string, spans []Finding) []Finding {
	if !s.mayHold(text) {
		return spans
	}
	return s.detect(text, spans)
}

// detect is find without the keyword prefilter.
func (s *Scanner) detect(text string, spans []Finding) []Finding {
	for _, f := range s.d.DetectString(text) {
		secret := f.Secret
		if secret == "" {
			secret = f.Match
		}
		// No kind of token ends with a period or a backslash; a rule
		// whose character class allows them inside (generic-api-key,
		// jwt) can take the period that ends a sentence or the
		// backslash of an escape after the token.
		secret = strings.TrimRight(secret, `.\`)
		if secret == "" {
			continue
		}
		for off := 0; ; {
			i := strings.Index(text[off:], secret)
			if i < 0 {
				break
			}
			spans = append(spans, Finding{Kind: f.RuleID, Start: off + i, End: off + i + len(secret)})
			off += i + len(secret)
		}
	}
	return spans
}

// trailingPunct is text with the punctuation that can follow a token in
// prose or a URL replaced by spaces: ',', ')', ']', '}', '>', '&', '!',
// '?', ';' everywhere, '.' where it ends a word (before white space,
// other punctuation or the end), and '\\' before a quote or a backslash
// (the escapes of JSON held inside a string). None of these can end a
// token of a kind the rules know; '.' inside a token (a JWT) is kept, and
// so is ':' (it is how "token: X" assigns). The result has text's length,
// byte for byte.
func trailingPunct(text string) string {
	var b []byte
	for i := 0; i < len(text); i++ {
		c := text[i]
		blank := false
		switch c {
		case ',', ')', ']', '}', '>', '&', '!', '?', ';':
			blank = true
		case '.':
			blank = i+1 == len(text) || !isTokenByte(text[i+1])
		case '\\':
			// JSON held in a string: the token is followed by \" or \\.
			blank = i+1 < len(text) && (text[i+1] == '"' || text[i+1] == '\\')
		}
		if blank {
			if b == nil {
				b = []byte(text)
			}
			b[i] = ' '
		}
	}
	if b == nil {
		return text
	}
	return string(b)
}

// generic reports whether a rule matches by context rather than by a
// token's own format.
func generic(kind string) bool {
	return kind == "generic-api-key" || kind == "connection-string-password"
}

func isTokenByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-' || c == '/' || c == '+' || c == '='
}

// Lazy is a Redactor (lmdbstore.Options.Redactor) using the process's
// shared Scanner, built when first needed, so that a process that writes
// nothing, or only text without a keyword of the rules (most one-shot
// writes: node keys, relation names, short payloads), never pays for
// compiling the rules (60-80 ms, most of a one-shot write). Until the
// Scanner is built, a text is looked up in ruleKeywords (keywords.go, the
// rules' own keywords, checked against them by TestRuleKeywords): one
// without any is returned as is, which is what the Scanner would return
// (its prefilter is exact, and a text without a keyword has none blanked
// either). Safe for concurrent use.
type Lazy struct{}

// Redact redacts text and returns how many secrets it replaced. The
// embedded rules always compile; if they did not, storing unscanned text
// would break the promise, so it panics (memctl reports an internal error).
func (Lazy) Redact(text string) (string, int) { return shared.redact(text) }

// Warm builds the shared Scanner now, so that a caller that will redact
// soon can have its rules compiled beside other work rather than at the
// first Redact. Safe for concurrent use.
func (Lazy) Warm() { _, _ = shared.scanner() }

// RedactJSON is Scanner.RedactJSON with the shared Scanner (see Redact).
func (Lazy) RedactJSON(raw string) (string, int, error) { return shared.redactJSON(raw) }

// The shared Scanner is immutable once built (like a compiled regexp at
// package level): building it once per process is a cache, not state.
var shared lazyScanner

// lazyScanner builds a Scanner on first need.
type lazyScanner struct {
	once  sync.Once
	built atomic.Pointer[Scanner]
	err   error
	// looked counts the texts looked up in ruleKeywords: past quickLookups
	// the Scanner is built anyway (its keyword trie is cheaper per text).
	looked atomic.Int64
}

// quickLookups: a process redacting more texts than this builds the
// Scanner; a quick lookup is one substring search per keyword.
const quickLookups = 256

// quickMax: a longer text builds the Scanner rather than be looked up.
const quickMax = 4096

func (l *lazyScanner) scanner() (*Scanner, error) {
	l.once.Do(func() {
		s, err := New()
		if err == nil && (s.keywords == nil || !s.blankSafe) {
			err = fmt.Errorf("secretscan: the rules' keyword prefilter is not exact; the quick lookup would miss secrets")
		}
		l.err = err
		if err == nil {
			l.built.Store(s)
		}
	})
	return l.built.Load(), l.err
}

// needed reports whether text must go to the Scanner: it is built, or
// text may hold a keyword, or the quick lookups are used up.
func (l *lazyScanner) needed(text string) bool {
	if l.built.Load() != nil || len(text) > quickMax || l.looked.Add(1) > quickLookups {
		return true
	}
	return holdsRuleKeyword(text)
}

func (l *lazyScanner) redact(text string) (string, int) {
	if text == "" || !l.needed(text) {
		return text, 0
	}
	s, err := l.scanner()
	if err != nil {
		panic(err)
	}
	out, findings := s.Redact(text)
	return out, len(findings)
}

func (l *lazyScanner) redactJSON(raw string) (string, int, error) {
	// Without an escape, every string of ASCII JSON is a substring of it:
	// none holds a keyword when the whole text holds none.
	if ascii(raw) && !strings.Contains(raw, `\`) && !l.needed(raw) {
		if !json.Valid([]byte(raw)) {
			return raw, 0, ErrNotJSON
		}
		return raw, 0, nil
	}
	s, err := l.scanner()
	if err != nil {
		panic(err)
	}
	return s.RedactJSON(raw)
}

// holdsRuleKeyword reports whether text, lower-cased as the Scanner's
// prefilter lower-cases it, holds one of ruleKeywords.
func holdsRuleKeyword(text string) bool {
	var buf [256]byte
	lower := string(lowerCase(buf[:0], text))
	for _, k := range ruleKeywords {
		if strings.Contains(lower, k) {
			return true
		}
	}
	return false
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
