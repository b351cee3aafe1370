package mcpserver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMissingStore: without a store, `memctl mcp` still speaks the
// protocol and answers initialize with an error naming the path and the
// fix (a client would otherwise see only "Connection closed"); with --init
// it creates the store and serves it.
func TestMissingStore(t *testing.T) {
	db := filepath.Join(t.TempDir(), "nowhere", "db")
	connect := func(args ...string) (*mcp.ClientSession, error) {
		cmd := exec.Command(memctlBin, append([]string{"--db", db, "mcp"}, args...)...)
		cmd.Env = testEnv()
		client := mcp.NewClient(&mcp.Implementation{Name: "memctl-test", Version: "1"}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	}
	_, err := connect()
	if err == nil {
		t.Fatal("initialize succeeded without a store")
	}
	for _, want := range []string{"no store at " + db, "memctl --db " + db + " init", "mcp --init"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("initialize error %q does not say %q", err, want)
		}
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a server without --init created the store: %v", err)
	}
	sess, err := connect("--init", "--tools", "core")
	if err != nil {
		t.Fatalf("mcp --init: %v", err)
	}
	defer sess.Close()
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "put_node", Arguments: map[string]any{"key": "decision:x"}})
	if err != nil || res.IsError {
		t.Fatalf("put_node on the store --init created: %v %+v", err, res)
	}
}

// TestToolsFlag: --tools picks what tools/list offers; a bad value is a
// usage error before anything starts.
func TestToolsFlag(t *testing.T) {
	db := newStore(t)
	for spec, want := range map[string][]string{
		"":                       {"context", "get_kv", "get_node", "history", "impact", "put_edge", "put_kv", "put_node", "related", "search", "supersede"},
		"reference,+history":     {"add_observations", "create_entities", "create_relations", "delete_entities", "delete_observations", "delete_relations", "history", "open_nodes", "read_graph", "search_nodes"},
		"core,-impact,+pagerank": {"context", "get_kv", "get_node", "history", "pagerank", "put_edge", "put_kv", "put_node", "related", "search", "supersede"},
	} {
		args := []string{"--tools", spec}
		if spec == "" {
			args = []string{"--tools=core"} // the default; startServer would pick all
		}
		s := startServer(t, db, args...)
		res, err := s.sess.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tool := range res.Tools {
			got = append(got, tool.Name)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("--tools %q: %v, want %v", spec, got, want)
		}
		s.close()
	}
	if _, errOut, code := tryCLI(t, "", "--db", db, "mcp", "--tools", "core,+nope"); code != 2 || !strings.Contains(errOut, `"nope" is neither a tool set`) {
		t.Errorf("--tools core,+nope: exit %d: %s", code, errOut)
	}
}
