package treesitter

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	sitter "github.com/tree-sitter/go-tree-sitter"
	pygrammar "github.com/tree-sitter/tree-sitter-python/bindings/go"
)

// pyRefPatterns are the places of a mention written as query patterns,
// one per place pyRefIdent knows: the second implementation
// TestPyRefIdentMatchesQuery compares pyRefIdent with.
const pyRefPatterns = `
(argument_list (identifier) @ref)
(keyword_argument value: (identifier) @ref)
(assignment right: (identifier) @ref)
(return_statement (identifier) @ref)
(expression_list (identifier) @ref)
(list (identifier) @ref)
(tuple (identifier) @ref)
(set (identifier) @ref)
(pair value: (identifier) @ref)
(type (identifier) @ref)
(attribute object: (identifier) @ref)
(subscript value: (identifier) @ref)
(comparison_operator (identifier) @ref)
(boolean_operator (identifier) @ref)
(not_operator (identifier) @ref)
(conditional_expression (identifier) @ref)
(parenthesized_expression (identifier) @ref)
(lambda body: (identifier) @ref)
`

// pyRefSample has each place a name is a mention and, next to it, the
// same kind of node with the name in another field (not a mention).
const pyRefSample = `
import os
from a import b as c


def f(x: int, *args, key=val, **kw) -> Res:
    y = x
    y, z = p, q
    f(arg, key=kwval, *star)
    o.attr.deeper
    m[idx] = s[i:j]
    d = {k: v, **rest}
    if not flag and (other or third) and a < b_ > cc:
        return r
    t = [e1, e2], (e3, e4), {e5}
    fn = lambda u, w=dflt: body
    g = lam if cond else alt
    return q1, q2


class K(Base, metaclass=Meta):
    attr: Ann = val2
    for it in items:
        pass
    with cm as h:
        pass
    print(print, match, type)
    lst = [n for n in nums if n]
    (w2 := walrus)
    del gone
    assert ok, msg
    raise Err from cause
    yield yv
    await aw
`

// TestPyRefIdentMatchesQuery: the identifiers pyRefIdent keeps are those
// the query patterns it replaces capture, over the sample and every
// Python file of the tree's scripts and of the Python standard library
// when there is one.
func TestPyRefIdentMatchesQuery(t *testing.T) {
	lang := sitter.NewLanguage(pygrammar.Language())
	q, qerr := sitter.NewQuery(lang, pyRefPatterns)
	if qerr != nil {
		t.Fatal(qerr)
	}
	defer q.Close()
	p := sitter.NewParser()
	defer p.Close()
	if err := p.SetLanguage(lang); err != nil {
		t.Fatal(err)
	}
	cur := sitter.NewQueryCursor()
	defer cur.Close()
	sources := map[string][]byte{"sample": []byte(pyRefSample)}
	for _, glob := range []string{"../../scripts/*.py", "/usr/lib/python3*/*.py", "/usr/lib/python3*/email/*.py"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				sources[f] = b
			}
		}
	}
	total := 0
	for name, src := range sources {
		tree := p.Parse(src, nil)
		var want [][2]uint
		ms := cur.Matches(q, tree.RootNode(), src)
		for m := ms.Next(); m != nil; m = ms.Next() {
			for _, c := range m.Captures {
				want = append(want, [2]uint{c.Node.StartByte(), c.Node.EndByte()})
			}
		}
		var got [][2]uint
		var walk func(n *sitter.Node)
		walk = func(n *sitter.Node) {
			if n.Kind() == "identifier" && pyRefIdent(n) {
				got = append(got, [2]uint{n.StartByte(), n.EndByte()})
			}
			for i := uint(0); i < n.ChildCount(); i++ {
				walk(n.Child(i))
			}
		}
		walk(tree.RootNode())
		tree.Close()
		slices.SortFunc(want, func(a, b [2]uint) int { return int(a[0]) - int(b[0]) })
		slices.SortFunc(got, func(a, b [2]uint) int { return int(a[0]) - int(b[0]) })
		want = slices.Compact(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: pyRefIdent keeps %d identifiers at %v, the query captures %d at %v", name, len(got), got, len(want), want)
		}
		total += len(got)
	}
	if len(sources) < 2 || total < 40 {
		t.Fatalf("only %d sources, %d mentions: the comparison saw too little", len(sources), total)
	}
	t.Logf("%d sources, %d mentions", len(sources), total)
}
