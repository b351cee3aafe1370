package mcpserver_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// rawSession talks JSON-RPC to `memctl mcp` byte by byte, so it can send
// what no SDK client would.
type rawSession struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	errb  *lockedBuffer
}

func startRaw(t *testing.T, db string) *rawSession {
	t.Helper()
	cmd := exec.Command(memctlBin, "--db", db, "mcp", "--tools", "all")
	cmd.Env = testEnv()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &rawSession{t: t, cmd: cmd, in: in, lines: make(chan string, 16), errb: &lockedBuffer{}}
	cmd.Stderr = r.errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	return r
}

func (r *rawSession) send(line []byte) {
	r.t.Helper()
	if _, err := r.in.Write(append(line, '\n')); err != nil {
		r.t.Fatalf("writing to the server: %v (stderr: %s)", err, r.errb.String())
	}
}

func (r *rawSession) next() map[string]any {
	r.t.Helper()
	select {
	case line, ok := <-r.lines:
		if !ok {
			r.t.Fatalf("server closed its output (stderr: %s)", r.errb.String())
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			r.t.Fatalf("server wrote a line that is not JSON: %q", line)
		}
		return m
	case <-time.After(20 * time.Second):
		r.t.Fatalf("no answer from the server (stderr: %s)", r.errb.String())
	}
	return nil
}

// request sends a request with id and returns the answer with that id,
// plus whatever the server wrote before it.
func (r *rawSession) request(id int, method string, params any) (map[string]any, []map[string]any) {
	r.t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	r.send(b)
	var before []map[string]any
	for {
		m := r.next()
		if m["id"] == float64(id) {
			return m, before
		}
		before = append(before, m)
	}
}

// TestBadInput: every malformed message gets a protocol error, every bad
// call a tool error; the server keeps serving and the store is unchanged.
func TestBadInput(t *testing.T) {
	db := newStore(t)
	runCLI(t, "", "--db", db, "put-node", "a:1", "--payload", `{"x":1}`)
	before := runCLI(t, "", "--db", db, "--json", "diff-since", "0")

	r := startRaw(t, db)
	init, _ := r.request(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "raw", "version": "1"}})
	if init["result"] == nil {
		t.Fatalf("initialize: %v", init)
	}
	r.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))

	call := func(tool, args string) string {
		return `{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	}
	big := strings.Repeat("x", 9<<20)
	for i, tc := range []struct {
		name string
		line string
		// want: "protocol CODE" for a JSON-RPC error, "tool TEXT" for a tool
		// error result containing TEXT.
		want string
	}{
		{"not JSON", `garbage{`, "protocol -32700"},
		{"truncated JSON", `{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"get_node"`, "protocol -32700"},
		{"nesting too deep", strings.Repeat("[", 20000) + strings.Repeat("]", 20000), "protocol -32700"},
		{"not JSON-RPC", `{"foo":1}`, "protocol -32600"},
		{"wrong version", `{"jsonrpc":"1.0","id":ID,"method":"ping"}`, "protocol -32600"},
		{"batch", `[{"jsonrpc":"2.0","id":ID,"method":"ping"}]`, "protocol -32600"},
		{"bad id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, "protocol -32600"},
		{"unknown method", `{"jsonrpc":"2.0","id":ID,"method":"no/such"}`, "protocol -32601"},
		{"params not an object", `{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":"x"}`, "protocol -32602"},
		{"unknown tool", call("no_such_tool", `{}`), "protocol -32602"},
		{"wrong type", call("put_node", `{"key":5}`), `tool has type "integer", want "string"`},
		{"wrong type in a list", call("create_entities", `{"entities":[{"name":"x","entityType":"t","observations":"not a list"}]}`), "tool entities[].observations: type: not a list has type \"string\""},
		{"missing argument", call("put_edge", `{"src":"a:1","rel":"calls"}`), `tool missing properties: ["dst"]`},
		{"unknown argument", call("put_node", `{"key":"a:2","kye":"x"}`), "tool unexpected additional properties"},
		{"arguments not an object", call("put_node", `[1,2]`), "tool arguments must be a JSON object"},
		{"negative revision", call("get_node", `{"key":"a:1","at_rev":-1}`), "tool minimum"},
		{"revision not an integer", call("get_node", `{"key":"a:1","at_rev":1.5}`), "tool"},
		{"empty key", call("put_node", `{"key":""}`), "tool empty node key"},
		{"key too long", call("put_node", `{"key":"`+strings.Repeat("k", 5000)+`"}`), "tool longer than 4096"},
		{"bad relation", call("put_edge", `{"src":"a:1","rel":"calsl","dst":"a:2"}`), `tool unknown relation "calsl" (did you mean "calls"?)`},
		{"kv payload missing", call("put_kv", `{"namespace":"n","key":"k"}`), `tool missing properties: ["payload"]`},
		{"bad weight", call("put_edge", `{"src":"a:1","rel":"calls","dst":"a:2","weight":1e300}`), "tool weight"},
		{"oversized message", call("put_node", `{"key":"a:3","payload":"`+big+`"}`), "protocol -32600"},
		{"key not UTF-8", call("put_node", `{"key":"a:`+"\xff\xfe"+`"}`), "protocol -32700"},
		{"batch op key not UTF-8", call("batch", `{"ops":[{"op":"put_node","key":"b:`+"\xc3\x28"+`"}]}`), "protocol -32700"},
		{"lone surrogate escape", call("put_node", `{"key":"a:\udc00"}`), "protocol -32700"},
		{"unpaired high surrogate", call("create_entities", `{"entities":[{"name":"\ud83d","entityType":"t","observations":[]}]}`), "protocol -32700"},
		{"half-bad batch", call("batch", `{"ops":[{"op":"put_node","key":"b:1"},{"op":"put_edge","src":"b:1","rel":"nope","dst":"b:2"}]}`), "tool op 2 (put_edge)"},
		{"relation from an empty name", call("create_relations", `{"relations":[{"from":"","to":"a:1","relationType":"r"}]}`), "tool invalid input: empty source key"},
	} {
		id := 100 + i
		r.send([]byte(strings.ReplaceAll(tc.line, "ID", fmt.Sprint(id))))
		// A ping after each: it must be answered (the server keeps serving).
		// Calls run concurrently, so the two answers may come in either order.
		pong, got := r.request(1000+i, "ping", nil)
		if pong["result"] == nil {
			t.Fatalf("%s: ping after it failed: %v", tc.name, pong)
		}
		if len(got) == 0 {
			got = append(got, r.next())
		}
		if len(got) != 1 {
			t.Errorf("%s: %d answers, want 1: %v", tc.name, len(got), got)
			continue
		}
		ans := got[0]
		kind, want, _ := strings.Cut(tc.want, " ")
		switch kind {
		case "protocol":
			e, _ := ans["error"].(map[string]any)
			if e == nil || fmt.Sprint(e["code"]) != want {
				t.Errorf("%s: answer %v, want JSON-RPC error %s", tc.name, ans, want)
			} else if id := ans["id"]; id != nil && id != float64(100+i) {
				t.Errorf("%s: error carries id %v", tc.name, id)
			}
		case "tool":
			res, _ := ans["result"].(map[string]any)
			if res == nil || res["isError"] != true {
				t.Errorf("%s: answer %v, want a tool error", tc.name, ans)
				continue
			}
			text := res["content"].([]any)[0].(map[string]any)["text"].(string)
			if !strings.Contains(text, want) || strings.Contains(text, "\n") {
				t.Errorf("%s: tool error %q, want one line containing %q", tc.name, text, want)
			}
		}
	}
	// Still serving real calls.
	ans, _ := r.request(5000, "tools/call", map[string]any{"name": "get_node", "arguments": map[string]any{"key": "a:1"}})
	if res, _ := ans["result"].(map[string]any); res == nil || res["isError"] == true {
		t.Fatalf("get_node after the bad input: %v", ans)
	}
	if after := runCLI(t, "", "--db", db, "--json", "diff-since", "0"); after != before {
		t.Errorf("bad input changed the store:\n%s", after)
	}
	if out, errOut, code := tryCLI(t, "", "--db", db, "check"); code != 0 {
		t.Errorf("check: %s%s", out, errOut)
	}
	// The end of input ends the server cleanly.
	r.in.Close()
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("server exit: %v (stderr: %s)", err, r.errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Error("server did not exit when its input closed")
	}
	if strings.Contains(r.errb.String(), "panic") {
		t.Errorf("server log mentions a panic:\n%s", r.errb.String())
	}
}
