package cli

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/memctl/memctl/eval"
)

// A store imported from an index scores 1 against it: every function
// matched, every caller and implements pair found, nothing extra.
func TestEvalGraphCommand(t *testing.T) {
	db := newStore(t)
	const index = "../testdata/scip/go.scip"
	ok(t, "--db", db, "ingest", "scip", index)
	dir := t.TempDir()
	out := ok(t, "--db", db, "eval", "graph", dir, "--scip", index)
	want := `^eval graph \S+: scip-go 0\.1\.26, 2 documents; 3 functions in SCIP, 3 matched \(0 unmatched; 0 memctl functions unmatched\); \d+\.\d\ds
callers: recall 1\.0000 \(3 of 3 SCIP pairs; 0 missed with an unmatched side\), precision 1\.0000 \(3 of 3 memctl pairs\)
module-level callers: recall 0\.0000 \(0 of 0\), precision 0\.0000 \(0 of 0\)
no callers in memctl: 0 of 3 functions SCIP sees called \(0\.0%\)
implements: recall 1\.0000 \(1 of 1; 0 with an unmatched side\), precision 1\.0000 \(1 of 1\)
$`
	if !regexp.MustCompile(want).MatchString(out) {
		t.Errorf("eval graph printed %q", out)
	}
	var res eval.GraphResult
	if err := json.Unmarshal([]byte(ok(t, "--db", db, "--json", "eval", "graph", dir, "--scip", index)), &res); err != nil {
		t.Fatal(err)
	}
	if res.Eval != "graph" || res.Callers.Found != 3 || len(res.Callers.Missed)+len(res.Callers.Extra) != 0 || res.Implements.Found != 1 {
		t.Errorf("--json: %+v", res)
	}
	wantFailure(t, memctl(t, "--db", db, "eval", "graph", dir+"/nope", "--scip", index), ExitUsage, "not a directory")
	wantFailure(t, memctl(t, "--db", db, "eval", "graph", dir), ExitUsage, "--scip INDEX is required")
}
