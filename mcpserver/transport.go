package mcpserver

// The stdio transport. The SDK's own StdioTransport ends the session on the
// first line that is not JSON, so one bad message from a client would kill
// the server (and the agent's memory with it). This transport reads one
// message per line and answers every line it cannot pass on with a JSON-RPC
// error, then reads the next: malformed JSON (-32700), text that is not
// UTF-8 or carries a lone UTF-16 surrogate escape (-32700), a valid JSON
// value that is not a JSON-RPC message or a batch (-32600), a line longer
// than the limit (-32600, the rest of the line is skipped). Only the end of
// input ends the session, and only once every request read before it has
// been answered (`printf '…' | memctl mcp` gets all its answers).
//
// Request ids come back exactly as the client wrote them. The SDK holds a
// numeric id as an int64 (2^63-1 and 1.5 would come back changed), so
// every request id is swapped for a connection-unique string on the way in
// and its original JSON text put back on the response; a cancellation names
// the request by the same text. A message that is neither a request nor a
// response (`{"jsonrpc":"2.0","id":4}`, or both a result and an error) is
// answered with -32600 and its id.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxMessageBytes bounds one JSON-RPC message (one line).
const DefaultMaxMessageBytes = 8 << 20

// lineTransport is an mcp.Transport over a reader and a writer carrying
// newline-delimited JSON-RPC messages.
type lineTransport struct {
	in  io.Reader
	out io.Writer
	max int
	log *slog.Logger
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{
		out:      t.out,
		incoming: make(chan lineMsg),
		closed:   make(chan struct{}),
		log:      t.log,
		pending:  make(map[string]struct{}),
		ids:      make(map[string]json.RawMessage),
		byRaw:    make(map[string]string),
	}
	c.idle = sync.NewCond(&c.mu)
	go c.readLoop(bufio.NewReaderSize(t.in, 64<<10), t.max)
	return c, nil
}

type lineMsg struct {
	msg jsonrpc.Message
	err error
}

// lineConn is one session's connection. Reads happen on their own goroutine
// so that Close unblocks a pending Read.
type lineConn struct {
	out      io.Writer
	wmu      sync.Mutex
	incoming chan lineMsg
	closed   chan struct{}
	once     sync.Once
	log      *slog.Logger

	mu      sync.Mutex
	idle    *sync.Cond          // signalled when pending empties or the conn closes
	pending map[string]struct{} // ids of requests read and not yet answered
	done    bool                // closed

	// Request ids as the client wrote them: ids maps the string id the SDK
	// sees to the client's JSON text, byRaw the text back (for
	// cancellations). An entry goes when its response is written.
	ids   map[string]json.RawMessage
	byRaw map[string]string
	seq   uint64
}

func (c *lineConn) readLoop(r *bufio.Reader, max int) {
	for {
		line, tooLong, err := readLine(r, max)
		if len(line) > 0 || tooLong {
			if msg, ok := c.decode(line, tooLong, max); ok {
				if req, isReq := msg.(*jsonrpc.Request); isReq && req.IsCall() {
					c.mu.Lock()
					c.pending[idKey(req.ID)] = struct{}{}
					c.mu.Unlock()
				}
				select {
				case c.incoming <- lineMsg{msg: msg}:
				case <-c.closed:
					return
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
				c.waitAnswered()
			}
			select {
			case c.incoming <- lineMsg{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

// idKey identifies a request id (a number and a string with the same
// text are different ids).
func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

// waitAnswered blocks until every request read so far has been answered
// or the connection is closed.
func (c *lineConn) waitAnswered() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.pending) > 0 && !c.done {
		c.idle.Wait()
	}
}

// answered notes that the request id got its response.
func (c *lineConn) answered(id jsonrpc.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, idKey(id))
	if len(c.pending) == 0 {
		c.idle.Broadcast()
	}
}

// readLine reads one line without its terminator. A line longer than max is
// consumed to its end and reported as tooLong (its bytes are dropped).
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+2 { // +2: the terminator "\r\n"
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, err
	}
}

// decode turns one line into a message, or answers it with an error and
// returns false.
func (c *lineConn) decode(line []byte, tooLong bool, max int) (jsonrpc.Message, bool) {
	if tooLong {
		c.reject(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message exceeds the limit of %d bytes", max))
		return nil, false
	}
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return nil, false
	}
	if !utf8.Valid(trimmed) {
		c.reject(nil, jsonrpc.CodeParseError, "parse error: message is not valid UTF-8")
		return nil, false
	}
	if !json.Valid(trimmed) {
		c.reject(nil, jsonrpc.CodeParseError, "parse error: "+jsonSyntaxError(trimmed))
		return nil, false
	}
	if err := checkSurrogates(trimmed); err != nil {
		c.reject(requestID(trimmed), jsonrpc.CodeParseError, "parse error: "+err.Error())
		return nil, false
	}
	if trimmed[0] == '[' {
		c.reject(nil, jsonrpc.CodeInvalidRequest, "JSON-RPC batches are not supported: send one message per line")
		return nil, false
	}
	trimmed, reason := c.swapID(trimmed)
	if reason != "" {
		c.reject(requestID(line), jsonrpc.CodeInvalidRequest, "invalid request: "+reason)
		return nil, false
	}
	msg, err := jsonrpc.DecodeMessage(trimmed)
	if err != nil {
		c.forget(trimmed)
		c.reject(requestID(line), jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		return nil, false
	}
	return msg, true
}

// swapID checks the shape of a JSON-RPC object and, for a request with an
// id, replaces the id by a string of this connection's (see the file
// comment); a cancellation's requestId is replaced the same way. It
// returns the message to decode, or why it is not a JSON-RPC message.
func (c *lineConn) swapID(b []byte) ([]byte, string) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return b, "not a JSON-RPC message (an object)"
	}
	id, hasID := m["id"]
	_, hasMethod := m["method"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	switch {
	case !hasMethod && !hasResult && !hasError:
		return b, "neither a request (method) nor a response (result or error)"
	case !hasMethod && hasResult && hasError:
		return b, "a response carries a result or an error, not both"
	case hasMethod && (hasResult || hasError):
		return b, "a request carries no result or error"
	case !hasMethod:
		return b, "" // a response to the server's own request: its id is the server's
	}
	changed := false
	if hasID && validID(id) {
		syn := c.remember(id)
		m["id"], changed = json.RawMessage(strconv.Quote(syn)), true
	}
	var method string
	if json.Unmarshal(m["method"], &method) == nil && method == "notifications/cancelled" {
		var params map[string]json.RawMessage
		if json.Unmarshal(m["params"], &params) == nil {
			c.mu.Lock()
			syn, ok := c.byRaw[string(params["requestId"])]
			c.mu.Unlock()
			if ok {
				params["requestId"] = json.RawMessage(strconv.Quote(syn))
				if p, err := json.Marshal(params); err == nil {
					m["params"], changed = p, true
				}
			}
		}
	}
	if !changed {
		return b, ""
	}
	out, err := json.Marshal(m)
	if err != nil {
		return b, err.Error()
	}
	return out, ""
}

// validID: a JSON-RPC id is a string or a number.
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch id[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

// remember gives the client's id text raw a string id of its own.
func (c *lineConn) remember(raw json.RawMessage) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil {
		c.ids, c.byRaw = map[string]json.RawMessage{}, map[string]string{}
	}
	c.seq++
	syn := "memctl-" + strconv.FormatUint(c.seq, 10)
	c.ids[syn] = append(json.RawMessage(nil), raw...)
	c.byRaw[string(raw)] = syn
	return syn
}

// forget drops the id swapped into b (a message the SDK refused).
func (c *lineConn) forget(b []byte) {
	var m struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(b, &m) == nil {
		c.release(m.ID)
	}
}

// release drops a swapped id, returning the client's text for it.
func (c *lineConn) release(syn string) (json.RawMessage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	raw, ok := c.ids[syn]
	if ok {
		delete(c.ids, syn)
		if c.byRaw[string(raw)] == syn {
			delete(c.byRaw, string(raw))
		}
	}
	return raw, ok
}

// jsonSyntaxError explains why b is not one JSON value.
func jsonSyntaxError(b []byte) string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err.Error()
	}
	return "not a single JSON value"
}

// requestID is the "id" of a JSON object line when it is a valid JSON-RPC
// id (a string or a number), else nil (the error then carries id null).
func requestID(b []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(b, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	switch m.ID[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return m.ID
	}
	return nil
}

// checkSurrogates rejects \uD800-\uDFFF escapes that do not form a
// surrogate pair: Go decodes them to U+FFFD, so a key that is not valid
// Unicode would reach the store silently changed. b is valid JSON, so a
// backslash only occurs inside a string, starting an escape.
func checkSurrogates(b []byte) error {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if i+1 >= len(b) {
			return nil
		}
		if b[i+1] != 'u' {
			i++ // a one-character escape (possibly of a backslash)
			continue
		}
		hi, ok := hex4(b[i+2:])
		if !ok {
			continue
		}
		i += 5
		switch {
		case hi >= 0xDC00 && hi <= 0xDFFF:
			return fmt.Errorf("lone UTF-16 surrogate \\u%04x", hi)
		case hi >= 0xD800 && hi <= 0xDBFF:
			j := i + 1
			var lo rune
			if j+1 < len(b) && b[j] == '\\' && b[j+1] == 'u' {
				lo, ok = hex4(b[j+2:])
			} else {
				ok = false
			}
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return fmt.Errorf("lone UTF-16 surrogate \\u%04x", hi)
			}
			i = j + 5
		}
	}
	return nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// reject answers a message that never reached the SDK with a JSON-RPC
// error (id null when the message's id is unknown).
func (c *lineConn) reject(id json.RawMessage, code int64, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg}}
	b, err := json.Marshal(resp)
	if err != nil {
		c.log.Error("encoding an error response", "err", err)
		return
	}
	if c.log != nil {
		c.log.Warn("rejected a message", "code", code, "reason", msg)
	}
	if err := c.writeLine(b); err != nil && c.log != nil {
		c.log.Error("writing an error response", "err", err)
	}
}

func (c *lineConn) writeLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.closed:
		return io.ErrClosedPipe
	default:
	}
	// b is this line's own buffer (an encoding made for it): the newline
	// goes into its spare capacity when it has some, without a copy.
	_, err := c.out.Write(append(b, '\n'))
	return err
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m := <-c.incoming:
		return m.msg, m.err
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	msg = withErrorCode(msg)
	resp, isResp := msg.(*jsonrpc.Response)
	if isResp && resp.Error == nil && len(resp.Result) > 0 {
		if syn, ok := resp.ID.Raw().(string); ok {
			if raw, ok := c.release(syn); ok {
				err := c.writeLine(resultLine(raw, resp.Result))
				c.answered(resp.ID)
				return err
			}
		}
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if isResp {
		if syn, ok := resp.ID.Raw().(string); ok {
			if raw, ok := c.release(syn); ok {
				if b, err = restoreID(b, syn, raw); err != nil {
					return err
				}
			}
		}
	}
	err = c.writeLine(b)
	if isResp {
		c.answered(resp.ID)
	}
	return err
}

// withErrorCode gives an error response that carries no JSON-RPC code
// (the SDK answers a call made before initialize with a plain error, which
// goes out as code 0) a real one: -32600 for a call the session's state
// does not allow, -32603 otherwise.
func withErrorCode(msg jsonrpc.Message) jsonrpc.Message {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error == nil {
		return msg
	}
	var we *jsonrpc.Error
	if errors.As(resp.Error, &we) && we.Code != 0 {
		return msg
	}
	code := int64(jsonrpc.CodeInternalError)
	if strings.Contains(resp.Error.Error(), "during session initialization") || strings.Contains(resp.Error.Error(), "before") {
		code = jsonrpc.CodeInvalidRequest
	}
	out := *resp
	out.Error = &jsonrpc.Error{Code: code, Message: resp.Error.Error()}
	return &out
}

// resultLine is the response carrying result to the request the client
// named raw: what EncodeMessage and restoreID write, without encoding the
// result again (EncodeMessage's encoder, which does not escape HTML, only
// compacts a json.RawMessage, and the SDK's results are its encoder's
// output, NewResponse: compact already). A context pack's result is
// ~48 KB, and encoding it again was a twentieth of the call.
func resultLine(raw, result json.RawMessage) []byte {
	const head, mid = `{"jsonrpc":"2.0","id":`, `,"result":`
	b := make([]byte, 0, len(head)+len(raw)+len(mid)+len(result)+2) // +2: '}' and writeLine's newline
	b = append(append(append(append(b, head...), raw...), mid...), result...)
	return append(b, '}')
}

// restoreID puts the client's id text raw back into an encoded response
// whose id is syn. The SDK encodes a response as `{"jsonrpc":"2.0","id":`,
// the id, then the result or error: that id is replaced in place, without
// decoding the rest (a result can be tens of kilobytes). A response of
// another shape is decoded and written in that shape.
func restoreID(b []byte, syn string, raw json.RawMessage) ([]byte, error) {
	const head = `{"jsonrpc":"2.0","id":`
	id := strconv.Quote(syn)
	if rest, ok := bytes.CutPrefix(b, []byte(head+id)); ok && (bytes.HasPrefix(rest, []byte(`,"result":`)) || bytes.HasPrefix(rest, []byte(`,"error":`))) {
		out := make([]byte, 0, len(head)+len(raw)+len(rest)+1) // +1: writeLine's newline
		return append(append(append(out, head...), raw...), rest...), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["id"] = raw
	// The SDK's field order (jsonrpc, id, then result or error), as before.
	var out bytes.Buffer
	out.WriteString(`{"jsonrpc":"2.0","id":`)
	out.Write(raw)
	for _, k := range []string{"result", "error"} {
		if v, ok := m[k]; ok {
			out.WriteString(`,"` + k + `":`)
			out.Write(v)
		}
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

func (c *lineConn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		c.mu.Lock()
		c.done = true
		c.idle.Broadcast()
		c.mu.Unlock()
	})
	return nil
}

func (c *lineConn) SessionID() string { return "" }
