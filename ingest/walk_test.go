package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memctl/memctl/lmdbstore"
)

var twoPackages = map[string]string{
	"go.mod":      "module example.com/w\n\ngo 1.22\n",
	"a/a.go":      "package a\n\nfunc A() int { return 1 }\n",
	"b/b.go":      "package b\n\nimport \"example.com/w/a\"\n\nfunc B() int { return a.A() }\n",
	"b/c.go":      "//go:build ignore\n\npackage b\n\nfunc C() {}\n",
	"b/x_test.go": "package b\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) { B() }\n",
}

// The walk hashes every file and keeps no content unless asked to; a file
// read again comes back as it was hashed.
func TestWalkKeepsNoContent(t *testing.T) {
	dir := writeTree(t, twoPackages)
	keep := func(name string) bool { return strings.HasSuffix(name, ".go") }
	for _, keepContent := range []bool{false, true} {
		tr, err := walkTree(dir, WalkOptions{}, keep, nil, keepContent)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Files) != 4 {
			t.Fatalf("keep %v: %d files, want 4", keepContent, len(tr.Files))
		}
		for _, f := range tr.Files {
			want := twoPackages[f.Rel]
			if f.Hash != contentHash([]byte(want)) {
				t.Errorf("keep %v: %s: hash %s, want the content's", keepContent, f.Rel, f.Hash)
			}
			if held := f.Content != nil; held != keepContent {
				t.Errorf("keep %v: %s: content held %v", keepContent, f.Rel, held)
			}
			b, err := f.read(tr.Root)
			if err != nil || string(b) != want {
				t.Errorf("keep %v: %s: read %q, %v; want %q", keepContent, f.Rel, b, err, want)
			}
		}
		for _, f := range tr.ModFiles {
			if f.Content == nil {
				t.Errorf("keep %v: %s: go.mod content not held", keepContent, f.Rel)
			}
		}
	}
}

// A file that changes or goes between the walk and a later pass fails the
// extraction with a *FileChangedError naming it, in either mode and at
// either phase; an ingest that fails so writes nothing.
func TestExtractGoFileChanged(t *testing.T) {
	for _, tc := range []struct {
		name       string
		syntaxOnly bool
		phase      string // the Progress phase at which the file changes
		file       string
		remove     bool
	}{
		{"typed, edited while loading", false, "loading", "b/b.go", false},
		{"typed, removed while loading", false, "loading", "a/a.go", true},
		{"syntax, edited before extracting", true, "extracting", "b/b.go", false},
		{"syntax, removed before extracting", true, "extracting", "a/a.go", true},
		{"typed tree, syntax file edited before extracting", false, "extracting", "b/c.go", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, twoPackages)
			changed := false
			progress := func(p Progress) {
				if p.Phase != tc.phase || changed {
					return
				}
				changed = true
				p0 := filepath.Join(dir, filepath.FromSlash(tc.file))
				var err error
				if tc.remove {
					err = os.Remove(p0)
				} else {
					err = os.WriteFile(p0, []byte(twoPackages[tc.file]+"\nfunc Later() {}\n"), 0o644)
				}
				if err != nil {
					t.Error(err)
				}
			}
			_, err := ExtractGo(dir, GoOptions{SyntaxOnly: tc.syntaxOnly, Progress: progress})
			if !changed {
				t.Fatalf("phase %q never reported", tc.phase)
			}
			var fc *FileChangedError
			if !errors.As(err, &fc) {
				t.Fatalf("err = %v, want a *FileChangedError", err)
			}
			if fc.Rel != tc.file || (fc.Err != nil) != tc.remove {
				t.Errorf("error names %s (read error %v); want %s (removed %v)", fc.Rel, fc.Err, tc.file, tc.remove)
			}
			if tc.remove && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("removed file: %v does not wrap os.ErrNotExist", err)
			}
		})
	}

	// Through IngestGo into an empty store (the streamed load): the store
	// stays empty.
	dir := writeTree(t, twoPackages)
	s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "db"), lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	changed := false
	progress := func(p Progress) {
		if p.Phase == "extracting" && !changed {
			changed = true
			if err := os.WriteFile(filepath.Join(dir, "a", "a.go"), []byte("package a\n\nfunc A() int { return 2 }\n"), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	_, err = IngestGo(s, dir, GoOptions{SyntaxOnly: true, Progress: progress}, lmdbstore.WriteMeta{}, nil)
	var fc *FileChangedError
	if !errors.As(err, &fc) || fc.Rel != "a/a.go" {
		t.Fatalf("IngestGo: err = %v, want a *FileChangedError for a/a.go", err)
	}
	empty, err := storeEmpty(s)
	if err != nil || !empty {
		t.Errorf("after the failed ingest the store is empty: %v (%v)", empty, err)
	}
}

// relPath agrees with filepath.Rel on paths under a root, the root itself
// included, with and without a trailing slash on the root.
func TestRelPathMatchesRel(t *testing.T) {
	for _, tc := range []struct{ root, p string }{
		{"/a/b", "/a/b"}, {"/a/b", "/a/b/c"}, {"/a/b", "/a/b/c/d.go"}, {"/", "/x/y.go"}, {"/a/b/", "/a/b/c.go"},
		{"/a/b", "/a/bc/d.go"}, {"/tmp/std80", "/tmp/std80/m1/net/http/server.go"},
	} {
		want, _ := filepath.Rel(tc.root, tc.p)
		if got := relPath(tc.root, tc.p); got != filepath.ToSlash(want) {
			t.Errorf("relPath(%q, %q) = %q, want %q", tc.root, tc.p, got, want)
		}
	}
}
