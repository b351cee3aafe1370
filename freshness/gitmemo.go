package freshness

// The git memo of one-shot refreshes (SPEC.md §9.10): the memo a Cache
// keeps in memory (cache.go) is kept, for processes without one, in the
// refresh cache file's extra bytes (codetree.Cache.SetExtra):
//
//	str shape ‖ pc(gitMemo)
//
// shape is plaincodec's digest of gitMemo's layout. Bytes that do not
// decode, or of another shape, are no memo: git runs, as it always may.

import (
	"reflect"
	"time"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/codetree"
	"github.com/memctl/memctl/plaincodec"
)

var memoCodec = plaincodec.MustNew(reflect.TypeFor[gitMemo]())

// encodeMemo is m's bytes (nil for no memo).
func encodeMemo(m *gitMemo) []byte {
	if m == nil {
		return nil
	}
	return memoCodec.Append(plaincodec.AppendString(nil, memoCodec.Shape()), *m)
}

// decodeMemo is the memo b holds, nil when it holds none.
func decodeMemo(b []byte) *gitMemo {
	if len(b) == 0 {
		return nil
	}
	d := plaincodec.NewDecoder(b)
	if d.String() != memoCodec.Shape() {
		return nil
	}
	var m gitMemo
	memoCodec.DecodeInto(d, &m)
	if d.Finish() != nil {
		return nil
	}
	return &m
}

// oneShotGit is the GitState reader of a refresh without a process cache
// (codetree Options.GitState): it proves a dirty tree from the memo the
// cache file holds when it can, as a Cache does from its own, and runs
// git's status otherwise, keeping the new memo in the cache for the
// file. When HEAD moved since the last refresh (prevCommit: the stat
// file's), no memo can serve, and git's status is read at once, on its
// own goroutine, while the cache file is read and the tree parsed. Its
// first call reads so; a later one (an ingest that retries) reads afresh.
func oneShotGit(cache func() *codetree.Cache, abs, key string, entries []entry, known map[string]string, walked time.Time,
	prevCommit string, runs *int) func(string) (ingest.GitState, bool, error) {
	var ahead func() (ingest.GitStatus, bool, error)
	gitDir, commonDir := findGitDir(abs)
	if head, ok := readHead(gitDir, commonDir); !ok || head != prevCommit {
		type read struct {
			gs  ingest.GitStatus
			ok  bool
			err error
		}
		status := later(func() read {
			gs, ok, err := ingest.ReadGitStatus(abs)
			return read{gs, ok, err}
		})
		ahead = func() (ingest.GitStatus, bool, error) { r := status(); return r.gs, r.ok, r.err }
	}
	return func(dir string) (ingest.GitState, bool, error) {
		c := cache()
		if dir != abs {
			ahead = nil
		}
		memo := decodeMemo(c.Extra())
		st, ok, ran, err := readGit(&memo, abs, key, dir, entries, currentHashes(abs, entries, known), walked, ahead)
		ahead = nil
		if ran {
			c.SetExtra(encodeMemo(memo))
			if runs != nil {
				*runs++
			}
		}
		return st, ok, err
	}
}
