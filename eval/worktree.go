package eval

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// worktree is a detached git worktree of the evaluated repository that is
// moved from commit to commit. It lives under the evaluation's work
// directory; Close removes it from the repository's worktree list.
type worktree struct {
	repo *Repo
	path string
	at   string // commit checked out, "" before the first checkout
}

// openWorktree reuses the worktree at path when it is one of repo's,
// otherwise adds it (detached, no checkout yet).
func openWorktree(repo *Repo, path string) (*worktree, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	w := &worktree{repo: repo, path: abs}
	if top, err := git(abs, "rev-parse", "--show-toplevel"); err == nil && sameFile(strings.TrimSpace(top), abs) {
		common, err1 := git(abs, "rev-parse", "--git-common-dir")
		mine, err2 := git(repo.Top, "rev-parse", "--git-common-dir")
		if err1 == nil && err2 == nil && sameFile(absIn(abs, common), absIn(repo.Top, mine)) {
			return w, nil
		}
		return nil, fmt.Errorf("%s is a git work tree of another repository", abs)
	}
	if ents, err := os.ReadDir(abs); err == nil && len(ents) > 0 {
		// Never delete what is not ours.
		return nil, fmt.Errorf("%s exists and is not a worktree of %s (remove it or choose another work directory)", abs, repo.Top)
	}
	_ = os.Remove(abs) // an empty directory git would refuse
	_, _ = git(repo.Top, "worktree", "prune")
	if _, err := git(repo.Top, "worktree", "add", "--detach", "--no-checkout", abs, repo.Head); err != nil {
		return nil, err
	}
	return w, nil
}

// checkout moves the worktree to commit: tracked files as in the commit,
// untracked ones removed.
func (w *worktree) checkout(commit string) error {
	if w.at == commit {
		return nil
	}
	if _, err := git(w.path, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--force", "--detach", commit); err != nil {
		return err
	}
	if _, err := git(w.path, "clean", "--quiet", "-d", "--force", "-x"); err != nil {
		return err
	}
	w.at = commit
	return nil
}

// remove deletes the worktree and its entry in the repository.
func (w *worktree) remove() error {
	_, err := git(w.repo.Top, "worktree", "remove", "--force", w.path)
	if err != nil {
		if rerr := os.RemoveAll(w.path); rerr != nil {
			return rerr
		}
		_, err = git(w.repo.Top, "worktree", "prune")
	}
	return err
}

func absIn(dir, p string) string {
	p = strings.TrimSpace(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return p
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
