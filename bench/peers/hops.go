package peers

// HopScratch is the reusable state of a three-hop breadth-first search over
// native ids (memctl's store, whose adjacency holds ids).
type HopScratch struct {
	seen      map[uint64]struct{}
	all       []uint64 // every node seen, in discovery order
	cur, next []uint64
}

// ThreeHop visits the distinct nodes within three out-hops of start, start
// included, then calls key for each of them in discovery order, and
// returns how many there were. scan must call emit for every
// out-neighbour of id.
func (h *HopScratch) ThreeHop(start uint64, scan func(id uint64, emit func(peer uint64)) error, key func(id uint64) error) (int, error) {
	if h.seen == nil {
		h.seen = make(map[uint64]struct{}, 1024)
	}
	clear(h.seen)
	h.seen[start] = struct{}{}
	h.all = append(h.all[:0], start)
	h.cur = append(h.cur[:0], start)
	emit := func(peer uint64) {
		if _, ok := h.seen[peer]; !ok {
			h.seen[peer] = struct{}{}
			h.next = append(h.next, peer)
			h.all = append(h.all, peer)
		}
	}
	for depth := 0; depth < 3 && len(h.cur) > 0; depth++ {
		h.next = h.next[:0]
		for _, id := range h.cur {
			if err := scan(id, emit); err != nil {
				return 0, err
			}
		}
		h.cur, h.next = h.next, h.cur
	}
	for _, id := range h.all {
		if err := key(id); err != nil {
			return 0, err
		}
	}
	return len(h.all), nil
}

// KeyHopScratch is the same search over canonical keys (bbolt and raw
// LMDB, whose edge keys end with the peer's key). The strings it holds
// alias the read transaction's memory; they are never read after it ends
// (the next search starts by clearing them).
type KeyHopScratch struct {
	seen      map[string]struct{}
	all       []string
	cur, next []string
}

// ThreeHop visits the distinct keys within three out-hops of start, start
// included, hands each to fn in discovery order and returns how many there
// were. scan must call emit for every out-neighbour of key.
func (h *KeyHopScratch) ThreeHop(start string, scan func(key string, emit func(peer string)) error, fn KeyFunc) (int, error) {
	if h.seen == nil {
		h.seen = make(map[string]struct{}, 1024)
	}
	clear(h.seen)
	h.seen[start] = struct{}{}
	h.all = append(h.all[:0], start)
	h.cur = append(h.cur[:0], start)
	emit := func(peer string) {
		if _, ok := h.seen[peer]; !ok {
			h.seen[peer] = struct{}{}
			h.next = append(h.next, peer)
			h.all = append(h.all, peer)
		}
	}
	for depth := 0; depth < 3 && len(h.cur) > 0; depth++ {
		h.next = h.next[:0]
		for _, k := range h.cur {
			if err := scan(k, emit); err != nil {
				return 0, err
			}
		}
		h.cur, h.next = h.next, h.cur
	}
	for _, k := range h.all {
		fn(k)
	}
	return len(h.all), nil
}
