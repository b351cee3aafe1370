package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memctl/memctl/ingest"
	"github.com/urfave/cli/v2"
)

func ingestGitCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "git",
		Usage: "ingest the commit history of the git work tree DIR: co_changed edges and per-file change history",
		Description: "Reads `git log` (merges excluded). Files changed by the same commit get a\n" +
			"co_changed edge weighted by the number of such commits; commits changing more\n" +
			"than --max-commit-files files add no edges. File payloads get a \"git\" field\n" +
			"(changes, first_change, last_change, last_commit). SPEC.md §9.",
		Args: []string{"DIR"},
		Flags: append(append(writeFlags(true), walkFlags()...),
			&cli.IntFlag{Name: "max-commit-files", Value: ingest.DefaultMaxCommitFiles,
				Usage: "commits changing more than `N` files add no co_changed edges"},
		),
		Run: runIngestGit,
	})
}

// ingestGitJSON is the --json summary of `ingest git` (SPEC.md §9).
type ingestGitJSON struct {
	Dir            string  `json:"dir"`
	Commits        int     `json:"commits"`
	SkippedCommits int     `json:"skipped_commits"`
	Files          int     `json:"files"`
	Nodes          int     `json:"nodes"`
	Edges          int     `json:"edges"`
	Rev            uint64  `json:"rev"`
	NodesPut       int     `json:"nodes_put"`
	NodesDeleted   int     `json:"nodes_deleted"`
	EdgesPut       int     `json:"edges_put"`
	EdgesDeleted   int     `json:"edges_deleted"`
	Seconds        float64 `json:"seconds"`
	// NoRenameCommits counts the commits read without rename detection
	// (git could not read their objects; a warning names them).
	NoRenameCommits int `json:"no_rename_commits"`
}

func runIngestGit(k *call) error {
	start := time.Now()
	dir := k.args[0]
	if k.ctx.Int("max-commit-files") < 1 {
		return usageErr("--max-commit-files must be at least 1")
	}
	k.derivedWrites = true // paths and commit counts, not free text: no secret scan (SPEC §2)
	s, err := k.open(false)
	if err != nil {
		return err
	}
	bar := newProgressBar(k.env)
	defer bar.done()
	res, err := ingest.ExtractGit(dir, ingest.GitOptions{
		WalkOptions:    walkOptions(k),
		MaxCommitFiles: k.ctx.Int("max-commit-files"),
		Progress:       bar.update,
	})
	if errors.Is(err, ingest.ErrNotGitRepo) {
		return withCode(ExitUsage, err)
	}
	if err != nil {
		return err
	}
	stats, err := ingest.WriteGit(s, res, k.meta(), bar.update)
	if err != nil {
		return err
	}
	bar.done()
	if n := len(res.NoRenameCommits); n > 0 {
		fmt.Fprintf(k.env.Stderr, "memctl: warning: ingest git: %d commits read without rename detection (git could not read the files they delete and add: a partial clone, or objects missing); their renamed files count as deleted and added: %s\n",
			n, firstHashes(res.NoRenameCommits, 3))
	}
	out := ingestGitJSON{
		Dir: dir, Commits: res.Commits, SkippedCommits: res.SkippedCommits, Files: res.Files,
		Nodes: res.Graph.NumNodes(), Edges: res.Graph.NumEdges(), Rev: uint64(stats.Commit.Rev),
		NodesPut: stats.NodesPut, NodesDeleted: stats.NodesDeleted,
		EdgesPut: stats.EdgesPut, EdgesDeleted: stats.EdgesDeleted,
		Seconds:         time.Since(start).Seconds(),
		NoRenameCommits: len(res.NoRenameCommits),
	}
	if k.out.json {
		return k.out.record(out)
	}
	return k.out.textf("ingest git %s: %d commits (%d above --max-commit-files), %d files with history, %d co_changed edges; %s; %.2fs\n",
		dir, out.Commits, out.SkippedCommits, out.Nodes, out.Edges, writeText(stats), out.Seconds)
}

// firstHashes lists the first n commits, abbreviated, then "…" when there
// are more.
func firstHashes(commits []string, n int) string {
	var short []string
	for i, c := range commits {
		if i == n {
			short = append(short, "…")
			break
		}
		short = append(short, c[:min(12, len(c))])
	}
	return strings.Join(short, ", ")
}
