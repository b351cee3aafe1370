package ingest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// resolveFixture is a module whose calls need types: through fields (own
// and promoted), results, range variables, locals and another package of
// the module; with function values, a var _ initialiser, a call through a
// func-typed field (dynamic), one into a package outside the tree, and
// one syntax cannot resolve (a method of a func-typed field's result).
var resolveFixture = map[string]string{
	"go.mod": "module example.com/r\n\ngo 1.22\n",
	"store/store.go": `package store

type Log struct{ entries [][]byte }

func NewLog() *Log { return &Log{} }

func Open(path string) (*Log, error) { return NewLog(), nil }

func (l *Log) Append(b []byte) { l.entries = append(l.entries, b) }

func (l *Log) Close() error { return nil }
`,
	"raft.go": `package r

import (
	"strings"

	"example.com/r/store"
)

type Transport interface {
	Connect(addr string) error
}

type Config struct{ Name string }

func (c Config) Validate() error { return nil }

type Peer struct{ id string }

func (p *Peer) Send(b []byte) error { return nil }

type base struct{ log *store.Log }

func (b *base) Flush() {}

type Raft struct {
	base
	peers   []*Peer
	byID    map[string]*Peer
	trans   Transport
	conf    Config
	onApply func([]byte)
	next    func() *Peer
}

func NewRaft(conf Config) *Raft { return &Raft{conf: conf, base: base{log: store.NewLog()}} }

func (r *Raft) Apply(cmd []byte) error {
	r.log.Append(cmd)
	for _, p := range r.peers {
		_ = p.Send(cmd)
	}
	r.onApply(cmd)
	return r.trans.Connect("x")
}

func (r *Raft) Leader() *Peer { return r.byID[strings.ToLower("A")] }

func apply(f func([]byte) error) { _ = f(nil) }

func helper() {}

func Run(r *Raft) {
	_ = r.Apply(nil)
	_ = r.Leader().Send(nil)
	_ = NewRaft(Config{}).Apply(nil)
	x := NewRaft(Config{})
	_ = x.conf.Validate()
	x.Flush()
	s, err := store.Open("p")
	if err == nil {
		_ = s.Close()
	}
	apply(r.Apply)
	fn := helper
	fn()
	_ = r.next().Send(nil)
	_ = strings.NewReader("x").Len()
}

var _ = register(helper)

func register(f func()) bool { return f != nil }
`,
}

// The calls and references edges of the fixture, derived by hand from its
// source: what type-checking finds, and (the point of SPEC §9.4's
// syntax-only rules) what syntax alone must find too.
var resolveWant = map[string][]string{
	"sym:example.com/r.Run": {
		"calls sym:example.com/r.NewRaft",
		"calls sym:example.com/r.Config.Validate",
		"calls sym:example.com/r.Peer.Send",
		"calls sym:example.com/r.Raft.Apply",
		"calls sym:example.com/r.Raft.Leader",
		"calls sym:example.com/r.apply",
		"calls sym:example.com/r.base.Flush",
		"calls sym:example.com/r/store.Log.Close",
		"calls sym:example.com/r/store.Open",
		"references sym:example.com/r.Config",
		"references sym:example.com/r.Raft",
		"references sym:example.com/r.Raft.Apply", // apply(r.Apply): a method value
		"references sym:example.com/r.helper",     // fn := helper
	},
	"sym:example.com/r.Raft.Apply": {
		"calls sym:example.com/r.Peer.Send",
		"calls sym:example.com/r.Transport.Connect",
		"calls sym:example.com/r/store.Log.Append",
		"references sym:example.com/r.Raft",
	},
	"sym:example.com/r.NewRaft": {
		"calls sym:example.com/r/store.NewLog",
		"references sym:example.com/r.Config",
		"references sym:example.com/r.Raft",
		"references sym:example.com/r.base",
	},
	"sym:example.com/r.Raft.Leader": {
		"references sym:example.com/r.Peer",
		"references sym:example.com/r.Raft",
	},
	// var _ = register(helper): the file runs the initialiser.
	"file:raft.go": {
		"calls sym:example.com/r.register",
		"references sym:example.com/r.helper",
	},
}

var sortStrings = cmpopts.SortSlices(func(a, b string) bool { return a < b })

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// callEdges lists the calls and references edges leaving the sources of
// want, as "rel dst" per source.
func callEdges(g *Graph, want map[string][]string) map[string][]string {
	got := make(map[string][]string)
	for _, e := range g.Edges() {
		if _, ok := want[e.Src]; ok && (e.Rel == RelCalls || e.Rel == RelReferences) {
			got[e.Src] = append(got[e.Src], e.Rel+" "+e.Dst)
		}
	}
	return got
}

func fileUnresolved(t *testing.T, g *Graph, rel string) int {
	t.Helper()
	n, ok := g.Node(FileKey(rel))
	if !ok {
		t.Fatalf("no node %s", FileKey(rel))
	}
	var p FilePayload
	if err := json.Unmarshal(n.Payload, &p); err != nil {
		t.Fatal(err)
	}
	return p.Unresolved
}

func TestExtractGoResolvesMethodCalls(t *testing.T) {
	dir := writeTree(t, resolveFixture)
	for _, tc := range []struct {
		name       string
		opts       GoOptions
		mode       string
		unresolved int // raft.go: r.next().Send, in syntax only
	}{
		{"typed", GoOptions{Offline: true}, ModeTyped, 0},
		{"syntax", GoOptions{SyntaxOnly: true}, ModeSyntax, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ExtractGo(dir, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Mode != tc.mode {
				t.Fatalf("mode %q, want %q (load errors %q)", res.Mode, tc.mode, res.LoadErrors)
			}
			// r.next().Send(nil) is unresolved from syntax (the result of a
			// func-typed field is not inferred), but Run calls Peer.Send
			// elsewhere too: both modes have the same edges.
			if diff := cmp.Diff(resolveWant, callEdges(res.Graph, resolveWant), sortStrings); diff != "" {
				t.Errorf("calls and references (-want +got):\n%s", diff)
			}
			if got := fileUnresolved(t, res.Graph, "raft.go"); got != tc.unresolved {
				t.Errorf("raft.go: %d unresolved calls, want %d", got, tc.unresolved)
			}
			if got := fileUnresolved(t, res.Graph, "store/store.go"); got != 0 {
				t.Errorf("store/store.go: %d unresolved calls, want 0", got)
			}
			if res.Unresolved != tc.unresolved {
				t.Errorf("result: %d unresolved calls, want %d", res.Unresolved, tc.unresolved)
			}
		})
	}
}

// Without type information, a method called on a value whose type is not
// known stays unresolved: no edge is guessed, and the call is counted.
func TestExtractGoSyntaxNeverGuesses(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"go.mod": "module example.com/g\n\ngo 1.22\n",
		"g.go": `package g

type A struct{}

func (A) Close() error { return nil }

type B struct{}

func (B) Close() error { return nil }

func open() (c interface{ Close() error }) { return A{} }

func Use(f func() B) {
	_ = open().Close()
	_ = f().Close()
	var a A
	_ = a.Close()
}
`,
	})
	res, err := ExtractGo(dir, GoOptions{SyntaxOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"sym:example.com/g.Use": {
		"calls sym:example.com/g.A.Close",
		"calls sym:example.com/g.open",
		"references sym:example.com/g.A",
		"references sym:example.com/g.B",
	}}
	if diff := cmp.Diff(want, callEdges(res.Graph, want), sortStrings); diff != "" {
		t.Errorf("calls and references (-want +got):\n%s", diff)
	}
	// open().Close() (an interface literal) and f().Close() (a func value's
	// result) do not resolve.
	if got := fileUnresolved(t, res.Graph, "g.go"); got != 2 {
		t.Errorf("g.go: %d unresolved calls, want 2", got)
	}
}

// A type switch's variable has, in a clause listing exactly one type, that
// type, and in any other clause the type of the guard (the Go spec):
// hand-derived, and the same in the typed and the syntax-only graph.
func TestExtractGoTypeSwitchVariable(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"go.mod": "module example.com/s\n\ngo 1.22\n",
		"s.go": `package s

type FSM interface{ Apply() }

type Wrapping interface{ Underlying() FSM }

type Impl struct{}

func (Impl) Underlying() FSM { return nil }

func (Impl) Apply() {}

type Other struct{}

func (Other) Apply() {}

func Use(f FSM) {
	switch v := f.(type) {
	case Impl:
		v.Underlying()
	case Wrapping, nil:
		v.Apply()
	default:
		v.Apply()
	}
	switch w := f.(type) {
	case Other:
		w.Apply()
	}
}
`,
	})
	want := map[string][]string{"sym:example.com/s.Use": {
		"calls sym:example.com/s.Impl.Underlying",
		"calls sym:example.com/s.FSM.Apply",
		"calls sym:example.com/s.Other.Apply",
		"references sym:example.com/s.FSM",
		"references sym:example.com/s.Impl",
		"references sym:example.com/s.Wrapping",
		"references sym:example.com/s.Other",
	}}
	for _, opts := range []GoOptions{{Offline: true}, {SyntaxOnly: true}} {
		res, err := ExtractGo(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, callEdges(res.Graph, want), sortStrings); diff != "" {
			t.Errorf("%s: calls and references (-want +got):\n%s", res.Mode, diff)
		}
		if got := fileUnresolved(t, res.Graph, "s.go"); got != 0 {
			t.Errorf("%s: %d unresolved calls, want 0", res.Mode, got)
		}
	}
}
