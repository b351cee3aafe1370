package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// hostile makes one message an agent's client should never send, from a
// seeded generator: a mutated valid call (bytes flipped, cut short,
// members dropped or retyped), an id of every JSON type and size, wrong
// versions, deep nesting, invalid UTF-8 and surrogates, huge strings, and
// well-formed calls with arguments of the wrong shape. id is the id text
// put into the message when it has one ("" when it has none).
func hostile(r *rand.Rand, n int) (line, id string) {
	// Every id is this message's own (n), so a late answer (calls run
	// concurrently) is never taken for another message's.
	ids := []string{fmt.Sprint(n), fmt.Sprintf("%q", fmt.Sprint("s", n)), fmt.Sprintf("92233720368547%05d", n),
		fmt.Sprintf("-%d", n), fmt.Sprintf("%d.5e3", n), fmt.Sprintf("1844674407370955%05d", n),
		"null", "true", "{}", "[]", fmt.Sprintf(`"%s%d"`, strings.Repeat("x", 300), n)}
	id = ids[r.IntN(len(ids))]
	if id == "null" || id == "true" || id == "{}" || id == "[]" {
		id = "" // not a valid id: the answer, if any, carries null
	}
	idText := ids[r.IntN(len(ids))]
	if id != "" {
		idText = id
	}
	tools := []string{"put_node", "get_node", "put_edge", "get_out", "batch", "put_kv", "context", "related",
		"impact", "search", "create_entities", "read_graph", "search_nodes", "supersede", "history", "no_such_tool"}
	args := []string{`{}`, `{"key":5}`, `{"key":"a:1","payload":{"x":[1,2,{"y":null}]}}`, `[1,2]`, `"str"`, `null`,
		`{"key":"` + strings.Repeat("k", 5000) + `"}`, `{"key":"a:\udc00"}`, `{"src":"a","rel":"calls","dst":"b","weight":-1}`,
		`{"ops":[{"op":"put_node"}]}`, `{"entities":[{"name":"x","entityType":"t","observations":"no"}]}`,
		`{"targets":[]}`, `{"queries":[""]}`, `{"key":"a:1","at_rev":-3}`, `{"query":"` + strings.Repeat("word ", 200) + `"}`}
	valid := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s}}`,
		idText, tools[r.IntN(len(tools))], args[r.IntN(len(args))])
	switch r.IntN(12) {
	case 0: // flip bytes
		b := []byte(valid)
		for range 1 + r.IntN(4) {
			b[r.IntN(len(b))] = byte(r.IntN(256))
		}
		return strings.ReplaceAll(string(b), "\n", " "), ""
	case 1: // cut short
		return valid[:r.IntN(len(valid))], ""
	case 2:
		return fmt.Sprintf(`{"jsonrpc":"1.0","id":%s,"method":"ping"}`, idText), id
	case 3:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s}`, idText), id
	case 4:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{},"error":{"code":1,"message":"x"}}`, idText), id
	case 5:
		return strings.Repeat("[", 1+r.IntN(30000)) + strings.Repeat("]", r.IntN(30000)), ""
	case 6:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q}`, idText, []string{"", "tools/lis", "resources/read", "prompts/get", "initialize"}[r.IntN(5)]), id
	case 7:
		return "\xff\xfe" + valid, ""
	case 8:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":%s}`, idText, args[r.IntN(len(args))]), id
	case 9:
		return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + idText + `}}`, ""
	case 10:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"id":%d,"method":"ping"}`, idText, n), ""
	}
	return valid, id
}

// TestHostileMessages: a seeded stream of hostile messages (1,500; 300
// with -short) into one server. The server never exits; every answer is a
// JSON-RPC 2.0 message; a message that carried a valid id is answered with
// that id's exact text; a ping after the stream is answered; the store
// passes check.
func TestHostileMessages(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 300
	}
	db := newStore(t)
	r := startRaw(t, db)
	init, _ := r.request(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "hostile", "version": "1"}})
	if init["result"] == nil {
		t.Fatalf("initialize: %v", init)
	}
	r.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	rng := rand.New(rand.NewPCG(20261126, 1))
	codes := map[string]int{}
	answers := map[string]int{} // id text → answers seen
	var tracked []string
	answered, withID := 0, 0
	for i := range n {
		line, id := hostile(rng, 1000+i)
		r.send([]byte(line))
		// A ping after each: once it is answered (and the message's own
		// answer, when it has an id: calls run concurrently), whatever
		// the message produced has been written. The transport answers
		// what it rejects before it reads the next line.
		pingID := 1_000_000 + i
		r.send([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, pingID)))
		pinged := false
		for !pinged || (id != "" && answers[id] == 0) {
			l := r.nextRaw()
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(l), &m); err != nil || m.JSONRPC != "2.0" {
				t.Fatalf("message %d %.200q: answer is not JSON-RPC 2.0: %.300q", i, line, l)
			}
			if string(m.ID) == fmt.Sprint(pingID) {
				pinged = true
				continue
			}
			answers[string(m.ID)]++
			answered++
			if m.Error != nil {
				codes[fmt.Sprint(m.Error.Code)]++
			} else {
				codes["result"]++
			}
		}
		if id != "" {
			withID++
			tracked = append(tracked, id)
		}
	}
	if pong, _ := r.request(7, "ping", nil); pong["result"] == nil {
		t.Fatalf("ping after the stream: %v", pong)
	}
	for _, id := range tracked {
		if answers[id] != 1 {
			t.Errorf("id %.80s: answered %d times, want once with the id as sent", id, answers[id])
		}
	}
	if out, errOut, code := tryCLI(t, "", "--db", db, "check"); code != 0 {
		t.Errorf("check after the stream: %s%s", out, errOut)
	}
	t.Logf("%d hostile messages (%d with a valid id, each answered once with its id); %d answers by code: %v", n, withID, answered, codes)
}
