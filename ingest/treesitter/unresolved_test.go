package treesitter

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memctl/memctl/ingest"
)

// Each file's payload counts the calls of that file that resolved to
// nothing (SPEC §9.3 unresolved, omitted when 0), and each language's
// summary is the sum over its files. Hand-counted: in a.ts, x.go() on a
// parameter of no declared type and missing(); in b.js nothing (a call
// of the tree, a global, an external package); in m.py obj.run() and
// gone(); in lib.rs v.frob().
func TestUnresolvedPerFile(t *testing.T) {
	files := map[string]string{
		"a.ts": `import { f } from "./b.js";
export function g(x) {
	x.go();
	missing();
	f();
}
`,
		"b.js": `const lodash = require("lodash");
export function f() {
	console.log(1);
	lodash.map([], f);
}
`,
		"m.py": `def h(obj):
    obj.run()
    gone()
    h(obj)
`,
		"lib.rs": `fn k(v: Vec<u8>) {
    v.frob();
    k(v);
}
`,
	}
	dir := t.TempDir()
	for rel, content := range files {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Extract(dir, TreeSitterLanguages, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string]int)
	for _, n := range res.Graph.Nodes() {
		if n.Type != ingest.TypeFile {
			continue
		}
		var p ingest.FilePayload
		if err := json.Unmarshal(n.Payload, &p); err != nil {
			t.Fatal(err)
		}
		got[p.Path] = p.Unresolved
		var raw map[string]any
		json.Unmarshal(n.Payload, &raw)
		if _, ok := raw["unresolved"]; ok && p.Unresolved == 0 {
			t.Errorf("%s: unresolved 0 is not omitted", p.Path)
		}
	}
	want := map[string]int{"a.ts": 2, "b.js": 0, "m.py": 2, "lib.rs": 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("per-file unresolved (-want +got):\n%s", diff)
	}
	sums := map[string]int{ingest.LangTypeScript: 2, ingest.LangJavaScript: 0, ingest.LangPython: 2, ingest.LangRust: 1}
	for lang, n := range sums {
		if lr := res.Lang(lang); lr == nil || lr.Unresolved != n {
			t.Errorf("%s summary: %+v, want unresolved %d", lang, lr, n)
		}
	}
}
