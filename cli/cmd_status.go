package cli

import (
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/replica"
	"github.com/urfave/cli/v2"
)

func statusCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "status",
		Usage: "the store's revision and, for a store bound to a remote, the stream's and the lag (SPEC.md §13)",
		Description: "Never catches up: it reports. An unreachable remote is a line (reachable: false),\n" +
			"not a failure.",
		Run: runStatus,
	})
}

// statusJSON is `memctl status --json` (SPEC.md §13.5).
type statusJSON struct {
	Rev       uint64  `json:"rev"`
	Remote    string  `json:"remote,omitempty"`
	Pos       *uint64 `json:"pos,omitempty"`
	Reachable *bool   `json:"reachable,omitempty"`
	StreamRev *uint64 `json:"stream_rev,omitempty"`
	StreamPos *uint64 `json:"stream_pos,omitempty"`
	Lag       *uint64 `json:"lag,omitempty"`
	Error     string  `json:"error,omitempty"`
}

func runStatus(k *call) error {
	path := k.dbPath()
	addr, bound, err := replica.ReadBinding(path)
	if err != nil {
		return err
	}
	k.noCatchUp = true
	s, err := k.open(true)
	if err != nil {
		return err
	}
	var st statusJSON
	if err := s.View(func(r *lmdbstore.ReadTxn) error { st.Rev = uint64(r.Revision()); return nil }); err != nil {
		return err
	}
	if bound {
		b, err := s.Binding()
		if err != nil {
			return err
		}
		st.Remote, st.Pos = addr.String(), &b.Pos
		reachable := false
		st.Reachable = &reachable
		if sr, sp, err := streamHead(k, addr); err != nil {
			st.Error = oneLine(err.Error())
		} else {
			reachable = true
			lag := uint64(0)
			if sr > lmdbstore.Revision(st.Rev) {
				lag = uint64(sr) - st.Rev
			}
			st.StreamRev, st.StreamPos, st.Lag = ptr(uint64(sr)), &sp, &lag
		}
	}
	if k.out.json {
		return k.out.record(st)
	}
	if !bound {
		return k.out.textf("revision %d\nremote: none (a single-machine store)\n", st.Rev)
	}
	k.out.textf("revision %d (remote position %d)\nremote: %s\n", st.Rev, *st.Pos, st.Remote)
	if st.Error != "" {
		return k.out.textf("stream: unreachable (%s); answers come from the local replica and may be behind\n", st.Error)
	}
	return k.out.textf("stream: revision %d (position %d)\nlag: %d revisions\n", *st.StreamRev, *st.StreamPos, *st.Lag)
}

// streamHead is the stream's last revision and position.
func streamHead(k *call, addr replica.Address) (lmdbstore.Revision, uint64, error) {
	r, err := k.dialStream(addr)
	if err != nil {
		return 0, 0, err
	}
	last, err := r.LastSeq()
	if err != nil {
		return 0, 0, err
	}
	rev, err := r.LastRev(last)
	return rev, last, err
}
