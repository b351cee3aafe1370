package cli

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/ops"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
	"github.com/urfave/cli/v2"
)

func searchCommand(env Env) *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "find memory items by what they say: full text (BM25) fused with key matching",
		ArgsUsage: "QUERY...",
		Description: "Searches node keys, types, payload text (observations included) and kv entries\n" +
			"(scope/namespace/key and payload) with the text index of an engine snapshot,\n" +
			"fused by reciprocal rank with key matching (exact, prefix, substring, fuzzy;\n" +
			"SPEC.md §8.7). Superseded and expired items are hidden unless --all. The words\n" +
			"of every QUERY argument form one query.",
		Flags: append(readFlags(),
			&cli.IntFlag{Name: "top", Value: engines.DefaultSearchTop, Usage: "print at most `N` items (0: all)"},
			&cli.StringSliceFlag{Name: "type", Usage: "only items of type `T` (repeatable; \"kv\": kv entries)"},
			&cli.BoolFlag{Name: "all", Usage: "also show superseded and expired items"},
			&cli.StringFlag{Name: "valid-at", Usage: "judge expiry at `TIME` (RFC 3339; default: now)"},
			&cli.StringFlag{Name: "snapshot", Usage: "search snapshot `FILE` instead of the store"},
		),
		Action: func(c *cli.Context) error { return runSearch(c, env) },
	}
}

func runSearch(c *cli.Context, env Env) (err error) {
	args := c.Args().Slice()
	for _, a := range args {
		if !utf8.ValidString(a) {
			return usageErr("search: argument %q is not valid UTF-8", a)
		}
	}
	query := strings.TrimSpace(strings.Join(args, " "))
	if query == "" {
		return usageErr("search needs a QUERY")
	}
	if c.Int("top") < 0 {
		return usageErr("search: --top must be >= 0")
	}
	k := &call{ctx: c, env: env, name: "search", args: args, out: newOutput(env.Stdout, c.Bool("json"))}
	defer func() {
		if cerr := k.close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	g, err := searchGraph(k)
	if err != nil {
		return err
	}
	defer g.Close()
	eng, err := engines.New(g)
	if err != nil {
		return engineErr(err)
	}
	top := c.Int("top")
	if top == 0 {
		top = -1
	}
	hits, err := ops.Search(eng, ops.SearchRequest{Query: query, Top: top, All: c.Bool("all"), Types: c.StringSlice("type")})
	if err != nil {
		return engineErr(err)
	}
	if len(hits) == 0 {
		return withCode(ExitNotFound, fmt.Errorf("nothing matches %q", query))
	}
	if k.out.json {
		for _, h := range hits {
			if err := k.out.record(h); err != nil {
				return err
			}
		}
		return k.out.flush()
	}
	tw := k.out.table()
	for _, h := range hits {
		status := ""
		switch {
		case h.Superseded:
			status = "  (superseded)"
		case h.Expired:
			status = "  (expired)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s%s\n", textScore(h.Score), textCell(h.Type), textCell(h.Key), status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return k.out.flush()
}

// searchGraph mounts --snapshot FILE, or exports the store's state at the
// read view in memory, with superseded and expired items (marked) so that
// --all can show them; the engines hide them otherwise.
func searchGraph(k *call) (*csr.Graph, error) {
	if path := k.ctx.String("snapshot"); path != "" {
		g, err := csr.Open(path)
		if err != nil {
			return nil, engineErr(fmt.Errorf("open snapshot %s: %w", path, err))
		}
		return g, nil
	}
	f, err := k.statusFilter()
	if err != nil {
		return nil, err
	}
	f.IncludeSuperseded, f.IncludeExpired = true, true
	at, err := k.at()
	if err != nil {
		return nil, err
	}
	s, err := k.open(true)
	if err != nil {
		return nil, err
	}
	m, err := storesnap.ExportInMemory(s, at, f, snapshot.WriterOptions{})
	if err != nil {
		return nil, err
	}
	g, err := csr.FromBytes(m.Bytes)
	if err != nil {
		return nil, engineErr(err)
	}
	return g, nil
}
