package peers

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/memctl/memctl/bench/gen"
	_ "modernc.org/sqlite" // pure-Go SQLite driver "sqlite"
)

// SQLite is the adjacency-table design of SQLite-backed agent memories:
// a nodes table and an edges table with indexes on (src, rel) and (dst,
// rel) — extended with the far end, so that get-out and get-in are
// covering index scans and a duplicate edge is refused — WAL journal,
// synchronous=FULL (durable commits), 3-hop through a recursive CTE.
// Node ids are dense integers in ingestion order, as an application using
// INTEGER PRIMARY KEY would have them.
type SQLite struct {
	db                   *sql.DB
	g                    *gen.Graph
	rev                  int
	out, in, outAt, hop3 *sql.Stmt
	diffN, diffE         *sql.Stmt
}

const sqliteSchema = `
CREATE TABLE nodes(
  id      INTEGER PRIMARY KEY,
  key     TEXT    NOT NULL UNIQUE,
  type    TEXT    NOT NULL,
  payload BLOB    NOT NULL,
  rev     INTEGER NOT NULL);
CREATE TABLE edges(
  src    INTEGER NOT NULL,
  rel    INTEGER NOT NULL,
  dst    INTEGER NOT NULL,
  weight REAL    NOT NULL,
  rev    INTEGER NOT NULL);
CREATE UNIQUE INDEX edges_out ON edges(src, rel, dst);
CREATE INDEX edges_in ON edges(dst, rel, src);
`

const sqliteHop3 = `
WITH RECURSIVE hop(id, depth) AS (
  SELECT ?1, 0
  UNION
  SELECT e.dst, hop.depth + 1 FROM hop JOIN edges e ON e.src = hop.id WHERE hop.depth < 3)
SELECT n.key FROM nodes n WHERE n.id IN (SELECT id FROM hop)`

// sqliteOut is get-out with each destination's key (what a user gets).
const sqliteOut = `SELECT e.rel, n.key FROM edges e JOIN nodes n ON n.id = e.dst WHERE e.src = ?`

func (s *SQLite) Name() string { return "sqlite" }

func sqliteOpen(dir string) (*sql.DB, error) {
	dsn := "file:" + filepath.Join(dir, "graph.sqlite") +
		"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(5000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	// One connection: prepared statements stay prepared, and the
	// comparison is single-threaded like every other system's.
	db.SetMaxOpenConns(1)
	return db, nil
}

func (s *SQLite) Create(dir string, g *gen.Graph) error {
	db, err := sqliteOpen(dir)
	if err != nil {
		return err
	}
	s.db, s.g = db, g
	if _, err := db.Exec(sqliteSchema); err != nil {
		return fmt.Errorf("sqlite schema: %w", err)
	}
	return s.prepare()
}

func (s *SQLite) prepare() error {
	var err error
	prep := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		st, err = s.db.Prepare(q)
		return st
	}
	s.out = prep(sqliteOut)
	s.in = prep(`SELECT e.rel, n.key FROM edges e JOIN nodes n ON n.id = e.src WHERE e.dst = ?`)
	s.outAt = prep(`SELECT e.rel, n.key FROM edges e JOIN nodes n ON n.id = e.dst WHERE e.src = ? AND e.rev <= ?`)
	s.hop3 = prep(sqliteHop3)
	s.diffN = prep(`SELECT id, key, type, payload FROM nodes WHERE rev > ?`)
	s.diffE = prep(`SELECT src, rel, dst, weight FROM edges WHERE rev > ?`)
	return err
}

func (s *SQLite) Load(b Batch) error {
	s.rev++
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	insN, err := tx.Prepare(`INSERT INTO nodes(id, key, type, payload, rev) VALUES(?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	insE, err := tx.Prepare(`INSERT INTO edges(src, rel, dst, weight, rev) VALUES(?, ?, ?, 1.0, ?)`)
	if err != nil {
		return err
	}
	var buf []byte
	for _, n := range b.Nodes {
		node := s.g.Nodes[n]
		buf = s.g.Payload(n, buf[:0])
		if _, err := insN.Exec(int64(n), node.Key, node.Type.String(), buf, s.rev); err != nil {
			return err
		}
	}
	for _, e := range b.Edges {
		if _, err := insE.Exec(int64(e.Src), int64(e.Rel), int64(e.Dst), s.rev); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (s *SQLite) PutEdge(e gen.Edge) error {
	s.rev++
	_, err := s.db.Exec(`INSERT INTO edges(src, rel, dst, weight, rev) VALUES(?, ?, ?, 1.0, ?)`,
		int64(e.Src), int64(e.Rel), int64(e.Dst), s.rev)
	return err
}

func (s *SQLite) Settle() error {
	_, err := s.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

func scanEdges(rows *sql.Rows, err error, fn EdgeFunc) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	var rel int64
	var key sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&rel, &key); err != nil {
			return err
		}
		fn(gen.Rel(rel).Name(), aliasString(key))
	}
	return rows.Err()
}

func (s *SQLite) GetOut(node uint32, fn EdgeFunc) error {
	rows, err := s.out.Query(int64(node))
	return scanEdges(rows, err, fn)
}

func (s *SQLite) GetIn(node uint32, fn EdgeFunc) error {
	rows, err := s.in.Query(int64(node))
	return scanEdges(rows, err, fn)
}

// GetOutAt filters on the revision stored with each row. That is only an
// equivalent for an insert-only history: a plain adjacency table keeps no
// deleted or superseded rows.
func (s *SQLite) GetOutAt(node uint32, rev int, fn EdgeFunc) error {
	rows, err := s.outAt.Query(int64(node), rev)
	return scanEdges(rows, err, fn)
}

func (s *SQLite) ThreeHop(node uint32, fn KeyFunc) (int, error) {
	rows, err := s.hop3.Query(int64(node))
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	var key sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&key); err != nil {
			return 0, err
		}
		fn(aliasString(key))
		n++
	}
	return n, rows.Err()
}

// DiffSince reads every row written after rev. With no change log, and no
// index on rev (which would slow every write), that is a full scan.
func (s *SQLite) DiffSince(rev int) (int, error) {
	n := 0
	rows, err := s.diffN.Query(rev)
	if err != nil {
		return 0, err
	}
	var id int64
	var key, typ string
	var payload []byte
	for rows.Next() {
		if err := rows.Scan(&id, &key, &typ, &payload); err != nil {
			rows.Close()
			return 0, err
		}
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	rows, err = s.diffE.Query(rev)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var src, rel, dst int64
	var w float64
	for rows.Next() {
		if err := rows.Scan(&src, &rel, &dst, &w); err != nil {
			return 0, err
		}
		n++
	}
	return n, rows.Err()
}

func (s *SQLite) FreshArg(_ *gen.Graph, node uint32) string {
	return strconv.FormatUint(uint64(node), 10)
}

func (s *SQLite) FreshQuery(dir, arg string, opened func()) (n int, done func() error, err error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil {
		return 0, done, err
	}
	db, err := sqliteOpen(dir)
	if err != nil {
		return 0, nil, err
	}
	done = db.Close
	opened()
	rows, err := db.Query(sqliteOut, id)
	err = scanEdges(rows, err, func(string, string) { n++ })
	return n, done, err
}

func (s *SQLite) Close() error {
	if s.db == nil {
		return nil
	}
	err := s.db.Close()
	s.db = nil
	return err
}

// Space is each table's and index's pages (the dbstat virtual table).
func (s *SQLite) Space() ([]Keyspace, error) {
	rows, err := s.db.Query(`SELECT name, count(*), sum(pgsize),
		sum(CASE WHEN pagetype = 'leaf' THEN ncell ELSE 0 END) FROM dbstat GROUP BY name ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Keyspace
	for rows.Next() {
		var k Keyspace
		if err := rows.Scan(&k.Name, &k.Pages, &k.Bytes, &k.Entries); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// VacuumInto is SQLite's VACUUM INTO: the database rebuilt into a new file.
func (s *SQLite) VacuumInto(dir string) error {
	_, err := s.db.Exec(`VACUUM INTO ?`, filepath.Join(dir, "graph.db"))
	return err
}
