package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func vacuumCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "vacuum",
		Usage: "write a dense copy of the store, history included, into a new store directory",
		Description: "Like SQLite's VACUUM INTO: every keyspace is copied in key order into full B-tree pages,\n" +
			"without the pages old transactions freed, so the copy is the same store in less space\n" +
			"(stats shows the space per keyspace). The store is read in one read transaction and stays\n" +
			"open to writers; what they commit after the copy began is not in it. --to must not hold a store.\n" +
			"To use the copy in place of the store, stop every process that has the store open, then swap\n" +
			"the two directories.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "to", Usage: "new store directory `DIR` (created)"},
		},
		Run: runVacuum,
	})
}

type vacuumJSON struct {
	To               string `json:"to"`
	Revision         uint64 `json:"revision"`
	Entries          uint64 `json:"entries"`
	SourceFileBytes  int64  `json:"source_file_bytes"`
	SourceInUseBytes uint64 `json:"source_in_use_bytes"`
	CopyFileBytes    int64  `json:"copy_file_bytes"`
}

func runVacuum(k *call) error {
	to := k.ctx.String("to")
	if to == "" {
		return usageErr("vacuum needs --to DIR, the new store directory")
	}
	s, err := k.open(true)
	if err != nil {
		return err
	}
	st, err := s.VacuumInto(to)
	if err != nil {
		return err
	}
	if k.out.json {
		return k.out.record(vacuumJSON{To: to, Revision: uint64(st.Revision), Entries: st.Entries,
			SourceFileBytes: st.SourceFile, SourceInUseBytes: st.SourceInUse, CopyFileBytes: st.CopyFile})
	}
	return k.out.textf("vacuumed into %s at rev %d: %d entries, %s (store file %s, %s in keyspaces)\n",
		to, st.Revision, st.Entries, mib(st.CopyFile), mib(st.SourceFile), mib(int64(st.SourceInUse)))
}

// mib renders a byte count in MiB with one decimal.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
