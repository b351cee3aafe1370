package replica_test

import (
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/memctl/memctl/replica"
)

// testServer is one in-process nats-server with JetStream on 127.0.0.1.
type testServer struct {
	t    *testing.T
	opts *server.Options
	srv  *server.Server
}

// freePort is a port nothing listens on now (a restarted server keeps it).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startServer starts a single JetStream server storing under dir.
func startServer(t *testing.T, dir string) *testServer {
	t.Helper()
	opts := &server.Options{
		ServerName: "s1", Host: "127.0.0.1", Port: freePort(t),
		JetStream: true, StoreDir: filepath.Join(dir, "js"),
		NoLog: true, NoSigs: true, MaxPayload: 64 << 10,
	}
	ts := &testServer{t: t, opts: opts}
	ts.start()
	t.Cleanup(ts.stop)
	return ts
}

func (ts *testServer) start() {
	ts.t.Helper()
	srv, err := server.NewServer(ts.opts)
	if err != nil {
		ts.t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		ts.t.Fatal("nats-server not ready")
	}
	ts.srv = srv
}

func (ts *testServer) stop() {
	if ts.srv != nil {
		ts.srv.Shutdown()
		ts.srv.WaitForShutdown()
		ts.srv = nil
	}
}

// url is nats://127.0.0.1:PORT/stream.
func (ts *testServer) url(stream string) string {
	return "nats://127.0.0.1:" + strconv.Itoa(ts.opts.Port) + "/" + stream
}

func (ts *testServer) addr(t *testing.T, stream string) replica.Address {
	a, err := replica.ParseAddress(ts.url(stream))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (ts *testServer) timeout() time.Duration { return 5 * time.Second }
