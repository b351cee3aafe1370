package contextpack

// "Changed since" and "Attempted" come from the stored versions of what the
// pack is about (lmdbstore history reads), not from a scan of the log: the
// cost follows the targets' history, not the store's (a bulk ingest of a
// million operations costs nothing here unless it touched the targets).
// The versions read are:
//   - the targets' nodes, and every edge into or out of a target (all
//     relations, every version, deletes included);
//   - the nodes a file target defines (its symbols);
//   - the related items' nodes (the first relatedTouched of them);
//   - the applying policies: their nodes or kv entries.
// What compaction dropped below the retention horizon is not there.

import (
	"cmp"
	"slices"
	"strings"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/roles"
)

// relatedTouched is how many related items' own versions are read.
const relatedTouched = 20

// version is one stored version seen as an operation.
type version struct {
	op   string
	key  string // node key or kv address; the target end of an edge
	rel  string
	dir  string
	peer string
	prov Provenance
}

func (c *call) history(p *Pack) ([]Change, []Attempt, error) {
	vr, err := c.r.Versions()
	if err != nil {
		return nil, nil, err
	}
	defer vr.Close()
	// A version is listed when it is newer than "since" (Changed) or
	// another task's (Attempted): the others are read, to learn their
	// provenance, but not kept, nor their peers' keys looked up (on a
	// store written without tasks, or by this one task, that is all of
	// them: a file target has hundreds of edge versions).
	listed := func(v lmdbstore.Version) bool {
		return p.Since.Found && v.Rev > p.Since.Rev || v.TaskID != "" && v.TaskID != c.req.Task
	}
	var vs []version
	nodeOps := func(key string) error {
		return vr.Node(key, func(v lmdbstore.Version) error {
			if v.Rev > c.view || !listed(v) {
				return nil
			}
			op := "put_node"
			if v.Deleted {
				op = "del_node"
			}
			vs = append(vs, version{op: op, key: key, prov: verProv(v)})
			return nil
		})
	}
	seenNode := map[string]bool{}
	node := func(key string) error {
		if seenNode[key] {
			return nil
		}
		seenNode[key] = true
		return nodeOps(key)
	}
	relNames := map[lmdbstore.RelID]string{}
	relName := func(id lmdbstore.RelID) (string, error) {
		if n, ok := relNames[id]; ok {
			return n, nil
		}
		rel, err := c.r.RelationByID(id)
		if err != nil {
			return "", err
		}
		relNames[id] = rel.Name
		return rel.Name, nil
	}
	defines, hasDefines, err := relID(c.r, roles.RelDefines)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range p.Targets {
		if err := node(t.Key); err != nil {
			return nil, nil, err
		}
		id, known, err := nodeID(c.r, t.Key)
		if err != nil {
			return nil, nil, err
		}
		if !known {
			continue
		}
		for _, out := range []bool{true, false} {
			// Every stored version of every edge of the target in this
			// direction: (rel, peer, rev) from the adjacency list, the
			// provenance from the edge's record of that revision.
			type entry struct {
				rel  lmdbstore.RelID
				peer lmdbstore.NodeID
				rev  lmdbstore.Revision
			}
			var entries []entry
			var symbols []lmdbstore.NodeID
			err := c.r.ScanAdjHistory(out, id, 0, func(a lmdbstore.AdjEntry) bool {
				if a.Rev > c.view {
					return true
				}
				entries = append(entries, entry{a.Rel, a.Peer, a.Rev})
				if out && hasDefines && a.Rel == defines && t.Kind == "file" && !a.Deleted {
					if n := len(symbols); n == 0 || symbols[n-1] != a.Peer {
						symbols = append(symbols, a.Peer)
					}
				}
				return true
			})
			if err != nil {
				return nil, nil, err
			}
			dir := "in"
			if out {
				dir = "out"
			}
			for _, e := range entries {
				src, dst := id, e.peer
				if !out {
					src, dst = e.peer, id
				}
				v, ok, err := vr.EdgeAt(src, e.rel, dst, e.rev)
				if err != nil {
					return nil, nil, err
				}
				if !ok || !listed(v) {
					continue // compacted away, or not listed
				}
				name, err := relName(e.rel)
				if err != nil {
					return nil, nil, err
				}
				peer, err := c.keyOf(e.peer)
				if err != nil {
					return nil, nil, err
				}
				op := "put_edge"
				if v.Deleted {
					op = "del_edge"
				}
				vs = append(vs, version{op: op, key: t.Key, rel: name, dir: dir, peer: peer, prov: verProv(v)})
			}
			for _, s := range symbols {
				k, err := c.keyOf(s)
				if err != nil {
					return nil, nil, err
				}
				if err := node(k); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	for i, nb := range p.Related {
		if i >= relatedTouched {
			break
		}
		if err := node(nb.Key); err != nil {
			return nil, nil, err
		}
	}
	for _, pol := range p.Applies {
		if pol.Source == "kv" {
			err := vr.KV(pol.Scope, pol.Namespace, pol.KVKey, func(v lmdbstore.Version) error {
				if v.Rev > c.view || !listed(v) {
					return nil
				}
				op := "put_kv"
				if v.Deleted {
					op = "del_kv"
				}
				vs = append(vs, version{op: op, key: pol.Key, prov: verProv(v)})
				return nil
			})
			if err != nil {
				return nil, nil, err
			}
			continue
		}
		if err := node(pol.Key); err != nil {
			return nil, nil, err
		}
	}
	var changed, earlier []version
	for _, v := range vs { // every one listed
		if p.Since.Found && v.prov.Rev > p.Since.Rev {
			changed = append(changed, v)
		} else {
			earlier = append(earlier, v)
		}
	}
	changes := group(changed)
	var attempts []Attempt
	byTask := map[[2]string][]version{}
	for _, v := range earlier {
		k := [2]string{v.prov.Run, v.prov.Task}
		byTask[k] = append(byTask[k], v)
	}
	for k, vs := range byTask {
		attempts = append(attempts, Attempt{Run: k[0], Task: k[1], Changes: group(vs)})
	}
	slices.SortFunc(attempts, func(a, b Attempt) int {
		if c := cmp.Compare(b.Changes[0].Prov.Rev, a.Changes[0].Prov.Rev); c != 0 {
			return c
		}
		if c := strings.Compare(a.Run, b.Run); c != 0 {
			return c
		}
		return strings.Compare(a.Task, b.Task)
	})
	return changes, attempts, nil
}

func verProv(v lmdbstore.Version) Provenance {
	return Provenance{Rev: v.Rev, TS: v.TS, Scope: v.Scope, Run: v.RunID, Task: v.TaskID}
}

// group folds versions into change lines, newest first: the edge versions
// of one revision with the same operation, target end, relation,
// direction, run and task become one line with a count.
func group(vs []version) []Change {
	type gk struct {
		rev                  lmdbstore.Revision
		op, key, rel, dir    string
		run, task, scopeName string
	}
	idx := map[gk]int{}
	var out []Change
	for _, v := range vs {
		k := gk{v.prov.Rev, v.op, v.key, v.rel, v.dir, v.prov.Run, v.prov.Task, v.prov.Scope}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Change{Op: v.op, Key: v.key, Rel: v.rel, Dir: v.dir, Prov: v.prov})
		}
		ch := &out[i]
		ch.Count++
		if v.peer != "" {
			ch.Peers = append(ch.Peers, v.peer)
		}
	}
	for i := range out {
		slices.Sort(out[i].Peers)
		if len(out[i].Peers) > maxPeers {
			out[i].Peers = out[i].Peers[:maxPeers]
		}
		if out[i].Rel == "" {
			out[i].Count = 0 // a node or kv operation is one operation
		}
	}
	slices.SortStableFunc(out, func(a, b Change) int {
		if c := cmp.Compare(b.Prov.Rev, a.Prov.Rev); c != 0 {
			return c
		}
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		if c := strings.Compare(a.Op, b.Op); c != 0 {
			return c
		}
		if c := strings.Compare(a.Rel, b.Rel); c != 0 {
			return c
		}
		return strings.Compare(a.Dir, b.Dir)
	})
	return out
}
