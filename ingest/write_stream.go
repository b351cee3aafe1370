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
}

// streamBatch is what one merge adds: nodes, then edges (weights as
// Graph.AddEdge gives them).
type streamBatch struct {
	nodes []Node
	edges []Edge
}

// NewGoStream starts a bulk load into s for ExtractGo to feed (the
// relations s lacks registered in its revision, first). It is for a
// store with no node and no edge (StoreEmpty): into any other, the load
// would only add, never delete what the tree no longer has.
func NewGoStream(s *lmdbstore.Store, meta lmdbstore.WriteMeta, progress func(Progress)) (*GoStream, error) {
	meta.Derived = true // code structure, not free text: no secret scan (SPEC §2)
	b := s.NewBulk(meta)
	b.DropDangling()
	rels, err := bulkRelations(s, b)
	if err != nil {
		return nil, err
	}
	w := &GoStream{b: b, rels: rels, fed: make(chan struct{}), progress: progress}
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
		w.progress(Progress{Phase: "writing"})
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

// StoreEmpty reports whether s holds no node and no edge: a first ingest,
// which a GoStream may write.
func StoreEmpty(s *lmdbstore.Store) (bool, error) { return storeEmpty(s) }
