package cli

// The replicated-log commands (SPEC.md §13): remote add/remove, sync,
// status, clone and publish-snapshot, one cmd_<verb>.go each. This file
// holds what they and every other verb share: the credential flags, the
// dial, the catch-up a bound store does before a command, and the exit
// codes of the replication errors. An unbound store (no remote.json)
// never dials.

import (
	"errors"
	"fmt"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/replica"
	"github.com/urfave/cli/v2"
)

const envLocal = "MEMCTL_LOCAL"

// replicaFlags are global: any command on a bound store may dial.
// Credentials come from these flags or the NATS_* variables, never from
// the store (SPEC.md §13.1).
func replicaFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "local", Usage: "reads of a store bound to a remote answer from the local replica without catching up (env " + envLocal + "=1)"},
		&cli.StringFlag{Name: "nats-user", Usage: "remote: user `NAME` (env NATS_USER)"},
		&cli.StringFlag{Name: "nats-password", Usage: "remote: `PASSWORD` (env NATS_PASSWORD)"},
		&cli.StringFlag{Name: "nats-token", Usage: "remote: `TOKEN` (env NATS_TOKEN)"},
		&cli.StringFlag{Name: "nats-nkey", Usage: "remote: nkey seed `FILE` (env NATS_NKEY)"},
		&cli.StringFlag{Name: "nats-creds", Usage: "remote: JWT credentials `FILE` (env NATS_CREDS)"},
		&cli.StringFlag{Name: "nats-ca", Usage: "remote: TLS CA certificate `FILE` (env NATS_CA)"},
		&cli.StringFlag{Name: "nats-cert", Usage: "remote: TLS client certificate `FILE` (env NATS_CERT)"},
		&cli.StringFlag{Name: "nats-key", Usage: "remote: TLS client key `FILE` (env NATS_KEY)"},
	}
}

// credentials reads the credential flags, else the environment.
func (k *call) credentials() replica.Credentials {
	pick := k.flagOrEnv
	return replica.Credentials{
		User: pick("nats-user", "NATS_USER"), Password: pick("nats-password", "NATS_PASSWORD"),
		Token: pick("nats-token", "NATS_TOKEN"), NKeyFile: pick("nats-nkey", "NATS_NKEY"),
		CredsFile: pick("nats-creds", "NATS_CREDS"), CAFile: pick("nats-ca", "NATS_CA"),
		CertFile: pick("nats-cert", "NATS_CERT"), KeyFile: pick("nats-key", "NATS_KEY"),
	}
}

// dial connects to addr (closed with the call) without opening a stream.
func (k *call) dial(addr replica.Address) (*replica.Remote, error) {
	// A server outlives a restart of its remote; a command does not wait.
	r, err := replica.Dial(addr, k.credentials(), replica.Options{Reconnect: k.name == "mcp"})
	if err != nil {
		return nil, err
	}
	k.remotes = append(k.remotes, r)
	return r, nil
}

// dialStream connects to addr and opens its stream.
func (k *call) dialStream(addr replica.Address) (*replica.Remote, error) {
	r, err := k.dial(addr)
	if err != nil {
		return nil, err
	}
	return r, r.Open()
}

// localOnly: --local or MEMCTL_LOCAL=1.
func (k *call) localOnly() bool {
	return k.ctx.Bool("local") || k.env.Getenv(envLocal) == "1"
}

// openBound opens the store at path, bound to addr: a write open dials
// (no connection: ErrRemote, and nothing is written) and catches up; a
// read open first catches up through a write open when it can, and says
// on stderr that its answers may be behind when it cannot.
func (k *call) openBound(path string, addr replica.Address, readOnly bool, opts lmdbstore.Options) (*lmdbstore.Store, error) {
	if k.offline {
		return lmdbstore.Open(path, opts)
	}
	if readOnly {
		if k.localOnly() || k.noCatchUp {
			return lmdbstore.Open(path, opts)
		}
		if err := k.catchUpFor(path, addr, opts); err != nil {
			s, oerr := lmdbstore.Open(path, opts)
			if oerr != nil {
				return nil, oerr
			}
			rev := lmdbstore.Revision(0)
			s.View(func(r *lmdbstore.ReadTxn) error { rev = r.Revision(); return nil })
			fmt.Fprintf(k.env.Stderr, "memctl: warning: %s; answering from local revision %d, which may be behind\n", oneLine(err.Error()), rev)
			return s, nil
		}
		return lmdbstore.Open(path, opts)
	}
	r, err := k.dial(addr)
	if err != nil {
		return nil, err
	}
	opts.Replicator = r
	// memctl mcp starts with its remote down: it reconnects in the
	// background, answers reads from the local replica and fails writes
	// until the remote is back. A command fails at once.
	serving := k.name == "mcp"
	if err := r.Open(); err != nil && !serving {
		return nil, err
	}
	s, err := lmdbstore.Open(path, opts)
	if err != nil {
		return nil, err
	}
	if !k.noCatchUp {
		if err := r.CatchUp(s); err != nil && !serving {
			s.Close()
			return nil, err
		} else if err != nil {
			fmt.Fprintf(k.env.Stderr, "memctl: warning: %s; serving the local replica until the remote is back\n", oneLine(err.Error()))
		}
	}
	return s, nil
}

// catchUpFor applies what the remote holds beyond the store at path
// through a write open of its own, closed before the read open.
func (k *call) catchUpFor(path string, addr replica.Address, opts lmdbstore.Options) error {
	r, err := k.dialStream(addr)
	if err != nil {
		return err
	}
	opts.ReadOnly = false
	opts.Replicator = r
	s, err := lmdbstore.Open(path, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	return r.CatchUp(s)
}

// beforeCall is what memctl mcp runs before each tool call: a bound
// store catches up (nil for an unbound one).
func (k *call) beforeCall(s *lmdbstore.Store) func() error {
	if len(k.remotes) == 0 {
		return nil
	}
	r := k.remotes[len(k.remotes)-1]
	return func() error { return r.CatchUp(s) }
}

// syncBinding catches s up through r and returns how many revisions it
// applied and the binding it ends at.
func syncBinding(r *replica.Remote, s *lmdbstore.Store) (int, lmdbstore.Binding, error) {
	n, err := r.Sync(s)
	if err != nil {
		return n, lmdbstore.Binding{}, err
	}
	b, err := s.Binding()
	return n, b, err
}

// closeRemotes closes the call's connections.
func (k *call) closeRemotes() {
	for _, r := range k.remotes {
		r.Close()
	}
	k.remotes = nil
}

// classifyReplicaError: an unreachable remote or a lost race is exit 5
// (nothing was written); a refused message or history is exit 3 (it is
// damage, to the stream or the store); a bound store without its remote
// is exit 2.
func classifyReplicaError(err error) (int, bool) {
	switch {
	case errors.Is(err, lmdbstore.ErrRemote), errors.Is(err, lmdbstore.ErrBehind):
		return ExitUnexpected, true
	case errors.Is(err, lmdbstore.ErrDiverged):
		return ExitCorrupt, true
	case errors.Is(err, lmdbstore.ErrBound):
		return ExitUsage, true
	}
	return 0, false
}
