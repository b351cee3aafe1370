package mcpserver

// Tool registration. Like the SDK's generic mcp.AddTool, addTool infers the
// input and output schemas from Go structs (jsonschema struct tags give the
// descriptions), validates arguments against the input schema and returns
// the output as structured content plus the same JSON as text. Unlike it,
// it decodes the arguments from the raw request bytes, so a payload reaches
// the store exactly as the client sent it, and it turns panics into tool
// errors instead of letting them end the process.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/memctl/memctl/records"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// schemaOptions maps the Go types whose inferred schema would be wrong:
// a json.RawMessage is any JSON value (not an array of bytes), a
// json.Number a number (not a string). It is
// spelled as the list of every JSON type, not as the empty schema: that
// marshals as `true`, which clients that expect every property schema to
// be an object (the TypeScript SDK's tools/list validation) refuse.
var schemaOptions = &jsonschema.ForOptions{
	TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {Types: []string{"null", "boolean", "number", "string", "array", "object"}},
		reflect.TypeFor[json.Number]():     {Type: "number"},
	},
}

// toolKind sets a tool's annotations.
type toolKind int

const (
	readOnly    toolKind = iota // reads only
	additive                    // writes new versions; the versions replaced stay readable (at_rev, history)
	destructive                 // may delete
)

func annotations(k toolKind, title string) *mcp.ToolAnnotations {
	closed := false
	a := &mcp.ToolAnnotations{Title: title, OpenWorldHint: &closed}
	switch k {
	case readOnly:
		a.ReadOnlyHint, a.IdempotentHint = true, true
	case additive:
		no := false
		a.DestructiveHint = &no
	case destructive:
		yes := true
		a.DestructiveHint = &yes
	}
	return a
}

// toolDef describes one tool.
type toolDef struct {
	name, title, description string
	kind                     toolKind
}

// addTool registers h as the tool d. In and Out must be structs.
func addTool[In, Out any](s *Server, d toolDef, h func(ctx context.Context, in *In) (Out, error)) {
	inSchema, err := jsonschema.For[In](schemaOptions)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", d.name, err))
	}
	outSchema, err := jsonschema.For[Out](schemaOptions)
	if err != nil {
		panic(fmt.Sprintf("tool %s: output schema: %v", d.name, err))
	}
	resolved, err := inSchema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: resolving input schema: %v", d.name, err))
	}
	t := &mcp.Tool{
		Name: d.name, Title: d.title, Description: d.description,
		Annotations: annotations(d.kind, d.title),
		InputSchema: inSchema, OutputSchema: outSchema,
	}
	s.mcp.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		s.calls.Add(1)
		defer s.calls.Done()
		start := time.Now()
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("tool panicked", "tool", d.name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				res, err = errorResult(fmt.Sprintf("internal error: %v", p)), nil
			}
		}()
		var in In
		if err := decodeArgs(req.Params.Arguments, resolved, &in); err != nil {
			s.log.Debug("tool call rejected", "tool", d.name, "err", err)
			return errorResult(describe(err)), nil
		}
		out, err := h(ctx, &in)
		if err != nil {
			s.log.Debug("tool error", "tool", d.name, "err", err, "took", time.Since(start))
			return errorResult(describe(err)), nil
		}
		b, err := records.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("tool %s: encoding the result: %w", d.name, err)
		}
		s.log.Debug("tool call", "tool", d.name, "took", time.Since(start), "bytes", len(b))
		return &mcp.CallToolResult{
			StructuredContent: json.RawMessage(b),
			Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
		}, nil
	})
}

// decodeArgs validates raw against the input schema, then decodes it into
// in from the raw bytes (json.RawMessage fields keep the client's bytes).
func decodeArgs(raw json.RawMessage, schema *jsonschema.Resolved, in any) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return invalidArg("arguments are not JSON: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return invalidArg("arguments must be a JSON object")
	}
	if err := schema.Validate(&v); err != nil {
		return fmt.Errorf("%w: %s", ErrInvalidArgument, schemaMessage(err))
	}
	if err := json.Unmarshal(raw, in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return invalidArg("argument %q must be a JSON %s, not %s", te.Field, te.Type.Kind(), te.Value)
		}
		return invalidArg("%v", err)
	}
	return nil
}

// schemaMessage shortens the validator's message to its innermost clause
// and names the argument the way a caller wrote it: "validating root:
// validating /properties/entities: … /properties/entities/items/properties/
// observations: type: …" becomes "entities[].observations: type: …".
func schemaMessage(err error) string {
	msg := oneLine(err.Error())
	const v = "validating "
	i := strings.LastIndex(msg, v)
	if i < 0 {
		return msg
	}
	path, rest, ok := strings.Cut(msg[i+len(v):], ": ")
	if !ok {
		return msg
	}
	if path == "root" {
		return "arguments: " + rest
	}
	var b strings.Builder
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for j := 0; j < len(parts); j++ {
		switch parts[j] {
		case "properties":
			if j+1 < len(parts) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(parts[j+1])
				j++
			}
		case "items":
			b.WriteString("[]")
		default:
			b.WriteString("/" + parts[j])
		}
	}
	return b.String() + ": " + rest
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}
