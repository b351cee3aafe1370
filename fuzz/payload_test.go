package fuzz

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLargePayloadArguments: a 10 MB payload round-trips through put-node,
// put-edge and put-kv given as @FILE and as - (standard input), each a
// separate memctl process; the argument list could not carry it.
func TestLargePayloadArguments(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	if r := memctlProc(t, "", "--db", db, "init"); r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	big := `{"blob":"` + strings.Repeat("0123456789", 1_000_000) + `","n":1}`
	file := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(file, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		stdin string
		write []string
		read  []string
	}{
		{"", []string{"put-node", "doc:big", "--payload", "@" + file}, []string{"get-node", "doc:big"}},
		{big, []string{"put-edge", "doc:big", "references", "doc:other", "--payload", "-"}, []string{"get-out", "doc:big"}},
		{big, []string{"put-kv", "repo", "docs", "big", "-"}, []string{"get-kv", "repo", "docs", "big"}},
		{"", []string{"put-kv", "repo", "docs", "big2", "@" + file}, []string{"get-kv", "repo", "docs", "big2"}},
	} {
		if r := memctlProc(t, tc.stdin, append([]string{"--db", db}, tc.write...)...); r.Code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.write[0], r.Code, r.Stderr)
		}
		r := memctlProc(t, "", append([]string{"--db", db, "--json"}, tc.read...)...)
		if r.Code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.read, r.Code, r.Stderr)
		}
		if !strings.Contains(r.Stdout, big) {
			t.Errorf("%v: the 10 MB payload did not come back whole (%d bytes of output)", tc.read, len(r.Stdout))
		}
	}
	for _, bad := range [][]string{
		{"put-node", "doc:x", "--payload", "@" + filepath.Join(t.TempDir(), "none.json")},
		{"put-kv", "repo", "docs", "x", "@" + filepath.Dir(file)},
	} {
		if r := memctlProc(t, "", append([]string{"--db", db}, bad...)...); r.Code != 2 || strings.Count(r.Stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 with one line", bad, r.Code, r.Stderr)
		}
	}
	if r := memctlProc(t, "{not json", "--db", db, "put-node", "doc:x", "--payload", "-"); r.Code != 2 {
		t.Errorf("invalid JSON on stdin: exit %d", r.Code)
	}
}

// TestReplayHistory: replaying a store's history (`diff-since --json` into
// `memctl batch` on a new store) gives a store whose logical snapshot hash
// equals the original's, over random histories whose payloads are spelled
// differently each time (whitespace, member order, null for none).
func TestReplayHistory(t *testing.T) {
	for seed := range uint64(4) {
		r := rand.New(rand.NewPCG(seed, 7))
		src := filepath.Join(t.TempDir(), "src")
		if res := memctlIn("", "--db", src, "init"); res.Code != 0 {
			t.Fatal(res.Stderr)
		}
		memctlIn("", "--db", src, "rel", "add", "mentions", "--weight", "0.5")
		keys := []string{"file:a.go", "file:b.go", "sym:a.F", "sym:b.G", "doc:x"}
		rels := []string{"calls", "mentions", "references"}
		spell := func() string {
			x, y := r.IntN(3), r.IntN(3)
			switch r.IntN(4) {
			case 0:
				return "null"
			case 1:
				return fmt.Sprintf(`{"x":%d,"y":%d}`, x, y)
			case 2:
				return fmt.Sprintf(` { "y" : %d , "x" : %d } `, y, x)
			}
			return fmt.Sprintf(`[%d, {"b":%d, "a":"\u0041"}]`, x, y)
		}
		live := map[string]bool{}
		for range 40 {
			var lines []string
			put := map[string]bool{}
			for range 1 + r.IntN(4) {
				op := map[string]any{}
				switch r.IntN(6) {
				case 0, 1:
					k := keys[r.IntN(len(keys))]
					put[k] = true
					op = map[string]any{"op": "put_node", "key": k, "payload": json.RawMessage(spell())}
				case 2, 3:
					op = map[string]any{"op": "put_edge", "src": keys[r.IntN(len(keys))], "rel": rels[r.IntN(len(rels))], "dst": keys[r.IntN(len(keys))],
						"payload": json.RawMessage(spell())}
					if w := []float64{0, 0.25, 2}[r.IntN(3)]; w != 0 {
						op["weight"] = w
					}
				case 4:
					k := keys[r.IntN(len(keys))]
					if !live[k] && !put[k] {
						continue
					}
					delete(live, k)
					delete(put, k)
					op = map[string]any{"op": "del_node", "key": k}
				case 5:
					op = map[string]any{"op": "put_kv", "scope": "repo", "namespace": "d", "key": keys[r.IntN(len(keys))], "payload": json.RawMessage(`{"v":1}`)}
				}
				b, _ := json.Marshal(op)
				lines = append(lines, string(b))
			}
			if r.IntN(3) == 0 {
				// Through the put commands too, whose payload is an argument.
				k := keys[r.IntN(len(keys))]
				if res := memctlIn("", "--db", src, "put-node", k, "--payload", spell()); res.Code != 0 {
					t.Fatalf("put-node: %s", res.Stderr)
				}
				live[k] = true
				if res := memctlIn("", "--db", src, "put-edge", k, "calls", keys[r.IntN(len(keys))], "--payload", spell()); res.Code != 0 {
					t.Fatalf("put-edge: %s", res.Stderr)
				}
			}
			if len(lines) == 0 {
				continue
			}
			if res := memctlIn(strings.Join(lines, "\n")+"\n", "--db", src, "batch"); res.Code != 0 {
				continue // all or nothing: a delete the bookkeeping got wrong drops the batch
			}
			for k := range put {
				live[k] = true
			}
		}
		hist := memctlIn("", "--db", src, "--json", "diff-since", "0")
		if hist.Code != 0 {
			t.Fatal(hist.Stderr)
		}
		if n := strings.Count(hist.Stdout, "\n"); n < 20 {
			t.Fatalf("seed %d: only %d operations in the history", seed, n)
		}
		dst := filepath.Join(t.TempDir(), "dst")
		memctlIn("", "--db", dst, "init")
		if res := memctlIn(hist.Stdout, "--db", dst, "batch"); res.Code != 0 {
			t.Fatalf("seed %d: replay: %s", seed, res.Stderr)
		}
		hash := func(db string) string {
			snap := filepath.Join(t.TempDir(), "s.snap")
			if res := memctlIn("", "--db", db, "export", "--logical", "--out", snap); res.Code != 0 {
				t.Fatal(res.Stderr)
			}
			return strings.Fields(memctlIn("", "snapshot", "hash", snap).Stdout)[0]
		}
		if h1, h2 := hash(src), hash(dst); h1 != h2 {
			t.Errorf("seed %d: logical hash %s of the original, %s of the replay", seed, h1, h2)
		}
		kv1 := memctlIn("", "--db", src, "--json", "list-kv", "repo", "d").Stdout
		kv2 := memctlIn("", "--db", dst, "--json", "list-kv", "repo", "d").Stdout
		if strip := func(s string) string { return revTS.ReplaceAllString(s, "") }; strip(kv1) != strip(kv2) {
			t.Errorf("seed %d: kv entries differ after replay:\n%s\n%s", seed, kv1, kv2)
		}
	}
}

// revTS matches the provenance fields of a JSON record that a replay does
// not reproduce (revision, times, run and task).
var revTS = regexp.MustCompile(`"(rev|ts|created_ts|updated_ts|run_id|task_id)":("[^"]*"|\d+),?`)
