package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callRaw calls a tool from any goroutine: the result text, whether it is
// a tool error, and a protocol error.
func callRaw(sess *mcp.ClientSession, name string, args any) (string, bool, error) {
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", false, err
	}
	if len(res.Content) != 1 {
		return "", false, fmt.Errorf("%d content blocks", len(res.Content))
	}
	text, _ := res.Content[0].(*mcp.TextContent)
	if text == nil {
		return "", false, fmt.Errorf("content is %T", res.Content[0])
	}
	if !res.IsError && res.StructuredContent != nil {
		// The reference memory server's tools text is not their JSON.
		b, err := json.Marshal(res.StructuredContent)
		return string(b), false, err
	}
	return text.Text, res.IsError, nil
}

// seedNodes writes nodes w0..w{writers-1} and t0..t{targets-1} through the CLI.
func seedNodes(t *testing.T, db string, writers, targets int) {
	var ops strings.Builder
	for c := 0; c < writers; c++ {
		fmt.Fprintf(&ops, `{"op":"put_node","key":"w%d","type":"writer"}`+"\n", c)
	}
	for i := 0; i < targets; i++ {
		fmt.Fprintf(&ops, `{"op":"put_node","key":"t%d","type":"target"}`+"\n", i)
	}
	runCLI(t, ops.String(), "--db", db, "batch")
}

// TestConcurrentServers: 8 server processes on one store, each with its
// own client, 200 writes each through create_relations and put_edge
// interleaved with reads. Afterwards all 1,600 edges are present exactly
// once and check is clean. (The reference memory server, two processes on
// one file, keeps about half of such writes.)
func TestConcurrentServers(t *testing.T) {
	const servers, writes = 8, 200
	db := newStore(t)
	seedNodes(t, db, servers, writes)
	ss := make([]*server, servers)
	for c := range ss {
		ss[c] = startServer(t, db, "--run", fmt.Sprintf("run-%d", c))
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, servers)
	for c, s := range ss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- writeAndRead(s.sess, c, writes)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	t.Logf("%d servers × %d writes in %v", servers, writes, time.Since(start))

	// Every edge present, once, through the CLI (another process).
	for c := 0; c < servers; c++ {
		out := cliEdges(t, db, "get-out", fmt.Sprintf("w%d", c), "--rel", "links")
		seen := map[string]int{}
		for _, e := range out {
			seen[e["dst"].(string)]++
		}
		if len(out) != writes || len(seen) != writes {
			t.Errorf("w%d has %d links edges to %d targets, want %d", c, len(out), len(seen), writes)
		}
	}
	// Every write committed exactly once: one put_edge op per edge in the
	// log, and the relation registered once.
	puts, adds := map[string]int{}, 0
	for _, op := range cliJSON(t, db, "diff-since", "0") {
		switch {
		case op["op"] == "put_edge" && op["rel"] == "links":
			puts[op["src"].(string)+">"+op["dst"].(string)]++
		case op["op"] == "add_rel" && op["rel"] == "links":
			adds++
		}
	}
	dups := 0
	for _, n := range puts {
		if n != 1 {
			dups++
		}
	}
	if len(puts) != servers*writes || dups != 0 || adds != 1 {
		t.Errorf("log: %d distinct edge writes (want %d), %d written more than once, relation registered %d times",
			len(puts), servers*writes, dups, adds)
	}
	t.Logf("writes present: %d of %d, lost %d, duplicated %d", len(puts), servers*writes, servers*writes-len(puts), dups)
	if out, errOut, code := tryCLI(t, "", "--db", db, "check"); code != 0 {
		t.Errorf("check: exit %d: %s%s", code, out, errOut)
	}
}

// writeAndRead is one client's workload: edges w{c} -links-> t{i}, even i
// through create_relations (the first registers the relation), odd i
// through put_edge, with reads in between that must see the client's own
// writes.
func writeAndRead(sess *mcp.ClientSession, c, writes int) error {
	src := fmt.Sprintf("w%d", c)
	for i := 0; i < writes; i++ {
		dst := fmt.Sprintf("t%d", i)
		var text string
		var isErr bool
		var err error
		if i%2 == 0 {
			text, isErr, err = callRaw(sess, "create_relations", map[string]any{"relations": []map[string]any{{"from": src, "to": dst, "relationType": "links"}}})
			if err == nil && !isErr && !strings.Contains(text, `"relations":[{"from"`) {
				return fmt.Errorf("%s write %d: create_relations created nothing: %s", src, i, text)
			}
		} else {
			text, isErr, err = callRaw(sess, "put_edge", map[string]any{"src": src, "rel": "links", "dst": dst})
		}
		if err != nil || isErr {
			return fmt.Errorf("%s write %d: %v %s", src, i, err, text)
		}
		switch {
		case i%10 == 9:
			text, isErr, err = callRaw(sess, "get_out", map[string]any{"key": src, "rel": "links", "limit": 1})
			var l struct {
				Total int `json:"total"`
			}
			if err == nil && !isErr {
				err = json.Unmarshal([]byte(text), &l)
			}
			if err != nil || isErr || l.Total != i+1 {
				return fmt.Errorf("%s after write %d: get_out total %d: %v %s", src, i, l.Total, err, text)
			}
		case i%50 == 25:
			text, isErr, err = callRaw(sess, "open_nodes", map[string]any{"names": []string{src}})
			if err != nil || isErr || strings.Count(text, `"from":"`+src+`"`) != i+1 {
				return fmt.Errorf("%s after write %d: open_nodes: %v %.200s", src, i, err, text)
			}
		}
	}
	return nil
}

// TestKillMidBatch: a server is killed with SIGKILL while it applies a
// large batch, with other servers writing at the same time. The batch is
// all or nothing, every acknowledged write of the others is present, the
// others keep writing, and check is clean.
func TestKillMidBatch(t *testing.T) {
	// Race-built servers are ~20x slower: a smaller batch and fewer kills
	// there; the full size runs in make test's non-race pass.
	batchOps, trials := 20000, 6
	if raceEnabled {
		batchOps, trials = 4000, 2
	}
	db := newStore(t)
	seedNodes(t, db, 2, batchOps)
	runCLI(t, "", "--db", db, "rel", "add", "links")
	batchArgs := func(k int) map[string]any {
		ops := make([]map[string]any, batchOps)
		for j := range ops {
			ops[j] = map[string]any{"op": "put_edge", "src": fmt.Sprintf("batch%d", k), "rel": "links", "dst": fmt.Sprintf("t%d", j)}
		}
		return map[string]any{"ops": ops}
	}
	// Bystanders: two servers writing single edges all along.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	acked := make([]int, 2)
	var byErr [2]error
	for c := 0; c < 2; c++ {
		s := startServer(t, db)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				text, isErr, err := callRaw(s.sess, "put_edge", map[string]any{"src": fmt.Sprintf("w%d", c), "rel": "links", "dst": fmt.Sprintf("t%d", i%batchOps)})
				if err != nil || isErr {
					byErr[c] = fmt.Errorf("bystander %d write %d: %v %s", c, i, err, text)
					return
				}
				acked[c] = min(i+1, batchOps)
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}

	// A control run: how long applying the batch takes once it is decoded.
	ctl := startServer(t, db, "--log-level", "debug")
	go func() {
		_, _, _ = callRaw(ctl.sess, "batch", batchArgs(0))
	}()
	applying := waitFor(t, ctl.stderr, "batch: applying", 60*time.Second)
	for len(cliEdges(t, db, "get-out", "batch0", "--rel", "links")) == 0 {
		if time.Since(applying) > time.Minute {
			t.Fatal("control batch never committed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	apply := time.Since(applying)
	t.Logf("control batch of %d ops: applied and committed within %v of starting", batchOps, apply)

	committed, absent := 0, 0
	for k := 1; k <= trials; k++ {
		victim := startServer(t, db, "--log-level", "debug")
		done := make(chan error, 1)
		go func() {
			_, _, err := callRaw(victim.sess, "batch", batchArgs(k))
			done <- err
		}()
		waitFor(t, victim.stderr, "batch: applying", 60*time.Second)
		// Kill at a different point of the transaction each trial.
		time.Sleep(apply * time.Duration(k-1) / time.Duration(trials))
		if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-done
		victim.close()
		n := len(cliEdges(t, db, "get-out", fmt.Sprintf("batch%d", k), "--rel", "links"))
		switch n {
		case batchOps:
			committed++
		case 0:
			absent++
		default:
			t.Errorf("trial %d: %d of %d batch edges present after kill -9: not all or nothing", k, n, batchOps)
		}
	}
	close(stop)
	wg.Wait()
	for c, err := range byErr {
		if err != nil {
			t.Error(err)
		}
		if n := len(cliEdges(t, db, "get-out", fmt.Sprintf("w%d", c), "--rel", "links")); n < acked[c] {
			t.Errorf("bystander %d: %d edges present, %d acknowledged", c, n, acked[c])
		}
	}
	t.Logf("kill -9 mid-batch: %d trials, %d batches committed whole, %d absent, 0 partial; bystanders acknowledged %v writes, all present",
		trials, committed, absent, acked)
	if absent == 0 {
		t.Errorf("no kill landed before the commit: the test did not exercise a killed transaction")
	}
	if out, errOut, code := tryCLI(t, "", "--db", db, "check"); code != 0 {
		t.Errorf("check: exit %d: %s%s", code, out, errOut)
	}
}

// waitFor polls a server's stderr for a line containing s.
func waitFor(t *testing.T, b *lockedBuffer, s string, timeout time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(b.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the server log within %v:\n%s", s, timeout, b.String())
		}
		time.Sleep(time.Millisecond)
	}
	return time.Now()
}

// TestConcurrentCallsOneServer: one server, many calls in flight at once
// from one session (agents issue parallel tool calls): writes, reads and
// analysis calls whose engine snapshot keeps being rebuilt.
func TestConcurrentCallsOneServer(t *testing.T) {
	const workers, calls = 8, 40
	db := newStore(t)
	seedNodes(t, db, workers, calls)
	runCLI(t, "", "--db", db, "rel", "add", "links")
	s := startServer(t, db)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for c := 0; c < workers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := fmt.Sprintf("w%d", c)
			for i := 0; i < calls; i++ {
				reads := []struct {
					name string
					args map[string]any
				}{
					{"get_out", map[string]any{"key": src}},
					{"related", map[string]any{"queries": []string{src}}},
					{"read_graph", map[string]any{"limit": 20}},
				}
				r := reads[i%len(reads)]
				for _, call := range []struct {
					name string
					args map[string]any
				}{
					{"put_edge", map[string]any{"src": src, "rel": "links", "dst": fmt.Sprintf("t%d", i)}},
					r,
				} {
					if text, isErr, err := callRaw(s.sess, call.name, call.args); err != nil || isErr {
						errs <- fmt.Errorf("%s call %d %s: %v %s", src, i, call.name, err, text)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for c := 0; c < workers; c++ {
		if n := len(cliEdges(t, db, "get-out", fmt.Sprintf("w%d", c), "--rel", "links")); n != calls {
			t.Errorf("w%d: %d edges, want %d", c, n, calls)
		}
	}
	if out, errOut, code := tryCLI(t, "", "--db", db, "check"); code != 0 {
		t.Errorf("check: %s%s", out, errOut)
	}
}
