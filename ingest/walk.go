package ingest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// WalkOptions says which directories a walk enters. By default it skips
// vendor, testdata, and hidden directories (names starting with "." or "_",
// which the go command ignores too).
type WalkOptions struct {
	IncludeVendor   bool
	IncludeTestdata bool
	IncludeHidden   bool
}

// module is a Go module found in the tree: a directory holding go.mod.
type module struct {
	Dir  string // slash path relative to the root, "." for the root
	Path string // module path; "std" for GOROOT/src
}

// srcFile is one file found by the walk.
type srcFile struct {
	Rel string // slash path relative to the root (tree.abs is its path)
	// Content is held when the walk keeps what it read (go.mod and go.sum
	// files; every file for a GoCache); nil otherwise: read reads the file
	// again when it is needed, so that an extraction holds the source of
	// the files it is working on, not the tree's.
	Content []byte
	Hash    contentSum // zero: not read
}

// contentSum is a file's SHA-256, held as its 32 bytes (a tree of 443,000
// files held them as "sha256:<hex>" strings: 80 bytes each, 35 MB).
type contentSum [sha256.Size]byte

// String is the hash as the file's node gives it: "sha256:<hex>".
func (h contentSum) String() string { return "sha256:" + hex.EncodeToString(h[:]) }

// read returns the file's content: the bytes held, or the file read again,
// which must still hash to Hash (a *FileChangedError if it does not: the
// passes of an extraction read the same bytes, and the file's node says
// which ones).
func (f *srcFile) read(root string) ([]byte, error) {
	if f.Content != nil || f.Hash == (contentSum{}) {
		return f.Content, nil
	}
	b, err := os.ReadFile(absPath(root, f.Rel))
	if err != nil {
		return nil, &FileChangedError{Rel: f.Rel, Err: err}
	}
	if contentHash(b) != f.Hash {
		return nil, &FileChangedError{Rel: f.Rel}
	}
	return b, nil
}

// FileChangedError is a file of the tree that changed (or went) while it
// was being ingested: nothing is written; the ingest can run again.
type FileChangedError struct {
	Rel string
	Err error // the read's error; nil: the content changed
}

func (e *FileChangedError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s could not be read again while it was being ingested (%v); nothing was written: run the ingest again", e.Rel, e.Err)
	}
	return fmt.Sprintf("%s changed while it was being ingested; nothing was written: run the ingest again", e.Rel)
}

func (e *FileChangedError) Unwrap() error { return e.Err }

// tree is the result of a walk.
type tree struct {
	Root    string   // absolute
	Dirs    []string // every directory entered, sorted; "." first
	Files   []*srcFile
	Modules []module // sorted by Dir; Modules[0] covers the root
	// ModFiles are the go.mod/go.sum files (they change what type-checking
	// sees, so they are part of the tree hash).
	ModFiles []*srcFile
	// Links say which modules stand alone (modlinks.go); nil when the
	// tree has one module, not every file was read, or their content is
	// kept.
	Links *moduleLinks
}

// walkTree lists the directories and the files accepted by keep below
// root, reading and hashing the files on all CPUs. known, when not nil,
// returns a file as it was read before when its content is known to be
// the same (it is then not read again). The files' contents are kept
// (srcFile.Content) with keepContent, dropped once hashed otherwise;
// go.mod and go.sum files' are kept.
func walkTree(root string, opts WalkOptions, keep func(name string) bool, known func(rel string) *srcFile, keepContent bool) (*tree, error) {
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
	t := &tree{Root: abs}
	err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := relPath(abs, p)
		name := d.Name()
		if d.IsDir() {
			if rel != "." && skipDir(name, opts) {
				return filepath.SkipDir
			}
			t.Dirs = append(t.Dirs, rel)
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		switch {
		case name == "go.mod" || name == "go.sum":
			t.ModFiles = append(t.ModFiles, &srcFile{Rel: rel})
		case keep(name):
			t.Files = append(t.Files, &srcFile{Rel: rel})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := readAll(abs, t.ModFiles, true, nil); err != nil {
		return nil, err
	}
	var toRead []*srcFile
	for i, f := range t.Files {
		if known != nil {
			if k := known(f.Rel); k != nil {
				t.Files[i] = &srcFile{Rel: f.Rel, Content: k.Content, Hash: k.Hash}
				continue
			}
		}
		toRead = append(toRead, f)
	}
	t.Modules, err = findModules(abs, t.ModFiles)
	if err != nil {
		return nil, err
	}
	var visit func(*srcFile, []byte)
	// Every file is read, and no GoCache keeps them (its extractions
	// read every module in one pass): their imports say which modules
	// stand alone.
	if len(t.Modules) > 1 && known == nil && !keepContent {
		t.Links = newModuleLinks(t)
		visit = t.Links.visit
	}
	if err := readAll(abs, toRead, keepContent, visit); err != nil {
		return nil, err
	}
	slices.Sort(t.Dirs)
	byRel := func(a, b *srcFile) int { return strings.Compare(a.Rel, b.Rel) }
	slices.SortFunc(t.Files, byRel)
	slices.SortFunc(t.ModFiles, byRel)
	if t.Links != nil {
		t.Links.done(t)
	}
	return t, nil
}

func skipDir(name string, opts WalkOptions) bool {
	switch {
	case name == "vendor":
		return !opts.IncludeVendor
	case name == "testdata":
		return !opts.IncludeTestdata
	case strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_"):
		return !opts.IncludeHidden
	}
	return false
}

// readAll reads and hashes files concurrently, keeping their content with
// keep; visit, when not nil, is called with each file's content.
func readAll(root string, files []*srcFile, keep bool, visit func(*srcFile, []byte)) error {
	var wg sync.WaitGroup
	errs := make([]error, len(files))
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				b, err := os.ReadFile(absPath(root, files[i].Rel))
				if err != nil {
					errs[i] = err
					continue
				}
				files[i].Hash = contentHash(b)
				if visit != nil {
					visit(files[i], b)
				}
				if keep {
					files[i].Content = b
				}
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// relPath is p, under root, as a slash path relative to it: where the
// separator is a slash, the tail of p itself (one string a file, not two).
func relPath(root, p string) string {
	if filepath.Separator == '/' && len(p) > len(root) && strings.HasPrefix(p, root) && (p[len(root)] == '/' || strings.HasSuffix(root, "/")) {
		return strings.TrimPrefix(p[len(root):], "/")
	}
	rel, _ := filepath.Rel(root, p)
	return filepath.ToSlash(rel)
}

// fileIndex is the index in Files of the file at rel; -1 when there is
// none. Files are sorted by Rel.
func (t *tree) fileIndex(rel string) int {
	i, ok := slices.BinarySearchFunc(t.Files, rel, func(f *srcFile, rel string) int { return strings.Compare(f.Rel, rel) })
	if !ok {
		return -1
	}
	return i
}

// file is the file at rel; nil when there is none.
func (t *tree) file(rel string) *srcFile {
	if i := t.fileIndex(rel); i >= 0 {
		return t.Files[i]
	}
	return nil
}

// absPath is the path of the file at rel (a slash path) under root.
func absPath(root, rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }

// abs is the path of a file of the tree.
func (t *tree) abs(f *srcFile) string { return absPath(t.Root, f.Rel) }

func contentHash(b []byte) contentSum { return sha256.Sum256(b) }

// findModules returns the modules of the tree: one per go.mod inside it,
// and for the root, the module enclosing it (searching parent directories),
// or a pseudo-module named after the root directory when there is none.
func findModules(root string, modFiles []*srcFile) ([]module, error) {
	var mods []module
	hasRoot := false
	for _, f := range modFiles {
		if path.Base(f.Rel) != "go.mod" {
			continue
		}
		dir := path.Dir(f.Rel)
		mp := modulePath(f.Content)
		if mp == "" {
			mp = path.Base(filepath.ToSlash(filepath.Join(root, filepath.FromSlash(dir))))
		}
		mods = append(mods, module{Dir: dir, Path: mp})
		if dir == "." {
			hasRoot = true
		}
	}
	if !hasRoot {
		mods = append(mods, module{Dir: ".", Path: enclosingModulePath(root)})
	}
	slices.SortFunc(mods, func(a, b module) int { return strings.Compare(a.Dir, b.Dir) })
	return mods, nil
}

// enclosingModulePath is the import path of dir when it sits inside a
// module above it, or the base name of dir when it does not.
func enclosingModulePath(dir string) string {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			if mp := modulePath(b); mp != "" {
				rel, _ := filepath.Rel(d, dir)
				return joinImport(mp, filepath.ToSlash(rel))
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return filepath.Base(dir)
}

// modulePath reads the module directive of a go.mod file ("" if absent).
func modulePath(gomod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			rest = strings.TrimSpace(rest)
			if i := strings.Index(rest, "//"); i >= 0 {
				rest = strings.TrimSpace(rest[:i])
			}
			return strings.Trim(rest, `"`+"`")
		}
	}
	return ""
}

// joinImport joins a module path and a relative directory. The standard
// library's module "std" has no prefix.
func joinImport(modPath, rel string) string {
	switch {
	case rel == "." || rel == "":
		return modPath
	case modPath == "std":
		return rel
	}
	return modPath + "/" + rel
}

// moduleOf returns the module whose directory is the longest prefix of the
// slash path rel.
func (t *tree) moduleOf(rel string) module {
	best := module{Dir: "."}
	for _, m := range t.Modules {
		if m.Dir == "." && best.Path == "" {
			best = m
			continue
		}
		if (rel == m.Dir || strings.HasPrefix(rel, m.Dir+"/")) && (best.Dir == "." || len(m.Dir) > len(best.Dir)) {
			best = m
		}
	}
	return best
}

// importPathOf is the import path of the package in directory rel.
func (t *tree) importPathOf(rel string) string {
	m := t.moduleOf(rel)
	if m.Dir == "." {
		return joinImport(m.Path, rel)
	}
	if rel == m.Dir {
		return m.Path
	}
	return joinImport(m.Path, strings.TrimPrefix(rel, m.Dir+"/"))
}

// errFound stops HasGoFiles' walk at the first Go file.
var errFound = errors.New("found")

// HasGoFiles reports whether the walk of `ingest go` would read any Go
// file below root.
func HasGoFiles(root string, opts WalkOptions) (bool, error) {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && skipDir(d.Name(), opts) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".go") {
			return errFound
		}
		return nil
	})
	if errors.Is(err, errFound) {
		return true, nil
	}
	return false, err
}

// Walkable reports whether a walk with opts reaches the file at the
// slash-separated path rel (relative to the walked root): no directory on
// the way is one the walk skips.
func Walkable(rel string, opts WalkOptions) bool { return walkable(rel, opts) }
