package lmdbstore

import (
	"runtime/debug"
	"strconv"
	"strings"
)

// LMDB keeps a write transaction's dirty pages in memory (malloc'd, one
// page each) until the transaction holds MDB_IDL_UM_MAX of them, then
// writes the highest-numbered eighth to the file and reuses their memory
// (mdb_page_spill). MDB_IDL_UM_MAX is
// 2^(MDB_IDL_LOGN+1)−1, a compile-time constant of LMDB's C source: 16
// (512 MiB of 4 KiB pages) unless the build defines it. The Makefile
// builds with -DMDB_IDL_LOGN=13 in CGO_CFLAGS (64 MiB): a bulk load into
// an empty store otherwise holds up to 512 MiB of pages that are only
// waiting to be written (SPEC §2, "Bulk loads"). It changes no byte of the
// store, only when pages reach the file.

// defaultIDLLogN is LMDB's MDB_IDL_LOGN when the build sets none.
const defaultIDLLogN = 16

// DirtyPagesMax is the number of dirty pages a write transaction holds in
// memory before LMDB spills some to the file, as the binary was built
// (the CGO_CFLAGS the go command recorded), and that flag's value
// ("" when LMDB's default applies).
func DirtyPagesMax() (pages int, flag string) {
	var cflags string
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "CGO_CFLAGS" {
				cflags = s.Value
			}
		}
	}
	return dirtyPagesMax(cflags)
}

// dirtyPagesMax reads MDB_IDL_LOGN from a C compiler's flags (the last
// -D of it wins, as it does for the compiler).
func dirtyPagesMax(cflags string) (pages int, flag string) {
	logN := defaultIDLLogN
	for _, f := range strings.Fields(cflags) {
		v, ok := strings.CutPrefix(f, "-DMDB_IDL_LOGN=")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(v); err == nil && n > 0 && n < 31 {
			logN, flag = n, f
		}
	}
	return 1<<(logN+1) - 1, flag
}
