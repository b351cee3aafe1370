package freshness

import "sync"

// later starts fn on its own goroutine and returns what waits for its
// result: the first call waits, every call returns the same value. A
// refresh starts what it will wait for (the cache file's read, git's
// status) before the work it can do meanwhile, and a one-shot command
// saves the cache file while it answers.
func later[T any](fn func() T) (wait func() T) {
	ch := make(chan T, 1)
	go func() { ch <- fn() }()
	return sync.OnceValue(func() T { return <-ch })
}
