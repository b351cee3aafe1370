package contextpack_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/bpe"
	"github.com/memctl/memctl/contextpack"
	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/roles"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
)

var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// now is the valid-at time of every request: after the expired
// procedure's valid_until, before the future one's valid_from.
var now = base.Add(48 * time.Hour)

// fixture is a small repository's memory, written as five revisions by
// three runs (hand-built, so every expectation below is read off this
// function):
//
//	rev 1 (r1/index):   dirs ., lmdbstore, cli; pkg:lmdbstore contains
//	                    lmdbstore/store.go and read.go; files define
//	                    Open, Get, Run; Run calls Open; store.go and read.go
//	                    co_changed; cli/app.go in dir cli
//	rev 2 (r1/review):  constraint:no-cgo -constrains-> dir:lmdbstore;
//	                    decision:wrap-errors -decided_for-> dir:.;
//	                    kv repo/decisions/locking applies_to lmdbstore/**;
//	                    kv repo/decisions/flags applies_to cli/**;
//	                    decision:old-retry -constrains-> sym Open
//	rev 3 (r2/refactor): decision:new-retry supersedes decision:old-retry
//	                    (and constrains sym Open); kv procedure expired
//	                    (valid until base+1h) and one not yet valid, both
//	                    applies_to lmdbstore/**; Run calls Get
//	rev 4 (r3/fix):     store.go's payload changes; Get -calls-> Open
//	rev 5 (r3/fix):     decision:fast contradicts decision:new-retry,
//	                    decided_for pkg:lmdbstore
func fixture(t *testing.T) *lmdbstore.Store {
	t.Helper()
	n := 0
	s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "db"), lmdbstore.Options{
		NoSync: true,
		Clock: func() time.Time {
			n++
			return base.Add(time.Duration(n) * time.Second)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	const (
		open = "sym:example.com/m/lmdbstore.Open"
		get  = "sym:example.com/m/lmdbstore.Get"
		run  = "sym:example.com/m/cli.Run"
	)
	update := func(run, task string, fn func(tx *lmdbstore.WriteTxn) error) {
		t.Helper()
		if _, err := s.Update(lmdbstore.WriteMeta{RunID: run, TaskID: task}, fn); err != nil {
			t.Fatal(err)
		}
	}
	node := func(tx *lmdbstore.WriteTxn, key, payload string) {
		t.Helper()
		var p json.RawMessage
		if payload != "" {
			p = json.RawMessage(payload)
		}
		if err := tx.PutNode(lmdbstore.NodePut{Key: key, Payload: p}); err != nil {
			t.Fatal(err)
		}
	}
	edge := func(tx *lmdbstore.WriteTxn, src, rel, dst string) {
		t.Helper()
		if err := tx.PutEdge(lmdbstore.EdgePut{Src: src, Rel: rel, Dst: dst}); err != nil {
			t.Fatal(err)
		}
	}
	kv := func(tx *lmdbstore.WriteTxn, ns, key, payload string, v lmdbstore.Validity) {
		t.Helper()
		if err := tx.PutKV(lmdbstore.KVPut{Scope: "repo", Namespace: ns, Key: key, Payload: json.RawMessage(payload), Valid: v}); err != nil {
			t.Fatal(err)
		}
	}
	update("r1", "index", func(tx *lmdbstore.WriteTxn) error {
		if err := addIngestRelations(tx); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{"dir:.", "dir:lmdbstore", "dir:cli"} {
			node(tx, d, "")
		}
		node(tx, "pkg:example.com/m/lmdbstore", `{"dir":"lmdbstore"}`)
		node(tx, "file:lmdbstore/store.go", `{"path":"lmdbstore/store.go"}`)
		node(tx, "file:lmdbstore/read.go", `{"path":"lmdbstore/read.go"}`)
		node(tx, "file:cli/app.go", `{"path":"cli/app.go"}`)
		node(tx, open, `{"path":"lmdbstore/store.go","line_start":10,"line_end":20}`)
		node(tx, get, `{"path":"lmdbstore/read.go","line_start":5,"line_end":9}`)
		node(tx, run, `{"path":"cli/app.go","line_start":3,"line_end":30}`)
		edge(tx, "dir:.", "contains", "dir:lmdbstore")
		edge(tx, "dir:.", "contains", "dir:cli")
		edge(tx, "dir:lmdbstore", "contains", "file:lmdbstore/store.go")
		edge(tx, "dir:lmdbstore", "contains", "file:lmdbstore/read.go")
		edge(tx, "dir:cli", "contains", "file:cli/app.go")
		edge(tx, "pkg:example.com/m/lmdbstore", "contains", "file:lmdbstore/store.go")
		edge(tx, "pkg:example.com/m/lmdbstore", "contains", "file:lmdbstore/read.go")
		edge(tx, "file:lmdbstore/store.go", "defines", open)
		edge(tx, "file:lmdbstore/read.go", "defines", get)
		edge(tx, "file:cli/app.go", "defines", run)
		edge(tx, run, "calls", open)
		edge(tx, "file:lmdbstore/store.go", "co_changed", "file:lmdbstore/read.go")
		return nil
	})
	update("r1", "review", func(tx *lmdbstore.WriteTxn) error {
		node(tx, "constraint:no-cgo", `{"text":"the snapshot reader needs no cgo"}`)
		edge(tx, "constraint:no-cgo", "constrains", "dir:lmdbstore")
		node(tx, "decision:wrap-errors", `{"text":"wrap errors with %w"}`)
		edge(tx, "decision:wrap-errors", "decided_for", "dir:.")
		kv(tx, "decisions", "locking", `{"text":"one writer at a time","applies_to":["lmdbstore/**"]}`, lmdbstore.Validity{})
		kv(tx, "decisions", "flags", `{"text":"flags before arguments","applies_to":["cli/**"]}`, lmdbstore.Validity{})
		node(tx, "decision:old-retry", `{"text":"retry 3 times"}`)
		edge(tx, "decision:old-retry", "constrains", open)
		return nil
	})
	update("r2", "refactor", func(tx *lmdbstore.WriteTxn) error {
		node(tx, "decision:new-retry", `{"text":"retry with backoff"}`)
		edge(tx, "decision:new-retry", "constrains", open)
		if err := tx.Supersede("decision:old-retry", "decision:new-retry"); err != nil {
			t.Fatal(err)
		}
		kv(tx, "procedures", "expired", `{"text":"run the old migration","applies_to":["lmdbstore/**"]}`,
			lmdbstore.Validity{Until: base.Add(time.Hour)})
		kv(tx, "procedures", "future", `{"text":"run the new migration","applies_to":["lmdbstore/**"]}`,
			lmdbstore.Validity{From: now.Add(24 * time.Hour)})
		edge(tx, run, "calls", get)
		return nil
	})
	update("r3", "fix", func(tx *lmdbstore.WriteTxn) error {
		node(tx, "file:lmdbstore/store.go", `{"path":"lmdbstore/store.go","lines":120}`)
		edge(tx, get, "calls", open)
		return nil
	})
	update("r3", "fix", func(tx *lmdbstore.WriteTxn) error {
		node(tx, "decision:fast", `{"text":"never retry"}`)
		edge(tx, "decision:fast", "decided_for", "pkg:example.com/m/lmdbstore")
		edge(tx, "decision:fast", "contradicts", "decision:new-retry")
		return nil
	})
	return s
}

// addIngestRelations registers the relations ingest adds besides the
// built-ins.
func addIngestRelations(tx *lmdbstore.WriteTxn) error {
	for _, r := range []lmdbstore.Relation{
		{Name: "contains", DefaultWeight: 1, Bidirectional: true, Role: roles.Structure},
		{Name: "co_changed", DefaultWeight: 1, Bidirectional: true, Role: roles.History},
	} {
		if _, err := tx.AddRelation(r); err != nil {
			return err
		}
	}
	return nil
}

func assemble(t *testing.T, a *contextpack.Assembler, req contextpack.Request) *contextpack.Pack {
	t.Helper()
	if req.ValidAt.IsZero() {
		req.ValidAt = now
	}
	p, err := a.Assemble(req)
	if err != nil {
		t.Fatalf("Assemble(%v): %v", req.Targets, err)
	}
	return p
}

func appliesKeys(p *contextpack.Pack) []string {
	var keys []string
	for _, a := range p.Applies {
		keys = append(keys, a.Key)
	}
	sort.Strings(keys)
	return keys
}

// TestAppliesHere: policies linked to the target or what encloses it, and
// kv policies whose applies_to covers it; superseded and expired ones are
// hidden and counted, shown with All; contradictions flagged.
func TestAppliesHere(t *testing.T) {
	s := fixture(t)
	a := contextpack.New(s, contextpack.Options{SnapshotPath: "-"})
	defer a.Close()
	locking := contextpack.KVAddress("repo", "decisions", "locking")
	flags := contextpack.KVAddress("repo", "decisions", "flags")
	expired := contextpack.KVAddress("repo", "procedures", "expired")
	future := contextpack.KVAddress("repo", "procedures", "future")

	p := assemble(t, a, contextpack.Request{Targets: []string{"lmdbstore/store.go"}})
	want := []string{"constraint:no-cgo", "decision:fast", "decision:wrap-errors", locking}
	if d := cmp.Diff(want, appliesKeys(p)); d != "" {
		t.Errorf("applies to lmdbstore/store.go (-want +got):\n%s", d)
	}
	// The symbol Open: its file's and package's too, and the retry
	// decisions attached to it (the old one superseded).
	p = assemble(t, a, contextpack.Request{Targets: []string{"sym:example.com/m/lmdbstore.Open"}})
	want = []string{"constraint:no-cgo", "decision:fast", "decision:new-retry", "decision:wrap-errors", locking}
	if d := cmp.Diff(want, appliesKeys(p)); d != "" {
		t.Errorf("applies to Open (-want +got):\n%s", d)
	}
	if p.Superseded["decision"] != 1 {
		t.Errorf("superseded decisions hidden: %v, want 1", p.Superseded)
	}
	if !strings.Contains(p.Markdown, "1 superseded decision") {
		t.Errorf("the Markdown does not count the hidden superseded decision:\n%s", p.Markdown)
	}
	for _, pol := range p.Applies {
		wantConflict := map[string][]string{"decision:new-retry": {"decision:fast"}, "decision:fast": {"decision:new-retry"}}[pol.Key]
		if d := cmp.Diff(wantConflict, pol.Status.Contradicts); d != "" {
			t.Errorf("%s contradictions (-want +got):\n%s", pol.Key, d)
		}
	}
	if !strings.Contains(p.Markdown, "conflicts with decision:fast") {
		t.Errorf("the Markdown does not flag the contradiction:\n%s", p.Markdown)
	}
	// A CLI file: only the repository-wide decision and its own policy.
	p = assemble(t, a, contextpack.Request{Targets: []string{"cli/app.go"}})
	if d := cmp.Diff([]string{"decision:wrap-errors", flags}, appliesKeys(p)); d != "" {
		t.Errorf("applies to cli/app.go (-want +got):\n%s", d)
	}
	// All: history shown, nothing counted as hidden.
	p = assemble(t, a, contextpack.Request{Targets: []string{"sym:example.com/m/lmdbstore.Open"}, All: true})
	want = []string{"constraint:no-cgo", "decision:fast", "decision:new-retry", "decision:old-retry", "decision:wrap-errors", expired, future, locking}
	sort.Strings(want)
	if d := cmp.Diff(want, appliesKeys(p)); d != "" {
		t.Errorf("applies to Open with All (-want +got):\n%s", d)
	}
	// Valid time: once the future procedure is valid it applies.
	p = assemble(t, a, contextpack.Request{Targets: []string{"lmdbstore/store.go"}, ValidAt: now.Add(48 * time.Hour)})
	if !slices.Contains(appliesKeys(p), future) || slices.Contains(appliesKeys(p), expired) {
		t.Errorf("applies two days later: %v", appliesKeys(p))
	}
	// Point in time: at revision 2 the old retry decision was current.
	p = assemble(t, a, contextpack.Request{Targets: []string{"sym:example.com/m/lmdbstore.Open"}, At: lmdbstore.AtRevision(2)})
	if !slices.Contains(appliesKeys(p), "decision:old-retry") || slices.Contains(appliesKeys(p), "decision:new-retry") {
		t.Errorf("applies at revision 2: %v", appliesKeys(p))
	}
}

// TestChangedAndAttempted: "Changed since" defaults to after the previous
// run; "Attempted" lists earlier tasks' operations, newest first.
func TestChangedAndAttempted(t *testing.T) {
	s := fixture(t)
	a := contextpack.New(s, contextpack.Options{SnapshotPath: "-"})
	defer a.Close()
	p := assemble(t, a, contextpack.Request{Targets: []string{"lmdbstore/store.go"}})
	if p.Since.Rev != 3 || p.Since.Run != "r2" {
		t.Errorf("default since: %+v, want after revision 3 (run r2)", p.Since)
	}
	for _, c := range p.Changed {
		if c.Prov.Rev <= 3 {
			t.Errorf("changed since 3 lists revision %d: %+v", c.Prov.Rev, c)
		}
	}
	if !slices.ContainsFunc(p.Changed, func(c contextpack.Change) bool {
		return c.Op == "put_node" && c.Key == "file:lmdbstore/store.go" && c.Prov.Rev == 4
	}) {
		t.Errorf("the target's own change at revision 4 is not listed: %+v", p.Changed)
	}
	// Since a revision: everything after it that touches the target.
	p = assemble(t, a, contextpack.Request{Targets: []string{"lmdbstore/store.go"}, Since: contextpack.Since{Kind: contextpack.SinceRevision, Rev: 0}})
	revs := map[lmdbstore.Revision]bool{}
	for _, c := range p.Changed {
		revs[c.Prov.Rev] = true
	}
	if !revs[1] || !revs[4] {
		t.Errorf("changed since 0 misses the creation (1) or the edit (4): %v", revs)
	}
	// Attempted: earlier (run, task) groups, newest first, never the
	// caller's own task.
	p = assemble(t, a, contextpack.Request{Targets: []string{"lmdbstore/store.go"}, Run: "r3", Task: "fix"})
	var groups []string
	for _, at := range p.Attempted {
		groups = append(groups, at.Run+"/"+at.Task)
	}
	if len(groups) == 0 || slices.Contains(groups, "r3/fix") || groups[len(groups)-1] != "r1/index" {
		t.Errorf("attempted groups %v: want earlier tasks newest first, ending with r1/index, not r3/fix", groups)
	}
	// Since a run that never wrote: not found.
	_, err := a.Assemble(contextpack.Request{Targets: []string{"lmdbstore/store.go"}, Since: contextpack.Since{Kind: contextpack.SinceRun, Run: "nope"}})
	if !errors.Is(err, lmdbstore.ErrNotFound) {
		t.Errorf("since an unknown run: %v", err)
	}
}

// TestRelated: the neighbourhood leaves out the target and what it
// defines, and lists the file it changes with and the caller's file.
func TestRelated(t *testing.T) {
	s := fixture(t)
	a := contextpack.New(s, contextpack.Options{SnapshotPath: "-"})
	defer a.Close()
	p := assemble(t, a, contextpack.Request{Targets: []string{"lmdbstore/store.go"}})
	var keys []string
	for _, n := range p.Related {
		keys = append(keys, n.Key)
	}
	for _, k := range []string{"file:lmdbstore/store.go", "sym:example.com/m/lmdbstore.Open"} {
		if slices.Contains(keys, k) {
			t.Errorf("related lists %s (the target or what it defines): %v", k, keys)
		}
	}
	for _, k := range []string{"file:lmdbstore/read.go", "sym:example.com/m/cli.Run"} {
		if !slices.Contains(keys, k) {
			t.Errorf("related misses %s: %v", k, keys)
		}
	}
	for i := 1; i < len(p.Related); i++ {
		if p.Related[i].Score > p.Related[i-1].Score {
			t.Errorf("related not ranked: %v", p.Related)
		}
	}
}

// TestBudget: the Markdown never exceeds the budget, counted with o200k
// independently of the pack's own count; smaller budgets leave items out
// and say so; the JSON holds exactly the items the Markdown shows.
func TestBudget(t *testing.T) {
	s := fixture(t)
	a := contextpack.New(s, contextpack.Options{SnapshotPath: "-"})
	defer a.Close()
	enc := bpe.O200kBase()
	full := assemble(t, a, contextpack.Request{Targets: []string{"lmdbstore/store.go"}, Budget: 5000})
	fullItems := len(full.Applies) + len(full.Related) + len(full.Changed)
	sawOmission := false
	for budget := 50; budget <= 1200; budget += 10 {
		p, err := a.Assemble(contextpack.Request{Targets: []string{"lmdbstore/store.go"}, Budget: budget, ValidAt: now})
		if err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		if n := enc.Count(p.Markdown); n > budget || n != p.Tokens {
			t.Errorf("budget %d: %d tokens (pack says %d)", budget, n, p.Tokens)
		}
		items := len(p.Applies) + len(p.Related) + len(p.Changed)
		if items < fullItems {
			sawOmission = true
			if !strings.Contains(p.Markdown, "Left out") {
				t.Errorf("budget %d: %d of %d items and no footer saying what was left out", budget, items, fullItems)
			}
		}
		// Applies first (SPEC §12.3): a policy is left out only when its
		// line did not fit when its turn came, before any related item, so
		// what the budget leaves over at the end is smaller than the line
		// (its line in the full pack) with the section heading and the
		// revision times it may add (40 tokens at most here). The footer
		// counts what was left out.
		j := p.JSON()
		if j.Omitted.Applies != len(full.Applies)-len(p.Applies) {
			t.Errorf("budget %d: footer says %d applies left out, %d of %d shown", budget, j.Omitted.Applies, len(p.Applies), len(full.Applies))
		}
		if len(p.Related) > 0 {
			shown := map[string]bool{}
			for _, pol := range p.Applies {
				shown[pol.Key] = true
			}
			for _, pol := range full.Applies {
				line := ""
				for _, l := range strings.Split(full.Markdown, "\n") {
					if strings.HasPrefix(l, "- ") && strings.Contains(l, " — "+pol.Key+" · ") {
						line = l
					}
				}
				if line == "" {
					t.Fatalf("policy %s has no line in the full pack:\n%s", pol.Key, full.Markdown)
				}
				if slack := budget - p.Tokens; !shown[pol.Key] && slack >= enc.Count(line+"\n")+40 {
					t.Errorf("budget %d: related listed while policy %s (a line of %d tokens) was left out with %d tokens to spare",
						budget, pol.Key, enc.Count(line+"\n"), slack)
				}
			}
		}
		if len(j.Applies) != len(p.Applies) || len(j.Related) != len(p.Related) || len(j.Changed) != len(p.Changed) {
			t.Errorf("budget %d: JSON items differ from the Markdown's", budget)
		}
		for _, pol := range j.Applies {
			if !strings.Contains(p.Markdown, pol.Key) {
				t.Errorf("budget %d: JSON policy %s not in the Markdown", budget, pol.Key)
			}
		}
	}
	// 50 tokens: a valid, truncated answer whose (compact) footer says
	// what was left out.
	p50 := assemble(t, a, contextpack.Request{Targets: []string{"lmdbstore/store.go"}, Budget: 50})
	if !strings.HasPrefix(p50.Markdown, "# Context: file:lmdbstore/store.go\n") || !strings.Contains(p50.Markdown, "Left out") || p50.Tokens > 50 {
		t.Errorf("budget 50:\n%s", p50.Markdown)
	}
	if !sawOmission {
		t.Error("no budget left anything out: the test does not exercise the budget")
	}
	if _, err := a.Assemble(contextpack.Request{Targets: []string{"lmdbstore/store.go"}, Budget: 5}); !errors.Is(err, contextpack.ErrBadRequest) {
		t.Errorf("a 5-token budget: %v, want ErrBadRequest", err)
	}
}

// TestTargets: keys, repository paths, directories and queries resolve;
// what matches nothing is ErrNoMatch.
func TestTargets(t *testing.T) {
	s := fixture(t)
	a := contextpack.New(s, contextpack.Options{SnapshotPath: "-"})
	defer a.Close()
	for q, want := range map[string]string{
		"file:cli/app.go":      "file:cli/app.go",
		"cli/app.go":           "file:cli/app.go",
		"./cli/app.go":         "file:cli/app.go",
		"cli/":                 "dir:cli",
		"lmdbstore.Open":       "sym:example.com/m/lmdbstore.Open",
		"decision:wrap-errors": "decision:wrap-errors",
	} {
		p := assemble(t, a, contextpack.Request{Targets: []string{q}})
		if len(p.Targets) != 1 || p.Targets[0].Key != want {
			t.Errorf("target %q resolved to %+v, want %s", q, p.Targets, want)
		}
	}
	if _, err := a.Assemble(contextpack.Request{Targets: []string{"zzqqxx-nothing"}, ValidAt: now}); !errors.Is(err, contextpack.ErrNoMatch) {
		t.Errorf("a target matching nothing: %v", err)
	}
	if _, err := a.Assemble(contextpack.Request{}); !errors.Is(err, contextpack.ErrBadRequest) {
		t.Errorf("no target: %v", err)
	}
}

// TestSnapshotReuse: the engine snapshot file is reused while the store
// has not moved and while only non-ranking writes happened, rebuilt after
// a ranking edge changes, and never answers for a stale graph.
func TestSnapshotReuse(t *testing.T) {
	s := fixture(t)
	a := contextpack.New(s, contextpack.Options{})
	defer a.Close()
	req := contextpack.Request{Targets: []string{"lmdbstore/store.go"}}
	assemble(t, a, req)
	assemble(t, a, req)
	if n := a.SnapshotBuilds(); n != 1 {
		t.Errorf("two calls on an unchanged store: %d snapshot builds, want 1", n)
	}
	// A decision recorded: no ranking change, no rebuild.
	if _, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		return tx.PutKV(lmdbstore.KVPut{Scope: "repo", Namespace: "decisions", Key: "new", Payload: json.RawMessage(`{"text":"x"}`)})
	}); err != nil {
		t.Fatal(err)
	}
	assemble(t, a, req)
	if n := a.SnapshotBuilds(); n != 1 {
		t.Errorf("after a kv write: %d builds, want 1", n)
	}
	// A new co-change: rebuilt, and the new neighbour is ranked.
	if _, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		return tx.PutEdge(lmdbstore.EdgePut{Src: "file:lmdbstore/store.go", Rel: "co_changed", Dst: "file:cli/app.go"})
	}); err != nil {
		t.Fatal(err)
	}
	p := assemble(t, a, req)
	if n := a.SnapshotBuilds(); n != 2 {
		t.Errorf("after a ranking edge: %d builds, want 2", n)
	}
	if !slices.ContainsFunc(p.Related, func(n contextpack.Neighbour) bool { return n.Key == "file:cli/app.go" }) {
		t.Errorf("related after the new co-change misses file:cli/app.go: %+v", p.Related)
	}
	// A second assembler (another process) reuses the file.
	b := contextpack.New(s, contextpack.Options{})
	defer b.Close()
	assemble(t, b, req)
	if n := b.SnapshotBuilds(); n != 0 {
		t.Errorf("a new assembler on an unchanged store built %d snapshots, want 0 (the file)", n)
	}
	// A file without the PageRank section (written by an older memctl;
	// Related's ties would rank differently) is rebuilt, and the new one
	// has the section.
	path := filepath.Join(s.Path(), contextpack.SnapshotFile)
	if _, _, err := storesnap.Export(s, path, lmdbstore.At{}, snapshot.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	c := contextpack.New(s, contextpack.Options{})
	defer c.Close()
	assemble(t, c, req)
	if n := c.SnapshotBuilds(); n != 1 {
		t.Errorf("a file without PageRank: %d builds, want 1", n)
	}
	g, err := csr.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, ranked, _ := g.PageRank(); !ranked {
		t.Errorf("the rebuilt %s has no PageRank section", contextpack.SnapshotFile)
	}
}

// TestRelatedFilesFuseVocabulary: the files of Related follow the
// files-only ranking (activation fused with lexical similarity, what
// `activate --files` answers) in the slots activation gives to files.
// Hand-derived: activation ranks a/near.go (same directory) before
// b/like.go (a weak co-change); only b/like.go shares the target's words,
// so with k = 60 it scores 1/62 + 1/61 against near.go's 1/61 and comes
// first. Without vocabularies the same store keeps activation's order; in
// both, symbols, the places of files and the scores of the places are
// activation's.
func TestRelatedFilesFuseVocabulary(t *testing.T) {
	build := func(withTerms bool) []contextpack.Neighbour {
		s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "db"), lmdbstore.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		file := func(path, terms string) lmdbstore.NodePut {
			p := `{"path":"` + path + `"`
			if withTerms {
				p += `,"terms":` + terms
			}
			return lmdbstore.NodePut{Key: "file:" + path, Payload: json.RawMessage(p + "}")}
		}
		_, err = s.Update(lmdbstore.WriteMeta{RunID: "r1"}, func(tx *lmdbstore.WriteTxn) error {
			if err := addIngestRelations(tx); err != nil {
				return err
			}
			for _, n := range []lmdbstore.NodePut{
				{Key: "dir:a"}, {Key: "dir:b"},
				file("a/target.go", `{"ledger":3,"balance":2,"account":1}`),
				file("a/near.go", `{"socket":4}`),
				file("b/like.go", `{"ledger":2,"balance":1,"account":1}`),
				file("b/other.go", `{"render":2,"socket":1}`),
				{Key: "sym:m/a.Near", Payload: json.RawMessage(`{"path":"a/near.go","line_start":1,"line_end":2}`)},
			} {
				if err := tx.PutNode(n); err != nil {
					return err
				}
			}
			for _, e := range []lmdbstore.EdgePut{
				{Src: "dir:a", Rel: "contains", Dst: "file:a/target.go"},
				{Src: "dir:a", Rel: "contains", Dst: "file:a/near.go"},
				{Src: "dir:b", Rel: "contains", Dst: "file:b/like.go"},
				{Src: "dir:b", Rel: "contains", Dst: "file:b/other.go"},
				{Src: "file:a/near.go", Rel: "defines", Dst: "sym:m/a.Near"},
				{Src: "file:a/target.go", Rel: "co_changed", Dst: "file:b/like.go", Weight: 0.1},
			} {
				if err := tx.PutEdge(e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		a := contextpack.New(s, contextpack.Options{SnapshotPath: "-"})
		defer a.Close()
		return assemble(t, a, contextpack.Request{Targets: []string{"a/target.go"}}).Related
	}
	fused, plain := build(true), build(false)
	files := func(ns []contextpack.Neighbour) (keys []string, at []int, symbols []string) {
		for i, n := range ns {
			if n.Kind == "file" {
				keys, at = append(keys, n.Key), append(at, i)
			} else {
				symbols = append(symbols, n.Key)
			}
		}
		return
	}
	fk, fat, fsym := files(fused)
	pk, pat, psym := files(plain)
	if want := []string{"file:a/near.go", "file:b/like.go"}; !slices.Equal(pk[:min(2, len(pk))], want) {
		t.Fatalf("without vocabularies the files are %v, want activation's %v first", pk, want)
	}
	if want := []string{"file:b/like.go", "file:a/near.go"}; !slices.Equal(fk[:min(2, len(fk))], want) {
		t.Errorf("with vocabularies the files are %v, want %v first", fk, want)
	}
	if !slices.Equal(fat, pat) || !slices.Equal(fsym, psym) {
		t.Errorf("symbols or file places differ: files at %v vs %v, symbols %v vs %v", fat, pat, fsym, psym)
	}
	// Each item keeps the score of its place: Related reads as one
	// ranking, the same scores at the same places with or without the
	// fusion.
	for i := range fused {
		if i > 0 && fused[i].Score > fused[i-1].Score {
			t.Errorf("related not ranked: %v", fused)
		}
		if i < len(plain) && fused[i].Score != plain[i].Score {
			t.Errorf("place %d scores %v fused, %v without vocabularies", i, fused[i].Score, plain[i].Score)
		}
	}
}

// TestRelatedFilesAsActivate: Related's files come in the order `activate
// --files` gives on a default `memctl export` (with its PageRank section,
// which breaks ties), read here through the engine on such an export, the
// target left out. In the fixture, activation ties cli/app.go's two
// lmdbstore files (0.0625 each, the golden pack shows); PageRank puts
// read.go first, node order store.go.
func TestRelatedFilesAsActivate(t *testing.T) {
	s := fixture(t)
	b, err := storesnap.ExportBytes(s, lmdbstore.At{}, snapshot.WriterOptions{Extra: engines.PageRankSection})
	if err != nil {
		t.Fatal(err)
	}
	g, err := csr.FromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engines.New(g)
	if err != nil {
		t.Fatal(err)
	}
	seed, ok, err := g.LookupKey("file:cli/app.go")
	if err != nil || !ok {
		t.Fatalf("file:cli/app.go in the export: %v %v", ok, err)
	}
	p := engines.DefaultRelatedParams()
	p.Kind, p.TopK = "file", 0
	rs, err := eng.Related([]engines.Seed{{Node: seed, Score: 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range rs {
		if k, _ := g.Key(r.Node); r.Node != seed {
			want = append(want, k)
		}
	}
	a := contextpack.New(s, contextpack.Options{SnapshotPath: "-"})
	defer a.Close()
	var got []string
	for _, n := range assemble(t, a, contextpack.Request{Targets: []string{"cli/app.go"}}).Related {
		if n.Kind == "file" {
			got = append(got, n.Key)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("Related's files %v, activate --files %v", got, want)
	}
}

// TestRelatedListsCurrentItems: Related never lists a superseded item or
// one not valid at the request's valid-at time, even from an engine
// snapshot exported before it was (node writes and supersedes edges do
// not rebuild it, SPEC §12.5).
func TestRelatedListsCurrentItems(t *testing.T) {
	s := fixture(t)
	a := contextpack.New(s, contextpack.Options{SnapshotPath: "-"})
	defer a.Close()
	const get, run = "sym:example.com/m/lmdbstore.Get", "sym:example.com/m/cli.Run"
	req := contextpack.Request{Targets: []string{"lmdbstore/store.go"}}
	related := func() []string {
		var keys []string
		for _, n := range assemble(t, a, req).Related {
			keys = append(keys, n.Key)
		}
		return keys
	}
	if keys := related(); !slices.Contains(keys, get) || !slices.Contains(keys, run) {
		t.Fatalf("the fixture's Related misses %s or %s: %v", get, run, keys)
	}
	if _, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		if err := tx.PutNode(lmdbstore.NodePut{Key: get, Payload: json.RawMessage(`{"path":"lmdbstore/read.go","line_start":5,"line_end":9}`),
			Valid: lmdbstore.Validity{Until: now.Add(-time.Minute)}}); err != nil {
			return err
		}
		if err := tx.PutNode(lmdbstore.NodePut{Key: "sym:example.com/m/cli.Main"}); err != nil {
			return err
		}
		return tx.Supersede(run, "sym:example.com/m/cli.Main")
	}); err != nil {
		t.Fatal(err)
	}
	keys := related()
	for _, k := range []string{get, run} {
		if slices.Contains(keys, k) {
			t.Errorf("Related lists %s, expired or superseded at the request's valid-at: %v", k, keys)
		}
	}
	if n := a.SnapshotBuilds(); n != 1 {
		t.Errorf("%d snapshot builds, want 1 (the writes are not ranking writes)", n)
	}
}

// TestOrphansFollowTheView: a long-lived Assembler keeps the orphans it
// found per view revision; a deletion after a call makes a new revision,
// whose pack lists the new orphan exactly as a fresh Assembler's does,
// while the old revision still answers as before. Hand-derived from the
// fixture: decision:new-retry constrains sym Open (rev 3); deleting Open
// (rev 6) orphans it, and its nearest live enclosing key is Open's file,
// lmdbstore/store.go, the target.
func TestOrphansFollowTheView(t *testing.T) {
	s := fixture(t)
	a := contextpack.New(s, contextpack.Options{SnapshotPath: "-"})
	defer a.Close()
	req := contextpack.Request{Targets: []string{"lmdbstore/store.go"}}
	orphaned := func(p *contextpack.Pack) []string {
		var keys []string
		for _, x := range p.Applies {
			if x.Via == "orphaned" {
				keys = append(keys, x.Key+" "+x.Anchor)
			}
		}
		return keys
	}
	before := assemble(t, a, req)
	if got := orphaned(before); len(got) != 0 {
		t.Fatalf("orphans before the deletion: %v", got)
	}
	if _, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		return tx.DeleteNode("sym:example.com/m/lmdbstore.Open")
	}); err != nil {
		t.Fatal(err)
	}
	after := assemble(t, a, req)
	want := []string{"decision:new-retry constrains sym:example.com/m/lmdbstore.Open, deleted at rev 6"}
	if diff := cmp.Diff(want, orphaned(after)); diff != "" {
		t.Errorf("orphans after the deletion (-want +got):\n%s", diff)
	}
	fresh := contextpack.New(s, contextpack.Options{SnapshotPath: "-"})
	defer fresh.Close()
	if diff := cmp.Diff(assemble(t, fresh, req).Applies, after.Applies); diff != "" {
		t.Errorf("long-lived and fresh Applies differ (-fresh +long-lived):\n%s", diff)
	}
	old := req
	old.At = lmdbstore.AtRevision(before.Rev)
	if diff := cmp.Diff(before.Applies, assemble(t, a, old).Applies); diff != "" {
		t.Errorf("the old revision's Applies changed (-before +now):\n%s", diff)
	}
}

// TestOrphansFile: the orphans of the latest revision are written beside
// the engine snapshot and read by the next Assembler instead of scanning;
// a file of another revision, or a damaged one, is scanned past (and the
// latest rewritten); every pack equals the one of an Assembler that keeps
// no file.
func TestOrphansFile(t *testing.T) {
	s := fixture(t)
	req := contextpack.Request{Targets: []string{"lmdbstore/store.go"}}
	path := filepath.Join(s.Path(), contextpack.SnapshotFile+contextpack.OrphansSuffix)
	step := func(what string, r contextpack.Request, wantScans int) {
		t.Helper()
		a := contextpack.New(s, contextpack.Options{})
		defer a.Close()
		got := assemble(t, a, r)
		if n := a.OrphanScans(); n != wantScans {
			t.Errorf("%s: %d orphan scans, want %d", what, n, wantScans)
		}
		none := contextpack.New(s, contextpack.Options{SnapshotPath: "-"})
		defer none.Close()
		if diff := cmp.Diff(assemble(t, none, r).Applies, got.Applies); diff != "" {
			t.Errorf("%s: Applies (-no file +file):\n%s", what, diff)
		}
	}
	step("the first call", req, 1)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no orphans file after the first call: %v", err)
	}
	step("a second process", req, 0)
	if _, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		return tx.DeleteNode("sym:example.com/m/lmdbstore.Open") // orphans decision:new-retry
	}); err != nil {
		t.Fatal(err)
	}
	step("after a deletion", req, 1)
	step("the next process", req, 0)
	old := req
	old.At = lmdbstore.AtRevision(5)
	step("an older revision", old, 1)
	step("the latest again (the file was not replaced)", req, 0)
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	step("a damaged file", req, 1)
	step("rewritten", req, 0)
}
