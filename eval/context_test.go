package eval

import (
	"slices"
	"strings"
	"testing"

	"github.com/memctl/memctl/bpe"
	"github.com/memctl/memctl/contextpack"
	"github.com/memctl/memctl/ingest"
)

// TestBudgetedPredictors: the context predictor answers exactly the files
// the rendered pack names (checked against the Markdown an agent reads),
// and the repository map never passes its budget.
func TestBudgetedPredictors(t *testing.T) {
	r, cs := history(t)
	repo, err := OpenRepo(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newBuilder(repo, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.close(); err != nil {
			t.Error(err)
		}
	}()
	m, err := b.at(cs[4])
	if err != nil {
		t.Fatal(err)
	}
	rank, err := ContextPack(2000).Open(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := rank("x.go")
	if err != nil {
		t.Fatal(err)
	}
	a := contextpack.New(m.Store, contextpack.Options{SnapshotPath: "-"})
	defer a.Close()
	p, err := a.Assemble(contextpack.Request{Targets: []string{ingest.FileKey("x.go")}, Budget: 2000})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"y.go", "z.go", "w.go"} {
		inPack := strings.Contains(p.Markdown, "file:"+f) || strings.Contains(p.Markdown, " "+f+":")
		if inPack != slices.Contains(got, f) {
			t.Errorf("%s: in the Markdown %v, in the answer %v (answer %v)\n%s", f, inPack, slices.Contains(got, f), got, p.Markdown)
		}
	}
	if !slices.Contains(got, "y.go") {
		t.Errorf("the pack of x.go does not name y.go, its most frequent co-change: %v", got)
	}
	// The repository map at a budget that holds one file's entry only.
	rm, err := RepoMap(12).Open(m)
	if err != nil {
		t.Fatal(err)
	}
	files, err := rm("x.go")
	if err != nil {
		t.Fatal(err)
	}
	defs, err := definedNames(m)
	if err != nil {
		t.Fatal(err)
	}
	enc := bpe.O200kBase()
	used := 0
	for _, f := range files {
		var sb strings.Builder
		sb.WriteString(f + ":\n")
		for _, d := range defs[f] {
			sb.WriteString("│ " + d + "\n")
		}
		used += enc.Count(sb.String())
	}
	if used > 12 || len(files) == 0 {
		t.Errorf("repomap-12 answered %v, %d tokens", files, used)
	}
}
