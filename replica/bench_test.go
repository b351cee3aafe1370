package replica_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/replica"
	"github.com/memctl/memctl/replica/natstest"
)

// benchServer is a server with the default 1 MiB max payload.
func benchServer(b *testing.B) *natstest.Server {
	return natstest.StartPayload(b, b.TempDir(), 0)
}

func benchRemote(b *testing.B, srv *natstest.Server, stream string) *replica.Remote {
	b.Helper()
	a, err := replica.ParseAddress(srv.URL(stream))
	if err != nil {
		b.Fatal(err)
	}
	r, err := replica.Dial(a, replica.Credentials{}, replica.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(r.Close)
	if err := r.Create(1); err != nil {
		b.Fatal(err)
	}
	return r
}

// benchStore inits a store (bound at 0 when r is non-nil).
func benchStore(b *testing.B, dir string, r *replica.Remote) *lmdbstore.Store {
	b.Helper()
	opts := lmdbstore.Options{NoSync: true}
	if r != nil {
		opts.Replicator = r
	}
	s, err := lmdbstore.Init(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if r != nil {
		if err := s.Bind(0, 0); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

func putOne(b *testing.B, s *lmdbstore.Store, i int) {
	if _, err := s.Update(lmdbstore.WriteMeta{}, func(tx *lmdbstore.WriteTxn) error {
		if err := tx.PutNode(lmdbstore.NodePut{Key: "decision:d" + strconv.Itoa(i), Payload: []byte(`{"rule":"wrap errors with %w"}`)}); err != nil {
			return err
		}
		return tx.PutEdge(lmdbstore.EdgePut{Src: "decision:d" + strconv.Itoa(i), Rel: "constrains", Dst: "file:f" + strconv.Itoa(i%100) + ".go"})
	}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWrite: one write transaction (a node and an edge) on a local
// store and on a bound one (publish to an in-process server on 127.0.0.1,
// ack, commit). NoSync on both: the difference is the round trip.
func BenchmarkWrite(b *testing.B) {
	for _, mode := range []string{"local", "replicated"} {
		b.Run(mode, func(b *testing.B) {
			var r *replica.Remote
			if mode == "replicated" {
				r = benchRemote(b, benchServer(b), "w")
			}
			s := benchStore(b, filepath.Join(b.TempDir(), "s"), r)
			b.ResetTimer()
			for i := range b.N {
				putOne(b, s, i)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "revs/s")
		})
	}
}

// BenchmarkCatchUp: a new replica applies 2,000 revisions from the stream.
func BenchmarkCatchUp(b *testing.B) {
	const revs = 2000
	srv := benchServer(b)
	r := benchRemote(b, srv, "c")
	w := benchStore(b, filepath.Join(b.TempDir(), "w"), r)
	for i := range revs {
		putOne(b, w, i)
	}
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		s := benchStore(b, filepath.Join(b.TempDir(), fmt.Sprint("r", i)), r)
		b.StartTimer()
		n, err := r.Sync(s)
		if err != nil || n != revs {
			b.Fatalf("applied %d: %v", n, err)
		}
	}
	b.ReportMetric(float64(revs*b.N)/b.Elapsed().Seconds(), "revs/s")
}

// BenchmarkBootstrap: a new machine from the object-store snapshot
// against a replay of the whole stream, on a memory of BENCH_EDGES edges
// (default 100,000; one bulk revision, as an import or first ingest
// writes) plus 200 small revisions after it.
func BenchmarkBootstrap(b *testing.B) {
	edges := 100_000
	if v, err := strconv.Atoi(os.Getenv("BENCH_EDGES")); err == nil && v > 0 {
		edges = v
	}
	srv := benchServer(b)
	r := benchRemote(b, srv, "boot")
	w := benchStore(b, filepath.Join(b.TempDir(), "w"), r)
	bulk := w.NewBulk(lmdbstore.WriteMeta{RunID: "ingest"})
	nodes := edges / 8
	for i := range nodes {
		if err := bulk.PutNode(lmdbstore.NodePut{Key: "sym:p.F" + strconv.Itoa(i), Payload: []byte(`{"line":` + strconv.Itoa(i) + `}`)}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range edges {
		if err := bulk.PutEdge(lmdbstore.EdgePut{Src: "sym:p.F" + strconv.Itoa(i%nodes), Rel: "calls", Dst: "sym:p.F" + strconv.Itoa((i*7919+13)%nodes)}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := bulk.Commit(); err != nil {
		b.Fatal(err)
	}
	if _, err := r.PublishSnapshot(w, b.TempDir()); err != nil {
		b.Fatal(err)
	}
	for i := range 200 {
		putOne(b, w, i)
	}
	b.Run("snapshot", func(b *testing.B) {
		for i := range b.N {
			s, info, err := r.Clone(filepath.Join(b.TempDir(), fmt.Sprint("c", i)), lmdbstore.Options{NoSync: true})
			if err != nil || info.Rev != 1 {
				b.Fatalf("clone: %+v %v", info, err)
			}
			s.Close()
		}
	})
	b.Run("replay", func(b *testing.B) {
		for i := range b.N {
			s := benchStore(b, filepath.Join(b.TempDir(), fmt.Sprint("r", i)), r)
			if n, err := r.Sync(s); err != nil || n != 201 {
				b.Fatalf("replay: %d %v", n, err)
			}
		}
	})
}
