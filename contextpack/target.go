package contextpack

import (
	"encoding/json"
	"path"
	"strings"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/roles"
)

// Levels of an anchor: what encloses a target, from the target itself to
// the repository. Lower is more specific and ranks first.
const (
	LevelTarget     = "target"
	LevelFile       = "file"
	LevelPackage    = "package"
	LevelDirectory  = "directory"
	LevelRepository = "repository"
)

// RootKey is the repository as a whole: ingest's root directory.
const RootKey = "dir:."

// Anchor is a key a policy may be attached to for it to apply to a target.
type Anchor struct {
	Key   string
	Level string
	// Rank orders anchors by specificity: 0 the target, then its file,
	// package, directories deepest first, the repository last.
	Rank int
}

// Target is one resolved target.
type Target struct {
	Query string // as given
	Key   string
	// Match says how Query resolved: "key", "file", "directory" (a
	// repository path), or the seed-finding level that matched it
	// ("exact", "prefix", "substring", "fuzzy").
	Match string
	Kind  string // file, directory, package, symbol or other
	// Path is the repository path the target stands for (a symbol's file,
	// a package's directory); "" when it has none.
	Path      string
	LineStart int // symbols
	LineEnd   int
	Node      lmdbstore.Node // zero when the key is only an edge endpoint
	Enclosing []Anchor       // the target first, the repository last
}

// kindOf names a key's kind by ingest's key prefixes (SPEC.md §9.2).
func kindOf(key string) string {
	switch {
	case strings.HasPrefix(key, "file:"):
		return "file"
	case strings.HasPrefix(key, "dir:"):
		return "directory"
	case strings.HasPrefix(key, "pkg:"):
		return "package"
	case strings.HasPrefix(key, "sym:"):
		return "symbol"
	}
	return "other"
}

// cleanPath turns a repository path argument into ingest's form: slash
// separated, relative, no "./" or trailing "/"; the root is ".".
func cleanPath(p string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return "."
	}
	return path.Clean(strings.TrimPrefix(p, "/"))
}

// resolveDirect resolves q as a live key, or as a repository path (file,
// then directory). ok is false when neither applies.
func resolveDirect(r *lmdbstore.ReadTxn, q string, at lmdbstore.At) (Target, bool, error) {
	if strings.Contains(q, ":") {
		n, live, err := liveNode(r, q, at)
		if err != nil {
			return Target{}, false, err
		}
		if live {
			return Target{Query: q, Key: q, Match: "key", Node: n}, true, nil
		}
	}
	p := cleanPath(q)
	for _, c := range []struct{ key, match string }{{ingest.FileKey(p), "file"}, {ingest.DirKey(p), "directory"}} {
		n, live, err := liveNode(r, c.key, at)
		if err != nil {
			return Target{}, false, err
		}
		if live {
			return Target{Query: q, Key: c.key, Match: c.match, Node: n}, true, nil
		}
	}
	return Target{}, false, nil
}

// complete fills Kind, Path, lines and the enclosing anchors of t.
func complete(r *lmdbstore.ReadTxn, t *Target, at lmdbstore.At) error {
	t.Kind = kindOf(t.Key)
	t.Enclosing = []Anchor{{Key: t.Key, Level: LevelTarget}}
	var dir string // the innermost directory enclosing the target
	hasDir := false
	switch t.Kind {
	case "file":
		t.Path = strings.TrimPrefix(t.Key, "file:")
		if pkg, err := containerOf(r, t.Key, "pkg:", at); err != nil {
			return err
		} else if pkg != "" {
			t.Enclosing = append(t.Enclosing, Anchor{Key: pkg, Level: LevelPackage})
		}
		dir, hasDir = path.Dir(t.Path), true
	case "directory":
		t.Path = strings.TrimPrefix(t.Key, "dir:")
		if t.Path != "." {
			dir, hasDir = path.Dir(t.Path), true
		}
	case "package":
		var p ingest.PackagePayload
		_ = json.Unmarshal(t.Node.Payload, &p)
		if p.Dir != "" {
			t.Path = p.Dir
			dir, hasDir = p.Dir, true
		}
	case "symbol":
		var p ingest.SymbolPayload
		_ = json.Unmarshal(t.Node.Payload, &p)
		t.Path, t.LineStart, t.LineEnd = p.Path, p.LineStart, p.LineEnd
		file := ""
		if p.Path != "" {
			file = ingest.FileKey(p.Path)
		} else if f, err := containerOf(r, t.Key, "file:", at); err != nil {
			return err
		} else {
			file = f
			t.Path = strings.TrimPrefix(f, "file:")
		}
		if file != "" {
			t.Enclosing = append(t.Enclosing, Anchor{Key: file, Level: LevelFile})
			if pkg, err := containerOf(r, file, "pkg:", at); err != nil {
				return err
			} else if pkg != "" {
				t.Enclosing = append(t.Enclosing, Anchor{Key: pkg, Level: LevelPackage})
			}
			dir, hasDir = path.Dir(t.Path), true
		}
	}
	if hasDir {
		for d := dir; d != "."; d = path.Dir(d) {
			t.Enclosing = append(t.Enclosing, Anchor{Key: ingest.DirKey(d), Level: LevelDirectory})
			if d == "/" || d == "" {
				break
			}
		}
	}
	if t.Key != RootKey {
		t.Enclosing = append(t.Enclosing, Anchor{Key: RootKey, Level: LevelRepository})
	} else {
		t.Enclosing[0].Level = LevelRepository
	}
	for i := range t.Enclosing {
		t.Enclosing[i].Rank = i
	}
	return nil
}

// containerOf is the source of a live in-edge of key whose key starts with
// prefix, through contains or defines (ingest's structure: a package
// contains its files, a file defines its symbols); "" when none.
func containerOf(r *lmdbstore.ReadTxn, key, prefix string, at lmdbstore.At) (string, error) {
	for _, rel := range []string{roles.RelContains, roles.RelDefines} {
		es, err := edgesOf(r, key, rel, false, at)
		if err != nil {
			return "", err
		}
		for _, e := range es {
			k, err := r.KeyOf(e.Peer)
			if err != nil {
				return "", err
			}
			if strings.HasPrefix(k, prefix) {
				return k, nil
			}
		}
	}
	return "", nil
}
