package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/memctl/memctl/ops"
)

// Exit codes: the contract scripts rely on (SPEC.md, "CLI").
const (
	ExitOK         = 0
	ExitNotFound   = 1
	ExitUsage      = 2 // bad usage or input
	ExitCorrupt    = 3 // corruption or integrity failure
	ExitConflict   = 4 // id collision
	ExitUnexpected = 5 // anything else (I/O errors, full disk...)
)

// ExitError carries the exit code a command failed with. Every error a
// command returns is converted to one by exitCode before main prints it.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// usageErr is a bad-usage error (exit 2).
func usageErr(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// withCode wraps err with an explicit exit code.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Code: code, Err: err}
}

// exitCode maps an error to its documented exit code. Package-specific
// classifiers (store errors, snapshot errors) are consulted in order.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	for _, classify := range classifiers {
		if code, ok := classify(err); ok {
			return code
		}
	}
	return ExitUnexpected
}

// classifiers map the typed errors of each layer to exit codes. Each
// command group registers its own in its file (init-free: listed here).
var classifiers = []func(error) (int, bool){
	classifyReplicaError,
	classifyStoreError,
	classifySnapshotError,
	classifyOpsError,
	classifyOSError,
}

// classifyOSError: what the operating system refused, wherever it was met
// (a snapshot file, a payload file, a directory to ingest). A path that is
// not there, or that this user may not read or write, is bad input (exit
// 2), the same code a store's ErrPermission has; a full disk is exit 5.
func classifyOSError(err error) (int, bool) {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return ExitUsage, true
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return ExitUnexpected, true
	}
	return 0, false
}

// classifyOpsError: a request an operation refuses is bad input (exit 2),
// a query that matches nothing is not found (exit 1).
func classifyOpsError(err error) (int, bool) {
	var nm *ops.NoMatchError
	switch {
	case errors.Is(err, ops.ErrInvalid):
		return ExitUsage, true
	case errors.As(err, &nm):
		return ExitNotFound, true
	}
	return 0, false
}
