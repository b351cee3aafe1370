// Package natstest runs in-process nats-server instances with JetStream on
// 127.0.0.1 for tests (as nats-server's own tests do): one server, or a
// cluster of three whose members can be stopped and restarted on the same
// ports and storage. Only tests import it.
package natstest

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Server is one in-process nats-server.
type Server struct {
	t    testing.TB
	Opts *server.Options
	srv  *server.Server
}

// FreePort is a port nothing listens on now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start starts a single JetStream server storing under dir, with a 64 KiB
// max payload (so tests meet multi-message revisions); it stops with the
// test.
func Start(t testing.TB, dir string) *Server { return StartPayload(t, dir, 64<<10) }

// StartPayload is Start with max payload n bytes (0: the server's default,
// 1 MiB).
func StartPayload(t testing.TB, dir string, n int32) *Server {
	t.Helper()
	s := &Server{t: t, Opts: &server.Options{
		ServerName: "s1", Host: "127.0.0.1", Port: FreePort(t),
		JetStream: true, StoreDir: filepath.Join(dir, "js"),
		NoLog: true, NoSigs: true, MaxPayload: n,
	}}
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// StartAuth is Start with one user and password required.
func StartAuth(t testing.TB, dir, user, password string) *Server {
	t.Helper()
	s := &Server{t: t, Opts: &server.Options{
		ServerName: "s1", Host: "127.0.0.1", Port: FreePort(t),
		JetStream: true, StoreDir: filepath.Join(dir, "js"),
		NoLog: true, NoSigs: true, MaxPayload: 64 << 10,
		Username: user, Password: password,
	}}
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// StartCluster starts three clustered JetStream servers.
func StartCluster(t testing.TB, dir string) []*Server {
	t.Helper()
	const n = 3
	ports := make([]int, n)
	for i := range ports {
		ports[i] = FreePort(t)
	}
	var routes []*url.URL
	for _, p := range ports {
		routes = append(routes, &url.URL{Scheme: "nats-route", Host: "127.0.0.1:" + strconv.Itoa(p)})
	}
	servers := make([]*Server, n)
	for i := range servers {
		servers[i] = &Server{t: t, Opts: &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1), Host: "127.0.0.1", Port: FreePort(t),
			JetStream: true, StoreDir: filepath.Join(dir, fmt.Sprintf("n%d", i+1)),
			NoLog: true, NoSigs: true, MaxPayload: 64 << 10,
			Cluster: server.ClusterOpts{Name: "memctl", Host: "127.0.0.1", Port: ports[i]},
			Routes:  routes,
		}}
	}
	for _, s := range servers {
		s.startAsync()
	}
	for _, s := range servers {
		s.waitReady()
		t.Cleanup(s.Stop)
	}
	return servers
}

// Restart starts the server (again, on the same port and storage).
func (s *Server) Restart() {
	s.t.Helper()
	s.startAsync()
	s.waitReady()
}

func (s *Server) startAsync() {
	s.t.Helper()
	srv, err := server.NewServer(s.Opts)
	if err != nil {
		s.t.Fatal(err)
	}
	go srv.Start()
	s.srv = srv
}

func (s *Server) waitReady() {
	s.t.Helper()
	if !s.srv.ReadyForConnections(20 * time.Second) {
		s.t.Fatal("nats-server not ready")
	}
}

// Stop shuts the server down (a no-op when it is down).
func (s *Server) Stop() {
	if s.srv != nil {
		s.srv.Shutdown()
		s.srv.WaitForShutdown()
		s.srv = nil
	}
}

// Running reports whether the server is up.
func (s *Server) Running() bool { return s.srv != nil }

// Name is the server's name.
func (s *Server) Name() string { return s.Opts.ServerName }

// ServerURL is nats://127.0.0.1:PORT.
func (s *Server) ServerURL() string { return "nats://127.0.0.1:" + strconv.Itoa(s.Opts.Port) }

// URL is nats://127.0.0.1:PORT/stream.
func (s *Server) URL(stream string) string { return s.ServerURL() + "/" + stream }
