package peers

// hopScratch is the reusable state of a three-hop breadth-first search
// over node names of type K: native ids (memctl's store, whose adjacency
// holds ids) or canonical keys (bbolt and raw LMDB, whose edge keys end
// with the peer's key; the strings alias the read transaction's memory and
// are never read after it ends: the next search starts by clearing them).
type hopScratch[K comparable] struct {
	seen      map[K]struct{}
	all       []K // every node seen, in discovery order
	cur, next []K
}

// HopScratch searches over native ids; KeyHopScratch over keys.
type (
	HopScratch    = hopScratch[uint64]
	KeyHopScratch = hopScratch[string]
)

// ThreeHop visits the distinct nodes within three out-hops of start, start
// included, then calls each for every one of them in discovery order, and
// returns how many there were. scan must call emit for every out-neighbour
// of a node.
func (h *hopScratch[K]) ThreeHop(start K, scan func(node K, emit func(peer K)) error, each func(node K) error) (int, error) {
	if h.seen == nil {
		h.seen = make(map[K]struct{}, 1024)
	}
	clear(h.seen)
	h.seen[start] = struct{}{}
	h.all = append(h.all[:0], start)
	h.cur = append(h.cur[:0], start)
	emit := func(peer K) {
		if _, ok := h.seen[peer]; !ok {
			h.seen[peer] = struct{}{}
			h.next = append(h.next, peer)
			h.all = append(h.all, peer)
		}
	}
	for depth := 0; depth < 3 && len(h.cur) > 0; depth++ {
		h.next = h.next[:0]
		for _, n := range h.cur {
			if err := scan(n, emit); err != nil {
				return 0, err
			}
		}
		h.cur, h.next = h.next, h.cur
	}
	for _, n := range h.all {
		if err := each(n); err != nil {
			return 0, err
		}
	}
	return len(h.all), nil
}

// visit is f as ThreeHop's per-node callback.
func (f KeyFunc) visit(key string) error { f(key); return nil }
