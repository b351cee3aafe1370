package lmdbstore

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Child processes: the test binary re-executes itself with LMDBSTORE_CHILD
// set (never open one environment twice in one process).
func TestMain(m *testing.M) {
	if mode := os.Getenv("LMDBSTORE_CHILD"); mode != "" {
		os.Exit(runChild(mode, os.Getenv("LMDBSTORE_DIR")))
	}
	os.Exit(m.Run())
}

const childWrites = 40

func runChild(mode, dir string) int {
	// A tiny initial map: the writers grow it under each other.
	s, err := Open(dir, Options{MapSize: 128 << 10})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	defer s.Close()
	id := os.Getenv("LMDBSTORE_ID")
	big := json.RawMessage(`"` + strings.Repeat("p", 1500) + `"`)
	switch mode {
	case "writer":
		for i := range childWrites {
			_, err := s.Update(WriteMeta{RunID: "w" + id}, func(tx *WriteTxn) error {
				if err := tx.PutEdge(EdgePut{Src: "w" + id, Rel: "calls", Dst: fmt.Sprint("d", i), Payload: big}); err != nil {
					return err
				}
				return tx.PutKV(KVPut{Scope: "s", Namespace: "w" + id, Key: strconv.Itoa(i), Payload: big})
			})
			if err != nil {
				fmt.Fprintln(os.Stderr, "update:", err)
				return 1
			}
			if err := s.View(func(r *ReadTxn) error { _, err := r.GetOut("w"+id, "", At{}); return err }); err != nil {
				fmt.Fprintln(os.Stderr, "view:", err)
				return 1
			}
		}
		return 0
	case "put-one":
		_, err := s.Update(WriteMeta{}, func(tx *WriteTxn) error {
			return tx.PutEdge(EdgePut{Src: "p", Rel: "calls", Dst: "d" + id})
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "update:", err)
			return 1
		}
		return 0
	case "hang-reader":
		s.View(func(r *ReadTxn) error {
			fmt.Println("ready")
			time.Sleep(time.Hour)
			return nil
		})
	case "hang-writer":
		s.Update(WriteMeta{}, func(tx *WriteTxn) error {
			if err := tx.PutEdge(EdgePut{Src: "killed", Rel: "calls", Dst: "x"}); err != nil {
				return err
			}
			fmt.Println("ready")
			time.Sleep(time.Hour)
			return nil
		})
	}
	return 1
}

func child(t *testing.T, mode, dir, id string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LMDBSTORE_CHILD="+mode, "LMDBSTORE_DIR="+dir, "LMDBSTORE_ID="+id)
	cmd.Stderr = os.Stderr
	return cmd
}

// killWhenReady starts a hanging child, waits for it to be inside its
// transaction, and kills it with SIGKILL.
func killWhenReady(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("child said %q, %v", line, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
}

// tinyMapStore creates a store whose map the child processes grow under
// each other (skipped with -short: the tests spawn processes).
func tinyMapStore(t *testing.T) (string, *Store) {
	t.Helper()
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	s, err := Init(dir, Options{MapSize: 128 << 10})
	if err != nil {
		t.Fatal(err)
	}
	return dir, s
}

// TestManyProcesses: a writer killed inside its transaction, a reader killed
// holding a slot, then several writer processes at once, all through map
// growth from a tiny map. Nothing is lost, the killed write is absent.
func TestManyProcesses(t *testing.T) {
	dir, s := tinyMapStore(t)
	s.Close()

	killWhenReady(t, child(t, "hang-writer", dir, "x"))
	killWhenReady(t, child(t, "hang-reader", dir, "y"))

	const writers = 4
	var cmds []*exec.Cmd
	for i := range writers {
		cmd := child(t, "writer", dir, strconv.Itoa(i))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer: %v", err)
		}
	}

	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustCheck(t, s)
	err = s.View(func(r *ReadTxn) error {
		if r.Revision() != writers*childWrites {
			t.Errorf("revision %d, want %d", r.Revision(), writers*childWrites)
		}
		for i := range writers {
			out, err := r.GetOut(fmt.Sprint("w", i), "calls", At{})
			if err != nil || len(out) != childWrites {
				t.Errorf("writer %d: %d edges, %v", i, len(out), err)
			}
			kvs, err := r.ListKV("s", fmt.Sprint("w", i), At{})
			if err != nil || len(kvs) != childWrites {
				t.Errorf("writer %d: %d kv entries, %v", i, len(kvs), err)
			}
		}
		_, err := r.KeyOf(IDOf("killed"))
		wantErr(t, err, ErrNotFound)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := s.Stats()
	if st.MapSize <= 128<<10 {
		t.Errorf("map never grew: %d", st.MapSize)
	}
}

// TestParkedSnapshotSeesOtherProcesses: a read transaction parked live (its
// timer held off) is refreshed when another process commits — a single
// write, then writers that grow the map under it (MDB_MAP_RESIZED) — and
// every View after a commit sees it.
func TestParkedSnapshotSeesOtherProcesses(t *testing.T) {
	dir, s := tinyMapStore(t)
	defer s.Close()
	s.readers.liveFor = time.Hour
	outOf := func(src string) int {
		t.Helper()
		out, err := viewGetOut(s, src)
		if err != nil {
			t.Fatal(err)
		}
		return len(out)
	}
	// Scan first (the refresh in the scan's cgo call) and another read
	// first (live).
	scanFirst := func(src string) int {
		t.Helper()
		n := 0
		err := s.View(func(r *ReadTxn) error {
			return r.ScanOut(IDOf(src), 0, At{}, func(EdgeRef) bool { n++; return true })
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	putEdge(t, s, "p", "calls", "d-parent")
	for i := range 3 {
		if got := scanFirst("p"); got != i+1 {
			t.Fatalf("before child %d: %d edges, want %d", i, got, i+1)
		}
		if err := child(t, "put-one", dir, strconv.Itoa(i)).Run(); err != nil {
			t.Fatalf("child %d: %v", i, err)
		}
		if got := []int{scanFirst("p"), outOf("p")}; got[0] != i+2 || got[1] != i+2 {
			t.Fatalf("after child %d: %v edges (scan first, key first), want %d", i, got, i+2)
		}
	}
	if got := scanFirst("w0"); got != 0 {
		t.Fatalf("w0 before the writer: %d edges", got)
	}
	if err := child(t, "writer", dir, "0").Run(); err != nil {
		t.Fatalf("writer: %v", err)
	}
	if got := []int{scanFirst("w0"), outOf("w0")}; got[0] != childWrites || got[1] != childWrites {
		t.Fatalf("after the writer: %v edges, want %d", got, childWrites)
	}
	mustCheck(t, s)
}
