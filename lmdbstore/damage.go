package lmdbstore

// Damage below the values: LMDB's own page structures (SPEC.md §6.5).
//
// Every value carries a CRC-32C trailer, so damaged value bytes are caught
// when a value is opened. Damage one level lower — a page header, a node's
// size or flags field, an overflow page number — reaches memctl in two ways:
//
//   - LMDB notices it and returns MDB_CORRUPTED, MDB_PAGE_NOTFOUND, ...:
//     classifyLMDB turns those into ErrCorrupt on every path.
//   - LMDB does not notice it and hands back a value whose pointer or size
//     lies outside the file: touching it faults (SIGBUS past the end of the
//     file, SIGSEGV past the map). Every transaction runs with
//     debug.SetPanicOnFault, so the fault becomes a panic that guardFaults
//     recovers into a CorruptionError; openValue recovers it first where the
//     keyspace and key are known.
//
// A fault inside LMDB's C code (a cursor walking a damaged branch page)
// cannot be recovered by Go; LMDB checks page numbers against the last page
// of the transaction, which keeps most of them inside the file, and the
// page-damage suite (fuzz/) measures what remains.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/PowerDNS/lmdb-go/lmdb"
)

// faultError is the runtime error a memory fault raises under
// SetPanicOnFault: it carries the faulting address.
type faultError interface {
	error
	Addr() uintptr
}

// minFaultAddr separates a fault on mapped file memory from a nil
// dereference (a bug, which must crash as usual).
const minFaultAddr = 1 << 16

// asFault reports whether a recovered panic value is a memory fault on
// mapped memory, and its address.
func asFault(r any) (uintptr, bool) {
	if fe, ok := r.(faultError); ok && fe.Addr() >= minFaultAddr {
		return fe.Addr(), true
	}
	// A nil dereference is a bug, unless lmdb-go raised it on a value a
	// damaged page handed back.
	if _, ok := r.(runtime.Error); ok && panickedInLMDBValue() {
		var addr uintptr
		if fe, ok := r.(faultError); ok {
			addr = fe.Addr()
		}
		return addr, true
	}
	return 0, false
}

// panickedInLMDBValue reports whether the panic being recovered was raised
// while lmdb-go turned an MDB_val into a slice: a damaged page can hand back
// a NULL data pointer with a non-zero size, a "nil dereference" that is
// damage, not a bug. Called from a deferred recover, the panicking frames are
// still on the stack.
func panickedInLMDBValue() bool {
	var pcs [48]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs[:])])
	for {
		f, more := frames.Next()
		if f.Function == "github.com/PowerDNS/lmdb-go/lmdb.getBytes" {
			return true
		}
		if !more {
			return false
		}
	}
}

// guardFaults runs fn with memory faults turned into a CorruptionError
// naming the keyspace (when known) and the address. Other panics propagate.
func guardFaults(keyspace string, key []byte, fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if r := recover(); r != nil {
			addr, ok := asFault(r)
			if !ok {
				panic(r)
			}
			err = faultCorruption(keyspace, key, addr)
		}
	}()
	return fn()
}

func faultCorruption(keyspace string, key []byte, addr uintptr) error {
	if keyspace == "" {
		keyspace = "data.mdb"
	}
	return &CorruptionError{keyspace, key, fmt.Sprintf("memory fault at %#x: a damaged LMDB page points outside the data file", addr)}
}

// damageErrnos are the LMDB return codes that mean the file is damaged
// (never a caller's mistake or a transient condition; memctl opens every
// DBI with the same flags, so MDB_INCOMPATIBLE means a damaged DB record).
var damageErrnos = []lmdb.Errno{lmdb.Corrupted, lmdb.PageNotFound, lmdb.Invalid, lmdb.VersionMismatch, lmdb.Panic, lmdb.BadTxn, lmdb.Incompatible, lmdb.CursorFull, lmdb.PageFull}

// isDamageErrno reports whether err is an LMDB error that means damage.
func isDamageErrno(err error) bool {
	inner, ok := lmdbErrno(err)
	if !ok {
		return false
	}
	for _, e := range damageErrnos {
		if inner == e {
			return true
		}
	}
	return false
}

// classifyLMDB wraps an LMDB damage error met while reading keyspace as a
// CorruptionError naming it; other errors pass unchanged.
func classifyLMDB(keyspace string, key []byte, err error) error {
	if err == nil || !isDamageErrno(err) {
		return err
	}
	return &CorruptionError{keyspace, key, "LMDB: " + err.Error()}
}

// LMDB 0.9 meta pages (pages 0 and 1 of data.mdb): after the 16-byte page
// header, mm_magic u32, mm_version u32, mm_address, mm_mapsize, mm_dbs[2]
// (48 bytes each; the free DB's md_pad holds the page size), mm_last_pg,
// mm_txnid. LMDB writes the meta of transaction t to page t mod 2 and opens
// the one with the greater txnid, without checking anything else: a damaged
// txnid silently rolls the store back (or forward onto garbage).
const (
	metaMagic       = 0xBEEFC0DE
	metaOffMagic    = 16
	metaOffPageSize = 16 + 24
	metaOffLastPage = 16 + 24 + 96
	metaOffTxnID    = metaOffLastPage + 8
	metaLen         = metaOffTxnID + 8
)

// checkMetaPages verifies the two meta pages of the data file at path: magic
// and version, one page size, txnids of the right parity one apart, and last
// pages inside the file. A commit by another process can be caught half
// written, so a failure is re-read a few times before it is damage.
func checkMetaPages(path string) error {
	var err error
	for attempt := 0; attempt < 4; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * time.Millisecond)
		}
		if err = readMetaPages(path); err == nil || !errors.Is(err, ErrCorrupt) {
			return err
		}
	}
	return err
}

func readMetaPages(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	bad := func(format string, args ...any) error {
		return &CorruptionError{"data.mdb", nil, "LMDB meta pages: " + fmt.Sprintf(format, args...)}
	}
	head := make([]byte, metaLen)
	if _, err := f.ReadAt(head, 0); err != nil {
		return bad("unreadable: %v", err)
	}
	psize := int64(binary.LittleEndian.Uint32(head[metaOffPageSize:]))
	if psize < 512 || psize > 1<<16 || psize&(psize-1) != 0 {
		return bad("page size %d", psize)
	}
	var txn [2]uint64
	for p := range int64(2) {
		m := make([]byte, metaLen)
		if _, err := f.ReadAt(m, p*psize); err != nil {
			return bad("meta page %d unreadable: %v", p, err)
		}
		if magic, ver := binary.LittleEndian.Uint32(m[metaOffMagic:]), binary.LittleEndian.Uint32(m[metaOffMagic+4:]); magic != metaMagic || ver != 1 {
			return bad("meta page %d: magic %#x version %d", p, magic, ver)
		}
		if ps := int64(binary.LittleEndian.Uint32(m[metaOffPageSize:])); ps != psize {
			return bad("meta page %d: page size %d, page 0 says %d", p, ps, psize)
		}
		last := binary.LittleEndian.Uint64(m[metaOffLastPage:])
		txn[p] = binary.LittleEndian.Uint64(m[metaOffTxnID:])
		if txn[p]%2 != uint64(p) {
			return bad("meta page %d holds txnid %d (page %d holds the odd/even ones)", p, txn[p], txn[p]%2)
		}
		if last >= 2 && last >= uint64(fi.Size()/psize) {
			return bad("meta page %d: last page %d beyond the file (%d bytes)", p, last, fi.Size())
		}
	}
	if d := int64(txn[0]) - int64(txn[1]); d != 1 && d != -1 {
		return bad("txnids %d and %d are not consecutive", txn[0], txn[1])
	}
	return nil
}
