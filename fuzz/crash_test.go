package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
)

// envInt reads a positive integer knob from the environment.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// crashBatch is the batch of iteration it, writer w: one node, edges edges
// from it, and one kv entry, so "fully present" and "absent" are easy to
// tell apart.
func crashBatch(it, w, edges int) string {
	var b strings.Builder
	src := fmt.Sprintf("c:%d.%d", it, w)
	fmt.Fprintf(&b, `{"op":"put_node","key":%q,"payload":{"edges":%d}}`+"\n", src, edges)
	for j := range edges {
		fmt.Fprintf(&b, `{"op":"put_edge","src":%q,"rel":"calls","dst":"t:%d"}`+"\n", src, j)
	}
	fmt.Fprintf(&b, `{"op":"put_kv","scope":"crash","namespace":"w%d","key":"k%d","payload":%d}`+"\n", w, it, edges)
	return b.String()
}

// crashWrite is one writer process of one iteration.
type crashWrite struct {
	it, w, edges int
	acked        bool
	rev          uint64
	killed       bool
}

// TestCrashBatchWriters starts `memctl batch` writers (two at a time, so a
// writer is also killed while waiting for the lock or holding it) and kills
// them with SIGKILL at random moments. After every round the store is
// reopened: every acknowledged batch is fully present in the revision it
// reported, every killed batch is either fully present or absent, and check
// passes. MEMCTL_CRASH_ITERS sets the number of rounds (default 30).
func TestCrashBatchWriters(t *testing.T) {
	bin := memctlBin(t)
	iters := envInt("MEMCTL_CRASH_ITERS", 30)
	db := filepath.Join(t.TempDir(), "db")
	if r := memctlProc(t, "", "--db", db, "init"); r.Code != 0 {
		t.Fatalf("init: %s", r.Stderr)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 5))

	// Calibrate: how long a whole batch process takes on this machine.
	start := time.Now()
	if r := memctlProc(t, crashBatch(-1, 0, 50), "--db", db, "batch"); r.Code != 0 {
		t.Fatalf("calibration batch: %s", r.Stderr)
	}
	span := time.Since(start)

	var all []crashWrite
	kills, ackedKills := 0, 0
	for it := range iters {
		var wg sync.WaitGroup
		round := make([]crashWrite, 2)
		for w := range round {
			round[w] = crashWrite{it: it, w: w, edges: 1 + rng.IntN(150)}
			kill := rng.IntN(4) != 0 // most writers get killed
			delay := time.Duration(rng.Int64N(int64(span) * 3 / 2))
			wg.Add(1)
			go func(cw *crashWrite) {
				defer wg.Done()
				cmd := exec.Command(bin, "--db", db, "--json", "batch", "--run", "crash")
				cmd.Stdin = strings.NewReader(crashBatch(cw.it, cw.w, cw.edges))
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				if err := cmd.Start(); err != nil {
					t.Error(err)
					return
				}
				if kill {
					time.Sleep(delay)
					cw.killed = cmd.Process.Kill() == nil
				}
				err := cmd.Wait()
				if err == nil {
					var c struct{ Rev uint64 }
					if jerr := json.Unmarshal(out.Bytes(), &c); jerr != nil || c.Rev == 0 {
						t.Errorf("writer %d/%d: output %q", cw.it, cw.w, out.String())
					}
					cw.acked, cw.rev = true, c.Rev
				} else if !cw.killed {
					t.Errorf("writer %d/%d failed without being killed: %v: %s", cw.it, cw.w, err, errb.String())
				}
			}(&round[w])
		}
		wg.Wait()
		for _, cw := range round {
			if cw.killed {
				kills++
				if cw.acked {
					ackedKills++ // finished before the signal landed
				}
			}
		}
		all = append(all, round...)
		verifyCrashStore(t, db, all)
		if t.Failed() {
			return
		}
	}
	t.Logf("%d rounds, %d writers killed with SIGKILL (%d of them had already finished), batch process ~%v",
		iters, kills, ackedKills, span.Round(time.Millisecond))
}

// verifyCrashStore reopens the store and checks every write so far.
func verifyCrashStore(t *testing.T, db string, writes []crashWrite) {
	t.Helper()
	s, err := lmdbstore.Open(db, lmdbstore.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("reopen after kill: %v (the store is kept for inspection in %s)", err, keepStore(db))
	}
	defer s.Close()
	seenRev := map[uint64]string{}
	err = s.View(func(r *lmdbstore.ReadTxn) error {
		for _, cw := range writes {
			src := fmt.Sprintf("c:%d.%d", cw.it, cw.w)
			n, nerr := r.GetNode(src, lmdbstore.At{})
			out, oerr := r.GetOut(src, "", lmdbstore.At{})
			kv, kerr := r.GetKV("crash", fmt.Sprint("w", cw.w), fmt.Sprint("k", cw.it), lmdbstore.At{})
			for _, err := range []error{nerr, oerr, kerr} {
				if err != nil && !errors.Is(err, lmdbstore.ErrNotFound) {
					return fmt.Errorf("%s: %w", src, err)
				}
			}
			present := nerr == nil
			full := present && len(out) == cw.edges && kerr == nil && n.Rev == kv.Rev
			for _, e := range out {
				full = full && e.Rev == n.Rev
			}
			switch {
			case cw.acked && !full:
				t.Errorf("acknowledged batch %s (rev %d) not fully present: node %v, %d/%d edges, kv %v",
					src, cw.rev, nerr, len(out), cw.edges, kerr)
			case cw.acked && uint64(n.Rev) != cw.rev:
				t.Errorf("batch %s acknowledged as rev %d, stored as rev %d", src, cw.rev, n.Rev)
			case !cw.acked && present != full:
				t.Errorf("killed batch %s partly present: node %v, %d/%d edges, kv %v", src, nerr, len(out), cw.edges, kerr)
			case !cw.acked && !present && (len(out) > 0 || kerr == nil):
				t.Errorf("killed batch %s partly present without its node: %d edges, kv %v", src, len(out), kerr)
			}
			if full {
				if other, dup := seenRev[uint64(n.Rev)]; dup {
					t.Errorf("batches %s and %s share revision %d", other, src, n.Rev)
				}
				seenRev[uint64(n.Rev)] = src
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Check()
	if err != nil || len(rep.Problems) > 0 {
		t.Fatalf("check after kill: %v %v", err, rep.Problems)
	}
}

// buildExportStore writes a store big enough that an export takes a while:
// nodes nodes in a ring with fan-out, through the Go API.
func buildExportStore(t testing.TB, db string, nodes, fanout int) {
	t.Helper()
	s, err := lmdbstore.Init(db, lmdbstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const perTxn = 5000
	for lo := 0; lo < nodes; lo += perTxn {
		if _, err := s.Update(lmdbstore.WriteMeta{RunID: "load"}, func(tx *lmdbstore.WriteTxn) error {
			for i := lo; i < min(lo+perTxn, nodes); i++ {
				key := fmt.Sprintf("n:%d", i)
				if err := tx.PutNode(lmdbstore.NodePut{Key: key, Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}); err != nil {
					return err
				}
				for j := 1; j <= fanout; j++ {
					if err := tx.PutEdge(lmdbstore.EdgePut{Src: key, Rel: "calls", Dst: fmt.Sprintf("n:%d", (i*7+j*13)%nodes)}); err != nil {
						return err
					}
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCrashExport kills `memctl export` at random moments. The destination
// is never half-written: it is either absent (first export) or the previous
// complete file, or the complete new one — byte-identical to an export that
// was not interrupted, and passing Verify.
func TestCrashExport(t *testing.T) {
	bin := memctlBin(t)
	iters := max(envInt("MEMCTL_CRASH_ITERS", 30)/2, 10)
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	nodes := 20000
	if raceEnabled {
		nodes = 5000
	}
	buildExportStore(t, db, nodes, 5)

	ref := filepath.Join(dir, "ref.snap")
	start := time.Now()
	// A fixed --valid-at: every export of the store is then the same bytes.
	validAt := "2030-01-01T00:00:00Z"
	if r := memctlProc(t, "", "--db", db, "export", "--out", ref, "--valid-at", validAt); r.Code != 0 {
		t.Fatalf("reference export: %s", r.Stderr)
	}
	span := time.Since(start)
	want, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := snapshot.FromBytes(want); err != nil {
		t.Fatalf("reference export does not open: %v", err)
	} else if err := f.Verify(); err != nil {
		t.Fatalf("reference export does not verify: %v", err)
	}
	old := []byte("previous file: must survive a killed export\n")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	outcomes := map[string]int{}
	for it := range iters {
		out := filepath.Join(dir, fmt.Sprintf("out-%d.snap", it))
		hadOld := it%2 == 1
		if hadOld {
			if err := os.WriteFile(out, old, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(bin, "--db", db, "export", "--out", out, "--valid-at", validAt)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(span) * 5 / 4)))
		_ = cmd.Process.Kill()
		werr := cmd.Wait()
		got, rerr := os.ReadFile(out)
		switch {
		case errors.Is(rerr, os.ErrNotExist) && !hadOld:
			outcomes["absent"]++
		case rerr == nil && hadOld && bytes.Equal(got, old):
			outcomes["previous file kept"]++
		case rerr == nil && bytes.Equal(got, want):
			outcomes["complete"]++
			if werr != nil {
				outcomes["complete, then killed"]++
			}
		default:
			t.Fatalf("round %d: export killed (%v) left %d bytes at the destination (read err %v); want absent, previous or %d complete bytes",
				it, werr, len(got), rerr, len(want))
		}
	}
	tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	t.Logf("%d exports killed: %v; export takes ~%v; %d temporary files left behind by killed exports",
		iters, outcomes, span.Round(time.Millisecond), len(tmps))
}

// keepStore copies the store directory db out of the test's temporary
// directory (which the test removes) and returns where it went, for a
// failure to be looked at after the run.
func keepStore(db string) string {
	dst, err := os.MkdirTemp("", "memctl-crash-")
	if err != nil {
		return "nowhere: " + err.Error()
	}
	if err := os.CopyFS(dst, os.DirFS(db)); err != nil {
		return "nowhere: " + err.Error()
	}
	return dst
}
