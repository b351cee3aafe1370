package lmdbstore

// A memory fault inside LMDB's C code (a cursor or a put following a
// damaged page) cannot be recovered by Go: the runtime crashes with a stack
// trace. The Go runtime forwards synchronous signals that arrive while C
// code runs to the handler that was installed before it started, so a C
// constructor installs one for SIGSEGV and SIGBUS that prints one line and
// exits 3 (corruption, SPEC §6.5). Faults in Go code never reach it: the
// runtime handles those (SetPanicOnFault, nil dereferences).
//
// LMDB's own consistency assertions (mdb_assert) call abort(), which the
// runtime does not forward; an assert callback registered on every
// environment prints LMDB's message on the same one line and exits 3 first.
// Other aborts inside LMDB (the C library's own checks, e.g. a memcpy
// overflow while splitting a damaged page) raise SIGABRT, which the Go
// runtime handles itself (it never forwards it): a handler installed after
// the runtime's, from init, ends the process the same way. Go raises
// SIGABRT only for GOTRACEBACK=crash dumps, which memctl does not use.

/*
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void memctl_c_fault(int sig, siginfo_t *info, void *uctx) {
	(void)uctx;
	static const char hex[] = "0123456789abcdef";
	char buf[192];
	int n = 0;
	const char *a = "memctl: corrupt store: ";
	const char *s = sig == SIGBUS ? "SIGBUS" : "SIGSEGV";
	const char *b = " inside LMDB at 0x";
	const char *c = " (a damaged page of data.mdb); run memctl check\n";
	for (const char *p = a; *p; p++) buf[n++] = *p;
	for (const char *p = s; *p; p++) buf[n++] = *p;
	for (const char *p = b; *p; p++) buf[n++] = *p;
	unsigned long addr = (unsigned long)info->si_addr;
	for (int i = (int)sizeof(addr) * 2 - 1; i >= 0; i--) buf[n++] = hex[(addr >> (4 * i)) & 0xf];
	for (const char *p = c; *p; p++) buf[n++] = *p;
	ssize_t w = write(2, buf, n);
	(void)w;
	_exit(3);
}

extern int mdb_env_set_assert(void *env, void (*func)(void *env, const char *msg));

static void memctl_lmdb_assert(void *env, const char *msg) {
	(void)env;
	const char *a = "memctl: corrupt store: LMDB assertion failed on a damaged page of data.mdb (";
	const char *c = "); run memctl check\n";
	ssize_t w = write(2, a, strlen(a));
	w = write(2, msg, strlen(msg));
	w = write(2, c, strlen(c));
	(void)w;
	_exit(3);
}

static int memctl_set_assert(void *env) { return mdb_env_set_assert(env, memctl_lmdb_assert); }

static void memctl_c_abort(int sig) {
	(void)sig;
	const char *a = "memctl: corrupt store: LMDB aborted (SIGABRT) on a damaged page of data.mdb; run memctl check\n";
	ssize_t w = write(2, a, strlen(a));
	(void)w;
	_exit(3);
}

static void memctl_install_abort_handler(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = memctl_c_abort;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGABRT, &sa, NULL);
}

__attribute__((constructor)) static void memctl_install_c_fault_handler(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = memctl_c_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}
*/
import "C"

import (
	"github.com/PowerDNS/lmdb-go/lmdb"
)

func init() { C.memctl_install_abort_handler() }

// setAssertHandler registers the assert callback on env. lmdb-go keeps the
// MDB_env pointer unexported (field _env of lmdb.Env, v1.9.4, pinned; lmdbHandle).
func setAssertHandler(env *lmdb.Env) {
	p, ok := lmdbHandle(env, "_env")
	if !ok {
		return // another lmdb-go layout: keep LMDB's default (abort)
	}
	C.memctl_set_assert(p)
}
