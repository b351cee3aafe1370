package treesitter

// Reusing the last resolution of Python modules (Options.Previous): a
// module's imports, bases and calls resolve through its own facts and the
// modules its import statements name — and, transitively, theirs — and
// nothing else (every r.mods lookup starts from an import's dotted name,
// a prefix of it, or a submodule under it). So a module whose content is
// unchanged and whose import closure reaches no changed, added or removed
// module resolves as last time: its edges are those the previous graph
// holds from its file and symbols, its unresolved count that of its file
// payload. The graph is then the one a full resolution gives; the
// differential tests (python_reuse_test.go, freshness) compare the two.

import (
	"bytes"
	"path"
	"strings"

	"github.com/memctl/memctl/ingest"
)

// pyReuse is what the resolution of the unaffected modules reuses.
type pyReuse struct {
	prev   *ingest.Graph
	reused map[*pyMod]int // module → unresolved calls of its file last time
}

// reusable returns the modules of r whose resolution prev (the graph of
// the last extraction of this tree, with the payloads b's cache kept)
// gives unchanged, or nil when none can be reused: no previous graph or
// kept payloads, or some module is named otherwise than last time (a
// file added or removed changed the fallback names of pyModuleNames).
func (r *pyResolver) reusable(prev *ingest.Graph, files []*parsedFile) *pyReuse {
	last := r.b.cache.lastPayloads()
	if prev == nil || last == nil {
		return nil
	}
	// The last file payloads of the tree's Python files, current or not.
	oldFile := func(key string) (ingest.FilePayload, bool) {
		n, ok := prev.Node(key)
		if !ok {
			return ingest.FilePayload{}, false
		}
		p, ok := last[key]
		if !ok || !bytes.Equal(p.json, n.Payload) {
			return ingest.FilePayload{}, false
		}
		v, ok := p.value()
		fp, isFile := v.(ingest.FilePayload)
		return fp, ok && isFile
	}
	changed := make(map[string]bool) // names and path aliases of the modules changed, added or removed
	mark := func(name, rel string) {
		changed[name] = true
		changed[pathModuleName(rel)] = true
	}
	use := &pyReuse{prev: prev, reused: make(map[*pyMod]int, len(files))}
	for _, f := range files {
		m := r.byRel[f.Rel]
		key := ingest.FileKey(f.Rel)
		fp, ok := oldFile(key)
		switch {
		case ok && fp.Package != m.name:
			return nil // renamed: names are global
		case !ok && prev.HasNode(key):
			return nil // a file of the last graph without its payload: its old name is unknown
		case !ok || fp.Hash != f.Hash || fp.Lang != f.Lang:
			mark(m.name, f.Rel)
		default:
			use.reused[m] = fp.Unresolved
		}
	}
	var unknown bool
	var removed []string
	prev.EachNode(func(n ingest.Node) {
		rel, ok := strings.CutPrefix(n.Key, "file:")
		if !ok || n.Type != ingest.TypeFile || r.byRel[rel] != nil {
			return
		}
		if fp, ok := oldFile(n.Key); ok {
			if fp.Lang == ingest.LangPython {
				mark(fp.Package, rel) // removed
				removed = append(removed, fp.Package)
			}
		} else if path.Ext(rel) == ".py" {
			unknown = true
		}
	})
	if unknown {
		return nil
	}
	// Which modules each dotted name an import names can reach: the
	// module of the name or of a prefix of it, and those under it.
	names := make(map[*pyMod][]string, len(files))
	under := make(map[string][]*pyMod)
	for _, f := range files {
		m := r.byRel[f.Rel]
		names[m] = r.importedNames(m)
		for _, d := range names[m] {
			under[d] = nil
		}
	}
	for name, m := range r.mods {
		for p := name; p != ""; p = parentDotted(p) {
			if ms, ok := under[p]; ok {
				under[p] = append(ms, m)
			}
		}
	}
	underChanged := make(map[string]bool)
	for name := range changed {
		for p := name; p != ""; p = parentDotted(p) {
			underChanged[p] = true
		}
	}
	affected := r.sharedKeys(prev, removed)
	importers := make(map[*pyMod][]*pyMod)
	var todo []*pyMod
	for _, f := range files {
		m := r.byRel[f.Rel]
		if _, ok := use.reused[m]; !ok || affected[m] {
			affected[m] = true
			todo = append(todo, m)
			continue
		}
		hit := false
		for _, d := range names[m] {
			if underChanged[d] {
				hit = true
			}
			for _, dep := range under[d] {
				importers[dep] = append(importers[dep], m)
			}
			for p := parentDotted(d); p != ""; p = parentDotted(p) {
				hit = hit || changed[p]
				if dep := r.mods[p]; dep != nil {
					importers[dep] = append(importers[dep], m)
				}
			}
		}
		if hit {
			affected[m] = true
			todo = append(todo, m)
		}
	}
	for len(todo) > 0 {
		m := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, imp := range importers[m] {
			if !affected[imp] {
				affected[imp] = true
				todo = append(todo, imp)
			}
		}
	}
	for m := range affected {
		delete(use.reused, m)
	}
	return use
}

// sharedKeys are the modules whose symbol keys another module may share
// (module a's class b's method f and module a.b's function f are both
// sym:py:a.b.f): the edges from such a key are not one module's alone.
// They shared them last time when the previous graph has the outer
// module's definition (a module removed since, or its definition: the
// removed names are those of the modules removed).
func (r *pyResolver) sharedKeys(prev *ingest.Graph, removed []string) map[*pyMod]bool {
	out := make(map[*pyMod]bool)
	share := func(name string, inner *pyMod) {
		for p := parentDotted(name); p != ""; p = parentDotted(p) {
			outer := r.mods[p]
			if outer != nil && outer.name != p {
				outer = nil // a path alias: keys use names
			}
			first, _, _ := strings.Cut(name[len(p)+1:], ".")
			now := false
			if outer != nil {
				_, now = outer.byQual[first]
			}
			if now || prev.HasNode(symKey(ingest.LangPython, p+"."+first)) {
				if outer != nil {
					out[outer] = true
				}
				if inner != nil {
					out[inner] = true
				}
			}
		}
	}
	for _, m := range r.byRel {
		share(m.name, m)
	}
	for _, name := range removed {
		share(name, nil)
	}
	return out
}

// importedNames are the dotted names m's import statements name: the
// module of each import (and the top package a plain import binds) and
// each name a from-import takes from it (a submodule when there is one).
// m depends on the modules of these names, of their prefixes and under
// them (a package's submodules are its attributes).
func (r *pyResolver) importedNames(m *pyMod) []string {
	var out []string
	for _, imp := range m.facts.imports {
		if !imp.from {
			for _, n := range imp.names {
				// "import a.b" binds a: any module under it is an
				// attribute away.
				root, _, _ := strings.Cut(n.name, ".")
				out = append(out, n.name, root)
			}
			continue
		}
		base := r.fromModuleName(m, imp)
		if base == "" {
			continue
		}
		out = append(out, base)
		for _, n := range imp.names {
			out = append(out, joinDotted(base, n.name))
		}
	}
	return out
}

// replay adds what resolving the modules reused added last time: the
// edges of the previous graph from their files and symbols (with the
// external package nodes their imports point to), and their unresolved
// calls.
func (u *pyReuse) replay(r *pyResolver) {
	b := r.b
	u.prev.EachEdge(func(e ingest.Edge) {
		rel, ok := strings.CutPrefix(e.Src, "file:")
		if !ok {
			rel = b.symFile[e.Src] // the declaring file: keys shared are not reused
		}
		if _, ok := u.reused[r.byRel[rel]]; !ok {
			return
		}
		if e.Rel == ingest.RelImports && !b.g.HasNode(e.Dst) && !b.pendingKeys[e.Dst] {
			if n, ok := u.prev.Node(e.Dst); ok && n.Type == ingest.TypePackage {
				b.g.AddNode(n)
			}
		}
		b.g.AddEdge(e)
	})
	for m, n := range u.reused {
		b.fileMissed[ingest.FileKey(m.file.Rel)] += n
		b.unresolved[ingest.LangPython] += n
	}
}
