package contextpack

import (
	"os"
	"path"
	"strings"
	"testing"

	"github.com/memctl/memctl/lmdbstore"
)

// benchEnv is the store (MEMCTL_CONTEXT_BENCH_DB; skipped without) and
// target (MEMCTL_CONTEXT_BENCH_TARGET, default net/http/server.go) of the
// context benchmarks.
func benchEnv(b *testing.B) (db, target string) {
	db = os.Getenv("MEMCTL_CONTEXT_BENCH_DB")
	if db == "" {
		b.Skip("MEMCTL_CONTEXT_BENCH_DB not set")
	}
	target = os.Getenv("MEMCTL_CONTEXT_BENCH_TARGET")
	if target == "" {
		target = "net/http/server.go"
	}
	return db, target
}

// benchStore opens benchEnv's store read-only until b ends.
func benchStore(b *testing.B) (*lmdbstore.Store, string) {
	db, target := benchEnv(b)
	s, err := lmdbstore.Open(db, lmdbstore.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s, target
}

// BenchmarkAssembleStore runs Assemble from a long-lived Assembler on the
// store MEMCTL_CONTEXT_BENCH_DB names (e.g. the Go standard library
// ingested with `memctl ingest go $(go env GOROOT)/src`), for the target
// MEMCTL_CONTEXT_BENCH_TARGET (default net/http/server.go). The engine
// snapshot is built (or found current) before the timer starts.
func BenchmarkAssembleStore(b *testing.B) {
	s, target := benchStore(b)
	a := New(s, Options{})
	defer a.Close()
	req := Request{Targets: []string{target}}
	if _, err := a.Assemble(req); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := a.Assemble(req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAssembleStoreFresh is BenchmarkAssembleStore with everything
// opened anew per call (store, Assembler, snapshot mapping): the work of a
// one-shot `memctl context` process, minus the process start.
func BenchmarkAssembleStoreFresh(b *testing.B) {
	db, target := benchEnv(b)
	req := Request{Targets: []string{target}}
	for b.Loop() {
		s, err := lmdbstore.Open(db, lmdbstore.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		a := New(s, Options{})
		if _, err := a.Assemble(req); err != nil {
			b.Fatal(err)
		}
		a.Close()
		s.Close()
	}
}

// BenchmarkGetOutBaseline is the baseline of BenchmarkAssembleStore in the
// same run: one read transaction listing the target file's out-edges with
// their keys (what `memctl get-out` does), on the same store.
func BenchmarkGetOutBaseline(b *testing.B) {
	s, target := benchStore(b)
	for b.Loop() {
		err := s.View(func(r *lmdbstore.ReadTxn) error {
			_, err := r.GetOut("file:"+target, "", lmdbstore.At{})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAssembleStoreDistinct is BenchmarkAssembleStore over a new
// target each call: the files of the target's directory in turn (a fresh
// Assembler per pass over them, so no call finds its walk ranked before),
// the cost of a long-lived server asked about files it has not seen.
func BenchmarkAssembleStoreDistinct(b *testing.B) {
	s, target := benchStore(b)
	var files []string
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		es, err := r.GetOut("dir:"+path.Dir(target), "contains", lmdbstore.At{})
		if err != nil {
			return err
		}
		for _, e := range es {
			k, err := r.KeyOf(e.Dst)
			if err != nil {
				return err
			}
			if p, ok := strings.CutPrefix(k, "file:"); ok {
				files = append(files, p)
			}
		}
		return nil
	})
	if err != nil || len(files) == 0 {
		b.Fatalf("files of %s: %v (%d)", path.Dir(target), err, len(files))
	}
	a := New(s, Options{})
	if _, err := a.Assemble(Request{Targets: []string{target}}); err != nil { // the snapshot built or mapped
		b.Fatal(err)
	}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if i == len(files) {
			b.StopTimer()
			a.Close()
			a = New(s, Options{})
			if _, err := a.Assemble(Request{Targets: []string{target}}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			i = 0
		}
		if _, err := a.Assemble(Request{Targets: []string{files[i]}}); err != nil {
			b.Fatal(err)
		}
		i++
	}
	a.Close()
}
