package treesitter

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memctl/memctl/ingest"
)

// Real code from the package registries. Each test skips, saying what to
// install, when its sources are absent; .ci/run installs them:
//
//	apt-get install -y python3-requests librust-semver-dev
//	npm pack rxjs@7.8.1, unpacked into $MEMCTL_CORPUS/rxjs-7.8.1
//	(MEMCTL_CORPUS defaults to ~/.cache/memctl-corpus)

const requestsDir = "/usr/lib/python3/dist-packages/requests"

// corpusDir holds the npm packages the tests read.
func corpusDir() string {
	if d := os.Getenv("MEMCTL_CORPUS"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "memctl-corpus")
}

func rxjsDir() string { return filepath.Join(corpusDir(), "rxjs-7.8.1", "package") }

func semverDir() string {
	m, _ := filepath.Glob("/usr/share/cargo/registry/semver-1.*")
	slices.Sort(m)
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1]
}

func requireDir(t testing.TB, dir, install string) {
	t.Helper()
	if dir == "" {
		t.Skipf("sources absent: %s", install)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("%s absent: %s", dir, install)
	}
}

// realGraph extracts dir and checks that nothing failed.
func realGraph(t *testing.T, dir string, langs ...string) *Result {
	t.Helper()
	res, err := Extract(dir, langs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range res.Langs {
		if l.ParseErrors != 0 {
			t.Errorf("%s: %d files with syntax errors", l.Lang, l.ParseErrors)
		}
		t.Logf("%s: %d files, %d symbols, %d edges, %d unresolved calls", l.Lang, l.Files, l.Symbols, l.Edges, l.Unresolved)
	}
	return res
}

// expect checks nodes (by key and kind) and edges of a real graph.
func expect(t *testing.T, g *ingest.Graph, kinds map[string]string, edges [][3]string) {
	t.Helper()
	for key, kind := range kinds {
		n, ok := g.Node(key)
		if !ok {
			t.Errorf("missing node %s", key)
			continue
		}
		if kind != "" && !containsKind(n.Payload, kind) {
			t.Errorf("%s: payload %s, want kind %s", key, n.Payload, kind)
		}
	}
	have := make(map[[3]string]bool)
	for _, e := range g.Edges() {
		have[[3]string{e.Src, e.Rel, e.Dst}] = true
	}
	for _, e := range edges {
		if !have[e] {
			t.Errorf("missing edge %s %s %s", e[0], e[1], e[2])
		}
	}
}

func containsKind(payload []byte, kind string) bool {
	var p ingest.SymbolPayload
	return json.Unmarshal(payload, &p) == nil && p.Kind == kind
}

func TestRealPythonRequests(t *testing.T) {
	requireDir(t, requestsDir, "apt-get install python3-requests")
	res := realGraph(t, requestsDir, ingest.LangPython)
	const s = "sym:py:requests.sessions.Session"
	expect(t, res.Graph, map[string]string{
		s: "class", s + ".get": "method", s + ".request": "method", s + ".send": "method",
		"sym:py:requests.api.get": "func", "pkg:py:requests": "",
	}, [][3]string{
		{s, "contains", s + ".request"},
		{s, "implements", "sym:py:requests.sessions.SessionRedirectMixin"},
		{"file:api.py", "imports", "file:sessions.py"},
		{"file:adapters.py", "imports", "pkg:py:urllib3"},
		{s + ".get", "calls", s + ".request"},
		{s + ".request", "calls", s + ".send"},
		{s + ".request", "references", "sym:py:requests.models.Request"},
		{"sym:py:requests.api.get", "calls", "sym:py:requests.api.request"},
	})
}

func TestRealTypeScriptRxJS(t *testing.T) {
	dir := rxjsDir()
	requireDir(t, dir, "npm pack rxjs@7.8.1 and unpack it into $MEMCTL_CORPUS/rxjs-7.8.1")
	res := realGraph(t, filepath.Join(dir, "src"), ingest.LangTypeScript, ingest.LangJavaScript)
	const o = "sym:ts:internal/Observable.ts#Observable"
	expect(t, res.Graph, map[string]string{
		o: "class", o + ".pipe": "method", o + ".subscribe": "method", o + ".lift": "method",
		"sym:ts:internal/operators/map.ts#map": "func", "sym:ts:internal/types.ts#Subscribable": "interface",
	}, [][3]string{
		{o, "contains", o + ".pipe"},
		{o, "implements", "sym:ts:internal/types.ts#Subscribable"},
		{"sym:ts:internal/Subject.ts#Subject", "implements", o},
		{"file:internal/Observable.ts", "imports", "file:internal/Subscriber.ts"},
		{"sym:ts:internal/operators/map.ts#map", "calls", "sym:ts:internal/util/lift.ts#operate"},
		{o + "._trySubscribe", "calls", o + "._subscribe"},
	})
}

func TestRealRustSemver(t *testing.T) {
	dir := semverDir()
	requireDir(t, dir, "apt-get install librust-semver-dev")
	res := realGraph(t, dir, ingest.LangRust)
	const v = "sym:rs:semver::Version"
	expect(t, res.Graph, map[string]string{
		v: "struct", v + "::new": "method", v + "::parse": "method", v + "::FromStr::from_str": "method",
		"sym:rs:semver::parse": "module", "pkg:rs:semver": "",
	}, [][3]string{
		{v, "contains", v + "::parse"},
		{"pkg:rs:semver", "contains", "sym:rs:semver::parse"},
		{"file:src/error.rs", "imports", "sym:rs:semver::parse"},
		{v + "::parse", "calls", v + "::FromStr::from_str"},
		{v + "::FromStr::from_str", "calls", v + "::new"},
		{"sym:rs:semver@tests/test_version::test_parse", "tests", v + "::new"},
	})
}
