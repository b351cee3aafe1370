package treesitter

import (
	"fmt"
	"path"
	"sync"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// gram is one tree-sitter grammar with its compiled query. A Language and
// a Query are immutable and shared by every worker; parsers, trees and
// query cursors are per worker and closed after use (they hold C memory).
// The query is compiled on the first parse with the grammar (load): a
// process that parses no file of a language — a refresh whose parses are
// all cached — does not pay for it (tens of milliseconds for all of
// them).
type gram struct {
	name string
	def  *grammar
	once sync.Once
	err  error
	// Set by load.
	lang   *sitter.Language
	kinds  []string // node kind by KindId
	fields map[string]uint16
	query  *sitter.Query
	caps   []string // capture names by index
}

// load compiles the grammar's query once; safe for concurrent use.
func (g *gram) load() error {
	g.once.Do(func() {
		lang := g.def.lang()
		g.fields = make(map[string]uint16)
		n := lang.NodeKindCount()
		g.kinds = make([]string, n)
		for i := uint32(0); i < n; i++ {
			g.kinds[i] = lang.NodeKindForId(uint16(i))
		}
		for i := uint32(1); i <= lang.FieldCount(); i++ {
			g.fields[lang.FieldNameForId(uint16(i))] = uint16(i)
		}
		q, qerr := sitter.NewQuery(lang, g.def.query)
		if qerr != nil {
			g.err = fmt.Errorf("%s query: %v", g.name, qerr)
			return
		}
		g.lang, g.query, g.caps = lang, q, q.CaptureNames()
	})
	return g.err
}

var (
	gramsOnce sync.Once
	grams     map[string]*gram
)

// loadGrammars returns every registered grammar, keyed by grammar name,
// each compiled on its first use (gram.load). Queries are never closed:
// they live as long as the process, like the grammars.
func loadGrammars() (map[string]*gram, error) {
	gramsOnce.Do(func() {
		useLibcAllocator()
		grams = make(map[string]*gram)
		for _, l := range languages {
			for i := range l.grammars {
				d := &l.grammars[i]
				grams[d.name] = &gram{name: d.name, def: d}
			}
		}
	})
	return grams, nil
}

// Warm starts compiling, in the background, the grammars that parse the
// files named (paths with their extension; other files are ignored), so
// that a caller with other work to do before it parses them — reading a
// cache, asking git — does not wait for the compile afterwards. The first
// parse with a grammar waits for a compile under way (load). Compiling a
// grammar no file ends up needing costs time, never a different answer.
func Warm(files []string) {
	gs, _ := loadGrammars()
	seen := make(map[*gram]bool)
	for _, f := range files {
		l := languageNamed(langOfFile(f))
		if l == nil {
			continue
		}
		if g := gs[l.grammarFor(path.Ext(f)).name]; !seen[g] {
			seen[g] = true
			go func() { _ = g.load() }() // the error is load's to report at the parse
		}
	}
}

// gramOf is the compiled grammar that parses f.
func gramOf(gs map[string]*gram, f *parsedFile) *gram {
	return gs[languageNamed(f.Lang).grammarFor(path.Ext(f.Rel)).name]
}

// worker parses files on one goroutine: one parser per grammar and one
// query cursor, closed by close.
type worker struct {
	parsers map[string]*sitter.Parser
	cursor  *sitter.QueryCursor
}

func newWorker() *worker {
	return &worker{parsers: make(map[string]*sitter.Parser), cursor: sitter.NewQueryCursor()}
}

func (w *worker) close() {
	for _, p := range w.parsers {
		p.Close()
	}
	w.cursor.Close()
}

// parse parses src with g; the caller closes the tree.
func (w *worker) parse(g *gram, src []byte) (*sitter.Tree, error) {
	if err := g.load(); err != nil {
		return nil, err
	}
	p, ok := w.parsers[g.name]
	if !ok {
		p = sitter.NewParser()
		if err := p.SetLanguage(g.lang); err != nil {
			p.Close()
			return nil, err
		}
		w.parsers[g.name] = p
	}
	t := p.Parse(src, nil)
	if t == nil {
		return nil, fmt.Errorf("tree-sitter returned no tree")
	}
	return t, nil
}

// src is a parsed file: its bytes and grammar, with helpers that read
// nodes without allocating C strings.
type src struct {
	g *gram
	b []byte
}

func (s *src) kind(n *sitter.Node) string {
	if n == nil {
		return ""
	}
	if id := int(n.KindId()); id < len(s.g.kinds) {
		return s.g.kinds[id]
	}
	return "ERROR" // ts_builtin_sym_error is 65535
}

func (s *src) text(n *sitter.Node) string {
	if n == nil {
		return ""
	}
	return string(s.b[n.StartByte():n.EndByte()])
}

// field is the child of n in the field name (nil if none).
func (s *src) field(n *sitter.Node, name string) *sitter.Node {
	id, ok := s.g.fields[name]
	if !ok || n == nil {
		return nil
	}
	return n.ChildByFieldId(id)
}

// named returns the named children of n.
func (s *src) named(n *sitter.Node) []sitter.Node {
	if n == nil {
		return nil
	}
	c := int(n.NamedChildCount())
	out := make([]sitter.Node, 0, c)
	for i := 0; i < c; i++ {
		if ch := n.NamedChild(uint(i)); ch != nil {
			out = append(out, *ch)
		}
	}
	return out
}

// line is the 1-based line of a byte offset's node start or end.
func startLine(n *sitter.Node) int { return int(n.StartPosition().Row) + 1 }

// endLine is the 1-based line of the node's last byte (a node ending at
// column 0 ends on the line before).
func endLine(n *sitter.Node) int {
	p := n.EndPosition()
	if p.Column == 0 && p.Row > 0 && n.EndByte() > n.StartByte() {
		return int(p.Row)
	}
	return int(p.Row) + 1
}

// capture is one node captured by a grammar's query.
type capture struct {
	name string
	node sitter.Node
}

// captures runs g's query over root and calls fn for every capture, in
// match order.
func (w *worker) captures(s *src, root *sitter.Node, fn func(c capture)) {
	ms := w.cursor.Matches(s.g.query, root, s.b)
	for m := ms.Next(); m != nil; m = ms.Next() {
		for _, c := range m.Captures {
			fn(capture{name: s.g.caps[c.Index], node: c.Node})
		}
	}
}

// firstError describes the first syntax error of a tree ("" if none).
func firstError(s *src, root *sitter.Node) string {
	if !root.HasError() {
		return ""
	}
	var find func(n *sitter.Node) string
	find = func(n *sitter.Node) string {
		if n.IsError() || n.IsMissing() {
			p := n.StartPosition()
			what := "syntax error"
			if n.IsMissing() {
				what = "missing " + s.kind(n)
			}
			return fmt.Sprintf("%d:%d: %s", p.Row+1, p.Column+1, what)
		}
		for i := uint(0); i < n.ChildCount(); i++ {
			c := n.Child(i)
			if c != nil && (c.HasError() || c.IsMissing()) {
				if e := find(c); e != "" {
					return e
				}
			}
		}
		return ""
	}
	if e := find(root); e != "" {
		return e
	}
	return "syntax error"
}
