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
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"

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
	fe, ok := r.(faultError)
	if !ok {
		return 0, false
	}
	var re runtime.Error
	if !errors.As(fe, &re) || fe.Addr() < minFaultAddr {
		return 0, false
	}
	return fe.Addr(), true
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
// (never a caller's mistake or a transient condition).
var damageErrnos = []lmdb.Errno{lmdb.Corrupted, lmdb.PageNotFound, lmdb.Invalid, lmdb.VersionMismatch, lmdb.Panic, lmdb.BadTxn}

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
