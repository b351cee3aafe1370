package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/roles"
)

// WriteStats says what a write changed. Commit.Rev is 0 when nothing did.
type WriteStats struct {
	Commit       lmdbstore.Commit
	NodesPut     int
	NodesDeleted int
	EdgesPut     int
	EdgesDeleted int
	// Created are the nodes the write created (not live before it);
	// Deleted the nodes it deleted, as they were before. Move detection
	// (ingest/codetree) pairs them.
	Created []Node
	Deleted []lmdbstore.Node
	// Files are the paths of the file nodes whose content hash the write
	// changed: created, edited or deleted (sorted).
	Files []string
	// OtherFiles are the paths of the stored file nodes of languages the
	// write did not replace, whose directories it kept (WriteCodeTx only).
	OtherFiles []string
}

// ensureRelations returns the relations by name, registering the missing
// ones (contains and co_changed, which the store does not have built in)
// on first use, as the roles vocabulary defines them.
func ensureRelations(tx *lmdbstore.WriteTxn, names []string) (map[string]lmdbstore.Relation, error) {
	out := make(map[string]lmdbstore.Relation, len(names))
	for _, name := range names {
		rel, err := tx.Reader().RelationByName(name)
		if errors.Is(err, lmdbstore.ErrNotFound) || errors.Is(err, lmdbstore.ErrUnknownRelation) {
			def, ok := roles.Lookup(name)
			if !ok || def.ID != 0 {
				return nil, err
			}
			add := lmdbstore.Relation{Name: def.Name, DefaultWeight: def.DefaultWeight, Bidirectional: def.Bidirectional, Role: def.Role}
			if _, err := tx.AddRelation(add); err != nil {
				return nil, fmt.Errorf("register relation %s: %w", name, err)
			}
			rel, err = tx.Reader().RelationByName(name)
		}
		if err != nil {
			return nil, err
		}
		out[name] = rel
	}
	return out, nil
}

// sharedOwner is the owner of dir: nodes: every code ingest recomputes
// them from its own files and the files of the other languages.
const sharedOwner = "*"

// OwnerOf returns the language whose ingest owns a stored node (SPEC.md
// §9.5): LangGo, LangPython, …, sharedOwner for directories, "" for a node
// no code ingest owns.
func OwnerOf(n lmdbstore.Node) string {
	key := n.Key
	switch {
	case strings.HasPrefix(key, "ingest:"):
		lang := key[len("ingest:"):]
		if slices.Contains(Languages, lang) {
			return lang
		}
	case strings.HasPrefix(key, "dir:"):
		return sharedOwner
	case strings.HasPrefix(key, "pkg:"), strings.HasPrefix(key, "sym:"):
		return langOfKey(key[4:])
	case strings.HasPrefix(key, "file:"):
		if !hasField(n.Payload, "hash") {
			return ""
		}
		var p struct {
			Lang string `json:"lang"`
		}
		if json.Unmarshal(n.Payload, &p) == nil && p.Lang != "" {
			return p.Lang
		}
		return LangGo
	}
	return ""
}

// langOfKey is the language of a pkg: or sym: key from its tag.
func langOfKey(rest string) string {
	if i := strings.IndexByte(rest, ':'); i > 0 {
		for lang, tag := range LangTags {
			if rest[:i] == tag {
				return lang
			}
		}
	}
	return LangGo
}

// hasField reports whether a JSON object payload has a top-level field.
func hasField(payload []byte, field string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(payload, &m) != nil {
		return false
	}
	_, ok := m[field]
	return ok
}

type idEdge struct {
	src, dst lmdbstore.NodeID
	rel      lmdbstore.RelID
}

// storedState is what the store holds of one owner's share of the graph.
type storedState struct {
	nodes map[string]lmdbstore.Node
	edges map[idEdge]float32
	// others are live nodes the owner does not own but may write fields
	// of (file nodes, shared by ingest go and ingest git).
	others map[string]lmdbstore.Node
}

// readState reads the nodes owned (per owns) and their out-edges of the
// given relations.
//
// With allEdges, it reads every live edge of those relations instead (a
// scan of all edges), which finds edges whose endpoints were deleted by
// someone else (`ingest go` deletes removed files; the co_changed edges
// between them stay with `ingest git`).
func readState(r *lmdbstore.ReadTxn, owns func(lmdbstore.Node) bool, rels map[string]lmdbstore.Relation, allEdges bool) (*storedState, error) {
	st := &storedState{nodes: make(map[string]lmdbstore.Node), edges: make(map[idEdge]float32),
		others: make(map[string]lmdbstore.Node)}
	err := r.ScanNodes(lmdbstore.At{}, func(n lmdbstore.Node) error {
		switch {
		case owns(n):
			n.Payload = bytes.Clone(n.Payload)
			st.nodes[n.Key] = n
		case strings.HasPrefix(n.Key, "file:"):
			n.Payload = bytes.Clone(n.Payload)
			st.others[n.Key] = n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	relIDs := make(map[lmdbstore.RelID]bool, len(rels))
	for _, rel := range rels {
		relIDs[rel.ID] = true
	}
	if allEdges {
		// Every edge of the relations, whatever its endpoints: both may be
		// nodes deleted since (two files `ingest go` removed).
		err := r.ScanEdges(lmdbstore.At{}, func(e lmdbstore.Edge) error {
			if relIDs[e.Rel] {
				st.edges[idEdge{src: e.Src, dst: e.Dst, rel: e.Rel}] = e.Weight
			}
			return nil
		})
		return st, err
	}
	// Only the owned nodes' edges: the other file nodes may be another
	// language's, whose edges are its own.
	for _, n := range st.all()[:len(st.nodes)] {
		err := r.ScanOut(n.ID, 0, lmdbstore.At{}, func(e lmdbstore.EdgeRef) bool {
			if relIDs[e.Rel] {
				st.edges[idEdge{src: n.ID, dst: e.Peer, rel: e.Rel}] = e.Weight
			}
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	return st, nil
}

// all is every node read, owned or not.
func (st *storedState) all() []lmdbstore.Node {
	out := make([]lmdbstore.Node, 0, len(st.nodes)+len(st.others))
	for _, n := range st.nodes {
		out = append(out, n)
	}
	for _, n := range st.others {
		out = append(out, n)
	}
	return out
}

// plan is the difference between a desired graph and the stored state.
type plan struct {
	putNodes []Node
	delNodes []string
	putEdges []Edge // weights resolved
	delEdges []Edge
}

func (p *plan) ops() int {
	return len(p.putNodes) + len(p.delNodes) + len(p.putEdges) + len(p.delEdges)
}

// diff computes what to write so that the store's owned share equals g.
// mergeNode may rewrite a desired payload from the stored one (to keep the
// fields another owner holds).
func diff(r *lmdbstore.ReadTxn, g *Graph, st *storedState, rels map[string]lmdbstore.Relation,
	mergeNode func(want Node, stored lmdbstore.Node) Node) (*plan, error) {
	p := &plan{}
	keyOf := make(map[lmdbstore.NodeID]string, len(st.nodes)+g.NumNodes())
	for _, n := range g.Nodes() {
		keyOf[lmdbstore.IDOf(n.Key)] = n.Key
		stored, ok := st.nodes[n.Key]
		if !ok {
			stored, ok = st.others[n.Key]
		}
		if ok && mergeNode != nil {
			n = mergeNode(n, stored)
		}
		if !ok || stored.Type != n.Type || !bytes.Equal(stored.Payload, n.Payload) {
			p.putNodes = append(p.putNodes, n)
		}
	}
	for key, n := range st.others {
		keyOf[n.ID] = key
	}
	for _, key := range sortedKeys(st.nodes) {
		keyOf[st.nodes[key].ID] = key
		if !g.HasNode(key) {
			p.delNodes = append(p.delNodes, key)
		}
	}
	want := make(map[idEdge]bool, g.NumEdges())
	for _, e := range g.Edges() {
		rel, ok := rels[e.Rel]
		if !ok {
			return nil, fmt.Errorf("relation %s not registered", e.Rel)
		}
		if e.Weight == 0 {
			e.Weight = rel.DefaultWeight
		}
		k := idEdge{src: lmdbstore.IDOf(e.Src), dst: lmdbstore.IDOf(e.Dst), rel: rel.ID}
		want[k] = true
		if w, ok := st.edges[k]; !ok || w != e.Weight {
			p.putEdges = append(p.putEdges, e)
		}
	}
	relName := make(map[lmdbstore.RelID]string, len(rels))
	for name, rel := range rels {
		relName[rel.ID] = name
	}
	key := func(id lmdbstore.NodeID) (string, error) {
		if k, ok := keyOf[id]; ok {
			return k, nil
		}
		return r.KeyOf(id)
	}
	for k := range st.edges {
		if want[k] {
			continue
		}
		src, err := key(k.src)
		if err != nil {
			return nil, err
		}
		dst, err := key(k.dst)
		if err != nil {
			return nil, err
		}
		p.delEdges = append(p.delEdges, Edge{Src: src, Rel: relName[k.rel], Dst: dst})
	}
	slices.SortFunc(p.delEdges, compareEdges)
	return p, nil
}

// apply writes a plan: edge deletions, node deletions, node puts, edge puts.
func apply(tx *lmdbstore.WriteTxn, p *plan, progress func(Progress)) error {
	total, done := p.ops(), 0
	tick := func() {
		done++
		if progress != nil && (done%4096 == 0 || done == total) {
			progress(Progress{Phase: PhaseWriting, Done: done, Total: total})
		}
	}
	for _, e := range p.delEdges {
		if err := tx.DeleteEdge(e.Src, e.Rel, e.Dst); err != nil {
			return err
		}
		tick()
	}
	for _, key := range p.delNodes {
		if err := tx.DeleteNode(key); err != nil {
			return err
		}
		tick()
	}
	for _, n := range p.putNodes {
		if err := tx.PutNode(lmdbstore.NodePut{Key: n.Key, Type: n.Type, Payload: n.Payload}); err != nil {
			return err
		}
		tick()
	}
	for _, e := range p.putEdges {
		if err := tx.PutEdge(lmdbstore.EdgePut{Src: e.Src, Rel: e.Rel, Dst: e.Dst, Weight: e.Weight}); err != nil {
			return err
		}
		tick()
	}
	return nil
}

// StoredTreeHash is the tree hash recorded by the last `ingest go` into s
// ("" if none, or if some packages fell back to syntax then: the module
// cache may hold their dependencies now). ExtractGo skips extraction when
// the tree still has it.
func StoredTreeHash(s *lmdbstore.Store) (string, error) {
	var hash string
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		n, err := r.GetNode(IngestGoKey, lmdbstore.At{})
		if errors.Is(err, lmdbstore.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		var p IngestPayload
		if json.Unmarshal(n.Payload, &p) == nil && p.Fallbacks == 0 {
			hash = p.TreeHash // packages that fell back to syntax: read again
		}
		return nil
	})
	return hash, err
}

// WriteGo makes the store's `ingest go` share equal to g, in one write
// transaction: one revision, or none when nothing differs.
func WriteGo(s *lmdbstore.Store, g *Graph, meta lmdbstore.WriteMeta, progress func(Progress)) (WriteStats, error) {
	return WriteCode(s, g, []string{LangGo}, meta, progress)
}

// WriteCode makes the store's share of the languages langs equal to g, in
// one write transaction: one revision, or none when nothing differs. g
// holds the graphs of those languages only; the nodes of the other
// languages stay as they are, and the directories above their files stay
// too: WriteCode adds them to g before it compares.
//
// Into a store with no node and no edge (a first ingest), the difference is
// the whole graph: it is written through the store's bulk path
// (lmdbstore.Bulk), which gives the same store as the ordinary write path,
// in one revision, about 3× faster.
func WriteCode(s *lmdbstore.Store, g *Graph, langs []string, meta lmdbstore.WriteMeta, progress func(Progress)) (WriteStats, error) {
	var stats WriteStats
	meta.Derived = true // code structure, not free text: no secret scan (SPEC §2)
	empty, err := storeEmpty(s)
	if err != nil {
		return stats, err
	}
	if empty {
		return writeBulk(s, g, meta, progress)
	}
	c, err := s.Update(meta, func(tx *lmdbstore.WriteTxn) error {
		var err error
		stats, err = WriteCodeTx(tx, g, langs, progress)
		return err
	})
	stats.Commit = c
	return stats, err
}

// WriteCodeTx is WriteCode inside the caller's write transaction, so that
// the caller can write more in the same revision (ingest/codetree carries
// memory edges to moved nodes). Commit is left zero.
func WriteCodeTx(tx *lmdbstore.WriteTxn, g *Graph, langs []string, progress func(Progress)) (WriteStats, error) {
	owns := func(n lmdbstore.Node) bool {
		o := OwnerOf(n)
		return o == sharedOwner || o != "" && slices.Contains(langs, o)
	}
	rels, err := ensureRelations(tx, GoRelations)
	if err != nil {
		return WriteStats{}, err
	}
	t0 := time.Now()
	st, err := readState(tx.Reader(), owns, rels, false)
	if err != nil {
		return WriteStats{}, err
	}
	var otherFiles []string
	for key, n := range st.others {
		if o := OwnerOf(n); o != "" && !slices.Contains(langs, o) {
			AddDirs(g, strings.TrimPrefix(key, "file:"))
			otherFiles = append(otherFiles, strings.TrimPrefix(key, "file:"))
		}
	}
	slices.Sort(otherFiles)
	debugf("write: read %d nodes, %d edges in %v", len(st.nodes), len(st.edges), time.Since(t0))
	t0 = time.Now()
	p, err := diff(tx.Reader(), g, st, rels, keepGitField)
	if err != nil {
		return WriteStats{}, err
	}
	debugf("write: diff in %v", time.Since(t0))
	stats, err := applyPlan(tx, st, p, progress)
	stats.OtherFiles = otherFiles
	return stats, err
}

// applyPlan writes p, planned against st, and says what it changed.
func applyPlan(tx *lmdbstore.WriteTxn, st *storedState, p *plan, progress func(Progress)) (WriteStats, error) {
	t0 := time.Now()
	defer func() { debugf("write: applied %d ops in %v", p.ops(), time.Since(t0)) }()
	stats := WriteStats{NodesPut: len(p.putNodes), NodesDeleted: len(p.delNodes), EdgesPut: len(p.putEdges), EdgesDeleted: len(p.delEdges)}
	for _, n := range p.putNodes {
		stored, ok := st.nodes[n.Key]
		if !ok {
			stored, ok = st.others[n.Key]
		}
		if !ok {
			stats.Created = append(stats.Created, n)
		}
		if n.Type == TypeFile && fileHash(n.Payload) != fileHash(stored.Payload) {
			stats.Files = append(stats.Files, strings.TrimPrefix(n.Key, "file:"))
		}
	}
	for _, key := range p.delNodes {
		stats.Deleted = append(stats.Deleted, st.nodes[key])
		if strings.HasPrefix(key, "file:") {
			stats.Files = append(stats.Files, strings.TrimPrefix(key, "file:"))
		}
	}
	slices.Sort(stats.Files)
	return stats, apply(tx, p, progress)
}

// fileHash is the content hash a file payload records ("" for none).
func fileHash(payload []byte) string {
	if len(payload) == 0 {
		return ""
	}
	var p struct {
		Hash string `json:"hash"`
	}
	_ = json.Unmarshal(payload, &p)
	return p.Hash
}

// errStop ends a scan early.
var errStop = errors.New("stop")

// storeEmpty reports whether s holds no node and no edge.
func storeEmpty(s *lmdbstore.Store) (bool, error) {
	empty := true
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		stop := func() error { empty = false; return errStop }
		if err := r.ScanNodes(lmdbstore.At{}, func(lmdbstore.Node) error { return stop() }); err != errStop && err != nil {
			return err
		}
		if !empty {
			return nil
		}
		if err := r.ScanEdges(lmdbstore.At{}, func(lmdbstore.Edge) error { return stop() }); err != errStop && err != nil {
			return err
		}
		return nil
	})
	return empty, err
}

// bulkRelations resolves GoRelations for a bulk load: the store's, and
// the ones it lacks registered by the load (first, in its revision), as
// WriteCodeTx registers them (ensureRelations).
func bulkRelations(s *lmdbstore.Store, b *lmdbstore.Bulk) (map[string]lmdbstore.Relation, error) {
	rels := make(map[string]lmdbstore.Relation, len(GoRelations))
	if err := s.View(func(r *lmdbstore.ReadTxn) error {
		for _, name := range GoRelations {
			rel, err := r.RelationByName(name)
			if errors.Is(err, lmdbstore.ErrNotFound) || errors.Is(err, lmdbstore.ErrUnknownRelation) {
				continue
			}
			if err != nil {
				return err
			}
			rels[name] = rel
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for _, name := range GoRelations {
		if _, ok := rels[name]; ok {
			continue
		}
		def, ok := roles.Lookup(name)
		if !ok || def.ID != 0 {
			return nil, fmt.Errorf("relation %s: %w", name, lmdbstore.ErrUnknownRelation)
		}
		add := lmdbstore.Relation{Name: def.Name, DefaultWeight: def.DefaultWeight, Bidirectional: def.Bidirectional, Role: def.Role}
		id, err := b.AddRelation(add)
		if err != nil {
			return nil, fmt.Errorf("register relation %s: %w", name, err)
		}
		add.ID = id
		if add.DefaultWeight == 0 {
			add.DefaultWeight = 1
		}
		rels[name] = add
	}
	return rels, nil
}

// putBulkEdge adds e to b, its weight 0 the relation's default (as diff
// resolves it for the ordinary path).
func putBulkEdge(b *lmdbstore.Bulk, rels map[string]lmdbstore.Relation, e Edge) error {
	rel, ok := rels[e.Rel]
	if !ok {
		return fmt.Errorf("relation %s not registered", e.Rel)
	}
	if e.Weight == 0 {
		e.Weight = rel.DefaultWeight
	}
	return b.PutEdge(lmdbstore.EdgePut{Src: e.Src, Rel: e.Rel, Dst: e.Dst, Weight: e.Weight})
}

// writeBulk writes g into a store that holds no node and no edge: the
// operations WriteCodeTx would write there (every node, then every edge,
// each sorted, after registering the missing relations), as one bulk load.
func writeBulk(s *lmdbstore.Store, g *Graph, meta lmdbstore.WriteMeta, progress func(Progress)) (WriteStats, error) {
	b := s.NewBulk(meta)
	rels, err := bulkRelations(s, b)
	if err != nil {
		return WriteStats{}, err
	}
	nodes, edges := g.Nodes(), g.Edges()
	debugHeap("write: graph sorted")
	total := len(nodes) + len(edges)
	tick := func(done int) {
		if progress != nil && (done%4096 == 0 || done == total) {
			progress(Progress{Phase: PhaseWriting, Done: done, Total: total})
		}
	}
	stats := WriteStats{NodesPut: len(nodes), EdgesPut: len(edges), Created: nodes}
	for i, n := range nodes {
		if err := b.PutNode(lmdbstore.NodePut{Key: n.Key, Type: n.Type, Payload: n.Payload}); err != nil {
			return WriteStats{}, err
		}
		tick(i + 1)
	}
	for i, e := range edges {
		if err := putBulkEdge(b, rels, e); err != nil {
			return WriteStats{}, err
		}
		tick(len(nodes) + i + 1)
	}
	debugHeap("write: bulk filled")
	c, err := b.Commit()
	stats.Commit = c
	if err != nil || c.Rev == 0 {
		return WriteStats{Commit: c}, err
	}
	// Not len(edges): the sorted copy is dead once the bulk holds the
	// edges, so that the collector can free it during Commit.
	debugf("write: bulk load of %d nodes, %d edges (appended %v)", stats.NodesPut, stats.EdgesPut, b.Appended)
	return stats, nil
}

// StoredLangTreeHash is the tree hash recorded by the last ingest of a
// language other than Go ("" if none).
func StoredLangTreeHash(s *lmdbstore.Store, lang string) (string, error) {
	var hash string
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		n, err := r.GetNode(IngestKey(lang), lmdbstore.At{})
		if errors.Is(err, lmdbstore.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		var p LangIngestPayload
		if json.Unmarshal(n.Payload, &p) == nil {
			hash = p.TreeHash
		}
		return nil
	})
	return hash, err
}

// keepGitField carries the "git" field of a stored file payload (owned by
// `ingest git`) over to the payload `ingest go` wants.
func keepGitField(want Node, stored lmdbstore.Node) Node {
	if want.Type != TypeFile {
		return want
	}
	var old FilePayload
	if json.Unmarshal(stored.Payload, &old) != nil || len(old.Git) == 0 {
		return want
	}
	var p FilePayload
	if json.Unmarshal(want.Payload, &p) != nil {
		return want
	}
	p.Git = old.Git
	want.Payload = mustJSON(p)
	return want
}
