package lmdbstore

// An adjacency scan reads a node's chunks (adj.go) in one cgo call, not
// one per cursor step: LMDB-NOTES puts each call at a few hundred ns, and a
// get-out of a node with one chunk used to pay three (renew the cursor,
// seek, and the step that finds the list has ended). chunkCursor wraps an
// lmdb-go cursor with a C-side batch: the seek (with the step back a
// relation filter needs), the renew of a cursor parked since the last use
// of its transaction, and the steps to the node's following chunks run in
// C, and their keys and values come back as pointers into the map (the
// same RawRead slices lmdb-go hands out, valid until the transaction ends).
//
// The C code calls LMDB through the cursor and transaction handles that
// lmdb-go keeps unexported (fields _c of lmdb.Cursor and _txn of lmdb.Txn,
// v1.9.4, pinned), found by reflection once per cursor, as cfault.go finds
// the environment's. A layout without them fails the scan with an error
// naming it, never a crash.

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// MDB_val's layout (lmdb.h); lmdb.h itself is lmdb-go's, not on our path.
typedef struct { size_t mv_size; void *mv_data; } memctl_val;

extern int mdb_cursor_get(void *cursor, memctl_val *key, memctl_val *data, int op);
extern int mdb_cursor_renew(void *txn, void *cursor);
extern int mdb_txn_renew(void *txn);
extern void mdb_txn_reset(void *txn);
extern size_t mdb_txn_id(void *txn);

// MDB_envinfo's layout (lmdb.h); chunkscan_test.go checks it against
// lmdb-go's Env.Info.
typedef struct {
	void *me_mapaddr;
	size_t me_mapsize;
	size_t me_last_pgno;
	size_t me_last_txnid;
	unsigned int me_maxreaders;
	unsigned int me_numreaders;
} memctl_envinfo;

extern int mdb_env_info(void *env, memctl_envinfo *info);

// memctl_txn_refresh brings a parked read transaction to the latest
// committed snapshot: a reset one (live 0) is renewed; a live one is kept
// when the newest meta page carries its snapshot's txnid (nothing was
// committed since: a renew would give the same snapshot), else reset and
// renewed. *renewed says whether it was renewed (its cursors then need a
// renew). A writer writes the meta page before it publishes the txnid new
// readers take, so a kept snapshot is never older than a renew's.
static int memctl_txn_refresh(void *env, void *txn, int live, int *renewed) {
	*renewed = 0;
	if (live) {
		memctl_envinfo info;
		if (mdb_env_info(env, &info) == 0 && info.me_last_txnid == mdb_txn_id(txn)) {
			return 0;
		}
		mdb_txn_reset(txn);
	}
	int rc = mdb_txn_renew(txn);
	if (rc == 0) {
		*renewed = 1;
	}
	return rc;
}

// memctl_env_last_txnid is the txnid memctl_txn_refresh compares with
// (for chunkscan_test.go, against lmdb-go's Env.Info).
static size_t memctl_env_last_txnid(uintptr_t envh) {
	memctl_envinfo info;
	return mdb_env_info((void *)envh, &info) == 0 ? info.me_last_txnid : 0;
}

// memctl_txn_refresh_h is memctl_txn_refresh for Go: 0 kept, 1 renewed,
// else twice the error code.
static int memctl_txn_refresh_h(uintptr_t envh, uintptr_t txnh, int live) {
	int renewed;
	int rc = memctl_txn_refresh((void *)envh, (void *)txnh, live, &renewed);
	return rc != 0 ? rc * 2 : renewed;
}

// MDB_cursor_op values and MDB_NOTFOUND (lmdb.h); chunkscan_test.go
// checks them against lmdb-go's constants.
enum { MEMCTL_OP_LAST = 6, MEMCTL_OP_NEXT = 8, MEMCTL_OP_PREV = 12, MEMCTL_OP_SET_RANGE = 17 };
#define MEMCTL_NOTFOUND (-30798)

// memctl_chunks_seek's flags.
enum { MEMCTL_REFRESH_TXN = 1, MEMCTL_TXN_LIVE = 2, MEMCTL_RENEW_CURSOR = 4 };

// MEMCTL_CHUNKS is how many chunks one call collects (a node's list of
// up to 16 * 128 entries is one call).
#define MEMCTL_CHUNKS 16

typedef struct {
	unsigned char seek[20]; // node id u64 BE, rel u32 BE, 0 (adj.go's key)
	unsigned int rel;       // the relation filter (0: every relation)
	int n;                  // chunks collected
	int more;               // 1: stopped at MEMCTL_CHUNKS, the cursor on the last
	int refreshed;          // 1: memctl_chunks_seek refreshed the transaction (MEMCTL_REFRESH_TXN)
	int renewed;            // 1: ... by renewing it
	memctl_val key[MEMCTL_CHUNKS];
	memctl_val val[MEMCTL_CHUNKS];
} memctl_chunks;

static int memctl_same_node(const memctl_val *k, const unsigned char *seek) {
	return k->mv_size == 20 && memcmp(k->mv_data, seek, 8) == 0;
}

// memctl_prefetch starts loading a chunk's cache lines (the first few)
// while the call returns to Go, which decodes it next.
static inline void memctl_prefetch(memctl_val v) {
	const char *p = (const char *)v.mv_data;
	size_t n = v.mv_size < 256 ? v.mv_size : 256;
	for (size_t o = 0; o < n; o += 64) {
		__builtin_prefetch(p + o);
	}
	__builtin_prefetch(p + v.mv_size - 1);
}

// memctl_collect records the chunk at (k, v) (rc: the step that reached
// it) and those after it while they are the node's and, with a relation
// filter, do not start past the relation.
static int memctl_collect(void *cur, memctl_chunks *s, int rc, memctl_val k, memctl_val v) {
	s->n = 0;
	s->more = 0;
	while (rc == 0 && memctl_same_node(&k, s->seek)) {
		if (s->rel != 0) {
			const unsigned char *p = (const unsigned char *)k.mv_data + 8;
			unsigned int krel = (unsigned int)p[0] << 24 | (unsigned int)p[1] << 16 | (unsigned int)p[2] << 8 | p[3];
			if (krel > s->rel) {
				break;
			}
		}
		s->key[s->n] = k;
		s->val[s->n] = v;
		memctl_prefetch(v);
		if (++s->n == MEMCTL_CHUNKS) {
			s->more = 1;
			return 0;
		}
		rc = mdb_cursor_get(cur, &k, &v, MEMCTL_OP_NEXT);
	}
	return rc == MEMCTL_NOTFOUND ? 0 : rc;
}

// memctl_chunks_seek positions cur at the node's first chunk holding
// entries of s->rel (any with rel 0): the first key at or after the seek
// key, or, with a relation filter and no chunk starting exactly there, the
// chunk before it when that one is the node's (it may run into the
// relation). First, MEMCTL_REFRESH_TXN refreshes the transaction
// (memctl_txn_refresh; MEMCTL_TXN_LIVE: it is live), and cur is renewed in
// it if the transaction was renewed or MEMCTL_RENEW_CURSOR asks.
static int memctl_chunks_seek(uintptr_t envh, uintptr_t txnh, uintptr_t curh, uintptr_t sh, int flags) {
	void *txn = (void *)txnh, *cur = (void *)curh;
	memctl_chunks *s = (memctl_chunks *)sh;
	memctl_val k, v;
	int rc;
	s->refreshed = 0;
	s->renewed = 0;
	if (flags & MEMCTL_REFRESH_TXN) {
		if ((rc = memctl_txn_refresh((void *)envh, txn, flags & MEMCTL_TXN_LIVE, &s->renewed)) != 0) {
			return rc;
		}
		s->refreshed = 1;
	}
	if (((flags & MEMCTL_RENEW_CURSOR) || s->renewed) && (rc = mdb_cursor_renew(txn, cur)) != 0) {
		return rc;
	}
	k.mv_size = 20;
	k.mv_data = s->seek;
	rc = mdb_cursor_get(cur, &k, &v, MEMCTL_OP_SET_RANGE);
	if (rc != 0 && rc != MEMCTL_NOTFOUND) {
		return rc;
	}
	if (s->rel != 0 && !(rc == 0 && k.mv_size == 20 && memcmp(k.mv_data, s->seek, 20) == 0)) {
		memctl_val pk, pv;
		int prc = mdb_cursor_get(cur, &pk, &pv, rc == 0 ? MEMCTL_OP_PREV : MEMCTL_OP_LAST);
		if (prc == 0 && memctl_same_node(&pk, s->seek)) {
			k = pk;
			v = pv;
			rc = 0;
		} else if (prc == 0 || prc == MEMCTL_NOTFOUND) {
			k.mv_size = 20;
			k.mv_data = s->seek;
			rc = mdb_cursor_get(cur, &k, &v, MEMCTL_OP_SET_RANGE);
			if (rc != 0 && rc != MEMCTL_NOTFOUND) {
				return rc;
			}
		} else {
			return prc;
		}
	}
	return memctl_collect(cur, s, rc, k, v);
}

// memctl_chunks_next collects the chunks after the last one collected.
static int memctl_chunks_next(uintptr_t curh, uintptr_t sh) {
	void *cur = (void *)curh;
	memctl_chunks *s = (memctl_chunks *)sh;
	memctl_val k, v;
	int rc = mdb_cursor_get(cur, &k, &v, MEMCTL_OP_NEXT);
	return memctl_collect(cur, s, rc, k, v);
}
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"syscall"
	"unsafe"

	"github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/memctl/memctl/adjacency"
)

// chunkCursor is an adjacency cursor with its C-side batch (C memory, so
// cgo checks no Go pointers on each call). Not safe for concurrent use.
type chunkCursor struct {
	c     *lmdb.Cursor
	h     unsafe.Pointer // the MDB_cursor
	txn   unsafe.Pointer // the MDB_txn it was opened in
	b     *C.memctl_chunks
	renew bool // renew in txn before the next seek (the transaction was reset and renewed since its last use)
	busy  bool // a scan is using it (adj.go)
	// entries is the scan's decoded chunk, keys its peers' keys (scratch).
	entries []adjacency.Entry
	keys    keyScratch
}

// errHandleLayout says lmdb-go no longer keeps its handles where this
// package looks for them (a version other than the pinned one).
var errHandleLayout = errors.New("lmdbstore: lmdb-go's cursor or transaction handle not found (lmdb-go version other than v1.9.4?)")

// openChunkCursor opens a cursor on dbi in txn with its batch.
func openChunkCursor(txn *lmdb.Txn, dbi lmdb.DBI) (*chunkCursor, error) {
	c, err := txn.OpenCursor(dbi)
	if err != nil {
		return nil, err
	}
	h, ok := lmdbHandle(c, "_c")
	th, tok := lmdbHandle(txn, "_txn")
	if !ok || !tok {
		c.Close()
		return nil, errHandleLayout
	}
	b := (*C.memctl_chunks)(C.calloc(1, C.sizeof_memctl_chunks))
	if b == nil {
		c.Close()
		return nil, fmt.Errorf("lmdbstore: %w", syscall.ENOMEM)
	}
	return &chunkCursor{c: c, h: h, txn: th, b: b}, nil
}

// close closes the cursor and frees the batch.
func (cc *chunkCursor) close() {
	cc.c.Close()
	C.free(unsafe.Pointer(cc.b))
	cc.b = nil
}

// seek collects node's first chunks holding rel (0: any relation); see
// memctl_chunks_seek. refresh (non-nil: a pooled transaction still stale,
// this scan its View's first read) refreshes the cursor's transaction
// first, in the same cgo call; then refreshedTxn and renewedTxn say what
// happened, and a failed refresh is reported as mdb_txn_renew's error.
func (cc *chunkCursor) seek(node NodeID, rel RelID, refresh *pooledRead) error {
	b := cc.b
	seek := (*[20]byte)(unsafe.Pointer(&b.seek[0]))
	binary.BigEndian.PutUint64(seek[:], uint64(node))
	binary.BigEndian.PutUint32(seek[8:], uint32(rel))
	binary.BigEndian.PutUint64(seek[12:], 0)
	b.rel = C.uint(rel)
	var flags C.int
	var env uintptr
	if refresh != nil {
		flags |= C.MEMCTL_REFRESH_TXN
		if !refresh.reset {
			flags |= C.MEMCTL_TXN_LIVE
		}
		env = refresh.h.env
	}
	if cc.renew {
		flags |= C.MEMCTL_RENEW_CURSOR
	}
	rc := C.memctl_chunks_seek(C.uintptr_t(env), C.uintptr_t(uintptr(cc.txn)), C.uintptr_t(uintptr(cc.h)), C.uintptr_t(uintptr(unsafe.Pointer(b))), flags)
	if refresh != nil && b.refreshed == 0 {
		return lmdbError("mdb_txn_renew", rc)
	}
	if rc == 0 {
		cc.renew = false
	}
	return lmdbError("mdb_cursor_get", rc)
}

// refreshedTxn and renewedTxn report what the last seek did to the
// transaction.
func (cc *chunkCursor) refreshedTxn() bool { return cc.b.refreshed != 0 }
func (cc *chunkCursor) renewedTxn() bool   { return cc.b.renewed != 0 }

// txnHandles are a read transaction's C handles for memctl_txn_refresh and
// the scan: the MDB_env and MDB_txn pointers and lmdb-go's cached
// transaction id (Txn.id), which its Renew clears; zero when lmdb-go's
// layout is not the pinned one.
type txnHandles struct {
	env, txn uintptr
	id       *uintptr
}

func handlesOf(env *lmdb.Env, txn *lmdb.Txn) txnHandles {
	eh, eok := lmdbHandle(env, "_env")
	th, tok := lmdbHandle(txn, "_txn")
	f := reflect.ValueOf(txn).Elem().FieldByName("id")
	if !eok || !tok || !f.IsValid() || f.Kind() != reflect.Uintptr {
		return txnHandles{}
	}
	return txnHandles{env: uintptr(eh), txn: uintptr(th), id: (*uintptr)(unsafe.Pointer(f.UnsafeAddr()))}
}

// lastTxnID is the newest meta page's txnid as memctl_txn_refresh reads
// it.
func (h txnHandles) lastTxnID() uint64 { return uint64(C.memctl_env_last_txnid(C.uintptr_t(h.env))) }

// refresh is memctl_txn_refresh (live: the transaction is not reset).
func (h txnHandles) refresh(live bool) (renewed bool, err error) {
	var l C.int
	if live {
		l = 1
	}
	switch v := C.memctl_txn_refresh_h(C.uintptr_t(h.env), C.uintptr_t(h.txn), l); v {
	case 0, 1:
		return v == 1, nil
	default:
		return false, lmdbError("mdb_txn_renew", v/2)
	}
}

// next collects the chunks after the batch (more must be true).
func (cc *chunkCursor) next() error {
	return lmdbError("mdb_cursor_get", C.memctl_chunks_next(C.uintptr_t(uintptr(cc.h)), C.uintptr_t(uintptr(unsafe.Pointer(cc.b)))))
}

// len is the number of chunks in the batch; more says whether chunks of
// the node may follow it.
func (cc *chunkCursor) len() int   { return int(cc.b.n) }
func (cc *chunkCursor) more() bool { return cc.b.more != 0 }

// chunk is the i-th chunk of the batch: key and value in the map.
func (cc *chunkCursor) chunk(i int) (k, v []byte) {
	kv, vv := &cc.b.key[i], &cc.b.val[i]
	return unsafe.Slice((*byte)(kv.mv_data), int(kv.mv_size)), unsafe.Slice((*byte)(vv.mv_data), int(vv.mv_size))
}

// The C side's constants, for chunkscan_test.go to check against lmdb-go.
const (
	cOpLast     = int(C.MEMCTL_OP_LAST)
	cOpNext     = int(C.MEMCTL_OP_NEXT)
	cOpPrev     = int(C.MEMCTL_OP_PREV)
	cOpSetRange = int(C.MEMCTL_OP_SET_RANGE)
	cNotFound   = int(C.MEMCTL_NOTFOUND)
	chunkBatch  = int(C.MEMCTL_CHUNKS)
)

// lmdbError is lmdb-go's error for an LMDB return code (its operrno).
func lmdbError(op string, rc C.int) error {
	switch {
	case rc == 0:
		return nil
	case rc >= -30799 && rc <= -30780: // MDB_KEYEXIST .. MDB_LAST_ERRCODE
		return &lmdb.OpError{Op: op, Errno: lmdb.Errno(rc)}
	}
	return &lmdb.OpError{Op: op, Errno: syscall.Errno(rc)}
}

// lmdbHandle reads the unexported C handle field of an lmdb-go object
// (v1.9.4: Env._env, Txn._txn, Cursor._c).
func lmdbHandle(obj any, field string) (unsafe.Pointer, bool) {
	f := reflect.ValueOf(obj).Elem().FieldByName(field)
	if !f.IsValid() || f.Kind() != reflect.Pointer {
		return nil, false
	}
	p := *(*unsafe.Pointer)(unsafe.Pointer(f.UnsafeAddr()))
	return p, p != nil
}
