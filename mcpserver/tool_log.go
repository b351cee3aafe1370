package mcpserver

// diff_since and history read the append log (never pruned, so both work
// below the retention horizon too).

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/ops"
)

// Default and largest page of diff_since and history.
const (
	defaultOpLimit = 1000
	maxOpLimit     = 10000
)

// OpRecord is one logged operation (ops.LogOp, the format batch reads).
type OpRecord = ops.LogOp

// DiffSinceArgs: diff_since.
type DiffSinceArgs struct {
	SinceRev  *uint64 `json:"since_rev,omitempty" jsonschema:"list the operations committed after this revision (0: from the beginning)"`
	SinceTime string  `json:"since_time,omitempty" jsonschema:"list the operations committed after the latest revision at or before this RFC 3339 time"`
	Cursor    string  `json:"cursor,omitempty" jsonschema:"continue where a previous answer stopped (its next_cursor)"`
	RunID     string  `json:"run_id,omitempty" jsonschema:"only operations recorded with this run id"`
	TaskID    string  `json:"task_id,omitempty" jsonschema:"only operations recorded with this task id"`
	Limit     int     `json:"limit,omitempty" jsonschema:"at most this many operations (default 1000, at most 10000)"`
}

// OpList is the answer of diff_since.
type OpList struct {
	Rev        uint64     `json:"rev" jsonschema:"the latest revision when the read ran"`
	Ops        []OpRecord `json:"ops" jsonschema:"in commit order, then in order within a revision"`
	NextCursor string     `json:"next_cursor,omitempty" jsonschema:"present when more operations follow: pass it as cursor"`
}

// logCursor is a position in the log: operation index idx of revision rev.
type logCursor struct {
	rev lmdbstore.Revision
	idx int
}

func (c logCursor) String() string { return fmt.Sprintf("%d.%d", c.rev, c.idx) }

func parseCursor(s string) (logCursor, error) {
	r, i, ok := strings.Cut(s, ".")
	rev, err1 := strconv.ParseUint(r, 10, 64)
	idx, err2 := strconv.Atoi(i)
	if !ok || err1 != nil || err2 != nil || rev == 0 || idx < 0 {
		return logCursor{}, invalidArg("cursor %q is not one this server returned", s)
	}
	return logCursor{lmdbstore.Revision(rev), idx}, nil
}

func (s *Server) diffSince(_ context.Context, a *DiffSinceArgs) (OpList, error) {
	limit, _, err := pageBounds(a.Limit, 0, defaultOpLimit, maxOpLimit)
	if err != nil {
		return OpList{}, err
	}
	var since lmdbstore.At
	var from logCursor // skip operations before this position
	n := 0
	if a.SinceRev != nil {
		n++
		since = lmdbstore.AtRevision(lmdbstore.Revision(*a.SinceRev))
	}
	if a.SinceTime != "" {
		n++
		t, err := time.Parse(time.RFC3339Nano, a.SinceTime)
		if err != nil {
			return OpList{}, invalidArg("since_time %q is not an RFC 3339 time", a.SinceTime)
		}
		since = lmdbstore.AtTime(t)
	}
	if a.Cursor != "" {
		n++
		if from, err = parseCursor(a.Cursor); err != nil {
			return OpList{}, err
		}
		since = lmdbstore.AtRevision(from.rev - 1)
	}
	if n != 1 {
		return OpList{}, invalidArg("give exactly one of since_rev, since_time and cursor")
	}
	res := OpList{Ops: []OpRecord{}}
	err = s.store.View(func(r *lmdbstore.ReadTxn) error {
		res.Rev = uint64(r.Revision())
		var cur logCursor
		return ops.ScanLog(r, since, lmdbstore.DiffFilter{}, func(op lmdbstore.Op, rel lmdbstore.Relation) error {
			if op.Rev != cur.rev {
				cur = logCursor{op.Rev, 0}
			} else {
				cur.idx++
			}
			if cur.rev == from.rev && cur.idx < from.idx {
				return nil
			}
			if a.RunID != "" && op.RunID != a.RunID || a.TaskID != "" && op.TaskID != a.TaskID {
				return nil
			}
			if len(res.Ops) == limit {
				res.NextCursor = cur.String()
				return ops.ErrStopScan
			}
			res.Ops = append(res.Ops, ops.LogOpOf(op, rel))
			return nil
		})
	})
	return res, err
}

// HistoryArgs: history. Name a node (key), a kv entry (namespace and key,
// scope) or an edge (src, rel, dst).
type HistoryArgs struct {
	Key       string  `json:"key,omitempty" jsonschema:"node key; with namespace: the kv entry's key"`
	Namespace string  `json:"namespace,omitempty" jsonschema:"kv namespace: the history of the kv entry (scope, namespace, key)"`
	Scope     string  `json:"scope,omitempty" jsonschema:"kv scope (default: the server's --scope)"`
	Src       string  `json:"src,omitempty" jsonschema:"edge source key: the history of the edge (src, rel, dst)"`
	Rel       string  `json:"rel,omitempty" jsonschema:"edge relation"`
	Dst       string  `json:"dst,omitempty" jsonschema:"edge destination key"`
	SinceRev  *uint64 `json:"since_rev,omitempty" jsonschema:"only versions written after this revision (the log is read from there: faster on long histories)"`
	Limit     int     `json:"limit,omitempty" jsonschema:"at most this many versions, the newest (default 1000, at most 10000)"`
}

// History is the answer of history.
type History struct {
	Rev       uint64     `json:"rev" jsonschema:"the latest revision when the read ran"`
	Versions  []OpRecord `json:"versions" jsonschema:"every put and delete of the entity, oldest first"`
	Truncated bool       `json:"truncated" jsonschema:"true when older versions were left out (limit)"`
}

func (s *Server) history(_ context.Context, a *HistoryArgs) (History, error) {
	limit, _, err := pageBounds(a.Limit, 0, defaultOpLimit, maxOpLimit)
	if err != nil {
		return History{}, err
	}
	var match func(op lmdbstore.Op) bool
	switch {
	case a.Src != "" || a.Rel != "" || a.Dst != "":
		if a.Src == "" || a.Rel == "" || a.Dst == "" || a.Key != "" || a.Namespace != "" {
			return History{}, invalidArg("an edge's history needs src, rel and dst (and no key or namespace)")
		}
		match = func(op lmdbstore.Op) bool {
			return (op.Kind == lmdbstore.OpPutEdge || op.Kind == lmdbstore.OpDelEdge) &&
				op.Src == a.Src && op.Rel == a.Rel && op.Dst == a.Dst
		}
	case a.Namespace != "":
		if a.Key == "" {
			return History{}, invalidArg("a kv entry's history needs namespace and key")
		}
		scope := s.kvScope(a.Scope)
		match = func(op lmdbstore.Op) bool {
			return (op.Kind == lmdbstore.OpPutKV || op.Kind == lmdbstore.OpDelKV) &&
				op.Scope == scope && op.Namespace == a.Namespace && op.Key == a.Key
		}
	case a.Key != "":
		match = func(op lmdbstore.Op) bool {
			return (op.Kind == lmdbstore.OpPutNode || op.Kind == lmdbstore.OpDelNode) && op.NodeKey == a.Key
		}
	default:
		return History{}, invalidArg("name a node (key), a kv entry (namespace, key) or an edge (src, rel, dst)")
	}
	since := lmdbstore.AtRevision(0)
	if a.SinceRev != nil {
		since = lmdbstore.AtRevision(lmdbstore.Revision(*a.SinceRev))
	}
	res := History{Versions: []OpRecord{}}
	err = s.store.View(func(r *lmdbstore.ReadTxn) error {
		res.Rev = uint64(r.Revision())
		return ops.ScanLog(r, since, lmdbstore.DiffFilter{}, func(op lmdbstore.Op, rel lmdbstore.Relation) error {
			if !match(op) {
				return nil
			}
			if len(res.Versions) == 2*limit { // keep the newest: drop the older half (amortised O(1))
				res.Versions = append(res.Versions[:0], res.Versions[limit:]...)
				res.Truncated = true
			}
			res.Versions = append(res.Versions, ops.LogOpOf(op, rel))
			return nil
		})
	})
	if len(res.Versions) > limit {
		res.Versions = res.Versions[len(res.Versions)-limit:]
		res.Truncated = true
	}
	return res, err
}
