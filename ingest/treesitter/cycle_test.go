package treesitter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeritageCycleTerminates: an interface that extends a member of its
// own namespace, which extends it back (a pattern of the effect library,
// where it overflowed the stack), resolves what it can and terminates:
// calls of a member nobody declares stay unresolved, no edge is guessed.
func TestHeritageCycleTerminates(t *testing.T) {
	dir := t.TempDir()
	src := `export interface Effect<A> extends Effect.Variance<A> {
  run(): void
}
export declare namespace Effect {
  export interface Variance<A> extends Effect<A> {}
}
export class Impl implements Effect<number> {
  go() { this.missing() }
}
export function use(e: Effect<number>) { e.missing() }
`
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src", "a.ts"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Extract(dir, []string{"typescript"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := render(res.Graph)
	for _, want := range []string{
		"sym:ts:src/a.ts#Impl implements sym:ts:src/a.ts#Effect\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "missing") {
		t.Errorf("a call of an undeclared member became an edge:\n%s", got)
	}
}
