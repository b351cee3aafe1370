package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readJSON reads a written configuration file back.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return v
}

// member walks v along keys.
func member(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("no object at %q in %v", k, v)
		}
		v = m[k]
	}
	return v
}

func projDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "my proj")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSetupWritesClientConfigs: each client's file holds memctl's server
// as the client spells it (this binary, --db PROJECT/.memctl, --init, the
// project's name as --scope); claude adds the SessionStart hook; a second
// run writes nothing.
func TestSetupWritesClientConfigs(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		client, file, key string
		typed             bool
	}{
		{"claude", ".mcp.json", "mcpServers", false},
		{"cursor", ".cursor/mcp.json", "mcpServers", false},
		{"vscode", ".vscode/mcp.json", "servers", true},
	} {
		t.Run(tc.client, func(t *testing.T) {
			dir := projDir(t)
			out := ok(t, "setup", tc.client, "--dir", dir, "--tools", "core,+ingest")
			path := filepath.Join(dir, filepath.FromSlash(tc.file))
			if !strings.Contains(out, "created "+path+" "+tc.key+".memctl\n") {
				t.Errorf("output does not say what it wrote:\n%s", out)
			}
			server := member(t, readJSON(t, path), tc.key, "memctl")
			want := map[string]any{
				"command": exe,
				"args":    []any{"--db", filepath.Join(dir, ".memctl"), "mcp", "--init", "--scope", "my proj", "--tools", "core,+ingest"},
			}
			if tc.typed {
				want["type"] = "stdio"
			}
			if d := cmp.Diff(want, server); d != "" {
				t.Errorf("server entry (-want +got):\n%s", d)
			}
			settings := filepath.Join(dir, ".claude", "settings.json")
			if tc.client == "claude" {
				groups := member(t, readJSON(t, settings), "hooks", "SessionStart").([]any)
				wantHook := []any{map[string]any{"hooks": []any{map[string]any{"type": "command",
					"command": shellJoin(exe, "--db", filepath.Join(dir, ".memctl"), "setup", "hook", "--dir", dir, "--budget", "2000")}}}}
				if d := cmp.Diff(wantHook, groups); d != "" {
					t.Errorf("SessionStart hook (-want +got):\n%s", d)
				}
				if !strings.Contains(out, "created "+settings+" hooks.SessionStart\n") {
					t.Errorf("output does not name the settings file:\n%s", out)
				}
			} else if _, err := os.Stat(settings); err == nil {
				t.Errorf("%s wrote %s", tc.client, settings)
			}
			before, _ := os.ReadFile(path)
			again := ok(t, "setup", tc.client, "--dir", dir, "--tools", "core,+ingest")
			if !strings.HasPrefix(again, "unchanged "+path) {
				t.Errorf("second run:\n%s", again)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Error("a second run changed the file")
			}
			var rec setupJSON
			r := memctl(t, "--json", "setup", tc.client, "--dir", dir, "--tools", "core,+ingest")
			if r.Code != 0 || json.Unmarshal([]byte(strings.SplitN(r.Stdout, "\n", 2)[0]), &rec) != nil ||
				rec != (setupJSON{Path: path, Entry: tc.key + ".memctl", Action: "unchanged"}) {
				t.Errorf("--json: exit %d %q", r.Code, r.Stdout)
			}
		})
	}
}

// TestSetupMerges: other servers, keys and hooks are kept in their order;
// a different memctl entry is refused (exit 2, nothing written) unless
// --force, which replaces it in place.
func TestSetupMerges(t *testing.T) {
	dir := projDir(t)
	mcpPath := filepath.Join(dir, ".mcp.json")
	settings := filepath.Join(dir, ".claude", "settings.json")
	mcpOld := `{"zeta": 1, "mcpServers": {"other": {"command": "other-server", "args": ["x"]}, "memctl": {"command": "/old/memctl", "args": []}}, "alpha": {"b": 2}}`
	writeFile(t, dir, ".mcp.json", mcpOld)
	settingsOld := `{"permissions": {"allow": ["Bash(go test:*)"]}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo pre"}]}],` +
		` "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}, {"hooks": [{"type": "command", "command": "/old/memctl --db /x setup hook"}]}]}}`
	writeFile(t, dir, ".claude/settings.json", settingsOld)

	r := memctl(t, "setup", "claude", "--dir", dir)
	if r.Code != ExitUsage || r.Stdout != "" || r.Stderr != "memctl: setup: "+mcpPath+" already has a different mcpServers.memctl entry; --force replaces it\n" {
		t.Fatalf("a different memctl entry without --force: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if b, _ := os.ReadFile(mcpPath); string(b) != mcpOld {
		t.Error("a refused setup changed .mcp.json")
	}
	// Only the hook differs: still refused, and .mcp.json is not written
	// either (every file is checked before any is written).
	writeFile(t, dir, ".mcp.json", `{"mcpServers": {"other": {"command": "other-server"}}}`)
	r = memctl(t, "setup", "claude", "--dir", dir)
	if r.Code != ExitUsage || !strings.Contains(r.Stderr, "different memctl SessionStart hook; --force replaces it") {
		t.Fatalf("a different memctl hook without --force: exit %d\n%s", r.Code, r.Stderr)
	}
	if b, _ := os.ReadFile(mcpPath); string(b) != `{"mcpServers": {"other": {"command": "other-server"}}}` {
		t.Error("a refused setup wrote .mcp.json")
	}
	writeFile(t, dir, ".mcp.json", mcpOld)

	out := ok(t, "setup", "claude", "--dir", dir, "--force")
	if out != "replaced "+mcpPath+" mcpServers.memctl\nreplaced "+settings+" hooks.SessionStart\n" {
		t.Errorf("--force output:\n%s", out)
	}
	exe, _ := os.Executable()
	b, _ := os.ReadFile(mcpPath)
	wantMCP := `{
  "zeta": 1,
  "mcpServers": {
    "other": {
      "command": "other-server",
      "args": [
        "x"
      ]
    },
    "memctl": {
      "args": [
        "--db",
        ` + string(mustJSON(filepath.Join(dir, ".memctl"))) + `,
        "mcp",
        "--init",
        "--scope",
        "my proj"
      ],
      "command": ` + string(mustJSON(exe)) + `
    }
  },
  "alpha": {
    "b": 2
  }
}
`
	if d := cmp.Diff(wantMCP, string(b)); d != "" {
		t.Errorf(".mcp.json after --force (-want +got):\n%s", d)
	}
	s := readJSON(t, settings)
	if d := cmp.Diff(map[string]any{"allow": []any{"Bash(go test:*)"}}, member(t, s, "permissions")); d != "" {
		t.Errorf("permissions lost: %s", d)
	}
	if pre := member(t, s, "hooks", "PreToolUse").([]any); len(pre) != 1 {
		t.Errorf("PreToolUse hooks: %v", pre)
	}
	groups := member(t, s, "hooks", "SessionStart").([]any)
	if len(groups) != 2 || member(t, groups[0], "matcher") != "startup" {
		t.Fatalf("SessionStart groups: %v", groups)
	}
	cmd := member(t, groups[1], "hooks").([]any)[0].(map[string]any)["command"].(string)
	if !strings.HasPrefix(cmd, shellWord(exe)+" --db ") || !strings.Contains(cmd, " setup hook --dir ") {
		t.Errorf("memctl's hook was not replaced in place: %q", cmd)
	}
	// An entry equal to what setup writes, spelled otherwise, is unchanged.
	ok(t, "setup", "cursor", "--dir", dir)
	cursor := filepath.Join(dir, ".cursor", "mcp.json")
	v := readJSON(t, cursor)
	b, _ = json.Marshal(v)
	if err := os.WriteFile(cursor, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(cursor, 0o600); err != nil {
		t.Fatal(err)
	}
	if out := ok(t, "setup", "cursor", "--dir", dir); !strings.HasPrefix(out, "unchanged ") {
		t.Errorf("the same entry compacted: %s", out)
	}
	// A replaced file keeps its mode.
	ok(t, "setup", "cursor", "--dir", dir, "--tools", "all", "--force")
	if st, err := os.Stat(cursor); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode after replace: %v %v", st.Mode(), err)
	}
}

// TestSetupBadInput: one line, exit 2, nothing written.
func TestSetupBadInput(t *testing.T) {
	dir := projDir(t)
	writeFile(t, dir, "notjson/.vscode/mcp.json", `{"servers": `)
	writeFile(t, dir, "array/.cursor/mcp.json", `[]`)
	writeFile(t, dir, "servers/.cursor/mcp.json", `{"mcpServers": []}`)
	writeFile(t, dir, "file", "")
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"setup", "claude", "--dir", filepath.Join(dir, "nope")}, "no such file or directory"},
		{[]string{"setup", "claude", "--dir", filepath.Join(dir, "file")}, "is not a directory"},
		{[]string{"setup", "claude", "--dir", dir, "--tools", "bogus"}, "setup: --tools: "},
		{[]string{"setup", "claude", "--dir", dir, "--budget", "0"}, "--budget must be > 0"},
		{[]string{"setup", "vscode", "--dir", filepath.Join(dir, "notjson")}, "is not a JSON object"},
		{[]string{"setup", "cursor", "--dir", filepath.Join(dir, "array")}, "is not a JSON object"},
		{[]string{"setup", "cursor", "--dir", filepath.Join(dir, "servers")}, `"mcpServers" is not a JSON object`},
		{[]string{"setup", "zed"}, `unknown command "zed"`},
		{[]string{"setup", "hook", "--dir", dir, "--budget", "-1"}, "--budget must be > 0"},
	} {
		r := memctl(t, tc.args...)
		if r.Code != ExitUsage || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, tc.msg) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q (want %q)", tc.args, r.Code, r.Stdout, r.Stderr, tc.msg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".mcp.json")); err == nil {
		t.Error("a failed setup wrote .mcp.json")
	}
}

// TestSetupHook: the hook's context names the files changed on the
// branch (committed since the merge base, modified, untracked), never an
// unchanged one; on the default branch with nothing changed it asks about
// the repository; without a store or code it says so and succeeds.
func TestSetupHook(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := gitRepo(t, map[string]string{
		"pkg/__init__.py": "",
		"pkg/geo.py":      "def area(w, h):\n    return w * h\n",
		"pkg/shape.py":    "def square(s):\n    return s * s\n",
		"pkg/quiet.py":    "def still():\n    return 0\n",
	})
	db := filepath.Join(t.TempDir(), "db")
	r := memctl(t, "--db", db, "setup", "hook", "--dir", dir)
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "memctl: no store at "+db+" yet") {
		t.Errorf("no store: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	ok(t, "--db", db, "init")
	r = memctl(t, "--db", db, "setup", "hook", "--dir", dir)
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "memctl: the store at "+db+" holds no code yet") {
		t.Errorf("empty store: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	ok(t, "--db", db, "ingest", "python", dir)

	// The default branch, nothing changed: the repository.
	if got := changedFiles(dir); len(got) != 0 {
		t.Errorf("changed files of a clean default branch: %v", got)
	}
	r = memctl(t, "--db", db, "setup", "hook", "--dir", dir, "--budget", "600")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "# Context: dir:.") {
		t.Errorf("a clean tree's hook does not ask about the repository: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	runGit(t, dir, "checkout", "-q", "-b", "feature")
	writeFile(t, dir, "pkg/geo.py", "def area(w, h):\n    return w * h\n\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n")
	runGit(t, dir, "commit", "-q", "-am", "perimeter")
	writeFile(t, dir, "pkg/shape.py", "def square(s):\n    return s ** 2\n")
	writeFile(t, dir, "pkg/new.py", "def fresh():\n    return 1\n")
	writeFile(t, dir, "notes.txt", "not code\n")
	want := []string{"notes.txt", "pkg/geo.py", "pkg/new.py", "pkg/shape.py"}
	if d := cmp.Diff(want, changedFiles(dir)); d != "" {
		t.Errorf("changed files (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"geo.py", "new.py", "shape.py"}, changedFiles(filepath.Join(dir, "pkg"))); d != "" {
		t.Errorf("changed files from a subdirectory (-want +got):\n%s", d)
	}
	r = memctl(t, "--db", db, "setup", "hook", "--dir", dir, "--budget", "1500")
	if r.Code != 0 {
		t.Fatalf("hook: exit %d\n%s", r.Code, r.Stderr)
	}
	// notes.txt is no file the store holds; pkg/new.py is, after the
	// refresh the hook's context runs first.
	head := strings.SplitN(r.Stdout, "\n", 2)[0]
	if head != "# Context: file:pkg/geo.py, file:pkg/new.py, file:pkg/shape.py" {
		t.Errorf("hook targets: %q\n%s", head, r.Stdout)
	}
	if strings.Contains(head, "quiet") || strings.Contains(head, "notes") {
		t.Errorf("an unchanged or unstored file is a target: %q", head)
	}
	if !strings.Contains(r.Stderr, "as of rev") {
		t.Errorf("the as-of line is not passed on: %q", r.Stderr)
	}
	// The pack is what `memctl context` prints for those files.
	want2 := memctl(t, "--db", db, "context", "--budget", "1500", "pkg/geo.py", "pkg/new.py", "pkg/shape.py")
	r2 := memctl(t, "--db", db, "setup", "hook", "--dir", dir, "--budget", "1500")
	if want2.Code != 0 || r2.Stdout != want2.Stdout {
		t.Errorf("hook output differs from context's:\n%s\n---\n%s", r2.Stdout, want2.Stdout)
	}
	if r := memctl(t, "--db", db, "--json", "setup", "hook", "--dir", dir); r.Code != 0 || !strings.HasPrefix(r.Stdout, `{"rev":`) {
		t.Errorf("hook --json: exit %d %q", r.Code, r.Stdout)
	}
}

// TestSetupNodeClient: the configuration `memctl setup claude` writes
// starts a server a real TypeScript MCP client talks to (command and args
// read from .mcp.json: tools/list, then ingest and context succeed on the
// store the server created with --init), and the hook command in
// .claude/settings.json, run by sh as Claude Code runs it, prints context
// naming the changed file.
func TestSetupNodeClient(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	bin := buildMemctl(t)
	dir := gitRepo(t, map[string]string{
		"pkg/__init__.py": "",
		"pkg/geo.py":      "def area(w, h):\n    return w * h\n",
	})
	env := append(os.Environ(), "MEMCTL_NOSYNC=1")
	setup := exec.Command(bin, "setup", "claude", "--dir", dir, "--tools", "core,+ingest", "--budget", "800")
	setup.Env = env
	if out, err := setup.CombinedOutput(); err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	if got := member(t, readJSON(t, filepath.Join(dir, ".mcp.json")), "mcpServers", "memctl", "command"); got != bin {
		t.Errorf("command %v, want the binary that ran setup, %s", got, bin)
	}

	modules := os.Getenv("MEMCTL_TEST_NODE_MODULES")
	node, err := exec.LookPath("node")
	if modules == "" || err != nil {
		t.Log("skipping the TypeScript client: set MEMCTL_TEST_NODE_MODULES to a node_modules with @modelcontextprotocol/sdk (and have node)")
		for _, args := range [][]string{{"init"}, {"ingest", "code", dir}} {
			c := exec.Command(bin, append([]string{"--db", filepath.Join(dir, ".memctl")}, args...)...)
			c.Env = env
			if out, err := c.CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, out)
			}
		}
	} else {
		script := filepath.Join(filepath.Dir(modules), "memctl_setup_client_test.mjs")
		src, err := os.ReadFile(filepath.Join("testdata", "setup_client.mjs"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(script, src, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(script)
		cmd := exec.Command(node, script)
		cmd.Env = append(env, "MEMCTL_CONFIG="+filepath.Join(dir, ".mcp.json"), "MEMCTL_CONFIG_KEY=mcpServers",
			"MEMCTL_TREE="+dir, "MEMCTL_TARGET=pkg/geo.py")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "client errors: 0") || !strings.Contains(string(out), "# Context: file:pkg/geo.py") {
			t.Fatalf("node client: %v\n%s", err, out)
		}
		t.Logf("%s", out)
	}

	// The hook, as Claude Code runs it: its command through a shell.
	groups := member(t, readJSON(t, filepath.Join(dir, ".claude", "settings.json")), "hooks", "SessionStart").([]any)
	command := member(t, groups[0], "hooks").([]any)[0].(map[string]any)["command"].(string)
	runGit(t, dir, "checkout", "-q", "-b", "feature")
	writeFile(t, dir, "pkg/geo.py", "def area(w, h):\n    return w * h\n\n\ndef half(w, h):\n    return area(w, h) / 2\n")
	hook := exec.Command("sh", "-c", command)
	hook.Dir = t.TempDir() // the command must not depend on the directory it runs in
	hook.Env = env
	out, err := hook.Output()
	if err != nil {
		t.Fatalf("hook %q: %v\n%s", command, err, out)
	}
	if !strings.HasPrefix(string(out), "# Context: file:pkg/geo.py\n") {
		t.Errorf("hook output does not name the changed file:\n%s", out)
	}
}
