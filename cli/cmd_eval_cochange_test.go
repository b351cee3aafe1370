package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// evalRepo makes a git repository whose last commits change x.go with y.go
// (three times) and x.go with z.go (once).
func evalRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	step := 0
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		date := fmt.Sprintf("2024-01-01T00:%02d:00Z", step)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@t", "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date, "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	commit := func(files ...string) {
		t.Helper()
		step++
		for _, f := range files {
			body := fmt.Sprintf("package m\n\n// step %d\nfunc %s() {}\n", step, strings.ToUpper(strings.TrimSuffix(f, ".go")))
			if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		run(append([]string{"add"}, files...)...)
		run("commit", "-q", "-m", fmt.Sprintf("step %d", step))
	}
	run("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", "go.mod")
	commit("x.go", "y.go", "z.go")
	commit("x.go", "y.go")
	commit("x.go", "z.go")
	commit("x.go", "y.go")
	return dir
}

func TestEvalCochangeOutput(t *testing.T) {
	dir := evalRepo(t)
	text := ok(t, "eval", "cochange", dir, "--commits", "2")
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	head := regexp.MustCompile(`^eval cochange .+: 2 commits \([0-9a-f]{12}\.\.[0-9a-f]{12}\), 4 queries \(go 4\), memory at each parent; [0-9.]+s$`)
	if len(lines) != 14 || !head.MatchString(lines[0]) {
		t.Fatalf("output:\n%s", text)
	}
	if f := strings.Fields(lines[1]); strings.Join(f[:4], " ") != "predictor recall@10 hit@3 answered" {
		t.Errorf("table header %q", lines[1])
	}
	// pagerank and lexical may not answer: the files call nothing, and
	// their words are the same in every file (a term all files have
	// weighs nothing).
	score := `[01]\.\d\d \[[01]\.\d\d, [01]\.\d\d\]`
	row := regexp.MustCompile(`^(\S+) +(` + score + `) +(` + score + `) +(\d/4) `)
	for i, name := range []string{"activate", "cochange", "samedir", "pagerank", "lexical"} {
		m := row.FindStringSubmatch(lines[2+i])
		if m == nil || m[1] != name || m[4] != "4/4" && name != "pagerank" && name != "lexical" {
			t.Errorf("row %d: %q", i, lines[2+i])
		}
	}
	// Steps 3 (x, z) and 4 (x, y) are evaluated; both pairs changed
	// together before (step 1), so history alone finds every partner
	// among the first ten and the first three, in every resample.
	if f := strings.Fields(lines[3]); strings.Join(f[:8], " ") != "cochange 1.00 [1.00, 1.00] 1.00 [1.00, 1.00] 4/4" {
		t.Errorf("cochange row %q", lines[3])
	}
	if lines[7] != "margin of activate over each, paired by commit:" || strings.Join(strings.Fields(lines[8]), " ") != "over Δ recall@10 Δ hit@3" {
		t.Errorf("margins header %q %q", lines[7], lines[8])
	}
	margin := regexp.MustCompile(`^(\S+) +[+-][01]\.\d\d \[[+-][01]\.\d\d, [+-][01]\.\d\d\] +[+-][01]\.\d\d \[[+-][01]\.\d\d, [+-][01]\.\d\d\]$`)
	for i, name := range []string{"cochange", "samedir", "pagerank", "lexical"} {
		if m := margin.FindStringSubmatch(lines[9+i]); m == nil || m[1] != name {
			t.Errorf("margin row %d: %q", i, lines[9+i])
		}
	}
	if lines[13] != "[95 % interval: percentile bootstrap over the 2 commits, 1000 resamples, seed 30]" {
		t.Errorf("footer %q", lines[13])
	}
	out := ok(t, "--json", "eval", "cochange", dir, "--commits", "2", "--predictor", "cochange,samedir")
	var recs []map[string]any
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		recs = append(recs, m)
	}
	if len(recs) != 2 || recs[0]["predictor"] != "cochange" || recs[1]["predictor"] != "samedir" {
		t.Fatalf("json: %s", out)
	}
	if recs[0]["recall_at_10"] != 1.0 || recs[0]["queries"] != 4.0 || recs[0]["commits"] != 2.0 ||
		fmt.Sprint(recs[0]["recall_at_10_ci"]) != "[1 1]" || fmt.Sprint(recs[0]["languages"]) != "map[go:4]" ||
		recs[0]["resamples"] != 1000.0 || recs[0]["seed"] != 30.0 || recs[0]["margin"] != nil ||
		fmt.Sprint(recs[0]["fallbacks"]) != "[]" {
		t.Errorf("cochange record %v", recs[0])
	}
	// samedir: x, y, z share the root directory, so it too answers every
	// partner among its first three: the margin is 0 in every resample.
	if fmt.Sprint(recs[1]["margin"]) != "map[hit_at_3:[0 0 0] of:cochange recall_at_10:[0 0 0]]" {
		t.Errorf("samedir margin %v", recs[1]["margin"])
	}
	for i, want := range []int{15, 16} {
		if len(recs[i]) != want {
			t.Errorf("record %d has %d fields: %v", i, len(recs[i]), recs[i])
		}
	}
	// --trace --json: one query object per query before the scores.
	out = ok(t, "--json", "eval", "cochange", dir, "--commits", "1", "--predictor", "cochange", "--trace")
	if n := strings.Count(out, `"query":`); n != 2 {
		t.Errorf("trace: %d query lines:\n%s", n, out)
	}
}

func TestEvalCochangeBadUsage(t *testing.T) {
	dir := evalRepo(t)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"eval", "cochange", t.TempDir()}, ExitUsage, "not a git work tree"},
		{[]string{"eval", "cochange", dir, "--commits", "0"}, ExitUsage, "commits"},
		{[]string{"eval", "cochange", dir, "--predictor", "oracle"}, ExitUsage, "unknown predictor"},
		{[]string{"eval", "cochange", dir, "--skip", "50"}, ExitNotFound, "no qualifying commit"},
		{[]string{"eval", "cochange"}, ExitUsage, "DIR"},
	} {
		r := memctl(t, tc.args...)
		if r.Code != tc.code || !strings.Contains(r.Stderr, tc.msg) || strings.Count(r.Stderr, "\n") != 1 || r.Stdout != "" {
			t.Errorf("memctl %s: exit %d, stdout %q, stderr %q; want exit %d mentioning %q", strings.Join(tc.args, " "), r.Code, r.Stdout, r.Stderr, tc.code, tc.msg)
		}
	}
}

func TestLanguageCounts(t *testing.T) {
	for _, tc := range []struct {
		in   map[string]int
		want string
	}{
		{map[string]int{"go": 1, "typescript": 4, "python": 4, "rust": 2}, "python 4, typescript 4, rust 2, go 1"},
		{map[string]int{}, ""},
	} {
		if got := languageCounts(tc.in); got != tc.want {
			t.Errorf("languageCounts(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
