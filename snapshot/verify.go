package snapshot

import (
	"encoding/json"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Verify checks every section CRC, the zero padding, and every structural
// invariant of the file. It returns the first problem as a *FormatError
// (errors.Is(err, ErrCorrupt)); nil means every accessor returns exactly
// what the writer wrote. Cost: linear in the file, plus O(edges · log
// degree) for the forward/reverse agreement.
func (f *File) Verify() error {
	for _, fn := range []func() error{
		f.verifyChecksums,
		f.verifyStrings,
		f.verifyRelations,
		f.verifyNodes,
		f.verifyPayloads,
		f.verifyForward,
	} {
		if err := fn(); err != nil {
			return err
		}
	}
	// The reverse CSR's check reads the forward CSR, checked above, and
	// nothing the key order's and trigrams' checks read, nor they what it
	// reads: it runs beside them, and the first failure in this order is
	// the one reported, as if they had run one after the other.
	reverse := make(chan error, 1)
	go func() { reverse <- f.verifyReverse() }()
	keys := f.verifyKeyOrder()
	if keys == nil {
		keys = f.verifyTrigrams()
	}
	if err := <-reverse; err != nil {
		return err
	}
	if keys != nil {
		return keys
	}
	for _, fn := range []func() error{f.verifyPageRank, f.verifySearch} {
		if err := fn(); err != nil {
			return err
		}
	}
	return nil
}

func (f *File) verifyChecksums() error {
	next := uint64(HeaderSize)
	for _, s := range f.Sections() {
		// Padding before the section is zero.
		for i := next; i < s.Offset; i++ {
			if f.data[i] != 0 {
				return formatErr("padding", int64(i), "padding byte before section %s is %#x, want 0", s.Kind, f.data[i])
			}
		}
		if got := crc(f.data[s.Offset : s.Offset+s.Length]); got != s.CRC {
			return formatErr(s.Kind.String(), int64(s.Offset), "CRC mismatch: stored %08x, computed %08x", s.CRC, got)
		}
		next = s.Offset + s.Length
	}
	for i := next; i < f.hdr.DirOffset; i++ {
		if f.data[i] != 0 {
			return formatErr("padding", int64(i), "padding byte before the directory is %#x, want 0", f.data[i])
		}
	}
	return nil
}

// monotonic checks that offs starts at 0, never decreases and ends at last.
func (f *File) monotonic(k Kind, offs []uint64, last uint64) error {
	if len(offs) == 0 || offs[0] != 0 {
		return f.sectionErr(k, 0, 8, "first offset is not 0")
	}
	for i := 1; i < len(offs); i++ {
		if offs[i] < offs[i-1] {
			return f.sectionErr(k, uint64(i), 8, "offset %d (%d) is below the previous one (%d)", i, offs[i], offs[i-1])
		}
	}
	if offs[len(offs)-1] != last {
		return f.sectionErr(k, uint64(len(offs)-1), 8, "last offset %d, want %d", offs[len(offs)-1], last)
	}
	return nil
}

func (f *File) verifyStrings() error {
	if err := f.monotonic(KindStrOffsets, f.strOffsets, uint64(len(f.strBytes))); err != nil {
		return err
	}
	// The interned strings after the keys are sorted and distinct (that is
	// what makes their ids deterministic) and include "".
	n := f.NumNodes()
	var prev string
	for id := n; id < f.NumStrings(); id++ {
		s, _ := f.String(uint32(id))
		if id > n && strings.Compare(prev, s) >= 0 {
			return f.sectionErr(KindStrOffsets, uint64(id), 8, "interned string %d is not above the previous one", id)
		}
		prev = s
	}
	if f.NumStrings() <= n {
		return f.sectionErr(KindStrOffsets, 0, 0, "%d strings for %d node keys: the empty string is not interned", f.NumStrings(), n)
	}
	if s, _ := f.String(uint32(n)); s != "" {
		return f.sectionErr(KindStrOffsets, uint64(n), 8, "the first interned string is not empty")
	}
	return nil
}

func (f *File) checkString(k Kind, elem uint64, size uint64, id uint32, interned bool) error {
	lo := uint64(0)
	if interned {
		lo = uint64(f.NumNodes())
	}
	if uint64(id) < lo || uint64(id) >= uint64(f.NumStrings()) {
		return f.sectionErr(k, elem, size, "string id %d out of range [%d, %d)", id, lo, f.NumStrings())
	}
	return nil
}

func (f *File) verifyRelations() error {
	for i, r := range f.relations {
		if r.ID == 0 || (i > 0 && r.ID <= f.relations[i-1].ID) {
			return f.sectionErr(KindRelations, uint64(i), relationSize, "relation id %d is zero or not ascending", r.ID)
		}
		if err := f.checkString(KindRelations, uint64(i), relationSize, r.Name, true); err != nil {
			return err
		}
		if !finite32(r.DefaultWeight) {
			return f.sectionErr(KindRelations, uint64(i), relationSize, "default weight is not finite")
		}
		if r.Flags&^(RelBidirectional|RelInhibitory|RelRoleMask) != 0 {
			return f.sectionErr(KindRelations, uint64(i), relationSize, "unknown relation flags %#x", r.Flags)
		}
	}
	return nil
}

func (f *File) verifyNodes() error {
	logical := f.hdr.Logical()
	for i, id := range f.nodeIDs {
		if i > 0 && id <= f.nodeIDs[i-1] {
			return f.sectionErr(KindNodeIDs, uint64(i), 8, "node id %d is not above the previous one", id)
		}
	}
	for i := range f.nodes {
		r := &f.nodes[i]
		bad := func(format string, args ...any) error {
			return f.sectionErr(KindNodes, uint64(i), nodeRowSize, "node %d: "+format, append([]any{i}, args...)...)
		}
		for _, id := range []uint32{r.Type, r.Scope, r.RunID, r.TaskID} {
			if err := f.checkString(KindNodes, uint64(i), nodeRowSize, id, true); err != nil {
				return err
			}
		}
		if r.Flags&^knownNodeFlags != 0 || r.Reserved != 0 {
			return bad("unknown flags %#x or reserved %#x", r.Flags, r.Reserved)
		}
		if err := f.verifyValidity(r, bad); err != nil {
			return err
		}
		history := r.CreatedTS != 0 || r.UpdatedTS != 0 || r.CreatedRev != 0 || r.Rev != 0
		empty := uint32(f.NumNodes())
		if r.Flags&NodeFlagMissing != 0 {
			if history || r.Type != empty || r.Scope != empty || r.RunID != empty || r.TaskID != empty ||
				r.Flags&(NodeFlagValidFrom|NodeFlagValidUntil|NodeFlagExpired) != 0 {
				return bad("a missing node carries attributes")
			}
			if f.payloadOffsets[i] != f.payloadOffsets[i+1] {
				return bad("a missing node has a payload")
			}
			continue
		}
		if logical {
			if history || r.RunID != empty || r.TaskID != empty {
				return bad("history metadata in a logical export")
			}
			continue
		}
		if r.CreatedRev > r.Rev || r.Rev > f.hdr.Revision {
			return bad("revisions created %d, updated %d, snapshot %d out of order", r.CreatedRev, r.Rev, f.hdr.Revision)
		}
		if ts, ok := f.RevisionTime(r.CreatedRev); !ok || ts != r.CreatedTS {
			return bad("created_ts %d does not match revision %d", r.CreatedTS, r.CreatedRev)
		}
		if ts, ok := f.RevisionTime(r.Rev); !ok || ts != r.UpdatedTS {
			return bad("updated_ts %d does not match revision %d", r.UpdatedTS, r.Rev)
		}
	}
	for i, rt := range f.revTimes {
		if i > 0 && rt.Rev <= f.revTimes[i-1].Rev {
			return f.sectionErr(KindRevTimes, uint64(i), revTimeSize, "revision %d is not above the previous one", rt.Rev)
		}
		if rt.Rev > f.hdr.Revision {
			return f.sectionErr(KindRevTimes, uint64(i), revTimeSize, "revision %d is after the snapshot's %d", rt.Rev, f.hdr.Revision)
		}
	}
	if logical && (len(f.revTimes) > 0 || f.hdr.Revision != 0 || f.hdr.CommitTime != 0 || f.hdr.ValidAt != 0) {
		return formatErr("header", 16, "history metadata in a logical export")
	}
	return nil
}

// verifyValidity checks a node row's valid time and status flags: a bound
// is non-zero only when flagged, until is after from, superseded and
// expired appear only in files that include such items, and (outside
// logical exports, which have no valid_at) expired is exactly "the valid
// time does not contain the header's valid_at".
func (f *File) verifyValidity(r *NodeRow, bad func(string, ...any) error) error {
	hasFrom, hasUntil := r.Flags&NodeFlagValidFrom != 0, r.Flags&NodeFlagValidUntil != 0
	if !hasFrom && r.ValidFrom != 0 || !hasUntil && r.ValidUntil != 0 {
		return bad("a valid-time bound without its flag")
	}
	if hasFrom && hasUntil && r.ValidUntil <= r.ValidFrom {
		return bad("valid_until %d is not after valid_from %d", r.ValidUntil, r.ValidFrom)
	}
	if r.Flags&NodeFlagSuperseded != 0 && f.hdr.Flags&FlagIncludesSuperseded == 0 {
		return bad("superseded in a file that excludes superseded items")
	}
	expired := r.Flags&NodeFlagExpired != 0
	if expired && f.hdr.Flags&FlagIncludesExpired == 0 {
		return bad("expired in a file that excludes expired items")
	}
	if r.Flags&NodeFlagMissing == 0 && !f.hdr.Logical() {
		at := f.hdr.ValidAt
		valid := (!hasFrom || at >= r.ValidFrom) && (!hasUntil || at < r.ValidUntil)
		if expired == valid {
			return bad("expired flag %v disagrees with the valid time at valid_at %d", expired, at)
		}
	}
	return nil
}

func (f *File) verifyPayloads() error {
	if err := f.monotonic(KindPayloadOffsets, f.payloadOffsets, uint64(len(f.payloads))); err != nil {
		return err
	}
	for i := range f.nodeIDs {
		p, err := f.Payload(uint32(i))
		if err != nil {
			return err
		}
		enc, data, _ := f.PayloadEntry(uint32(i))
		off := int64(f.secs[KindPayloads].Offset + f.payloadOffsets[i])
		if len(data) == 0 && f.payloadOffsets[i] != f.payloadOffsets[i+1] {
			return formatErr(KindPayloads.String(), off, "payload %d is an empty entry", i)
		}
		if enc == PayloadZstd && len(p) <= len(data) {
			return formatErr(KindPayloads.String(), off, "payload %d is compressed but not smaller", i)
		}
		if len(p) > 0 && !json.Valid(p) {
			return formatErr(KindPayloads.String(), off, "payload %d is not valid JSON", i)
		}
	}
	return nil
}

func (f *File) verifyForward() error {
	n, m := uint32(f.NumNodes()), uint64(f.NumEdges())
	if err := f.monotonic(KindFwdOffsets, f.fwdOffsets, m); err != nil {
		return err
	}
	logical := f.hdr.Logical()
	// The relation and revision last found in their tables: an out-list
	// is sorted by relation, and revisions repeat, so most edges search
	// neither table.
	var knownRel uint32
	var knownRev uint64
	relKnown, revKnown := false, false
	for src := uint32(0); src < n; src++ {
		lo, hi := f.fwdOffsets[src], f.fwdOffsets[src+1]
		for p := lo; p < hi; p++ {
			t, r := f.fwdTargets[p], f.fwdRels[p]
			if t >= n {
				return f.sectionErr(KindFwdTargets, p, 4, "target %d out of range [0, %d)", t, n)
			}
			if p > lo && (r < f.fwdRels[p-1] || (r == f.fwdRels[p-1] && t <= f.fwdTargets[p-1])) {
				return f.sectionErr(KindFwdTargets, p, 4, "out-list of node %d not strictly sorted by (rel, target)", src)
			}
			if !relKnown || r != knownRel {
				if _, ok := f.RelationByID(r); !ok {
					return f.sectionErr(KindFwdRels, p, 4, "relation %d not in the relation table", r)
				}
				knownRel, relKnown = r, true
			}
			if !finite32(f.fwdWeights[p]) {
				return f.sectionErr(KindFwdWeights, p, 4, "weight is not finite")
			}
			rev := f.fwdRevs[p]
			if logical {
				if rev != 0 {
					return f.sectionErr(KindFwdRevs, p, 8, "revision in a logical export")
				}
			} else if !revKnown || rev != knownRev {
				if _, ok := f.RevisionTime(rev); !ok {
					return f.sectionErr(KindFwdRevs, p, 8, "revision %d has no commit time", rev)
				}
				knownRev, revKnown = rev, true
			}
		}
	}
	return nil
}

// verifyReverse checks that the reverse CSR is exactly the forward CSR
// transposed: every in-edge names an existing forward edge with the same
// weight, in-lists are strictly sorted by (source, rel), and the totals are
// equal — together a bijection.
func (f *File) verifyReverse() error {
	n, m := uint32(f.NumNodes()), uint64(f.NumEdges())
	if err := f.monotonic(KindRevOffsets, f.revOffsets, m); err != nil {
		return err
	}
	for dst := uint32(0); dst < n; dst++ {
		lo, hi := f.revOffsets[dst], f.revOffsets[dst+1]
		for p := lo; p < hi; p++ {
			s, r := f.revSources[p], f.revRels[p]
			if s >= n {
				return f.sectionErr(KindRevSources, p, 4, "source %d out of range [0, %d)", s, n)
			}
			if p > lo && (s < f.revSources[p-1] || (s == f.revSources[p-1] && r <= f.revRels[p-1])) {
				return f.sectionErr(KindRevSources, p, 4, "in-list of node %d not strictly sorted by (source, rel)", dst)
			}
			q, ok, err := f.FindOut(s, r, dst)
			if err != nil {
				return err
			}
			if !ok {
				return f.sectionErr(KindRevSources, p, 4, "in-edge %d -%d-> %d has no forward edge", s, r, dst)
			}
			if math.Float32bits(f.fwdWeights[q]) != math.Float32bits(f.revWeights[p]) {
				return f.sectionErr(KindRevWeights, p, 4, "in-edge weight differs from the forward edge")
			}
		}
	}
	return nil
}

func (f *File) verifyKeyOrder() error {
	n := f.NumNodes()
	seen := make([]uint64, (n+63)/64)
	var prev string
	for i, x := range f.keyOrder {
		if uint64(x) >= uint64(n) || seen[x/64]&(1<<(x%64)) != 0 {
			return f.sectionErr(KindKeyOrder, uint64(i), 4, "entry %d is out of range or repeated", x)
		}
		seen[x/64] |= 1 << (x % 64)
		k, err := f.String(x)
		if err != nil {
			return err
		}
		if i > 0 && strings.Compare(prev, k) >= 0 {
			return f.sectionErr(KindKeyOrder, uint64(i), 4, "keys not strictly ascending at %q", k)
		}
		prev = k
	}
	return nil
}

// verifyTrigrams checks the index is exactly the trigrams of the keys: the
// sorted distinct trigrams of each key each list the node, and the total
// number of postings equals the sum over keys (so nothing extra is listed).
func (f *File) verifyTrigrams() error {
	for j, t := range f.triKeys {
		if t >= 1<<24 || (j > 0 && t <= f.triKeys[j-1]) {
			return f.sectionErr(KindTriKeys, uint64(j), 4, "trigram %#x out of range or not ascending", t)
		}
		if t != TrigramOf(byte(t>>16), byte(t>>8), byte(t)) {
			return f.sectionErr(KindTriKeys, uint64(j), 4, "trigram %#x is not lower-cased", t)
		}
	}
	if err := f.monotonic(KindTriOffsets, f.triOffsets, uint64(len(f.triPostings))); err != nil {
		return err
	}
	for j := range f.triKeys {
		lo, hi := f.triOffsets[j], f.triOffsets[j+1]
		for p := lo; p < hi; p++ {
			if uint64(f.triPostings[p]) >= uint64(f.NumNodes()) || (p > lo && f.triPostings[p] <= f.triPostings[p-1]) {
				return f.sectionErr(KindTriPostings, p, 4, "posting %d out of range or not ascending", f.triPostings[p])
			}
		}
	}
	// Each node's key trigrams must be exactly the postings that name it.
	// Nodes are visited in ascending order, so within each trigram's
	// (ascending) postings the next node expected is at a cursor: one
	// comparison per (node, trigram), no search of the postings and no
	// sort of the key's trigrams (a trigram the key repeats finds the
	// cursor just past this node). Trigrams are found through their top 16
	// bits (byTop), then a short search. The nodes are cut into ranges
	// checked on every core, each range's cursors starting at its first
	// node; the postings consumed, added up, must be all of them.
	byTop := make([]uint32, 1<<16+1)
	for j, t := range f.triKeys {
		byTop[t>>8+1] = uint32(j + 1)
	}
	for h := 1; h < len(byTop); h++ {
		byTop[h] = max(byTop[h], byTop[h-1])
	}
	n := len(f.nodeIDs)
	parts := max(1, min(runtime.GOMAXPROCS(0), n/4096))
	errs := make([]error, parts)
	totals := make([]uint64, parts)
	var wg sync.WaitGroup
	for w := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			totals[w], errs[w] = f.verifyTrigramRange(byTop, w*n/parts, (w+1)*n/parts)
		}()
	}
	wg.Wait()
	var total uint64
	for w := range parts {
		if errs[w] != nil {
			return errs[w]
		}
		total += totals[w]
	}
	if total != uint64(len(f.triPostings)) {
		return f.sectionErr(KindTriPostings, 0, 0, "%d postings, the keys have %d", len(f.triPostings), total)
	}
	return nil
}

// verifyTrigramRange checks the postings of nodes [lo, hi) (see
// verifyTrigrams) and returns how many it consumed.
func (f *File) verifyTrigramRange(byTop []uint32, lo, hi int) (uint64, error) {
	next := make([]uint64, len(f.triKeys))
	for j := range next {
		ps := f.triPostings[f.triOffsets[j]:f.triOffsets[j+1]]
		k, _ := slices.BinarySearch(ps, uint32(lo))
		next[j] = f.triOffsets[j] + uint64(k)
	}
	var total uint64
	for i := lo; i < hi; i++ {
		key, _ := f.String(uint32(i))
		for c := 0; c+3 <= len(key); c++ {
			t := TrigramOf(key[c], key[c+1], key[c+2])
			a, b := byTop[t>>8], byTop[t>>8+1]
			j, ok := slices.BinarySearch(f.triKeys[a:b], t)
			j += int(a)
			if ok && next[j] > f.triOffsets[j] && f.triPostings[next[j]-1] == uint32(i) {
				continue // repeated in this key
			}
			if !ok || next[j] == f.triOffsets[j+1] || f.triPostings[next[j]] > uint32(i) {
				return 0, f.sectionErr(KindTriPostings, 0, 0, "node %d is missing from the postings of trigram %#x", i, t)
			}
			if p := next[j]; f.triPostings[p] < uint32(i) {
				return 0, f.sectionErr(KindTriPostings, p, 4, "posting %d of trigram %#x names a node whose key does not hold it", f.triPostings[p], t)
			}
			next[j]++
			total++
		}
	}
	return total, nil
}

func (f *File) verifyPageRank() error {
	pr, ok := f.PageRank()
	if !ok {
		return nil
	}
	for i, v := range pr {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return f.sectionErr(KindPageRank, uint64(i), 8, "rank %v is not a finite non-negative number", v)
		}
	}
	return nil
}
