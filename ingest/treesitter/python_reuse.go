package treesitter

// Reusing the last resolution of Python modules (Options.Previous): a
// module's imports, bases and calls resolve through its own facts and the
// modules it finds by name (r.mod: every module a resolution reaches is
// looked up by a dotted name, or taken from a cached lookup, class bases
// or variable value that was). So each resolution records the names it
// looked up, found or not, with those its cache hits recorded when they
// were computed (frames: a cached value keeps the names read while
// computing it, and a hit reads them again), and the names its test
// marking read (which decides the tests edges). A module whose content
// is unchanged and none of whose names read last time is of a module
// changed, added or removed resolves as last time: its edges are those
// the previous graph holds from its file and symbols, its unresolved
// count that of its file payload, its names read those of last time. In
// an import cycle, an edit that changes no name another module read
// (module m0199 calling f200 of m0200, which keeps f200) leaves the rest
// of the cycle reused. The graph is then the one a full resolution
// gives; the differential tests (python_reuse_test.go, freshness)
// compare the two.

import (
	"bytes"
	"path"
	"slices"
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
		return p.filePayload()
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
	// A module resolves again when a name its last resolution read (a
	// module looked up by name, found or not, directly or through a
	// lookup, base or value it took from a cache) is of a module changed,
	// added or removed; or when that resolution is not known.
	affected := r.sharedKeys(prev, removed)
	lastDeps := r.b.cache.lastPyDeps()
	for _, f := range files {
		m := r.byRel[f.Rel]
		if _, ok := use.reused[m]; !ok || affected[m] {
			continue
		}
		deps, ok := lastDeps[ingest.FileKey(f.Rel)]
		if !ok || slices.ContainsFunc(deps, func(name string) bool { return changed[name] }) {
			affected[m] = true
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

// replay adds what resolving the modules reused added last time: the
// edges of the previous graph from their files and symbols but the
// defines and contains edges resolvePython adds for every module (with the
// external package nodes their imports point to), and their unresolved
// calls.
func (u *pyReuse) replay(r *pyResolver) {
	b := r.b
	u.prev.EachEdge(func(e ingest.Edge) {
		if e.Rel == ingest.RelDefines || e.Rel == ingest.RelContains {
			return // every module's: added with its file and symbols, not by resolving
		}
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
	lastDeps := b.cache.lastPyDeps()
	for m, n := range u.reused {
		key := ingest.FileKey(m.file.Rel)
		b.fileMissed[key] += n
		b.unresolved[ingest.LangPython] += n
		r.deps[key] = lastDeps[key] // what the reused resolution read, read again
	}
}

// mod is the module named dotted (nil for none), read by the resolution
// under way.
func (r *pyResolver) mod(dotted string) *pyMod {
	r.read(dotted)
	return r.mods[dotted]
}

// read records that the resolution under way read name.
func (r *pyResolver) read(name string) {
	if n := len(r.frames); n > 0 {
		r.frames[n-1] = append(r.frames[n-1], name)
	}
}

// readAll records that the resolution under way read names (a cache hit:
// the names its value was computed from).
func (r *pyResolver) readAll(names []string) {
	if n := len(r.frames); n > 0 {
		r.frames[n-1] = append(r.frames[n-1], names...)
	}
}

// begin starts recording what a resolution (or a value cached for later
// ones) reads; end stops, returns the names read (sorted, once each) and
// counts them as read by the resolution around it.
func (r *pyResolver) begin() { r.frames = append(r.frames, nil) }

func (r *pyResolver) end() []string {
	n := len(r.frames) - 1
	names := r.frames[n]
	r.frames = r.frames[:n]
	slices.Sort(names)
	names = slices.Clip(slices.Compact(names))
	r.readAll(names)
	return names
}
