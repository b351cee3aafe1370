package snapshot

import "runtime/debug"

// Beside starts fn, which reads mapped files, on its own goroutine and
// returns what waits for it: the exporter builds independent sections of
// one file at once. A panic in fn — a memory fault in a mapping included,
// which SetPanicOnFault turns into one — is raised again by the wait, on
// the caller's goroutine, where the caller's guards see it as they would
// have had fn run there. The wait must be called, once, on every path.
func Beside(fn func() error) (wait func() error) {
	var err error
	var p any
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() { p = recover() }()
		err = fn()
	}()
	return func() error {
		<-done
		if p != nil {
			panic(p)
		}
		return err
	}
}
