package contextpack

import (
	"sync"

	"github.com/memctl/memctl/bpe"
)

// maxMemoTokens bounds the parts a tokenMemo keeps.
const maxMemoTokens = 1 << 16

// tokenMemo keeps the o200k counts of the line parts that packs repeat (a
// related item's key and place, its provenance: bpe.Separate lets them be
// counted apart from the score), so that a long-lived Assembler (the MCP
// server) counts each once instead of in every pack that considers the
// item: neighbouring targets share most of their related items, and
// counting their lines was a fifth of a pack on the Go standard library.
// A count depends on the text alone, so nothing invalidates it; a full
// memo starts over.
type tokenMemo struct {
	mu     sync.Mutex
	counts map[string]int
}

// count is enc.Count(s), kept (a nil memo keeps nothing).
func (m *tokenMemo) count(enc *bpe.Encoding, s string) int {
	if m == nil {
		return enc.Count(s)
	}
	m.mu.Lock()
	n, ok := m.counts[s]
	m.mu.Unlock()
	if ok {
		return n
	}
	n = enc.Count(s)
	m.mu.Lock()
	if m.counts == nil || len(m.counts) >= maxMemoTokens {
		m.counts = make(map[string]int)
	}
	m.counts[s] = n
	m.mu.Unlock()
	return n
}
