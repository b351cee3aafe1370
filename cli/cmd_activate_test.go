package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/snapshot"
)

// engineFixture is the hand-checked graph of engines' tests, with keys a
// code graph would have: a→b (1), b→c (.5), a→c (.25), c→d (1),
// e -related→ a (bidirectional), a -blocks→ f (inhibitory), b→f (1).
func engineFixture() *snapshot.MemState {
	keys := []string{"pkg/a.go", "pkg/b.go", "pkg/c.go", "pkg/d.go", "pkg/e.go", "pkg/f.go"}
	st := &snapshot.MemState{Rev: 1, Time: 1, Rels: []snapshot.RelationRecord{
		{ID: 1, Name: "uses", DefaultWeight: 1},
		{ID: 2, Name: "related", DefaultWeight: 1, Bidirectional: true},
		{ID: 3, Name: "blocks", DefaultWeight: 1, Inhibitory: true},
	}}
	for i, k := range keys {
		st.NodeList = append(st.NodeList, snapshot.NodeRecord{ID: uint64(i + 1), Key: k, Type: "file", Rev: 1, CreatedRev: 1, CreatedTS: 1, UpdatedTS: 1})
	}
	for _, e := range []struct {
		s, d int
		rel  uint32
		w    float32
	}{{0, 1, 1, 1}, {1, 2, 1, .5}, {0, 2, 1, .25}, {2, 3, 1, 1}, {4, 0, 2, 1}, {0, 5, 3, 1}, {1, 5, 1, 1}} {
		st.EdgeList = append(st.EdgeList, snapshot.EdgeRecord{Src: uint64(e.s + 1), Dst: uint64(e.d + 1), Rel: e.rel, Weight: e.w, Rev: 1, TS: 1})
	}
	st.Sort()
	return st
}

// writeFixture writes the fixture snapshot, with the PageRank section when
// withPageRank, and returns its path.
func writeFixture(t *testing.T, withPageRank bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "graph.snap")
	opts := snapshot.WriterOptions{}
	if withPageRank {
		opts.Extra = engines.PageRankSection
	}
	if _, err := snapshot.WriteFile(path, engineFixture(), opts); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestEngineGolden runs every engine command in text and --json form and
// compares the transcript with testdata/engines/cli.golden (rewrite with
// -rewrite). Each command runs twice: the output must be byte-identical.
func TestEngineGolden(t *testing.T) {
	snap := writeFixture(t, true)
	steps := [][]string{
		{"activate", "--snapshot", snap, "pkg/a.go"},
		{"--json", "activate", "--snapshot", snap, "pkg/a.go", "--depth", "1"},
		{"activate", "--snapshot", snap, "pkg/a.go", "--rel", "uses", "--top", "3", "--temporal", "0"},
		{"activate", "--snapshot", snap, "pkg/a.go", "--profile", "classic"},
		{"--json", "activate", "--snapshot", snap, "pkg/a.go", "--profile", "classic"},
		{"activate", "--snapshot", snap, "pkg/a.go", "--profile", "classic", "--depth", "2", "--top", "3"},
		{"activate", "--snapshot", snap, "pkg/a.go", "--profile", "classic", "--rel", "uses", "--strategy", "heap"},
		{"activate", "--snapshot", snap, "b.go", "pkg/e", "--profile", "classic"},
		{"activate", "--snapshot", snap, "pkg/a.go", "--strategy", "heap"},
		{"activate", "--snapshot", snap, "pkg/a.go", "--profile", "classic", "--temporal", "1"},
		{"activate", "--snapshot", snap, "pkg/a.go", "--profile", "fast"},
		{"resonate", "--snapshot", snap, "pkg/a.go", "--top", "4"},
		{"--json", "resonate", "--snapshot", snap, "pkg/d.go", "--sweep", "--top", "3"},
		{"resonate", "--snapshot", snap, "pkg/d.go", "--sweep", "--top", "3"},
		{"pagerank", "--snapshot", snap},
		{"--json", "pagerank", "--snapshot", snap, "--weighted", "--top", "2"},
		{"impact", "--snapshot", snap, "pkg/c.go"},
		{"impact", "--snapshot", snap, "c.go"},
		{"--json", "impact", "--snapshot", snap, "pkg/c.go", "--direction", "both", "--depth", "1"},
		{"impact", "--snapshot", snap, "pkg/a.go", "--direction", "out", "--rel", "uses,blocks"},
		{"activate", "--snapshot", snap, "nothing-like-this"},
		{"impact", "--snapshot", snap, "pkg/zzz.go"},
		{"activate", "--snapshot", snap, "pkg/a.go", "--rel", "nope"},
		{"activate", "--snapshot", snap, "pkg/a.go", "--profile", "classic", "--strategy", "fast"},
		{"impact", "--snapshot", snap, "pkg/a.go", "--direction", "up"},
		{"pagerank", "--snapshot", snap, "extra"},
	}
	var transcript strings.Builder
	for _, args := range steps {
		r := memctl(t, args...)
		again := memctl(t, args...)
		if again != r {
			t.Errorf("memctl %s: second run differs:\n%q\n%q", shellQuote(args), r.Stdout, again.Stdout)
		}
		fmt.Fprintf(&transcript, "$ memctl %s\n", shellQuote(args))
		transcript.WriteString(r.Stdout)
		if r.Code != 0 {
			if r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 {
				t.Errorf("memctl %s: failure must print one stderr line only: %q %q", shellQuote(args), r.Stdout, r.Stderr)
			}
			fmt.Fprintf(&transcript, "[exit %d] %s", r.Code, r.Stderr)
		} else if r.Stderr != "" {
			t.Errorf("memctl %s: exit 0 with stderr %q", shellQuote(args), r.Stderr)
		}
	}
	got := strings.ReplaceAll(transcript.String(), snap, "$SNAP")
	golden := filepath.Join("..", "testdata", "engines", "cli.golden")
	if *rewrite {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cli -run TestEngineGolden -rewrite to create it)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("transcript differs from %s (-want +got); rerun with -rewrite if intended:\n%s", golden, d)
	}
}

func TestActivateStrategiesPrintTheSame(t *testing.T) {
	snap := writeFixture(t, false)
	base := ok(t, "--json", "activate", "--snapshot", snap, "pkg/a.go", "pkg/d.go", "--top", "0", "--profile", "classic")
	for _, s := range []string{"wavefront", "heap", "auto"} {
		if got := ok(t, "--json", "activate", "--snapshot", snap, "pkg/a.go", "pkg/d.go", "--top", "0", "--profile", "classic", "--strategy", s); got != base {
			t.Errorf("--strategy %s:\n%s\nwant\n%s", s, got, base)
		}
	}
}

func TestEngineCommandsBadUsage(t *testing.T) {
	snap := writeFixture(t, false)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--db", filepath.Join(t.TempDir(), "none"), "activate", "pkg/a.go"}, ExitUsage, "no store"},
		{[]string{"activate", "--snapshot", snap}, ExitUsage, "QUERY"},
		{[]string{"activate", "--snapshot", snap, "pkg/a.go", "--depth", "21"}, ExitUsage, "depth"},
		{[]string{"activate", "--snapshot", snap, "pkg/a.go", "--top", "-1"}, ExitUsage, "--top"},
		{[]string{"impact", "--snapshot", snap}, ExitUsage, "QUERY"},
		{[]string{"impact", "--snapshot", snap, "pkg/a.go", "--depth", "0"}, ExitUsage, "depth"},
		{[]string{"resonate", "--snapshot", snap, "pkg/a.go", "--frequency", "0"}, ExitUsage, "frequency"},
		{[]string{"activate", "--snapshot", filepath.Join(t.TempDir(), "absent"), "x"}, ExitUsage, "absent"}, // a missing file is bad input (#26.5)
	} {
		wantFailure(t, memctl(t, tc.args...), tc.code, tc.msg)
	}
}

// TestEngineCommandsDamagedSnapshot: a snapshot damaged inside its edge
// arrays (section CRCs are only checked by verify) exits 3.
func TestEngineCommandsDamagedSnapshot(t *testing.T) {
	snap := writeFixture(t, false)
	b, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	f, err := snapshot.FromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Sections() {
		if s.Kind == snapshot.KindFwdTargets {
			for i := s.Offset; i < s.Offset+s.Length; i++ {
				b[i] = 0xff
			}
		}
	}
	if err := os.WriteFile(snap, b, 0o644); err != nil {
		t.Fatal(err)
	}
	wantFailure(t, memctl(t, "activate", "--snapshot", snap, "pkg/a.go"), ExitCorrupt, "corrupt")
	wantFailure(t, memctl(t, "impact", "--snapshot", snap, "pkg/c.go", "--direction", "out"), ExitCorrupt, "corrupt")
	wantFailure(t, memctl(t, "pagerank", "--snapshot", snap), ExitCorrupt, "corrupt")
}
