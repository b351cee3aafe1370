package ingest

import (
	"fmt"
	"slices"
	"testing"
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
