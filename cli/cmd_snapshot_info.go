package cli

import (
	"fmt"

	"github.com/memctl/memctl/records"
	"github.com/memctl/memctl/snapshot"
	"github.com/urfave/cli/v2"
)

func snapshotInfoCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:        "info",
		Usage:       "print a snapshot's header and section directory (no full check)",
		Args:        []string{"FILE"},
		Run:         runSnapshotInfo,
		Description: "Reads only the header and the directory, so it works on files whose sections are damaged.",
	})
}

// infoJSON is what snapshot info prints with --json (SPEC.md §6.x).
type infoJSON struct {
	File       string        `json:"file"`
	Format     string        `json:"format"`
	Logical    bool          `json:"logical"`
	Revision   uint64        `json:"revision"`
	CommitTime string        `json:"commit_time"`
	ValidAt    string        `json:"valid_at"`
	Superseded bool          `json:"includes_superseded"`
	Expired    bool          `json:"includes_expired"`
	Nodes      uint64        `json:"nodes"`
	Edges      uint64        `json:"edges"`
	Strings    uint64        `json:"strings"`
	Relations  uint32        `json:"relations"`
	Bytes      uint64        `json:"bytes"`
	PageRank   bool          `json:"pagerank"`
	Sections   []sectionJSON `json:"sections"`
}

type sectionJSON struct {
	Kind     uint16 `json:"kind"`
	Name     string `json:"name"`
	Offset   uint64 `json:"offset"`
	Length   uint64 `json:"length"`
	CRC      string `json:"crc"`
	Optional bool   `json:"optional"`
}

func runSnapshotInfo(k *call) error {
	path := k.args[0]
	f, err := snapshot.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	h := f.Header()
	_, hasPR := f.PageRank()
	rec := infoJSON{File: path, Format: h.Version.String(), Logical: h.Logical(), Revision: h.Revision,
		CommitTime: records.Time(nsTime(h.CommitTime)), ValidAt: records.Time(nsTime(h.ValidAt)),
		Superseded: h.Flags&snapshot.FlagIncludesSuperseded != 0, Expired: h.Flags&snapshot.FlagIncludesExpired != 0,
		Nodes: h.NodeCount, Edges: h.EdgeCount, Strings: h.StringCount,
		Relations: h.RelationCount, Bytes: h.FileLength, PageRank: hasPR}
	for _, s := range f.Sections() {
		rec.Sections = append(rec.Sections, sectionJSON{Kind: uint16(s.Kind), Name: s.Kind.String(), Offset: s.Offset,
			Length: s.Length, CRC: fmt.Sprintf("%08x", s.CRC), Optional: s.Flags&snapshot.SectionOptional != 0})
	}
	if k.out.json {
		return k.out.record(rec)
	}
	tw := k.out.table()
	for _, kv := range [][2]string{
		{"file", textCell(path)},
		{"format", rec.Format},
		{"logical", fmt.Sprint(rec.Logical)},
		{"revision", fmt.Sprint(rec.Revision)},
		{"commit_time", formatTextTime(nsTime(h.CommitTime))},
		{"valid_at", formatTextTime(nsTime(h.ValidAt))},
		{"includes_superseded", fmt.Sprint(rec.Superseded)},
		{"includes_expired", fmt.Sprint(rec.Expired)},
		{"nodes", fmt.Sprint(rec.Nodes)},
		{"edges", fmt.Sprint(rec.Edges)},
		{"strings", fmt.Sprint(rec.Strings)},
		{"relations", fmt.Sprint(rec.Relations)},
		{"bytes", fmt.Sprint(rec.Bytes)},
		{"pagerank", fmt.Sprint(rec.PageRank)},
	} {
		fmt.Fprintf(tw, "%s\t%s\n", kv[0], kv[1])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	tw = k.out.table()
	fmt.Fprintf(tw, "kind\tsection\toffset\tlength\tcrc32c\n")
	for _, s := range rec.Sections {
		name := s.Name
		if s.Optional {
			name += " (optional)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\n", s.Kind, name, s.Offset, s.Length, s.CRC)
	}
	return tw.Flush()
}
