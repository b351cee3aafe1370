package ingest

import (
	"go/ast"
	"go/parser"
	"path"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// table holds the package-level declarations of one package (every file
// extracted under its import path, typed or not). Syntax-only extraction
// resolves names with it.
type table struct {
	importPath string
	name       string
	names      map[string]string          // top-level name → kind
	methods    map[string]map[string]bool // concrete type → its declared methods
	ifaces     map[string]*ifaceDecl      // interface type → its methods
	imports    map[string]bool            // import paths its files import
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
			names:   make(map[string]string),
			methods: make(map[string]map[string]bool),
			ifaces:  make(map[string]*ifaceDecl),
			imports: make(map[string]bool),
		}
		x.tables[importPath] = t
	}
	return t
}

// addDecls records the declarations of file f in t. imports maps the
// file's import names to import paths.
func (t *table) addDecls(f *ast.File, imports map[string]string) {
	for _, p := range imports {
		t.imports[p] = true
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil && len(d.Recv.List) > 0 {
				recv := recvTypeName(d.Recv.List[0].Type)
				if recv == "" {
					continue
				}
				if t.methods[recv] == nil {
					t.methods[recv] = make(map[string]bool)
				}
				t.methods[recv][d.Name.Name] = true
			} else if d.Name.Name != "init" && d.Name.Name != "_" {
				t.names[d.Name.Name] = KindFunc
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					it, ok := s.Type.(*ast.InterfaceType)
					if !ok {
						t.names[s.Name.Name] = KindType
						continue
					}
					t.names[s.Name.Name] = KindInterface
					dec := &ifaceDecl{}
					for _, m := range it.Methods.List {
						if len(m.Names) > 0 {
							for _, n := range m.Names {
								dec.methods = append(dec.methods, n.Name)
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
					for _, n := range s.Names {
						if n.Name != "_" {
							t.names[n.Name] = kind
						}
					}
				}
			}
		}
	}
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

// syntaxFile is a file parsed for syntax-only extraction.
type syntaxFile struct {
	src *srcFile
	ast *ast.File
	err error
}

// extractSyntax extracts every file no typed package claimed.
func (x *extractor) extractSyntax() {
	var todo []*syntaxFile
	for _, f := range x.t.Files {
		if !x.claimed[f.Rel] && !neverBuilt(f.Content) {
			todo = append(todo, &syntaxFile{src: f})
		}
	}
	x.parseAll(todo)

	// Package names per directory, typed packages included, to tell an
	// external test package (name_test beside name) from a package.
	dirNames := make(map[string]map[string]bool)
	addName := func(dir, name string) {
		if dirNames[dir] == nil {
			dirNames[dir] = make(map[string]bool)
		}
		dirNames[dir][name] = true
	}
	for _, t := range x.tables {
		if x.pkgModes[t.importPath] == ModeTyped {
			for _, f := range x.t.Files {
				if x.claimed[f.Rel] && x.t.importPathOf(path.Dir(f.Rel)) == strings.TrimSuffix(t.importPath, "_test") {
					addName(path.Dir(f.Rel), t.name)
					break
				}
			}
		}
	}
	for _, sf := range todo {
		if sf.ast != nil {
			addName(path.Dir(sf.src.Rel), sf.ast.Name.Name)
		}
	}
	importPathFor := func(sf *syntaxFile) string {
		dir := path.Dir(sf.src.Rel)
		ip := x.t.importPathOf(dir)
		if base, ok := strings.CutSuffix(sf.ast.Name.Name, "_test"); ok && dirNames[dir][base] {
			ip += "_test"
		}
		return ip
	}
	nameOf := func(p string) string {
		if t := x.tables[p]; t != nil {
			return t.name
		}
		return guessPackageName(p)
	}

	// Declarations first, so that every file resolves names declared in
	// any other, then the files in order.
	type unit struct {
		ip    string
		files []*syntaxFile
	}
	units := make(map[string]*unit)
	for _, sf := range todo {
		if sf.ast == nil {
			continue
		}
		ip := importPathFor(sf)
		x.table(ip, sf.ast.Name.Name)
		if units[ip] == nil {
			units[ip] = &unit{ip: ip}
		}
		units[ip].files = append(units[ip].files, sf)
	}
	for _, sf := range todo {
		if sf.ast != nil {
			named, _ := fileImports(sf.ast, nameOf)
			x.tables[importPathFor(sf)].addDecls(sf.ast, named)
		}
	}
	ips := sortedKeys(units)
	frags := make([]*fragment, len(ips))
	parallel(len(ips), func(i int) {
		ip := ips[i]
		tab := x.tables[ip]
		fr := newFragment()
		for _, sf := range units[ip].files {
			named, dots := fileImports(sf.ast, nameOf)
			r := &syntaxResolver{x: x, tab: tab, imports: named, top: topLevelDecls(sf.ast)}
			for _, d := range dots {
				if t := x.tables[d]; t != nil {
					r.dots = append(r.dots, t)
				}
			}
			uf := &unitFile{src: sf.src, ast: sf.ast, fset: x.fset, res: r, mode: ModeSyntax}
			if sf.err != nil {
				uf.parseErr = parseErrorText(sf)
			}
			fr.extractFile(ip, uf)
		}
		frags[i] = fr
	})
	for i, ip := range ips {
		x.addPackage(ip, x.tables[ip].name, path.Dir(units[ip].files[0].src.Rel), ModeSyntax)
		x.merge(frags[i])
	}
	// Files that do not even have a package clause.
	for _, sf := range todo {
		if sf.ast == nil {
			key := FileKey(sf.src.Rel)
			x.g.AddNode(Node{Key: key, Type: TypeFile, Payload: mustJSON(FilePayload{
				Path: sf.src.Rel, Hash: sf.src.Hash, Bytes: len(sf.src.Content), Lines: countLines(sf.src.Content),
				Test: strings.HasSuffix(sf.src.Rel, "_test.go"), Mode: ModeSyntax, ParseError: parseErrorText(sf),
				Terms: FileTerms(sf.src.Content),
			})})
			x.addDirs(sf.src.Rel)
		}
	}
}

// parseAll parses files on all CPUs, with object resolution (the syntax
// resolver uses it to tell local names from package-level ones).
func (x *extractor) parseAll(files []*syntaxFile) {
	var wg sync.WaitGroup
	next := make(chan *syntaxFile)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sf := range next {
				f, err := parser.ParseFile(x.fset, sf.src.Abs, sf.src.Content, 0)
				if f != nil && f.Name != nil && f.Name.Name != "" && f.Name.Name != "_" {
					sf.ast = f
				}
				sf.err = err
				if sf.ast == nil && sf.err == nil {
					sf.err = errNoPackage
				}
			}
		}()
	}
	for _, sf := range files {
		next <- sf
	}
	close(next)
	wg.Wait()
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

// syntaxResolver resolves names without type information: package-level
// names by the scope rules, pkg.Name through the file's imports, and
// x.Method when x is a receiver, parameter or variable whose declaration
// names its type.
type syntaxResolver struct {
	x       *extractor
	tab     *table
	imports map[string]string
	dots    []*table
	top     map[any]bool
}

func (r *syntaxResolver) importPath(spec *ast.ImportSpec) string {
	p, err := strconv.Unquote(spec.Path.Value)
	if err != nil {
		return ""
	}
	return p
}

func lookup(t *table, name string) (target, bool) {
	kind := t.names[name]
	if kind == "" {
		return target{}, false
	}
	return target{key: SymbolKey(t.importPath, name), kind: kind, pkg: t.importPath}, true
}

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

func (r *syntaxResolver) selector(sel *ast.SelectorExpr) (target, bool, bool) {
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return target{}, false, false
	}
	if x.Obj == nil && r.tab.names[x.Name] == "" {
		if p, ok := r.imports[x.Name]; ok {
			t := r.x.tables[p]
			if t == nil {
				return target{}, false, true
			}
			tg, ok := lookup(t, sel.Sel.Name)
			return tg, ok, true
		}
	}
	if tx, ok := r.ident(x); ok && (tx.kind == KindType || tx.kind == KindInterface) {
		tg, ok := r.method(typeRef{tx.pkg, x.Name}, sel.Sel.Name)
		return tg, ok, false
	}
	if x.Obj != nil && x.Obj.Kind == ast.Var {
		if ref, ok := r.typeRef(localType(x.Obj)); ok {
			tg, ok := r.method(ref, sel.Sel.Name)
			return tg, ok, false
		}
	}
	return target{}, false, false
}

// method resolves method m of the named type ref.
func (r *syntaxResolver) method(ref typeRef, m string) (target, bool) {
	t := r.x.tables[ref.pkg]
	if t == nil {
		return target{}, false
	}
	if t.methods[ref.name][m] {
		return target{key: MethodKey(ref.pkg, ref.name, m), kind: KindMethod, pkg: ref.pkg}, true
	}
	if t.ifaces[ref.name] != nil {
		ms := make(map[string]typeRef)
		r.x.ifaceMethods(ref, 0, ms)
		if at, ok := ms[m]; ok {
			return target{key: MethodKey(at.pkg, at.name, m), kind: KindMethod, pkg: at.pkg}, true
		}
	}
	return target{}, false
}

// typeRef resolves a type expression naming a package-level type: T, *T,
// T[P], pkg.T.
func (r *syntaxResolver) typeRef(e ast.Expr) (typeRef, bool) {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
			continue
		case *ast.ParenExpr:
			e = t.X
			continue
		case *ast.IndexExpr:
			e = t.X
			continue
		case *ast.IndexListExpr:
			e = t.X
			continue
		case *ast.Ident:
			if tg, ok := r.ident(t); ok && (tg.kind == KindType || tg.kind == KindInterface) {
				return typeRef{tg.pkg, t.Name}, true
			}
		case *ast.SelectorExpr:
			if x, ok := t.X.(*ast.Ident); ok && x.Obj == nil {
				if p, ok := r.imports[x.Name]; ok && r.x.tables[p] != nil {
					if k := r.x.tables[p].names[t.Sel.Name]; k == KindType || k == KindInterface {
						return typeRef{p, t.Sel.Name}, true
					}
				}
			}
		}
		return typeRef{}, false
	}
}

// localType is the type expression a local variable's declaration gives
// it, or nil: a parameter's type, var x T, x := T{...}, &T{...}, new(T).
// Syntax-only extraction has no type information by definition: the
// parser's per-file object resolution is the scope information it uses,
// which is why ast.Object is deprecated, and what is wanted here.
//
//lint:ignore SA1019 see above
func localType(obj *ast.Object) ast.Expr {
	switch d := obj.Decl.(type) {
	case *ast.Field:
		return d.Type
	case *ast.ValueSpec:
		if d.Type != nil {
			return d.Type
		}
		for i, n := range d.Names {
			if n.Name == obj.Name && i < len(d.Values) && len(d.Values) == len(d.Names) {
				return litType(d.Values[i])
			}
		}
	case *ast.AssignStmt:
		if len(d.Lhs) != len(d.Rhs) {
			return nil
		}
		for i, l := range d.Lhs {
			if id, ok := l.(*ast.Ident); ok && id.Name == obj.Name {
				return litType(d.Rhs[i])
			}
		}
	}
	return nil
}

func litType(e ast.Expr) ast.Expr {
	switch v := e.(type) {
	case *ast.CompositeLit:
		return v.Type
	case *ast.UnaryExpr:
		if c, ok := v.X.(*ast.CompositeLit); ok {
			return c.Type
		}
	case *ast.CallExpr:
		if id, ok := v.Fun.(*ast.Ident); ok && id.Name == "new" && len(v.Args) == 1 {
			return v.Args[0]
		}
	}
	return nil
}

// implementsSyntax adds implements edges for the types declared in files
// extracted without type information, matching method names: a type implements an interface of its
// own package or of a package it imports (transitively, in the tree) when
// it declares every method the interface has.
func (x *extractor) implementsSyntax() {
	for _, ip := range sortedKeys(x.tables) {
		t := x.tables[ip]
		if !slices.ContainsFunc(sortedKeys(t.methods), func(tname string) bool { return x.syntaxTypes[SymbolKey(ip, tname)] }) {
			continue
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
		for _, tname := range sortedKeys(t.methods) {
			if t.names[tname] != KindType || !x.syntaxTypes[SymbolKey(ip, tname)] {
				continue
			}
			have := t.methods[tname]
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
}

// parseErrorText is the first line of a file's syntax error with the file
// named by its path relative to the ingested root (SPEC §9: payload paths
// are relative; the parser names the absolute file it was given).
func parseErrorText(sf *syntaxFile) string {
	return strings.ReplaceAll(firstLine(sf.err.Error()), sf.src.Abs, sf.src.Rel)
}
