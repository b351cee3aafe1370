package replica

// Credentials for the server: from flags or the environment, never from
// the store, never written anywhere (SPEC.md §13.1).

import (
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/memctl/memctl/lmdbstore"
)

// Credentials are the ways a client may authenticate; empty fields are
// unused.
type Credentials struct {
	User, Password string
	Token          string
	NKeyFile       string // an nkey seed file
	CredsFile      string // a JWT creds file
	CAFile         string // TLS: the server's CA
	CertFile       string // TLS: client certificate
	KeyFile        string // TLS: its key
}

// The environment variables each field may come from (the nats CLI's).
var CredentialEnv = map[string]string{
	"NATS_USER": "user", "NATS_PASSWORD": "password", "NATS_TOKEN": "token",
	"NATS_NKEY": "nkey", "NATS_CREDS": "creds", "NATS_CA": "ca", "NATS_CERT": "cert", "NATS_KEY": "key",
}

// String never shows a secret.
func (c Credentials) String() string { return "credentials(redacted)" }

func (c Credentials) options() ([]nats.Option, error) {
	var o []nats.Option
	if c.User != "" || c.Password != "" {
		o = append(o, nats.UserInfo(c.User, c.Password))
	}
	if c.Token != "" {
		o = append(o, nats.Token(c.Token))
	}
	if c.CredsFile != "" {
		o = append(o, nats.UserCredentials(c.CredsFile))
	}
	if c.NKeyFile != "" {
		opt, err := nats.NkeyOptionFromSeed(c.NKeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: nkey seed file: %v", lmdbstore.ErrInvalid, err)
		}
		o = append(o, opt)
	}
	if c.CAFile != "" {
		o = append(o, nats.RootCAs(c.CAFile))
	}
	if c.CertFile != "" || c.KeyFile != "" {
		if c.CertFile == "" || c.KeyFile == "" {
			return nil, fmt.Errorf("%w: a client certificate needs both --nats-cert and --nats-key", lmdbstore.ErrInvalid)
		}
		o = append(o, nats.ClientCert(c.CertFile, c.KeyFile))
	}
	return o, nil
}
