package ingest

import (
	"bytes"
	"go/parser"
	"go/scanner"
	"go/token"
	"path"
	"strconv"
	"sync"
)

// Which modules of a tree stand alone, and their extraction: ExtractGo
// extracts such a module whole before the next one starts (its files read
// from syntax as soon as its check is done, with its own tables) and lets
// go of what it held for them at its end, so that what is held follows
// the module, not the tree. A module stands alone when no file of it
// imports a package of another module of the tree, and no file of another
// module imports one of its packages. The walk reads every file to hash
// it; while it holds the bytes it reads their imports (go/parser,
// ImportsOnly), and keeps of them only which modules they link.
//
// The answer must never say "alone" of a module that is not: where a
// file's imports cannot all be read, every module is linked.

// moduleLinks is what the walk learned of the tree's modules.
type moduleLinks struct {
	// linked[i]: module i (in tree.Modules) imports a package of another
	// module of the tree, or one of its packages is imported by one.
	linked []bool
	// fileMod is the index in tree.Modules of each file of tree.Files.
	fileMod []int32

	dirMod    map[string]int32 // directory of the tree → its module
	importMod map[string]int32 // import path of a directory of the tree → its module
	mu        sync.Mutex
}

// newModuleLinks prepares the links of t's modules, once its directories
// and modules are known and before its files are read.
func newModuleLinks(t *tree) *moduleLinks {
	l := &moduleLinks{
		linked:    make([]bool, len(t.Modules)),
		dirMod:    make(map[string]int32, len(t.Dirs)),
		importMod: make(map[string]int32, len(t.Dirs)),
	}
	at := make(map[string]int32, len(t.Modules))
	for i, m := range t.Modules {
		at[m.Dir] = int32(i)
	}
	for _, d := range t.Dirs {
		k := at[t.moduleOf(d).Dir]
		l.dirMod[d] = k
		// Two modules with one import path for a directory (a module
		// path twice) share its tables and node keys: linked.
		ip := t.importPathOf(d)
		if j, ok := l.importMod[ip]; ok && j != k {
			l.linked[j], l.linked[k] = true, true
		}
		l.importMod[ip] = k
	}
	return l
}

// visit reads the imports of file f, whose content is b (on the walk's
// reading goroutines): those of its header, as extractSyntax's parse
// reads them, and, should an import follow a declaration (a syntax error
// that the full parse reads past), every module is linked.
func (l *moduleLinks) visit(f *srcFile, b []byte) {
	own := l.dirMod[path.Dir(f.Rel)]
	fset := token.NewFileSet()
	pf, _ := parser.ParseFile(fset, "", b, parser.ImportsOnly|parser.SkipObjectResolution)
	end := 0 // where the header ends
	if pf != nil && pf.Name != nil {
		end = fset.Position(pf.Name.End()).Offset
		if n := len(pf.Decls); n > 0 {
			end = max(end, fset.Position(pf.Decls[n-1].End()).Offset)
		}
		for _, imp := range pf.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				continue
			}
			if k, ok := l.importMod[p]; ok && k != own {
				l.mu.Lock()
				l.linked[own], l.linked[k] = true, true
				l.mu.Unlock()
			}
		}
	}
	if lateImport(b[min(end, len(b)):]) {
		l.mu.Lock()
		for i := range l.linked {
			l.linked[i] = true
		}
		l.mu.Unlock()
	}
}

// lateImport reports whether rest, what follows a file's header, holds an
// import keyword. It is scanned only when the word occurs in it, not as
// part of a longer name.
func lateImport(rest []byte) bool {
	if !hasWord(rest, "import") {
		return false
	}
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(rest)), rest, nil, 0)
	for {
		_, tok, _ := s.Scan()
		switch tok {
		case token.IMPORT:
			return true
		case token.EOF:
			return false
		}
	}
}

// hasWord reports whether w occurs in b neither preceded nor followed by
// an ASCII letter, digit or underscore.
func hasWord(b []byte, w string) bool {
	name := func(c byte) bool {
		return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte(w))
		if j < 0 {
			return false
		}
		j += i
		if (j == 0 || !name(b[j-1])) && (j+len(w) == len(b) || !name(b[j+len(w)])) {
			return true
		}
		i = j + len(w)
	}
}

// done records the module of every file of t (sorted) and lets go of
// what visit needed.
func (l *moduleLinks) done(t *tree) {
	l.fileMod = make([]int32, len(t.Files))
	for i, f := range t.Files {
		l.fileMod[i] = l.dirMod[path.Dir(f.Rel)]
	}
	l.dirMod, l.importMod = nil, nil
}

// alone reports whether module i stands alone.
func (l *moduleLinks) alone(i int) bool { return l != nil && !l.linked[i] }

// alone reports whether module i (of x.t.Modules) is extracted on its own:
// it stands alone, and no GoCache keeps the tables.
func (x *extractor) alone(i int) bool {
	return x.next == nil && !x.opts.oneSyntaxPass && x.t.Links.alone(i)
}

// heldApart is what the extraction of the other modules holds while a
// module standing alone is extracted with its own.
type heldApart struct {
	tables      map[string]*table
	syntaxTypes hashSet
}

// holdApart starts the extraction of a module standing alone: the tables
// and syntax types of the others are set apart (none of its files reads
// them, none of theirs reads its own).
func (x *extractor) holdApart() *heldApart {
	h := &heldApart{tables: x.tables, syntaxTypes: x.syntaxTypes}
	x.tables, x.syntaxTypes = make(map[string]*table), hashSet{}
	return h
}

// endAlone extracts the files of module i, standing alone, read from
// syntax, and its implements edges from them, then lets go of its tables,
// its syntax types and its files' indices by name, and puts back the
// others'.
func (x *extractor) endAlone(i int, others *heldApart) error {
	x.extractSyntax(func(j int) bool { return x.t.Links.fileMod[j] == int32(i) })
	x.implementsSyntax()
	x.tables, x.syntaxTypes = others.tables, others.syntaxTypes
	// No file of a later module is one of this module's (declFiles keeps
	// the names the symbols' tags point to).
	x.declFile = make(map[string]uint32)
	return x.failedRead()
}
