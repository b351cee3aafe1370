package fuzz

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/cli"
	"github.com/memctl/memctl/lmdbstore"
)

// helperEnv names the role of a re-executed test binary (see TestMain).
const helperEnv = "MEMCTL_FUZZ_HELPER"

// helpers are the roles a re-executed test binary can play. Each reads its
// arguments from the environment and exits.
var helpers = map[string]func() int{}

func TestMain(m *testing.M) {
	if role := os.Getenv(helperEnv); role != "" {
		fn, ok := helpers[role]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown helper %q\n", role)
			os.Exit(99)
		}
		os.Exit(fn())
	}
	code := m.Run()
	for _, dir := range []string{binDir, fixtureRoot, shapesRoot} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// memctlBin builds cmd/memctl once per test binary: it copies the
// executable `go run` links and keeps in the build cache (`go run -exec
// cp`), so the packages whose tests start memctl (cli, fuzz, mcpserver) and
// make test's two passes link it once per state of the source; `go build
// -o` links again every time (about 6 s of CPU).
func memctlBin(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the memctl binary; skipped with -short")
	}
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "memctl-fuzz-bin")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "memctl")
		out, err := exec.Command("go", "run", "-exec", "cp", "github.com/memctl/memctl/cmd/memctl", binPath).CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go run: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// helperCmd re-executes the test binary in role with extra environment.
func helperCmd(t testing.TB, role string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+role), env...)
	return cmd
}

// run is one memctl run: in-process through cli.Run.
type run struct {
	Stdout, Stderr string
	Code           int
}

func memctlIn(stdin string, args ...string) run {
	var out, errb bytes.Buffer
	code := cli.Run(append([]string{"memctl"}, args...), cli.Env{
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(string) string { return "" },
	})
	return run{out.String(), errb.String(), code}
}

// memctlProc runs the memctl binary with stdin, in an environment of its
// own: nothing inherited but PATH, and no fsync (as the processes the
// other tests start: a killed process loses nothing an fsync would keep).
func memctlProc(t testing.TB, stdin string, args ...string) run {
	t.Helper()
	cmd := exec.Command(memctlBin(t), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "MEMCTL_NOSYNC=1"}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("memctl %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return run{out.String(), errb.String(), code}
}

// --- raw LMDB access ------------------------------------------------------------
//
// These open the store's environment directly, so LMDB's own structure stays
// valid while values are damaged. They must never run while this process has
// the same store open through lmdbstore (LMDB-NOTES: one env per process).

// keyspaces are the store's DBIs (SPEC.md §2).
var keyspaces = []string{"meta", "n", "e", "out", "in", "kv", "hist", "ids", "rel", "relname", "log", "ts", "revs"}

func withRawEnv(t testing.TB, dir string, write bool, fn func(env *lmdb.Env, dbis map[string]lmdb.DBI) error) {
	t.Helper()
	env, err := lmdb.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	if err := env.SetMaxDBs(16); err != nil {
		t.Fatal(err)
	}
	if err := env.SetMaxReaders(1024); err != nil {
		t.Fatal(err)
	}
	var flags uint
	if !write {
		flags = lmdb.Readonly
	}
	if err := env.Open(dir, flags, 0o644); err != nil {
		t.Fatalf("raw open %s: %v", dir, err)
	}
	if err := env.SetMapSize(0); err != nil {
		t.Fatal(err)
	}
	dbis := map[string]lmdb.DBI{}
	err = env.View(func(txn *lmdb.Txn) error {
		for _, name := range keyspaces {
			dbi, err := txn.OpenDBI(name, 0)
			if err != nil {
				return fmt.Errorf("open %s: %w", name, err)
			}
			dbis[name] = dbi
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := fn(env, dbis); err != nil {
		t.Fatal(err)
	}
}

// kvPair is one raw entry of a keyspace.
type kvPair struct{ K, V []byte }

// dump is every entry of every keyspace.
type dump map[string][]kvPair

func rawDump(t testing.TB, dir string) dump {
	t.Helper()
	d := dump{}
	withRawEnv(t, dir, false, func(env *lmdb.Env, dbis map[string]lmdb.DBI) error {
		return env.View(func(txn *lmdb.Txn) error {
			for _, name := range keyspaces {
				cur, err := txn.OpenCursor(dbis[name])
				if err != nil {
					return err
				}
				for k, v, err := cur.Get(nil, nil, lmdb.First); err == nil; k, v, err = cur.Get(nil, nil, lmdb.Next) {
					d[name] = append(d[name], kvPair{bytes.Clone(k), bytes.Clone(v)})
				}
				cur.Close()
			}
			return nil
		})
	})
	return d
}

// diff describes how two dumps differ ("" if equal).
func (d dump) diff(o dump) string {
	var b strings.Builder
	for _, name := range keyspaces {
		a, c := d[name], o[name]
		if len(a) != len(c) {
			fmt.Fprintf(&b, "%s: %d entries, then %d\n", name, len(a), len(c))
			continue
		}
		for i := range a {
			if !bytes.Equal(a[i].K, c[i].K) || !bytes.Equal(a[i].V, c[i].V) {
				fmt.Fprintf(&b, "%s: entry %d: %x=%x, then %x=%x\n", name, i, a[i].K, a[i].V, c[i].K, c[i].V)
				break
			}
		}
	}
	return b.String()
}

// rawPut writes value under key in keyspace db (nil value: delete).
func rawPut(t testing.TB, dir, db string, key, value []byte) {
	t.Helper()
	withRawEnv(t, dir, true, func(env *lmdb.Env, dbis map[string]lmdb.DBI) error {
		return env.Update(func(txn *lmdb.Txn) error {
			if value == nil {
				return txn.Del(dbis[db], key, nil)
			}
			return txn.Put(dbis[db], key, value, 0)
		})
	})
}

// copyStore copies the data file of a closed store to a new directory.
func copyStore(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "db")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(filepath.Join(src, "data.mdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(filepath.Join(dst, "data.mdb"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// --- fixtures -----------------------------------------------------------------

// fixtureClock starts at a fixed time; the store forces commit times to
// increase by at least 1ns per revision.
func fixtureClock() func() time.Time {
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	return func() time.Time { return t0 }
}

// buildFixture writes a small store that exercises every keyspace and every
// value form: overwrites (hist), deletes (tombstones), a custom relation,
// weights, a compressed hist value and a compressed log record.
func buildFixture(t testing.TB, dir string) {
	t.Helper()
	s, err := lmdbstore.Init(dir, lmdbstore.Options{NoSync: true, Clock: fixtureClock(), MapSize: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	big := json.RawMessage(`{"text":"` + strings.Repeat("memory ", 200) + `"}`)
	steps := []func(tx *lmdbstore.WriteTxn) error{
		func(tx *lmdbstore.WriteTxn) error {
			if _, err := tx.AddRelation(lmdbstore.Relation{Name: "owns", DefaultWeight: 0.5, Bidirectional: true}); err != nil {
				return err
			}
			for _, k := range []string{"file:a.go", "file:b.go", "sym:a.F", "sym:b.G"} {
				if err := tx.PutNode(lmdbstore.NodePut{Key: k, Payload: json.RawMessage(`{"v":1}`)}); err != nil {
					return err
				}
			}
			return nil
		},
		func(tx *lmdbstore.WriteTxn) error {
			for _, e := range []lmdbstore.EdgePut{
				{Src: "file:a.go", Rel: "defines", Dst: "sym:a.F"},
				{Src: "file:b.go", Rel: "defines", Dst: "sym:b.G", Weight: 2.5},
				{Src: "sym:a.F", Rel: "calls", Dst: "sym:b.G", Payload: json.RawMessage(`{"line":3}`)},
				{Src: "file:a.go", Rel: "owns", Dst: "file:b.go"},
				{Src: "sym:b.G", Rel: "references", Dst: "missing:x"},
			} {
				if err := tx.PutEdge(e); err != nil {
					return err
				}
			}
			return tx.PutKV(lmdbstore.KVPut{Scope: "proj", Namespace: "decision", Key: "errors", Payload: json.RawMessage(`"wrap"`)})
		},
		func(tx *lmdbstore.WriteTxn) error {
			if err := tx.PutNode(lmdbstore.NodePut{Key: "file:a.go", Payload: big}); err != nil {
				return err
			}
			return tx.PutKV(lmdbstore.KVPut{Scope: "proj", Namespace: "decision", Key: "errors", Payload: big})
		},
		func(tx *lmdbstore.WriteTxn) error {
			if err := tx.PutNode(lmdbstore.NodePut{Key: "file:a.go", Payload: json.RawMessage(`{"v":3}`)}); err != nil {
				return err
			}
			if err := tx.PutEdge(lmdbstore.EdgePut{Src: "sym:a.F", Rel: "calls", Dst: "sym:b.G", Weight: 3}); err != nil {
				return err
			}
			return tx.PutKV(lmdbstore.KVPut{Scope: "proj", Namespace: "decision", Key: "errors", Payload: json.RawMessage(`"v3"`)})
		},
		func(tx *lmdbstore.WriteTxn) error {
			if err := tx.DeleteEdge("file:b.go", "defines", "sym:b.G"); err != nil {
				return err
			}
			if err := tx.DeleteNode("sym:b.G"); err != nil {
				return err
			}
			return tx.DeleteKV("proj", "decision", "errors")
		},
		func(tx *lmdbstore.WriteTxn) error {
			// Enough operations for a compressed log record.
			for i := range 120 {
				if err := tx.PutEdge(lmdbstore.EdgePut{Src: "hub:h", Rel: "references", Dst: fmt.Sprintf("leaf:%03d", i)}); err != nil {
					return err
				}
			}
			return nil
		},
	}
	for i, step := range steps {
		if _, err := s.Update(lmdbstore.WriteMeta{Scope: "proj", RunID: "run-1", TaskID: fmt.Sprint("task-", i)}, step); err != nil {
			t.Fatalf("fixture step %d: %v", i, err)
		}
	}
}

var (
	fixtureOnce sync.Once
	fixtureRoot string // removed by TestMain
	fixtureDir  string
)

// fixture returns the directory of a closed fixture store shared by the
// tests of this binary (read-only: copy it before writing).
func fixture(t testing.TB) string {
	t.Helper()
	fixtureOnce.Do(func() {
		dir, err := os.MkdirTemp("", "memctl-fuzz-fixture")
		if err != nil {
			t.Fatal(err)
		}
		fixtureRoot = dir
		fixtureDir = filepath.Join(dir, "db")
		buildFixture(t, fixtureDir)
	})
	return fixtureDir
}

// sortedKeys lists a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// noise is n bytes of seeded random base64 text: a payload zstd cannot
// shrink much (record bodies over 256 bytes are stored compressed, so a
// repeated letter would cost the store almost nothing).
func noise(n int) string {
	raw := make([]byte, n*3/4+3)
	rand.NewChaCha8([32]byte{'m', 'e', 'm', 'c', 't', 'l'}).Read(raw)
	return base64.RawStdEncoding.EncodeToString(raw)[:n]
}
