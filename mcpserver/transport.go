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

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
	msg, err := jsonrpc.DecodeMessage(trimmed)
	if err != nil {
		c.reject(requestID(trimmed), jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
		return nil, false
	}
	return msg, true
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
	buf := make([]byte, 0, len(b)+1)
	buf = append(append(buf, b...), '\n')
	_, err := c.out.Write(buf)
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
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	err = c.writeLine(b)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.answered(resp.ID)
	}
	return err
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
