package secretscan

// memctl's own rules, for what gitleaks' default set (pinned in go.mod)
// does not catch in the text agents write. Each is a gitleaks config.Rule,
// so it runs through the same detector with its keyword pre-filter, and a
// rule whose id gitleaks also has replaces it but keeps gitleaks'
// allowlist for the kind. A new rule is one entry in ownRules, with a
// kind in testdata/secrets/gen.py (true secrets and near misses).
//
// Boundaries: these rules end a token at any character that cannot be part
// of it (not only at quotes and white space, as most of gitleaks' rules
// do), so a key that ends a sentence or stands before `&` in a URL is still
// a key. For gitleaks' own rules the Scanner gets the same effect by also
// scanning a copy of the text with trailing punctuation blanked
// (trailingPunct in secretscan.go).

import (
	"regexp"

	"github.com/zricethezav/gitleaks/v8/config"
)

// placeholderPasswords are the words documentation uses where a password
// goes; a connection string with one of them holds no secret.
const placeholderPasswords = `password|passwd|pass|pwd|secret|changeme|example|test|guest|root|admin|user|username|your[_-]?password|mypassword|xxx+|\*+`

func ownRules() []config.Rule {
	return []config.Rule{
		{
			// gitleaks' gcp-api-key wants the key followed by a quote,
			// space or line end; in a URL query (key=AIza...&q=) it is
			// followed by '&'. The prefix and length are distinctive alone.
			RuleID:      "gcp-api-key",
			Description: "Google Cloud API key, anywhere (also inside URLs)",
			Regex:       regexp.MustCompile(`\b(AIza[0-9A-Za-z_\-]{35})(?:[^0-9A-Za-z_\-]|$)`),
			SecretGroup: 1,
			Keywords:    []string{"aiza"},
		},
		{
			// scheme://user:password@host — the password is the secret;
			// the user may be empty (redis://:password@host).
			// Placeholders (<password>, ${VAR}, $VAR, ***) are not
			// secrets; nor are the words docs use (see ownAllowlist).
			RuleID:      "connection-string-password",
			Description: "Password in a connection string (scheme://user:password@host)",
			Regex:       regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/@'"]{0,64}:([^\s@/'"<>{}$*]{4,128})@[a-z0-9.\-\[\]]+`),
			SecretGroup: 1,
			Keywords:    []string{"://"},
			Allowlists:  []*config.Allowlist{secretIsOneOf(placeholderPasswords)},
		},
		{
			// AWS secret access keys: 40 characters of base64, named by
			// the variables and fields AWS's own tools use.
			RuleID:      "aws-secret-access-key",
			Description: "AWS secret access key in an assignment",
			Regex:       regexp.MustCompile(`(?i)aws_?secret_?(?:access_?)?key(?:_id)?['"]?\s*(?:[:=]|:=|=>)\s*['"]?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`),
			SecretGroup: 1,
			Keywords:    []string{"secret"},
			Allowlists:  []*config.Allowlist{secretMatches(`EXAMPLE`)},
		},
		{
			RuleID:      "azure-storage-account-key",
			Description: "Azure storage account key (AccountKey=… in a connection string)",
			Regex:       regexp.MustCompile(`AccountKey=([A-Za-z0-9+/]{86}==)`),
			SecretGroup: 1,
			Keywords:    []string{"accountkey="},
		},
		{
			// OpenAI project, service-account and admin keys; gitleaks'
			// rule wants the T3BlbkFJ marker inside, which not every
			// issued key (nor a truncated paste) has.
			RuleID:      "openai-project-key",
			Description: "OpenAI project, service-account or admin API key",
			Regex:       regexp.MustCompile(`\b(sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,200})(?:[^A-Za-z0-9_\-]|$)`),
			SecretGroup: 1,
			Keywords:    []string{"sk-proj-", "sk-svcacct-", "sk-admin-"},
			Allowlists:  []*config.Allowlist{secretMatches(`(?i)your|example|xxxx`)},
		},
		{
			RuleID:      "anthropic-api-key-any",
			Description: "Anthropic API or admin key",
			Regex:       regexp.MustCompile(`\b(sk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_\-]{80,120})(?:[^A-Za-z0-9_\-]|$)`),
			SecretGroup: 1,
			Keywords:    []string{"sk-ant-"},
		},
		{
			RuleID:      "twilio-auth-token",
			Description: "Twilio auth token (32 hex digits named by a Twilio variable or field)",
			Regex:       regexp.MustCompile(`(?i)twilio[\w.\- ]{0,30}?['"]?\s*(?:[:=]|:=|=>)\s*['"]?([0-9a-f]{32})(?:[^0-9a-zA-Z]|$)`),
			SecretGroup: 1,
			Keywords:    []string{"twilio"},
		},
		{
			// HashiCorp Vault service tokens (hvs.…). gitleaks' rule
			// allowlists any match holding "s." and 24 letters, meant for
			// the legacy s.… form, which also drops a real hvs. token whose
			// body starts with 24 letters.
			RuleID:      "vault-service-token-hvs",
			Description: "HashiCorp Vault service token",
			Regex:       regexp.MustCompile(`\b(hvs\.[A-Za-z0-9_\-]{90,120})(?:[^A-Za-z0-9_\-]|$)`),
			SecretGroup: 1,
			Keywords:    []string{"hvs."},
		},
		{
			// Telegram bot tokens: the bot id, a colon, then 35 characters
			// starting "AA"; distinctive without the word "telegram".
			RuleID:      "telegram-bot-token",
			Description: "Telegram bot token",
			Regex:       regexp.MustCompile(`(?:^|[^0-9A-Za-z]|bot)([0-9]{8,10}:AA[A-Za-z0-9_\-]{33})(?:[^A-Za-z0-9_\-]|$)`),
			SecretGroup: 1,
			Keywords:    []string{":aa"},
		},
	}
}

// secretIsOneOf allowlists a finding whose secret is exactly one of the
// alternatives (case-insensitive).
func secretIsOneOf(alternatives string) *config.Allowlist {
	return &config.Allowlist{
		MatchCondition: config.AllowlistMatchOr,
		RegexTarget:    "secret",
		Regexes:        []*regexp.Regexp{regexp.MustCompile(`(?i)^(?:` + alternatives + `)$`)},
	}
}

// secretMatches allowlists a finding whose secret matches re.
func secretMatches(re string) *config.Allowlist {
	return &config.Allowlist{
		MatchCondition: config.AllowlistMatchOr,
		RegexTarget:    "secret",
		Regexes:        []*regexp.Regexp{regexp.MustCompile(re)},
	}
}
