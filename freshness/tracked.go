package freshness

// The tree a store follows. `ingest code DIR` goes through Ingest, which
// writes the stat file (§9.9) with DIR and the options it read with; from
// then on the answering surfaces (context, the engine commands, the MCP
// server) call RefreshTracked, which refreshes that tree with those
// options, without being told either. A store whose code was never
// ingested this way follows no tree: RefreshTracked reports so and
// answers come from memory as it is.

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/memctl/memctl/ingest/codetree"
	"github.com/memctl/memctl/ingest/precise"
	"github.com/memctl/memctl/lmdbstore"
)

// Ingest is `ingest code DIR`: it re-reads every language whose tree hash
// changed (all of them with o.Ingest.Force), writes the difference in one
// revision with the git state, and records the stat file, so later
// refreshes follow DIR. The Result's Summary is the ingest's.
func Ingest(s *lmdbstore.Store, dir string, o Options) (Result, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Result{}, &codetree.DirError{Dir: dir, Err: err}
	}
	return refreshFull(s, abs, o.withDefaults(s), nil)
}

// Tracked returns the tree s follows and the options it was ingested with
// (from the stat file); ok is false when there is none, or it is damaged.
func Tracked(s *lmdbstore.Store) (dir string, o Options, ok bool) {
	o = Options{}.withDefaults(s)
	st, err := readState(o.StatePath)
	if err != nil || st == nil || st.Dir == "" {
		return "", o, false
	}
	in, err := parseConfig(st.Config)
	if err != nil {
		return "", o, false
	}
	o.Ingest = in
	o = o.withDefaults(s)
	return st.Dir, o, true
}

// RefreshTracked refreshes the tree s follows (Tracked). tracked is false,
// and nothing is done, when s follows none. With disabled, nothing is
// written and the Result lists the stale files. cache is the caller's
// refresh cache (nil for a one-shot process, whose cache file is saved
// while it answers: it calls the Result's Wait before it exits).
func RefreshTracked(s *lmdbstore.Store, disabled bool, cache *Cache) (res Result, tracked bool, err error) {
	dir, o, ok := Tracked(s)
	if !ok {
		return Result{}, false, nil
	}
	o.Disabled, o.Cache, o.SaveLater = disabled, cache, cache == nil
	res, err = Refresh(s, dir, o)
	return res, true, err
}

// parseConfig reads back what Options.config wrote.
func parseConfig(c string) (codetree.Options, error) {
	var o codetree.Options
	var langs string
	if rest, ok := strings.CutSuffix(c, preciseConfig); ok {
		// Indexers are found as a plain run finds them (PATH, MEMCTL_*).
		c, o.Precise = rest, &precise.Options{}
	}
	n, err := fmt.Sscanf(c, "go=%t syntax=%t offline=%t vendor=%t testdata=%t hidden=%t langs=%s",
		&o.WithGo, &o.SyntaxOnly, &o.Offline, &o.Walk.IncludeVendor, &o.Walk.IncludeTestdata, &o.Walk.IncludeHidden, &langs)
	if err != nil && !(n == 6 && strings.HasSuffix(c, "langs=")) {
		return o, fmt.Errorf("freshness: stat file config %q: %w", c, err)
	}
	if langs != "" {
		o.Langs = strings.Split(langs, ",")
	}
	return o, nil
}
