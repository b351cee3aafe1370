package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMCP runs `memctl mcp` in-process on piped input: every request read
// before the input ends is answered, then it exits 0. (mcpserver's tests
// drive the binary with the SDK's client.)
func TestMCP(t *testing.T) {
	db := newStore(t)
	ok(t, "--db", db, "put-node", "file:a.go", "--payload", `{"lang":"go"}`)
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_node","arguments":{"key":"file:a.go"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"put_node","arguments":{"key":"file:b.go"}}}
`
	r := runEnv(t, in, map[string]string{envRun: "agent-1"}, "--db", db, "mcp")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	for _, want := range []string{`"id":1,"result"`, `"id":2,"result"`, `\"payload\":{\"lang\":\"go\"}`, `"id":3,"result"`, `{\"rev\":2,`} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("output lacks %s:\n%s", want, r.Stdout)
		}
	}
	if n := jsonLines(t, ok(t, "--db", db, "--json", "get-node", "file:b.go")); n[0]["run_id"] != "agent-1" {
		t.Errorf("MEMCTL_RUN not recorded: %v", n[0])
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--db", db, "mcp", "--log-level", "loud"}, `--log-level "loud"`},
		{[]string{"--db", db, "mcp", "extra"}, "mcp takes no arguments"},
		{[]string{"--db", db, "mcp", "--tools", "core,+nope"}, `"nope" is neither a tool set`},
	} {
		r := memctl(t, tc.args...)
		if r.Code != ExitUsage || !strings.Contains(r.Stderr, tc.want) || r.Stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 and %q", tc.args, r.Code, r.Stderr, tc.want)
		}
	}

	// No store: the server answers initialize with why, and the fix.
	none := filepath.Join(t.TempDir(), "none")
	r = runEnv(t, in, nil, "--db", none, "mcp")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"id":1,"error":{"code":-32000,"message":"memctl: no store at `+none) ||
		!strings.Contains(r.Stdout, "mcp --init") || !strings.Contains(r.Stdout, `"id":3,"error"`) {
		t.Errorf("no store: exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
