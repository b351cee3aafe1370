package ingest

import (
	"cmp"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unique"
)

// table holds the package-level declarations of one package (every file
// extracted under its import path, typed or not). Syntax-only extraction
// resolves names with it.
type table struct {
	importPath string
	name       string
	names      nameSet               // top-level name → kind (kindCode; table.kind)
	methods    nameSet               // "Type.Method" of the methods declared (hasMethod)
	ifaces     map[string]*ifaceDecl // interface type → its methods
	imports    map[string]bool       // import paths its files import
	// implsDone: implementsSyntaxOf ran for the package; released: no
	// package extracted or checked after now reads the table, whose
	// names, methods, interfaces and imports are gone (release).
	implsDone, released bool

	// What syntax-only extraction infers the types of expressions from
	// (recorded for the packages it extracts): type declarations, the
	// signatures of funcs ("F"), methods and interface methods ("T.M"),
	// and package-level vars, each with the file that resolves its names.
	typeSpecs map[string]declOf[*ast.TypeSpec]
	sigs      map[string]declOf[*ast.FuncType]
	vars      map[string]varDecl
}

// declOf is a declaration and the context its names resolve in.
type declOf[T any] struct {
	decl T
	ctx  *declCtx
}

// varDecl is a package-level var: the i-th name of spec.
type varDecl struct {
	spec *ast.ValueSpec
	i    int
	ctx  *declCtx
}

// declCtx resolves the names of one file: its package's declarations,
// its imports (name → import path) and its top-level declaration nodes.
type declCtx struct {
	tab     *table
	imports map[string]string
	top     map[any]bool
	// switches maps the x := y.(type) of each type switch of the file
	// to its switch: the declaration of x in every clause.
	switches map[*ast.AssignStmt]*ast.TypeSwitchStmt
}

type ifaceDecl struct {
	methods []string
	embeds  []typeRef // embedded interfaces, resolved where they were written
}

type typeRef struct{ pkg, name string }

func (x *extractor) table(importPath, name string) *table {
	t := x.tables[importPath]
	if t == nil {
		t = &table{
			importPath: importPath, name: name,
			ifaces:  make(map[string]*ifaceDecl),
			imports: make(map[string]bool),

			typeSpecs: make(map[string]declOf[*ast.TypeSpec]),
			sigs:      make(map[string]declOf[*ast.FuncType]),
			vars:      make(map[string]varDecl),
		}
		x.tables[importPath] = t
	}
	return t
}

// addDecls records the declarations of file f in t. imports maps the
// file's import names to import paths. detail also records what type
// inference needs (signatures, type specs, vars), and returns the file's
// context; it is for the packages extracted from syntax.
func (t *table) addDecls(f *ast.File, imports map[string]string, detail bool) *declCtx {
	for _, p := range imports {
		t.imports[p] = true
	}
	var ctx *declCtx
	if detail {
		ctx = &declCtx{tab: t, imports: imports, top: topLevelDecls(f), switches: typeSwitches(f)}
	}
	first := func(k string) bool { // a symbol declared again keeps its first declaration
		_, ok := t.sigs[k]
		return detail && !ok
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil && len(d.Recv.List) > 0 {
				recv := recvTypeName(d.Recv.List[0].Type)
				if recv == "" {
					continue
				}
				t.addMethod(recv, d.Name.Name)
				if k := recv + "." + d.Name.Name; first(k) {
					t.sigs[k] = declOf[*ast.FuncType]{d.Type, ctx}
				}
			} else if d.Name.Name != "init" && d.Name.Name != "_" {
				t.setKind(d.Name.Name, KindFunc)
				if first(d.Name.Name) {
					t.sigs[d.Name.Name] = declOf[*ast.FuncType]{d.Type, ctx}
				}
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if _, ok := t.typeSpecs[s.Name.Name]; detail && !ok {
						t.typeSpecs[s.Name.Name] = declOf[*ast.TypeSpec]{s, ctx}
					}
					it, ok := s.Type.(*ast.InterfaceType)
					if !ok {
						t.setKind(s.Name.Name, KindType)
						continue
					}
					t.setKind(s.Name.Name, KindInterface)
					dec := &ifaceDecl{}
					for _, m := range it.Methods.List {
						if len(m.Names) > 0 {
							for _, n := range m.Names {
								dec.methods = append(dec.methods, n.Name)
								if ft, ok := m.Type.(*ast.FuncType); ok && first(s.Name.Name+"."+n.Name) {
									t.sigs[s.Name.Name+"."+n.Name] = declOf[*ast.FuncType]{ft, ctx}
								}
							}
							continue
						}
						switch e := m.Type.(type) {
						case *ast.Ident:
							dec.embeds = append(dec.embeds, typeRef{t.importPath, e.Name})
						case *ast.SelectorExpr:
							if pkg, ok := e.X.(*ast.Ident); ok && imports[pkg.Name] != "" {
								dec.embeds = append(dec.embeds, typeRef{imports[pkg.Name], e.Sel.Name})
							}
						}
					}
					t.ifaces[s.Name.Name] = dec
				case *ast.ValueSpec:
					kind := KindVar
					if d.Tok.String() == "const" {
						kind = KindConst
					}
					for i, n := range s.Names {
						if n.Name != "_" {
							t.setKind(n.Name, kind)
							if _, ok := t.vars[n.Name]; detail && kind == KindVar && !ok {
								t.vars[n.Name] = varDecl{s, i, ctx}
							}
						}
					}
				}
			}
		}
	}
	return ctx
}

// ifaceMethods returns the method names of interface r, following
// embedded interfaces in the tree, and where each is declared.
func (x *extractor) ifaceMethods(r typeRef, depth int, out map[string]typeRef) {
	t := x.tables[r.pkg]
	if t == nil || depth > 8 {
		return
	}
	dec := t.ifaces[r.name]
	if dec == nil {
		return
	}
	for _, m := range dec.methods {
		if _, ok := out[m]; !ok {
			out[m] = r
		}
	}
	for _, e := range dec.embeds {
		x.ifaceMethods(e, depth+1, out)
	}
}

var majorVersion = regexp.MustCompile(`^v[0-9]+$`)

// guessPackageName is the package name an import path most likely has
// when its package is not in the tree: the last element, without a major
// version element, a gopkg.in ".vN" suffix or a "go-" prefix.
func guessPackageName(p string) string {
	elems := strings.Split(p, "/")
	name := elems[len(elems)-1]
	if majorVersion.MatchString(name) && len(elems) > 1 {
		name = elems[len(elems)-2]
	}
	if i := strings.Index(name, ".v"); i > 0 && strings.HasPrefix(p, "gopkg.in/") {
		name = name[:i]
	}
	name = strings.TrimPrefix(name, "go-")
	name = strings.TrimSuffix(name, "-go")
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '.' {
			return '_'
		}
		return r
	}, name)
}

// fileImports maps the import names of a file to import paths; dot
// imports are listed apart. nameOf gives the package name of an import
// path imported without a name.
func fileImports(f *ast.File, nameOf func(string) string) (named map[string]string, dots []string) {
	named = make(map[string]string)
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		switch {
		case imp.Name == nil:
			named[nameOf(p)] = p
		case imp.Name.Name == ".":
			dots = append(dots, p)
		case imp.Name.Name != "_":
			named[imp.Name.Name] = p
		}
	}
	return named, dots
}

// syntaxFile is a file extracted without type information.
type syntaxFile struct {
	src     *srcFile
	name    string   // its package clause's name; "" when it has none
	imports []string // the import paths it imports
	// decls is, between the two passes of extractSyntax, the file without
	// its function bodies: all that resolving the names of other packages
	// needs (types, signatures, package-level vars). ctx resolves its names.
	decls *ast.File
	ctx   *declCtx
	err   error // why it has no package clause: its whole parse's error
	never bool  // its build constraint is never satisfied: not extracted
}

// extractSyntax extracts every file no typed package claimed, holding one
// package's syntax trees per CPU at a time, not the tree's. The files of
// a package some file read from syntax imports are read in two passes:
// the first parses them and keeps their declarations, the tables every
// file resolves names with; the second parses each package again,
// extracts it with those tables and lets its trees go. A package no such
// file imports is parsed once, in the second pass: only its own files
// read its declarations. Packages are merged into the graph in
// import-path order as they finish.
//
// in, when not nil, says which files of the tree (by index) are extracted
// now: those of a module standing alone (ExtractGo), whose own tables
// are then x.tables, or those of every other module.
func (x *extractor) extractSyntax(in func(i int) bool) {
	var todo []*syntaxFile
	for i, f := range x.t.Files {
		if !x.claimed[i] && (in == nil || in(i)) {
			todo = append(todo, &syntaxFile{src: f})
		}
	}
	x.parseHeads(todo)
	todo = slices.DeleteFunc(todo, func(sf *syntaxFile) bool { return sf.never })
	if x.next != nil {
		x.keepTables(len(todo))
	}

	var named []fileName
	imported := make(map[string]bool) // import paths some file read from syntax imports
	for _, sf := range todo {
		if sf.name != "" {
			named = append(named, fileName{sf.src.Rel, sf.name})
			for _, p := range sf.imports {
				imported[p] = true
			}
		}
	}
	ipOf := x.syntaxImportPaths(named, in)

	type unit struct {
		files []*syntaxFile
		twice bool // read in two passes: another package reads its declarations
	}
	units := make(map[string]*unit)
	unitImports := make(map[string][]string) // import path → what its files read from syntax import
	for _, sf := range todo {
		if sf.name == "" {
			continue
		}
		ip := ipOf(sf.src.Rel, sf.name)
		x.table(ip, sf.name)
		if units[ip] == nil {
			units[ip] = &unit{twice: imported[ip]}
		}
		units[ip].files = append(units[ip].files, sf)
		unitImports[ip] = append(unitImports[ip], sf.imports...)
	}
	ips := sortedKeys(units)
	twice := make(map[string]bool)
	for ip, u := range units {
		twice[ip] = u.twice
	}
	importsOf := func(p string) []string {
		out := slices.Clip(unitImports[p]) // appending copies: the map's slice stays as it is
		if t := x.tables[p]; t != nil {    // a type-checked package's, or one with typed files beside
			for q := range t.imports {
				out = append(out, q)
			}
		}
		return out
	}
	spans := declSpans(ips, importsOf)
	starts := make(map[int][]string) // first index → packages read twice whose span starts there
	ends := make(map[int][]string)   // last index → those whose span ends there
	for p, sp := range spans {
		if twice[p] {
			starts[sp.first] = append(starts[sp.first], p)
			ends[sp.last] = append(ends[sp.last], p)
		}
	}
	at := make(map[string]int, len(ips)) // package → its index in ips
	for i, ip := range ips {
		at[ip] = i
	}
	tabs := x.tableReleases(at, twice, spans, importsOf)
	// Streaming, each package's symbols are kept apart (Graph.setScope)
	// until its external test package, if any, is merged: no other merge
	// asks about them (a call is a test's of the package it tests).
	scoped := x.stream != nil
	dropAt := make(map[int][]string) // index of an external test package → the package it tests
	for _, t := range x.tables {
		t.seal()
	}
	batch := cmp.Or(x.syntaxBatch, syntaxBatch)
	for lo := 0; lo < len(ips); lo += batch {
		hi := min(lo+batch, len(ips))
		// The declarations this batch's packages may read that are not
		// parsed yet: the first pass of the packages read twice.
		var ready []string
		for i := lo; i < hi; i++ {
			ready = append(ready, starts[i]...)
		}
		slices.Sort(ready)
		var first []*syntaxFile
		for _, p := range ready {
			first = append(first, units[p].files...)
		}
		x.parseDecls(first)
		for _, sf := range first {
			named, _ := fileImports(sf.decls, x.packageName)
			sf.ctx = x.tables[ipOf(sf.src.Rel, sf.name)].addDecls(sf.decls, named, true)
		}
		for _, p := range ready {
			x.tables[p].seal()
		}
		if lo == 0 {
			debugHeap("syntax: declarations")
		}
		parallelInOrder(hi-lo, func(i int) *fragment {
			return x.extractSyntaxUnit(ips[lo+i], units[ips[lo+i]].files, units[ips[lo+i]].twice)
		}, func(i int, fr *fragment) {
			ip := ips[lo+i]
			if scoped {
				x.g.setScope(ip)
			}
			x.addPackage(ip, x.tables[ip].name, path.Dir(units[ip].files[0].src.Rel), ModeSyntax)
			x.merge(fr)
			if scoped {
				x.g.setScope("")
				x.testsOf(ip) // no later merge declares ip's symbols
				if j, ok := at[ip+"_test"]; ok && j > lo+i {
					dropAt[j] = append(dropAt[j], ip)
				} else {
					x.g.dropScope(ip)
				}
				for _, p := range dropAt[lo+i] {
					x.g.dropScope(p)
				}
			}
			// No package after this one reads these declarations: the
			// packages in flight are later ones, whose spans do not
			// reach them.
			for _, p := range ends[lo+i] {
				x.releaseDecls(x.tables[p], units[p].files)
			}
		})
		// The batch is merged and nothing is in flight: its packages'
		// implements edges, then the tables no later package reaches.
		if tabs != nil {
			for _, ip := range ips[lo:hi] {
				x.implementsSyntaxOf(ip)
			}
			for i := lo; i < hi; i++ {
				for _, p := range tabs.ends[i] {
					x.tables[p].release()
				}
			}
		}
	}
	// Files that do not even have a package clause.
	for _, sf := range todo {
		if sf.name == "" {
			x.addUnparsed(sf.src, parseErrorText(x.t.Root, sf.src, sf.err))
		}
	}
	// What only type inference read goes now (implementsSyntax reads the
	// names, methods and interfaces).
	for _, t := range x.tables {
		t.typeSpecs, t.sigs, t.vars = nil, nil, nil
	}
}

// extractSyntaxUnit extracts the files of package ip read from syntax;
// twice: its declarations were parsed in the first pass (other packages
// read them), else they are recorded now and let go after.
func (x *extractor) extractSyntaxUnit(ip string, sfs []*syntaxFile, twice bool) *fragment {
	fset := token.NewFileSet()
	files := make([]*ast.File, len(sfs))
	errs := make([]error, len(sfs))
	srcs := make([][]byte, len(sfs))
	parse := func(j int) {
		// The same bytes parse to the same tree (srcFile.read): for a
		// package read twice, the file whose declarations the first
		// pass kept.
		srcs[j], _ = x.source(sfs[j].src) // an error fails the extraction
		files[j], errs[j] = parser.ParseFile(fset, x.t.abs(sfs[j].src), srcs[j], 0)
	}
	if !twice {
		// Every file's declarations go in the table before any file is
		// extracted: the package's trees are held together.
		for j, sf := range sfs {
			parse(j)
			named, _ := fileImports(files[j], x.packageName)
			sf.ctx = x.tables[ip].addDecls(files[j], named, true)
		}
		x.tables[ip].seal() // no other package's file reads it before it is merged
	}
	fr := newFragment()
	for j, sf := range sfs {
		if twice { // the first pass recorded its declarations: one file's tree at a time
			parse(j)
		}
		f := files[j]
		_, dots := fileImports(f, x.packageName)
		r := &syntaxResolver{x: x, declCtx: sf.ctx}
		if twice {
			r.declCtx = &declCtx{tab: sf.ctx.tab, imports: sf.ctx.imports, top: topLevelDecls(f), switches: typeSwitches(f)}
			r.decls = sf.ctx
		}
		for _, d := range dots {
			if t := x.tables[d]; t != nil {
				r.dots = append(r.dots, t)
			}
		}
		uf := &unitFile{src: sf.src, ast: f, fset: fset, res: r, mode: ModeSyntax}
		if errs[j] != nil {
			uf.parseErr = parseErrorText(x.t.Root, sf.src, errs[j])
		}
		fr.extractFile(ip, uf, srcs[j])
		files[j], srcs[j] = nil, nil
		if x.next == nil { // read for the last time, unless a GoCache keeps it
			sf.src.Content = nil
		}
	}
	if !twice { // no other package reads its declarations: the trees go
		x.releaseDecls(x.tables[ip], sfs)
	}
	return fr
}

// releaseDecls lets go of what type inference reads of package t, whose
// files read from syntax are sfs: its type specs, signatures and vars and
// the declarations they point into. Its names, methods and interfaces
// stay (implementsSyntax reads them).
func (x *extractor) releaseDecls(t *table, sfs []*syntaxFile) {
	t.typeSpecs, t.sigs, t.vars = nil, nil, nil
	for _, sf := range sfs {
		sf.ctx, sf.decls = nil, nil
	}
}

// packageName is the name of the package at import path p: its table's,
// or a guess for a package outside the tree.
func (x *extractor) packageName(p string) string {
	if t := x.tables[p]; t != nil {
		return t.name
	}
	return guessPackageName(p)
}

// fileName is a file read from syntax and the name its package clause gives.
type fileName struct{ rel, name string }

// syntaxImportPaths returns the import path of a file read from syntax
// (one of files) by its path and package name: its directory's, with
// "_test" for an external test package (name_test beside a package name
// of the directory, type-checked or not). in is extractSyntax's.
func (x *extractor) syntaxImportPaths(files []fileName, in func(i int) bool) func(rel, name string) string {
	dirNames := make(map[string]map[string]bool) // directory → package names
	addName := func(dir, name string) {
		if dirNames[dir] == nil {
			dirNames[dir] = make(map[string]bool)
		}
		dirNames[dir][name] = true
	}
	claimedDir := make(map[string]string) // import path → directory of its first claimed file
	for i, f := range x.t.Files {
		if x.claimed[i] && (in == nil || in(i)) {
			dir := path.Dir(f.Rel)
			if ip := x.t.importPathOf(dir); claimedDir[ip] == "" {
				claimedDir[ip] = dir
			}
		}
	}
	for _, t := range x.tables {
		if x.pkgModes[t.importPath] == ModeTyped {
			if dir, ok := claimedDir[strings.TrimSuffix(t.importPath, "_test")]; ok {
				addName(dir, t.name)
			}
		}
	}
	for _, f := range files {
		addName(path.Dir(f.rel), f.name)
	}
	return func(rel, name string) string {
		dir := path.Dir(rel)
		ip := x.t.importPathOf(dir)
		if base, ok := strings.CutSuffix(name, "_test"); ok && dirNames[dir][base] {
			ip += "_test"
		}
		return ip
	}
}

// parseHeads reads the package clause and imports of files on all CPUs,
// and marks the files whose build constraint is never satisfied (never).
// A file without a package name (or named _) is parsed whole, for the
// error its node reports, as before any pass.
func (x *extractor) parseHeads(files []*syntaxFile) {
	parallel(len(files), func(i int) {
		sf := files[i]
		src, err := x.source(sf.src)
		if err != nil { // fails the extraction
			sf.never = true
			return
		}
		if sf.never = neverBuilt(src); sf.never {
			return
		}
		f, _ := parser.ParseFile(token.NewFileSet(), x.t.abs(sf.src), src, parser.ImportsOnly|parser.SkipObjectResolution)
		if f == nil || f.Name == nil || f.Name.Name == "" || f.Name.Name == "_" {
			_, sf.err = parser.ParseFile(token.NewFileSet(), x.t.abs(sf.src), src, 0)
			if sf.err == nil {
				sf.err = errNoPackage
			}
			return
		}
		// Held until the file's package is extracted, for every file of
		// the tree read from syntax: its name and import paths are the
		// canonical copies (unique), a few thousand strings shared by
		// hundreds of thousands of files, not each file's own.
		sf.name = unique.Make(f.Name.Name).Value()
		sf.imports = make([]string, 0, len(f.Imports))
		for _, imp := range f.Imports {
			if p, err := strconv.Unquote(imp.Path.Value); err == nil {
				sf.imports = append(sf.imports, unique.Make(p).Value())
			}
		}
	})
}

// parseDecls parses files on all CPUs and keeps of each its declarations
// (keepDecls). Without object resolution: the resolver uses it to tell
// local names from package-level ones, and what is kept of a declaration
// holds no local name it resolves (those are in the bodies keepDecls
// cuts); a package-level name it holds resolves the same through the
// package's table. The second pass parses with it, for the bodies.
func (x *extractor) parseDecls(files []*syntaxFile) {
	parallel(len(files), func(i int) {
		sf := files[i]
		src, _ := x.source(sf.src) // an error fails the extraction
		f, _ := parser.ParseFile(token.NewFileSet(), x.t.abs(sf.src), src, parser.SkipObjectResolution)
		keepDecls(f)
		sf.decls = f
	})
}

// keepDecls cuts from f what no table reads: the bodies of funcs and
// methods, the values of consts, and in the values of vars the elements
// of composite literals and the bodies of func literals (the type of
// T{…} is T, and a func literal's call has no type inference follows).
func keepDecls(f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			d.Body = nil
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				s, ok := spec.(*ast.ValueSpec)
				if !ok {
					continue
				}
				if d.Tok == token.CONST {
					s.Values = nil
					continue
				}
				for _, v := range s.Values {
					ast.Inspect(v, func(n ast.Node) bool {
						switch n := n.(type) {
						case *ast.CompositeLit:
							n.Elts = nil
						case *ast.FuncLit:
							n.Body = &ast.BlockStmt{} // walkers expect one
							return false
						}
						return true
					})
				}
			}
		}
	}
}

type ingestError string

func (e ingestError) Error() string { return string(e) }

const errNoPackage = ingestError("no package clause")

// topLevelDecls is the set of declaration nodes at file scope, which
// ast.Object.Decl points to for package-level names.
func topLevelDecls(f *ast.File) map[any]bool {
	top := make(map[any]bool)
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			top[d] = true
		case *ast.GenDecl:
			for _, s := range d.Specs {
				top[s] = true
			}
		}
	}
	return top
}

// typeSwitches finds the type switches of f that declare a variable.
func typeSwitches(f *ast.File) map[*ast.AssignStmt]*ast.TypeSwitchStmt {
	var out map[*ast.AssignStmt]*ast.TypeSwitchStmt
	ast.Inspect(f, func(n ast.Node) bool {
		if ts, ok := n.(*ast.TypeSwitchStmt); ok {
			if a, ok := ts.Assign.(*ast.AssignStmt); ok {
				if out == nil {
					out = make(map[*ast.AssignStmt]*ast.TypeSwitchStmt)
				}
				out[a] = ts
			}
		}
		return true
	})
	return out
}

// syntaxResolver resolves names without type information: package-level
// names by the scope rules, pkg.Name through the file's imports, and
// x.M where the type of x follows from declarations of the tree: a
// receiver, parameter, result or variable whose declaration names its type
// or initialises it (T{}, &T{}, new(T), a call of a func or method of the
// tree, a field, an element of a slice or map, a range variable), and
// chains of these (r.log.Append(), NewT().M(), r.Leader().Send()).
type syntaxResolver struct {
	x *extractor
	*declCtx
	dots []*table
	// decls is the context of the same file's declarations as the tables
	// hold them (parsed apart from the file being extracted); nil for a
	// resolver of a declaration elsewhere.
	decls *declCtx
}

// inferDepth bounds the chains type inference follows (x.a.b().c…):
// deeper ones are unresolved, as are cycles through initialisers.
const inferDepth = 12

func (r *syntaxResolver) importPath(spec *ast.ImportSpec) string {
	p, err := strconv.Unquote(spec.Path.Value)
	if err != nil {
		return ""
	}
	return p
}

func lookup(t *table, name string) (target, bool) {
	kind := t.kind(name)
	if kind == "" {
		return target{}, false
	}
	return target{key: SymbolKey(t.importPath, name), kind: kind, pkg: t.importPath}, true
}

// local reports whether id names a local declaration of its file (a
// parameter, variable, named result…), which hides package-level names.
func (r *syntaxResolver) local(id *ast.Ident) bool { return id.Obj != nil && !r.top[id.Obj.Decl] }

func (r *syntaxResolver) ident(id *ast.Ident) (target, bool) {
	if id.Obj != nil {
		if !r.top[id.Obj.Decl] {
			return target{}, false // a local name
		}
		return lookup(r.tab, id.Name)
	}
	if t, ok := lookup(r.tab, id.Name); ok {
		return t, true
	}
	for _, d := range r.dots {
		if t, ok := lookup(d, id.Name); ok && ast.IsExported(id.Name) {
			return t, true
		}
	}
	return target{}, false
}

// importOf is the import path an identifier names when it is the name of
// an imported package in this file.
func (r *syntaxResolver) importOf(id *ast.Ident) (string, bool) {
	if id.Obj != nil || r.tab.kind(id.Name) != "" {
		return "", false
	}
	p, ok := r.imports[id.Name]
	return p, ok
}

func (r *syntaxResolver) selector(sel *ast.SelectorExpr) (target, bool, bool) {
	if x, ok := sel.X.(*ast.Ident); ok {
		if p, ok := r.importOf(x); ok {
			t := r.x.tables[p]
			if t == nil {
				return target{}, false, true
			}
			tg, ok := lookup(t, sel.Sel.Name)
			return tg, ok, true
		}
		if tx, ok := r.ident(x); ok && (tx.kind == KindType || tx.kind == KindInterface) {
			tg, ok := r.method(typeRef{tx.pkg, x.Name}, sel.Sel.Name, 0)
			return tg, ok, false // a method expression T.M
		}
	}
	if ref, where := r.named(r.exprType(sel.X, 0)); where == inTree {
		tg, ok := r.method(ref, sel.Sel.Name, 0)
		return tg, ok, false
	}
	return target{}, false, false
}

// method resolves method m of the named type ref: declared on it, on an
// interface it is (or embeds), or promoted from an embedded field.
func (r *syntaxResolver) method(ref typeRef, m string, depth int) (target, bool) {
	t := r.x.tables[ref.pkg]
	if t == nil || depth > 4 {
		return target{}, false
	}
	if t.hasMethod(ref.name, m) {
		return target{key: MethodKey(ref.pkg, ref.name, m), kind: KindMethod, pkg: ref.pkg}, true
	}
	if t.ifaces[ref.name] != nil {
		ms := make(map[string]typeRef)
		r.x.ifaceMethods(ref, 0, ms)
		if at, ok := ms[m]; ok {
			return target{key: MethodKey(at.pkg, at.name, m), kind: KindMethod, pkg: at.pkg}, true
		}
		return target{}, false
	}
	for _, e := range r.embedded(ref) {
		if er, where := r.named(e); where == inTree {
			if tg, ok := r.method(er, m, depth+1); ok {
				return tg, true
			}
		}
	}
	return target{}, false
}

// sType is a type as a declaration writes it, with the file whose names
// resolve it; the zero sType is an unknown type. outside: a type of a
// package outside the tree (the result of one of its funcs, say), which
// is all that is known of it.
type sType struct {
	expr    ast.Expr
	ctx     *declCtx
	outside bool
}

// Where a named type is declared.
const (
	unknownType = iota // not a named type, or one that does not resolve
	inTree             // a type of a package extracted here
	outsideTree        // a predeclared type or one of a package outside the tree
)

// named is the named type t denotes (through pointers, parentheses and
// type arguments), and where it is declared.
func (r *syntaxResolver) named(t sType) (typeRef, int) {
	if t.outside {
		return typeRef{}, outsideTree
	}
	if t.ctx == nil {
		return typeRef{}, unknownType
	}
	e := t.expr
	for e != nil {
		switch v := e.(type) {
		case *ast.StarExpr:
			e = v.X
		case *ast.ParenExpr:
			e = v.X
		case *ast.IndexExpr:
			e = v.X
		case *ast.IndexListExpr:
			e = v.X
		case *ast.Ident:
			switch k := t.ctx.tab.kind(v.Name); {
			case k == KindType || k == KindInterface:
				return typeRef{t.ctx.tab.importPath, v.Name}, inTree
			case k == "" && types.Universe.Lookup(v.Name) != nil:
				return typeRef{}, outsideTree
			}
			return typeRef{}, unknownType
		case *ast.SelectorExpr:
			x, ok := v.X.(*ast.Ident)
			if !ok {
				return typeRef{}, unknownType
			}
			p := t.ctx.imports[x.Name]
			if p == "" {
				return typeRef{}, unknownType
			}
			if pt := r.x.tables[p]; pt != nil {
				if k := pt.kind(v.Sel.Name); k == KindType || k == KindInterface {
					return typeRef{p, v.Sel.Name}, inTree
				}
				return typeRef{}, unknownType
			}
			if r.x.treePkgs[p] {
				return typeRef{}, unknownType
			}
			return typeRef{}, outsideTree
		default:
			return typeRef{}, unknownType
		}
	}
	return typeRef{}, unknownType
}

// underlying is the type literal t stands for: t itself, or the
// declaration of the named type of the tree it names.
func (r *syntaxResolver) underlying(t sType) sType {
	for i := 0; i < 4 && t.expr != nil; i++ {
		e := t.expr
		for {
			if p, ok := e.(*ast.ParenExpr); ok {
				e = p.X
				continue
			}
			break
		}
		ref, where := r.named(sType{expr: e, ctx: t.ctx})
		if where != inTree {
			return sType{expr: e, ctx: t.ctx}
		}
		d, ok := r.x.tables[ref.pkg].typeSpecs[ref.name]
		if !ok || d.ctx == nil {
			return sType{}
		}
		t = sType{expr: d.decl.Type, ctx: d.ctx}
	}
	return t
}

// deref is the type a pointer type points to (t when it is not one).
func deref(t sType) sType {
	if s, ok := t.expr.(*ast.StarExpr); ok {
		return sType{expr: s.X, ctx: t.ctx}
	}
	return t
}

// embedded are the types embedded in the struct type ref.
func (r *syntaxResolver) embedded(ref typeRef) []sType {
	ctx := r.ctxOf(ref)
	if ctx == nil {
		return nil
	}
	u := r.underlying(sType{expr: &ast.Ident{Name: ref.name}, ctx: ctx})
	st, ok := u.expr.(*ast.StructType)
	if !ok {
		return nil
	}
	var out []sType
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 {
			out = append(out, sType{expr: f.Type, ctx: u.ctx})
		}
	}
	return out
}

// ctxOf is a context in which ref's name resolves: its declaring file's.
func (r *syntaxResolver) ctxOf(ref typeRef) *declCtx {
	if t := r.x.tables[ref.pkg]; t != nil {
		if d, ok := t.typeSpecs[ref.name]; ok && d.ctx != nil {
			return d.ctx
		}
		return &declCtx{tab: t}
	}
	return nil
}

// field is the type of field name of the named type ref (its own, or
// promoted from an embedded struct), and whether it has one.
func (r *syntaxResolver) field(ref typeRef, name string, depth int) (sType, bool) {
	ctx := r.ctxOf(ref)
	if ctx == nil || depth > 4 {
		return sType{}, false
	}
	u := r.underlying(sType{expr: &ast.Ident{Name: ref.name}, ctx: ctx})
	st, ok := u.expr.(*ast.StructType)
	if !ok {
		return sType{}, false
	}
	var embeds []sType
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 {
			if recvTypeName(f.Type) == name || selName(f.Type) == name {
				return sType{expr: f.Type, ctx: u.ctx}, true
			}
			embeds = append(embeds, sType{expr: f.Type, ctx: u.ctx})
		}
		for _, n := range f.Names {
			if n.Name == name {
				return sType{expr: f.Type, ctx: u.ctx}, true
			}
		}
	}
	for _, e := range embeds {
		if er, where := r.named(e); where == inTree {
			if t, ok := r.field(er, name, depth+1); ok {
				return t, true
			}
		}
	}
	return sType{}, false
}

// selName is the name of an embedded pkg.T or *pkg.T.
func selName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if s, ok := e.(*ast.SelectorExpr); ok {
		return s.Sel.Name
	}
	return ""
}

// in returns a resolver for the file of ctx (a declaration of the tables).
// The file's own declarations see its dot imports; those of other files
// do not (a resolver of a declaration does not keep them).
func (r *syntaxResolver) in(ctx *declCtx) *syntaxResolver {
	switch ctx {
	case r.declCtx:
		return r
	case r.decls:
		return &syntaxResolver{x: r.x, declCtx: ctx, dots: r.dots, decls: ctx}
	}
	return &syntaxResolver{x: r.x, declCtx: ctx}
}

// exprType infers the type of expression e of r's file from declarations.
func (r *syntaxResolver) exprType(e ast.Expr, depth int) sType {
	if depth > inferDepth || r.declCtx == nil {
		return sType{}
	}
	switch v := e.(type) {
	case *ast.ParenExpr:
		return r.exprType(v.X, depth+1)
	case *ast.Ident:
		if r.local(v) {
			return r.localType(v, depth)
		}
		if _, ok := r.importOf(v); ok {
			return sType{}
		}
		if d, ok := r.tab.vars[v.Name]; ok && (v.Obj == nil || r.top[v.Obj.Decl]) {
			return r.in(d.ctx).valueType(d.spec, d.i, depth+1)
		}
	case *ast.SelectorExpr:
		if x, ok := v.X.(*ast.Ident); ok {
			if p, ok := r.importOf(x); ok {
				if t := r.x.tables[p]; t != nil {
					if d, ok := t.vars[v.Sel.Name]; ok && d.ctx != nil {
						return r.in(d.ctx).valueType(d.spec, d.i, depth+1)
					}
					return sType{}
				}
				return sType{outside: !r.x.treePkgs[p]}
			}
		}
		switch ref, where := r.named(r.exprType(v.X, depth+1)); where {
		case inTree:
			if t, ok := r.field(ref, v.Sel.Name, 0); ok {
				return t
			}
		case outsideTree:
			return sType{outside: true}
		}
	case *ast.CallExpr:
		return r.result(v, 0, depth+1)
	case *ast.CompositeLit:
		if v.Type != nil {
			return sType{expr: v.Type, ctx: r.declCtx}
		}
	case *ast.UnaryExpr:
		switch v.Op {
		case token.AND:
			return r.exprType(v.X, depth+1)
		case token.ARROW:
			if c, ok := r.underlying(r.exprType(v.X, depth+1)).expr.(*ast.ChanType); ok {
				return sType{expr: c.Value, ctx: r.underlying(r.exprType(v.X, depth+1)).ctx}
			}
		}
	case *ast.StarExpr:
		return deref(r.exprType(v.X, depth+1))
	case *ast.IndexExpr:
		return r.elem(r.exprType(v.X, depth+1), false)
	case *ast.SliceExpr:
		return r.exprType(v.X, depth+1)
	case *ast.TypeAssertExpr:
		if v.Type != nil {
			return sType{expr: v.Type, ctx: r.declCtx}
		}
	}
	return sType{}
}

// elem is the element type of a slice, array, map (key: its key type),
// pointer to array, or channel type.
func (r *syntaxResolver) elem(t sType, key bool) sType {
	u := r.underlying(deref(r.underlying(t)))
	switch c := u.expr.(type) {
	case *ast.ArrayType:
		if key {
			return sType{}
		}
		return sType{expr: c.Elt, ctx: u.ctx}
	case *ast.MapType:
		if key {
			return sType{expr: c.Key, ctx: u.ctx}
		}
		return sType{expr: c.Value, ctx: u.ctx}
	case *ast.ChanType:
		if key {
			return sType{expr: c.Value, ctx: u.ctx}
		}
	}
	return sType{}
}

// calledExpr is what call c calls, without parentheses and type
// arguments: f in (f)(x), f[T](x), f[K, V](x).
func calledExpr(c *ast.CallExpr) ast.Expr {
	fun := c.Fun
	for {
		switch f := fun.(type) {
		case *ast.ParenExpr:
			fun = f.X
		case *ast.IndexExpr:
			fun = f.X
		case *ast.IndexListExpr:
			fun = f.X
		default:
			return fun
		}
	}
}

// result is the type of the i-th result of call c: a func or method of
// the tree, new(T), make(T, …), append(s, …), or a conversion T(x).
func (r *syntaxResolver) result(c *ast.CallExpr, i, depth int) sType {
	fun := calledExpr(c)
	var tg target
	var ok bool
	switch f := fun.(type) {
	case *ast.Ident:
		if builtinFuncs[f.Name] && !r.local(f) && r.tab.kind(f.Name) == "" && len(c.Args) > 0 && i == 0 {
			switch f.Name {
			case "new", "make": // new(T) is a *T, but methods are the same
				return sType{expr: c.Args[0], ctx: r.declCtx}
			case "append": // the slice it appends to
				return r.exprType(c.Args[0], depth+1)
			}
		}
		tg, ok = r.ident(f)
	case *ast.SelectorExpr:
		tg, ok, _ = r.selector(f)
		if !ok {
			// A func of a package outside the tree, or a method of a type
			// outside it: its result is outside too, as far as is known.
			if x, isIdent := f.X.(*ast.Ident); isIdent {
				if p, isImport := r.importOf(x); isImport {
					return sType{outside: r.x.tables[p] == nil && !r.x.treePkgs[p]}
				}
			}
			if _, where := r.named(r.exprType(f.X, depth+1)); where == outsideTree {
				return sType{outside: true}
			}
		}
	case *ast.ArrayType, *ast.StarExpr, *ast.MapType, *ast.ChanType, *ast.FuncType:
		return sType{expr: f, ctx: r.declCtx} // a conversion
	}
	if !ok {
		return sType{}
	}
	switch tg.kind {
	case KindType, KindInterface: // a conversion
		return sType{expr: fun, ctx: r.declCtx}
	case KindFunc, KindMethod:
		name := strings.TrimPrefix(tg.key, "sym:"+tg.pkg+".")
		d, ok := r.x.tables[tg.pkg].sigs[name]
		if !ok || d.ctx == nil || d.decl.Results == nil {
			return sType{}
		}
		n := 0
		for _, f := range d.decl.Results.List {
			k := max(len(f.Names), 1)
			if i < n+k {
				return sType{expr: f.Type, ctx: d.ctx}
			}
			n += k
		}
	}
	return sType{}
}

// valueType is the type of the i-th name of a var declaration.
func (r *syntaxResolver) valueType(s *ast.ValueSpec, i, depth int) sType {
	if s.Type != nil {
		return sType{expr: s.Type, ctx: r.declCtx}
	}
	switch {
	case len(s.Values) == len(s.Names):
		return r.exprType(s.Values[i], depth+1)
	case len(s.Values) == 1:
		return r.multi(s.Values[0], i, depth+1)
	}
	return sType{}
}

// multi is the type of the i-th value of a multi-valued expression: a
// call, or v, ok := m[k] / x.(T) / <-c.
func (r *syntaxResolver) multi(e ast.Expr, i, depth int) sType {
	if c, ok := e.(*ast.CallExpr); ok {
		return r.result(c, i, depth+1)
	}
	if i == 0 {
		return r.exprType(e, depth+1)
	}
	return sType{}
}

// localType is the type of a local name from its declaration: a
// parameter, result or receiver (the type it is given), var x T, var x =
// e, x := e, x, y := f(), a range variable. Syntax-only extraction has no
// type information by definition: the parser's per-file object resolution
// is the scope information it uses, which is why ast.Object is
// deprecated, and what is wanted here.
func (r *syntaxResolver) localType(id *ast.Ident, depth int) sType {
	obj := id.Obj
	if obj.Kind != ast.Var {
		return sType{}
	}
	switch d := obj.Decl.(type) {
	case *ast.Field:
		return sType{expr: d.Type, ctx: r.declCtx}
	case *ast.ValueSpec:
		for i, n := range d.Names {
			if n.Name == obj.Name {
				return r.valueType(d, i, depth+1)
			}
		}
	case *ast.AssignStmt:
		if ts := r.switches[d]; ts != nil {
			return r.switchVarType(ts, id, depth)
		}
		for i, l := range d.Lhs {
			if lid, ok := l.(*ast.Ident); !ok || lid.Name != obj.Name {
				continue
			}
			switch {
			case len(d.Rhs) == 1 && isRange(d.Rhs[0]):
				t := r.exprType(d.Rhs[0].(*ast.UnaryExpr).X, depth+1)
				return r.elem(t, i == 0)
			case len(d.Lhs) == len(d.Rhs):
				return r.exprType(d.Rhs[i], depth+1)
			case len(d.Rhs) == 1:
				return r.multi(d.Rhs[0], i, depth+1)
			}
		}
	}
	return sType{}
}

// switchVarType is the type of the variable of type switch ts where id
// uses it, as the spec gives it: in a clause listing exactly one type,
// that type; in any other, the type of the switch's guard expression.
func (r *syntaxResolver) switchVarType(ts *ast.TypeSwitchStmt, id *ast.Ident, depth int) sType {
	for _, s := range ts.Body.List {
		c, ok := s.(*ast.CaseClause)
		if !ok || id.Pos() < c.Colon || id.End() > c.End() {
			continue
		}
		if len(c.List) == 1 {
			if n, ok := c.List[0].(*ast.Ident); !ok || n.Name != "nil" {
				return sType{expr: c.List[0], ctx: r.declCtx}
			}
		}
		if ta, ok := ts.Assign.(*ast.AssignStmt).Rhs[0].(*ast.TypeAssertExpr); ok {
			return r.exprType(ta.X, depth+1)
		}
	}
	return sType{}
}

// isRange reports whether e is the parser's stand-in for `range x` in the
// declaration of range variables.
func isRange(e ast.Expr) bool {
	u, ok := e.(*ast.UnaryExpr)
	return ok && u.Op == token.RANGE
}

// builtinFuncs are the predeclared functions: calls to them leave the tree.
var builtinFuncs = map[string]bool{
	"append": true, "cap": true, "clear": true, "close": true, "complex": true, "copy": true, "delete": true,
	"imag": true, "len": true, "make": true, "max": true, "min": true, "new": true, "panic": true,
	"print": true, "println": true, "real": true, "recover": true,
}

// unresolved reports whether a call that resolved to no symbol is
// counted as unresolved: it might call code of the tree, but syntax could
// not tell which. Calls of builtins, conversions to predeclared types,
// calls into packages outside the tree, methods of types outside it, and
// calls of function values (locals, parameters, vars, fields of func
// type, func literals) are not.
func (r *syntaxResolver) unresolved(c *ast.CallExpr) bool {
	fun := calledExpr(c)
	switch f := fun.(type) {
	case *ast.Ident:
		if r.local(f) {
			return false
		}
		if k := r.tab.kind(f.Name); k != "" {
			return k != KindVar && k != KindConst
		}
		return !builtinFuncs[f.Name] && types.Universe.Lookup(f.Name) == nil
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok {
			if p, ok := r.importOf(x); ok {
				if t := r.x.tables[p]; t != nil {
					k := t.kind(f.Sel.Name)
					return k != KindVar && k != KindConst
				}
				return r.x.treePkgs[p]
			}
		}
		ref, where := r.named(r.exprType(f.X, 0))
		switch where {
		case outsideTree:
			return false
		case inTree:
			_, isField := r.field(ref, f.Sel.Name, 0)
			return !isField
		}
		return true
	}
	return false // a func literal, a call's result, an element of a slice of funcs…
}

// implementsSyntax adds implements edges for the types declared in files
// extracted without type information, matching method names: a type implements an interface of its
// own package or of a package it imports (transitively, in the tree) when
// it declares every method the interface has.
func (x *extractor) implementsSyntax() {
	for _, ip := range sortedKeys(x.tables) {
		x.implementsSyntaxOf(ip)
	}
}

// implementsSyntaxOf adds the implements edges of the types package ip
// declares in files read from syntax (implementsSyntax), once: it reads
// the tables of the packages ip reaches, which must not be released yet.
func (x *extractor) implementsSyntaxOf(ip string) {
	t := x.tables[ip]
	if t.implsDone {
		return
	}
	t.implsDone = true
	if !slices.ContainsFunc(t.recvs(), func(tname string) bool { return x.syntaxTypes.has(SymbolKey(ip, tname)) }) {
		return
	}
	// Interfaces visible from ip, indexed by one of their methods.
	byMethod := make(map[string][]typeRef)
	sets := make(map[typeRef]map[string]typeRef)
	seen := map[string]bool{ip: true}
	queue := []string{ip}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		pt := x.tables[p]
		if pt == nil {
			continue
		}
		for _, name := range sortedKeys(pt.ifaces) {
			ref := typeRef{p, name}
			ms := make(map[string]typeRef)
			x.ifaceMethods(ref, 0, ms)
			if len(ms) == 0 {
				continue
			}
			sets[ref] = ms
			first := slices.Min(sortedKeys(ms))
			byMethod[first] = append(byMethod[first], ref)
		}
		for _, q := range sortedKeys(pt.imports) {
			if !seen[q] {
				seen[q] = true
				queue = append(queue, q)
			}
		}
	}
	for _, tname := range t.recvs() {
		if t.kind(tname) != KindType || !x.syntaxTypes.has(SymbolKey(ip, tname)) {
			continue
		}
		have := t.methodSet(tname)
		for _, m := range sortedKeys(have) {
			for _, iref := range byMethod[m] {
				ok := true
				for im := range sets[iref] {
					if !have[im] {
						ok = false
						break
					}
				}
				if ok {
					x.g.AddEdge(Edge{Src: SymbolKey(ip, tname), Rel: RelImplements, Dst: SymbolKey(iref.pkg, iref.name)})
				}
			}
		}
	}
}

// addUnparsed adds the node of a file without a package clause.
func (x *extractor) addUnparsed(src *srcFile, parseErr string) {
	b, _ := x.source(src) // an error fails the extraction
	x.g.AddNode(Node{Key: FileKey(src.Rel), Type: TypeFile, Payload: mustJSON(FilePayload{
		Path: src.Rel, Hash: src.Hash.String(), Bytes: len(b), Lines: countLines(b),
		Test: strings.HasSuffix(src.Rel, "_test.go"), Mode: ModeSyntax, ParseError: parseErr,
		Terms: FileTerms(b),
	})})
	x.addDirs(src.Rel)
}

// parseErrorText is the first line of a file's syntax error with the file
// named by its path relative to the ingested root (SPEC §9: payload paths
// are relative; the parser names the absolute file it was given).
func parseErrorText(root string, src *srcFile, err error) string {
	return strings.ReplaceAll(firstLine(err.Error()), absPath(root, src.Rel), src.Rel)
}
