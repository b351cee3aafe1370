// Package records holds the JSON records memctl prints and serves about
// store items: the CLI's --json lines and the MCP tools' results are these
// types, field for field (SPEC.md §6.3), so the two surfaces agree by
// construction. Records are built from lmdbstore values and hold only
// strings, numbers and raw JSON: times are RFC 3339 in UTC with
// nanoseconds (trailing zeros trimmed, "" for none), node ids 16 lowercase
// hex digits, weights and scores the shortest decimal that reads back as
// the same float. The jsonschema tags describe the fields to MCP clients.
package records

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/memctl/memctl/lmdbstore"
)

// Weight is an edge weight: a JSON number, the shortest decimal that reads
// back as the same float32 (0.3, not 0.30000001192092896).
type Weight float32

func (w Weight) MarshalJSON() ([]byte, error) { return []byte(w.String()), nil }

// String is the weight as JSON writes it.
func (w Weight) String() string { return strconv.FormatFloat(float64(w), 'g', -1, 32) }

// Score is an engine score: the shortest decimal that reads back as the
// same float64.
type Score float64

func (s Score) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(s), 'g', -1, 64), nil
}

// Node is one node version (SPEC.md §6.3 "node").
type Node struct {
	Key       string          `json:"key"`
	ID        string          `json:"id" jsonschema:"node id: 16 lowercase hex digits"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload" jsonschema:"the stored JSON value (null when none)"`
	Scope     string          `json:"scope"`
	Rev       uint64          `json:"rev" jsonschema:"revision that wrote this version"`
	CreatedTS string          `json:"created_ts"`
	UpdatedTS string          `json:"updated_ts"`
	RunID     string          `json:"run_id"`
	TaskID    string          `json:"task_id"`
	// Valid time and status (SPEC.md §4).
	ValidFrom  string `json:"valid_from" jsonschema:"start of the valid time (RFC 3339), empty when open"`
	ValidUntil string `json:"valid_until" jsonschema:"end of the valid time (exclusive), empty when open"`
	Status     Status `json:"status" jsonschema:"current, superseded (by what, since when), expired or not yet valid, and contradictions"`
}

// NodeOf is the record of node version n with status st.
func NodeOf(n lmdbstore.Node, st lmdbstore.Status) Node {
	return Node{
		Key:        n.Key,
		ID:         ID(n.ID),
		Type:       n.Type,
		Payload:    JSONValue(n.Payload),
		Scope:      n.Scope,
		Rev:        uint64(n.Rev),
		CreatedTS:  Time(n.CreatedTS),
		UpdatedTS:  Time(n.UpdatedTS),
		RunID:      n.RunID,
		TaskID:     n.TaskID,
		ValidFrom:  Time(n.Valid.From),
		ValidUntil: Time(n.Valid.Until),
		Status:     StatusOf(st),
	}
}

// Status is a memory item's status at a read's view and valid-at time
// (SPEC.md §6.3 "status").
type Status struct {
	Current      bool           `json:"current" jsonschema:"valid at the read's valid-at time and superseded by nothing"`
	Expired      bool           `json:"expired" jsonschema:"its valid time does not contain the read's valid-at time"`
	Pending      bool           `json:"pending" jsonschema:"not valid because its valid time begins after the read's valid-at time (not yet valid rather than expired)"`
	SupersededBy []Supersession `json:"superseded_by" jsonschema:"live supersedes edges into the item, oldest first"`
	Newest       string         `json:"newest" jsonschema:"the newest item of its supersede chain; empty when not superseded"`
	Contradicts  []string       `json:"contradicts" jsonschema:"current items a contradicts edge joins it to"`
}

// Supersession is one superseder of an item.
type Supersession struct {
	Key string `json:"key"`
	Rev uint64 `json:"rev" jsonschema:"revision that created the supersedes edge"`
	TS  string `json:"ts"`
}

// StatusOf is the record of status st (empty lists, never null).
func StatusOf(st lmdbstore.Status) Status {
	out := Status{
		Current: st.Current(), Expired: !st.Valid, Pending: st.Pending, Newest: st.Newest,
		SupersededBy: make([]Supersession, 0, len(st.SupersededBy)),
		Contradicts:  append(make([]string, 0, len(st.Contradicts)), st.Contradicts...),
	}
	for _, s := range st.SupersededBy {
		out.SupersededBy = append(out.SupersededBy, Supersession{Key: s.By, Rev: uint64(s.Rev), TS: Time(s.TS)})
	}
	return out
}

// Edge is one live edge as a listing read returns it (SPEC.md §6.3
// "edge").
type Edge struct {
	Src     string          `json:"src"`
	Rel     string          `json:"rel"`
	Dst     string          `json:"dst"`
	Rev     uint64          `json:"rev" jsonschema:"revision that wrote this version"`
	TS      string          `json:"ts" jsonschema:"commit time of that revision"`
	Weight  Weight          `json:"weight"`
	Payload json.RawMessage `json:"payload,omitempty" jsonschema:"the edge's JSON payload, absent when none"`
	// PeerStatus is the status of the listed item (dst for an out-list,
	// src for an in-list) when it is not plainly current: superseded,
	// expired (listed on request) or in conflict.
	PeerStatus *Status `json:"peer_status,omitempty" jsonschema:"status of the listed item when it is not plainly current; absent otherwise"`
}

// KV is one kv entry version (SPEC.md §6.3 "kv").
type KV struct {
	Scope      string          `json:"scope"`
	Namespace  string          `json:"namespace"`
	Key        string          `json:"key"`
	Payload    json.RawMessage `json:"payload"`
	Rev        uint64          `json:"rev"`
	TS         string          `json:"ts"`
	RunID      string          `json:"run_id"`
	TaskID     string          `json:"task_id"`
	ValidFrom  string          `json:"valid_from"`
	ValidUntil string          `json:"valid_until"`
	Status     Status          `json:"status"`
}

// KVOf is the record of kv entry version kv with status st.
func KVOf(kv lmdbstore.KV, st lmdbstore.Status) KV {
	return KV{
		Scope:      kv.Scope,
		Namespace:  kv.Namespace,
		Key:        kv.Key,
		Payload:    JSONValue(kv.Payload),
		Rev:        uint64(kv.Rev),
		TS:         Time(kv.TS),
		RunID:      kv.RunID,
		TaskID:     kv.TaskID,
		ValidFrom:  Time(kv.Valid.From),
		ValidUntil: Time(kv.Valid.Until),
		Status:     StatusOf(st),
	}
}

// Relation is one registered relation (SPEC.md §6.3 "relation").
type Relation struct {
	ID            uint32 `json:"id"`
	Name          string `json:"name"`
	DefaultWeight Weight `json:"default_weight"`
	Bidirectional bool   `json:"bidirectional" jsonschema:"engines also follow it backwards"`
	Inhibitory    bool   `json:"inhibitory" jsonschema:"engines subtract along it"`
	Role          string `json:"role" jsonschema:"what the engines make of it: structure, usage, history or memory (SPEC §1)"`
}

// RelationOf is the record of relation r.
func RelationOf(r lmdbstore.Relation) Relation {
	return Relation{ID: uint32(r.ID), Name: r.Name, DefaultWeight: Weight(r.DefaultWeight),
		Bidirectional: r.Bidirectional, Inhibitory: r.Inhibitory, Role: r.Role.String()}
}

// Commit is what every write returns: the revision it committed (0 when
// it changed nothing) and its commit time.
type Commit struct {
	Rev uint64 `json:"rev" jsonschema:"the revision committed; 0 when nothing changed"`
	TS  string `json:"ts,omitempty" jsonschema:"its commit time (absent when rev is 0)"`
	// Redacted is how many secrets the store replaced by [REDACTED:kind]
	// in the write's keys and payloads (SPEC.md §2).
	Redacted int `json:"redacted,omitempty" jsonschema:"secrets replaced by [REDACTED:kind] before storing (absent when none)"`
}

// CommitOf is the record of commit c.
func CommitOf(c lmdbstore.Commit) Commit {
	if c.Rev == 0 {
		return Commit{Redacted: c.Redacted}
	}
	return Commit{Rev: uint64(c.Rev), TS: Time(c.Time), Redacted: c.Redacted}
}

// Time is t in RFC 3339 with nanoseconds (trailing zeros trimmed), UTC; ""
// for the zero time.
func Time(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// ID is a node id as 16 lowercase hex digits.
func ID(id lmdbstore.NodeID) string { return fmt.Sprintf("%016x", uint64(id)) }

// JSONValue is a stored payload as a JSON value: null when empty,
// compacted. Bytes that are not JSON (only in a damaged store) become a
// JSON string, so the record stays valid JSON.
func JSONValue(p []byte) json.RawMessage {
	if len(bytes.TrimSpace(p)) == 0 {
		return json.RawMessage("null")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, p); err != nil {
		q, _ := json.Marshal(string(p))
		return q
	}
	return b.Bytes()
}

// OptionalPayload is a payload omitted (nil) when absent or null.
func OptionalPayload(p []byte) json.RawMessage {
	v := JSONValue(p)
	if string(v) == "null" {
		return nil
	}
	return v
}

// Marshal encodes v as one line of JSON without HTML escaping and without
// the trailing newline: the encoding of every record memctl prints or
// serves (SPEC.md §6.3).
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Stats is the store summary (SPEC.md §6.3 "stats").
type Stats struct {
	Revision         uint64     `json:"revision"`
	Horizon          uint64     `json:"horizon" jsonschema:"oldest readable revision (0: all history kept)"`
	Nodes            int        `json:"nodes"`
	Edges            int        `json:"edges"`
	KVs              int        `json:"kvs"`
	Relations        int        `json:"relations"`
	AdjacencyChunks  int        `json:"adjacency_chunks"`
	AdjacencyEntries int        `json:"adjacency_entries"`
	Tombstones       int        `json:"tombstones"`
	Superseded       int        `json:"superseded"`
	MissingNodes     int        `json:"missing_nodes"`
	MapSize          int64      `json:"map_size"`
	FileSize         int64      `json:"file_size"`
	Warnings         []string   `json:"warnings"`
	Keyspaces        []Keyspace `json:"keyspaces" jsonschema:"space per LMDB keyspace"`
}

// Keyspace is one keyspace's space in the stats record.
type Keyspace struct {
	Name    string `json:"name"`
	Entries uint64 `json:"entries"`
	Pages   uint64 `json:"pages"`
	Bytes   uint64 `json:"bytes"`
}

// StatsOf is the record of st (empty lists, never null).
func StatsOf(st lmdbstore.Stats) Stats {
	rec := Stats{
		Revision: uint64(st.Revision), Horizon: uint64(st.Horizon),
		Nodes: st.Nodes, Edges: st.Edges, KVs: st.KVs, Relations: st.Relations,
		AdjacencyChunks: st.AdjacencyChunks, AdjacencyEntries: st.AdjacencyEntries,
		Tombstones: st.Tombstones, Superseded: st.Superseded, MissingNodes: st.MissingNodes,
		MapSize: st.MapSize, FileSize: st.FileSize, Warnings: st.Warnings,
		Keyspaces: make([]Keyspace, len(st.Keyspaces)),
	}
	for i, k := range st.Keyspaces {
		rec.Keyspaces[i] = Keyspace{Name: k.Name, Entries: k.Entries, Pages: k.Pages(), Bytes: k.Bytes}
	}
	if rec.Warnings == nil {
		rec.Warnings = []string{}
	}
	return rec
}

// Check is the integrity report (SPEC.md §10 "check"; the CLI prints it
// as one finding a line, §6.3).
type Check struct {
	OK                 bool     `json:"ok" jsonschema:"true when no integrity problem was found"`
	Problems           []string `json:"problems" jsonschema:"integrity violations, each naming the keyspace and key"`
	Warnings           []string `json:"warnings"`
	MissingNodes       int      `json:"missing_nodes" jsonschema:"number of keys referenced by live edges that have no live node (allowed)"`
	MissingNodesListed []string `json:"missing_nodes_listed" jsonschema:"the first 100 of them"`
}

// CheckOf is the record of rep listing at most listed missing nodes (< 0:
// all); lists are empty, never null.
func CheckOf(rep lmdbstore.CheckReport, listed int) Check {
	res := Check{
		OK: len(rep.Problems) == 0, Problems: rep.Problems, Warnings: rep.Warnings,
		MissingNodes: len(rep.MissingNodes), MissingNodesListed: rep.MissingNodes,
	}
	if listed >= 0 && len(res.MissingNodesListed) > listed {
		res.MissingNodesListed = res.MissingNodesListed[:listed]
	}
	for _, p := range []*[]string{&res.Problems, &res.Warnings, &res.MissingNodesListed} {
		if *p == nil {
			*p = []string{}
		}
	}
	return res
}

// ScoredNode is one ranked node (SPEC.md §8.6).
type ScoredNode struct {
	Key   string `json:"key"`
	Score Score  `json:"score"`
}

// SeedMatch is what one query string matched.
type SeedMatch struct {
	Query string `json:"query"`
	Key   string `json:"key"`
	Match string `json:"match" jsonschema:"exact, prefix, substring or fuzzy"`
	Score Score  `json:"score"`
}

// Ranked is a ranking: the nodes best first, and what the queries matched
// (MCP related, resonate, pagerank; the CLI prints Results one a line).
type Ranked struct {
	Rev      uint64       `json:"rev" jsonschema:"the revision of the graph the engine read"`
	Seeds    []SeedMatch  `json:"seeds,omitempty" jsonschema:"what the queries matched (related, resonate)"`
	Results  []ScoredNode `json:"results" jsonschema:"best first"`
	AsOf     *AsOf        `json:"as_of,omitempty" jsonschema:"what the answer is as of: the code graph's commit and dirty flag, what the refresh before it re-read, what is stale"`
	Coverage *Coverage    `json:"coverage,omitempty" jsonschema:"what the graph of the answer's region could not see: unresolved calls, syntax-only packages"`
}

// Harmonic is one resonant frequency of a sweep.
type Harmonic struct {
	Frequency Score        `json:"frequency"`
	Energy    Score        `json:"energy"`
	Antinodes []ScoredNode `json:"antinodes"`
}

// Resonance is the answer of resonate.
type Resonance struct {
	Rev      uint64       `json:"rev"`
	Seeds    []SeedMatch  `json:"seeds"`
	Results  []ScoredNode `json:"results,omitempty" jsonschema:"without sweep: nodes by amplitude"`
	Resonant []Harmonic   `json:"resonant,omitempty" jsonschema:"with sweep: the resonant frequencies in frequency order"`
	AsOf     *AsOf        `json:"as_of,omitempty" jsonschema:"what the answer is as of: the code graph's commit and dirty flag, what the refresh before it re-read, what is stale"`
	Coverage *Coverage    `json:"coverage,omitempty" jsonschema:"what the graph of the answer's region could not see: unresolved calls, syntax-only packages"`
}

// Affected is one node of a blast radius.
type Affected struct {
	Key      string `json:"key"`
	Distance int    `json:"distance" jsonschema:"fewest hops from the origin"`
	Score    Score  `json:"score"`
}

// Impact is the answer of impact.
type Impact struct {
	Rev      uint64     `json:"rev"`
	Origin   string     `json:"origin" jsonschema:"the key the query resolved to"`
	Affected []Affected `json:"affected" jsonschema:"by score, then distance"`
	AsOf     *AsOf      `json:"as_of,omitempty" jsonschema:"what the answer is as of: the code graph's commit and dirty flag, what the refresh before it re-read, what is stale"`
	Coverage *Coverage  `json:"coverage,omitempty" jsonschema:"what the graph of the answer's region could not see: unresolved calls, syntax-only packages"`
}

// AsOf says what an answer is as of (SPEC.md §9.10): the revision read
// and, when the store follows a code tree, the git commit its code graph
// was ingested at, whether the tree was dirty, what the refresh before the
// answer re-read, and — when refresh was off or failed — the files changed
// since (the answer does not see them).
type AsOf struct {
	Rev       uint64   `json:"rev" jsonschema:"the revision the answer read"`
	Commit    string   `json:"commit,omitempty" jsonschema:"the git commit the code graph was ingested at"`
	Dirty     bool     `json:"dirty,omitempty" jsonschema:"the tree had uncommitted changes when it was ingested"`
	Refreshed []string `json:"refreshed,omitempty" jsonschema:"files re-read by the refresh before this answer"`
	Stale     []string `json:"stale,omitempty" jsonschema:"files changed since the code graph was ingested, which this answer does not see (refresh off or failed)"`
	Error     string   `json:"refresh_error,omitempty" jsonschema:"why the refresh failed"`
}

// Line is the one-line text form: "as of rev N (commit C, dirty)", then
// what was refreshed or is stale.
func (a AsOf) Line() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "as of rev %d", a.Rev)
	if a.Commit != "" {
		c := a.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		fmt.Fprintf(&b, " (commit %s", c)
		if a.Dirty {
			b.WriteString(", dirty")
		}
		b.WriteString(")")
	}
	if n := len(a.Refreshed); n > 0 {
		fmt.Fprintf(&b, "; refreshed %d file(s)", n)
	}
	if n := len(a.Stale); n > 0 {
		fmt.Fprintf(&b, "; STALE: %d file(s) changed since: %s", n, strings.Join(firstN(a.Stale, 5), ", "))
		if n > 5 {
			b.WriteString(", …")
		}
	}
	if a.Error != "" {
		fmt.Fprintf(&b, "; refresh failed: %s", a.Error)
	}
	return b.String()
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// KeysOfRanked are the keys a ranked answer involves: its seeds and
// results.
func KeysOfRanked(seeds []SeedMatch, results []ScoredNode) []string {
	var out []string
	for _, s := range seeds {
		out = append(out, s.Key)
	}
	for _, r := range results {
		out = append(out, r.Key)
	}
	return out
}

// KeysOfImpact are the keys an impact answer involves: its origin and
// every affected node.
func KeysOfImpact(i Impact) []string {
	out := []string{i.Origin}
	for _, a := range i.Affected {
		out = append(out, a.Key)
	}
	return out
}

// Coverage says what an answer could not see (SPEC.md §8.7): over the
// files of the answer's region (its origin and results), how many call
// sites ingest could not resolve and which packages were read from syntax
// only. Partial is true when either is non-zero: an agent should then
// fall back to a text search for callers.
type Coverage struct {
	Files           int      `json:"files" jsonschema:"files in the answer's region"`
	Unresolved      int      `json:"unresolved_calls" jsonschema:"call sites in those files that resolved to no symbol"`
	SyntaxOnly      []string `json:"syntax_only,omitempty" jsonschema:"packages there read from syntax only (not type-checked)"`
	UnresolvedFiles []string `json:"unresolved_files,omitempty" jsonschema:"the files with unresolved calls, most first (at most 10)"`
	Partial         bool     `json:"partial" jsonschema:"the graph of this region is known to be incomplete"`
}

// Line is the one-line text form.
func (c Coverage) Line() string {
	if !c.Partial {
		return fmt.Sprintf("coverage: %d file(s), every call resolved", c.Files)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "coverage: PARTIAL: %d unresolved call(s) in %d file(s)", c.Unresolved, c.Files)
	if len(c.UnresolvedFiles) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(firstN(c.UnresolvedFiles, 3), ", "))
	}
	if n := len(c.SyntaxOnly); n > 0 {
		fmt.Fprintf(&b, "; %d package(s) read from syntax only: %s", n, strings.Join(firstN(c.SyntaxOnly, 3), ", "))
	}
	b.WriteString("; callers may be missing: search the text too")
	return b.String()
}

// SearchHit is one memory item found by what it says (SPEC.md §8.7): the
// CLI's `search --json` line and an element of the MCP search tool's
// `hits`.
type SearchHit struct {
	Key        string `json:"key"`
	Type       string `json:"type" jsonschema:"the node's type, or kv for a kv entry (its key is the kv address)"`
	Score      Score  `json:"score" jsonschema:"the fused score: reciprocal ranks of the text and key rankings"`
	TextRank   int    `json:"text_rank,omitempty" jsonschema:"rank in the BM25 text ranking (omitted when not ranked there)"`
	KeyRank    int    `json:"key_rank,omitempty" jsonschema:"rank in the key matching (omitted when not ranked there)"`
	Match      string `json:"match,omitempty" jsonschema:"how the key matched: exact, prefix, substring or fuzzy"`
	Superseded bool   `json:"superseded,omitempty"`
	Expired    bool   `json:"expired,omitempty"`
}
