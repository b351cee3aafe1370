package lmdbstore

// Memory-item status (SPEC.md §4, "Supersede, contradict, validity"): a
// layer over the plain reads. Nothing here is stored: an item's status at
// a view is derived from the edges of the two built-in relations the store
// interprets, `supersedes` and `contradicts`, and from the item's valid
// time, so point-in-time reads get it for free. Listing reads keep their
// fast paths and filter their results through Visible afterwards.
//
// A memory item is a node, named by its canonical key, or a kv entry,
// named in edges by its address KVAddress(scope, ns, key) =
// "kv:SCOPE/NS/KEY" (with '%' and '/' inside the parts escaped as %25 and
// %2F). Node keys may not start with "kv:".

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/memctl/memctl/roles"
)

// kvAddrPrefix starts every kv address; node keys may not use it.
const kvAddrPrefix = "kv:"

// The relations the store interprets, by name: `supersedes` is a built-in
// (id 10); `contradicts` is registered by its first use (PutEdge adds it).
const (
	relSupersedes  = roles.RelSupersedes
	relContradicts = roles.RelContradicts
)

var kvAddrEscaper = strings.NewReplacer("%", "%25", "/", "%2F")

// KVAddress is the key that names kv entry scope/ns/key as an edge
// endpoint (SPEC.md §4).
func KVAddress(scope, ns, key string) string {
	return kvAddrPrefix + kvAddrEscaper.Replace(scope) + "/" + kvAddrEscaper.Replace(ns) + "/" + kvAddrEscaper.Replace(key)
}

// ParseKVAddress splits a kv address; ok is false for anything else (a node
// key, or a "kv:" key that is not exactly three escaped parts).
func ParseKVAddress(addr string) (scope, ns, key string, ok bool) {
	rest, found := strings.CutPrefix(addr, kvAddrPrefix)
	if !found {
		return "", "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 {
		return "", "", "", false
	}
	for i, p := range parts {
		u, ok := unescapeKVPart(p)
		if !ok {
			return "", "", "", false
		}
		parts[i] = u
	}
	if KVAddress(parts[0], parts[1], parts[2]) != addr || parts[1] == "" || parts[2] == "" {
		return "", "", "", false // not the one canonical spelling
	}
	return parts[0], parts[1], parts[2], true
}

func unescapeKVPart(p string) (string, bool) {
	if !strings.Contains(p, "%") {
		return p, true
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] != '%' {
			b.WriteByte(p[i])
			continue
		}
		switch {
		case strings.HasPrefix(p[i:], "%25"):
			b.WriteByte('%')
		case strings.HasPrefix(p[i:], "%2F"):
			b.WriteByte('/')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}

// validEndpoint checks an edge endpoint: a "kv:" key must be a kv address.
func validEndpoint(what, key string) error {
	if err := validKey(what, key); err != nil {
		return err
	}
	if strings.HasPrefix(key, kvAddrPrefix) {
		scope, ns, k, ok := ParseKVAddress(key)
		if !ok {
			return fmt.Errorf("%w: %s %q starts with %q but is not a kv address kv:SCOPE/NS/KEY ('%%' and '/' inside a part escaped as %%25 and %%2F)", ErrInvalid, what, key, kvAddrPrefix)
		}
		return validKVKey(scope, ns, k)
	}
	return nil
}

// Supersession is one live `supersedes` edge into an item: By superseded it
// since revision Rev (the revision that created the edge), committed at TS.
type Supersession struct {
	By  string
	Rev Revision
	TS  time.Time
}

// Status is what a read says about a memory item besides its record.
type Status struct {
	// Valid: the item's valid time contains the read's valid-at time
	// (items without validity, and missing nodes, are always valid).
	Valid bool
	// Pending: not valid because its valid time starts after the read's
	// valid-at time (valid_from > valid-at): not yet valid rather than
	// expired.
	Pending bool
	// SupersededBy lists the live `supersedes` edges into the item, by
	// revision then key; empty when the item is not superseded.
	SupersededBy []Supersession
	// Newest is the end of the supersede chain (C when C supersedes B
	// supersedes this item; at each step the superseder whose edge is the
	// newest); "" when the item is not superseded.
	Newest string
	// Contradicts lists, by key, the current items a live `contradicts`
	// edge (either direction) joins this one to. Empty when this item is
	// not current itself: a conflict is flagged until one side is
	// superseded (or expires).
	Contradicts []string
}

// Superseded reports whether a live `supersedes` edge points at the item.
func (s Status) Superseded() bool { return len(s.SupersededBy) > 0 }

// Current: valid and not superseded.
func (s Status) Current() bool { return s.Valid && !s.Superseded() }

// StatusFilter selects which items listing reads show: current ones only,
// unless the Include flags say otherwise.
type StatusFilter struct {
	ValidAt           time.Time // zero: the read's clock
	IncludeSuperseded bool
	IncludeExpired    bool // items whose valid time does not contain ValidAt
}

// Shows reports whether an item with status st passes the filter.
func (f StatusFilter) Shows(st Status) bool {
	return (f.IncludeSuperseded || !st.Superseded()) && (f.IncludeExpired || st.Valid)
}

// Status returns the status of the memory item key (a node key or a kv
// address) at the view, for valid time validAt. Unknown keys have the
// status of an item with no edges: valid, not superseded.
func (r *ReadTxn) Status(key string, at At, validAt time.Time) (Status, error) {
	view, err := r.view(at)
	if err != nil {
		return Status{}, err
	}
	return r.status(key, view, validAt)
}

func (r *ReadTxn) status(key string, view Revision, validAt time.Time) (Status, error) {
	var st Status
	var err error
	if st.Valid, st.Pending, err = r.validAt(key, view, validAt); err != nil {
		return Status{}, err
	}
	if st.SupersededBy, err = r.supersessions(key, view); err != nil {
		return Status{}, err
	}
	if st.Superseded() {
		if st.Newest, err = r.newest(key, view); err != nil {
			return Status{}, err
		}
		return st, nil
	}
	if !st.Valid {
		return st, nil
	}
	st.Contradicts, err = r.contradictions(key, view, validAt)
	return st, err
}

// ValidTime returns the valid time of the memory item key (a node key or
// a kv address) at the view: zero (always valid) for an item with no
// record there.
func (r *ReadTxn) ValidTime(key string, at At) (Validity, error) {
	view, err := r.view(at)
	if err != nil {
		return Validity{}, err
	}
	return r.validTime(key, view)
}

func (r *ReadTxn) validTime(key string, view Revision) (Validity, error) {
	if scope, ns, k, ok := ParseKVAddress(key); ok {
		var rec kvRec
		found, err := r.kvAt(scope, ns, k, view, &rec)
		if err != nil || !found {
			return Validity{}, err
		}
		return rec.valid.api(), nil
	}
	id, known, err := r.idOf(key)
	if err != nil || !known {
		return Validity{}, err
	}
	var rec nodeRec
	found, err := r.nodeAt(id, view, &rec)
	if err != nil || !found {
		return Validity{}, err
	}
	return rec.valid.api(), nil
}

// validAt reports whether the item's valid time contains t (true for an
// item with no record at the view).
func (r *ReadTxn) validAt(key string, view Revision, t time.Time) (valid, pending bool, err error) {
	v, err := r.validTime(key, view)
	if err != nil {
		return false, false, err
	}
	if v.Contains(t) {
		return true, false, nil
	}
	return false, !v.From.IsZero() && t.Before(v.From), nil
}

// builtinRel resolves a relation the store interprets by name (ok false
// when it is not registered: `contradicts` before its first use).
func (r *ReadTxn) builtinRel(name string) (RelID, bool, error) {
	rel, ok, err := r.relationNamed(name)
	return rel.ID, ok, err
}

// peers lists the live edges of relation relName into (out=false) or out
// of key at the view, as (peer key, adjacency entry).
func (r *ReadTxn) peers(key, relName string, out bool, view Revision) ([]string, []EdgeRef, error) {
	rel, ok, err := r.builtinRel(relName)
	if err != nil || !ok {
		return nil, nil, err
	}
	id, known, err := r.idOf(key)
	if err != nil || !known {
		return nil, nil, err
	}
	var refs []EdgeRef
	if err := r.scanAdj(out, id, rel, view, func(e EdgeRef) bool { refs = append(refs, e); return true }); err != nil {
		return nil, nil, err
	}
	keys := make([]string, len(refs))
	for i, e := range refs {
		if keys[i], err = r.keyOf(e.Peer); err != nil {
			return nil, nil, err
		}
	}
	return keys, refs, nil
}

// supersessions lists the live supersedes edges into key, by creation
// revision then key.
func (r *ReadTxn) supersessions(key string, view Revision) ([]Supersession, error) {
	keys, refs, err := r.peers(key, relSupersedes, false, view)
	if err != nil || len(keys) == 0 {
		return nil, err
	}
	dst, _, err := r.idOf(key)
	if err != nil {
		return nil, err
	}
	out := make([]Supersession, len(keys))
	for i, by := range keys {
		var rec edgeRec
		found, err := r.edgeAt(refs[i].Peer, refs[i].Rel, dst, view, &rec)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, &CorruptionError{dbEdges, edgeKey(refs[i].Peer, refs[i].Rel, dst), "live adjacency entry without a live e record"}
		}
		out[i] = Supersession{By: by, Rev: rec.createdRev, TS: nsTime(rec.createdTS)}
	}
	slices.SortFunc(out, func(a, b Supersession) int {
		if a.Rev != b.Rev {
			return cmpRev(a.Rev, b.Rev)
		}
		return strings.Compare(a.By, b.By)
	})
	return out, nil
}

func cmpRev(a, b Revision) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// maxChain bounds a supersede chain walk (writes refuse cycles, so this is
// only a guard against a damaged store).
const maxChain = 1 << 16

// newest follows supersedes edges backwards from key to the item nothing
// supersedes, taking at each step the superseder with the newest edge
// (greatest revision, then smallest key).
func (r *ReadTxn) newest(key string, view Revision) (string, error) {
	seen := map[string]bool{key: true}
	for range maxChain {
		keys, refs, err := r.peers(key, relSupersedes, false, view)
		if err != nil {
			return "", err
		}
		if len(keys) == 0 {
			return key, nil
		}
		best := 0
		for i := 1; i < len(keys); i++ {
			if refs[i].Rev > refs[best].Rev || refs[i].Rev == refs[best].Rev && keys[i] < keys[best] {
				best = i
			}
		}
		if seen[keys[best]] {
			return key, nil // a cycle (only in a damaged store): stop where it closes
		}
		key = keys[best]
		seen[key] = true
	}
	return key, nil
}

// contradictions lists the current items joined to key by a live
// contradicts edge in either direction, sorted, without duplicates.
func (r *ReadTxn) contradictions(key string, view Revision, validAt time.Time) ([]string, error) {
	var all []string
	for _, out := range []bool{true, false} {
		keys, _, err := r.peers(key, relContradicts, out, view)
		if err != nil {
			return nil, err
		}
		all = append(all, keys...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	var current []string
	for _, k := range all {
		if k == key {
			continue
		}
		sup, err := r.supersessions(k, view)
		if err != nil {
			return nil, err
		}
		if len(sup) > 0 {
			continue
		}
		ok, _, err := r.validAt(k, view, validAt)
		if err != nil {
			return nil, err
		}
		if ok {
			current = append(current, k)
		}
	}
	return current, nil
}

// Visible reports whether the item key passes f at the view (the filter
// listing reads apply).
func (r *ReadTxn) Visible(key string, at At, f StatusFilter) (bool, error) {
	if f.IncludeSuperseded && f.IncludeExpired {
		return true, nil
	}
	view, err := r.view(at)
	if err != nil {
		return false, err
	}
	validAt := f.ValidAt
	if validAt.IsZero() {
		validAt = r.s.clock()
	}
	if !f.IncludeExpired {
		ok, _, err := r.validAt(key, view, validAt)
		if err != nil || !ok {
			return false, err
		}
	}
	if !f.IncludeSuperseded {
		keys, _, err := r.peers(key, relSupersedes, false, view)
		if err != nil || len(keys) > 0 {
			return false, err
		}
	}
	return true, nil
}

// checkSupersede refuses a supersedes edge src -> dst that would make an
// item supersede itself, directly or through a chain: it walks the
// supersedes out-edges from dst (inside the write transaction, so its own
// writes count) looking for src.
func (tx *WriteTxn) checkSupersede(srcKey string, src NodeID, dstKey string, dst NodeID, rel RelID) error {
	if src == dst {
		return fmt.Errorf("%w: %s cannot supersede itself", ErrInvalid, srcKey)
	}
	seen := map[NodeID]bool{dst: true}
	queue := []NodeID{dst}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		var next []NodeID
		if err := tx.r.scanAdj(true, n, rel, Revision(math.MaxUint64), func(e EdgeRef) bool {
			next = append(next, e.Peer)
			return true
		}); err != nil {
			return tx.fail(err)
		}
		for _, p := range next {
			if p == src {
				return fmt.Errorf("%w: %s already supersedes %s (directly or through a chain); delete that supersedes edge first", ErrInvalid, dstKey, srcKey)
			}
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return nil
}
