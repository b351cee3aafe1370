package freshness

import (
	"encoding/json"
	"errors"
	"path"
	"slices"
	"strings"

	"github.com/memctl/memctl/ingest/codetree"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/roles"
)

// Orphan is a memory item one of whose targets is not live (SPEC.md §9.8):
// the destination of a live memory-role edge, or a canonical key in a live
// kv entry's applies_to, with no live node (or, for a kv address, no live
// entry).
type Orphan struct {
	Item   string `json:"item"`   // the edge's source key, or the kv entry's address
	Via    string `json:"via"`    // the relation, or "applies_to"
	Target string `json:"target"` // the key that is gone
	// DeletedRev is the revision that deleted the target; 0 when it never
	// existed.
	DeletedRev lmdbstore.Revision `json:"deleted_rev"`
	// Nearest is the nearest enclosing live target (NearestLive); "" when
	// none.
	Nearest string `json:"nearest,omitempty"`
}

// Orphans lists every orphan of the view at, sorted by item, via, target.
func Orphans(r *lmdbstore.ReadTxn, at lmdbstore.At) ([]Orphan, error) {
	rels, err := r.Relations()
	if err != nil {
		return nil, err
	}
	memory := map[lmdbstore.RelID]string{}
	var memoryIDs []lmdbstore.RelID
	for _, rel := range rels {
		if rel.Role == roles.Memory {
			memory[rel.ID] = rel.Name
			memoryIDs = append(memoryIDs, rel.ID)
		}
	}
	var out []Orphan
	add := func(item, via, target string) error {
		live, err := isLive(r, target, at)
		if err != nil || live {
			return err
		}
		o := Orphan{Item: item, Via: via, Target: target}
		if o.DeletedRev, err = deletedRev(r, target, at); err != nil {
			return err
		}
		if o.Nearest, err = NearestLive(r, target, at); err != nil {
			return err
		}
		out = append(out, o)
		return nil
	}
	err = r.ScanEdgesOf(at, memoryIDs, func(e lmdbstore.Edge) error {
		name := memory[e.Rel]
		src, err := r.KeyOf(e.Src)
		if err != nil {
			return err
		}
		dst, err := r.KeyOf(e.Dst)
		if err != nil {
			return err
		}
		return add(src, name, dst)
	})
	if err != nil {
		return nil, err
	}
	err = r.ScanKV(at, func(kv lmdbstore.KV) error {
		for _, t := range appliesTo(kv.Payload) {
			if strings.Contains(t, ":") {
				if err := add(kvAddress(kv.Scope, kv.Namespace, kv.Key), "applies_to", t); err != nil {
					return err
				}
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b Orphan) int {
		return strings.Compare(a.Item+"\x00"+a.Via+"\x00"+a.Target, b.Item+"\x00"+b.Via+"\x00"+b.Target)
	})
	return out, err
}

// appliesTo is the applies_to of a kv payload (a string or an array of
// strings; SPEC.md §12.2).
func appliesTo(payload []byte) []string {
	var obj struct {
		AppliesTo json.RawMessage `json:"applies_to"`
	}
	if json.Unmarshal(payload, &obj) != nil || obj.AppliesTo == nil {
		return nil
	}
	var one string
	if json.Unmarshal(obj.AppliesTo, &one) == nil {
		return []string{one}
	}
	var many []string
	json.Unmarshal(obj.AppliesTo, &many)
	return many
}

// kvAddress is SPEC.md §1's kv address.
func kvAddress(scope, ns, key string) string {
	esc := strings.NewReplacer("%", "%25", "/", "%2F")
	return "kv:" + esc.Replace(scope) + "/" + esc.Replace(ns) + "/" + esc.Replace(key)
}

func parseKVAddress(a string) (scope, ns, key string, ok bool) {
	rest, ok := strings.CutPrefix(a, "kv:")
	parts := strings.Split(rest, "/")
	if !ok || len(parts) != 3 {
		return "", "", "", false
	}
	un := strings.NewReplacer("%2F", "/", "%25", "%")
	return un.Replace(parts[0]), un.Replace(parts[1]), un.Replace(parts[2]), true
}

func isLive(r *lmdbstore.ReadTxn, key string, at lmdbstore.At) (bool, error) {
	if scope, ns, k, ok := parseKVAddress(key); ok {
		_, err := r.GetKV(scope, ns, k, at)
		if errors.Is(err, lmdbstore.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	_, err := r.GetNode(key, at)
	if errors.Is(err, lmdbstore.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// versionsUpTo returns the node versions of key with rev at most the view.
func versionsUpTo(r *lmdbstore.ReadTxn, key string, at lmdbstore.At) ([]lmdbstore.Version, error) {
	view, err := r.Resolve(at)
	if err != nil {
		return nil, err
	}
	var vs []lmdbstore.Version
	err = r.NodeVersions(key, func(v lmdbstore.Version) error {
		if v.Rev <= view {
			vs = append(vs, v)
		}
		return nil
	})
	return vs, err
}

func deletedRev(r *lmdbstore.ReadTxn, key string, at lmdbstore.At) (lmdbstore.Revision, error) {
	vs, err := versionsUpTo(r, key, at)
	if err != nil || len(vs) == 0 || !vs[len(vs)-1].Deleted {
		return 0, err
	}
	return vs[len(vs)-1].Rev, nil
}

// NearestLive returns, for a key that is not live at the view, the
// nearest live key enclosing it: where it moved (memctl/moves), else for a
// symbol its file (the last live version's path), for a package its
// directory, for a file or directory each directory above it up to
// `dir:.`. "" when none is live.
func NearestLive(r *lmdbstore.ReadTxn, key string, at lmdbstore.At) (string, error) {
	for seen := 0; seen < 64 && key != ""; seen++ {
		if kv, err := r.GetKV(codetree.RecordScope, codetree.MovesNamespace, key, at); err == nil {
			var m codetree.Move
			if json.Unmarshal(kv.Payload, &m) == nil && m.To != "" {
				if live, err := isLive(r, m.To, at); err != nil || live {
					return m.To, err
				}
			}
		} else if !errors.Is(err, lmdbstore.ErrNotFound) && !errors.Is(err, lmdbstore.ErrInvalid) {
			return "", err
		}
		next, err := enclosing(r, key, at)
		if err != nil || next == "" {
			return "", err
		}
		live, err := isLive(r, next, at)
		if err != nil || live {
			return next, err
		}
		key = next
	}
	return "", nil
}

// enclosing is the key one level up from key.
func enclosing(r *lmdbstore.ReadTxn, key string, at lmdbstore.At) (string, error) {
	parentDir := func(p string) string {
		if p == "." || p == "" {
			return ""
		}
		return "dir:" + path.Dir(p)
	}
	switch {
	case strings.HasPrefix(key, "file:"):
		return parentDir(key[len("file:"):]), nil
	case strings.HasPrefix(key, "dir:"):
		return parentDir(key[len("dir:"):]), nil
	case strings.HasPrefix(key, "sym:"), strings.HasPrefix(key, "pkg:"):
		vs, err := versionsUpTo(r, key, at)
		if err != nil {
			return "", err
		}
		for i := len(vs) - 1; i >= 0; i-- {
			if vs[i].Deleted {
				continue
			}
			var p struct{ Path, Dir string }
			if json.Unmarshal(vs[i].Payload, &p) == nil {
				if strings.HasPrefix(key, "sym:") && p.Path != "" {
					return "file:" + p.Path, nil
				}
				if p.Dir != "" {
					return "dir:" + p.Dir, nil
				}
			}
			break
		}
	}
	return "", nil
}
