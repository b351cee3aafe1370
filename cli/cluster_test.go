package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/replica/natstest"
	"github.com/memctl/memctl/storesnap"
)

// TestReplicatedCluster: three machines (stores) bound to one stream with
// three replicas on a three-node in-process cluster; eight writers (six
// loops of memctl processes, two memctl mcp servers), one machine joining
// late and catching up, the stream leader killed and restarted mid-run,
// and writer processes killed with SIGKILL at random moments (mid-publish
// among them). Afterwards every acknowledged write is present exactly once
// on every machine, an unacknowledged one at most once; the three logs
// are equal byte for byte; the logical snapshot hash is equal on the three
// at every revision; check is clean everywhere.
func TestReplicatedCluster(t *testing.T) {
	bin := buildMemctl(t)
	dir := t.TempDir()
	nodes := natstest.StartCluster(t, filepath.Join(dir, "cluster"))
	machines := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(cmd.Environ(), "MEMCTL_NOSYNC=1")
		out, err := cmd.Output()
		return string(out), err
	}
	for i, m := range machines {
		if out, err := run("--db", m, "init"); err != nil {
			t.Fatalf("init: %v %s", err, out)
		}
		// Leader election takes a few seconds: retry with short tries.
		deadline := time.Now().Add(60 * time.Second)
		for {
			url := nodes[i].URL("team")
			if i == 2 { // machine c lists the three servers: any live one will do
				url = "nats://" + strings.TrimPrefix(nodes[0].ServerURL(), "nats://") + "," +
					strings.TrimPrefix(nodes[1].ServerURL(), "nats://") + "," + strings.TrimPrefix(nodes[2].ServerURL(), "nats://") + "/team"
			}
			out, err := run("--db", m, "remote", "add", url, "--replicas", "3")
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("remote add %s: %v %s", m, err, out)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}

	type ack struct{ key, rev string }
	var mu sync.Mutex
	var acked []ack
	attempted := map[string]bool{}
	revLine := regexp.MustCompile(`^rev (\d+)`)
	var killed, failed atomic.Int64
	var wg sync.WaitGroup
	// Six CLI writer loops, two per machine; machine c's start late.
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := machines[w%3]
			if w%3 == 2 {
				time.Sleep(2 * time.Second) // machine c was away
			}
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range 12 {
				key := fmt.Sprintf("decision:w%d-%d", w, i)
				mu.Lock()
				attempted[key] = true
				mu.Unlock()
				cmd := exec.Command(bin, "--db", m, "put-node", key, "--payload", fmt.Sprintf(`{"w":%d,"i":%d}`, w, i))
				cmd.Env = append(cmd.Environ(), "MEMCTL_NOSYNC=1")
				var out strings.Builder
				cmd.Stdout = &out
				if err := cmd.Start(); err != nil {
					t.Error(err)
					return
				}
				if rng.IntN(4) == 0 { // SIGKILL at a random moment
					time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
					cmd.Process.Kill()
				}
				if err := cmd.Wait(); err != nil {
					if strings.Contains(err.Error(), "killed") {
						killed.Add(1)
					} else {
						failed.Add(1)
					}
					continue
				}
				if sm := revLine.FindStringSubmatch(out.String()); sm != nil {
					mu.Lock()
					acked = append(acked, ack{key, sm[1]})
					mu.Unlock()
				}
			}
		}()
	}
	// Two MCP servers (machines a and b), 12 writes each.
	for w := 6; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var in strings.Builder
			in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
			in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
			keys := map[int]string{}
			for i := 1; i <= 12; i++ {
				keys[i] = fmt.Sprintf("decision:w%d-%d", w, i)
				fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"put_node","arguments":{"key":%q}}}`+"\n", i, keys[i])
			}
			mu.Lock()
			for _, k := range keys {
				attempted[k] = true
			}
			mu.Unlock()
			cmd := exec.Command(bin, "--db", machines[w%2], "mcp")
			cmd.Env = append(cmd.Environ(), "MEMCTL_NOSYNC=1")
			cmd.Stdin = strings.NewReader(in.String())
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("mcp writer %d: %v", w, err)
				return
			}
			sc := bufio.NewScanner(strings.NewReader(string(out)))
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				var resp struct {
					ID     int `json:"id"`
					Result struct {
						IsError           bool `json:"isError"`
						StructuredContent struct {
							Rev uint64 `json:"rev"`
						} `json:"structuredContent"`
					} `json:"result"`
				}
				if json.Unmarshal(sc.Bytes(), &resp) != nil || keys[resp.ID] == "" || resp.Result.IsError || resp.Result.StructuredContent.Rev == 0 {
					continue
				}
				mu.Lock()
				acked = append(acked, ack{keys[resp.ID], fmt.Sprint(resp.Result.StructuredContent.Rev)})
				mu.Unlock()
			}
		}()
	}
	// Kill the stream leader mid-run and restart it.
	wg.Add(1)
	leaderKilled := ""
	go func() {
		defer wg.Done()
		time.Sleep(1500 * time.Millisecond)
		nc, err := nats.Connect(nodes[0].ServerURL())
		if err != nil {
			t.Error(err)
			return
		}
		defer nc.Close()
		js, _ := jetstream.New(nc)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		st, err := js.Stream(ctx, "team")
		if err != nil {
			t.Error(err)
			return
		}
		info, err := st.Info(ctx)
		if err != nil || info.Cluster == nil {
			t.Errorf("stream info: %v", err)
			return
		}
		for _, n := range nodes {
			if n.Name() == info.Cluster.Leader {
				leaderKilled = n.Name()
				n.Stop()
				time.Sleep(2 * time.Second)
				n.Restart()
			}
		}
	}()
	wg.Wait()
	if leaderKilled == "" {
		t.Fatal("no stream leader was killed")
	}

	// Everyone catches up (retrying while the cluster settles).
	for _, m := range machines {
		deadline := time.Now().Add(60 * time.Second)
		for {
			out, err := run("--db", m, "sync")
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("sync %s: %v %s", m, err, out)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	t.Logf("leader %s killed and restarted; %d writes acknowledged of %d attempted, %d processes killed, %d failed",
		leaderKilled, len(acked), len(attempted), killed.Load(), failed.Load())
	if len(acked) < len(attempted)/2 {
		t.Fatalf("only %d of %d writes acknowledged", len(acked), len(attempted))
	}

	// Read the three stores in this process, one after the other.
	var logs [3][][]byte
	var counts [3]map[string]int
	var revAt [3]map[string]lmdbstore.Revision
	var hashes [3][][32]byte
	for i, m := range machines {
		s, err := lmdbstore.Open(m, lmdbstore.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		counts[i], revAt[i] = map[string]int{}, map[string]lmdbstore.Revision{}
		err = s.View(func(r *lmdbstore.ReadTxn) error {
			for rev := lmdbstore.Revision(1); rev <= r.Revision(); rev++ {
				b, err := r.LogRecord(rev)
				if err != nil {
					return err
				}
				logs[i] = append(logs[i], b)
			}
			return r.DiffSince(lmdbstore.AtRevision(0), lmdbstore.DiffFilter{}, func(op lmdbstore.Op) error {
				if op.Kind == lmdbstore.OpPutNode {
					counts[i][op.NodeKey]++
					revAt[i][op.NodeKey] = op.Rev
				}
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		for rev := lmdbstore.Revision(1); rev <= lmdbstore.Revision(len(logs[i])); rev++ {
			h, err := storesnap.LogicalHash(s, lmdbstore.AtRevision(rev))
			if err != nil {
				t.Fatal(err)
			}
			hashes[i] = append(hashes[i], h)
		}
		rep, err := s.Check()
		if err != nil || len(rep.Problems) > 0 {
			t.Fatalf("check %s: %v %v", m, rep.Problems, err)
		}
		s.Close()
	}
	for i := 1; i < 3; i++ {
		if len(logs[i]) != len(logs[0]) {
			t.Fatalf("machine %d has %d revisions, machine 0 %d", i, len(logs[i]), len(logs[0]))
		}
		for j := range logs[0] {
			if string(logs[i][j]) != string(logs[0][j]) {
				t.Fatalf("revision %d differs between machines 0 and %d", j+1, i)
			}
			if hashes[i][j] != hashes[0][j] {
				t.Fatalf("revision %d: logical hashes differ between machines 0 and %d", j+1, i)
			}
		}
	}
	for i := range machines {
		for _, a := range acked {
			if counts[i][a.key] != 1 || fmt.Sprint(revAt[i][a.key]) != a.rev {
				t.Fatalf("machine %d: acknowledged %s (rev %s) present %d times, at rev %d", i, a.key, a.rev, counts[i][a.key], revAt[i][a.key])
			}
		}
		for k, n := range counts[i] {
			if n > 1 || !attempted[k] {
				t.Fatalf("machine %d: %s logged %d times (attempted: %v)", i, k, n, attempted[k])
			}
		}
	}
}
