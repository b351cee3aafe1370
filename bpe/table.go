package bpe

// The vocabulary table, o200k_base.bin, embedded in the binary and read in
// place (nothing is built at start-up). Little-endian throughout:
//
//	0   "BPE1"
//	4   u32 N      tokens; ids are 0..N-1 and a token's id is its merge rank
//	8   u32 S      hash slots, a power of two ≥ 2N
//	12  u32 B      bytes of token text
//	16  u32 × N+1  offsets: token id's bytes are text[off[id]:off[id+1]]
//	    u32 × S    slots: 0 empty, else id+1; FNV-1a 32 of the token's bytes
//	               masked to S-1, linear probing
//	    B bytes    text: the tokens' bytes in id order
//
// gen_table.go writes it from github.com/tiktoken-go/tokenizer; the tests
// check every token against that library.

import (
	_ "embed"
	"errors"
)

//go:generate go run gen_table.go

//go:embed o200k_base.bin
var o200kBaseTable string

// table is a view of one embedded table.
type table struct {
	raw     string
	n, mask uint32
	offs    string // (n+1) u32
	slots   string // S u32
	text    string
}

func u32(s string, i uint32) uint32 {
	_ = s[i+3]
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

var errTable = errors.New("bpe: malformed vocabulary table")

func newTable(raw string) (table, error) {
	if len(raw) < 16 || raw[:4] != "BPE1" {
		return table{}, errTable
	}
	n, s, b := u32(raw, 4), u32(raw, 8), u32(raw, 12)
	if s == 0 || s&(s-1) != 0 || s < n {
		return table{}, errTable
	}
	want := 16 + 4*(uint64(n)+1) + 4*uint64(s) + uint64(b)
	if uint64(len(raw)) != want {
		return table{}, errTable
	}
	t := table{raw: raw, n: n, mask: s - 1}
	o := uint32(16)
	t.offs = raw[o : o+4*(n+1)]
	o += 4 * (n + 1)
	t.slots = raw[o : o+4*s]
	o += 4 * s
	t.text = raw[o:]
	if u32(t.offs, 4*n) != b {
		return table{}, errTable
	}
	return t, nil
}

// token is the bytes of token id.
func (t *table) token(id uint32) string {
	return t.text[u32(t.offs, 4*id):u32(t.offs, 4*id+4)]
}

// rank is the id of the token whose bytes are s.
func (t *table) rank(s string) (uint32, bool) {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		v := u32(t.slots, 4*i)
		if v == 0 {
			return 0, false
		}
		if v-1 < t.n && t.token(v-1) == s {
			return v - 1, true
		}
	}
}
