package fuzz

import (
	"bufio"
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
	"sync/atomic"
	"testing"
	"time"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/lmdbstore"
)

func init() {
	helpers["long-reader"] = helperLongReader
	helpers["kv-writer"] = helperKVWriter
}

// concDuration is how long each concurrency phase runs.
func concDuration() time.Duration {
	return time.Duration(envInt("MEMCTL_CONC_SECONDS", 6)) * time.Second
}

// helperLongReader (re-executed test binary) opens the store read-only with
// a small map and, until the deadline, holds read transactions for ~300ms
// each while others write and grow the map: inside one transaction every
// repeated read must give the same answer. It prints the transactions held.
func helperLongReader() int {
	db, deadline := os.Getenv("CONC_DB"), time.Now().Add(mustDuration(os.Getenv("CONC_FOR")))
	s, err := lmdbstore.Open(db, lmdbstore.Options{ReadOnly: true, MapSize: 1 << 20})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	defer s.Close()
	held := 0
	for time.Now().Before(deadline) {
		err := s.View(func(r *lmdbstore.ReadTxn) error {
			rev := r.Revision()
			first := map[string]string{}
			for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
				for w := range 3 {
					src := fmt.Sprintf("w:%d", w)
					out, err := r.GetOut(src, "", lmdbstore.At{})
					if err != nil {
						return err
					}
					list, err := r.ListKV("conc", fmt.Sprint("g", w), lmdbstore.At{})
					if err != nil {
						return err
					}
					got := fmt.Sprint(len(out), len(list))
					if prev, ok := first[src]; ok && prev != got {
						return fmt.Errorf("read txn at rev %d: %s changed from %s to %s inside one transaction", rev, src, prev, got)
					}
					first[src] = got
				}
				time.Sleep(5 * time.Millisecond)
			}
			if r.Revision() != rev {
				return fmt.Errorf("revision moved inside a read transaction")
			}
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		held++
	}
	fmt.Println(held)
	return 0
}

// helperKVWriter (re-executed test binary) writes 2 KiB kv payloads through
// the Go API with a 1 MiB initial map, so the map must grow under the
// readers; it prints each acknowledged key.
func helperKVWriter() int {
	db, deadline := os.Getenv("CONC_DB"), time.Now().Add(mustDuration(os.Getenv("CONC_FOR")))
	id := os.Getenv("CONC_ID")
	s, err := lmdbstore.Open(db, lmdbstore.Options{MapSize: 1 << 20, NoSync: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	defer s.Close()
	payload := json.RawMessage(`"` + strings.Repeat("x", 2<<10) + `"`)
	for i := 0; time.Now().Before(deadline); i++ {
		key := fmt.Sprint("k", i)
		if _, err := s.Update(lmdbstore.WriteMeta{RunID: "grow-" + id}, func(tx *lmdbstore.WriteTxn) error {
			return tx.PutKV(lmdbstore.KVPut{Scope: "conc", Namespace: "g" + id, Key: key, Payload: payload})
		}); err != nil {
			fmt.Fprintln(os.Stderr, "put:", err)
			return 1
		}
		fmt.Println(key)
	}
	return 0
}

func mustDuration(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		return time.Second
	}
	return d
}

// TestConcurrentProcesses runs, at once: 3 memctl put-edge writers, 2
// memctl put-kv writers, 2 memctl get-out readers, 1 memctl diff-since
// reader, 3 Go-API writers of 2 KiB values with a 1 MiB initial map (the
// map grows several times), 2 long readers holding read transactions
// across those commits and growths, and a killer that SIGKILLs memctl
// readers and writers mid-flight (stale reader slots, abandoned writer
// lock). Afterwards every acknowledged write is present exactly once, in
// the store and in the log, and check passes.
func TestConcurrentProcesses(t *testing.T) {
	bin := memctlBin(t)
	db := filepath.Join(t.TempDir(), "db")
	s, err := lmdbstore.Init(db, lmdbstore.Options{MapSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	dur := concDuration()
	deadline := time.Now().Add(dur)

	var (
		mu         sync.Mutex
		ackedEdges = map[string]int{} // "src dst" -> acknowledgements
		ackedKV    = map[string]int{}
		killedRuns atomic.Int64
		reads      atomic.Int64
		errs       []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		errs = append(errs, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	memctl := func(args ...string) (string, string, int) {
		cmd := exec.Command(bin, append([]string{"--db", db}, args...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			fail("run %v: %v", args, err)
			code = -1
		}
		return out.String(), errb.String(), code
	}

	var wg sync.WaitGroup
	loop := func(fn func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				fn(i)
			}
		}()
	}
	for w := range 3 {
		loop(func(i int) {
			src, dst := fmt.Sprintf("w:%d", w), fmt.Sprintf("t:%d", i)
			if _, stderr, code := memctl("put-edge", src, "calls", dst, "--run", src); code != 0 {
				fail("put-edge %s %s: exit %d: %s", src, dst, code, stderr)
				return
			}
			mu.Lock()
			ackedEdges[src+" "+dst]++
			mu.Unlock()
		})
	}
	for w := range 2 {
		loop(func(i int) {
			ns, key := fmt.Sprint("p", w), fmt.Sprint("k", i)
			if _, stderr, code := memctl("put-kv", "conc", ns, key, strconv.Itoa(i)); code != 0 {
				fail("put-kv %s %s: exit %d: %s", ns, key, code, stderr)
				return
			}
			mu.Lock()
			ackedKV[ns+" "+key]++
			mu.Unlock()
		})
	}
	for r := range 2 {
		last := map[string]int{}
		loop(func(i int) {
			src := fmt.Sprintf("w:%d", (i+r)%3)
			out, stderr, code := memctl("--json", "get-out", src)
			reads.Add(1)
			if code != 0 && code != 1 {
				fail("get-out %s: exit %d: %s", src, code, stderr)
				return
			}
			n := strings.Count(out, "\n")
			if n < last[src] {
				fail("get-out %s went from %d to %d edges (nothing is deleted)", src, last[src], n)
			}
			last[src] = n
		})
	}
	loop(func(i int) {
		out, stderr, code := memctl("--json", "diff-since", "0")
		reads.Add(1)
		if code != 0 {
			fail("diff-since: exit %d: %s", code, stderr)
			return
		}
		prev := uint64(0)
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var op struct{ Rev uint64 }
			if line == "" || json.Unmarshal([]byte(line), &op) != nil {
				continue
			}
			if op.Rev != prev && op.Rev != prev+1 {
				fail("diff-since: revision %d follows %d", op.Rev, prev)
				return
			}
			prev = op.Rev
		}
	})
	// The killer: memctl processes SIGKILLed at random moments.
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	var killDelays []time.Duration
	for range 64 {
		killDelays = append(killDelays, time.Duration(rng.IntN(8000))*time.Microsecond)
	}
	loop(func(i int) {
		args := []string{"--db", db, "get-out", "w:0"}
		if i%2 == 1 {
			args = []string{"--db", db, "put-edge", "killed:x", "calls", fmt.Sprintf("k:%d", i)}
		}
		cmd := exec.Command(bin, args...)
		if err := cmd.Start(); err != nil {
			fail("killer: %v", err)
			return
		}
		time.Sleep(killDelays[i%len(killDelays)])
		if cmd.Process.Kill() == nil {
			killedRuns.Add(1)
		}
		cmd.Wait()
	})
	// Go-API writers that grow the map, and long readers.
	type helper struct {
		role string
		cmd  *exec.Cmd
		out  bytes.Buffer
		errb bytes.Buffer
	}
	var hs []*helper
	for i := range 3 {
		hs = append(hs, &helper{role: "kv-writer", cmd: helperCmd(t, "kv-writer", "CONC_DB="+db, "CONC_FOR="+dur.String(), fmt.Sprint("CONC_ID=", i))})
	}
	for range 2 {
		hs = append(hs, &helper{role: "long-reader", cmd: helperCmd(t, "long-reader", "CONC_DB="+db, "CONC_FOR="+dur.String())})
	}
	for _, h := range hs {
		h.cmd.Stdout, h.cmd.Stderr = &h.out, &h.errb
		if err := h.cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	held := 0
	for _, h := range hs {
		if err := h.cmd.Wait(); err != nil {
			fail("%s helper: %v: %s", h.role, err, h.errb.String())
			continue
		}
		sc := bufio.NewScanner(&h.out)
		for sc.Scan() {
			if h.role == "long-reader" {
				n, _ := strconv.Atoi(sc.Text())
				held += n
				continue
			}
			id := strings.TrimPrefix(h.cmd.Env[len(h.cmd.Env)-1], "CONC_ID=")
			mu.Lock()
			ackedKV["g"+id+" "+sc.Text()]++
			mu.Unlock()
		}
	}
	for _, e := range errs {
		t.Error(e)
	}
	if t.Failed() {
		return
	}
	st := verifyConcurrent(t, db, ackedEdges, ackedKV)
	t.Logf("%v: %d put-edge and %d put-kv acknowledged, %d reads, %d long read transactions held across commits, "+
		"%d memctl processes killed; map grew from 1 MiB to %d MiB, %d revisions",
		dur, len(ackedEdges), len(ackedKV), reads.Load(), held, killedRuns.Load(), st.MapSize>>20, st.Revision)
}

// verifyConcurrent checks that every acknowledged write is in the store
// exactly once and in the log exactly once, and that check passes.
func verifyConcurrent(t *testing.T, db string, edges, kvs map[string]int) lmdbstore.Stats {
	t.Helper()
	s, err := lmdbstore.Open(db, lmdbstore.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	logged := map[string]int{}
	err = s.View(func(r *lmdbstore.ReadTxn) error {
		for w := range 3 {
			src := fmt.Sprintf("w:%d", w)
			out, err := r.GetOut(src, "", lmdbstore.At{})
			if err != nil && !errors.Is(err, lmdbstore.ErrNotFound) {
				return err
			}
			seen := map[string]int{}
			for _, e := range out {
				dst, err := r.KeyOf(e.Dst)
				if err != nil {
					return err
				}
				seen[src+" "+dst]++
			}
			for k, n := range seen {
				if n != 1 || edges[k] != 1 {
					t.Errorf("edge %s: %d times in get-out, acknowledged %d times", k, n, edges[k])
				}
			}
			for k := range edges {
				if strings.HasPrefix(k, src+" ") && seen[k] != 1 {
					t.Errorf("acknowledged edge %s missing from get-out", k)
				}
			}
		}
		for k := range kvs {
			ns, key, _ := strings.Cut(k, " ")
			if _, err := r.GetKV("conc", ns, key, lmdbstore.At{}); err != nil {
				t.Errorf("acknowledged kv %s: %v", k, err)
			}
		}
		return r.DiffSince(lmdbstore.AtRevision(0), lmdbstore.DiffFilter{}, func(op lmdbstore.Op) error {
			switch op.Kind {
			case lmdbstore.OpPutEdge:
				logged[op.Src+" "+op.Dst]++
			case lmdbstore.OpPutKV:
				logged[op.Namespace+" "+op.Key]++
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, acked := range []map[string]int{edges, kvs} {
		for k := range acked {
			if logged[k] != 1 {
				t.Errorf("acknowledged write %s logged %d times", k, logged[k])
			}
		}
	}
	rep, err := s.Check()
	if err != nil || len(rep.Problems) > 0 {
		t.Errorf("check: %v %v", err, rep.Problems)
	}
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestConcurrentMapGrowth: Go-API writer processes that all start with a
// 1 MiB map fill it again and again (each MAP_FULL doubles the map in the
// process that hit it; the others adopt the new size on MAP_RESIZED) while
// two long readers hold read transactions. Every acknowledged write is
// present exactly once and check passes.
func TestConcurrentMapGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process; skipped with -short")
	}
	db := filepath.Join(t.TempDir(), "db")
	s, err := lmdbstore.Init(db, lmdbstore.Options{MapSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	dur := concDuration()
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for i := range 4 {
		cmds = append(cmds, helperCmd(t, "kv-writer", "CONC_DB="+db, "CONC_FOR="+dur.String(), fmt.Sprint("CONC_ID=", i)))
	}
	for range 2 {
		cmds = append(cmds, helperCmd(t, "long-reader", "CONC_DB="+db, "CONC_FOR="+dur.String()))
	}
	for _, c := range cmds {
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		outs = append(outs, &out)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	acked := map[string]int{}
	held := 0
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("helper %d: %v: %s", i, err, c.Stderr.(*bytes.Buffer).String())
		}
		for _, line := range strings.Fields(outs[i].String()) {
			if i < 4 {
				acked[fmt.Sprintf("g%d %s", i, line)]++
			} else {
				n, _ := strconv.Atoi(line)
				held += n
			}
		}
	}
	st := verifyConcurrent(t, db, nil, acked)
	if st.MapSize <= 1<<20 {
		t.Errorf("map size %d: never grew", st.MapSize)
	}
	t.Logf("%v: %d 2 KiB writes acknowledged by 4 processes, %d long read transactions; map grew from 1 MiB to %d MiB",
		dur, len(acked), held, st.MapSize>>20)
}

func init() { helpers["hold-reader"] = helperHoldReader }

// helperHoldReader opens the store read-only and, with HOLD_TXN=1, begins a
// read transaction; it prints "ready" and blocks until stdin closes (or it
// is killed, which leaves its reader slot stale).
func helperHoldReader() int {
	s, err := lmdbstore.Open(os.Getenv("CONC_DB"), lmdbstore.Options{ReadOnly: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	wait := func() {
		fmt.Println("ready")
		bufio.NewReader(os.Stdin).ReadString('\n')
	}
	if os.Getenv("HOLD_TXN") == "" {
		wait()
		return 0
	}
	err = s.View(func(r *lmdbstore.ReadTxn) error {
		r.Revision()
		wait()
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// readerSlots counts the live entries of the store's reader table.
func readerSlots(t *testing.T, db string) int {
	t.Helper()
	n := 0
	withRawEnv(t, db, false, func(env *lmdb.Env, _ map[string]lmdb.DBI) error {
		return env.ReaderList(func(line string) error {
			if f := strings.Fields(line); len(f) == 3 && f[0] != "pid" {
				n++
			}
			return nil
		})
	})
	return n
}

// TestStaleReaderSlots kills 24 processes while each holds a read
// transaction, with another process keeping the environment open (so LMDB
// does not reset the reader table on the next open). The stale slots are
// there until the next memctl opens the store, which clears them; writes
// and reads go on, and check passes.
func TestStaleReaderSlots(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	if r := memctlProc(t, "", "--db", db, "init"); r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	start := func(env ...string) (*exec.Cmd, func()) {
		cmd := helperCmd(t, "hold-reader", append([]string{"CONC_DB=" + db}, env...)...)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
			t.Fatalf("helper: %q", line)
		}
		return cmd, func() { stdin.Close(); cmd.Wait() }
	}
	_, release := start()
	defer release()
	const killed = 24
	// All hold their transaction at once (each open clears the slots of
	// readers already dead), then all die.
	var holders []*exec.Cmd
	for range killed {
		cmd, _ := start("HOLD_TXN=1")
		holders = append(holders, cmd)
	}
	for _, cmd := range holders {
		cmd.Process.Kill()
		cmd.Wait()
	}
	stale := readerSlots(t, db)
	if stale < killed {
		t.Fatalf("%d reader slots after killing %d readers: the test did not create stale slots", stale, killed)
	}
	if r := memctlProc(t, "", "--db", db, "put-edge", "a:1", "calls", "a:2"); r.Code != 0 {
		t.Fatalf("put-edge with stale reader slots: %s", r.Stderr)
	}
	if r := memctlProc(t, "", "--db", db, "get-out", "a:1"); r.Code != 0 || !strings.Contains(r.Stdout, "a:2") {
		t.Fatalf("get-out with stale reader slots: exit %d %s%s", r.Code, r.Stdout, r.Stderr)
	}
	after := readerSlots(t, db)
	if after >= killed {
		t.Errorf("%d reader slots after memctl opened the store: stale slots were not cleared", after)
	}
	if c := memctlProc(t, "", "--db", db, "check"); c.Code != 0 {
		t.Errorf("check: %s%s", c.Stdout, c.Stderr)
	}
	t.Logf("%d readers killed inside read transactions: %d slots in the table, %d after the next memctl opened the store", killed, stale, after)
}
