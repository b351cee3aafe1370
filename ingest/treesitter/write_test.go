package treesitter

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/lmdbstore"
)

func newStore(t *testing.T) *lmdbstore.Store {
	t.Helper()
	s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "db"), lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// ingestCode runs what `ingest python|…` does: extract with the stored
// tree hashes, write the languages extracted.
func ingestCode(t *testing.T, s *lmdbstore.Store, dir string, langs ...string) (*Result, ingest.WriteStats) {
	t.Helper()
	opts := Options{SkipIfTreeHash: make(map[string]string)}
	for _, l := range langs {
		h, err := ingest.StoredLangTreeHash(s, l)
		if err != nil {
			t.Fatal(err)
		}
		opts.SkipIfTreeHash[l] = h
	}
	res, err := Extract(dir, langs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Extracted) == 0 {
		return res, ingest.WriteStats{}
	}
	st, err := ingest.WriteCode(s, res.Graph, res.Extracted, lmdbstore.WriteMeta{RunID: "r"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res, st
}

// storeKeys lists the live node keys of the store.
func storeKeys(t *testing.T, s *lmdbstore.Store) []string {
	t.Helper()
	var keys []string
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		return r.ScanNodes(lmdbstore.At{}, func(n lmdbstore.Node) error {
			keys = append(keys, n.Key)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	return keys
}

// changedSince lists "op key" for every node operation after rev.
func changedSince(t *testing.T, s *lmdbstore.Store, rev lmdbstore.Revision) []string {
	t.Helper()
	var out []string
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		return r.DiffSince(lmdbstore.AtRevision(rev), lmdbstore.DiffFilter{}, func(op lmdbstore.Op) error {
			switch op.Kind {
			case lmdbstore.OpPutNode, lmdbstore.OpDelNode:
				out = append(out, op.Kind.String()+" "+op.NodeKey)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func TestIncrementalWrites(t *testing.T) {
	dir := copyFixture(t, "python", nil)
	s := newStore(t)
	_, st := ingestCode(t, s, dir, ingest.LangPython)
	if st.Commit.Rev == 0 || st.NodesPut == 0 {
		t.Fatalf("first ingest wrote nothing: %+v", st)
	}
	first := st.Commit.Rev
	// Unchanged tree: extraction is skipped, nothing written.
	res, st := ingestCode(t, s, dir, ingest.LangPython)
	if !res.Lang(ingest.LangPython).Unchanged || st.Commit.Rev != 0 {
		t.Fatalf("second ingest of an unchanged tree: %+v %+v", res.Langs, st)
	}
	// Remove shadow() from util.py and add a function: one revision with
	// util.py's node, the new symbol, the tombstone and ingest:python.
	util := filepath.Join(dir, "pkg", "util.py")
	b, _ := os.ReadFile(util)
	src := strings.Replace(string(b), "def shadow(helper):\n    return helper()\n", "def fresh():\n    return helper(1)\n", 1)
	if err := os.WriteFile(util, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, st = ingestCode(t, s, dir, ingest.LangPython)
	if st.Commit.Rev != first+1 {
		t.Fatalf("edit: rev %d, want %d", st.Commit.Rev, first+1)
	}
	want := []string{
		"del_node sym:py:pkg.util.shadow",
		"put_node file:pkg/util.py",
		"put_node ingest:python",
		"put_node sym:py:pkg.util.fresh",
	}
	if got := changedSince(t, s, first); !slices.Equal(got, want) {
		t.Errorf("after editing util.py:\n got %q\nwant %q", got, want)
	}
}

// Each language owns its share: ingesting one never deletes another's
// nodes, and directories stay while any language has files below them.
func TestLanguagesShareTheStore(t *testing.T) {
	dir := t.TempDir()
	for rel, content := range map[string]string{
		"go.mod":       "module example.com/mixed\n\ngo 1.22\n",
		"a/a.go":       "package a\n\nfunc A() {}\n",
		"a/helper.py":  "def helper():\n    pass\n",
		"b/b.py":       "from a.helper import helper\n\n\ndef b():\n    helper()\n",
		"web/index.ts": "export function hello() {}\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := newStore(t)
	ingestCode(t, s, dir, ingest.LangPython)
	goRes, err := ingest.ExtractGo(dir, ingest.GoOptions{SyntaxOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.WriteGo(s, goRes.Graph, lmdbstore.WriteMeta{}, nil); err != nil {
		t.Fatal(err)
	}
	ingestCode(t, s, dir, ingest.LangTypeScript)
	keys := storeKeys(t, s)
	for _, k := range []string{"dir:.", "dir:a", "dir:b", "dir:web", "file:a/a.go", "file:a/helper.py", "file:b/b.py",
		"file:web/index.ts", "sym:example.com/mixed/a.A", "sym:py:helper.helper", "sym:py:b.b", "sym:ts:web/index.ts#hello",
		"ingest:go", "ingest:python", "ingest:typescript"} {
		if !slices.Contains(keys, k) {
			t.Errorf("missing %s after ingest python, go, typescript; have %q", k, keys)
		}
	}
	// Python files gone: ingest python removes its nodes, and dir:b (no
	// file of any language left) but not dir:a (a.go) nor dir:web.
	os.Remove(filepath.Join(dir, "a", "helper.py"))
	os.Remove(filepath.Join(dir, "b", "b.py"))
	ingestCode(t, s, dir, ingest.LangPython)
	keys = storeKeys(t, s)
	for _, k := range []string{"file:a/helper.py", "file:b/b.py", "sym:py:b.b", "dir:b"} {
		if slices.Contains(keys, k) {
			t.Errorf("%s still there after its files were removed", k)
		}
	}
	for _, k := range []string{"dir:.", "dir:a", "dir:web", "file:a/a.go", "sym:example.com/mixed/a.A", "sym:ts:web/index.ts#hello"} {
		if !slices.Contains(keys, k) {
			t.Errorf("%s deleted by ingest python", k)
		}
	}
}

// The tree hash follows SPEC §9.3's formula, rules version first, so a
// change of the extraction rules makes an incremental ingest read the
// language again. The expected value is computed from the SPEC's text.
func TestTreeHashFormula(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj")
	src := []byte("def f():\n    pass\n")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "m.py"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Extract(dir, []string{ingest.LangPython}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	file := sha256.Sum256(src)
	want := sha256.Sum256([]byte("ingest-python 2\nroot proj\nvendor false testdata false hidden false\nprefix \nfamily python\n" +
		"m.py\x00sha256:" + hex.EncodeToString(file[:]) + "\n"))
	if got := res.Lang(ingest.LangPython).TreeHash; got != "sha256:"+hex.EncodeToString(want[:]) {
		t.Errorf("tree hash %s, want sha256:%x", got, want)
	}
}
