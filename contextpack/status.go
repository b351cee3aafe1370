package contextpack

import (
	"encoding/json"
	"time"

	"github.com/memctl/memctl/lmdbstore"
)

// Status is what a pack needs to know about a memory item (a policy node
// or kv entry) at the view: superseded items and expired ones are history,
// hidden unless Request.All.
type Status struct {
	SupersededBy string   // the newest item that supersedes it; "" when current
	Expired      bool     // its valid time does not contain Request.ValidAt
	Contradicts  []string // current items it conflicts with
}

// Hidden reports whether the item is history by default.
func (s Status) Hidden() bool { return s.SupersededBy != "" || s.Expired }

// StatusReader says what the store holds about an item's supersession and
// validity. key is a node key or a kv address (KVAddress). payload is the
// item's payload at the view, for readers that look into it.
type StatusReader interface {
	Status(r *lmdbstore.ReadTxn, key string, payload json.RawMessage, at lmdbstore.At, validAt time.Time) (Status, error)
}

// KVAddress names kv entry scope/ns/key as an edge endpoint: "kv:" +
// scope/ns/key with '%' and '/' inside the parts escaped as %25 and %2F
// (the convention of the store's supersede semantics, SPEC.md §11.3).
func KVAddress(scope, ns, key string) string {
	esc := func(s string) string {
		out := make([]byte, 0, len(s))
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '%':
				out = append(out, "%25"...)
			case '/':
				out = append(out, "%2F"...)
			default:
				out = append(out, s[i])
			}
		}
		return string(out)
	}
	return "kv:" + esc(scope) + "/" + esc(ns) + "/" + esc(key)
}

// EdgeStatus is the StatusReader of stores without built-in supersede
// semantics: an item is superseded when a live `supersedes` edge points at
// it (following the chain to its newest item), contradicted by live
// `contradicts` edges either way (when the relation exists), and expired
// when its payload holds "valid_until" (RFC 3339) at or before validAt, or
// "valid_from" after it.
type EdgeStatus struct{}

// Status implements StatusReader.
func (EdgeStatus) Status(r *lmdbstore.ReadTxn, key string, payload json.RawMessage, at lmdbstore.At, validAt time.Time) (Status, error) {
	var st Status
	st.Expired = payloadExpired(payload, validAt)
	newest := ""
	cur := key
	for range 64 { // chains longer than this are cut (and cycles stop)
		by, err := liveSource(r, cur, "supersedes", at)
		if err != nil {
			return Status{}, err
		}
		if by == "" || by == key {
			break
		}
		newest, cur = by, by
	}
	st.SupersededBy = newest
	for _, out := range []bool{false, true} {
		es, err := edgesOf(r, key, "contradicts", out, at)
		if err != nil {
			return Status{}, err
		}
		for _, e := range es {
			k, err := r.KeyOf(e.Peer)
			if err != nil {
				return Status{}, err
			}
			st.Contradicts = append(st.Contradicts, k)
		}
	}
	return st, nil
}

// liveSource is the source of the newest live rel edge into key ("" if
// none).
func liveSource(r *lmdbstore.ReadTxn, key, rel string, at lmdbstore.At) (string, error) {
	es, err := edgesOf(r, key, rel, false, at)
	if err != nil || len(es) == 0 {
		return "", err
	}
	best := es[0]
	for _, e := range es[1:] {
		if e.Rev > best.Rev {
			best = e
		}
	}
	return r.KeyOf(best.Peer)
}

// payloadExpired applies the payload validity convention of EdgeStatus.
func payloadExpired(payload json.RawMessage, t time.Time) bool {
	var v struct {
		From  string `json:"valid_from"`
		Until string `json:"valid_until"`
	}
	if len(payload) == 0 || payload[0] != '{' || json.Unmarshal(payload, &v) != nil {
		return false
	}
	if u, err := time.Parse(time.RFC3339Nano, v.Until); err == nil && !t.Before(u) {
		return true
	}
	if f, err := time.Parse(time.RFC3339Nano, v.From); err == nil && t.Before(f) {
		return true
	}
	return false
}
