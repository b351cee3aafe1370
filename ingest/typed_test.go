package ingest

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
	"weak"

	"golang.org/x/tools/go/packages"
)

// A tree of more modules than are listed at once (maxListings): every
// module is listed and type-checked, while listModule drops the listings
// already taken (the background lister once read the map listModule
// deleted from; the race detector caught it).
func TestExtractGoListsEveryModule(t *testing.T) {
	const n = maxListings + 3
	files := map[string]string{"go.mod": "module example.com/root\n\ngo 1.22\n", "root.go": "package root\n"}
	for i := range n {
		m := fmt.Sprintf("m%d", i)
		files[m+"/go.mod"] = "module example.com/" + m + "\n\ngo 1.22\n"
		files[m+"/t.go"] = "package " + m + "\n\ntype T struct{}\n\nfunc New() *T { return &T{} }\n\nfunc (*T) M() {}\n\nfunc Run() { New().M() }\n"
	}
	res, err := ExtractGo(writeTree(t, files), GoOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != ModeTyped || len(res.LoadErrors) != 0 {
		t.Fatalf("mode %q, load errors %q: want every module type-checked", res.Mode, res.LoadErrors)
	}
	for i := range n {
		src := fmt.Sprintf("sym:example.com/m%d.Run", i)
		got := callEdges(res.Graph, map[string][]string{src: nil})[src]
		if want := "calls " + fmt.Sprintf("sym:example.com/m%d.T.M", i); !slices.Contains(got, want) {
			t.Errorf("%s: edges %q, want %q", src, got, want)
		}
	}
}

// parallelInOrder hands every result to done once, in order, and never
// has more than its window of results waiting behind a slow one.
func TestParallelInOrderWindow(t *testing.T) {
	const n = 500
	window := inOrderWindow * runtime.GOMAXPROCS(0)
	var mu sync.Mutex
	started, finished := 0, 0 // work calls begun; results handed to done
	most := 0
	var got []int
	parallelInOrder(n, func(i int) int {
		mu.Lock()
		started++
		most = max(most, started-finished)
		mu.Unlock()
		if i%50 == 0 {
			time.Sleep(20 * time.Millisecond) // a large unit: the others run ahead
		}
		return i * i
	}, func(i, v int) {
		if v != i*i {
			t.Errorf("result %d: %d", i, v)
		}
		got = append(got, i)
		mu.Lock()
		finished++
		mu.Unlock()
	})
	if len(got) != n || !slices.IsSorted(got) || got[n-1] != n-1 {
		t.Fatalf("done saw %d results, in order %v", len(got), slices.IsSorted(got))
	}
	if most > window {
		t.Errorf("%d units begun and not yet done at once, want at most %d", most, window)
	}
}

// Listings run ahead of the type-checking that takes them by at most
// maxListings modules: a listing is held from its start until it is
// taken, whatever the lister's speed (it once freed its slot when the
// listing was done, and a fast lister held every module's listing).
func TestListingsAheadAtMostMax(t *testing.T) {
	const n = 12
	var modules []module
	for i := range n {
		modules = append(modules, module{Dir: fmt.Sprintf("m%d", i)})
	}
	var mu sync.Mutex
	started, taken, most := 0, 0, 0 // taken: takes begun
	ls := startListings(modules, func(m module) ([]*packages.Package, error) {
		mu.Lock()
		started++
		most = max(most, started-taken)
		mu.Unlock()
		return []*packages.Package{{ID: m.Dir}}, nil // at once: the lister is fast
	})
	var prev weak.Pointer[packages.Package] // the listing taken before
	for i, m := range modules {
		time.Sleep(2 * time.Millisecond) // a type-check: the lister may run ahead
		mu.Lock()
		taken++ // before take frees the slot: the lister may start the next at once
		mu.Unlock()
		l := ls.take(m.Dir)
		if l.err != nil || len(l.all) != 1 || l.all[0].ID != m.Dir {
			t.Fatalf("%s: listing %v, %v", m.Dir, l.all, l.err)
		}
		// A listing taken and let go is garbage, while later ones are
		// still to be listed (it once stayed with the lister until the
		// last module started: std×80 held 300 MB of them).
		runtime.GC()
		if i > 0 && prev.Value() != nil {
			t.Fatalf("module %d's listing is still held after module %d was taken", i-1, i)
		}
		prev = weak.Make(l.all[0])
	}
	if started != n {
		t.Fatalf("%d of %d modules listed", started, n)
	}
	if most > maxListings {
		t.Errorf("%d listings held before they were taken, want at most %d", most, maxListings)
	}
}
