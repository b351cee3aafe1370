package precise

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/memctl/memctl/ingest/scip"
)

// RunError: an indexer ran but gave no usable index. Reason is the one
// line the summary names the language's fallback with.
type RunError struct {
	Indexer string
	Reason  string
	Err     error
}

func (e *RunError) Error() string { return e.Indexer + ": " + e.Reason }
func (e *RunError) Unwrap() error { return e.Err }

// stderrTail bounds what is kept of an indexer's output for the reason.
const stderrTail = 4096

// run executes the indexer exe on dir (its working directory) and loads
// the index it writes. The index file lives in a temporary directory,
// removed before run returns.
func run(ix *Indexer, exe, dir string) (*scip.Index, error) {
	tmp, err := os.MkdirTemp("", "memctl-scip-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// An index is a read of the tree: files the indexer creates in it are
	// removed again.
	for _, f := range ix.Leaves {
		p := filepath.Join(abs, f)
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			defer os.Remove(p)
		}
	}
	out := filepath.Join(tmp, "index.scip")
	cmd := exec.Command(exe, ix.Args(abs, out)...)
	cmd.Dir = abs
	var tail tailBuffer
	cmd.Stdout, cmd.Stderr = &tail, &tail
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, &RunError{Indexer: ix.Name, Reason: fmt.Sprintf("%s%s", exitText(ee), tail.lastLine()), Err: err}
		}
		return nil, &RunError{Indexer: ix.Name, Reason: err.Error(), Err: err}
	}
	if _, err := os.Stat(out); err != nil {
		return nil, &RunError{Indexer: ix.Name, Reason: "wrote no index" + tail.lastLine(), Err: err}
	}
	idx, err := scip.Load(out)
	if err != nil {
		var fe *scip.FormatError
		if errors.As(err, &fe) {
			fe.Path = "its output" // the temporary file means nothing to the user
			return nil, &RunError{Indexer: ix.Name, Reason: fe.Error(), Err: err}
		}
		return nil, &RunError{Indexer: ix.Name, Reason: "its output: " + err.Error(), Err: err}
	}
	return idx, nil
}

func exitText(ee *exec.ExitError) string {
	if ee.Exited() {
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	return ee.String() // "signal: killed"
}

// tailBuffer keeps the last stderrTail bytes written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 2*stderrTail {
		t.b = append(t.b[:0], t.b[len(t.b)-stderrTail:]...)
	}
	return len(p), nil
}

// lastLine is ": " + the last non-empty line written, or "".
func (t *tailBuffer) lastLine() string {
	lines := bytes.Split(bytes.TrimSpace(t.b), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(string(lines[i])); l != "" {
			if len(l) > 200 {
				l = l[:200] + "…"
			}
			return ": " + l
		}
	}
	return ""
}
