package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMain removes the memctl binary buildMemctl built, if it did.
func TestMain(m *testing.M) {
	code := m.Run()
	if memctlBinDir != "" {
		os.RemoveAll(memctlBinDir)
	}
	os.Exit(code)
}

var (
	memctlBinOnce sync.Once
	memctlBinDir  string
	memctlBinPath string
	memctlBinErr  error
)

// buildMemctl builds cmd/memctl once per test binary and returns it. It
// copies the executable `go run` links (`go run -exec cp`): go run keeps it
// in the build cache, where `go build -o` links again every time (about 6 s
// of CPU), so the packages whose tests start memctl (cli, fuzz, mcpserver)
// link it once per state of the source. The binary is two directories
// below a temp dir of its own, as in t.TempDir: TestUnwritableStore opens
// both to another user.
func buildMemctl(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the memctl binary; skipped with -short")
	}
	memctlBinOnce.Do(func() {
		memctlBinDir, memctlBinErr = os.MkdirTemp("", "memctl-cli-bin-")
		if memctlBinErr != nil {
			return
		}
		memctlBinPath = filepath.Join(memctlBinDir, "bin", "memctl")
		if memctlBinErr = os.Mkdir(filepath.Dir(memctlBinPath), 0o755); memctlBinErr != nil {
			return
		}
		cmd := exec.Command("go", "run", "-exec", "cp", "github.com/memctl/memctl/cmd/memctl", memctlBinPath)
		if out, err := cmd.CombinedOutput(); err != nil {
			memctlBinErr = fmt.Errorf("go run: %v\n%s", err, out)
		}
	})
	if memctlBinErr != nil {
		t.Fatal(memctlBinErr)
	}
	return memctlBinPath
}

// Many memctl processes write and read one store at once, some of them
// killed mid-flight (leaving stale reader slots or an abandoned writer
// lock). Every acknowledged write must be present, each in its own
// revision, and the store must pass check.
func TestManyProcesses(t *testing.T) {
	bin := buildMemctl(t)
	db := filepath.Join(t.TempDir(), "db")
	tele := filepath.Join(t.TempDir(), "telemetry.jsonl")
	t.Setenv("MEMCTL_TELEMETRY", tele) // inherited by every memctl process
	if out, err := exec.Command(bin, "--db", db, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}

	const writers, perWriter, readers = 8, 20, 4
	type ack struct {
		dst string
		rev string
	}
	var (
		mu    sync.Mutex
		acked = map[int][]ack{}
		fails []string
	)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range perWriter {
				dst := fmt.Sprintf("t:%d", i)
				cmd := exec.Command(bin, "--db", db, "put-edge", fmt.Sprintf("w:%d", w), "calls", dst, "--run", fmt.Sprintf("writer-%d", w))
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Start(); err != nil {
					t.Error(err)
					return
				}
				// Writers 0 and 1 get killed now and then.
				if w < 2 && i%3 == 1 {
					time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
					_ = cmd.Process.Kill()
				}
				err := cmd.Wait()
				mu.Lock()
				switch {
				case err == nil:
					acked[w] = append(acked[w], ack{dst: dst, rev: strings.TrimSpace(stdout.String())})
				case w < 2 && i%3 == 1:
					// killed: the write may or may not have landed
				default:
					fails = append(fails, fmt.Sprintf("writer %d #%d: %v: %s", w, i, err, stderr.String()))
				}
				mu.Unlock()
			}
		}()
	}
	done := make(chan struct{})
	var rwg sync.WaitGroup
	for r := range readers {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				args := []string{"--db", db, "get-out", fmt.Sprintf("w:%d", i%writers)}
				if i%4 == 3 {
					args = []string{"--db", db, "stats"}
				}
				cmd := exec.Command(bin, args...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Error(err)
					return
				}
				kill := r == 0 && i%2 == 1
				if kill {
					time.Sleep(time.Duration(i%5) * 300 * time.Microsecond)
					_ = cmd.Process.Kill()
				}
				err := cmd.Wait()
				// A writer's key before its first edge is not found.
				var ee *exec.ExitError
				if errors.As(err, &ee) && ee.ExitCode() == ExitNotFound && strings.Contains(stderr.String(), "no such node and no edges") {
					err = nil
				}
				if err != nil && !kill {
					mu.Lock()
					fails = append(fails, fmt.Sprintf("reader %d: %v: %s", r, err, stderr.String()))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	rwg.Wait()
	for _, f := range fails {
		t.Error(f)
	}

	revs := map[string]string{}
	for w := range writers {
		out, err := exec.Command(bin, "--db", db, "get-out", fmt.Sprintf("w:%d", w)).Output()
		if err != nil {
			t.Fatalf("get-out w:%d: %v", w, err)
		}
		for _, a := range acked[w] {
			if !containsEdgeLine(string(out), fmt.Sprintf("w:%d", w), a.dst) {
				t.Errorf("acknowledged write w:%d calls %s (%s) is missing", w, a.dst, a.rev)
			}
			if prev, dup := revs[a.rev]; dup {
				t.Errorf("%s acknowledged twice: %s and w:%d %s", a.rev, prev, w, a.dst)
			}
			revs[a.rev] = fmt.Sprintf("w:%d %s", w, a.dst)
		}
	}
	if len(revs) < writers*perWriter*3/4 {
		t.Errorf("only %d writes acknowledged", len(revs))
	}
	if out, err := exec.Command(bin, "--db", db, "check").CombinedOutput(); err != nil {
		t.Errorf("check after concurrent run: %v\n%s", err, out)
	}

	// Telemetry appended by all those processes: whole lines only (a killed
	// process may leave none, never half of one), a write event per
	// acknowledged put-edge.
	data, err := os.ReadFile(tele)
	if err != nil {
		t.Fatal(err)
	}
	writes := 0
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("telemetry line %d is not a JSON object: %v\n%q", i+1, err, line)
		}
		if ev["event"] == "write" {
			writes++
		}
	}
	if writes < len(revs) {
		t.Errorf("telemetry has %d write events for %d acknowledged writes", writes, len(revs))
	}
}

// containsEdgeLine reports whether get-out text lists src -calls-> dst.
func containsEdgeLine(out, src, dst string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == src && f[1] == "calls" && f[2] == dst {
			return true
		}
	}
	return false
}
