package ingest

import (
	"errors"
	"sync"
	"time"

	"github.com/memctl/memctl/lmdbstore"
)

// A first `ingest go` (into a store with no node and no edge) streams: the
// extractor hands every package's nodes and edges, as it merges them, to a
// bulk load fed on a goroutine of its own, and keeps only the node keys
// (what finish reads); the load holds the one copy of the graph until it
// commits. The edges finish would have dropped (to symbols outside the
// tree) are dropped by the load at commit (lmdbstore.Bulk.DropDangling),
// so the store is the one WriteGo writes from the extracted graph (same
// logical state; the log holds the same operations, in extraction order:
// SPEC §9.5).

// GoStream is a bulk load fed while a Go tree is extracted
// (GoOptions.Stream). Commit writes it as one revision; Abort drops it.
type GoStream struct {
	b    *lmdbstore.Bulk
	rels map[string]lmdbstore.Relation
	// queue holds the batches sent and not yet fed, in order; closed: no
	// more will come. A merge never waits for the load: the type-checked
	// packages of a module are merged together once it is checked, and the
	// load is fed while the next module is listed and checked.
	mu       sync.Mutex
	ready    *sync.Cond
	queue    []streamBatch
	closed   bool
	fed      chan struct{} // closed when the feeding goroutine is done
	err      error         // its first error, read once fed is closed
	progress func(Progress)
	dir      string // the store's: the extraction parks sent symbols there (sentpark.go)
	parked   int    // how many it parked
}

// streamBatch is what one merge adds: nodes, then edges (weights as
// Graph.AddEdge gives them).
type streamBatch struct {
	nodes []Node
	edges []Edge
}

// NewGoStream starts a bulk load into s for ExtractGo to feed (the
// relations s lacks registered in its revision, first). It is for a
// store with no node and no edge (storeEmpty): into any other, the load
// would only add, never delete what the tree no longer has.
func NewGoStream(s *lmdbstore.Store, meta lmdbstore.WriteMeta, progress func(Progress)) (*GoStream, error) {
	meta.Derived = true // code structure, not free text: no secret scan (SPEC §2)
	b := s.NewBulk(meta)
	b.DropDangling()
	b.RequireEmpty() // another writer may write before the commit: IngestGo
	rels, err := bulkRelations(s, b)
	if err != nil {
		return nil, err
	}
	w := &GoStream{b: b, rels: rels, dir: s.Path(), fed: make(chan struct{}), progress: progress}
	w.ready = sync.NewCond(&w.mu)
	go w.feed()
	return w, nil
}

// feed adds every batch to the load, in order, until the queue is closed
// and empty; after an error it only empties the queue.
func (w *GoStream) feed() {
	defer close(w.fed)
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && !w.closed {
			w.ready.Wait()
		}
		if len(w.queue) == 0 {
			w.mu.Unlock()
			return
		}
		batch := w.queue[0]
		w.queue[0] = streamBatch{}
		w.queue = w.queue[1:]
		w.mu.Unlock()
		if w.err != nil {
			continue
		}
		for _, n := range batch.nodes {
			if w.err = w.b.PutNode(lmdbstore.NodePut{Key: n.Key, Type: n.Type, Payload: n.Payload}); w.err != nil {
				break
			}
		}
		for _, e := range batch.edges {
			if w.err != nil {
				break
			}
			w.err = putBulkEdge(w.b, w.rels, e)
		}
	}
}

// send queues nodes and edges for the load; the stream owns them then.
func (w *GoStream) send(nodes []Node, edges []Edge) {
	if len(nodes) == 0 && len(edges) == 0 {
		return
	}
	w.mu.Lock()
	w.queue = append(w.queue, streamBatch{nodes: nodes, edges: edges})
	w.mu.Unlock()
	w.ready.Signal()
}

// wait ends the feeding and returns its error.
func (w *GoStream) wait() error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.ready.Signal()
	<-w.fed
	return w.err
}

// errStreamDone: a stream is committed or aborted once.
var errStreamDone = errors.New("ingest: Go stream already committed")

// Commit writes what was fed as one revision and says what it wrote:
// NodesPut and EdgesPut are the nodes and edges stored (the dangling
// edges left out); Created is not filled (every node is new).
func (w *GoStream) Commit() (WriteStats, error) {
	if w.b == nil {
		return WriteStats{}, errStreamDone
	}
	defer func() { w.b = nil }()
	if err := w.wait(); err != nil {
		return WriteStats{}, err
	}
	if w.progress != nil {
		w.progress(Progress{Phase: PhaseWriting})
	}
	t0 := time.Now()
	c, err := w.b.Commit()
	if err != nil {
		return WriteStats{}, err
	}
	debugf("write: streamed bulk load committed in %v: %d nodes, %d edges, %d dangling dropped (appended %v)",
		time.Since(t0), w.b.Changed.Nodes, w.b.Changed.Edges, w.b.Dropped, w.b.Appended)
	return WriteStats{Commit: c, NodesPut: w.b.Changed.Nodes, EdgesPut: w.b.Changed.Edges}, nil
}

// Abort drops what was fed; nothing is written.
func (w *GoStream) Abort() {
	if w.b != nil {
		_ = w.wait()
		w.b = nil
	}
}

// ExtractError is an error of the extraction (ExtractGo: the tree, the go
// command), not of the store.
type ExtractError struct{ Err error }

func (e *ExtractError) Error() string { return e.Err.Error() }
func (e *ExtractError) Unwrap() error { return e.Err }

// GoIngest is what IngestGo did: the extraction's result (its Graph
// released), the write's statistics, the graph's node and edge counts, and
// whether the graph was streamed into a bulk load.
type GoIngest struct {
	Result       *GoResult
	Stats        WriteStats
	Nodes, Edges int
	Streamed     bool
}

// IngestGo extracts the Go tree under root and writes its graph into s as
// one revision: streamed into a bulk load (NewGoStream) when s holds no
// node and no edge, else through WriteGo. When another writer made s
// non-empty before the streamed load committed (lmdbstore.ErrNotEmpty),
// the load is dropped and the tree extracted again and written through
// WriteGo, which reads what it replaces and shares (SPEC §9.5).
func IngestGo(s *lmdbstore.Store, root string, opts GoOptions, meta lmdbstore.WriteMeta, progress func(Progress)) (GoIngest, error) {
	empty, err := storeEmpty(s)
	if err != nil {
		return GoIngest{}, err
	}
	if empty && opts.Cache == nil {
		out, err := ingestStreamed(s, root, opts, meta, progress)
		if !errors.Is(err, lmdbstore.ErrNotEmpty) {
			return out, err
		}
		debugf("ingest go: the store was written to during the streamed ingest; extracting again for the ordinary write")
	}
	res, err := ExtractGo(root, opts)
	if err != nil {
		return GoIngest{}, &ExtractError{Err: err}
	}
	out := GoIngest{Result: res}
	if res.Unchanged {
		return out, nil
	}
	// The write is the graph's last use: with no reference left here, the
	// collector may free it while the store commits.
	g := res.Graph
	res.Graph = nil
	out.Nodes, out.Edges = g.NumNodes(), g.NumEdges()
	out.Stats, err = WriteGo(s, g, meta, progress)
	return out, err
}

// ingestStreamed is IngestGo into a store that was empty when it began.
func ingestStreamed(s *lmdbstore.Store, root string, opts GoOptions, meta lmdbstore.WriteMeta, progress func(Progress)) (GoIngest, error) {
	w, err := NewGoStream(s, meta, progress)
	if err != nil {
		return GoIngest{}, err
	}
	defer w.Abort() // nothing written unless committed
	opts.Stream = w
	res, err := ExtractGo(root, opts)
	if err != nil {
		return GoIngest{}, &ExtractError{Err: err}
	}
	out := GoIngest{Result: res, Streamed: true}
	if res.Unchanged {
		return out, nil
	}
	if out.Stats, err = w.Commit(); err != nil {
		return GoIngest{}, err
	}
	out.Nodes, out.Edges = out.Stats.NodesPut, out.Stats.EdgesPut
	return out, nil
}
