package treesitter

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pyQueryPlaces is the query pyQuery and pyExpand replace: each place
// written as a pattern with its child steps (as parsePython read them
// until 2026-11-27). TestPyExpandMatchesPlaces compares the facts of the
// two.
const pyQueryPlaces = `
(call function: (_) @callee)
(decorator (identifier) @deco)
(decorator (attribute) @deco)
(attribute) @ref
(identifier) @ident
(import_statement) @import
(import_from_statement) @import
(parameters) @params
(lambda_parameters) @params
(function_definition name: (identifier) @localdef)
(class_definition name: (identifier) @localdef)
(assignment) @assign
(assignment left: (_) @bind)
(augmented_assignment left: (_) @bind)
(for_statement left: (_) @bind)
(for_statement left: (identifier) right: (_)) @for
(for_in_clause left: (identifier) right: (_)) @for
(with_item value: (as_pattern alias: (as_pattern_target (identifier)))) @with
(named_expression name: (identifier) value: (_)) @walrus
(for_in_clause left: (_) @bind)
(as_pattern_target) @bind
(named_expression name: (_) @bind)
(global_statement) @global
(nonlocal_statement) @global
`

// pyPlacesSample has every place, nested and repeated, and the near
// misses (a for over a tuple, an as of an attribute, a walrus in a
// comprehension, a clause with two right sides).
const pyPlacesSample = `
import os, a.b as ab
from . import c
from .d import (e, f as g)


@deco
@mod.deco(arg)
@mod.attr
def f(x, y=1, *a, **k):
    global G
    z = x
    z += 1
    w: int = 2
    a.b, (c, d) = 1, (2, 3)
    for i in range(3):
        pass
    for j, k in pairs:
        pass
    for m in a, b:
        pass
    with open(p) as fh, lock:
        pass
    with ctx() as self.attr, other() as (q, r):
        pass
    if (n := len(z)) > 1:
        pass
    [v for v in vs if (u := v)]
    [1 for s in 1, 2]
    [s2 for s2 in xs, ys]
    {kk: vv for kk, vv in items.items()}
    (lambda q1, q2=3: q1)(1)
    a(b)(c)(d)
    return f(g(h(x)))


class C(Base):
    def m(self):
        nonlocal_x = 1

        def inner():
            nonlocal nonlocal_x
            nonlocal_x = 2
        return inner
    try:
        pass
    except E as err:
        pass
    match cmd:
        case [x1, *rest] as whole:
            pass
`

// TestPyExpandMatchesPlaces: over the sample, the fixtures, the tree's
// scripts and the Python standard library when there is one, every
// file's facts read through pyQuery and pyExpand equal those read
// through the patterns they replace (second implementation: the query
// cursor matching the child steps).
func TestPyExpandMatchesPlaces(t *testing.T) {
	gs, err := loadGrammars()
	if err != nil {
		t.Fatal(err)
	}
	g := gs["python"]
	if err := g.load(); err != nil {
		t.Fatal(err)
	}
	ref := &gram{name: "python-places", def: &grammar{name: "python-places", lang: g.def.lang, query: pyQueryPlaces}}
	if err := ref.load(); err != nil {
		t.Fatal(err)
	}
	sources := map[string][]byte{"sample": []byte(pyPlacesSample)}
	for _, glob := range []string{fixtureDir + "/python/*.py", fixtureDir + "/python/*/*.py", "../../scripts/*.py",
		"/usr/lib/python3*/*.py", "/usr/lib/python3*/*/*.py"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				sources[f] = b
			}
		}
	}
	w := newWorker()
	defer w.close()
	same := func(_ *src, c capture, emit func(capture)) { emit(c) }
	for name, b := range sources {
		tree, err := w.parse(g, b)
		if err != nil {
			t.Fatal(err)
		}
		root := tree.RootNode()
		got := parsePython(w, &src{g: g, b: b}, root)
		want := parsePythonWith(w, &src{g: ref, b: b}, root, same)
		tree.Close()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: facts through pyExpand differ from the places' patterns (-patterns +expand):\n%s", name, cmp.Diff(want, got, cmp.Exporter(func(reflect.Type) bool { return true })))
		}
	}
	if len(sources) < 100 && !testing.Short() {
		t.Logf("only %d sources (no Python standard library here)", len(sources))
	}
	t.Logf("%d sources compared", len(sources))
}
