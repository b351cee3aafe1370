package treesitter

/*
#include <stddef.h>
void ts_set_allocator(void *(*new_malloc)(size_t), void *(*new_calloc)(size_t, size_t),
	void *(*new_realloc)(void *, size_t), void (*new_free)(void *));
static void memctl_ts_libc_allocator(void) { ts_set_allocator(NULL, NULL, NULL, NULL); }
*/
import "C"

// useLibcAllocator makes tree-sitter allocate with the C library's malloc
// directly. go-tree-sitter's default routes every allocation of the C
// library through a Go callback that calls that same malloc (so memory is
// compatible either way); the round trip cost about a sixth of the
// parsing time.
func useLibcAllocator() { C.memctl_ts_libc_allocator() }
