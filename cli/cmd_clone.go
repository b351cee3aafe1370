package cli

import (
	"fmt"
	"os"

	"github.com/memctl/memctl/replica"
	"github.com/urfave/cli/v2"
)

func cloneCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "clone",
		Usage: "make DIR a new replica of nats://HOST:PORT/STREAM: its snapshot, then the revisions after it (SPEC.md §13.6)",
		Description: "DIR must not hold a store. Without a published snapshot the whole history is\n" +
			"replayed. A snapshot that is not this stream's is refused (exit 3) and DIR is left\n" +
			"as it was.",
		Args: []string{"URL", "DIR"},
		Run:  runClone,
	})
}

type cloneJSON struct {
	Remote       string `json:"remote"`
	Dir          string `json:"dir"`
	SnapshotRev  uint64 `json:"snapshot_rev"`
	SnapshotSize uint64 `json:"snapshot_bytes"`
	Rev          uint64 `json:"rev"`
}

func runClone(k *call) error {
	addr, err := replica.ParseAddress(k.args[0])
	if err != nil {
		return err
	}
	dir := k.args[1]
	r, err := k.dialStream(addr)
	if err != nil {
		return err
	}
	opts, err := k.options(false)
	if err != nil {
		return err
	}
	s, info, err := r.Clone(dir, opts)
	if err != nil {
		return err
	}
	k.store = s
	b, err := s.Binding()
	if err != nil {
		return err
	}
	if k.out.json {
		return k.out.record(cloneJSON{Remote: addr.String(), Dir: dir, SnapshotRev: uint64(info.Rev), SnapshotSize: info.Bytes, Rev: uint64(b.Rev)})
	}
	after := "no revision after it"
	if b.Rev > info.Rev {
		after = fmt.Sprintf("then revisions %d to %d", info.Rev+1, b.Rev)
	}
	return k.out.textf("cloned %s into %s: snapshot of revision %d (%d bytes), %s\n", addr, dir, info.Rev, info.Bytes, after)
}

func publishSnapshotCommand(env Env) *cli.Command {
	return verbCommand(env, verbSpec{
		Name:  "publish-snapshot",
		Usage: "upload a copy of the bound store to its stream's object store, for memctl clone (SPEC.md §13.6)",
		Run:   runPublishSnapshot,
	})
}

type publishSnapshotJSON struct {
	Remote string `json:"remote"`
	Rev    uint64 `json:"rev"`
	Pos    uint64 `json:"pos"`
	Bytes  uint64 `json:"bytes"`
}

func runPublishSnapshot(k *call) error {
	s, err := k.open(false)
	if err != nil {
		return err
	}
	if len(k.remotes) == 0 {
		return usageErr("publish-snapshot: %s is not bound to a remote (memctl remote add URL binds it)", k.dbPath())
	}
	r := k.remotes[len(k.remotes)-1]
	info, err := r.PublishSnapshot(s, os.TempDir())
	if err != nil {
		return err
	}
	if k.out.json {
		return k.out.record(publishSnapshotJSON{Remote: r.Address().String(), Rev: uint64(info.Rev), Pos: info.Pos, Bytes: info.Bytes})
	}
	return k.out.textf("published a snapshot of revision %d (%d bytes) to %s\n", info.Rev, info.Bytes, r.Address())
}
