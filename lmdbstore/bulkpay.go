package lmdbstore

// A bulk load's payloads, end to end in large blocks that hold no
// pointer: an operation keeps a payRef (block, offset, length), not a
// slice of its own. A load of a large tree holds hundreds of thousands of
// payloads until it commits; as slices they were as many objects for the
// collector to find and scan at every cycle (and each rounded up to its
// size class), as a payRef they are 12 bytes of plain data. The arena
// copies what it is given, so a caller's buffer is never kept alive by
// the load.

// payBlock is the size of an arena block; a payload larger than that gets
// a block of its own.
const payBlock = 1 << 20

// payArena holds payloads appended end to end.
type payArena struct {
	blocks [][]byte
}

// payRef names a payload of an arena; n 0 is no payload (an empty payload
// and none store alike: canonicalPayload makes both nil).
type payRef struct {
	blk, off, n uint32
}

// add copies p into the arena.
func (a *payArena) add(p []byte) payRef {
	if len(p) == 0 {
		return payRef{}
	}
	last := len(a.blocks) - 1
	if last < 0 || cap(a.blocks[last])-len(a.blocks[last]) < len(p) {
		a.blocks = append(a.blocks, make([]byte, 0, max(payBlock, len(p))))
		last++
	}
	b := a.blocks[last]
	a.blocks[last] = append(b, p...)
	return payRef{blk: uint32(last), off: uint32(len(b)), n: uint32(len(p))}
}

// bytes is the payload r names (nil for none), a view into the arena that
// its caller must not change.
func (a *payArena) bytes(r payRef) []byte {
	if r.n == 0 {
		return nil
	}
	return a.blocks[r.blk][r.off : r.off+r.n : r.off+r.n]
}

// size is the sum of the payloads' lengths, an upper bound counted by
// block.
func (a *payArena) size() int64 {
	var n int64
	for _, b := range a.blocks {
		n += int64(len(b))
	}
	return n
}
