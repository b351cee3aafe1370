package replica

// Remote is a connection to one stream: it publishes a bound store's
// revisions (lmdbstore.Replicator) and applies the ones others published.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"

	"github.com/memctl/memctl/lmdbstore"
)

// Options tune a Remote; the zero value is the default.
type Options struct {
	// Timeout bounds each request to the server (0: 5 s).
	Timeout time.Duration
	// MaxData caps the data bytes of one message (0: the server's max
	// payload less room for headers). Tests lower it to exercise batches.
	MaxData int
	// ApplyBatch is how many revisions one local transaction applies while
	// catching up (0: 256).
	ApplyBatch int
	// Reconnect keeps reconnecting after the connection drops (a
	// long-lived process: memctl mcp). Publishes are never buffered while
	// disconnected: a write then fails at once, with nothing sent later.
	Reconnect bool
}

// Remote is a bound stream. It is safe for concurrent use.
type Remote struct {
	addr Address
	nc   *nats.Conn
	js   jetstream.JetStream
	opts Options

	mu     sync.Mutex
	stream jetstream.Stream // nil until Open succeeds (stream opens it on demand)
}

// headerRoom is what a message's headers may take beside its data.
const headerRoom = 4 << 10

// Dial connects to addr's server and opens its stream (it must exist:
// Create makes it). Failures wrap lmdbstore.ErrRemote.
func Dial(addr Address, creds Credentials, opts Options) (*Remote, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.ApplyBatch <= 0 {
		opts.ApplyBatch = 256
	}
	copts, err := creds.options()
	if err != nil {
		return nil, err
	}
	copts = append(copts, nats.Name("memctl"), nats.Timeout(opts.Timeout), nats.ReconnectBufSize(-1))
	if opts.Reconnect {
		// A server down when the process starts is one it waits for.
		copts = append(copts, nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond), nats.RetryOnFailedConnect(true))
	} else {
		copts = append(copts, nats.NoReconnect())
	}
	nc, err := nats.Connect(addr.ServerURL(), copts...)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot reach %s: %v", lmdbstore.ErrRemote, addr, err)
	}
	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(opts.Timeout))
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("%w: %s: %v", lmdbstore.ErrRemote, addr, err)
	}
	if opts.MaxData <= 0 {
		opts.MaxData = max(int(nc.MaxPayload())-headerRoom, 1<<10)
	}
	return &Remote{addr: addr, nc: nc, js: js, opts: opts}, nil
}

// Close closes the connection.
func (r *Remote) Close() { r.nc.Close() }

// Address is the remote's address.
func (r *Remote) Address() Address { return r.addr }

func (r *Remote) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), r.opts.Timeout)
}

// remoteErr wraps a failed request as ErrRemote (or passes ErrRemote,
// ErrDiverged and ErrBehind through).
func (r *Remote) remoteErr(what string, err error) error {
	if errors.Is(err, lmdbstore.ErrRemote) || errors.Is(err, lmdbstore.ErrDiverged) || errors.Is(err, lmdbstore.ErrBehind) {
		return err
	}
	return fmt.Errorf("%w: %s %s: %v", lmdbstore.ErrRemote, what, r.addr, err)
}

// Open opens the stream (ErrRemote naming it if it does not exist).
func (r *Remote) Open() error {
	ctx, cancel := r.ctx()
	defer cancel()
	st, err := r.js.Stream(ctx, r.addr.Stream)
	if err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("%w: %s: no stream %q (memctl remote add creates it)", lmdbstore.ErrRemote, r.addr, r.addr.Stream)
		}
		return r.remoteErr("opening stream", err)
	}
	r.mu.Lock()
	r.stream = st
	r.mu.Unlock()
	return nil
}

// openStream is the stream, opened now if Open has not succeeded yet.
func (r *Remote) openStream() (jetstream.Stream, error) {
	r.mu.Lock()
	st := r.stream
	r.mu.Unlock()
	if st != nil {
		return st, nil
	}
	if err := r.Open(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stream, nil
}

// Create opens the stream, creating it with replicas copies when it does
// not exist.
func (r *Remote) Create(replicas int) error {
	if err := r.Open(); err == nil || !errors.Is(err, lmdbstore.ErrRemote) {
		return err
	}
	ctx, cancel := r.ctx()
	defer cancel()
	st, err := r.js.CreateStream(ctx, jetstream.StreamConfig{
		Name:     r.addr.Stream,
		Subjects: []string{Subject(r.addr.Stream)},
		Storage:  jetstream.FileStorage,
		Replicas: max(replicas, 1),
		// History is the memory: nothing may remove a revision.
		DenyDelete:         true,
		DenyPurge:          true,
		AllowDirect:        true,
		AllowAtomicPublish: true,
		Description:        "memctl replicated log (SPEC.md §13)",
	})
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return r.remoteErr("creating stream", err)
	}
	if err != nil {
		return r.Open()
	}
	r.mu.Lock()
	r.stream = st
	r.mu.Unlock()
	return nil
}

// LastSeq is the stream's last sequence.
func (r *Remote) LastSeq() (uint64, error) {
	st, err := r.openStream()
	if err != nil {
		return 0, err
	}
	ctx, cancel := r.ctx()
	defer cancel()
	info, err := st.Info(ctx)
	if err != nil {
		return 0, r.remoteErr("reading stream", err)
	}
	return info.State.LastSeq, nil
}

// LastRev is the revision the stream's last message belongs to (0 for an
// empty stream).
func (r *Remote) LastRev(last uint64) (lmdbstore.Revision, error) {
	if last == 0 {
		return 0, nil
	}
	st, err := r.openStream()
	if err != nil {
		return 0, err
	}
	ctx, cancel := r.ctx()
	defer cancel()
	m, err := st.GetMsg(ctx, last)
	if err != nil {
		return 0, r.remoteErr("reading stream", err)
	}
	p, err := decodePart(m)
	if err != nil {
		return 0, err
	}
	return p.rev, nil
}

// Publish implements lmdbstore.Replicator: the revision is stored by the
// stream only if the stream's last sequence is still p.Pos.
func (r *Remote) Publish(p lmdbstore.Pending) (uint64, error) {
	msgs := encode(Subject(r.addr.Stream), p.Rev, p.Record, r.opts.MaxData)
	ctx, cancel := r.ctx()
	defer cancel()
	var seq uint64
	var err error
	if len(msgs) == 1 {
		var ack *jetstream.PubAck
		ack, err = r.js.PublishMsg(ctx, msgs[0], jetstream.WithExpectLastSequence(p.Pos), jetstream.WithExpectStream(r.addr.Stream))
		if err == nil {
			seq = ack.Sequence
		}
	} else {
		msgs[0].Header.Set(jetstream.ExpectedLastSeqHeader, strconv.FormatUint(p.Pos, 10))
		var ack *jetstreamext.BatchAck
		ack, err = jetstreamext.PublishMsgBatch(ctx, r.js, msgs)
		if err == nil {
			seq = ack.Sequence
		}
	}
	if err == nil {
		if seq != p.Pos+uint64(len(msgs)) {
			return 0, fmt.Errorf("%w: %s stored revision %d at %d, expected %d", lmdbstore.ErrDiverged, r.addr, p.Rev, seq, p.Pos+uint64(len(msgs)))
		}
		return seq, nil
	}
	// A lost race, or an answer that never came (a timeout, a dropped
	// connection, a leader change): the stream may hold this very
	// revision already (a retry after a lost ack, or after a local commit
	// that failed). Then it is published.
	if ok, herr := r.holds(p.Pos, p.Rev, p.Record, len(msgs)); herr == nil && ok {
		return p.Pos + uint64(len(msgs)), nil
	}
	if wrongLast(err) {
		return 0, fmt.Errorf("%w: revision %d: the stream moved past position %d", lmdbstore.ErrBehind, p.Rev, p.Pos)
	}
	return 0, r.remoteErr(fmt.Sprintf("publishing revision %d to", p.Rev), err)
}

// wrongLast reports a failed expected-last-sequence check.
func wrongLast(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
	}
	return false
}

// holds reports whether the n messages after pos are exactly revision
// rev's record.
func (r *Remote) holds(pos uint64, rev lmdbstore.Revision, record []byte, n int) (bool, error) {
	found := false
	err := r.revisions(pos, rev, pos+uint64(n), func(rc lmdbstore.Replicated) error {
		found = rc.Pos == pos+uint64(n) && string(rc.Record) == string(record)
		return nil
	})
	return found, err
}

// errStop ends a revisions walk early without error.
var errStop = errors.New("stop")

// revisions calls fn for every complete revision in the stream messages
// after position pos up to last, in order; the first must be revision
// next. fn may return errStop.
func (r *Remote) revisions(pos uint64, next lmdbstore.Revision, last uint64, fn func(lmdbstore.Replicated) error) error {
	a := assembler{next: next}
	err := r.scan(pos+1, last, func(m *jetstream.RawStreamMsg) error {
		p, err := decodePart(m)
		if err != nil {
			return err
		}
		rc, ok, err := a.add(p)
		if err != nil || !ok {
			return err
		}
		return fn(rc)
	})
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// scan calls fn for every stream message from first to last, in order.
func (r *Remote) scan(first, last uint64, fn func(*jetstream.RawStreamMsg) error) error {
	empty := 0 // answers in a row without the message asked for
	for seq := first; seq <= last; {
		ctx, cancel := r.ctx()
		msgs, err := jetstreamext.GetBatch(ctx, r.js, r.addr.Stream, int(min(last-seq+1, 256)),
			jetstreamext.GetBatchSeq(seq), jetstreamext.GetBatchMaxBytes(16<<20))
		if err != nil {
			cancel()
			return r.remoteErr("reading stream", err)
		}
		got := 0
		for m, err := range msgs {
			if err != nil {
				if errors.Is(err, jetstreamext.ErrNoMessages) {
					break
				}
				cancel()
				return r.remoteErr("reading stream", err)
			}
			if m.Sequence != seq {
				cancel()
				return &MessageError{Seq: seq, Msg: fmt.Sprintf("missing (the stream answered with %d)", m.Sequence)}
			}
			if err := fn(m); err != nil {
				cancel()
				return err
			}
			got++
			seq++
			if seq > last {
				break
			}
		}
		cancel()
		if got > 0 {
			empty = 0
			continue
		}
		// A replica that answers direct gets may lag the leader that
		// reported last: wait for it a little, then give up (a retry
		// later may succeed; it is not damage).
		if empty++; empty > 40 {
			return fmt.Errorf("%w: %s: stream message %d is not available (a lagging replica?)", lmdbstore.ErrRemote, r.addr, seq)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// CatchUp implements lmdbstore.Replicator: it applies every revision the
// stream holds beyond s, in order, in transactions of Options.ApplyBatch
// revisions. It returns the first refused message as a *MessageError (and
// applies nothing of it or after it).
func (r *Remote) CatchUp(s *lmdbstore.Store) error {
	_, err := r.Sync(s)
	return err
}

// Sync is CatchUp returning how many revisions it applied.
func (r *Remote) Sync(s *lmdbstore.Store) (int, error) {
	b, err := s.Binding()
	if err != nil {
		return 0, err
	}
	if !b.Bound {
		return 0, fmt.Errorf("%w: %s has no remote position (memctl remote add binds it)", lmdbstore.ErrBound, s.Path())
	}
	last, err := r.LastSeq()
	if err != nil {
		return 0, err
	}
	if last <= b.Pos {
		return 0, nil
	}
	var pending []lmdbstore.Replicated
	size, applied := 0, 0
	flush := func() error {
		n, err := s.ApplyReplicated(pending)
		applied += n
		pending, size = pending[:0], 0
		return err
	}
	err = r.revisions(b.Pos, b.Rev+1, last, func(rc lmdbstore.Replicated) error {
		pending = append(pending, rc)
		size += len(rc.Record)
		if len(pending) >= r.opts.ApplyBatch || size >= 64<<20 {
			return flush()
		}
		return nil
	})
	if err != nil {
		// What came before the refused message is good: keep it.
		if ferr := flush(); ferr != nil {
			return applied, ferr
		}
		return applied, err
	}
	// A revision cut off at last (its batch committed after Info) waits
	// for the next catch-up.
	return applied, flush()
}
