package csr_test

import (
	"fmt"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/snapshot"
)

// Seed finding over the snapshot's indexes: exact key, prefix, trigram.
func Example_seedIndexes() {
	st := &snapshot.MemState{
		Rels: []snapshot.RelationRecord{{ID: 1, Name: "calls", DefaultWeight: 1}},
		NodeList: []snapshot.NodeRecord{
			{ID: 1, Key: "sym:store.Open", Type: "sym"},
			{ID: 2, Key: "sym:store.Close", Type: "sym"},
			{ID: 3, Key: "file:store.go", Type: "file"},
		},
		EdgeList: []snapshot.EdgeRecord{{Src: 3, Rel: 1, Dst: 1, Weight: 1}},
	}
	b, _, err := snapshot.Write(st, snapshot.WriterOptions{Logical: true})
	if err != nil {
		panic(err)
	}
	g, err := csr.FromBytes(b)
	if err != nil {
		panic(err)
	}
	i, ok, _ := g.LookupKey("file:store.go")
	fmt.Println("exact:", i, ok)

	order, _ := g.KeyOrder()
	lo, hi, _ := g.PrefixRange("sym:store.")
	for _, n := range order[lo:hi] {
		k, _ := g.Key(n)
		fmt.Println("prefix:", k)
	}
	posts, _ := g.TrigramPostings([3]byte{'O', 'p', 'e'}) // matched lower-cased
	for _, n := range posts {
		k, _ := g.Key(n)
		fmt.Println("trigram ope:", k)
	}
	targets, _, _, _ := g.Out(i)
	k, _ := g.Key(targets[0])
	fmt.Println("out:", k)
	// Output:
	// exact: 2 true
	// prefix: sym:store.Close
	// prefix: sym:store.Open
	// trigram ope: sym:store.Open
	// out: sym:store.Open
}
