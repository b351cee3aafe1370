package ingest

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOfflineAgainstTyped measures the syntax-only fallback against the
// type-checked graph of the same tree (BENCHMARKS.md): set
// MEMCTL_INGEST_COMPARE to a module directory whose dependencies the
// environment can fetch or has in its module cache, and optionally
// MEMCTL_INGEST_COMPARE_SYM to a method key whose callers to count. The
// offline run uses an empty module cache, as a fresh machine has; the
// --syntax-only run reads every package from syntax.
func TestOfflineAgainstTyped(t *testing.T) {
	dir := os.Getenv("MEMCTL_INGEST_COMPARE")
	if dir == "" {
		t.Skip("MEMCTL_INGEST_COMPARE not set")
	}
	t0 := time.Now()
	typed, err := ExtractGo(dir, GoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	typedTime := time.Since(t0)
	if typed.Mode != ModeTyped {
		t.Logf("typed run: mode %s, fallbacks %+v", typed.Mode, typed.Fallbacks)
	}
	for _, v := range []struct {
		name string
		opts GoOptions
	}{
		{"offline, empty module cache", GoOptions{Offline: true, LoadEnv: []string{"GOMODCACHE=" + t.TempDir()}}},
		{"--syntax-only", GoOptions{SyntaxOnly: true}},
	} {
		t0 = time.Now()
		res, err := ExtractGo(dir, v.opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("typed: %s in %v; %s: %s (%d of %d packages from syntax), %d unresolved calls, in %v",
			typed.Mode, typedTime.Round(time.Millisecond), v.name, res.Mode, res.SyntaxPackages, res.Packages,
			res.Unresolved, time.Since(t0).Round(time.Millisecond))
		for _, rel := range []string{RelCalls, RelReferences} {
			want, got := pairs(typed.Graph, rel), pairs(res.Graph, rel)
			found := 0
			var missing, extras []string
			for p := range want {
				if got[p] {
					found++
				} else {
					missing = append(missing, p[0]+" → "+p[1])
				}
			}
			for p := range got {
				if !want[p] {
					extras = append(extras, p[0]+" → "+p[1])
				}
			}
			if testing.Verbose() && os.Getenv("MEMCTL_INGEST_COMPARE_LIST") != "" {
				slices.Sort(missing)
				slices.Sort(extras)
				t.Logf("%s missing:\n  %s\nnot in the typed graph:\n  %s", rel, strings.Join(missing, "\n  "), strings.Join(extras, "\n  "))
			}
			t.Logf("  %s pairs: finds %d of the typed graph's %d (%.3f); %d not in it",
				rel, found, len(want), float64(found)/float64(max(len(want), 1)), len(extras))
		}
		if sym := os.Getenv("MEMCTL_INGEST_COMPARE_SYM"); sym != "" {
			want, got := callers(typed.Graph, sym), callers(res.Graph, sym)
			missing := slices.DeleteFunc(slices.Clone(want), func(s string) bool { return slices.Contains(got, s) })
			t.Logf("  callers of %s: typed %d, here %d; missing: %s", sym, len(want), len(got), strings.Join(missing, " "))
		}
	}
}

func pairs(g *Graph, rel string) map[[2]string]bool {
	out := make(map[[2]string]bool)
	g.EachEdge(func(e Edge) {
		if e.Rel == rel && strings.HasPrefix(e.Src, "sym:") {
			out[[2]string{e.Src, e.Dst}] = true
		}
	})
	return out
}

func callers(g *Graph, sym string) []string {
	var out []string
	g.EachEdge(func(e Edge) {
		if e.Rel == RelCalls && e.Dst == sym {
			out = append(out, e.Src)
		}
	})
	slices.Sort(out)
	return out
}
