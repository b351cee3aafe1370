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

// TestExtractStd extracts the Go standard library ($(go env GOROOT)/src,
// or MEMCTL_INGEST_DIR) and checks what it finds against facts of the
// library any Go programmer can confirm: sizes within a range around the
// measured ones (SPEC §9 figures: ~119K nodes, ~768K edges for Go 1.26)
// and a sample of keys and edges. Opt-in: MEMCTL_INGEST_STD=1 (tens of
// seconds; `make test` runs it in its non-race pass).
func TestExtractStd(t *testing.T) {
	if os.Getenv("MEMCTL_INGEST_STD") == "" {
		t.Skip("set MEMCTL_INGEST_STD=1 to extract $(go env GOROOT)/src")
	}
	dir := os.Getenv("MEMCTL_INGEST_DIR")
	custom := dir != ""
	if !custom {
		dir = filepath.Join(goroot(t), "src")
	}
	start := time.Now()
	res, err := ExtractGo(dir, GoOptions{SyntaxOnly: os.Getenv("MEMCTL_INGEST_SYNTAX") != ""})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	has := map[[3]string]bool{}
	for _, e := range res.Graph.Edges() {
		counts[e.Rel]++
		has[[3]string{e.Src, e.Rel, e.Dst}] = true
	}
	t.Logf("%s: %d files, %d packages (%d typed, %d syntax, %d with type errors), mode %s, %d nodes, %d edges %v in %v",
		dir, res.Files, res.Packages, res.TypedPackages, res.SyntaxPackages, res.PackagesWithTypeErrors, res.Mode,
		res.Graph.NumNodes(), res.Graph.NumEdges(), counts, time.Since(start))
	if custom {
		return // another tree: nothing known to check
	}
	if n := res.Graph.NumNodes(); n < 80_000 || n > 200_000 {
		t.Errorf("%d nodes, want 80K-200K for the standard library", n)
	}
	if n := res.Graph.NumEdges(); n < 500_000 || n > 1_300_000 {
		t.Errorf("%d edges, want 500K-1.3M for the standard library", n)
	}
	for _, key := range []string{
		"pkg:net/http", "pkg:io", "file:net/http/server.go", "dir:net/http",
		"sym:net/http.Server", "sym:net/http.Handler", "sym:net/http.Handler.ServeHTTP",
		"sym:io.Reader", "sym:io.Reader.Read", "sym:net/http.ListenAndServe", "sym:fmt.Println",
	} {
		if !res.Graph.HasNode(key) {
			t.Errorf("node %s missing", key)
		}
	}
	for _, e := range [][3]string{
		{"dir:net", "contains", "dir:net/http"},
		{"dir:net/http", "contains", "file:net/http/server.go"},
		{"file:net/http/server.go", "contains", "sym:net/http.Server"},
		{"sym:net/http.HandlerFunc", "implements", "sym:net/http.Handler"},
		{"sym:os.File", "implements", "sym:io.Reader"},
		{"sym:net/http.ListenAndServe", "calls", "sym:net/http.Server.ListenAndServe"},
	} {
		if !has[e] {
			t.Errorf("edge %s -%s-> %s missing", e[0], e[1], e[2])
		}
	}
}
