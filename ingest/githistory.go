package ingest

// The history `ingest git` reads, one commit at a time:
//
//	git rev-list --no-merges HEAD -- .                       the commits, newest first
//	git diff-tree --stdin -r --root -M --name-only -z \
//	    --relative --format=%x1e%H %ct -- .                  their changed files
//
// diff-tree reads "<hash>\n\x1d\n" per commit from stdin and echoes the
// line "\x1d\n" (not an object name) verbatim after the commit's output,
// so its stdout is, per commit:
//
//	\x1e <hash> SP <commit time> \n [\n] ( <path> \0 )* \x1d \n
//
// (nothing before \x1d when the commit changes nothing under DIR). A
// commit is read completely when its \x1d arrives. Rename detection (-M,
// as git log's default) reads the content of added and deleted files; in
// a partial clone or a clone missing blobs that fails and git exits. The
// commit that failed is then read again alone with --no-renames (its
// renamed files count as deleted and added), and the stream resumes after
// it in a new process.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
)

// gitCommit is one non-merge commit: its hash, commit time (unix seconds)
// and the files it changed under DIR, relative to DIR.
type gitCommit struct {
	hash  string
	time  int64
	files []string
}

// commitEnd is the line diff-tree echoes after each commit.
const commitEnd = '\x1d'

// readHistory calls each for every non-merge commit reachable from HEAD
// that changed something under root, newest first, and returns the
// commits read without rename detection. A repository without commits
// has no history.
func readHistory(root string, each func(gitCommit)) (noRenames []string, err error) {
	if _, err := GitOutput(root, "rev-parse", "--verify", "-q", "HEAD"); err != nil {
		return nil, nil // no commit yet
	}
	out, err := GitOutput(root, "rev-list", "--no-merges", "HEAD", "--", ".")
	if err != nil {
		return nil, err
	}
	commits := strings.Fields(string(out))
	for len(commits) > 0 {
		n, err := diffTree(root, commits, true, each)
		commits = commits[n:]
		if err == nil {
			break
		}
		var exit *exec.ExitError
		if len(commits) == 0 || !errors.As(err, &exit) {
			return nil, err
		}
		// commits[0] failed with rename detection: without it, or the
		// repository is broken beyond renames.
		if _, err2 := diffTree(root, commits[:1], false, each); err2 != nil {
			return nil, fmt.Errorf("%w; without rename detection: %v", err, err2)
		}
		noRenames = append(noRenames, commits[0])
		commits = commits[1:]
	}
	return noRenames, nil
}

// diffTree runs git diff-tree over commits and calls each for every
// commit read completely; n counts them. err is git's failure, with its
// first line of stderr.
func diffTree(root string, commits []string, renames bool, each func(gitCommit)) (n int, err error) {
	detect := "-M"
	if !renames {
		detect = "--no-renames"
	}
	cmd := exec.Command("git", "-c", "core.quotePath=false", "diff-tree", "--stdin", "-r", "--root", detect,
		"--name-only", "-z", "--relative", "--format=%x1e%H %ct", "--", ".")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	go func() {
		// A git that died early makes these writes fail: its exit
		// status says why.
		w := bufio.NewWriter(stdin)
		for _, c := range commits {
			w.WriteString(c)
			w.WriteString("\n\x1d\n")
		}
		w.Flush()
		stdin.Close()
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	sc.Split(completeRecords)
	var parseErr error
	for sc.Scan() && parseErr == nil && n < len(commits) {
		c, ok, err := parseCommit(sc.Bytes())
		if err != nil {
			parseErr = err
			break
		}
		if ok {
			each(c)
		}
		n++
	}
	if parseErr == nil {
		parseErr = sc.Err()
	}
	io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		return n, fmt.Errorf("git diff-tree: %w: %s", err, firstLine(stderr.String()))
	}
	if parseErr == nil && n < len(commits) {
		parseErr = fmt.Errorf("git diff-tree: output ended after %d of %d commits", n, len(commits))
	}
	return n, parseErr
}

// completeRecords splits diff-tree's output at each commitEnd and drops
// what follows the last one (a commit git did not finish).
func completeRecords(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, commitEnd); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF {
		return len(data), nil, nil
	}
	return 0, nil, nil
}

// parseCommit reads one commit's output (between two \x1d lines); ok is
// false when the commit changed nothing under DIR.
func parseCommit(rec []byte) (c gitCommit, ok bool, err error) {
	rec = bytes.TrimLeft(rec, "\n")
	if len(rec) == 0 {
		return c, false, nil
	}
	if rec[0] != '\x1e' {
		return c, false, errors.New("git diff-tree: a commit's output does not start with its header")
	}
	fields := strings.Split(string(rec[1:]), "\x00")
	head := strings.Fields(fields[0])
	if len(head) != 2 {
		return c, false, fmt.Errorf("git diff-tree: bad commit header %q", fields[0])
	}
	ct, err := strconv.ParseInt(head[1], 10, 64)
	if err != nil {
		return c, false, fmt.Errorf("git diff-tree: bad commit time in %q", fields[0])
	}
	c = gitCommit{hash: head[0], time: ct}
	for _, f := range fields[1:] {
		if f = strings.TrimLeft(f, "\n"); f != "" {
			c.files = append(c.files, f)
		}
	}
	return c, true, nil
}
