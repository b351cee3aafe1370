package engines

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

type matchKey struct {
	Key   string
	Kind  MatchKind
	Score float64
}

var seedGraph = testGraph{keys: []string{
	"chat", "chat_handler", "chat_handler_test", "my_chat_view", "src/Chat/Handler.go", "zz",
}}

func TestFindSeedsPriority(t *testing.T) {
	e := buildEngine(t, seedGraph)
	for _, tc := range []struct {
		query string
		want  []matchKey
	}{
		// Exact wins even though "chat" is also a prefix of three keys.
		{"chat", []matchKey{{"chat", MatchExact, 1}}},
		{"chat_handler", []matchKey{{"chat_handler", MatchExact, 1}}},
		// Prefix, in key order.
		{"chat_h", []matchKey{{"chat_handler", MatchPrefix, .9}, {"chat_handler_test", MatchPrefix, .9}}},
		// No key starts with "handler": substring (ASCII case-insensitive),
		// shortest key first.
		{"handler", []matchKey{
			{"chat_handler", MatchSubstring, .8}, {"chat_handler_test", MatchSubstring, .8}, {"src/Chat/Handler.go", MatchSubstring, .8},
		}},
		{"hat_v", []matchKey{{"my_chat_view", MatchSubstring, .8}}},
		// No substring: fuzzy by trigram Jaccard similarity. "chat_handlr"
		// has 9 trigrams, 8 shared with chat_handler (10 trigrams): 8/11.
		{"chat_handlr", []matchKey{{"chat_handler", MatchFuzzy, .7 * 8 / 11}, {"chat_handler_test", MatchFuzzy, .7 * 8 / 16}}},
		// Too short for the trigram index, no prefix: nothing.
		{"q", nil},
		{"xyzzy", nil},
	} {
		p := DefaultSeedParams()
		p.PerQuery = 3
		_, ms, err := e.FindSeeds([]string{tc.query}, p)
		if err != nil {
			t.Fatal(err)
		}
		var got []matchKey
		for _, m := range ms {
			got = append(got, matchKey{keyOf(t, e, m.Node), m.Kind, m.Score})
		}
		if d := cmp.Diff(tc.want, got, approx); d != "" {
			t.Errorf("%q (-want +got):\n%s", tc.query, d)
		}
	}
}

func TestFindSeedsUnion(t *testing.T) {
	e := buildEngine(t, seedGraph)
	seeds, _, err := e.FindSeeds([]string{"chat_h", "chat_handler"}, DefaultSeedParams())
	if err != nil {
		t.Fatal(err)
	}
	// chat_handler matched twice keeps its best score; node order.
	want := []Seed{{node(t, e, "chat_handler"), 1}, {node(t, e, "chat_handler_test"), .9}}
	if d := cmp.Diff(want, seeds); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if _, _, err := e.FindSeeds([]string{""}, DefaultSeedParams()); !isInvalid(err) {
		t.Errorf("empty query: err = %v", err)
	}
}
