package freshness

// The refresh cache file of one-shot processes (SPEC.md §9.10): a refresh
// without a process Cache (the CLI) reads the codetree cache the last
// refresh of the store saved in the store directory, ingests through it
// (parsing only contents it does not hold, comparing with the store only
// what changed since the graph it holds, when that graph is still the
// store's), then saves it again. The file is a cache: missing, damaged or
// stale, it is ignored and the refresh costs what it did without it.

import (
	"os"
	"path/filepath"

	"github.com/memctl/memctl/ingest/codetree"
)

// CacheFile is the refresh cache file's name in the store directory.
const CacheFile = "fresh.cache"

// NoCacheFile as Options.CachePath: no refresh cache file is read or
// written.
const NoCacheFile = "-"

// diskCache gives a refresh without a process cache the cache file's
// codetree cache and returns what saves it once the ingest succeeded. The
// file is read on its own goroutine while the refresh walks the tree
// (refreshFull takes it through o.loadCache just before the ingest). A
// process cache that holds no parse yet (a long-lived process's first
// refresh that reads files) starts from the file instead of parsing
// everything; a process cache is not written to the file. With
// NoCacheFile it does nothing. (An explicit ingest, Ingest, uses none:
// it compares everything with the store and reports the languages it
// found unchanged.)
func (o Options) diskCache() (Options, func(codetree.Summary)) {
	nothing := func(codetree.Summary) {}
	if o.CachePath == NoCacheFile {
		return o, nothing
	}
	path := o.CachePath
	if path == "" {
		path = filepath.Join(filepath.Dir(o.StatePath), CacheFile)
	}
	if o.Cache != nil {
		if o.Cache.code.Parses() == 0 {
			if from, err := loadCacheFile(path); err == nil {
				o.Cache.code.Adopt(from)
			}
		}
		return o, nothing
	}
	o.loadCache = later(func() *codetree.Cache {
		c, _ := loadCacheFile(path) // unusable: an empty cache, as in a new process
		return c
	})
	return o, func(sum codetree.Summary) {
		c := o.loadCache()
		if o.cacheFileUsed != nil {
			o.cacheFileUsed(c)
		}
		if !sum.Unchanged {
			if b, err := c.MarshalFile(); err == nil {
				_ = writeCacheFile(path, b) // a file that cannot be written costs speed, not correctness
			}
		}
	}
}

// loadCacheFile reads the refresh cache file: an empty cache, with the
// reason, when it is missing or not usable.
func loadCacheFile(path string) (*codetree.Cache, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return codetree.NewCache(), err
	}
	return codetree.UnmarshalCache(b)
}
