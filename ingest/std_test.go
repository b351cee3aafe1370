package ingest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// goroot is $(go env GOROOT).
func goroot(t testing.TB) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestExtractStdStats prints what extraction finds in the standard
// library. Opt-in: MEMCTL_INGEST_STD=1 (it takes tens of seconds).
func TestExtractStdStats(t *testing.T) {
	if os.Getenv("MEMCTL_INGEST_STD") == "" {
		t.Skip("set MEMCTL_INGEST_STD=1 to extract $(go env GOROOT)/src")
	}
	dir := os.Getenv("MEMCTL_INGEST_DIR")
	if dir == "" {
		dir = filepath.Join(goroot(t), "src")
	}
	start := time.Now()
	res, err := ExtractGo(dir, GoOptions{SyntaxOnly: os.Getenv("MEMCTL_INGEST_SYNTAX") != ""})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, e := range res.Graph.Edges() {
		counts[e.Rel]++
	}
	t.Logf("%s: %d files, %d packages (%d typed, %d syntax, %d with type errors), mode %s, %d nodes, %d edges %v in %v; load errors %q",
		dir, res.Files, res.Packages, res.TypedPackages, res.SyntaxPackages, res.PackagesWithTypeErrors, res.Mode,
		res.Graph.NumNodes(), res.Graph.NumEdges(), counts, time.Since(start), res.LoadErrors)
}
