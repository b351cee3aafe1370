package cli

import (
	"fmt"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/replica"
	"github.com/urfave/cli/v2"
)

func remoteCommand(env Env) *cli.Command {
	return &cli.Command{
		Name:            "remote",
		Usage:           "bind the store to a NATS JetStream stream, or unbind it (SPEC.md §13)",
		Action:          unknownCommand,
		HideHelpCommand: true,
		Subcommands: []*cli.Command{
			verbCommand(env, verbSpec{
				Name:  "add",
				Usage: "bind the store to nats://HOST:PORT/STREAM, creating the stream when it does not exist",
				Description: "The store's history and the stream's must agree on every revision both hold:\n" +
					"the store's revisions the stream lacks are published, the stream's the store\n" +
					"lacks are applied. A store whose history is not a prefix of the stream's (nor\n" +
					"the stream's of the store's) is refused (exit 3) and nothing is published.\n" +
					"Credentials: --nats-user/--nats-password, --nats-token, --nats-nkey, --nats-creds,\n" +
					"--nats-ca/--nats-cert/--nats-key or their NATS_* variables; never stored.",
				Args:  []string{"URL"},
				Flags: []cli.Flag{&cli.IntFlag{Name: "replicas", Value: 1, Usage: "copies `N` of the stream a new stream gets (3 on a 3-node cluster)"}},
				Run:   runRemoteAdd,
			}),
			verbCommand(env, verbSpec{
				Name:  "remove",
				Usage: "unbind the store: it becomes a single-machine store again (the stream is left as it is)",
				Run:   runRemoteRemove,
			}),
		},
	}
}

type remoteAddJSON struct {
	Remote    string `json:"remote"`
	Rev       uint64 `json:"rev"`
	Matched   uint64 `json:"matched"`
	Published int    `json:"published"`
	Applied   int    `json:"applied"`
	Pos       uint64 `json:"pos"`
}

func runRemoteAdd(k *call) error {
	addr, err := replica.ParseAddress(k.args[0])
	if err != nil {
		return err
	}
	n := k.ctx.Int("replicas")
	if n < 1 || n > 5 {
		return usageErr("remote add: --replicas must be 1 to 5, got %d", n)
	}
	addr.Replicas = n
	path := k.dbPath()
	if cur, ok, err := replica.ReadBinding(path); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("%w: %s is bound to %s already (memctl remote remove first)", lmdbstore.ErrInvalid, path, cur)
	}
	r, err := k.dial(addr)
	if err != nil {
		return err
	}
	if err := r.Create(n); err != nil {
		return err
	}
	s, err := k.open(false) // not bound yet: a plain open
	if err != nil {
		return err
	}
	rep, err := replica.Attach(s, r)
	if err != nil {
		return err
	}
	if err := replica.WriteBinding(path, addr); err != nil {
		s.Unbind()
		return fmt.Errorf("remote add: writing %s: %w", replica.BindingFile, err)
	}
	// From here on the store is bound: its writes go through the remote.
	applied, b, err := syncBinding(r, s)
	if err != nil {
		return err
	}
	if k.out.json {
		return k.out.record(remoteAddJSON{Remote: addr.String(), Rev: uint64(b.Rev), Matched: uint64(rep.Matched),
			Published: rep.Published, Applied: applied, Pos: b.Pos})
	}
	return k.out.textf("bound to %s: revision %d (%d revisions matched the stream, %d published, %d applied)\n",
		addr, b.Rev, rep.Matched, rep.Published, applied)
}

func runRemoteRemove(k *call) error {
	path := k.dbPath()
	addr, bound, err := replica.ReadBinding(path)
	if err != nil {
		return err
	}
	k.noCatchUp = true
	opts, err := k.options(false)
	if err != nil {
		return err
	}
	s, err := lmdbstore.Open(path, opts)
	if err != nil {
		return err
	}
	k.store = s
	b, err := s.Binding()
	if err != nil {
		return err
	}
	if !bound && !b.Bound {
		return fmt.Errorf("%w: %s is not bound to a remote", lmdbstore.ErrInvalid, path)
	}
	if err := s.Unbind(); err != nil {
		return err
	}
	if err := replica.RemoveBinding(path); err != nil {
		return err
	}
	what := "a remote"
	if bound {
		what = addr.String()
	}
	if k.out.json {
		return k.out.record(map[string]any{"removed": what, "rev": uint64(b.Rev)})
	}
	return k.out.textf("unbound from %s (the store keeps its %d revisions)\n", what, b.Rev)
}
