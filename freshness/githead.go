package freshness

// Reading HEAD without running git: a refresh that finds nothing changed
// must cost microseconds, and starting git costs milliseconds. Anything
// this reader does not understand makes the refresh ask git (ok false).

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// findGitDir returns the git directory of the work tree holding abs and
// its common directory (they differ for a linked worktree); "" outside git.
func findGitDir(abs string) (gitDir, commonDir string) {
	for d := abs; ; {
		p := filepath.Join(d, ".git")
		fi, err := os.Stat(p)
		if err == nil {
			if fi.IsDir() {
				gitDir = p
			} else if b, err := os.ReadFile(p); err == nil {
				g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
				if !ok {
					return "", ""
				}
				if !filepath.IsAbs(g) {
					g = filepath.Join(d, g)
				}
				gitDir = g
			}
			commonDir = gitDir
			if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
				c := strings.TrimSpace(string(b))
				if !filepath.IsAbs(c) {
					c = filepath.Join(gitDir, c)
				}
				commonDir = filepath.Clean(c)
			}
			return gitDir, commonDir
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", ""
		}
		d = parent
	}
}

// readHead resolves HEAD to a commit id: a detached HEAD, a loose ref (in
// the git directory, then the common one) or a packed ref.
func readHead(gitDir, commonDir string) (string, bool) {
	if gitDir == "" {
		return "", false
	}
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return "", false
	}
	head := strings.TrimSpace(string(b))
	ref, ok := strings.CutPrefix(head, "ref: ")
	if !ok {
		return head, isHex(head)
	}
	for _, d := range []string{gitDir, commonDir} {
		if b, err := os.ReadFile(filepath.Join(d, filepath.FromSlash(ref))); err == nil {
			c := strings.TrimSpace(string(b))
			return c, isHex(c)
		}
	}
	b, err = os.ReadFile(filepath.Join(commonDir, "packed-refs"))
	if err != nil {
		return "", false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if c, name, ok := strings.Cut(line, " "); ok && name == ref && isHex(c) {
			return c, true
		}
	}
	return "", false
}

func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !('0' <= s[i] && s[i] <= '9' || 'a' <= s[i] && s[i] <= 'f') {
			return false
		}
	}
	return true
}
