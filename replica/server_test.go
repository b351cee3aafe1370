package replica_test

import (
	"testing"
	"time"

	"github.com/memctl/memctl/replica"
	"github.com/memctl/memctl/replica/natstest"
)

// testServer adapts natstest.Server to these tests.
type testServer struct{ *natstest.Server }

func startServer(t *testing.T, dir string) *testServer {
	return &testServer{natstest.Start(t, dir)}
}

func (ts *testServer) stop()                    { ts.Stop() }
func (ts *testServer) start()                   { ts.Restart() }
func (ts *testServer) url(stream string) string { return ts.URL(stream) }
func (ts *testServer) timeout() time.Duration   { return 5 * time.Second }

func (ts *testServer) addr(t *testing.T, stream string) replica.Address {
	a, err := replica.ParseAddress(ts.url(stream))
	if err != nil {
		t.Fatal(err)
	}
	return a
}
