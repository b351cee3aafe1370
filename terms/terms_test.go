package terms

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFileTerms(t *testing.T) {
	src := "// Package store keeps the StoreRecords.\nfunc openStore(dbPath string) (*Store, error) { return nil, ErrNotFound } // héllo_wörld é ab HTTPServer x\xffyz"
	want := map[string]int{
		"package": 1, "store": 4, "keeps": 1, "the": 1, "records": 1, // StoreRecords: store + records
		"func": 1, "open": 1, "path": 1, "string": 1, "error": 1, "return": 1, "nil": 1,
		"err": 1, "not": 1, "found": 1, "héllo": 1, "wörld": 1, "httpserver": 1,
	}
	// "db", "ab", "é", "x", "yz" are shorter than 3 letters; HTTPServer has
	// no lower-to-upper change; \xff separates x from yz.
	if diff := cmp.Diff(want, FileTerms([]byte(src))); diff != "" {
		t.Errorf("FileTerms (-want +got):\n%s", diff)
	}
	if got := FileTerms([]byte("a + b = 12; // x")); got != nil {
		t.Errorf("no terms: %v", got)
	}
}

func TestFileTermsKeepsTheMostFrequent(t *testing.T) {
	var b strings.Builder
	want := map[string]int{}
	// Term i (i = 0..199) appears 200-i times, except that terms 127 and
	// 128 tie at 73: the smaller of the two (by string order) is kept.
	for i := range 200 {
		n := 200 - i
		if i == 128 {
			n = 73
		}
		term := fmt.Sprintf("term%sx", strings.Repeat("q", i/26)+string(rune('a'+i%26)))
		for range n {
			b.WriteString(term + " ")
		}
		if i < MaxFileTerms {
			want[term] = n
		}
	}
	got := FileTerms([]byte(b.String()))
	if len(got) != MaxFileTerms {
		t.Fatalf("%d terms kept, want %d", len(got), MaxFileTerms)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kept terms (-want +got):\n%s", diff)
	}
}
