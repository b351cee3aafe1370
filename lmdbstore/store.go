package lmdbstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/klauspost/compress/zstd"
	"github.com/memctl/memctl/adjacency"
)

// Environment constants shared by every memctl binary (LMDB-NOTES: the first
// opener fixes max readers; keep one generous value everywhere).
const (
	maxReaders        = 1024
	maxDBs            = 16
	defaultMapSize    = 1 << 30 // 1 GiB
	defaultMaxMapSize = 1 << 40 // 1 TiB
	maxRetries        = 64
)

// Options configures Open and Init. The zero value is the production default.
type Options struct {
	// ReadOnly opens without ever taking the writer lock.
	ReadOnly bool
	// Telemetry, when non-nil, receives one JSON line per event (see SPEC.md).
	// Each event is written with a single Write call.
	Telemetry io.Writer
	// Session is the scope/run/task attributed to read and query telemetry
	// events (writes carry their own WriteMeta).
	Session WriteMeta
	// MapSize is the initial LMDB map size in bytes (0: the default). Tests
	// use small values to exercise map growth.
	MapSize int64
	// MaxMapSize caps growth (0: the default); beyond it writes fail with ErrMapFull.
	MaxMapSize int64
	// NoSync trades durability against OS crashes (never against process
	// kills) for commit speed. Default false: every commit is synced.
	NoSync bool
	// Clock returns commit times (nil: time.Now). Commit times are forced to
	// be strictly increasing, so tests may return a fixed time.
	Clock func() time.Time
	// Redactor, when non-nil, rewrites every key and payload a write names
	// before anything of the write reaches LMDB, the log or telemetry (secret
	// redaction, SPEC §2 "Secrets"); Commit.Redacted counts its findings.
	Redactor Redactor
	// Replicator, when non-nil, publishes every revision of a bound store
	// before it commits (replica.go, SPEC.md §13). A bound store refuses
	// writes without one; nil changes nothing for an unbound store.
	Replicator Replicator
}

// Redactor replaces secrets in text (secretscan.Scanner through an
// adapter): it returns the text to store and how many secrets it replaced.
type Redactor interface {
	Redact(text string) (string, int)
}

// Store is an open memctl store. It is safe for concurrent use by multiple
// goroutines; write transactions are serialised.
type Store struct {
	path   string
	opts   Options
	env    *lmdb.Env
	openLk *openLock // lock.mdb, held open with the environment (openlock.go)
	db     dbis
	hash   func(string) NodeID
	clock  func() time.Time
	maxMap int64
	// chunkMax is adjacency.MaxChunkEntries; tests lower it to exercise
	// chunk splits on small graphs.
	chunkMax int
	// vacuumHintMin is the smallest data.mdb for which Stats suggests
	// vacuum (vacuumHintFile); tests lower it.
	vacuumHintMin int64
	// adjDirect turns off the adjacency write-back buffer (adjbuf.go);
	// tests compare the two paths' layouts.
	adjDirect bool
	// logFormat02 writes compressed log records in format 02 (no key
	// table), as a schema-3 binary does; tests compare the two formats.
	logFormat02 bool
	// streamLog is the body size above which a log record is compressed
	// as a stream (streamLogAbove unless a test sets it).
	streamLog int
	// logWhole and logWindow set how a log body is read (logbody.go):
	// decompressed whole up to logWhole bytes, streamed above in windows
	// of logWindow bytes (readWholeAbove and readWindow unless a test
	// sets them).
	logWhole, logWindow int
	// recordResident is how many 1 MiB parts of a bulk load's log record
	// stay in memory before the next go to a spill file (recordResident
	// unless a test sets it).
	recordResident int

	// resize guards the map: every transaction holds it shared, a map
	// resize holds it exclusively (SetMapSize under a live RawRead slice
	// would leave the slice dangling).
	resize sync.RWMutex
	// writer serialises this process's write transactions.
	writer sync.Mutex

	relMu sync.Mutex
	rels  relCache
	// relTable is the committed relations indexed by id (zero where not
	// known yet), replaced whole under relMu: lock-free reads.
	relTable atomic.Pointer[[]Relation]
	maxRel   atomic.Uint32 // largest relation id known to exist

	// readers parks read-only transactions for reuse by view (readpool.go).
	readers readPool

	// ids caches id -> canonical key for ids entries known to be committed
	// (keycache.go): reads resolve neighbours' keys from it, and a write
	// transaction need not look up an endpoint it has seen before.
	ids keyCache
	// revTimes caches committed revisions' commit times (ts.go).
	revTimes revTimeCache

	closeMu sync.Mutex
	closed  bool
	closing atomic.Bool // set by Close before it drains readers
}

// Init creates a new store at path (a directory) and opens it. It fails with
// ErrExists if a store is already there.
func Init(path string, opts Options) (*Store, error) {
	if opts.ReadOnly {
		return nil, fmt.Errorf("%w: cannot init a store read-only", ErrReadOnly)
	}
	_, statErr := os.Stat(path)
	createdDir := errors.Is(statErr, os.ErrNotExist)
	if err := makeStoreDir("init", path); err != nil {
		return nil, err
	}
	// A failed init (a full disk, a signal-free ENOSPC) leaves no half
	// store behind: the next init would refuse it and every other command
	// would call it corrupt.
	undo := func() {
		os.Remove(filepath.Join(path, "data.mdb"))
		os.Remove(filepath.Join(path, "lock.mdb"))
		if createdDir {
			os.Remove(path)
		}
	}
	s, err := openEnv(path, opts)
	if err != nil {
		undo()
		return nil, err
	}
	_, err = s.update(func(txn *lmdb.Txn) error {
		if err := s.db.each(func(ks *keyspace, dbi *lmdb.DBI) error {
			var err error
			*dbi, err = txn.OpenDBI(ks.name, lmdb.Create|ks.flags)
			return err
		}); err != nil {
			return err
		}
		if _, err := txn.Get(s.db.meta, []byte(metaSchema)); err == nil {
			return fmt.Errorf("%w: %s", ErrExists, path)
		}
		now := uint64(s.clock().UnixNano())
		// schemaRevs: schemaKeyedLog comes with the first format-03 log record.
		for k, v := range map[string]uint64{
			metaSchema: schemaRevs, metaCreated: now, metaRev: 0, metaTS: 0,
			metaRetain: 0, metaHorizon: 0, metaNextRel: uint64(len(builtinRelations) + 1),
		} {
			if err := txn.Put(s.db.meta, []byte(k), u64Value(v), 0); err != nil {
				return err
			}
		}
		for _, b := range builtinRelations {
			r := Relation{ID: RelID(b.ID), Name: b.Name, DefaultWeight: b.DefaultWeight, Role: b.Role}
			if err := txn.Put(s.db.rel, relKey(r.ID), encodeRel(r), 0); err != nil {
				return err
			}
			if err := txn.Put(s.db.relname, []byte(r.Name), relNameValue(r.ID), 0); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = s.loadRelations()
	}
	if err != nil {
		s.closeEnv()
		if !errors.Is(err, ErrExists) {
			undo()
		}
		return nil, err
	}
	return s, nil
}

// makeStoreDir makes path ready to hold a new store: a directory (created
// if missing) without data.mdb (ErrExists). what names the operation in
// errors.
func makeStoreDir(what, path string) error {
	if _, err := os.Stat(filepath.Join(path, "data.mdb")); err == nil {
		return fmt.Errorf("%w: %s", ErrExists, path)
	}
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory (a store is a directory)", ErrInvalid, path)
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return fmt.Errorf("%s %s: %w", what, path, mapOSError(err))
	}
	return nil
}

// Open opens an existing store. It fails with ErrNotExist if there is none and
// with ErrNewerSchema if it was written by a newer schema.
func Open(path string, opts Options) (*Store, error) {
	fi, err := os.Stat(filepath.Join(path, "data.mdb"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, fmt.Errorf("%w: %s", ErrNotExist, path)
		}
		return nil, fmt.Errorf("open %s: %w", path, mapOSError(err))
	}
	if fi.Size() == 0 {
		return nil, fmt.Errorf("%w: %s: empty data.mdb (not an LMDB file)", ErrCorrupt, path)
	}
	if err := checkMetaPages(filepath.Join(path, "data.mdb")); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, mapOSError(err))
	}
	s, err := openEnv(path, opts)
	if err != nil {
		return nil, err
	}
	var schema uint64
	noRevs := false // schemas 1 and 2 have no revs keyspace (the upgrade adds it)
	err = s.viewManaged(func(txn *lmdb.Txn) error {
		if err := s.db.each(func(ks *keyspace, dbi *lmdb.DBI) error {
			name := ks.name
			var err error
			*dbi, err = txn.OpenDBI(name, 0)
			if lmdb.IsNotFound(err) && name == dbRevs {
				noRevs = true
				return nil
			}
			if lmdb.IsNotFound(err) {
				return fmt.Errorf("%w: %s has no %q keyspace (not a memctl store?)", ErrCorrupt, path, name)
			}
			return err
		}); err != nil {
			return err
		}
		v, err := txn.Get(s.db.meta, []byte(metaSchema))
		if err != nil {
			return fmt.Errorf("%w: %s: no schema version: %v", ErrCorrupt, path, err)
		}
		ver, err := parseU64Value(v)
		if err != nil {
			return &CorruptionError{dbMeta, []byte(metaSchema), err.Error()}
		}
		if ver > SchemaVersion {
			return fmt.Errorf("%w: %s has schema %d, this memctl reads up to %d", ErrNewerSchema, path, ver, SchemaVersion)
		}
		if ver < 1 {
			return &CorruptionError{dbMeta, []byte(metaSchema), fmt.Sprintf("schema version %d", ver)}
		}
		if ver >= schemaRevs && noRevs {
			return fmt.Errorf("%w: %s has no %q keyspace", ErrCorrupt, path, dbRevs)
		}
		schema = ver
		return nil
	})
	if err == nil && schema == 0 {
		err = &CorruptionError{dbMeta, []byte(metaSchema), "schema version 0"}
	}
	if err == nil && schema < schemaRevs {
		err = s.upgrade(schema)
	}
	if err != nil {
		s.closeEnv()
		return nil, err
	}
	if err := s.loadRelations(); err != nil {
		s.closeEnv()
		return nil, err
	}
	return s, nil
}

func openEnv(path string, opts Options) (*Store, error) {
	s := &Store{path: path, opts: opts, hash: IDOf, clock: opts.Clock, maxMap: opts.MaxMapSize,
		chunkMax: adjacency.MaxChunkEntries, vacuumHintMin: vacuumHintFile}
	if s.clock == nil {
		s.clock = time.Now
	}
	s.readers.start(func(reset func()) {
		s.resize.RLock()
		defer s.resize.RUnlock()
		if !s.closing.Load() {
			reset()
		}
	})
	if s.maxMap <= 0 {
		s.maxMap = defaultMaxMapSize
	}
	initial := opts.MapSize
	if initial <= 0 {
		initial = defaultMapSize
		if fi, err := os.Stat(filepath.Join(path, "data.mdb")); err == nil && 2*fi.Size() > initial {
			initial = 2 * fi.Size()
		}
	}
	initial = min(initial, s.maxMap)
	lk, err := lockOpening(path)
	if err != nil {
		return nil, err
	}
	var flags uint
	if opts.ReadOnly {
		flags |= lmdb.Readonly
	}
	if opts.NoSync {
		flags |= lmdb.NoSync
	}
	env, err := openLMDB(path, flags, initial, !opts.ReadOnly)
	if err != nil && opts.ReadOnly && errors.Is(mapOSError(err), ErrPermission) {
		// A store this user cannot write (another user's, a read-only
		// directory without lock.mdb): LMDB's reader table lives in
		// lock.mdb, which must be writable, so read without it. Nothing
		// then stops the owner's writers from reusing pages this process
		// is reading: reads see a consistent state only while nobody
		// writes (SPEC.md §6.1).
		env, err = openLMDB(path, flags|lmdb.NoLock, initial, false)
	}
	if err != nil {
		lk.abandon()
		return nil, fmt.Errorf("open %s: %w", path, mapOSError(err))
	}
	lk.opened()
	s.env, s.openLk = env, lk
	return s, nil
}

// openLMDB opens the environment at path (LMDB-NOTES: max DBs, readers and
// map size before Open; Close after a failed Open). A writer adopts the
// recorded map size when it is larger than initial.
func openLMDB(path string, flags uint, initial int64, writer bool) (*lmdb.Env, error) {
	env, err := lmdb.NewEnv()
	if err != nil {
		return nil, err
	}
	setAssertHandler(env)
	err = env.SetMaxDBs(maxDBs)
	if err == nil {
		err = env.SetMaxReaders(maxReaders)
	}
	if err == nil {
		err = env.SetMapSize(initial)
	}
	if err == nil {
		err = env.Open(path, flags, 0o644)
	}
	if err == nil && writer {
		// Adopt the size another process recorded if it is larger (a size
		// set before Open overrides the recorded one, and the next commit
		// would record it). A reader skips the two remaps: its map holds
		// the file, and a later growth is adopted on MDB_MAP_RESIZED.
		err = env.SetMapSize(0)
		if info, ierr := env.Info(); err == nil && ierr == nil && info.MapSize < initial {
			err = env.SetMapSize(initial)
		}
	}
	if err == nil {
		_, err = env.ReaderCheck()
	}
	if err != nil {
		env.Close()
		return nil, err
	}
	return env, nil
}

// mapOSError turns permission, space and foreign-file errors into the
// store's sentinels.
func mapOSError(err error) error {
	if inner, ok := lmdbErrno(err); ok {
		switch inner {
		case lmdb.Invalid, lmdb.VersionMismatch, lmdb.Corrupted, lmdb.PageNotFound, lmdb.Panic, lmdb.BadTxn, lmdb.Incompatible, lmdb.CursorFull, lmdb.PageFull:
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
	}
	switch osErrno(err) {
	case syscall.EACCES, syscall.EPERM, syscall.EROFS:
		return fmt.Errorf("%w: %v (writing needs write access to the store directory and its files; reads need only read access)", ErrPermission, err)
	case syscall.ENOSPC, syscall.EDQUOT:
		return fmt.Errorf("%w: %v (nothing was written)", ErrDiskFull, err)
	}
	return err
}

// osErrno is the system error number err carries (0 for none), whether
// lmdb-go wrapped it (an *lmdb.OpError has no Unwrap) or the os package.
func osErrno(err error) syscall.Errno {
	var errno syscall.Errno
	if inner, ok := lmdbErrno(err); ok {
		errno, _ = inner.(syscall.Errno)
	} else {
		errors.As(err, &errno)
	}
	return errno
}

// lowSpace is the free space below which an EIO from a write means the
// file system filled up: LMDB reports a short pwrite as EIO, and the part
// that was written used up what was left.
const lowSpace = 16 << 20

// diskFullEIO reports whether err is an EIO from a write to the store at
// path whose file system is (nearly) full.
func diskFullEIO(path string, err error) bool {
	if osErrno(err) != syscall.EIO {
		return false
	}
	var st syscall.Statfs_t
	if syscall.Statfs(path, &st) != nil {
		return false
	}
	return st.Bavail*uint64(st.Bsize) < lowSpace
}

// Close releases the environment. No transaction may be live.
func (s *Store) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.closing.Store(true)
	s.resize.Lock()
	defer s.resize.Unlock()
	s.readers.drain()
	s.openLk.closeEnv(s.env)
	return nil
}

// closeEnv closes the environment of a store that was never handed out
// (an open that failed after it began reading, vacuum's copy): the parked
// read transactions and their timer go first.
func (s *Store) closeEnv() {
	s.closing.Store(true)
	s.resize.Lock()
	s.readers.drain()
	s.resize.Unlock()
	s.openLk.closeEnv(s.env)
}

// Path is the store directory.
func (s *Store) Path() string { return s.path }

// zstd is the process's zstd encoder and decoder, shared by every store it
// opens: EncodeAll and DecodeAll are safe for concurrent use and keep no
// state between calls, so they are a cache, like a compiled regexp at
// package level, not state. Building them took 2 ms of CPU (49 ms under
// -race) for each store opened, which a process opening many stores
// (vacuum, tests) paid again and again.
func (s *Store) zstd() (*zstd.Encoder, *zstd.Decoder) {
	zstdCodecs.once.Do(func() {
		// EncodeAll runs on up to this many goroutines at once (bulk
		// loads encode node values on every core); the output does not
		// depend on it.
		zstdCodecs.enc, _ = zstd.NewWriter(nil, zstdEncoderOptions()...)
		zstdCodecs.dec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30),
			zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderLowmem(true))
	})
	return zstdCodecs.enc, zstdCodecs.dec
}

// zstdCodecs are the encoder and decoder Store.zstd builds once per process.
var zstdCodecs struct {
	once sync.Once
	enc  *zstd.Encoder
	dec  *zstd.Decoder
}

// zstdEncoderOptions are the options of every zstd encoder of a store
// (EncodeAll's, and sealLogStream's, whose output must equal it).
func zstdEncoderOptions() []zstd.EOption {
	return []zstd.EOption{zstd.WithEncoderConcurrency(min(runtime.GOMAXPROCS(0), 4))}
}

// maxZstdWindow is the largest window our encoder uses (its default level
// uses 8 MiB): a frame asking for more is damaged, and refusing it keeps a
// damaged value from costing a large allocation.
const maxZstdWindow = 8 << 20

// unzstd decompresses one value's zstd frame whose body length the value
// states as n, checking the frame header against n before decoding.
func (s *Store) unzstd(frame []byte, n uint64) ([]byte, error) {
	var h zstd.Header
	if err := h.Decode(frame); err != nil {
		return nil, err
	}
	if !h.HasFCS || h.FrameContentSize != n {
		return nil, fmt.Errorf("frame holds %d bytes, value says %d", h.FrameContentSize, n)
	}
	_, dec := s.zstd()
	// Never preallocate what the value merely claims.
	body, err := dec.DecodeAll(frame, make([]byte, 0, min(n, 1<<20)))
	if err != nil {
		return nil, err
	}
	if uint64(len(body)) != n {
		return nil, fmt.Errorf("decompressed %d bytes, value says %d", len(body), n)
	}
	return body, nil
}

func lmdbErrno(err error) (error, bool) {
	var op *lmdb.OpError
	if errors.As(err, &op) {
		return op.Errno, true
	}
	return nil, false
}

// recoverable handles the LMDB conditions a transaction is retried after:
// a full map (grow it), a map grown by another process (adopt it), a full
// reader table (clear stale slots). It returns (true, nil) to retry.
func (s *Store) recoverable(err error) (bool, error) {
	errno, ok := lmdbErrno(err)
	if !ok {
		return false, err
	}
	switch errno {
	case lmdb.MapFull:
		return true, s.growMap()
	case lmdb.MapResized:
		s.resize.Lock()
		defer s.resize.Unlock()
		s.readers.resetParked() // no live read transaction under a resize
		return true, s.env.SetMapSize(0)
	case lmdb.ReadersFull:
		_, cerr := s.env.ReaderCheck()
		return true, cerr
	case syscall.ENOSPC, syscall.EDQUOT:
		return false, fmt.Errorf("%w: %v (nothing was written)", ErrDiskFull, err)
	case syscall.EIO:
		if diskFullEIO(s.path, err) {
			return false, fmt.Errorf("%w: %v: a short write on a full file system (nothing was written)", ErrDiskFull, err)
		}
	case lmdb.NotFound:
		// Every read that may miss checks for it; MDB_NOTFOUND escaping a
		// transaction (a Del of the key a cursor just returned) means the
		// tree is inconsistent.
		return false, fmt.Errorf("%w: LMDB lost a key it had just returned: %v", ErrCorrupt, err)
	case lmdb.PageFull:
		// LMDB's "page has no more space" is an internal error: a page whose
		// header or node sizes were damaged.
		return false, fmt.Errorf("%w: LMDB found a page fuller than it can be (a damaged page): %v", ErrCorrupt, err)
	case syscall.EFAULT:
		// A commit writing a dirty page from a bad address: a damaged page
		// number or overflow count sent LMDB outside its map.
		return false, fmt.Errorf("%w: LMDB wrote from outside its map (a damaged page): %v", ErrCorrupt, err)
	case syscall.EFBIG:
		// The map is capped far below any file-size limit: a write that far
		// out follows a damaged free list or page number.
		return false, fmt.Errorf("%w: LMDB wrote beyond the file size limit (a damaged free list?): %v", ErrCorrupt, err)
	}
	// Damage (MDB_CORRUPTED, MDB_PAGE_NOTFOUND, ...) and OS conditions map
	// to the store's sentinels on every path, not only at open.
	return false, mapOSError(err)
}

// growMap doubles the map, up to MaxMapSize (ErrMapFull once there).
func (s *Store) growMap() error {
	return s.resizeMap(func(cur int64) (int64, error) {
		if cur >= s.maxMap {
			return 0, fmt.Errorf("%w: map size %d reached the maximum %d", ErrMapFull, cur, s.maxMap)
		}
		return min(2*cur, s.maxMap), nil
	})
}

// reserveMap grows the map, when it is smaller, to need bytes (rounded up
// to a MiB); false, and nothing changed, when need is beyond MaxMapSize.
func (s *Store) reserveMap(need int64) (bool, error) {
	need = (need + 1<<20 - 1) &^ (1<<20 - 1)
	if need > s.maxMap {
		return false, nil
	}
	return true, s.resizeMap(func(int64) (int64, error) { return need, nil })
}

// resizeMap sets the map to the size next gives for the current one, when
// that is larger, with no read transaction of this process live.
func (s *Store) resizeMap(next func(cur int64) (int64, error)) error {
	s.resize.Lock()
	defer s.resize.Unlock()
	info, err := s.env.Info()
	if err != nil {
		return err
	}
	size, err := next(info.MapSize)
	if err != nil || size <= info.MapSize {
		return err
	}
	s.readers.resetParked() // no live read transaction under a resize
	return s.env.SetMapSize(size)
}

// withMap runs fn holding the map shared (no resize while it runs), and
// releases it even if fn panics or calls runtime.Goexit (t.Fatal).
func (s *Store) withMap(fn func() error) error {
	s.resize.RLock()
	defer s.resize.RUnlock()
	return fn()
}
