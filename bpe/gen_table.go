//go:build ignore

// gen_table writes o200k_base.bin, the embedded vocabulary table of package
// bpe, from github.com/tiktoken-go/tokenizer (the version pinned in go.mod):
//
//	go generate ./bpe/
//
// The table layout is described in table.go.
package main

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"log"
	"os"

	"github.com/tiktoken-go/tokenizer"
)

func main() {
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		log.Fatal(err)
	}
	// Ids are dense from 0; special tokens are not in the vocabulary, so
	// Decode fails for them and for every id past the last token.
	var toks []string
	for id := 0; ; id++ {
		s, err := enc.Decode([]uint{uint(id)})
		if err != nil {
			break
		}
		toks = append(toks, s)
	}
	n := len(toks)
	slots := 1
	for slots < 2*n {
		slots <<= 1
	}
	var total int
	for _, t := range toks {
		total += len(t)
	}
	le := binary.LittleEndian
	out := make([]byte, 0, 16+4*(n+1)+4*slots+total)
	out = append(out, "BPE1"...)
	out = le.AppendUint32(out, uint32(n))
	out = le.AppendUint32(out, uint32(slots))
	out = le.AppendUint32(out, uint32(total))
	off := 0
	for _, t := range toks {
		out = le.AppendUint32(out, uint32(off))
		off += len(t)
	}
	out = le.AppendUint32(out, uint32(off))
	table := make([]uint32, slots)
	for id, t := range toks {
		h := fnv.New32a()
		h.Write([]byte(t))
		i := h.Sum32() & uint32(slots-1)
		for table[i] != 0 {
			i = (i + 1) & uint32(slots-1)
		}
		table[i] = uint32(id) + 1
	}
	for _, v := range table {
		out = le.AppendUint32(out, v)
	}
	for _, t := range toks {
		out = append(out, t...)
	}
	if err := os.WriteFile("o200k_base.bin", out, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("o200k_base.bin: %d tokens, %d slots, %d bytes\n", n, slots, len(out))
}
