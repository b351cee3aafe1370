package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata/cli")

// result is what one in-process memctl run produced.
type result struct {
	Stdout string
	Stderr string
	Code   int
}

// runEnv runs memctl in-process with stdin and an environment map.
func runEnv(t *testing.T, stdin string, environ map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(append([]string{"memctl"}, args...), Env{
		Stdin:  strings.NewReader(stdin),
		Stdout: &out,
		Stderr: &errb,
		Getenv: func(k string) string {
			if v, ok := environ[k]; ok {
				return v
			}
			// No test can observe an fsync; skipping them keeps the
			// suite fast on slow disks (SPEC §6, --no-sync).
			if k == envNoSync {
				return "1"
			}
			return ""
		},
	})
	return result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// memctl runs memctl with no stdin and an empty environment.
func memctl(t *testing.T, args ...string) result {
	t.Helper()
	return runEnv(t, "", nil, args...)
}

// ok runs memctl and fails the test unless it exits 0 with nothing on stderr.
func ok(t *testing.T, args ...string) string {
	t.Helper()
	r := memctl(t, args...)
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("memctl %s: exit %d, stderr %q", strings.Join(args, " "), r.Code, r.Stderr)
	}
	return r.Stdout
}

// initStore initialises an empty store in a temp dir and returns its path.
func initStore(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "db")
	ok(t, "--db", db, "init")
	return db
}

// newStore is initStore plus a check when the test ends.
func newStore(t *testing.T) string {
	t.Helper()
	db := initStore(t)
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		// Every test leaves a store that passes check.
		if r := memctl(t, "--db", db, "check"); r.Code != 0 {
			t.Errorf("check after test: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
	})
	return db
}

// fingerprint is the whole committed history of a store: two stores with the
// same fingerprint hold the same data.
func fingerprint(t *testing.T, db string) string {
	t.Helper()
	return ok(t, "--db", db, "--json", "diff-since", "0")
}

// wantFailure checks a failed run: the exit code, exactly one stderr line
// starting "memctl: " and containing each of msgs, and no stdout.
func wantFailure(t *testing.T, r result, code int, msgs ...string) {
	t.Helper()
	if r.Code != code {
		t.Errorf("exit code %d, want %d (stderr %q)", r.Code, code, r.Stderr)
	}
	if !strings.HasPrefix(r.Stderr, "memctl: ") || strings.Count(r.Stderr, "\n") != 1 || !strings.HasSuffix(r.Stderr, "\n") {
		t.Errorf("stderr is not exactly one \"memctl: \" line: %q", r.Stderr)
	}
	for _, m := range msgs {
		if !strings.Contains(r.Stderr, m) {
			t.Errorf("stderr %q does not mention %q", r.Stderr, m)
		}
	}
	if r.Stdout != "" {
		t.Errorf("failed command printed to stdout: %q", r.Stdout)
	}
}

// timeFields are the JSON fields holding times.
var timeFields = []string{"ts", "created_ts", "updated_ts"}

// jsonLines parses --json output: one object per line. Time fields must be
// RFC 3339 UTC with nanoseconds; they are replaced by "TS" so expectations
// need not know the clock.
func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for i, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if line == "" && s == "" {
			break
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			t.Fatalf("line %d is not a JSON object: %v\n%s", i+1, err, line)
		}
		for _, f := range timeFields {
			v, ok := obj[f]
			if !ok {
				continue
			}
			str, _ := v.(string)
			ts, err := time.Parse(time.RFC3339Nano, str)
			if err != nil || !strings.HasSuffix(str, "Z") || ts.IsZero() {
				t.Errorf("line %d: %s = %v is not an RFC 3339 UTC time", i+1, f, v)
			}
			obj[f] = "TS"
		}
		objs = append(objs, obj)
	}
	return objs
}

// diffJSON compares --json output with want (time fields normalised).
func diffJSON(t *testing.T, got string, want []map[string]any) {
	t.Helper()
	if d := cmp.Diff(want, jsonLines(t, got)); d != "" {
		t.Errorf("--json output mismatch (-want +got):\n%s\noutput:\n%s", d, got)
	}
}

// n is a JSON number as jsonLines decodes it.
func n(s string) json.Number { return json.Number(s) }

// revOf parses the "rev N" line a write prints.
func revOf(t *testing.T, out string) uint64 {
	t.Helper()
	var rev uint64
	if _, err := fmt.Sscanf(out, "rev %d", &rev); err != nil || rev == 0 {
		t.Fatalf("write printed %q, want \"rev N\"", out)
	}
	return rev
}

// revN is revision rev as a JSON number.
func revN(rev uint64) json.Number { return json.Number(strconv.FormatUint(rev, 10)) }

// nodeID is the id --json prints for key (SPEC.md §1: FNV-1a 64).
func nodeID(key string) string {
	h := fnv.New64a()
	h.Write([]byte(key))
	return fmt.Sprintf("%016x", h.Sum64())
}

func revString(rev uint64) string { return strconv.FormatUint(rev, 10) }

// containsLine reports whether text has a line that is exactly line once
// trailing spaces are trimmed.
func containsLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimRight(l, " ") == line {
			return true
		}
	}
	return false
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// cmpDiff is cmp.Diff(want, got) for use in messages.
func cmpDiff(want, got any) string { return cmp.Diff(want, got) }

// answer runs an answering command (impact, activate, context) and fails
// the test unless it exits 0 with nothing on stderr but the lines an
// answer may add: what it is as of (SPEC §6.1) and its coverage (§8.7).
func answer(t *testing.T, args ...string) string {
	t.Helper()
	r := memctl(t, args...)
	if r.Code != 0 {
		t.Fatalf("memctl %s: exit %d, stderr %q", strings.Join(args, " "), r.Code, r.Stderr)
	}
	for _, l := range strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n") {
		if l == "" || strings.HasPrefix(l, "memctl: as of ") || strings.HasPrefix(l, "memctl: coverage: ") ||
			strings.HasPrefix(l, `{"as_of":`) || strings.HasPrefix(l, `{"coverage":`) {
			continue
		}
		t.Fatalf("memctl %s: stderr %q", strings.Join(args, " "), r.Stderr)
	}
	return r.Stdout
}
