package codetree

// Decisions follow the code (SPEC.md §9.8): when an ingest deletes a node
// and creates the node it moved to, the memory that names the old key is
// carried to the new one in the same revision, and the move is recorded
// as a kv entry so `history` shows it.

import (
	"encoding/json"
	"errors"
	"path"
	"slices"
	"strings"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/roles"
)

// The kv entries ingest writes beside the code graph (SPEC.md §9.7, §9.8).
const (
	RecordScope     = "memctl" // scope of every entry below
	IngestNamespace = "ingest" // GitKey: the git state of the last ingest
	GitKey          = "git"
	MovesNamespace  = "moves" // key: the old canonical key; payload Move
)

// How a move was recognised.
const (
	ByGitRename = "git-rename" // git's rename detection between the last ingested commit and the tree
	ByHash      = "hash"       // a deleted and a created file with identical content
	BySymbol    = "symbol"     // same name, kind and receiver, one candidate
	ByDir       = "dir"        // every file moved out of a deleted directory went to one created directory
)

// Move is one key that became another. Its JSON form is the payload of the
// memctl/moves/<From> kv entry.
type Move struct {
	From  string `json:"-"`
	To    string `json:"to"`
	By    string `json:"by"`
	Edges int    `json:"edges"` // memory edges carried
	KVs   int    `json:"kvs"`   // kv entries whose applies_to was rewritten
}

// StoredGitState reads the git state recorded by the last ingest (ok false
// when none was recorded) as of at.
func StoredGitState(r *lmdbstore.ReadTxn, at lmdbstore.At) (st ingest.GitState, ok bool, err error) {
	kv, err := r.GetKV(RecordScope, IngestNamespace, GitKey, at)
	if errors.Is(err, lmdbstore.ErrNotFound) {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	if err := json.Unmarshal(kv.Payload, &st); err != nil {
		return st, false, nil
	}
	return st, st.Commit != "", nil
}

// DetectMoves pairs the nodes an ingest deleted with the nodes it created.
// Files: git's renames since commit prevCommit (when dir is in git and
// prevCommit is set), then identical content hashes. Symbols: the one
// created symbol of the same language with the same name, kind and
// receiver (several: the one in the file the old one's file moved to, else
// none). Directories: the created directory every moved file below the
// deleted one went to. The result is sorted by From.
func DetectMoves(dir, prevCommit string, deleted []lmdbstore.Node, created []ingest.Node) []Move {
	gone := make(map[string]lmdbstore.Node, len(deleted))
	for _, n := range deleted {
		gone[n.Key] = n
	}
	born := make(map[string]ingest.Node, len(created))
	for _, n := range created {
		born[n.Key] = n
	}
	var moves []Move
	filePath := map[string]string{} // old path -> new path
	take := func(from, to, by string) {
		moves = append(moves, Move{From: from, To: to, By: by})
		delete(gone, from)
		delete(born, to)
	}

	var goneFiles, bornFiles []string
	for k := range gone {
		if strings.HasPrefix(k, "file:") {
			goneFiles = append(goneFiles, k)
		}
	}
	for k := range born {
		if strings.HasPrefix(k, "file:") {
			bornFiles = append(bornFiles, k)
		}
	}
	slices.Sort(goneFiles)
	slices.Sort(bornFiles)
	if len(goneFiles) > 0 && len(bornFiles) > 0 && prevCommit != "" {
		if renames, err := ingest.GitRenames(dir, prevCommit); err == nil {
			for _, from := range goneFiles {
				to := ingest.FileKey(renames[strings.TrimPrefix(from, "file:")])
				if _, ok := born[to]; ok {
					filePath[from[5:]] = to[5:]
					take(from, to, ByGitRename)
				}
			}
		}
	}
	byHash := map[string][]string{}
	for _, k := range bornFiles {
		if _, ok := born[k]; ok {
			if h := fileHash(born[k].Payload); h != "" {
				byHash[h] = append(byHash[h], k)
			}
		}
	}
	for _, from := range goneFiles {
		if _, ok := gone[from]; !ok {
			continue
		}
		cands := byHash[fileHash(gone[from].Payload)]
		var live []string
		for _, c := range cands {
			if _, ok := born[c]; ok {
				live = append(live, c)
			}
		}
		if to, ok := pick(live, func(c string) bool { return path.Base(c) == path.Base(from) }); ok {
			filePath[from[5:]] = to[5:]
			take(from, to, ByHash)
		}
	}

	type symID struct{ lang, name, kind, recv string }
	bySym := map[symID][]string{}
	symOf := func(key string, payload []byte) (symID, string, bool) {
		var p struct{ Name, Kind, Recv, Path string }
		if !strings.HasPrefix(key, "sym:") || json.Unmarshal(payload, &p) != nil || p.Name == "" {
			return symID{}, "", false
		}
		lang := ingest.OwnerOf(lmdbstore.Node{Key: key})
		return symID{lang, p.Name, p.Kind, p.Recv}, p.Path, true
	}
	for _, k := range sortedKeys(born) {
		if id, _, ok := symOf(k, born[k].Payload); ok {
			bySym[id] = append(bySym[id], k)
		}
	}
	for _, from := range sortedKeys(gone) {
		id, oldPath, ok := symOf(from, gone[from].Payload)
		if !ok {
			continue
		}
		var live []string
		for _, c := range bySym[id] {
			if _, ok := born[c]; ok {
				live = append(live, c)
			}
		}
		to, ok := pick(live, func(c string) bool {
			_, p, _ := symOf(c, born[c].Payload)
			return filePath[oldPath] != "" && p == filePath[oldPath]
		})
		if ok {
			take(from, to, BySymbol)
		}
	}

	// Directories: every file moved out of the deleted directory (directly
	// or below) went to the same place below one created directory.
	for _, from := range sortedKeys(gone) {
		d, ok := strings.CutPrefix(from, "dir:")
		if !ok {
			continue
		}
		target := ""
		agree := true
		for oldP, newP := range filePath {
			rest, ok := strings.CutPrefix(oldP, d+"/")
			if d == "." || !ok {
				continue
			}
			nd, ok := strings.CutSuffix(newP, "/"+rest)
			if !ok || (target != "" && target != nd) {
				agree = false
				break
			}
			target = nd
		}
		if _, ok := born["dir:"+target]; agree && target != "" && ok {
			take(from, "dir:"+target, ByDir)
		}
	}
	slices.SortFunc(moves, func(a, b Move) int { return strings.Compare(a.From, b.From) })
	return moves
}

// pick returns the one candidate, or the one candidate preferred when
// there are several.
func pick(cands []string, prefer func(string) bool) (string, bool) {
	if len(cands) == 1 {
		return cands[0], true
	}
	var best []string
	for _, c := range cands {
		if prefer(c) {
			best = append(best, c)
		}
	}
	if len(best) == 1 {
		return best[0], true
	}
	return "", false
}

func fileHash(payload []byte) string {
	var p struct{ Hash string }
	if json.Unmarshal(payload, &p) != nil {
		return ""
	}
	return p.Hash
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// CarryMoves rewrites, inside tx, every live edge of a memory-role
// relation (SPEC.md §1) with an endpoint at a move's From so it ends at
// To instead (same relation, weight, payload and provenance), and every
// live kv entry whose applies_to names From (the key, or for files and
// directories the path, as a literal or a prefix of a glob) so it names To,
// then records each move as memctl/moves/<From> (left out when the key
// is beyond the kv limits). Edge and entry counts go into the moves.
func CarryMoves(tx *lmdbstore.WriteTxn, moves []Move) error {
	if len(moves) == 0 {
		return nil
	}
	r := tx.Reader()
	rels, err := r.Relations()
	if err != nil {
		return err
	}
	memory := map[lmdbstore.RelID]lmdbstore.Relation{}
	for _, rel := range rels {
		if rel.Role == roles.Memory {
			memory[rel.ID] = rel
		}
	}
	for i := range moves {
		m := &moves[i]
		n, err := carryEdges(tx, memory, m.From, m.To)
		if err != nil {
			return err
		}
		m.Edges = n
	}
	if err := carryKVs(tx, moves); err != nil {
		return err
	}
	for _, m := range moves {
		err := tx.PutKV(lmdbstore.KVPut{Scope: RecordScope, Namespace: MovesNamespace, Key: m.From, Payload: ingest.MustJSON(m)})
		if errors.Is(err, lmdbstore.ErrInvalid) {
			continue // a key too long for a kv entry: the edges moved all the same
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func carryEdges(tx *lmdbstore.WriteTxn, memory map[lmdbstore.RelID]lmdbstore.Relation, from, to string) (int, error) {
	r := tx.Reader()
	id := lmdbstore.IDOf(from)
	type ref struct {
		peer lmdbstore.NodeID
		rel  lmdbstore.RelID
		out  bool
	}
	var refs []ref
	for _, out := range []bool{true, false} {
		scan := r.ScanIn
		if out {
			scan = r.ScanOut
		}
		if err := scan(id, 0, lmdbstore.At{}, func(e lmdbstore.EdgeRef) bool {
			if _, ok := memory[e.Rel]; ok {
				refs = append(refs, ref{e.Peer, e.Rel, out})
			}
			return true
		}); err != nil {
			return 0, err
		}
	}
	for _, e := range refs {
		peer, err := r.KeyOf(e.peer)
		if err != nil {
			return 0, err
		}
		rel := memory[e.rel]
		src, dst, nsrc, ndst := from, peer, to, peer
		if !e.out {
			src, dst, nsrc, ndst = peer, from, peer, to
		}
		if e.peer == id { // a self-loop moves whole
			nsrc, ndst = to, to
		}
		rec, err := r.GetEdge(src, rel.Name, dst, lmdbstore.At{})
		if err != nil {
			return 0, err
		}
		if err := tx.DeleteEdge(src, rel.Name, dst); err != nil && !errors.Is(err, lmdbstore.ErrNotFound) {
			return 0, err
		}
		w := rec.Weight
		if w == rel.DefaultWeight {
			w = 0
		}
		if err := tx.PutEdge(lmdbstore.EdgePut{Src: nsrc, Rel: rel.Name, Dst: ndst, Weight: w, Payload: rec.Payload,
			Scope: rec.Scope, RunID: rec.RunID, TaskID: rec.TaskID}); err != nil {
			return 0, err
		}
	}
	return len(refs), nil
}

// carryKVs rewrites the applies_to of every live kv entry naming a moved
// key or path.
func carryKVs(tx *lmdbstore.WriteTxn, moves []Move) error {
	to := make(map[string]int, len(moves))
	for i, m := range moves {
		to[m.From] = i
	}
	var puts []lmdbstore.KVPut
	var hits [][]int
	err := tx.Reader().ScanKV(lmdbstore.At{}, func(kv lmdbstore.KV) error {
		var obj map[string]json.RawMessage
		if json.Unmarshal(kv.Payload, &obj) != nil || obj["applies_to"] == nil {
			return nil
		}
		var one string
		var many []string
		isOne := json.Unmarshal(obj["applies_to"], &one) == nil
		if !isOne && json.Unmarshal(obj["applies_to"], &many) != nil {
			return nil
		}
		if isOne {
			many = []string{one}
		}
		var used []int
		for j, el := range many {
			if nel, i, ok := rewriteTarget(el, moves, to); ok {
				many[j] = nel
				used = append(used, i)
			}
		}
		if len(used) == 0 {
			return nil
		}
		if isOne {
			obj["applies_to"] = ingest.MustJSON(many[0])
		} else {
			obj["applies_to"] = ingest.MustJSON(many)
		}
		puts = append(puts, lmdbstore.KVPut{Scope: kv.Scope, Namespace: kv.Namespace, Key: kv.Key,
			Payload: ingest.MustJSON(obj), Valid: kv.Valid, RunID: kv.RunID, TaskID: kv.TaskID})
		hits = append(hits, used)
		return nil
	})
	if err != nil {
		return err
	}
	for i, p := range puts {
		if err := tx.PutKV(p); err != nil {
			return err
		}
		for _, m := range hits[i] {
			moves[m].KVs++
		}
	}
	return nil
}

// rewriteTarget maps one applies_to element through the moves: a
// canonical key equal to a From, or a path equal to a moved file's or
// directory's path or starting with a moved directory's path and "/".
func rewriteTarget(el string, moves []Move, to map[string]int) (string, int, bool) {
	if strings.Contains(el, ":") {
		i, ok := to[el]
		if !ok {
			return "", 0, false
		}
		return moves[i].To, i, true
	}
	for i, m := range moves {
		var oldP, newP string
		switch {
		case strings.HasPrefix(m.From, "file:") && strings.HasPrefix(m.To, "file:"):
			oldP, newP = m.From[5:], m.To[5:]
			if el == oldP {
				return newP, i, true
			}
		case strings.HasPrefix(m.From, "dir:") && strings.HasPrefix(m.To, "dir:"):
			oldP, newP = m.From[4:], m.To[4:]
			if el == oldP {
				return newP, i, true
			}
			if rest, ok := strings.CutPrefix(el, oldP+"/"); ok {
				return newP + "/" + rest, i, true
			}
		}
	}
	return "", 0, false
}
