package replica_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/replica"
)

func TestParseAddress(t *testing.T) {
	for _, c := range []struct {
		in, url, stream, server string
	}{
		{"nats://127.0.0.1:4222/team", "nats://127.0.0.1:4222", "team", "nats://127.0.0.1:4222"},
		{"tls://nats.example:4443/a_b-1", "tls://nats.example:4443", "a_b-1", "tls://nats.example:4443"},
		{"nats://n1:4222,n2:4222,n3:4222/team", "nats://n1:4222,n2:4222,n3:4222", "team", "nats://n1:4222,nats://n2:4222,nats://n3:4222"},
		{"nats://[::1]:4222/v6", "nats://[::1]:4222", "v6", "nats://[::1]:4222"},
	} {
		a, err := replica.ParseAddress(c.in)
		if err != nil || a.URL != c.url || a.Stream != c.stream || a.ServerURL() != c.server || a.String() != c.in {
			t.Errorf("%s: %+v %q %v", c.in, a, a.ServerURL(), err)
		}
	}
	for _, bad := range []string{
		"", "team", "http://h:1/s", "nats://h/s", "nats://h:1", "nats://h:1/", "nats://h:1/a.b", "nats://h:1/a/b",
		"nats://u:p@h:1/s", "nats://h:1/s?x=1", "nats://h:1,h2/s", "nats://:1/s",
	} {
		if _, err := replica.ParseAddress(bad); !errors.Is(err, lmdbstore.ErrInvalid) {
			t.Errorf("%q: %v, want ErrInvalid", bad, err)
		}
	}
}

func TestBindingFile(t *testing.T) {
	dir := t.TempDir()
	if _, ok, err := replica.ReadBinding(dir); ok || err != nil {
		t.Fatalf("no file: %v %v", ok, err)
	}
	a, _ := replica.ParseAddress("nats://n1:4222,n2:4222/team")
	a.Replicas = 3
	if err := replica.WriteBinding(dir, a); err != nil {
		t.Fatal(err)
	}
	got, ok, err := replica.ReadBinding(dir)
	if !ok || err != nil || got != a {
		t.Fatalf("read back %+v %v %v, want %+v", got, ok, err, a)
	}
	if err := replica.RemoveBinding(dir); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := replica.ReadBinding(dir); ok {
		t.Fatal("binding still there")
	}
	if _, ok, err := replica.ReadBinding(filepath.Join(dir, "missing", "x")); ok || err != nil {
		t.Fatalf("missing dir: %v %v", ok, err)
	}
}
