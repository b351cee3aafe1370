package snapshot

import (
	"errors"
	"testing"
)

// Beside returns fn's error from the wait, and a panic in fn is raised by
// the wait on the caller's goroutine (where a recover sees it), not on
// fn's, which would end the process.
func TestBesideReturnsErrorAndRaisesPanicAtWait(t *testing.T) {
	want := errors.New("boom")
	ran := false
	wait := Beside(func() error { ran = true; return want })
	if err := wait(); err != want || !ran {
		t.Fatalf("wait = %v (ran %v), want %v", err, ran, want)
	}
	var got any
	func() {
		defer func() { got = recover() }()
		wait := Beside(func() error { panic("from fn") })
		_ = wait()
	}()
	if got != "from fn" {
		t.Fatalf("recovered %v at the wait, want fn's panic", got)
	}
}
