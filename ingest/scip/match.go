package scip

// Matching a SCIP index onto a graph built by another extractor (SPEC.md
// §11.3 "Matching"): keys differ between extractors (scip-python names
// modules from the project root), so definitions are matched by file and
// the line of the definition's name, never by key. eval graph, eval impact
// --scip and `ingest code --precise` all match with this one rule.

import "slices"

// Candidate is a symbol of the other graph as matching reads it: its
// payload's name, path and lines (SPEC.md §9.3).
type Candidate struct {
	Key, Name, Path string
	Start, End      int
}

type lineKey struct {
	path string
	line int
}

// Matcher finds the candidate a SCIP definition describes.
type Matcher struct {
	byLine map[lineKey][]Candidate
	byPath map[string][]Candidate
}

// NewMatcher indexes candidates by file and line.
func NewMatcher(cands []Candidate) *Matcher {
	m := &Matcher{byLine: make(map[lineKey][]Candidate), byPath: make(map[string][]Candidate)}
	for _, c := range cands {
		k := lineKey{c.Path, c.Start}
		m.byLine[k] = append(m.byLine[k], c)
		m.byPath[c.Path] = append(m.byPath[c.Path], c)
	}
	return m
}

// Def finds the key of a definition: at its file and line, the candidate
// with its name, else the only one there; failing that, the innermost
// candidate of the file with its name whose lines hold the line. "" when
// none.
func (m *Matcher) Def(d Def) string {
	atLine := m.byLine[lineKey{d.Path, d.Line()}]
	for _, c := range atLine {
		if c.Name == d.Desc.Name {
			return c.Key
		}
	}
	if len(atLine) == 1 {
		return atLine[0].Key
	}
	inFile := m.byPath[d.Path]
	best := -1
	for i, c := range inFile {
		if c.Name != d.Desc.Name || c.Start > d.Line() || c.End < d.Line() {
			continue
		}
		if best < 0 || c.End-c.Start < inFile[best].End-inFile[best].Start {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return inFile[best].Key
}

// Symbol finds the key of a defined symbol: the first of its definitions
// (in index order) that matches. Symbols that get no node match nothing.
func (m *Matcher) Symbol(ix *Index, sym string) string {
	for _, d := range ix.Defs[sym] {
		if !d.Named() {
			return ""
		}
		if k := m.Def(d); k != "" {
			return k
		}
	}
	return ""
}

// Match maps every symbol the index defines that matches a candidate
// onto the candidate's key.
func Match(ix *Index, cands []Candidate) map[string]string {
	bySym, _ := MatchDefs(ix, cands)
	return bySym
}

// DefAt names one definition of a symbol: its file and the range of its
// name.
type DefAt struct {
	Path string
	Name Range
}

// MatchDefs is Match, and each definition matched on its own as well: a
// symbol defined more than once (scip-python names same-named functions
// nested in different methods of a class alike) maps to its first
// matching definition's key in bySym, and every definition to its own in
// byDef.
func MatchDefs(ix *Index, cands []Candidate) (bySym map[string]string, byDef map[DefAt]string) {
	m := NewMatcher(cands)
	bySym, byDef = make(map[string]string), make(map[DefAt]string)
	for _, sym := range SortedSymbols(ix) {
		for _, d := range ix.Defs[sym] {
			if !d.Named() {
				break
			}
			if k := m.Def(d); k != "" {
				if _, ok := bySym[sym]; !ok {
					bySym[sym] = k
				}
				byDef[DefAt{d.Path, d.Range}] = k
			}
		}
	}
	return bySym, byDef
}

// Holding is the innermost of a symbol's definitions whose enclosing
// range holds the reference, when the symbol has more than one.
func Holding(defs []Def, r Ref) (Def, bool) {
	if len(defs) < 2 {
		return Def{}, false
	}
	best, ok := Def{}, false
	for _, d := range defs {
		if d.Path != r.Path || !d.HasEnclosing || !holds(d.Enclosing, r.Range) {
			continue
		}
		if !ok || holds(best.Enclosing, d.Enclosing) {
			best, ok = d, true
		}
	}
	return best, ok
}

// ScopeOf is the definition a reference to a symbol defined more than
// once means: the innermost one declared inside a definition of the
// caller that holds the reference (a nested function called from the
// function around it, as Python looks a name up); else none.
func ScopeOf(defs, callers []Def, r Ref) (Def, bool) {
	if len(defs) < 2 {
		return Def{}, false
	}
	best, ok := Def{}, false
	for _, d := range defs {
		if d.Path != r.Path || !d.HasEnclosing {
			continue
		}
		for _, c := range callers {
			if c.Path == r.Path && c.HasEnclosing && holds(c.Enclosing, d.Enclosing) && holds(c.Enclosing, r.Range) &&
				(!ok || holds(best.Enclosing, d.Enclosing)) {
				best, ok = d, true
			}
		}
	}
	return best, ok
}

// holds reports whether range a holds range b.
func holds(a, b Range) bool {
	return (a.StartLine < b.StartLine || a.StartLine == b.StartLine && a.StartChar <= b.StartChar) &&
		(b.EndLine < a.EndLine || b.EndLine == a.EndLine && b.EndChar <= a.EndChar)
}

// SortedSymbols lists the symbols the index defines, sorted.
func SortedSymbols(ix *Index) []string {
	out := make([]string, 0, len(ix.Defs))
	for s := range ix.Defs {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}
