package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretsNeverStored: by default every write's keys and payloads pass
// the secret scanner (gitleaks' rules): put-kv, put-node and batch replace a
// GitHub token and a connection-string password by [REDACTED:kind] and say
// how many; nothing of them reaches the store, the log or telemetry;
// --allow-secrets opts out for one write.
func TestSecretsNeverStored(t *testing.T) {
	db := initStore(t)
	tele := filepath.Join(t.TempDir(), "tele.jsonl")
	const token = "ghp_R8kq2ZtW7vN3xLp9sQm4Yb6Hc1Fd5Gj0Ke2A"
	out := ok(t, "--db", db, "--telemetry", tele, "put-kv", "repo", "ops", "deploy",
		`{"note":"push with `+token+`","dsn":"postgres://app:Sup3rS3cretPw@db/prod"}`)
	if out != "rev 1 (2 secrets redacted)\n" {
		t.Errorf("put-kv printed %q", out)
	}
	got := ok(t, "--db", db, "get-kv", "repo", "ops", "deploy")
	if strings.Contains(got, token) || strings.Contains(got, "Sup3rS3cretPw") ||
		!strings.Contains(got, "[REDACTED:github-pat]") || !strings.Contains(got, "[REDACTED:connection-string-password]") {
		t.Errorf("get-kv: %s", got)
	}
	if j := ok(t, "--db", db, "--json", "put-node", "note:"+token); !strings.Contains(j, `"redacted":1`) {
		t.Errorf("put-node --json: %s", j)
	}
	b := runEnv(t, `{"op":"put_node","key":"doc:a","payload":{"t":"`+token+`"}}`+"\n", nil, "--db", db, "batch")
	if b.Code != 0 || !strings.Contains(b.Stdout, "(1 secret redacted)") {
		t.Errorf("batch: %+v", b)
	}
	for _, text := range []string{ok(t, "--db", db, "diff-since", "0"), readOr(t, tele), readOr(t, filepath.Join(db, "data.mdb"))} {
		if strings.Contains(text, token) || strings.Contains(text, "Sup3rS3cretPw") {
			t.Errorf("a secret was stored: %.300q", text)
		}
	}
	ok(t, "--db", db, "--allow-secrets", "put-node", "doc:kept", "--payload", `{"t":"`+token+`"}`)
	if got := ok(t, "--db", db, "get-node", "doc:kept"); !strings.Contains(got, token) {
		t.Errorf("--allow-secrets did not keep the payload: %s", got)
	}
}

func readOr(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
