package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// nextRaw is the next line the server wrote, as written.
func (r *rawSession) nextRaw() string {
	r.t.Helper()
	select {
	case line, ok := <-r.lines:
		if !ok {
			r.t.Fatalf("server closed its output (stderr: %s)", r.errb.String())
		}
		return line
	case <-time.After(20 * time.Second):
		r.t.Fatalf("no answer from the server (stderr: %s)", r.errb.String())
	}
	return ""
}

// idText is the JSON text of the "id" member of a response line.
func idText(t *testing.T, line string) string {
	t.Helper()
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("answer is not JSON: %q", line)
	}
	return string(m.ID)
}

// TestRequestIDsEchoedExactly: JSON-RPC 2.0 says the response carries the
// same id as the request; a number the SDK would hold as an int64 (too
// large, fractional, past 2^53) comes back as the client wrote it, for
// results and for errors alike.
func TestRequestIDsEchoedExactly(t *testing.T) {
	r := startRaw(t, newStore(t))
	ids := []string{`9223372036854775807`, `-9223372036854775808`, `9007199254740993`, `1.5`, `1e3`, `-0`, `0`, `"7"`, `"memctl-1"`, `18446744073709551616`}
	// Before initialize: an error, with the id as sent and a real code.
	for _, id := range ids {
		r.send([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`))
		line := r.nextRaw()
		if got := idText(t, line); got != id {
			t.Errorf("id %s came back as %s: %s", id, got, line)
		}
		var m struct {
			Error struct{ Code int } `json:"error"`
		}
		if json.Unmarshal([]byte(line), &m); m.Error.Code != -32600 {
			t.Errorf("tools/list before initialize: %s, want code -32600", line)
		}
	}
	r.send([]byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	if line := r.nextRaw(); !strings.Contains(line, `"result"`) {
		t.Fatalf("initialize: %s", line)
	}
	r.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	// After: results carry the ids as sent (one at a time: calls run
	// concurrently and may be answered in any order).
	for _, id := range ids {
		r.send([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`))
		line := r.nextRaw()
		if got := idText(t, line); got != id || !strings.Contains(line, `"result"`) {
			t.Errorf("ping with id %s: %s", id, line)
		}
	}
}

// TestNotAMessageGetsInvalidRequest: an object that is neither a request
// nor a response, and a response with both a result and an error, are
// answered with -32600 and their id.
func TestNotAMessageGetsInvalidRequest(t *testing.T) {
	r := startRaw(t, newStore(t))
	for _, tc := range []struct{ line, id string }{
		{`{"jsonrpc":"2.0","id":4}`, `4`},
		{`{"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"x"}}`, `5`},
		{`{"jsonrpc":"2.0","id":"r","method":"ping","result":{}}`, `"r"`},
	} {
		r.send([]byte(tc.line))
		line := r.nextRaw()
		var m struct {
			Error struct{ Code int } `json:"error"`
		}
		if json.Unmarshal([]byte(line), &m); m.Error.Code != -32600 || idText(t, line) != tc.id {
			t.Errorf("%s: answered %s, want -32600 with id %s", tc.line, line, tc.id)
		}
	}
}
