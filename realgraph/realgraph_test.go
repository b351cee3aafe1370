package realgraph

import (
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/engines"
	"github.com/memctl/memctl/ingest"
	"github.com/memctl/memctl/lmdbstore"
	"github.com/memctl/memctl/snapshot"
	"github.com/memctl/memctl/storesnap"
)

var (
	httpOnce  sync.Once
	httpGraph *csr.Graph
	httpErr   error
	httpSkip  string
)

// netHTTP ingests $(go env GOROOT)/src/net/http (syntax only: the test
// needs the graph, not the toolchain's type-checker) once per test binary.
func netHTTP(t *testing.T) (*csr.Graph, *engines.Engine) {
	t.Helper()
	httpOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			httpSkip = "go env GOROOT: " + err.Error()
			return
		}
		dir := filepath.Join(strings.TrimSpace(string(out)), "src", "net", "http")
		s, err := lmdbstore.Init(filepath.Join(t.TempDir(), "store"), lmdbstore.Options{NoSync: true})
		if err != nil {
			httpErr = err
			return
		}
		defer s.Close()
		res, err := ingest.ExtractGo(dir, ingest.GoOptions{SyntaxOnly: true})
		if err != nil {
			httpSkip = "net/http source not readable: " + err.Error()
			return
		}
		if _, err := ingest.WriteGo(s, res.Graph, lmdbstore.WriteMeta{}, nil); err != nil {
			httpErr = err
			return
		}
		b, err := storesnap.ExportBytes(s, lmdbstore.At{}, snapshot.WriterOptions{Extra: engines.PageRankSection})
		if err != nil {
			httpErr = err
			return
		}
		httpGraph, httpErr = csr.FromBytes(b)
	})
	if httpSkip != "" {
		t.Skip(httpSkip)
	}
	if httpErr != nil {
		t.Fatal(httpErr)
	}
	e, err := engines.New(httpGraph)
	if err != nil {
		t.Fatal(err)
	}
	return httpGraph, e
}

func lookup(t *testing.T, g *csr.Graph, key string) csr.NodeIndex {
	t.Helper()
	n, ok, err := g.LookupKey(key)
	if err != nil || !ok {
		t.Fatalf("%s not in the net/http graph (ok %v, err %v)", key, ok, err)
	}
	return n
}

func keys(t *testing.T, g *csr.Graph, rs []engines.Scored) []string {
	t.Helper()
	var out []string
	for _, r := range rs {
		k, err := g.Key(r.Node)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	return out
}

// degree is a node's total degree; hubs have more than 4 × the average.
func degree(t *testing.T, g *csr.Graph, n csr.NodeIndex) int {
	t.Helper()
	o, err := g.OutDegree(n)
	if err != nil {
		t.Fatal(err)
	}
	i, err := g.InDegree(n)
	if err != nil {
		t.Fatal(err)
	}
	return o + i
}

// The seeds of the tests: files and symbols of different sizes.
var seeds = []string{
	"file:cookie.go", "file:transport.go", "file:fs.go", "file:server.go",
	"sym:net/http.Handler", "sym:net/http.Client.Do", "sym:net/http.Header.Get", "sym:net/http.Request",
}

// within2 is the set of nodes at most two hops from n (either direction).
func within2(t *testing.T, g *csr.Graph, n csr.NodeIndex) map[csr.NodeIndex]bool {
	t.Helper()
	near := map[csr.NodeIndex]bool{n: true}
	frontier := []csr.NodeIndex{n}
	for range 2 {
		var next []csr.NodeIndex
		for _, u := range frontier {
			outs, _, _, err := g.Out(u)
			if err != nil {
				t.Fatal(err)
			}
			ins, _, _, err := g.In(u)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range append(outs, ins...) {
				if !near[v] {
					near[v] = true
					next = append(next, v)
				}
			}
		}
		frontier = next
	}
	return near
}

// TestResonanceSeedLeadsAndHubsDoNotWin: the seed is among the strongest
// nodes of its own wave, and the strongest are its neighbourhood, not the
// package and directory nodes every wave used to end in (their degree is
// in the thousands: without splitting the amplitude they collected the
// most pulses whatever the seed).
func TestResonanceSeedLeadsAndHubsDoNotWin(t *testing.T) {
	g, e := netHTTP(t)
	for _, key := range seeds {
		seed := lookup(t, g, key)
		p := engines.DefaultResonanceParams()
		w, err := e.Resonate([]engines.Seed{{Node: seed, Score: 1}}, p)
		if err != nil {
			t.Fatal(err)
		}
		top := keys(t, g, w.Nodes)
		// Files: the seed within the first 3; symbols (used from hundreds
		// of places, whose users' files add up coherently): the first 20.
		within := 20
		if strings.HasPrefix(key, "file:") {
			within = 3
		}
		found := false
		for _, k := range top[:min(within, len(top))] {
			found = found || k == key
		}
		if !found {
			t.Errorf("resonate %s: the seed is not among its %d strongest nodes: %v", key, within, top)
		}
		near := within2(t, g, seed)
		for i, r := range w.Nodes[:min(5, len(w.Nodes))] {
			typ, err := g.Type(r.Node)
			if err != nil {
				t.Fatal(err)
			}
			if typ == "package" || typ == "directory" || !near[r.Node] {
				t.Errorf("resonate %s: %s (%s, degree %d) ranks %d: %v", key, top[i], typ, degree(t, g, r.Node), i+1, top[:5])
			}
		}
	}
}

func TestSweepFindsInteriorPeaks(t *testing.T) {
	g, e := netHTTP(t)
	withPeak := 0
	for _, key := range seeds {
		seed := lookup(t, g, key)
		sp := engines.DefaultSweepParams()
		sw, err := e.Sweep([]engines.Seed{{Node: seed, Score: 1}}, sp)
		if err != nil {
			t.Fatal(err)
		}
		first, last := sw.Spectrum[0].Energy, sw.Spectrum[len(sw.Spectrum)-1].Energy
		for _, h := range sw.Resonant {
			if h.Frequency <= sp.Min || h.Frequency >= sp.Max {
				t.Errorf("sweep %s: resonance at the end of the range (%v)", key, h.Frequency)
			}
			if h.Energy <= first || h.Energy <= last {
				continue
			}
			// A real peak: above both ends of the range, not a ripple.
			withPeak++
			break
		}
	}
	// Measured with toolchain 1.26: 5 of the 8 seeds (every file seed and
	// Header.Get) peak near f = 1.4; the other symbols fall monotonically.
	if withPeak < len(seeds)/2 {
		t.Errorf("only %d of %d seeds have an energy peak above both ends of the sweep", withPeak, len(seeds))
	}
}

func TestRelatedRanksTestFileAndCapsContainers(t *testing.T) {
	g, e := netHTTP(t)
	for _, pair := range [][2]string{{"file:cookie.go", "file:cookie_test.go"}, {"file:fs.go", "file:fs_test.go"}, {"file:header.go", "file:header_test.go"}} {
		p := engines.DefaultRelatedParams()
		p.Kind = "file"
		p.TopK = 4 // the seed and three more
		rs, err := e.Related([]engines.Seed{{Node: lookup(t, g, pair[0]), Score: 1}}, p)
		if err != nil {
			t.Fatal(err)
		}
		top := keys(t, g, rs)
		found := false
		for _, k := range top {
			found = found || k == pair[1]
		}
		if !found {
			t.Errorf("activate --files %s: %s not in the top 3: %v", pair[0], pair[1], top)
		}
	}
	// Default kinds: no file contributes more than 3 symbols to the top 20.
	p := engines.DefaultRelatedParams()
	rs, err := e.Related([]engines.Seed{{Node: lookup(t, g, "file:server.go"), Score: 1}}, p)
	if err != nil {
		t.Fatal(err)
	}
	perFile := map[string]int{}
	for _, r := range rs {
		k, _ := g.Key(r.Node)
		if !strings.HasPrefix(k, "sym:") {
			continue
		}
		ss, rels, _, err := g.In(r.Node)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range ss {
			rel, err := g.Relation(rels[i])
			if err != nil {
				t.Fatal(err)
			}
			if rel.Name == "contains" {
				fk, _ := g.Key(s)
				perFile[fk]++
			}
		}
	}
	for f, n := range perFile {
		if n > engines.DefaultPerContainer {
			t.Errorf("activate file:server.go: %d symbols of %s in the top 20", n, f)
		}
	}
	if len(rs) != p.TopK {
		t.Errorf("activate file:server.go: %d results, want %d", len(rs), p.TopK)
	}
}
