package ops

// A bulk batch read from JSON Lines (SPEC.md §6.4, batch --bulk) and
// streamed into one lmdbstore.Bulk: the input is read in chunks of whole
// lines, each chunk parsed and checked on a worker (every core), its keys
// prepared there against the keys the load held a chunk or so earlier
// (lmdbstore.KeyView: a reference; a node key it lacks redacted), and its ops
// added to the load in input order as the chunks come back. Only the
// load holds an operation (it keeps copies of the strings it keeps, and
// decoded payloads are copies), so a chunk and its CheckedOps are dropped
// once added. Errors keep the precedence of ParseBatch then a check of
// every op then the load: a read error, then the first bad line, then the first op a bulk load does not
// take, then the first op the load refuses; nothing is written unless
// every line is good.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/memctl/memctl/lmdbstore"
)

// bulkChunkBytes is about how much input one chunk holds (it ends at a
// line end).
const bulkChunkBytes = 1 << 20

// NotBulkableError is an op a bulk load does not take: op Index (0-based
// among the ops), Op its name.
type NotBulkableError struct {
	Index int
	Op    string
}

func (e *NotBulkableError) Error() string {
	return fmt.Sprintf("op %d: a bulk load takes only put_node and put_edge, not %s", e.Index+1, e.Op)
}

// lineChunk is whole lines of input and, once parsed, their ops.
type lineChunk struct {
	text string
	chunkOps
	nlines int
	err    error // the chunk's first bad line (a *LineError, line within the chunk)
	done   chan struct{}
}

// chunkOps are a chunk's ops; the slices of a chunk added to the load
// are reused for a later chunk (a chunk's ops take about 500 bytes each,
// more than its text: allocating them anew set the collector's pace).
type chunkOps struct {
	ops   []CheckedOp
	keys  [][2]lmdbstore.PreparedKey // per op: its key (put_node) or src and dst (put_edge), prepared
	lines []int                      // per op: its line, counted from 1 within the chunk
}

// parse parses c's lines with p into bufs (emptied), then prepares the
// keys of its put_node and put_edge ops against view (looked up, or
// redacted: the work the load would do on its own goroutine).
func (c *lineChunk) parse(p *lineParser, view *lmdbstore.KeyView, bufs chunkOps) {
	defer close(c.done)
	c.chunkOps = bufs
	c.parseLines(p)
	if c.err != nil {
		return
	}
	c.keys = slices.Grow(c.keys[:0], len(c.ops))[:len(c.ops)]
	// A node's key is usually new: redacted here when the view lacks it
	// (once per chunk). An edge's endpoints are usually known by the time
	// it is added: one the view lacks is left to the load, which redacts
	// it only if it is new then (redacting every endpoint of the chunks
	// parsed ahead of their nodes cost more than it saved).
	var unknown map[string]lmdbstore.PreparedKey
	redacted := func(key string) lmdbstore.PreparedKey {
		if k, ok := unknown[key]; ok {
			return k
		}
		k := view.Prepare(key)
		if !k.Found() {
			if unknown == nil {
				unknown = map[string]lmdbstore.PreparedKey{}
			}
			unknown[key] = k
		}
		return k
	}
	var lastSrc string // edges often come by source
	var lastSrcKey lmdbstore.PreparedKey
	for i := range c.ops {
		switch op := &c.ops[i]; op.Op {
		case "put_node":
			c.keys[i][0] = redacted(op.Key)
		case "put_edge":
			if op.Src != lastSrc || op.Src == "" {
				lastSrc, lastSrcKey = op.Src, view.Find(op.Src)
			}
			c.keys[i] = [2]lmdbstore.PreparedKey{lastSrcKey, view.Find(op.Dst)}
		}
	}
}

// parseLines parses c's lines with p.
func (c *lineChunk) parseLines(p *lineParser) {
	text := c.text
	n := strings.Count(text, "\n") + 1
	c.ops, c.lines = slices.Grow(c.ops[:0], n), slices.Grow(c.lines[:0], n)
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i+1], text[i+1:]
		} else {
			text = ""
		}
		c.nlines++
		c.ops = c.ops[:len(c.ops)+1] // parsed in place (a good line sets every field)
		blank, err := p.parseText(line, &c.ops[len(c.ops)-1])
		if err != nil {
			c.err = &LineError{c.nlines, err}
			return
		}
		if blank {
			c.ops = c.ops[:len(c.ops)-1]
		} else {
			c.lines = append(c.lines, c.nlines)
		}
	}
}

// BulkBatch reads JSON Lines batch input from in and commits its
// put_node and put_edge operations as one bulk load (lmdbstore.Bulk): the
// store Batch would give the same ops (see the file comment for how it
// streams). lines[i] is the 1-based input line of op i. Errors: a read
// error; a *LineError; a *NotBulkableError; a *BatchError naming the op.
func BulkBatch(s *lmdbstore.Store, meta lmdbstore.WriteMeta, in io.Reader) (c lmdbstore.Commit, lines []int, err error) {
	rest := inputSize(in) // bytes not yet added, when known (before the reader starts)
	workers := max(1, runtime.GOMAXPROCS(0))
	order := make(chan *lineChunk, 2*workers) // chunks in input order, bounded
	work := make(chan *lineChunk, 2*workers)
	stop := make(chan struct{})
	var stopOnce sync.Once
	quit := func() { stopOnce.Do(func() { close(stop) }) }
	defer quit()
	var readErr error // set before order is closed
	go func() {
		defer close(order)
		defer close(work)
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			var b strings.Builder
			b.Grow(bulkChunkBytes + 4096)
			_, err := io.CopyN(&b, r, bulkChunkBytes)
			if err == nil {
				var rest string
				rest, err = r.ReadString('\n')
				b.WriteString(rest)
			}
			if err != nil && !errors.Is(err, io.EOF) {
				readErr = fmt.Errorf("batch: reading input: %w", err)
				return
			}
			if b.Len() > 0 {
				ch := &lineChunk{text: b.String(), done: make(chan struct{})}
				select {
				case order <- ch:
				case <-stop:
					return
				}
				work <- ch // never blocks for long: a worker takes every chunk order took
			}
			if err != nil {
				return
			}
		}
	}()
	// The keys the load holds, as of the last chunk added: workers prepare
	// each chunk's keys against it.
	b := s.NewBulk(meta)
	var view atomic.Pointer[lmdbstore.KeyView]
	view.Store(b.KeyView())
	free := make(chan chunkOps, workers) // the ops of chunks added, for reuse
	for range workers {
		go func() {
			p := lineParser{dropWeight: true} // ops are consumed at once: op.weight is enough
			for ch := range work {
				var bufs chunkOps
				select {
				case bufs = <-free:
				default:
				}
				ch.parse(&p, view.Load(), bufs)
			}
		}()
	}

	var (
		base      int   // lines before the current chunk
		lineErr   error // the first bad line
		refused   error // the first op not taken or refused
		loadFails bool  // refused is set: stop adding
		isEdge    []bool
	)
	for ch := range order {
		<-ch.done
		if lineErr != nil {
			continue // draining: the producer stops at stop
		}
		if ch.err != nil {
			le := ch.err.(*LineError)
			lineErr = &LineError{base + le.Line, le.Err}
			quit() // read no more
			continue
		}
		if rest > 0 {
			// Room for the edges the rest of the input holds at this
			// chunk's rate, with an eighth to spare (appends would copy
			// the load's edges about twice over; nodes, which are
			// larger and often come first, are left to grow).
			edges := 0
			for i := range ch.ops {
				if ch.ops[i].Op == "put_edge" {
					edges++
				}
			}
			more := int(int64(edges) * rest / int64(len(ch.text)))
			more += more / 8
			lines, isEdge = slices.Grow(lines, more), slices.Grow(isEdge, more)
			rest -= int64(len(ch.text))
		}
		for i := range ch.ops {
			op := &ch.ops[i]
			idx := len(lines)
			lines = append(lines, base+ch.lines[i])
			isEdge = append(isEdge, op.Op == "put_edge")
			if loadFails {
				var nb *NotBulkableError
				if !op.Bulkable() && !errors.As(refused, &nb) {
					refused = &NotBulkableError{Index: idx, Op: op.Op} // outranks the load's refusals
				}
				continue
			}
			if !op.Bulkable() {
				refused, loadFails = &NotBulkableError{Index: idx, Op: op.Op}, true
				continue
			}
			if err := bulkAdd(b, op, ch.keys[i]); err != nil {
				refused, loadFails = &BatchError{Index: idx, Op: op.Op, Err: err}, true
			}
		}
		base += ch.nlines
		view.Store(b.KeyView())
		select {
		case free <- ch.chunkOps: // the load holds nothing of them
		default:
		}
		ch.chunkOps = chunkOps{}
	}
	switch {
	case readErr != nil:
		return c, nil, readErr
	case lineErr != nil:
		return c, nil, lineErr
	case refused != nil:
		return c, lines, refused
	}
	c, err = b.Commit()
	var opErr *lmdbstore.BulkOpError
	if errors.As(err, &opErr) {
		// Operation positions are the ops' (every op was added).
		name := "put_node"
		if opErr.Op < len(isEdge) && isEdge[opErr.Op] {
			name = "put_edge"
		}
		return c, lines, &BatchError{Index: opErr.Op, Op: name, Err: opErr.Err}
	}
	return c, lines, err
}

// inputSize is what is left to read of in when it is a regular file
// (standard input redirected from one), else -1.
func inputSize(in io.Reader) int64 {
	f, ok := in.(*os.File)
	if !ok {
		return -1
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return -1
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return -1
	}
	return st.Size() - off
}

// bulkAdd adds one checked put_node or put_edge to b, with its keys
// prepared.
func bulkAdd(b *lmdbstore.Bulk, op *CheckedOp, keys [2]lmdbstore.PreparedKey) error {
	if op.Op == "put_node" {
		return b.PutNodePrepared(lmdbstore.NodePut{Key: op.Key, Type: op.Type, Payload: op.Payload, Valid: op.valid, Scope: op.Scope, RunID: op.RunID, TaskID: op.TaskID}, keys[0])
	}
	return b.PutEdgePrepared(op.edgePut(), keys[0], keys[1])
}
