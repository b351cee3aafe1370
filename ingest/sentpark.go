package ingest

// Parked symbol sets (SPEC §9 "Memory"). Streaming, the symbols a package
// sends are kept in the package's own hash set (Graph.setScope): only the
// merges of that package and of its tests ask about them. Once a module's
// type-checked packages are merged, their sets are parked: written to an
// unnamed file beside the store, hashSlotSize bytes a symbol, and dropped
// from memory. A question about a parked package's symbol (the syntax-only
// merge of its files for other platforms, its tests waiting at finish)
// reads its set back first, so parking changes no answer, only where the
// set waits.
//
// The file holds the sets one after another, each its slots as
// hashSet.appendSlots writes them; what is known of each set (where, how
// many, its seeds) stays in memory (parkedSet).

import (
	"fmt"
	"hash/maphash"
	"os"
	"strings"

	"github.com/memctl/memctl/lmdbstore"
)

// parkedSet is where a parked set is and what reads it back.
type parkedSet struct {
	off          int64
	n            int
	seed1, seed2 maphash.Seed
}

// sentPark is the file the parked sets are in.
type sentPark struct {
	dir string // where the file goes (the store's directory)
	f   *os.File
	end int64
	buf []byte
	err error // the first failure to read a set back (Graph.parkErr)
	// parked and unparked count the symbols written and read back.
	parked, unparked int
}

// parkAt makes the graph park sets in an unnamed file in dir.
func (g *Graph) parkAt(dir string) { g.park = &sentPark{dir: dir} }

// parkScope parks package ip's set. A set that cannot be written stays in
// memory.
func (g *Graph) parkScope(ip string) {
	s := g.scoped[ip]
	if s == nil || g.park == nil {
		return
	}
	if s.len() == 0 { // nothing to answer for (and no seeds drawn yet)
		delete(g.scoped, ip)
		return
	}
	p := g.park
	if p.f == nil {
		f, err := lmdbstore.UnnamedFile(p.dir)
		if err != nil {
			debugf("sent symbols stay in memory: %v", err)
			g.park = nil
			return
		}
		p.f = f
	}
	p.buf = s.appendSlots(p.buf[:0])
	if _, err := p.f.WriteAt(p.buf, p.end); err != nil {
		debugf("sent symbols of %s stay in memory: %v", ip, err)
		return
	}
	if g.parked == nil {
		g.parked = make(map[string]parkedSet)
	}
	g.parked[ip] = parkedSet{off: p.end, n: s.len(), seed1: s.seed1, seed2: s.seed2}
	p.end += int64(len(p.buf))
	p.parked += s.len()
	delete(g.scoped, ip)
}

// unpark reads package ip's parked set back into memory, if it is parked.
func (g *Graph) unpark(ip string) {
	ps, ok := g.parked[ip]
	if !ok {
		return
	}
	delete(g.parked, ip)
	p := g.park
	b := make([]byte, ps.n*hashSlotSize)
	if _, err := p.f.ReadAt(b, ps.off); err != nil {
		if p.err == nil {
			p.err = fmt.Errorf("ingest: reading back the sent symbols of %s: %w", ip, err)
		}
		return
	}
	if g.scoped == nil {
		g.scoped = make(map[string]*hashSet)
	}
	g.scoped[ip] = hashSetOf(ps.seed1, ps.seed2, b)
	p.unparked += ps.n
}

// parkErr is the first failure to read a parked set back: the answers
// about its symbols were wrong from then on.
func (g *Graph) parkErr() error {
	if g.park == nil {
		return nil
	}
	return g.park.err
}

// closePark removes the file of the parked sets.
func (g *Graph) closePark() {
	if g.park != nil {
		debugf("sent symbols: %d parked (%d bytes), %d read back", g.park.parked, g.park.end, g.park.unparked)
	}
	if g.park != nil && g.park.f != nil {
		g.park.f.Close()
		g.park.f = nil
	}
}

// symScope calls fn with each package symbol key may belong to (the key
// names its package's import path, then a dot, then the symbol's name;
// the last element of an import path may hold dots), until fn returns
// true.
func symScope(key string, fn func(ip string) bool) {
	rest, ok := strings.CutPrefix(key, "sym:")
	if !ok {
		return
	}
	from := strings.LastIndexByte(rest, '/') + 1
	for i := from; i < len(rest); i++ {
		if rest[i] == '.' && fn(rest[:i]) {
			return
		}
	}
}

// scopeOf is the set holding symbol key, if a package's set does, read
// back first if it is parked.
func (g *Graph) scopeOf(key string) *hashSet {
	if len(g.scoped) == 0 && len(g.parked) == 0 {
		return nil
	}
	var held *hashSet
	symScope(key, func(ip string) bool {
		if _, ok := g.parked[ip]; ok {
			g.unpark(ip)
		}
		if s := g.scoped[ip]; s != nil && s.has(key) {
			held = s
			return true
		}
		return false
	})
	return held
}
