package treesitter

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memctl/memctl/ingest"
)

// walkFile is one file found by the walk.
type walkFile struct {
	Rel  string // slash path relative to the root
	Abs  string
	Lang string
}

// walked is what a walk found.
type walked struct {
	Root   string // absolute
	Files  []walkFile
	Config []walkFile // tsconfig.json, package.json, Cargo.toml… (Lang: whose config it is)
	// Dirs are the directories entered, "." first; InitDirs those holding
	// an __init__.py.
	Dirs map[string]bool
}

// vendorDirs hold other people's code; buildDirs a build's output.
var (
	vendorDirs = map[string]bool{"vendor": true, "node_modules": true, "bower_components": true,
		"site-packages": true, "dist-packages": true}
	buildDirs = map[string]bool{"target": true, "dist": true, "build": true, "__pycache__": true}
)

// skipDir says whether the walk leaves out the directory name (below the
// root) whose absolute path is abs.
func skipDir(name, abs string, opts ingest.WalkOptions) bool {
	switch {
	case strings.HasPrefix(name, "."):
		return !opts.IncludeHidden
	case vendorDirs[name]:
		return !opts.IncludeVendor
	case name == "testdata":
		return !opts.IncludeTestdata
	case buildDirs[name]:
		return true
	}
	// A Python virtual environment, whatever its name.
	if _, err := os.Stat(filepath.Join(abs, "pyvenv.cfg")); err == nil {
		return !opts.IncludeVendor
	}
	return false
}

// walk lists the source files of the languages langs below root, skipping
// what skipDir says and what .gitignore files ignore.
func walk(root string, langs []string, opts ingest.WalkOptions) (*walked, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", root)
	}
	want := make(map[string]bool, len(langs))
	for _, l := range langs {
		want[l] = true
	}
	ign, prefix := newIgnoreMatcher(abs)
	w := &walked{Root: abs, Dirs: make(map[string]bool)}
	err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != abs {
				return filepath.SkipDir // unreadable directory: leave it out
			}
			return err
		}
		rel, _ := filepath.Rel(abs, p)
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if d.IsDir() {
			if rel != "." && (skipDir(name, p, opts) || ign.ignored(prefix+rel, true)) {
				return filepath.SkipDir
			}
			w.Dirs[rel] = true
			if b, err := os.ReadFile(filepath.Join(p, ".gitignore")); err == nil {
				base := strings.TrimSuffix(prefix+rel, "/.")
				if base == "." {
					base = ""
				}
				ign.add(parseIgnore(b, base))
			}
			return nil
		}
		if !d.Type().IsRegular() || ign.ignored(prefix+rel, false) {
			return nil
		}
		if lang := langOfFile(name); lang != "" && want[lang] {
			w.Files = append(w.Files, walkFile{Rel: rel, Abs: p, Lang: lang})
		} else if fam, ok := configLang(name); ok {
			w.Config = append(w.Config, walkFile{Rel: rel, Abs: p, Lang: fam})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	byRel := func(a, b walkFile) int { return strings.Compare(a.Rel, b.Rel) }
	slices.SortFunc(w.Files, byRel)
	slices.SortFunc(w.Config, byRel)
	return w, nil
}
