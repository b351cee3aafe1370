package mcpserver_test

import (
	"testing"

	"github.com/memctl/memctl/mcpserver"
)

// TestFeedbackTool: the feedback tool commits what `memctl feedback` does,
// and related with feedback ranks as `activate --feedback` on the same
// store, while related without it is unchanged.
func TestFeedbackTool(t *testing.T) {
	db := newStore(t)
	s := startServer(t, db)
	for _, d := range []string{"x:b", "x:c", "x:d"} {
		s.ok("put_edge", map[string]any{"src": "x:a", "rel": "calls", "dst": d}, nil)
	}
	var plain, learnt mcpserver.Ranked
	s.ok("related", map[string]any{"queries": []string{"x:a"}, "depth": 1}, &plain)
	s.ok("feedback", map[string]any{"target": "x:a", "useful": []string{"x:d"}, "useless": []string{"x:b"}}, nil)
	s.fails("feedback", map[string]any{"target": "x:a"}, "no useful")
	var again mcpserver.Ranked
	s.ok("related", map[string]any{"queries": []string{"x:a"}, "depth": 1}, &again)
	diff(t, "related without feedback", again.Results, plain.Results)
	s.ok("related", map[string]any{"queries": []string{"x:a"}, "depth": 1, "feedback": true}, &learnt)
	var keys []string
	for _, r := range learnt.Results {
		keys = append(keys, r.Key)
	}
	diff(t, "related with feedback", keys, []string{"x:a", "x:d", "x:c", "x:b"})
}
