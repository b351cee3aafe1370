package cli

// `memctl setup claude|cursor|vscode` writes a project's MCP client
// configuration so the agent's client starts `memctl mcp` on the project's
// store; `memctl setup hook` is the command Claude Code's SessionStart hook
// runs (SPEC.md §6.2, "setup").
//
// Invariants:
//   - a configuration file is merged, never overwritten: every other key,
//     server and hook is kept, in its place;
//   - memctl's own entry is replaced only with --force, unless it is
//     already what setup would write (then nothing is written);
//   - every file is checked before any is written, so a refusal writes
//     nothing; each file is replaced by a rename (never half-written).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/memctl/memctl/contextpack"
	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/mcpserver"
	"github.com/urfave/cli/v2"
)

// serverName is the name of memctl's entry in a client's server list.
const serverName = "memctl"

// hookMaxTargets caps the changed files the hook passes to context: a
// long-lived branch can touch hundreds, and the budget holds few of them.
const hookMaxTargets = 50

// setupClient is one MCP client setup knows: where its project file is and
// how it spells a stdio server.
type setupClient struct {
	name  string
	file  string // relative to the project directory
	key   string // the top-level member holding the servers
	typed bool   // entries carry "type": "stdio"
	hook  bool   // also a SessionStart hook in .claude/settings.json
	usage string
}

var setupClients = []setupClient{
	{name: "claude", file: ".mcp.json", key: "mcpServers", hook: true,
		usage: "configure Claude Code: .mcp.json and a SessionStart hook in .claude/settings.json"},
	{name: "cursor", file: filepath.Join(".cursor", "mcp.json"), key: "mcpServers",
		usage: "configure Cursor: .cursor/mcp.json"},
	{name: "vscode", file: filepath.Join(".vscode", "mcp.json"), key: "servers", typed: true,
		usage: "configure VS Code: .vscode/mcp.json"},
}

func setupCommand(env Env) *cli.Command {
	cmd := &cli.Command{
		Name:  "setup",
		Usage: "write a project's MCP client configuration so the agent's client starts memctl mcp on the project's store",
		Description: "The server is this memctl binary (its absolute path) with --db PROJECT/.memctl (or\n" +
			"--db when given), --init (a missing store is created) and --scope (the project's\n" +
			"directory name). Existing files are merged: other servers and settings are kept;\n" +
			"a different memctl entry is replaced only with --force (SPEC.md §6.2).",
	}
	for _, c := range setupClients {
		flags := []cli.Flag{
			dirFlag(),
			&cli.StringFlag{Name: "tools", Usage: "the server's tool `SETS` (memctl mcp --tools); default: the server's default"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing memctl entry that differs"},
		}
		if c.hook {
			flags = append(flags, budgetFlag())
		}
		cmd.Subcommands = append(cmd.Subcommands, verbCommand(env, verbSpec{
			Name:  c.name,
			Usage: c.usage,
			Run:   func(k *call) error { return runSetup(k, c) },
			Flags: flags,
		}))
	}
	cmd.Subcommands = append(cmd.Subcommands, verbCommand(env, verbSpec{
		Name:  "hook",
		Usage: "print memctl context for the files changed on the branch (Claude Code's SessionStart hook runs it)",
		Description: "The targets are the files changed since the merge base with the default branch\n" +
			"(origin/HEAD, else main or master), committed or not, plus untracked files, that\n" +
			"the store holds (at most 50); none: the repository. Without a store, or a store\n" +
			"holding no code, it prints one line saying so and succeeds: a hook must not stop\n" +
			"a session from starting.",
		Flags: []cli.Flag{dirFlag(), budgetFlag()},
		Run:   runSetupHook,
	}))
	return cmd
}

func dirFlag() cli.Flag {
	return &cli.StringFlag{Name: "dir", Value: ".", Usage: "the project `DIR`ectory"}
}

func budgetFlag() cli.Flag {
	return &cli.IntFlag{Name: "budget", Value: contextpack.DefaultBudget, Usage: "the context the hook prints: at most `TOKENS` tokens"}
}

// setupFile is one configuration file setup writes: its new bytes and what
// happened to memctl's entry.
type setupFile struct {
	path   string
	entry  string // e.g. "mcpServers.memctl"
	action string // created, added, replaced, unchanged
	data   []byte
}

// setupJSON is a file's --json record.
type setupJSON struct {
	Path   string `json:"path"`
	Entry  string `json:"entry"`
	Action string `json:"action"`
}

func runSetup(k *call, c setupClient) error {
	dir, err := projectDir(k)
	if err != nil {
		return err
	}
	db := filepath.Join(dir, ".memctl")
	if p := k.ctx.String("db"); p != "" {
		if db, err = filepath.Abs(p); err != nil {
			return usageErr("setup: --db %q: %v", p, err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("setup: the path of the memctl binary: %w", err)
	}
	args := []string{"--db", db, "mcp", "--init", "--scope", filepath.Base(dir)}
	if k.ctx.IsSet("tools") {
		t := k.ctx.String("tools")
		if _, err := mcpserver.ParseTools(t); err != nil {
			return usageErr("setup: --tools: %v", err)
		}
		args = append(args, "--tools", t)
	}
	server := map[string]any{"command": exe, "args": args}
	if c.typed {
		server["type"] = "stdio"
	}
	force := k.ctx.Bool("force")
	files := []*setupFile{}
	f, err := planServer(filepath.Join(dir, c.file), c.key, server, force)
	if err != nil {
		return err
	}
	files = append(files, f)
	if c.hook {
		budget := k.ctx.Int("budget")
		if budget <= 0 {
			return usageErr("setup: --budget must be > 0")
		}
		command := shellJoin(exe, "--db", db, "setup", "hook", "--dir", dir, "--budget", strconv.Itoa(budget))
		f, err := planHook(filepath.Join(dir, ".claude", "settings.json"), command, force)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	for _, f := range files {
		if f.action == "unchanged" {
			continue
		}
		if err := writeFileAtomic(f.path, f.data); err != nil {
			return err
		}
	}
	for _, f := range files {
		if k.out.json {
			if err := k.out.record(setupJSON{Path: f.path, Entry: f.entry, Action: f.action}); err != nil {
				return err
			}
		} else if err := k.out.textf("%s %s %s\n", f.action, f.path, f.entry); err != nil {
			return err
		}
	}
	return nil
}

// projectDir is --dir made absolute; it must be a directory.
func projectDir(k *call) (string, error) {
	d := k.ctx.String("dir")
	abs, err := filepath.Abs(d)
	if err != nil {
		return "", usageErr("%s: --dir %q: %v", k.name, d, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", usageErr("%s: --dir %s: %v", k.name, abs, errors.Unwrap(err))
	}
	if !st.IsDir() {
		return "", usageErr("%s: --dir %s is not a directory", k.name, abs)
	}
	return abs, nil
}

// planServer merges server as KEY.memctl into the JSON object at path.
func planServer(path, key string, server any, force bool) (*setupFile, error) {
	f := &setupFile{path: path, entry: key + "." + serverName}
	top, existed, err := readObject(path)
	if err != nil {
		return nil, err
	}
	servers := &object{}
	if raw, ok := top.get(key); ok {
		if servers, err = parseObject(raw); err != nil {
			return nil, usageErr("setup: %s: %q is not a JSON object", path, key)
		}
	}
	want := mustJSON(server)
	f.action = "added"
	if !existed {
		f.action = "created"
	}
	if old, ok := servers.get(serverName); ok {
		if sameJSON(old, want) {
			f.action = "unchanged"
			return f, nil
		}
		if !force {
			return nil, usageErr("setup: %s already has a different %s entry; --force replaces it", path, f.entry)
		}
		f.action = "replaced"
	}
	servers.set(serverName, want)
	top.set(key, servers.encode())
	f.data, err = top.indent()
	return f, err
}

// planHook merges a SessionStart hook running command into Claude Code's
// settings at path: {"hooks":{"SessionStart":[{"hooks":[{"type":"command",
// "command":…}]}]}}. memctl's group is the one whose command runs
// `setup hook`.
func planHook(path, command string, force bool) (*setupFile, error) {
	f := &setupFile{path: path, entry: "hooks.SessionStart"}
	top, existed, err := readObject(path)
	if err != nil {
		return nil, err
	}
	hooks := &object{}
	if raw, ok := top.get("hooks"); ok {
		if hooks, err = parseObject(raw); err != nil {
			return nil, usageErr("setup: %s: \"hooks\" is not a JSON object", path)
		}
	}
	var groups []json.RawMessage
	if raw, ok := hooks.get("SessionStart"); ok {
		if err := json.Unmarshal(raw, &groups); err != nil {
			return nil, usageErr("setup: %s: \"hooks.SessionStart\" is not a JSON array", path)
		}
	}
	want := mustJSON(map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command}}})
	f.action = "added"
	if !existed {
		f.action = "created"
	}
	at := slices.IndexFunc(groups, isMemctlHookGroup)
	switch {
	case at < 0:
		groups = append(groups, want)
	case sameJSON(groups[at], want):
		f.action = "unchanged"
		return f, nil
	case !force:
		return nil, usageErr("setup: %s already has a different memctl SessionStart hook; --force replaces it", path)
	default:
		groups[at] = want
		f.action = "replaced"
	}
	hooks.set("SessionStart", mustJSON(groups))
	top.set("hooks", hooks.encode())
	f.data, err = top.indent()
	return f, err
}

// isMemctlHookGroup: a SessionStart group with a command running
// `memctl … setup hook`.
func isMemctlHookGroup(raw json.RawMessage) bool {
	var g struct {
		Hooks []struct {
			Command string `json:"command"`
		} `json:"hooks"`
	}
	if json.Unmarshal(raw, &g) != nil {
		return false
	}
	for _, h := range g.Hooks {
		if strings.Contains(h.Command, serverName) && strings.Contains(h.Command, " setup hook") {
			return true
		}
	}
	return false
}

// object is a JSON object that keeps its members' order, so a merged file
// differs from the user's only where memctl's entry is.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func parseObject(b []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	o := &object{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o.set(t.(string), v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("data after the JSON object")
	}
	return o, nil
}

func (o *object) get(k string) (json.RawMessage, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *object) set(k string, v json.RawMessage) {
	if o.vals == nil {
		o.vals = map[string]json.RawMessage{}
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) encode() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(mustJSON(k))
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// indent is the file's text: two-space indentation and a final newline.
func (o *object) indent() ([]byte, error) {
	var b bytes.Buffer
	if err := json.Indent(&b, o.encode(), "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// readObject reads the JSON object at path; a missing (or empty) file is an
// empty object.
func readObject(path string) (*object, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &object{}, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return &object{}, true, nil
	}
	o, err := parseObject(b)
	if err != nil {
		return nil, false, usageErr("setup: %s is not a JSON object (%v); fix or remove it", path, err)
	}
	return o, true, nil
}

func mustJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only strings, maps and slices of them
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// sameJSON compares two JSON values, not their spelling.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// writeFileAtomic replaces path by a renamed temporary file, keeping the
// mode of the file it replaces (0644 for a new one).
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// shellJoin quotes words for a POSIX shell (Claude Code runs a hook's
// command with one).
func shellJoin(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellWord(w)
	}
	return strings.Join(q, " ")
}

func shellWord(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:+,@%") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// --- setup hook ----------------------------------------------------------------

func runSetupHook(k *call) error {
	dir, err := projectDir(k)
	if err != nil {
		return err
	}
	budget := k.ctx.Int("budget")
	if budget <= 0 {
		return usageErr("setup hook: --budget must be > 0")
	}
	changed := changedFiles(dir)
	targets, note, err := hookTargets(k, changed)
	if err != nil {
		return err
	}
	// The context run opens the store itself: LMDB must not have one
	// environment open twice in a process.
	if err := k.close(); err != nil {
		return err
	}
	if note != "" {
		if k.out.json {
			return k.out.record(map[string]string{"note": note})
		}
		return k.out.textf("%s\n", note)
	}
	args := []string{"memctl", "--db", k.dbPath()}
	if k.ctx.Bool("json") {
		args = append(args, "--json")
	}
	if k.ctx.Bool("no-sync") {
		args = append(args, "--no-sync")
	}
	if t := k.ctx.String("telemetry"); t != "" {
		args = append(args, "--telemetry", t)
	}
	args = append(args, "context", "--budget", strconv.Itoa(budget), "--")
	args = append(args, targets...)
	var out, errb bytes.Buffer
	env := k.env
	env.Stdout, env.Stderr = &out, &errb
	if code := Run(args, env); code != ExitOK {
		msg := strings.TrimPrefix(strings.TrimSpace(errb.String()), "memctl: ")
		return withCode(code, errors.New(msg))
	}
	k.env.Stderr.Write(errb.Bytes()) // the "as of" line
	return k.out.textf("%s", out.String())
}

// hookTargets keeps the changed files the store holds (after bringing it
// in step with the tree it follows), at most hookMaxTargets; none: the
// repository. note is set instead when there is nothing to ask.
func hookTargets(k *call, changed []string) (targets []string, note string, err error) {
	path := k.dbPath()
	ingestHint := fmt.Sprintf("`memctl --db %s ingest code DIR` reads the code", path)
	s, _, err := k.openFresh(lmdbstore.At{})
	if errors.Is(err, lmdbstore.ErrNotExist) {
		return nil, fmt.Sprintf("memctl: no store at %s yet (the memctl MCP server creates it; %s).", path, ingestHint), nil
	}
	if err != nil {
		return nil, "", err
	}
	err = s.View(func(r *lmdbstore.ReadTxn) error {
		live := func(key string) (bool, error) {
			_, err := r.GetNode(key, lmdbstore.At{})
			if errors.Is(err, lmdbstore.ErrNotFound) {
				return false, nil
			}
			return err == nil, err
		}
		for _, p := range changed {
			ok, err := live(ingest.FileKey(p))
			if err != nil {
				return err
			}
			if ok {
				targets = append(targets, p)
				if len(targets) == hookMaxTargets {
					break
				}
			}
		}
		if len(targets) > 0 {
			return nil
		}
		repo := ingest.DirKey(".")
		ok, err := live(repo)
		if err != nil {
			return err
		}
		if ok {
			targets = []string{repo}
		} else {
			note = fmt.Sprintf("memctl: the store at %s holds no code yet (%s).", path, ingestHint)
		}
		return nil
	})
	return targets, note, err
}

// changedFiles lists the files changed on dir's branch, relative to dir and
// sorted: those that differ between the merge base with the default branch
// and the work tree (committed, staged or not; deletions left out), and
// untracked files git does not ignore. Without git, outside a repository or
// without a commit it lists what it can (nothing, or the index and the
// untracked files).
func changedFiles(dir string) []string {
	git := func(args ...string) (string, bool) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		out, err := cmd.Output()
		return string(out), err == nil
	}
	if _, ok := git("rev-parse", "--is-inside-work-tree"); !ok {
		return nil
	}
	var lists []string
	if _, ok := git("rev-parse", "--verify", "--quiet", "HEAD^{commit}"); ok {
		base := "HEAD"
		if def := defaultBranch(git); def != "" {
			if mb, ok := git("merge-base", "HEAD", def); ok {
				base = strings.TrimSpace(mb)
			}
		}
		out, _ := git("diff", "--name-only", "--relative", "--diff-filter=d", "--no-renames", "-z", base, "--")
		lists = append(lists, out)
	} else {
		out, _ := git("ls-files", "-z", "--cached")
		lists = append(lists, out)
	}
	out, _ := git("ls-files", "-z", "--others", "--exclude-standard")
	lists = append(lists, out)
	var files []string
	for _, l := range lists {
		for _, p := range strings.Split(l, "\x00") {
			if p != "" {
				files = append(files, filepath.ToSlash(p))
			}
		}
	}
	slices.Sort(files)
	return slices.Compact(files)
}

// defaultBranch is origin's HEAD, else the first of main, master,
// origin/main, origin/master that exists; "" when none does.
func defaultBranch(git func(...string) (string, bool)) string {
	if ref, ok := git("symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"); ok && strings.TrimSpace(ref) != "" {
		return strings.TrimSpace(ref)
	}
	for _, b := range []string{"main", "master", "origin/main", "origin/master"} {
		if _, ok := git("rev-parse", "--verify", "--quiet", b+"^{commit}"); ok {
			return b
		}
	}
	return ""
}
