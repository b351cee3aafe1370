package terms

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"What did we decide about retries?", []string{"decide", "retry"}},
		{"maxRetryCount", []string{"max", "retry", "count"}},
		{"max_retry_count", []string{"max", "retry", "count"}},
		{"decision:use-lmdb", []string{"decision", "use", "lmdb"}},
		{"HTTPServer x db", []string{"httpserver", "db"}},
		{"retrying retried retries", []string{"retry", "retry", "retry"}},
		{"stopping stopped", []string{"stop", "stop"}},
		{"caches cache passes boxes indexes status", []string{"cache", "cache", "pass", "box", "index", "status"}},
		{"héllo wörld", []string{"héllo", "wörld"}},
		{"12 + 3", nil},
	} {
		if diff := cmp.Diff(tc.want, Tokens(nil, tc.in)); diff != "" {
			t.Errorf("Tokens(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}
