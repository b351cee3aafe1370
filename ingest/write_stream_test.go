package ingest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memctl/memctl/lmdbstore"
)

// TestGoStreamMatchesOrdinary: a first ingest streamed into a bulk load
// while it is extracted (GoOptions.Stream) leaves the store the ordinary
// write path leaves from the graph ExtractGo returns (WriteCodeTx in one
// Update): the same logical snapshot, the same operations (the log lists
// them in extraction order, so compared as sets), the same counts, Check
// clean. The trees: several packages and modules (this repository's
// adjacency, csr and roles, whose tests give tests edges and whose calls
// into the standard library dangle), a package with files for another
// platform (symbols declared twice: the first description wins) and
// files that do not parse, type-checked and from syntax alone. Two
// streamed ingests of one tree log the same operations in the same order.
func TestGoStreamMatchesOrdinary(t *testing.T) {
	multi := multiPackageTree(t)
	for _, c := range []struct {
		name string
		dir  string
		opts GoOptions
	}{
		{"multi", multi, GoOptions{}},
		{"multi-syntax", multi, GoOptions{SyntaxOnly: true}},
		{"basic", copyTree(t, "basic"), GoOptions{}},
		{"broken", copyTree(t, "broken"), GoOptions{}},
		// Syntax-only packages resolving names in each other's declarations,
		// an external test package among them (raft_test: its tests edges
		// need raft's symbols after raft is merged).
		{"fixture-syntax", writeTree(t, streamFixture), GoOptions{SyntaxOnly: true}},
		// A type-checked package with files for another platform, read
		// from syntax once the module's symbols are parked: they declare
		// some of its symbols again, and test it (sentpark.go).
		{"platforms", writeTree(t, platformsFixture), GoOptions{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, err := ExtractGo(c.dir, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			meta := lmdbstore.WriteMeta{RunID: "r1", TaskID: "t1"}
			ordinary := newStore(t)
			var st1 WriteStats
			if _, err := ordinary.Update(meta, func(tx *lmdbstore.WriteTxn) error {
				st1, err = WriteCodeTx(tx, want.Graph, []string{LangGo}, nil)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			var logs [][]string
			for range 2 {
				streamed := newStore(t)
				w, err := NewGoStream(streamed, meta, nil)
				if err != nil {
					t.Fatal(err)
				}
				opts := c.opts
				opts.Stream = w
				res, err := ExtractGo(c.dir, opts)
				if err != nil {
					t.Fatal(err)
				}
				if res.Graph != nil {
					t.Error("a streamed extraction returned its graph")
				}
				if typed := !c.opts.SyntaxOnly && c.name != "broken"; typed != (w.parked > 0) {
					t.Errorf("%d symbols parked; type-checked packages: %v", w.parked, typed)
				}
				st2, err := w.Commit()
				if err != nil {
					t.Fatal(err)
				}
				if st2.Commit.Rev != 1 || st2.NodesPut != st1.NodesPut || st2.EdgesPut != st1.EdgesPut ||
					st2.NodesPut != want.Graph.NumNodes() || st2.EdgesPut != want.Graph.NumEdges() {
					t.Errorf("streamed %d nodes, %d edges; ordinary %d, %d; graph %d, %d", st2.NodesPut, st2.EdgesPut,
						st1.NodesPut, st1.EdgesPut, want.Graph.NumNodes(), want.Graph.NumEdges())
				}
				if res.Unresolved != want.Unresolved || res.Packages != want.Packages || res.TreeHash != want.TreeHash {
					t.Errorf("result %+v, want %+v", res, want)
				}
				logs = append(logs, diffSince(t, streamed, 0))
				if logicalHash(t, streamed) != logicalHash(t, ordinary) {
					t.Errorf("logical snapshot hashes differ")
				}
				if rep, err := streamed.Check(); err != nil || len(rep.Problems) > 0 {
					t.Errorf("check: %v %v", err, rep.Problems)
				}
			}
			ops := diffSince(t, ordinary, 0)
			got := slices.Clone(logs[0])
			slices.Sort(ops)
			slices.Sort(got)
			if diff := cmp.Diff(ops, got); diff != "" {
				t.Errorf("operations differ (-ordinary +streamed):\n%s", diff)
			}
			if diff := cmp.Diff(logs[0], logs[1]); diff != "" {
				t.Errorf("two streamed ingests logged different orders:\n%s", diff)
			}
			if c.name == "multi" && !slices.ContainsFunc(ops, func(op string) bool { return strings.Contains(op, " tests ") }) {
				t.Error("no tests edge in the multi-package tree")
			}
			if c.name == "fixture-syntax" && !slices.ContainsFunc(ops, func(op string) bool {
				return strings.Contains(op, "sym:example.com/s/raft_test.TestRun tests sym:example.com/s/raft.Raft.Run")
			}) {
				t.Error("no tests edge from raft_test into raft")
			}
		})
	}
}

// TestGoStreamAbort: an aborted stream writes nothing.
func TestGoStreamAbort(t *testing.T) {
	s := newStore(t)
	w, err := NewGoStream(s, lmdbstore.WriteMeta{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ExtractGo(copyTree(t, "basic"), GoOptions{Stream: w}); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if _, err := w.Commit(); err == nil {
		t.Error("commit after abort succeeded")
	}
	if empty, err := storeEmpty(s); err != nil || !empty {
		t.Errorf("store empty %v (%v) after an abort", empty, err)
	}
	if ops := diffSince(t, s, 0); len(ops) != 0 {
		t.Errorf("aborted stream logged %v", ops)
	}
}

// TestIngestGoStoreWrittenMeanwhile: a first ingest streams; when another
// writer writes to the store before the streamed load commits (here `ingest
// git`'s field on a file node of the tree, written while the tree is
// extracted), the load commits nothing (lmdbstore.ErrNotEmpty) and IngestGo
// extracts again and writes through WriteGo. The store is the one WriteGo
// leaves after that write (the file keeps its git field), not the one the
// streamed load would have left (the file's payload replaced).
func TestIngestGoStoreWrittenMeanwhile(t *testing.T) {
	dir := copyTree(t, "basic")
	want, err := ExtractGo(dir, GoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var file FilePayload
	var fileKey string
	for _, n := range want.Graph.Nodes() {
		if n.Type == TypeFile {
			fileKey = n.Key
			if err := json.Unmarshal(n.Payload, &file); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if fileKey == "" {
		t.Fatal("no file node in the basic tree")
	}
	gitPut := lmdbstore.NodePut{Key: fileKey, Type: TypeFile,
		Payload: json.RawMessage(`{"path":"` + file.Path + `","git":{"commits":3}}`)}
	writeGit := func(s *lmdbstore.Store) {
		t.Helper()
		if _, err := s.Update(lmdbstore.WriteMeta{RunID: "git"}, func(tx *lmdbstore.WriteTxn) error {
			return tx.PutNode(gitPut)
		}); err != nil {
			t.Fatal(err)
		}
	}
	meta := lmdbstore.WriteMeta{RunID: "r1"}
	expected := newStore(t)
	writeGit(expected)
	if _, err := WriteGo(expected, want.Graph, meta, nil); err != nil {
		t.Fatal(err)
	}

	s := newStore(t)
	extractions := 0
	opts := GoOptions{Progress: func(p Progress) {
		if p.Phase == "reading" {
			extractions++
			if extractions == 1 {
				writeGit(s)
			}
		}
	}}
	done, err := IngestGo(s, dir, opts, meta, nil)
	if err != nil {
		t.Fatal(err)
	}
	if done.Streamed || extractions != 2 {
		t.Errorf("streamed %v after %d extractions, want the ordinary write after 2", done.Streamed, extractions)
	}
	if done.Nodes != want.Graph.NumNodes() || done.Edges != want.Graph.NumEdges() {
		t.Errorf("%d nodes, %d edges; the graph has %d, %d", done.Nodes, done.Edges, want.Graph.NumNodes(), want.Graph.NumEdges())
	}
	if logicalHash(t, s) != logicalHash(t, expected) {
		t.Error("the store differs from WriteGo's after the same write")
	}
	if err := s.View(func(r *lmdbstore.ReadTxn) error {
		n, err := r.GetNode(fileKey, lmdbstore.At{})
		if err != nil {
			return err
		}
		if !strings.Contains(string(n.Payload), `"git"`) {
			t.Errorf("%s lost its git field: %s", fileKey, n.Payload)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// Into a store that stays empty, IngestGo streams, once.
	s2 := newStore(t)
	extractions = 0
	opts.Progress = func(p Progress) {
		if p.Phase == "reading" {
			extractions++
		}
	}
	if done, err := IngestGo(s2, dir, opts, meta, nil); err != nil || !done.Streamed || extractions != 1 {
		t.Errorf("empty store: streamed %v after %d extractions (%v)", done.Streamed, extractions, err)
	}
}

// platformsFixture is a type-checked package whose files for Windows are
// read from syntax alone, after its symbols are parked.
var platformsFixture = map[string]string{
	"go.mod":                    "module example.com/p\n\ngo 1.22\n",
	"plat/plat.go":              "package plat\n\nfunc Common() {}\n\nfunc Open() int { return openImpl() }\n",
	"plat/plat_linux.go":        "package plat\n\ntype Handle int\n\nfunc openImpl() int { return 1 }\n",
	"plat/plat_other.go":        "//go:build !linux\n\npackage plat\n\ntype Handle uintptr\n\nfunc openImpl() int { return 2 }\n",
	"plat/plat_windows.go":      "package plat\n\nfunc WindowsOnly() { Common() }\n",
	"plat/plat_windows_test.go": "package plat\n\nimport \"testing\"\n\nfunc TestWindows(t *testing.T) { WindowsOnly(); Common() }\n",
	"plat/plat_test.go":         "package plat\n\nimport \"testing\"\n\nfunc TestCommon(t *testing.T) { Common() }\n",
	"use/use.go":                "package use\n\nimport \"example.com/p/plat\"\n\nfunc Use() int { plat.Common(); return plat.Open() }\n",
	// Its type-checked files declare nothing: an empty set parked.
	"empty/doc.go":       "// Package empty has symbols on Windows alone.\npackage empty\n",
	"empty/e_windows.go": "package empty\n\nfunc W() {}\n",
}
