// Package secretscan finds credentials in text an agent is about to store
// and replaces them with [REDACTED:<kind>] (SPEC.md §2, "Secrets").
//
// The rules are gitleaks' default rule set (github.com/zricethezav/gitleaks/v8,
// pinned in go.mod: about 200 maintained rules for cloud keys, VCS, chat and
// payment tokens, private keys, JWTs and generic high-entropy assignments),
// used as a library, plus one rule of memctl's own for what that set does
// not cover: passwords inside connection strings (scheme://user:password@).
//
// Invariants: a Scanner is immutable after New and safe for concurrent use
// (the gitleaks detector's Detect only reads its configuration). Redact
// never lengthens a secret's surroundings: it only replaces the matched
// secret bytes, so text without findings comes back unchanged.
package secretscan

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/log"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
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
}

// gcpKeyAnywhereRule: gitleaks' gcp-api-key rule wants the key followed by a
// quote, space or line end; in a URL query (key=AIza...&q=) it is followed
// by '&'. Google API keys have a fixed prefix and length, so the key alone
// is distinctive enough.
var gcpKeyAnywhereRule = config.Rule{
	RuleID:      "gcp-api-key",
	Description: "Google Cloud API key, anywhere (also inside URLs)",
	Regex:       regexp.MustCompile(`\b(AIza[0-9A-Za-z_\-]{35})(?:[^0-9A-Za-z_\-]|$)`),
	SecretGroup: 1,
	Keywords:    []string{"aiza"},
}

// connStringRule: scheme://user:password@host — the password is the secret.
// Placeholders (<password>, ${VAR}, $VAR, ***, "password") are not secrets.
var connStringRule = config.Rule{
	RuleID:      "connection-string-password",
	Description: "Password in a connection string (scheme://user:password@host)",
	Regex:       regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/@'"]{1,64}:([^\s@/'"<>{}$*]{4,128})@[a-z0-9.\-\[\]]+`),
	SecretGroup: 1,
	Keywords:    []string{"://"},
}

// New builds a scanner with gitleaks' default rules and memctl's own. It
// reads the rules from a private viper instance (no global state).
func New() (*Scanner, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return nil, fmt.Errorf("secretscan: gitleaks default rules: %w", err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, fmt.Errorf("secretscan: gitleaks default rules: %w", err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, fmt.Errorf("secretscan: gitleaks default rules: %w", err)
	}
	cfg.Rules[connStringRule.RuleID] = connStringRule
	cfg.OrderedRules = append(cfg.OrderedRules, connStringRule.RuleID)
	gcp := gcpKeyAnywhereRule
	if def, ok := cfg.Rules[gcp.RuleID]; ok {
		gcp.Allowlists = def.Allowlists // keep gitleaks' allowlist for the kind
	}
	cfg.Rules[gcp.RuleID] = gcp
	for _, r := range []config.Rule{connStringRule, gcp} {
		for _, k := range r.Keywords {
			cfg.Keywords[k] = struct{}{}
		}
	}
	// gitleaks logs each skipped finding through zerolog's global logger, on
	// stderr; memctl's stderr is one line per failure, so it is silenced.
	log.Logger = zerolog.Nop()
	d := detect.NewDetector(cfg)
	return &Scanner{d: d}, nil
}

// Redact returns text with every secret replaced by [REDACTED:<kind>], and
// the findings (in text order). Overlapping findings are merged, the first
// rule's kind kept.
func (s *Scanner) Redact(text string) (string, []Finding) {
	if text == "" {
		return text, nil
	}
	var spans []Finding
	for _, f := range s.d.DetectString(text) {
		secret := f.Secret
		if secret == "" {
			secret = f.Match
		}
		if secret == "" {
			continue
		}
		// Every occurrence of the secret, not only the one reported: the
		// same token pasted twice is redacted twice.
		for off := 0; ; {
			i := strings.Index(text[off:], secret)
			if i < 0 {
				break
			}
			spans = append(spans, Finding{Kind: f.RuleID, Start: off + i, End: off + i + len(secret)})
			off += i + len(secret)
		}
	}
	if len(spans) == 0 {
		return text, nil
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].Start != spans[j].Start {
			return spans[i].Start < spans[j].Start
		}
		return spans[i].End > spans[j].End
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

// Lazy is a Redactor (lmdbstore.Options.Redactor) using the process's
// shared Scanner, built on first use, so processes that write nothing do not
// pay for compiling the rules (about 25 ms). Safe for concurrent use.
type Lazy struct{}

// Redact redacts text and returns how many secrets it replaced. The
// embedded rules always compile; if they did not, storing unscanned text
// would break the promise, so it panics (memctl reports an internal error).
func (Lazy) Redact(text string) (string, int) {
	s, err := shared()
	if err != nil {
		panic(err)
	}
	out, findings := s.Redact(text)
	return out, len(findings)
}

// The shared Scanner is immutable once built (like a compiled regexp at
// package level): building it once per process is a cache, not state.
var (
	sharedOnce    sync.Once
	sharedScanner *Scanner
	sharedErr     error
)

func shared() (*Scanner, error) {
	sharedOnce.Do(func() { sharedScanner, sharedErr = New() })
	return sharedScanner, sharedErr
}
