package cli

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
	"github.com/urfave/cli/v2"
)

// versionCommand is `memctl version`; `memctl --version` prints the same.
func versionCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "version",
		Usage: "print memctl's version, commit, Go version, store schema, snapshot format and LMDB's dirty-page limit",
		Run:   runVersion,
	})
}

// versionJSON is the --json record of `memctl version` (SPEC.md §6.3).
type versionJSON struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	CommitTime     string `json:"commit_time"`
	Modified       bool   `json:"modified"`
	Go             string `json:"go"`
	Schema         int    `json:"schema"`
	SnapshotFormat string `json:"snapshot_format"`
	// LMDBDirtyMax is how many pages a write transaction keeps in memory
	// before LMDB spills some to the file (lmdbstore.DirtyPagesMax).
	LMDBDirtyMax int `json:"lmdb_dirty_pages_max"`
}

// buildVersion is what the binary knows about itself: the module version
// and VCS stamp the go command recorded (runtime/debug.ReadBuildInfo), and
// the formats it reads and writes.
func buildVersion() versionJSON {
	v := versionJSON{
		Version:        "(unknown)",
		Go:             runtime.Version(),
		Schema:         lmdbstore.SchemaVersion,
		SnapshotFormat: snapshot.FormatNewest.String(),
	}
	v.LMDBDirtyMax, _ = lmdbstore.DirtyPagesMax()
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.CommitTime = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func runVersion(k *call) error {
	v := buildVersion()
	if k.out.json {
		return k.out.record(v)
	}
	commit := orDash(v.Commit)
	if v.Modified {
		commit += " (modified)"
	}
	tw := k.out.table()
	for _, row := range [][2]string{
		{"version", v.Version},
		{"commit", commit},
		{"commit_time", orDash(v.CommitTime)},
		{"go", v.Go},
		{"schema", strconv.Itoa(v.Schema)},
		{"snapshot_format", v.SnapshotFormat},
		{"lmdb_dirty_pages_max", fmt.Sprintf("%d (%d MiB)", v.LMDBDirtyMax, (int64(v.LMDBDirtyMax+1)*int64(os.Getpagesize()))>>20)},
	} {
		if _, err := tw.Write([]byte(row[0] + "\t" + row[1] + "\n")); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// versionFlag is the global --version: the same as `memctl version`.
func versionFlag() cli.Flag {
	return &cli.BoolFlag{Name: "version", Usage: "print the version (as memctl version does) and exit"}
}

// printVersion is --version given without a command.
func printVersion(c *cli.Context) error {
	k := &call{ctx: c, out: newOutput(c.App.Writer, c.Bool("json"))}
	if err := runVersion(k); err != nil {
		return err
	}
	return k.out.flush()
}
