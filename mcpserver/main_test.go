package mcpserver_test

// End-to-end tests: the SDK's own client starts `memctl mcp` as a
// subprocess (mcp.CommandTransport) and the answers are checked against
// the memctl CLI's on the same store. TestMain builds the binary once.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// memctlBin is the memctl binary TestMain built for the servers: with -race
// when the tests run under the race detector. cliBin is the one tryCLI
// runs, the reference the servers' answers are compared with: always built
// without -race (the CLI's own races are the cli package's tests), since a
// race-built process takes five times as long to start and the comparisons
// start hundreds.
var memctlBin, cliBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "memctl-mcp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	memctlBin = filepath.Join(dir, "memctl")
	cliBin = memctlBin
	if raceEnabled {
		cliBin = filepath.Join(dir, "memctl-cli")
	}
	// `go run -exec cp` rather than `go build -o`: go run keeps the
	// executable it links in the build cache, so the packages whose tests
	// start memctl (cli, fuzz, mcpserver) and make test's two passes link
	// each flavour once per state of the source, not once each (a link is
	// 5 to 10 s of CPU). Like every go run binary it has no DWARF.
	build := func(out string, race bool) error {
		args := []string{"run"}
		if race {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, "-exec", "cp", "github.com/memctl/memctl/cmd/memctl", out)...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		return cmd.Run()
	}
	err = build(memctlBin, raceEnabled)
	if err == nil && cliBin != memctlBin {
		err = build(cliBin, false)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "building memctl:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testEnv is the environment of every memctl subprocess: no fsync (no
// process-level test can observe one), nothing inherited that could change
// provenance.
func testEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MEMCTL_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "MEMCTL_NOSYNC=1")
}

// newStore creates an empty store and returns its path.
func newStore(t testing.TB) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "db")
	runCLI(t, "", "--db", db, "init")
	return db
}

// runCLI runs memctl and fails the test unless it exits 0.
func runCLI(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	out, errOut, code := tryCLI(t, stdin, args...)
	if code != 0 {
		t.Fatalf("memctl %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// tryCLI runs memctl and returns stdout, stderr and the exit code.
func tryCLI(t testing.TB, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(cliBin, args...)
	cmd.Env = testEnv()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("memctl %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), code
}

// cliJSON runs memctl --json and decodes every output line.
func cliJSON(t testing.TB, db string, args ...string) []map[string]any {
	t.Helper()
	out := runCLI(t, "", append([]string{"--db", db, "--json"}, args...)...)
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		recs = append(recs, decodeObject(t, []byte(line)))
	}
	return recs
}

func decodeObject(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, b)
	}
	return m
}

// lockedBuffer collects a subprocess's stderr.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// server is one `memctl mcp` subprocess with its SDK client session.
type server struct {
	t       testing.TB
	cmd     *exec.Cmd
	sess    *mcp.ClientSession
	stderr  *lockedBuffer
	schemas map[string]*jsonschema.Resolved // output schemas by tool
}

// startServer starts `memctl --db db mcp args...` and connects a client.
// It offers every tool (--tools all) unless args choose.
func startServer(t testing.TB, db string, args ...string) *server {
	t.Helper()
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--tools") }) {
		args = append([]string{"--tools", "all"}, args...)
	}
	cmd := exec.Command(memctlBin, append([]string{"--db", db, "mcp"}, args...)...)
	cmd.Env = testEnv()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "memctl-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connecting to memctl mcp: %v (stderr: %s)", err, stderr.String())
	}
	s := &server{t: t, cmd: cmd, sess: sess, stderr: stderr}
	t.Cleanup(func() { s.close() })
	return s
}

func (s *server) close() {
	if s.sess != nil {
		s.sess.Close()
		s.sess = nil
	}
}

// outputSchema is the resolved output schema of tool name (listed once).
func (s *server) outputSchema(name string) *jsonschema.Resolved {
	s.t.Helper()
	if s.schemas == nil {
		s.schemas = map[string]*jsonschema.Resolved{}
		res, err := s.sess.ListTools(context.Background(), nil)
		if err != nil {
			s.t.Fatalf("tools/list: %v", err)
		}
		for _, tool := range res.Tools {
			b, _ := json.Marshal(tool.OutputSchema)
			var sc jsonschema.Schema
			if err := json.Unmarshal(b, &sc); err != nil {
				s.t.Fatalf("tool %s: output schema: %v", tool.Name, err)
			}
			r, err := sc.Resolve(nil)
			if err != nil {
				s.t.Fatalf("tool %s: resolving output schema: %v", tool.Name, err)
			}
			s.schemas[tool.Name] = r
		}
	}
	r, ok := s.schemas[name]
	if !ok {
		s.t.Fatalf("no tool %q", name)
	}
	return r
}

// call calls a tool. It returns the JSON text of a successful result
// (checked against the tool's output schema and the structured content),
// or the error text of a tool error (isErr). A protocol error fails the test.
func (s *server) call(name string, args any) (out []byte, isErr bool) {
	s.t.Helper()
	res, err := s.sess.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		s.t.Fatalf("%s: protocol error: %v (server stderr: %s)", name, err, s.stderr.String())
	}
	if len(res.Content) != 1 {
		s.t.Fatalf("%s: %d content blocks, want 1", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		s.t.Fatalf("%s: content is %T, want text", name, res.Content[0])
	}
	if res.IsError {
		return []byte(text.Text), true
	}
	structured, _ := json.Marshal(res.StructuredContent)
	var v any
	if err := json.Unmarshal(structured, &v); err != nil {
		s.t.Fatalf("%s: structured content is not JSON: %v", name, err)
	}
	if err := s.outputSchema(name).Validate(&v); err != nil {
		s.t.Fatalf("%s: result does not match the output schema: %v\n%s", name, err, structured)
	}
	// The reference memory server's tools answer with the reference's
	// text (TestReferenceDifferential compares it); every other tool's text
	// is its structured content.
	if !referenceTools[name] && !jsonEqual(structured, []byte(text.Text)) {
		s.t.Fatalf("%s: structured content %s differs from text %s", name, structured, text.Text)
	}
	if referenceTools[name] {
		return structured, false
	}
	return []byte(text.Text), false
}

// referenceTools are the reference memory server's nine tools.
var referenceTools = map[string]bool{"create_entities": true, "create_relations": true, "add_observations": true,
	"delete_entities": true, "delete_observations": true, "delete_relations": true,
	"read_graph": true, "search_nodes": true, "open_nodes": true}

// ok calls a tool that must succeed and decodes its result into out.
func (s *server) ok(name string, args any, out any) {
	s.t.Helper()
	b, isErr := s.call(name, args)
	if isErr {
		s.t.Fatalf("%s(%v): tool error: %s", name, args, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s: decoding %s: %v", name, b, err)
		}
	}
}

// fails calls a tool that must fail with a tool error containing want.
func (s *server) fails(name string, args any, want string) {
	s.t.Helper()
	b, isErr := s.call(name, args)
	if !isErr {
		s.t.Fatalf("%s(%v) succeeded (%s), want an error containing %q", name, args, b, want)
	}
	if !strings.Contains(string(b), want) {
		s.t.Fatalf("%s(%v): error %q does not contain %q", name, args, b, want)
	}
	if strings.Contains(string(b), "\n") {
		s.t.Fatalf("%s: error is not one line: %q", name, b)
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// asMap decodes one JSON object.
func asMap(t testing.TB, b []byte) map[string]any {
	t.Helper()
	return decodeObject(t, b)
}

// field decodes the JSON value under key of object b.
func field(t testing.TB, b []byte, key string) any {
	t.Helper()
	return asMap(t, b)[key]
}

// cliEdges is cliJSON for get-out/get-in: a key with no node and no edges
// at the view is exit 1 on the CLI (with a suggestion, SPEC §6.2) where the
// MCP tools answer an empty list; both mean no edges.
func cliEdges(t testing.TB, db string, args ...string) []map[string]any {
	t.Helper()
	out, errOut, code := tryCLI(t, "", append([]string{"--db", db, "--json"}, args...)...)
	if code == 1 && strings.Contains(errOut, "no such node and no edges") {
		return nil
	}
	if code != 0 {
		t.Fatalf("memctl %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line != "" {
			recs = append(recs, decodeObject(t, []byte(line)))
		}
	}
	return recs
}
