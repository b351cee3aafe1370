package replica

// Bootstrap snapshots (SPEC.md §13.6): a dense copy of a bound store's
// LMDB file (lmdbstore.VacuumInto: every keyspace, history and log
// included, and the binding of the revision it holds), kept as one object
// in the stream's object store:
//
//	bucket:   <STREAM>_snap
//	object:   snapshot (a newer one replaces it)
//	metadata: memctl-format: lmdb-1, memctl-rev: N, memctl-pos: P
//
// A clone downloads it (the object store checks its SHA-256 digest),
// checks that the stream's message at P is revision N with the same
// record, binds at (P, N) and applies the revisions after P.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/memctl/memctl/lmdbstore"
)

const (
	snapshotObject = "snapshot"
	snapshotFormat = "lmdb-1"
)

// snapshotBucket is the stream's object store.
func snapshotBucket(stream string) string { return stream + "_snap" }

// SnapshotInfo describes a published snapshot.
type SnapshotInfo struct {
	Rev   lmdbstore.Revision
	Pos   uint64
	Bytes uint64
}

// objectStore opens (create: or creates) the stream's object store.
func (r *Remote) objectStore(ctx context.Context, create bool) (jetstream.ObjectStore, error) {
	obs, err := r.js.ObjectStore(ctx, snapshotBucket(r.addr.Stream))
	if err == nil || !create || !errors.Is(err, jetstream.ErrBucketNotFound) {
		return obs, err
	}
	replicas := 1
	if st, serr := r.openStream(); serr == nil {
		if info, ierr := st.Info(ctx); ierr == nil {
			replicas = info.Config.Replicas
		}
	}
	return r.js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: snapshotBucket(r.addr.Stream), Replicas: replicas, Storage: jetstream.FileStorage,
		Description: "memctl bootstrap snapshots of stream " + r.addr.Stream,
	})
}

// PublishSnapshot copies s (bound to this stream) into a temporary
// directory under tmp and uploads the copy as the stream's snapshot.
func (r *Remote) PublishSnapshot(s *lmdbstore.Store, tmp string) (SnapshotInfo, error) {
	b, err := s.Binding()
	if err != nil {
		return SnapshotInfo{}, err
	}
	if !b.Bound {
		return SnapshotInfo{}, fmt.Errorf("%w: %s is not bound to a remote", lmdbstore.ErrBound, s.Path())
	}
	dir, err := os.MkdirTemp(tmp, "memctl-snapshot-")
	if err != nil {
		return SnapshotInfo{}, err
	}
	defer os.RemoveAll(dir)
	copyDir := filepath.Join(dir, "copy")
	if _, err := s.VacuumInto(copyDir); err != nil {
		return SnapshotInfo{}, err
	}
	// The copy is one read transaction: its binding is its revision's.
	c, err := lmdbstore.Open(copyDir, lmdbstore.Options{ReadOnly: true})
	if err != nil {
		return SnapshotInfo{}, err
	}
	cb, err := c.Binding()
	c.Close()
	if err != nil {
		return SnapshotInfo{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*r.opts.Timeout)
	defer cancel()
	obs, err := r.objectStore(ctx, true)
	if err != nil {
		return SnapshotInfo{}, r.remoteErr("opening the object store of", err)
	}
	f, err := os.Open(filepath.Join(copyDir, "data.mdb"))
	if err != nil {
		return SnapshotInfo{}, err
	}
	defer f.Close()
	info, err := obs.Put(ctx, jetstream.ObjectMeta{
		Name: snapshotObject,
		Metadata: map[string]string{"memctl-format": snapshotFormat,
			"memctl-rev": strconv.FormatUint(uint64(cb.Rev), 10), "memctl-pos": strconv.FormatUint(cb.Pos, 10)},
		Opts: &jetstream.ObjectMetaOptions{ChunkSize: uint32(min(128<<10, r.opts.MaxData))},
	}, f)
	if err != nil {
		return SnapshotInfo{}, r.remoteErr("uploading the snapshot to", err)
	}
	return SnapshotInfo{Rev: cb.Rev, Pos: cb.Pos, Bytes: info.Size}, nil
}

// Clone makes dir (which must not hold a store) a replica of this stream:
// from its snapshot when there is one, else from an empty store, then the
// revisions after it. opts are the new store's options (its Replicator is
// set to r). On failure dir is left as it was.
func (r *Remote) Clone(dir string, opts lmdbstore.Options) (*lmdbstore.Store, SnapshotInfo, error) {
	if _, err := os.Stat(filepath.Join(dir, "data.mdb")); err == nil {
		return nil, SnapshotInfo{}, fmt.Errorf("%w: %s", lmdbstore.ErrExists, dir)
	}
	_, statErr := os.Stat(dir)
	created := errors.Is(statErr, os.ErrNotExist)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, SnapshotInfo{}, err
	}
	var s *lmdbstore.Store
	undo := func() {
		if s != nil {
			s.Close()
		}
		for _, f := range []string{"data.mdb", "lock.mdb", "data.mdb.part", BindingFile} {
			os.Remove(filepath.Join(dir, f))
		}
		if created {
			os.Remove(dir)
		}
	}
	info, err := r.fetchSnapshot(dir)
	if err != nil {
		undo()
		return nil, info, err
	}
	opts.Replicator = r
	if info.Rev == 0 && info.Pos == 0 {
		s, err = lmdbstore.Init(dir, opts)
		if err == nil {
			err = s.Bind(0, 0)
		}
	} else {
		s, err = lmdbstore.Open(dir, opts)
		if err == nil {
			err = r.checkSnapshot(s, info)
		}
	}
	if err == nil {
		err = WriteBinding(dir, r.addr)
	}
	if err == nil {
		_, err = r.Sync(s)
	}
	if err != nil {
		undo()
		return nil, info, err
	}
	return s, info, nil
}

// SnapshotRev is the revision of the stream's published snapshot (0
// when there is none).
func (r *Remote) SnapshotRev() (lmdbstore.Revision, error) {
	ctx, cancel := r.ctx()
	defer cancel()
	obs, err := r.objectStore(ctx, false)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, r.remoteErr("opening the object store of", err)
	}
	meta, err := obs.GetInfo(ctx, snapshotObject)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, r.remoteErr("reading the snapshot of", err)
	}
	rev, err := strconv.ParseUint(meta.Metadata["memctl-rev"], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: the snapshot of %s: bad memctl-rev", lmdbstore.ErrDiverged, r.addr)
	}
	return lmdbstore.Revision(rev), nil
}

// fetchSnapshot downloads the snapshot into dir/data.mdb; no snapshot is
// SnapshotInfo{} and no file.
func (r *Remote) fetchSnapshot(dir string) (SnapshotInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*r.opts.Timeout)
	defer cancel()
	obs, err := r.objectStore(ctx, false)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return SnapshotInfo{}, nil
	}
	if err != nil {
		return SnapshotInfo{}, r.remoteErr("opening the object store of", err)
	}
	meta, err := obs.GetInfo(ctx, snapshotObject)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return SnapshotInfo{}, nil
	}
	if err != nil {
		return SnapshotInfo{}, r.remoteErr("reading the snapshot of", err)
	}
	bad := func(msg string) (SnapshotInfo, error) {
		return SnapshotInfo{}, fmt.Errorf("%w: the snapshot of %s: %s", lmdbstore.ErrDiverged, r.addr, msg)
	}
	if f := meta.Metadata["memctl-format"]; f != snapshotFormat {
		return bad(fmt.Sprintf("format %q (this memctl reads %q)", f, snapshotFormat))
	}
	rev, err1 := strconv.ParseUint(meta.Metadata["memctl-rev"], 10, 64)
	pos, err2 := strconv.ParseUint(meta.Metadata["memctl-pos"], 10, 64)
	if err1 != nil || err2 != nil {
		return bad("bad memctl-rev or memctl-pos")
	}
	part := filepath.Join(dir, "data.mdb.part")
	// GetFile fails on a digest mismatch.
	if err := obs.GetFile(ctx, snapshotObject, part); err != nil {
		return SnapshotInfo{}, r.remoteErr("downloading the snapshot of", err)
	}
	if err := os.Rename(part, filepath.Join(dir, "data.mdb")); err != nil {
		return SnapshotInfo{}, err
	}
	return SnapshotInfo{Rev: lmdbstore.Revision(rev), Pos: pos, Bytes: meta.Size}, nil
}

// checkSnapshot checks that the downloaded store is the snapshot's
// revision of this stream: bound at (Pos, Rev), and the stream's message
// at Pos ends revision Rev's record.
func (r *Remote) checkSnapshot(s *lmdbstore.Store, info SnapshotInfo) error {
	b, err := s.Binding()
	if err != nil {
		return err
	}
	if !b.Bound || b.Rev != info.Rev || b.Pos != info.Pos {
		return fmt.Errorf("%w: the snapshot of %s holds revision %d at position %d, its metadata says %d at %d", lmdbstore.ErrDiverged, r.addr, b.Rev, b.Pos, info.Rev, info.Pos)
	}
	var rec []byte
	if err := s.View(func(rt *lmdbstore.ReadTxn) error {
		if rt.Revision() != info.Rev {
			return fmt.Errorf("%w: the snapshot of %s is at revision %d, its metadata says %d", lmdbstore.ErrDiverged, r.addr, rt.Revision(), info.Rev)
		}
		rec, err = rt.LogRecord(info.Rev)
		return err
	}); err != nil {
		return err
	}
	st, err := r.openStream()
	if err != nil {
		return err
	}
	ctx, cancel := r.ctx()
	defer cancel()
	m, err := st.GetMsg(ctx, info.Pos)
	if err != nil {
		return r.remoteErr("reading stream", err)
	}
	p, err := decodePart(m)
	if err != nil {
		return err
	}
	if p.rev != info.Rev || len(p.data) > len(rec) || string(rec[len(rec)-len(p.data):]) != string(p.data) {
		return fmt.Errorf("%w: the snapshot's revision %d is not the stream's at position %d", lmdbstore.ErrDiverged, info.Rev, info.Pos)
	}
	return nil
}
