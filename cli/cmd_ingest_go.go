package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/ingest/codetree"
	"github.com/urfave/cli/v2"
)

func ingestGoCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "go",
		Usage: "ingest the Go module tree DIR: directories, packages, files, symbols and their relations",
		Description: "Type-checks the tree when the go command can load it and falls back to syntax\n" +
			"only when it cannot. Writes what changed since the last ingest as one revision;\n" +
			"an unchanged tree writes nothing. Keys and payloads: SPEC.md §9.",
		Args: []string{"DIR"},
		Flags: append(append(writeFlags(true), walkFlags()...),
			&cli.BoolFlag{Name: "syntax-only", Usage: "do not type-check: resolve names from syntax alone"},
			&cli.BoolFlag{Name: "offline", Usage: "download nothing (GOPROXY=off): packages whose dependencies are not in the module cache are read from syntax"},
			&cli.BoolFlag{Name: "force", Usage: "re-read the tree even if its hash matches the last ingest"},
		),
		Run: runIngestGo,
	})
}

// ingestGoJSON is the --json summary of `ingest go` (SPEC.md §9).
type ingestGoJSON struct {
	Dir            string   `json:"dir"`
	Module         string   `json:"module"`
	Files          int      `json:"files"`
	Packages       int      `json:"packages"`
	TypedPackages  int      `json:"typed_packages"`
	SyntaxPackages int      `json:"syntax_packages"`
	Mode           string   `json:"mode"`
	Unchanged      bool     `json:"unchanged"`
	Nodes          int      `json:"nodes"`
	Edges          int      `json:"edges"`
	Rev            uint64   `json:"rev"`
	NodesPut       int      `json:"nodes_put"`
	NodesDeleted   int      `json:"nodes_deleted"`
	EdgesPut       int      `json:"edges_put"`
	EdgesDeleted   int      `json:"edges_deleted"`
	Seconds        float64  `json:"seconds"`
	LoadErrors     []string `json:"load_errors"`
	// Fallbacks name the packages read from syntax although type-checking
	// was asked for; Unresolved counts the calls syntax could not resolve.
	Fallbacks  []ingest.Fallback `json:"fallbacks"`
	Unresolved int               `json:"unresolved"`
}

func runIngestGo(k *call) error {
	start := time.Now()
	dir := k.args[0]
	k.derivedWrites = true // code structure, not free text: no secret scan (SPEC §2)
	gov := startIngestGovernor(k.env.Getenv, ingestMemoryFloor)
	defer gov.stop()
	s, err := k.open(false)
	if err != nil {
		return err
	}
	bar := newProgressBar(k.env)
	defer bar.done()
	progress := func(p ingest.Progress) {
		if p.Phase == ingest.PhaseWriting {
			gov.pace(writeGrow, writeFloor)
		}
		bar.update(p)
	}
	opts := ingest.GoOptions{
		WalkOptions: walkOptions(k),
		SyntaxOnly:  k.ctx.Bool("syntax-only"),
		Offline:     k.ctx.Bool("offline"),
		Progress:    progress,
	}
	if !k.ctx.Bool("force") {
		if opts.SkipIfTreeHash, err = ingest.StoredTreeHash(s); err != nil {
			return err
		}
	}
	// A first ingest streams: the graph goes to a bulk load as packages
	// are extracted (SPEC §9.5), not held whole and then written.
	done, err := ingest.IngestGo(s, dir, opts, k.meta(), progress)
	var xe *ingest.ExtractError
	if errors.As(err, &xe) {
		return usageErr("ingest go %s: %v", dir, xe.Err)
	}
	if err != nil {
		return err
	}
	res, stats := done.Result, done.Stats
	out := ingestGoJSON{
		Dir: dir, Module: res.Module, Files: res.Files, Packages: res.Packages,
		TypedPackages: res.TypedPackages, SyntaxPackages: res.SyntaxPackages, Mode: res.Mode,
		Unchanged: res.Unchanged, LoadErrors: res.LoadErrors, Fallbacks: res.Fallbacks, Unresolved: res.Unresolved,
	}
	if out.LoadErrors == nil {
		out.LoadErrors = []string{}
	}
	if out.Fallbacks == nil {
		out.Fallbacks = []ingest.Fallback{}
	}
	out.Nodes, out.Edges = done.Nodes, done.Edges
	bar.done()
	out.Rev = uint64(stats.Commit.Rev)
	out.NodesPut, out.NodesDeleted = stats.NodesPut, stats.NodesDeleted
	out.EdgesPut, out.EdgesDeleted = stats.EdgesPut, stats.EdgesDeleted
	out.Seconds = time.Since(start).Seconds()
	for _, e := range res.LoadErrors {
		fmt.Fprintf(k.env.Stderr, "memctl: ingest go: syntax-only fallback: %s\n", e)
	}
	if k.out.json {
		return k.out.record(out)
	}
	if res.Unchanged {
		return k.out.textf("ingest go %s: %d files unchanged since the last ingest; nothing written; %.2fs\n",
			dir, out.Files, out.Seconds)
	}
	unresolved := ""
	if out.Unresolved > 0 {
		unresolved = fmt.Sprintf(", %d unresolved calls", out.Unresolved)
	}
	if err := k.out.textf("ingest go %s: %d files, %d packages (%s), %d nodes, %d edges%s; %s; %.2fs\n",
		dir, out.Files, out.Packages, modeText(res), out.Nodes, out.Edges, unresolved, writeText(stats), out.Seconds); err != nil {
		return err
	}
	for _, l := range fallbackLines(res.Fallbacks) {
		if err := k.out.textf("%s\n", l); err != nil {
			return err
		}
	}
	return nil
}

// fallbackLines say which packages were read from syntax although
// type-checking was asked for, one line per reason (SPEC.md §9.6):
//
//	syntax-only: N packages (P1, P2, P3, …): REASON; fix: FIX
func fallbackLines(fbs []ingest.Fallback) []string {
	type group struct {
		reason, fix string
		pkgs        []string
	}
	var groups []*group
	byCause := make(map[[2]string]*group)
	for _, fb := range fbs {
		k := [2]string{fb.Reason, fb.Fix}
		g := byCause[k]
		if g == nil {
			g = &group{reason: fb.Reason, fix: fb.Fix}
			byCause[k] = g
			groups = append(groups, g)
		}
		g.pkgs = append(g.pkgs, fb.Package)
	}
	var out []string
	for _, g := range groups {
		names := g.pkgs
		if len(names) > 3 {
			names = append(names[:3:3], "…")
		}
		noun := "packages"
		if len(g.pkgs) == 1 {
			noun = "package"
		}
		l := fmt.Sprintf("syntax-only: %d %s (%s): %s", len(g.pkgs), noun, strings.Join(names, ", "), g.reason)
		if g.fix != "" {
			l += "; fix: " + g.fix
		}
		out = append(out, l)
	}
	return out
}

// modeText says how the packages were read.
func modeText(res *ingest.GoResult) string { return codetree.GoMode(res) }

// writeText says what a write changed.
func writeText(st ingest.WriteStats) string {
	if st.Commit.Rev == 0 {
		return "nothing changed"
	}
	return fmt.Sprintf("rev %d: %d nodes written, %d deleted, %d edges written, %d deleted",
		st.Commit.Rev, st.NodesPut, st.NodesDeleted, st.EdgesPut, st.EdgesDeleted)
}
