package lmdbstore

// The keyspace table: one row per LMDB named database (SPEC.md §2), in
// SPEC order. It drives the DBI open list (Init, Open), Space, vacuum's
// copy and the fuzz decoders (fuzzhooks.go). A new keyspace is one row
// here plus one file, named after it and headed by its SPEC §2 layout,
// holding its keys, codec, reads and writes (doc.go, "Where things go").
//
// Check walks the keyspaces in its own order (check.go, checker.run): its
// walks depend on earlier ones (nodes needs ids, edges needs out, in and
// their symmetry), so the table names each keyspace's walk but does not
// order them.

import (
	"github.com/PowerDNS/lmdb-go/lmdb"
)

// keyspace is one row of the table.
type keyspace struct {
	name  string                // DBI name
	holds string                // what it holds
	flags uint                  // DBI flags beyond Create (fixed at creation; every keyspace uses none)
	dbi   func(*dbis) *lmdb.DBI // its handle in Store.db
	check string                // the checker walk that verifies it
	// value decodes a value stored under key and returns its canonical
	// encoding (RecordDecoder.DecodeValue); key parses a key the same way
	// (RecordDecoder.ParseKey); db is the row's name. nil: the keyspace
	// has no such hook (ParseKey of meta and relname keys, for one).
	value func(d *RecordDecoder, db string, key, value []byte) ([]byte, error)
	key   func(d *RecordDecoder, db string, key []byte) ([]byte, error)
}

// keyspaces is the table (immutable).
var keyspaces = [...]keyspace{
	{name: dbMeta, holds: "the store's counters by ASCII name", dbi: func(d *dbis) *lmdb.DBI { return &d.meta }, check: "meta", value: decodeU64Value},
	{name: dbNodes, holds: "the latest version of every node, by id", dbi: func(d *dbis) *lmdb.DBI { return &d.n }, check: "nodes", value: recordValue(histNode), key: id8Key},
	{name: dbEdges, holds: "the latest version of every edge with an explicit record, by (src, rel, dst)", dbi: func(d *dbis) *lmdb.DBI { return &d.e }, check: "edges", value: recordValue(histEdge), key: adjKeyCanonical},
	{name: dbOut, holds: "adjacency chunks by source", dbi: func(d *dbis) *lmdb.DBI { return &d.out }, check: "adj, symmetry", key: adjKeyCanonical},
	{name: dbIn, holds: "adjacency chunks by destination", dbi: func(d *dbis) *lmdb.DBI { return &d.in }, check: "adj, symmetry", key: adjKeyCanonical},
	{name: dbKV, holds: "the latest version of every kv entry, by scope, namespace and key", dbi: func(d *dbis) *lmdb.DBI { return &d.kv }, check: "kv", value: recordValue(histKV), key: kvKeyCanonical},
	{name: dbHist, holds: "every superseded version, by kind, entity and revision", dbi: func(d *dbis) *lmdb.DBI { return &d.hist }, check: "hist", value: histValue, key: histKeyCanonical},
	{name: dbIDs, holds: "the canonical key of every node id", dbi: func(d *dbis) *lmdb.DBI { return &d.ids }, check: "ids", value: decodeIDsValue, key: id8Key},
	{name: dbRel, holds: "the relation table, by relation id", dbi: func(d *dbis) *lmdb.DBI { return &d.rel }, check: "relations", value: decodeRelValue, key: relKeyCanonical},
	{name: dbRelName, holds: "relation ids by name", dbi: func(d *dbis) *lmdb.DBI { return &d.relname }, check: "relations", value: decodeRelNameValue},
	{name: dbLog, holds: "the log record of every revision", dbi: func(d *dbis) *lmdb.DBI { return &d.log }, check: "log", value: decodeLogValue, key: id8Key},
	{name: dbTS, holds: "revisions by commit time", dbi: func(d *dbis) *lmdb.DBI { return &d.ts }, check: "tsIndex", value: decodeU64Value, key: id8Key},
	{name: dbRevs, holds: "the commit time and provenance of every revision", dbi: func(d *dbis) *lmdb.DBI { return &d.revs }, check: "revs", value: decodeRevsValue, key: id8Key},
}

// keyspaceNamed is the row of keyspace name (nil: none).
func keyspaceNamed(name string) *keyspace {
	for i := range keyspaces {
		if keyspaces[i].name == name {
			return &keyspaces[i]
		}
	}
	return nil
}

// dbis holds the store's DBI handles, one per row of the table.
type dbis struct {
	meta, n, e, out, in, kv, hist, ids, rel, relname, log, ts, revs lmdb.DBI
}

// name is the keyspace name of dbi ("" if it is none of the store's).
func (d *dbis) name(dbi lmdb.DBI) string {
	for i := range keyspaces {
		if *keyspaces[i].dbi(d) == dbi {
			return keyspaces[i].name
		}
	}
	return ""
}

// each calls fn with every keyspace's row and handle, in table order.
func (d *dbis) each(fn func(ks *keyspace, dbi *lmdb.DBI) error) error {
	for i := range keyspaces {
		if err := fn(&keyspaces[i], keyspaces[i].dbi(d)); err != nil {
			return err
		}
	}
	return nil
}
