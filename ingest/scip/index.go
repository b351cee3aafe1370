// Package scip reads a SCIP index (https://github.com/sourcegraph/scip, the
// protobuf format of scip-go, scip-python, scip-typescript and other
// indexers) and turns it into memctl's code graph: the same node keys,
// payloads and relations as `ingest code` (SPEC.md §9.7).
//
// Invariants:
//   - Load never trusts the file: anything that is not a SCIP index
//     (truncated protobuf, no metadata, a document without a path, a range
//     that is not 3 or 4 integers) is a *FormatError; an index with no
//     document is ErrEmptyIndex. Nothing is written in either case.
//   - The callers of a symbol are computed from the index alone: the
//     innermost definition (of a global symbol) whose enclosing range
//     holds the reference, else the document's file (module-level code).
//     eval graph scores memctl's graph against exactly this view.
//   - Import writes one revision holding the difference between the index's
//     graph and the share an earlier import wrote, so a re-import of an
//     unchanged index, or of its unchanged documents, writes nothing.
package scip

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	scippb "github.com/sourcegraph/scip/bindings/go/scip"
	"google.golang.org/protobuf/proto"
)

// ErrEmptyIndex: the index is a valid SCIP index without any document.
var ErrEmptyIndex = errors.New("the index holds no document")

// FormatError: the file is not a SCIP index, or one this reader refuses.
type FormatError struct {
	Path string
	Msg  string
	Err  error
}

func (e *FormatError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: not a SCIP index: %s: %v", e.Path, e.Msg, e.Err)
	}
	return fmt.Sprintf("%s: not a SCIP index: %s", e.Path, e.Msg)
}

func (e *FormatError) Unwrap() error { return e.Err }

// Range is a 0-based, half-open source range: lines and UTF-8/UTF-16
// character offsets as the indexer wrote them (only lines are compared
// across tools; characters only within one document).
type Range struct{ StartLine, StartChar, EndLine, EndChar int32 }

// contains reports whether r holds o entirely.
func (r Range) contains(o Range) bool {
	return before(r.StartLine, r.StartChar, o.StartLine, o.StartChar) &&
		before(o.EndLine, o.EndChar, r.EndLine, r.EndChar)
}

func before(l1, c1, l2, c2 int32) bool { return l1 < l2 || l1 == l2 && c1 <= c2 }

// size orders ranges by extent (lines first): the innermost of nested
// ranges is the smallest.
func (r Range) size() (int32, int32) {
	return r.EndLine - r.StartLine, r.EndChar - r.StartChar
}

// Def is one definition occurrence of a global symbol.
type Def struct {
	Symbol    string
	Path      string // the document's relative path, slash-separated
	Range     Range  // the name
	Enclosing Range  // the whole definition; HasEnclosing false when the indexer gave none
	// HasEnclosing is false when the indexer wrote no enclosing_range.
	HasEnclosing bool
	Desc         Descriptor // the last descriptor of Symbol
}

// Line is the 1-based line of the definition's name.
func (d Def) Line() int { return int(d.Range.StartLine) + 1 }

// Ref is one reference occurrence of a global symbol that the index
// defines, with the definition it occurs in.
type Ref struct {
	Symbol string
	Path   string
	Range  Range
	// Caller is the symbol of the innermost definition holding the
	// reference, "" when none does (module-level code: the file).
	Caller string
}

// Relation is a relationship of SymbolInformation with is_implementation.
type Relation struct{ From, To string }

// Index is what memctl reads of a SCIP index.
type Index struct {
	Tool, ToolVersion string
	ProjectRoot       string
	Documents         []Document
	// Defs holds every definition of a global symbol, by symbol (a symbol
	// may be defined more than once: Go packages, TypeScript merges).
	Defs map[string][]Def
	// Refs holds every reference (no definition role) to a symbol in Defs,
	// in document order.
	Refs []Ref
	// Modules holds the references to packages and modules (imports and
	// qualified uses), defined in the index or not; Caller is unset.
	Modules []Ref
	// Implements are the is_implementation relationships between symbols
	// the index defines.
	Implements []Relation
	// Outside counts the documents skipped because their path leaves the
	// project root.
	Outside int
	// Enclosing counts the definitions that carried an enclosing_range.
	Enclosing, DefCount int
}

// Document is one document of the index.
type Document struct {
	Path     string
	Language string
	// Hash is the SHA-256 of the document's serialised protobuf message:
	// it changes when anything the index says about the file changes.
	Hash string
}

// Load reads and validates a SCIP index file.
func Load(file string) (*Index, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return Parse(file, b)
}

// Parse decodes an index held in memory; name is used in errors.
func Parse(name string, b []byte) (*Index, error) {
	var pb scippb.Index
	if err := proto.Unmarshal(b, &pb); err != nil {
		return nil, &FormatError{Path: name, Msg: "protobuf", Err: err}
	}
	md := pb.GetMetadata()
	if md.GetToolInfo().GetName() == "" {
		return nil, &FormatError{Path: name, Msg: "no metadata naming the indexer"}
	}
	ix := &Index{Tool: md.GetToolInfo().GetName(), ToolVersion: md.GetToolInfo().GetVersion(),
		ProjectRoot: md.GetProjectRoot(), Defs: make(map[string][]Def)}
	seen := make(map[string]bool)
	type docRefs struct {
		doc  string
		refs []Ref
		defs []Def
	}
	var all []docRefs
	for i, d := range pb.GetDocuments() {
		p := d.GetRelativePath()
		if p == "" || strings.HasPrefix(p, "/") || path.Clean(p) != p {
			return nil, &FormatError{Path: name, Msg: fmt.Sprintf("document %d: relative path %q", i, p)}
		}
		if strings.HasPrefix(p, "../") {
			// Outside the project root (scip-go lists cgo's generated
			// files in the build cache): not part of the tree.
			ix.Outside++
			continue
		}
		if seen[p] {
			return nil, &FormatError{Path: name, Msg: fmt.Sprintf("document %q twice", p)}
		}
		seen[p] = true
		raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(d)
		if err != nil {
			return nil, &FormatError{Path: name, Msg: "document " + p, Err: err}
		}
		ix.Documents = append(ix.Documents, Document{Path: p, Language: d.GetLanguage(), Hash: sha256Hex(raw)})
		dr := docRefs{doc: p}
		for j, o := range d.GetOccurrences() {
			r, ok := toRange(o.GetRange())
			if !ok {
				return nil, &FormatError{Path: name, Msg: fmt.Sprintf("document %q occurrence %d: range %v", p, j, o.GetRange())}
			}
			sym := o.GetSymbol()
			if sym == "" || scippb.IsLocalSymbol(sym) {
				continue
			}
			if o.GetSymbolRoles()&int32(scippb.SymbolRole_Definition) != 0 {
				desc, err := LastDescriptor(sym)
				if err != nil {
					continue // a symbol memctl cannot name: neither node nor caller
				}
				def := Def{Symbol: sym, Path: p, Range: r, Desc: desc}
				if len(o.GetEnclosingRange()) > 0 {
					er, ok := toRange(o.GetEnclosingRange())
					if !ok {
						return nil, &FormatError{Path: name, Msg: fmt.Sprintf("document %q occurrence %d: enclosing range %v", p, j, o.GetEnclosingRange())}
					}
					def.Enclosing, def.HasEnclosing = er, true
					ix.Enclosing++
				}
				ix.DefCount++
				dr.defs = append(dr.defs, def)
				ix.Defs[sym] = append(ix.Defs[sym], def)
				continue
			}
			dr.refs = append(dr.refs, Ref{Symbol: sym, Path: p, Range: r})
		}
		all = append(all, dr)
		for _, si := range d.GetSymbols() {
			for _, rel := range si.GetRelationships() {
				if rel.GetIsImplementation() && rel.GetSymbol() != si.GetSymbol() {
					ix.Implements = append(ix.Implements, Relation{From: si.GetSymbol(), To: rel.GetSymbol()})
				}
			}
		}
	}
	if len(ix.Documents) == 0 {
		return nil, ErrEmptyIndex
	}
	for _, dr := range all {
		enclosing := enclosers(dr.defs)
		caller := func(r Range) string { return innermost(enclosing, r) }
		if len(enclosing) == 0 {
			caller = precedingCaller(dr.defs)
		}
		for _, r := range dr.refs {
			if isModule(r.Symbol) {
				ix.Modules = append(ix.Modules, r)
				continue
			}
			if _, ok := ix.Defs[r.Symbol]; !ok {
				continue // defined outside the index
			}
			r.Caller = caller(r.Range)
			ix.Refs = append(ix.Refs, r)
		}
	}
	ix.Implements = slices.DeleteFunc(ix.Implements, func(r Relation) bool {
		_, a := ix.Defs[r.From]
		_, b := ix.Defs[r.To]
		return !a || !b
	})
	slices.SortFunc(ix.Implements, func(a, b Relation) int {
		if c := strings.Compare(a.From, b.From); c != 0 {
			return c
		}
		return strings.Compare(a.To, b.To)
	})
	ix.Implements = slices.Compact(ix.Implements)
	return ix, nil
}

// enclosers are the definitions of a document that can hold a reference:
// those with an enclosing range, excluding parameters and type parameters
// (whose ranges hold nothing memctl names) and modules (code at module
// level belongs to the file).
func enclosers(defs []Def) []Def {
	var out []Def
	for _, d := range defs {
		if d.HasEnclosing && isCaller(d) {
			out = append(out, d)
		}
	}
	return out
}

// Named reports whether a definition gets a memctl symbol and can hold a
// reference: a type, term, method or macro (not a parameter, type
// parameter, namespace or meta descriptor).
func (d Def) Named() bool { return isCaller(d) }

func isCaller(d Def) bool {
	switch d.Desc.Suffix {
	case scippb.Descriptor_Type, scippb.Descriptor_Term, scippb.Descriptor_Method, scippb.Descriptor_Macro:
		return true
	}
	return false
}

// precedingCaller is the rule for a document without any enclosing range
// (scip-go 0.1.26 writes none): a reference belongs to the nearest
// definition before it of a top-level symbol (one descriptor after the
// namespaces: a function, type, var or const; or a method of a type).
// Go's declarations do not nest, so for Go this is the declaration that
// holds the reference; references before the first belong to the file.
func precedingCaller(defs []Def) func(Range) string {
	var tops []Def
	for _, d := range defs {
		if isCaller(d) && topLevel(d.Symbol) {
			tops = append(tops, d)
		}
	}
	slices.SortStableFunc(tops, func(a, b Def) int {
		if a.Range.StartLine != b.Range.StartLine {
			return int(a.Range.StartLine - b.Range.StartLine)
		}
		return int(a.Range.StartChar - b.Range.StartChar)
	})
	return func(r Range) string {
		i, _ := slices.BinarySearchFunc(tops, r, func(d Def, r Range) int {
			if before(d.Range.StartLine, d.Range.StartChar, r.StartLine, r.StartChar) {
				return -1
			}
			return 1
		})
		if i == 0 {
			return ""
		}
		return tops[i-1].Symbol
	}
}

// topLevel: one descriptor after the namespaces, or a method of a type.
func topLevel(sym string) bool {
	s, err := ParseSymbol(sym)
	if err != nil {
		return false
	}
	_, rest, ok := split(s.Descriptors)
	if !ok {
		return false
	}
	switch len(rest) {
	case 1:
		return true
	case 2:
		return rest[0].Suffix == scippb.Descriptor_Type && rest[1].Suffix == scippb.Descriptor_Method
	}
	return false
}

// isModule reports whether a symbol names a package or module: only
// namespaces, or namespaces and a meta descriptor (scip-python's
// `module`/__init__:).
func isModule(sym string) bool {
	s, err := ParseSymbol(sym)
	if err != nil || len(s.Descriptors) == 0 {
		return false
	}
	for i, d := range s.Descriptors {
		if d.Suffix == scippb.Descriptor_Namespace {
			continue
		}
		return i > 0 && i == len(s.Descriptors)-1 && d.Suffix == scippb.Descriptor_Meta
	}
	return true
}

// innermost is the symbol of the smallest enclosing range holding r; ties
// go to the definition listed first.
func innermost(defs []Def, r Range) string {
	best := -1
	for i, d := range defs {
		if !d.Enclosing.contains(r) || d.Range == r {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		bl, bc := defs[best].Enclosing.size()
		l, c := d.Enclosing.size()
		if l < bl || l == bl && c < bc {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return defs[best].Symbol
}

// toRange decodes SCIP's [startLine, startChar, endChar] (single line) or
// [startLine, startChar, endLine, endChar].
func toRange(v []int32) (Range, bool) {
	var r Range
	switch len(v) {
	case 3:
		r = Range{v[0], v[1], v[0], v[2]}
	case 4:
		r = Range{v[0], v[1], v[2], v[3]}
	default:
		return r, false
	}
	if r.StartLine < 0 || r.StartChar < 0 || r.EndLine < r.StartLine || r.EndLine == r.StartLine && r.EndChar < r.StartChar {
		return r, false
	}
	return r, true
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
