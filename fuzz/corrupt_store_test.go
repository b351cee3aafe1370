package fuzz

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/memctl/memctl/cli"
	"github.com/memctl/memctl/lmdbstore"
)

// fixtureKeys are the canonical keys of the fixture store (buildFixture).
func fixtureKeys() []string {
	keys := []string{"file:a.go", "file:b.go", "sym:a.F", "sym:b.G", "missing:x", "hub:h"}
	for i := range 120 {
		keys = append(keys, fmt.Sprintf("leaf:%03d", i))
	}
	return keys
}

// transcript reads everything the store offers through the Go API, at the
// latest revision and at every readable one: one line per read, either its
// result or "corrupt <keyspace>". Any other error fails the test: errors
// must be typed and name the damaged keyspace.
func transcript(t testing.TB, s *lmdbstore.Store, latest lmdbstore.Revision) map[string]string {
	t.Helper()
	lines := map[string]string{}
	record := func(what string, v any, err error) {
		var ce *lmdbstore.CorruptionError
		switch {
		case err == nil:
			lines[what] = fmt.Sprintf("%+v", v)
		case errors.As(err, &ce):
			lines[what] = "corrupt " + ce.Keyspace
		case errors.Is(err, lmdbstore.ErrCorrupt):
			lines[what] = "corrupt"
		case errors.Is(err, lmdbstore.ErrNotFound):
			lines[what] = "not found"
		default:
			t.Errorf("%s: untyped or unexpected error %T: %v", what, err, err)
			lines[what] = fmt.Sprintf("error %v", err)
		}
	}
	err := s.View(func(r *lmdbstore.ReadTxn) error {
		rels, err := r.Relations()
		record("relations", rels, err)
		ats := []lmdbstore.At{{}}
		for rev := lmdbstore.Revision(1); rev <= latest; rev++ {
			ats = append(ats, lmdbstore.AtRevision(rev))
		}
		for i, at := range ats {
			for _, key := range fixtureKeys() {
				n, err := r.GetNode(key, at)
				record(fmt.Sprintf("@%d node %s", i, key), n, err)
				out, err := r.GetOut(key, "", at)
				record(fmt.Sprintf("@%d out %s", i, key), out, err)
				in, err := r.GetIn(key, "", at)
				record(fmt.Sprintf("@%d in %s", i, key), in, err)
			}
			out, err := r.GetOut("file:a.go", "owns", at)
			record(fmt.Sprintf("@%d out file:a.go owns", i), out, err)
			kv, err := r.GetKV("proj", "decision", "errors", at)
			record(fmt.Sprintf("@%d kv", i), kv, err)
			list, err := r.ListKV("proj", "decision", at)
			record(fmt.Sprintf("@%d list-kv", i), list, err)
			var nodes []lmdbstore.Node
			err = r.ScanNodes(at, func(n lmdbstore.Node) error { nodes = append(nodes, n); return nil })
			record(fmt.Sprintf("@%d scan-nodes", i), nodes, err)
			var edges []lmdbstore.Edge
			err = r.ScanEdges(at, func(e lmdbstore.Edge) error { edges = append(edges, e); return nil })
			record(fmt.Sprintf("@%d scan-edges", i), edges, err)
		}
		var ops []lmdbstore.Op
		err = r.DiffSince(lmdbstore.AtRevision(0), lmdbstore.DiffFilter{}, func(op lmdbstore.Op) error { ops = append(ops, op); return nil })
		record("diff-since 0", ops, err)
		return nil
	})
	record("view", nil, err)
	return lines
}

// damage is one way to break a stored value while keeping LMDB valid. Every
// one must be detected: values end with a CRC-32C (SPEC.md §2), so even a
// flip that leaves a value well-formed (a payload byte, a peer id, a
// weight) is a checksum mismatch.
type damage struct {
	name  string
	apply func(v []byte, rng *rand.Rand) []byte
}

var damages = []damage{
	{"drop last byte", func(v []byte, _ *rand.Rand) []byte {
		if len(v) < 2 {
			return nil
		}
		return v[:len(v)-1]
	}},
	{"unknown format byte", func(v []byte, _ *rand.Rand) []byte { return append([]byte{0x7f}, v[1:]...) }},
	{"trailing byte", func(v []byte, _ *rand.Rand) []byte { return append(bytes.Clone(v), 0) }},
	{"zeroed", func(v []byte, _ *rand.Rand) []byte { return make([]byte, len(v)) }},
	{"bit flip", func(v []byte, rng *rand.Rand) []byte {
		v = bytes.Clone(v)
		v[rng.IntN(len(v))] ^= 1 << rng.IntN(8)
		return v
	}},
}

// TestCorruptStoreValues writes malformed values into every keyspace of a
// real store through LMDB itself, then reads everything. Every read either
// gives the undamaged answer or a corruption error naming a keyspace; check
// exits 3 naming the damaged keyspace; no read panics or fails untyped.
func TestCorruptStoreValues(t *testing.T) {
	base := fixture(t)
	orig := copyStore(t, base)
	s, err := lmdbstore.Open(orig, lmdbstore.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	latest := lmdbstore.Revision(len(rawDump(t, base)["log"]))
	want := transcript(t, s, latest)
	s.Close()

	entries := rawDump(t, base)
	perKeyspace := 3
	if testing.Short() || raceEnabled {
		perKeyspace = 1
	}
	rng := rand.New(rand.NewPCG(1, 2))
	cases := 0
	for _, db := range keyspaces {
		list := entries[db]
		var picks []kvPair
		for i := 0; i < perKeyspace && i < len(list); i++ {
			picks = append(picks, list[(i*len(list))/perKeyspace])
		}
		for _, p := range picks {
			for _, d := range damages {
				bad := d.apply(p.V, rng)
				if len(bad) == 0 || bytes.Equal(bad, p.V) {
					continue
				}
				name := fmt.Sprintf("%s/%x/%s", db, p.K, d.name)
				cases++
				t.Run(name, func(t *testing.T) {
					checkDamagedStore(t, base, db, p.K, bad, want, latest)
				})
			}
		}
	}
	t.Logf("%d damaged values", cases)
}

// checkDamagedStore damages one value of a copy of base and checks every
// read path: check must report it and no read may answer differently.
func checkDamagedStore(t *testing.T, base, db string, key, bad []byte, want map[string]string, latest lmdbstore.Revision) {
	dir := copyStore(t, base)
	rawPut(t, dir, db, key, bad)

	var got map[string]string
	s, err := lmdbstore.Open(dir, lmdbstore.Options{ReadOnly: true})
	switch {
	case err == nil:
		got = transcript(t, s, latest)
		s.Close()
	case errors.Is(err, lmdbstore.ErrCorrupt):
		// Refusing to open a store with damaged metadata is failing fast.
	default:
		t.Fatalf("open: untyped error %T: %v", err, err)
	}

	chk := memctlIn("", "--db", dir, "check")
	if chk.Code != cli.ExitCorrupt && chk.Code != cli.ExitOK {
		t.Errorf("check: exit %d (want 3): %s%s", chk.Code, chk.Stdout, chk.Stderr)
	}
	detected := chk.Code == cli.ExitCorrupt
	if detected && !strings.Contains(chk.Stdout+chk.Stderr, db) {
		t.Errorf("check exits 3 but does not name keyspace %q:\n%s%s", db, chk.Stdout, chk.Stderr)
	}
	if !detected {
		t.Errorf("check exits %d: damage not detected\n%s", chk.Code, chk.Stdout)
	}
	// Every read answers as before or reports corruption: damage never
	// yields a wrong answer (the checksum is verified before a value is
	// interpreted).
	if got != nil {
		for _, what := range sortedKeys(want) {
			if g := got[what]; g != want[what] && !strings.HasPrefix(g, "corrupt") {
				t.Errorf("wrong answer from a damaged store: %s:\n got  %.300s\n want %.300s", what, g, want[what])
				break
			}
		}
	}
	// The CLI maps it to exit 3 and one line on stderr, for reads too.
	for _, args := range [][]string{
		{"get-node", "file:a.go"}, {"get-out", "file:a.go"}, {"get-in", "sym:b.G"}, {"get-out", "hub:h"},
		{"get-kv", "proj", "decision", "errors"}, {"diff-since", "0"}, {"rel", "list"}, {"stats"},
	} {
		r := memctlIn("", append([]string{"--db", dir}, args...)...)
		switch r.Code {
		case cli.ExitOK, cli.ExitNotFound:
		case cli.ExitCorrupt:
			if strings.Count(r.Stderr, "\n") != 1 || r.Stdout != "" {
				t.Errorf("%v: exit 3 but output %q / stderr %q (want one stderr line)", args, r.Stdout, r.Stderr)
			}
		default:
			t.Errorf("%v: exit %d: %s", args, r.Code, r.Stderr)
		}
	}
}

// FuzzStoreDamage writes the fuzz input as the value of one entry of a real
// store (the first byte picks the keyspace, the second the entry) through
// LMDB, then runs every read path at the latest revision, Check, and
// `memctl check`: nothing panics, every error is typed (corruption naming a
// keyspace, or not found), and check exits 0 or 3.
func FuzzStoreDamage(f *testing.F) {
	base := fixture(f)
	entries := rawDump(f, base)
	for i, db := range keyspaces {
		if list := entries[db]; len(list) > 0 {
			f.Add(append([]byte{byte(i), 0}, list[0].V...))
			f.Add(append([]byte{byte(i), byte(len(list) / 2)}, list[len(list)/2].V[:max(1, len(list[len(list)/2].V)/2)]...))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		defer watchdog(hangLimit)()
		if len(in) < 3 {
			return
		}
		db := keyspaces[int(in[0])%len(keyspaces)]
		list := entries[db]
		if len(list) == 0 {
			return
		}
		p := list[int(in[1])%len(list)]
		dir := copyStore(t, base)
		rawPut(t, dir, db, p.K, in[2:])
		// The latest view only (transcript with latest 0): the full
		// point-in-time sweep is TestCorruptStoreValues's.
		s, err := lmdbstore.Open(dir, lmdbstore.Options{ReadOnly: true})
		if err != nil {
			if !errors.Is(err, lmdbstore.ErrCorrupt) {
				t.Fatalf("open: untyped error %T: %v", err, err)
			}
			return
		}
		transcript(t, s, 0)
		_, cerr := s.Check()
		s.Close()
		if cerr != nil && !errors.Is(cerr, lmdbstore.ErrCorrupt) {
			t.Fatalf("check: untyped error %T: %v", cerr, cerr)
		}
		if r := memctlIn("", "--db", dir, "check"); r.Code != cli.ExitOK && r.Code != cli.ExitCorrupt {
			t.Fatalf("memctl check: exit %d: %s", r.Code, r.Stderr)
		}
	})
}
