package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/memctl/memctl/replica/natstest"
)

// TestRemoteTeam: two stores bound to one stream through the CLI (remote
// add publishing one's history and applying it to the other), writes on
// either seen by reads on the other, status and sync, a store with another
// history refused, the server down (writes exit 5 changing nothing, reads
// answer with a warning), remote remove.
func TestRemoteTeam(t *testing.T) {
	srv := natstest.Start(t, t.TempDir())
	url := srv.URL("team")
	a, b, c := newStore(t), newStore(t), newStore(t)
	ok(t, "--db", a, "put-node", "decision:errors", "--payload", `{"rule":"wrap"}`)
	ok(t, "--db", a, "put-kv", "repo", "ops", "deploy", `{"how":"make"}`)

	if got := ok(t, "--db", a, "remote", "add", url); !strings.Contains(got, "revision 2 (0 revisions matched the stream, 2 published, 0 applied)") {
		t.Fatalf("remote add a: %q", got)
	}
	if got := ok(t, "--db", b, "remote", "add", url); !strings.Contains(got, "revision 2 (0 revisions matched the stream, 0 published, 2 applied)") {
		t.Fatalf("remote add b: %q", got)
	}
	if fingerprint(t, a) != fingerprint(t, b) {
		t.Fatal("after remote add, b's history differs from a's")
	}
	// A write on b; a read on a catches up first.
	if got := ok(t, "--db", b, "put-edge", "decision:errors", "constrains", "file:cli/app.go"); revOf(t, got) != 3 {
		t.Fatalf("write on b: %q", got)
	}
	if got := ok(t, "--db", a, "get-in", "file:cli/app.go"); !strings.Contains(got, "decision:errors") {
		t.Fatalf("read on a does not see b's write: %q", got)
	}
	// Another write on b: a's status shows the lag without catching up.
	ok(t, "--db", b, "put-node", "decision:tests")
	st := ok(t, "--db", a, "status")
	for _, line := range []string{"revision 3 (remote position 3)", "remote: " + url, "stream: revision 4 (position 4)", "lag: 1 revisions"} {
		if !containsLine(st, line) {
			t.Fatalf("status lacks %q:\n%s", line, st)
		}
	}
	if got := ok(t, "--db", a, "sync"); !strings.Contains(got, "applied 1 revisions") {
		t.Fatalf("sync: %q", got)
	}
	if got := ok(t, "--db", a, "--json", "status"); !strings.Contains(got, `"lag":0`) || !strings.Contains(got, `"stream_rev":4`) {
		t.Fatalf("status --json after sync: %q", got)
	}
	if fingerprint(t, a) != fingerprint(t, b) {
		t.Fatal("after sync, a's history differs from b's")
	}

	// c has a history of its own: refused, nothing published, not bound.
	ok(t, "--db", c, "put-node", "decision:other")
	before := fingerprint(t, c)
	wantFailure(t, memctl(t, "--db", c, "remote", "add", url), ExitCorrupt, "revision 1", "not a prefix")
	if fingerprint(t, c) != before {
		t.Fatal("a refused remote add changed the store")
	}
	if _, err := os.Stat(filepath.Join(c, "remote.json")); !os.IsNotExist(err) {
		t.Fatalf("a refused remote add left remote.json: %v", err)
	}
	if got := ok(t, "--db", a, "status"); !strings.Contains(got, "stream: revision 4") {
		t.Fatalf("the refused store published something: %q", got)
	}

	// Credentials are never part of the address.
	wantFailure(t, memctl(t, "--db", c, "remote", "add", strings.Replace(url, "nats://", "nats://u:p@", 1)), ExitUsage, "credentials are never part of the address")

	// The server down: writes fail with one line, exit 5, no change;
	// reads answer from the local replica and say so.
	srv.Stop()
	local := func(db string) string { return ok(t, "--db", db, "--local", "--json", "diff-since", "0") }
	before = local(a)
	wantFailure(t, memctl(t, "--db", a, "put-node", "decision:offline"), ExitUnexpected, "cannot reach")
	if local(a) != before {
		t.Fatal("a failed write changed the store")
	}
	r := memctl(t, "--db", a, "get-node", "decision:tests")
	if r.Code != 0 || !strings.Contains(r.Stderr, "may be behind") || !strings.Contains(r.Stdout, "decision:tests") {
		t.Fatalf("read with the server down: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	if r := memctl(t, "--db", a, "--local", "get-node", "decision:tests"); r.Code != 0 || r.Stderr != "" {
		t.Fatalf("--local read: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if got := ok(t, "--db", a, "status"); !strings.Contains(got, "stream: unreachable") {
		t.Fatalf("status with the server down: %q", got)
	}
	// compact writes no revision: it needs no remote.
	ok(t, "--db", a, "compact", "--retain", "2")
	srv.Restart()
	if got := ok(t, "--db", a, "put-node", "decision:online"); revOf(t, got) != 5 {
		t.Fatalf("write after restart: %q", got)
	}

	// A bound store without its binding file refuses writes.
	if err := os.Remove(filepath.Join(b, "remote.json")); err != nil {
		t.Fatal(err)
	}
	wantFailure(t, memctl(t, "--db", b, "put-node", "decision:lost"), ExitUsage, "bound to a remote", "remote remove")
	// remote remove: a single-machine store again.
	if got := ok(t, "--db", b, "remote", "remove"); !strings.Contains(got, "unbound") {
		t.Fatalf("remote remove: %q", got)
	}
	if got := ok(t, "--db", b, "put-node", "decision:local"); revOf(t, got) != 5 {
		t.Fatalf("write after remote remove: %q", got)
	}
	if got := ok(t, "--db", b, "status"); !strings.Contains(got, "remote: none") {
		t.Fatalf("status after remote remove: %q", got)
	}
}

// TestCloneCLI: publish-snapshot, then clone: the clone starts from the
// snapshot's revision and ends with the writer's history.
func TestCloneCLI(t *testing.T) {
	srv := natstest.Start(t, t.TempDir())
	url := srv.URL("boot")
	a := newStore(t)
	ok(t, "--db", a, "remote", "add", url)
	for _, k := range []string{"decision:a", "decision:b", "decision:c"} {
		ok(t, "--db", a, "put-node", k)
	}
	if got := ok(t, "--db", a, "publish-snapshot"); !strings.Contains(got, "published a snapshot of revision 3") {
		t.Fatalf("publish-snapshot: %q", got)
	}
	ok(t, "--db", a, "put-node", "decision:d")
	dir := filepath.Join(t.TempDir(), "clone")
	if got := ok(t, "clone", url, dir); !strings.Contains(got, "snapshot of revision 3") || !strings.Contains(got, "then revisions 4 to 4") {
		t.Fatalf("clone: %q", got)
	}
	if fingerprint(t, a) != fingerprint(t, dir) {
		t.Fatal("the clone's history differs")
	}
	if got := ok(t, "--db", dir, "put-node", "decision:from-clone"); revOf(t, got) != 5 {
		t.Fatalf("write on the clone: %q", got)
	}
	if got := ok(t, "--db", a, "get-node", "decision:from-clone"); !strings.Contains(got, "decision:from-clone") {
		t.Fatalf("the writer does not see the clone's write: %q", got)
	}
	wantFailure(t, memctl(t, "clone", url, dir), ExitUsage, "already exists")
	wantFailure(t, memctl(t, "--db", newStore(t), "publish-snapshot"), ExitUsage, "not bound")
	if r := memctl(t, "--db", dir, "check"); r.Code != 0 {
		t.Fatalf("check of the clone: %d %s", r.Code, r.Stderr)
	}
}

// TestMCPCatchesUp: a memctl mcp server on a bound store answers each
// tool call after catching up: a write made on another machine after the
// server started is seen by its next call.
func TestMCPCatchesUp(t *testing.T) {
	srv := natstest.Start(t, t.TempDir())
	url := srv.URL("mcp")
	a, b := newStore(t), newStore(t)
	ok(t, "--db", a, "remote", "add", url)
	ok(t, "--db", b, "remote", "add", url)
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_node","arguments":{"key":"decision:from-b"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"put_node","arguments":{"key":"decision:from-a-mcp"}}}
`
	// The server reads its input only after it opened (and caught up)
	// the store: b writes at that first read.
	var out, errb strings.Builder
	code := Run([]string{"memctl", "--db", a, "mcp"}, Env{
		Stdin: &firstReadHook{r: strings.NewReader(in), hook: func() {
			ok(t, "--db", b, "put-node", "decision:from-b", "--payload", `{"by":"b"}`)
		}},
		Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string {
			if k == envNoSync {
				return "1"
			}
			return ""
		},
	})
	r := result{Stdout: out.String(), Stderr: errb.String(), Code: code}
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	for _, want := range []string{`\"payload\":{\"by\":\"b\"}`, `{\"rev\":2,`} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("output lacks %s:\n%s", want, r.Stdout)
		}
	}
	if got := ok(t, "--db", b, "get-node", "decision:from-a-mcp"); !strings.Contains(got, "decision:from-a-mcp") {
		t.Fatalf("b does not see the mcp server's write: %q", got)
	}
}

// firstReadHook runs hook once, at the first Read, then reads r.
type firstReadHook struct {
	r    io.Reader
	hook func()
	done bool
}

func (f *firstReadHook) Read(p []byte) (int, error) {
	if !f.done {
		f.done = true
		f.hook()
	}
	return f.r.Read(p)
}

// TestRemoteCredentials: a server that wants a password; the credentials
// come from flags or NATS_* variables and end up in no file of the store,
// no telemetry event and no output.
func TestRemoteCredentials(t *testing.T) {
	const user, secret = "agent", "s3cret-pw-41f7"
	srv := natstest.StartAuth(t, t.TempDir(), user, secret)
	url := srv.URL("auth")
	a := newStore(t)
	tele := filepath.Join(t.TempDir(), "tele.jsonl")
	wantFailure(t, memctl(t, "--db", a, "remote", "add", url), ExitUnexpected, "cannot reach", "uthorization")
	env := map[string]string{"NATS_USER": user, "NATS_PASSWORD": secret, envTelemetry: tele}
	for _, args := range [][]string{
		{"--db", a, "remote", "add", url},
		{"--db", a, "put-node", "decision:x"},
		{"--db", a, "get-node", "decision:x"},
		{"--db", a, "--json", "status"},
		{"--db", a, "--json", "diff-since", "0"},
	} {
		r := runEnv(t, "", env, args...)
		if r.Code != 0 || strings.Contains(r.Stdout+r.Stderr, secret) {
			t.Fatalf("%v: exit %d, %q %q", args, r.Code, r.Stdout, r.Stderr)
		}
	}
	// Flags work as well as the environment.
	if r := memctl(t, "--db", a, "--nats-user", user, "--nats-password", secret, "put-node", "decision:y"); r.Code != 0 {
		t.Fatalf("flags: %d %s", r.Code, r.Stderr)
	}
	// Without credentials a write fails and a read answers locally.
	wantFailure(t, memctl(t, "--db", a, "put-node", "decision:z"), ExitUnexpected, "uthorization")
	files, _ := filepath.Glob(filepath.Join(a, "*"))
	files = append(files, tele)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), secret) {
			t.Fatalf("%s holds the password", f)
		}
	}
	if len(files) < 4 {
		t.Fatalf("expected the store's files and telemetry, got %v", files)
	}
}

// TestRemoteHostileMessage: a message on the stream's subject that is not
// the next revision stops sync and writes with exit 3 naming its sequence,
// and changes nothing; reads still answer, with the warning.
func TestRemoteHostileMessage(t *testing.T) {
	srv := natstest.Start(t, t.TempDir())
	url := srv.URL("hostile")
	a := newStore(t)
	ok(t, "--db", a, "remote", "add", url)
	ok(t, "--db", a, "put-node", "decision:good")
	nc, err := nats.Connect(srv.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	m := nats.NewMsg("memctl.hostile.log")
	m.Header.Set("Memctl-Format", "1")
	m.Header.Set("Memctl-Rev", "2")
	m.Data = []byte("garbage")
	if _, err := nc.RequestMsg(m, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	local := func() string { return ok(t, "--db", a, "--local", "--json", "diff-since", "0") }
	before := local()
	wantFailure(t, memctl(t, "--db", a, "sync"), ExitCorrupt, "remote position 2")
	wantFailure(t, memctl(t, "--db", a, "put-node", "decision:next"), ExitCorrupt, "remote position 2")
	if local() != before {
		t.Fatal("a refused message changed the store")
	}
	if r := memctl(t, "--db", a, "get-node", "decision:good"); r.Code != 0 || !strings.Contains(r.Stderr, "may be behind") {
		t.Fatalf("read: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestMCPRemoteDown: memctl mcp on a bound store starts with its remote
// down: reads answer from the local replica, a write is a tool error that
// names the remote and changes nothing.
func TestMCPRemoteDown(t *testing.T) {
	srv := natstest.Start(t, t.TempDir())
	a := newStore(t)
	ok(t, "--db", a, "remote", "add", srv.URL("down"))
	ok(t, "--db", a, "put-node", "decision:kept")
	srv.Stop()
	before := ok(t, "--db", a, "--local", "--json", "diff-since", "0")
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_node","arguments":{"key":"decision:kept"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"put_node","arguments":{"key":"decision:offline"}}}
`
	r := runEnv(t, in, nil, "--db", a, "mcp")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stdout, `"id":2,"result":{"content":[{"type":"text","text":"{\"key\":\"decision:kept\"`) {
		t.Errorf("the read did not answer from the local replica:\n%s", r.Stdout)
	}
	if !strings.Contains(r.Stdout, `"id":3,"result":{"content":[{"type":"text","text":"remote unavailable`) || !strings.Contains(r.Stdout, `"isError":true`) {
		t.Errorf("the write is not a tool error naming the remote:\n%s", r.Stdout)
	}
	if got := ok(t, "--db", a, "--local", "--json", "diff-since", "0"); got != before {
		t.Fatal("a failed write changed the store")
	}
	srv.Restart()
}

// TestMCPSnapshotEvery: memctl mcp --snapshot-every 2 publishes a
// bootstrap snapshot once the store is two revisions past the published
// one (none here); a clone then starts from it.
func TestMCPSnapshotEvery(t *testing.T) {
	srv := natstest.Start(t, t.TempDir())
	url := srv.URL("every")
	a := newStore(t)
	ok(t, "--db", a, "remote", "add", url)
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"put_node","arguments":{"key":"decision:a"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"put_node","arguments":{"key":"decision:b"}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"put_node","arguments":{"key":"decision:c"}}}
`
	if r := runEnv(t, in, nil, "--db", a, "mcp", "--snapshot-every", "2"); r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	dir := filepath.Join(t.TempDir(), "c")
	var c struct {
		SnapshotRev uint64 `json:"snapshot_rev"`
		Rev         uint64 `json:"rev"`
	}
	if err := jsonUnmarshal(ok(t, "--json", "clone", url, dir), &c); err != nil {
		t.Fatal(err)
	}
	if c.SnapshotRev < 2 || c.Rev != 3 {
		t.Fatalf("clone: snapshot of revision %d, at %d; want a snapshot of 2 or 3, at 3", c.SnapshotRev, c.Rev)
	}
	wantFailure(t, memctl(t, "--db", a, "mcp", "--snapshot-every", "-1"), ExitUsage, "--snapshot-every")
}
