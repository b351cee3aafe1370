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
	"log/slog"
	"reflect"
	"runtime/debug"
	"slices"
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

func annotations(k toolKind) *mcp.ToolAnnotations {
	closed := false
	a := &mcp.ToolAnnotations{OpenWorldHint: &closed}
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
	// reference: one of the reference memory server's tools, which answers
	// as the reference does (SPEC.md §10.4): its annotations, unknown
	// arguments and fields ignored (and logged at debug), not refused.
	reference bool
	// lean: the arguments listed in the tool's lean form (SPEC.md §10.5),
	// which a server offers unless it offers every tool: these in the
	// input schema, the others named in one line of the description (they
	// are accepted all the same), and no output schema (the structured
	// content is sent all the same). Nil: the tool has no lean form.
	lean []string
}

// texter is a result whose text content is not its JSON (the reference
// memory server's tools: a pretty-printed array, or a sentence).
type texter interface{ Text() string }

// referenceAnnotations are the reference memory server's annotations:
// every hint spelled out, deletes idempotent.
func referenceAnnotations(k toolKind) *mcp.ToolAnnotations {
	no, yes := false, true
	a := &mcp.ToolAnnotations{OpenWorldHint: &no, DestructiveHint: &no}
	switch k {
	case readOnly:
		a.ReadOnlyHint, a.IdempotentHint = true, true
	case destructive:
		a.DestructiveHint, a.IdempotentHint = &yes, true
	}
	return a
}

// leanSchema is schema with only the properties keep, and description
// naming the others.
func leanSchema(schema *jsonschema.Schema, keep []string, description string) (*jsonschema.Schema, string) {
	lean := *schema
	lean.Properties = map[string]*jsonschema.Schema{}
	lean.PropertyOrder = nil
	lean.Required = nil
	var other []string
	for _, name := range schema.PropertyOrder {
		if !slices.Contains(keep, name) {
			other = append(other, name)
		}
	}
	for name := range schema.Properties {
		if !slices.Contains(keep, name) && !slices.Contains(other, name) {
			other = append(other, name)
		}
	}
	for _, name := range keep {
		p, ok := schema.Properties[name]
		if !ok {
			panic(fmt.Sprintf("lean argument %q is not an argument", name))
		}
		lean.Properties[name] = p
		lean.PropertyOrder = append(lean.PropertyOrder, name)
		if slices.Contains(schema.Required, name) {
			lean.Required = append(lean.Required, name)
		}
	}
	if len(other) > 0 {
		description += " More arguments: " + strings.Join(other, ", ") + "."
	}
	return &lean, description
}

// allowExtra drops every "additionalProperties: false" of a schema, so
// that unknown members validate (the reference server ignores them).
func allowExtra(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	s.AdditionalProperties = nil
	for _, p := range s.Properties {
		allowExtra(p)
	}
	allowExtra(s.Items)
}

// addTool registers h as the tool d. In and Out must be structs.
func addTool[In, Out any](s *Server, d toolDef, h func(ctx context.Context, in *In) (Out, error)) {
	if !s.opts.Tools.offers(d.name) {
		return
	}
	inSchema, err := jsonschema.For[In](schemaOptions)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", d.name, err))
	}
	outSchema, err := jsonschema.For[Out](schemaOptions)
	if err != nil {
		panic(fmt.Sprintf("tool %s: output schema: %v", d.name, err))
	}
	strict, err := inSchema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: resolving input schema: %v", d.name, err))
	}
	resolved, annot := strict, annotations(d.kind)
	if d.reference {
		lenient, err := jsonschema.For[In](schemaOptions)
		if err != nil {
			panic(fmt.Sprintf("tool %s: input schema: %v", d.name, err))
		}
		allowExtra(lenient)
		if resolved, err = lenient.Resolve(nil); err != nil {
			panic(fmt.Sprintf("tool %s: resolving input schema: %v", d.name, err))
		}
		inSchema, annot = lenient, referenceAnnotations(d.kind)
	} else {
		strict = nil
	}
	t := &mcp.Tool{
		Name: d.name, Title: d.title, Description: d.description,
		Annotations: annot,
		InputSchema: inSchema, OutputSchema: outSchema,
	}
	if d.lean != nil && !s.opts.Tools.all {
		t.InputSchema, t.Description = leanSchema(inSchema, d.lean, d.description)
		t.OutputSchema = nil
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
		if strict != nil && s.log.Enabled(ctx, slog.LevelDebug) {
			if err := decodeArgs(req.Params.Arguments, strict, new(In)); err != nil {
				s.log.Debug("tool call: unknown arguments ignored", "tool", d.name, "detail", err)
			}
		}
		if s.opts.BeforeCall != nil {
			// A bound store catches up first (SPEC.md §13.5); when it
			// cannot, reads answer from the local replica.
			if err := s.opts.BeforeCall(); err != nil {
				s.log.Warn("answering from the local replica, which may be behind", "tool", d.name, "err", err)
			}
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
		text := string(b)
		if t, ok := any(out).(texter); ok {
			text = t.Text()
		}
		return &mcp.CallToolResult{
			StructuredContent: json.RawMessage(b),
			Content:           []mcp.Content{&mcp.TextContent{Text: text}},
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
