package mcpserver

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/memctl/memctl/bpe"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listTools is the tools/list result of a server offering sel, as the
// bytes a client receives.
func listTools(t *testing.T, store *lmdbstore.Store, sel ToolSelection) (names []string, result []byte) {
	t.Helper()
	s := New(store, Options{Tools: sel})
	defer s.snaps.Close()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return names, b
}

func testStore(t *testing.T) *lmdbstore.Store {
	t.Helper()
	store, err := lmdbstore.Init(filepath.Join(t.TempDir(), "db"), lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// TestToolSetSizes: the default tool list stays lean (at most 12 tools and
// 12 KB of tools/list JSON), every set offers exactly its tools, and all
// offers every tool of every set. The sizes are logged for README.
func TestToolSetSizes(t *testing.T) {
	store := testStore(t)
	enc := bpe.O200kBase()
	for _, spec := range []string{"core", "memory", "analysis", "reference", "all"} {
		sel, err := ParseTools(spec)
		if err != nil {
			t.Fatal(err)
		}
		names, b := listTools(t, store, sel)
		t.Logf("%-9s %2d tools, %6d bytes, %6d o200k tokens", spec, len(names), len(b), enc.Count(string(b)))
		want := toolSets[spec]
		if spec == "all" {
			want = knownTools()
		}
		want = slices.Clone(want)
		sort.Strings(want)
		got := slices.Clone(names)
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Errorf("--tools %s offers %v, want %v", spec, got, want)
		}
		if spec == DefaultTools && (len(names) > 12 || len(b) > 12*1024) {
			t.Errorf("the default tool list is %d tools and %d bytes: at most 12 tools and %d bytes", len(names), len(b), 12*1024)
		}
	}
}

func TestParseTools(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []string // offered, of a few probes
		err  string
	}{
		{spec: "core", want: []string{"context", "put_kv", "supersede"}},
		{spec: "core,+diff_since", want: []string{"context", "diff_since"}},
		{spec: "core,-impact", want: []string{"context"}},
		{spec: "reference,history", want: []string{"read_graph", "history"}},
		{spec: "all,-batch", want: []string{"context", "read_graph", "stats"}},
		{spec: "core,+nope", err: `"nope" is neither a tool set`},
		{spec: "core,", err: "an empty item"},
		{spec: "-core", err: "leaves no tool"},
		{spec: "-all", err: "-all leaves nothing"},
	} {
		sel, err := ParseTools(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.spec, err)
			continue
		}
		for _, n := range tc.want {
			if !sel.offers(n) {
				t.Errorf("%q does not offer %s", tc.spec, n)
			}
		}
	}
	sel, _ := ParseTools("core,-impact")
	if sel.offers("impact") || sel.offers("batch") {
		t.Error("core,-impact offers impact or batch")
	}
	sel, _ = ParseTools("all,-batch")
	if sel.offers("batch") || !sel.offers("some_new_tool") {
		t.Error("all,-batch: batch offered, or a tool of no set not offered")
	}
}
