package cli

// A key the store does not know. `get-out KEY` of a key with no node and
// no edges used to print nothing and succeed, the same as a node without
// edges: a mistyped key (`get-out flag.go` for `file:flag.go`) looked like
// an answer. Now "no such node and no edges" is not found (exit 1) with
// the nearest key the store holds, while a node with no edges, or a key
// that is only an edge endpoint, still lists nothing and succeeds.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/suggest"
)

// keyExists reports whether key names anything at the view: a live node
// (or kv entry, for a kv address) or an endpoint of a live edge in either
// direction. It emits no telemetry (only raw scans and version walks).
func keyExists(r *lmdbstore.ReadTxn, at lmdbstore.At, key string) (bool, error) {
	view, err := r.Resolve(at)
	if err != nil {
		return false, err
	}
	live := false
	liveAt := func(v lmdbstore.Version) error {
		if v.Rev <= view {
			live = !v.Deleted
		}
		return nil
	}
	if scope, ns, k, ok := lmdbstore.ParseKVAddress(key); ok {
		err = r.KVVersions(scope, ns, k, liveAt)
	} else {
		err = r.NodeVersions(key, liveAt)
	}
	if err != nil || live {
		return live, err
	}
	if known, err := registered(r, key); err != nil || !known {
		return false, err
	}
	id := lmdbstore.IDOf(key)
	any := func(lmdbstore.EdgeRef) bool { live = true; return false }
	if err := r.ScanOut(id, 0, at, any); err != nil || live {
		return live, err
	}
	err = r.ScanIn(id, 0, at, any)
	return live, err
}

// registered reports whether the store ever wrote key (as a node or an edge
// endpoint). Only corruption is an error.
func registered(r *lmdbstore.ReadTxn, key string) (bool, error) {
	k, err := r.KeyOf(lmdbstore.IDOf(key))
	if errors.Is(err, lmdbstore.ErrCorrupt) {
		return false, err
	}
	return err == nil && k == key, nil
}

// unknownKeyError is the not-found error of key, with the nearest key the
// store holds when there is one.
func unknownKeyError(r *lmdbstore.ReadTxn, at lmdbstore.At, key string) error {
	err := fmt.Errorf("%w: node %q: no such node and no edges", lmdbstore.ErrNotFound, key)
	return withSuggestion(r, at, key, err)
}

// withSuggestion appends `(did you mean "K"?)` to a not-found error when
// the store holds a key K close to key. A failure to find one leaves err
// as it is (the suggestion is a courtesy) unless it is corruption.
func withSuggestion(r *lmdbstore.ReadTxn, at lmdbstore.At, key string, err error) error {
	s, serr := suggestKey(r, at, key)
	if errors.Is(serr, lmdbstore.ErrCorrupt) {
		return serr
	}
	if s == "" || serr != nil {
		return err
	}
	return fmt.Errorf("%w (did you mean %q?)", err, s)
}

// keyTypes are the node key prefixes ingest writes (SPEC.md §9.2) and the
// common hand-written ones: `flag.go` is probably `file:flag.go`.
var keyTypes = []string{"file", "sym", "pkg", "dir", "doc", "module", "test"}

// maxSuggestScan bounds the nodes read to find a near key, so a typo in a
// store of millions of nodes costs a bounded time.
const maxSuggestScan = 200_000

var errStopScan = errors.New("stop")

// suggestKey returns the key the caller most likely meant: the same name
// with a type prefix (or another one), then a live node whose key ends in
// "/KEY" or ":KEY" (the shortest), then the live node key nearest by edit
// distance (suggest.Nearest's bound). "" when none is close.
func suggestKey(r *lmdbstore.ReadTxn, at lmdbstore.At, key string) (string, error) {
	name := key
	if _, rest, ok := strings.Cut(key, ":"); ok && rest != "" {
		name = rest
	}
	for _, t := range keyTypes {
		if c := t + ":" + name; c != key {
			if known, err := registered(r, c); err != nil || known {
				return c, err
			}
		}
	}
	if name != key {
		if known, err := registered(r, name); err != nil || known {
			return name, err
		}
	}
	suffix, nearest := "", ""
	bound := max(2, len(key)/2) + 1
	n := 0
	err := r.ScanNodes(at, func(nd lmdbstore.Node) error {
		if n++; n > maxSuggestScan {
			return errStopScan
		}
		k := nd.Key
		if (strings.HasSuffix(k, "/"+name) || strings.HasSuffix(k, ":"+name)) && (suffix == "" || len(k) < len(suffix)) {
			suffix = k
		}
		if d := len(k) - len(key); d < bound && -d < bound {
			if d := suggest.Distance(key, k); d < bound {
				nearest, bound = k, d
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopScan) {
		return "", err
	}
	if suffix != "" {
		return suffix, nil
	}
	return nearest, nil
}
