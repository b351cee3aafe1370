package scip

// SCIP symbols (scip.proto, "Symbol"): `<scheme> <manager> <package name>
// <version> <descriptor>...`, each descriptor a name and a suffix: `/`
// namespace, `#` type, `.` term, `(<disambiguator>).` method, `[..]` type
// parameter, `(..)` parameter, `:` meta, `!` macro. SPEC.md §9.7 fixes how
// they map onto memctl's keys; symbolKey is that table.

import (
	"strings"

	scippb "github.com/sourcegraph/scip/bindings/go/scip"
)

// Descriptor is one descriptor of a symbol.
type Descriptor struct {
	Name   string
	Suffix scippb.Descriptor_Suffix
}

// IsFunc reports whether a descriptor names a function or method (SCIP
// writes both with the method suffix).
func (d Descriptor) IsFunc() bool { return d.Suffix == scippb.Descriptor_Method }

// Symbol is a parsed global symbol.
type Symbol struct {
	Scheme, Manager, Package, Version string
	Descriptors                       []Descriptor
}

// ParseSymbol parses a global SCIP symbol.
func ParseSymbol(sym string) (Symbol, error) {
	s, err := scippb.ParseSymbol(sym)
	if err != nil {
		return Symbol{}, err
	}
	out := Symbol{Scheme: s.Scheme}
	if p := s.Package; p != nil {
		out.Manager, out.Package, out.Version = p.Manager, p.Name, p.Version
	}
	for _, d := range s.Descriptors {
		out.Descriptors = append(out.Descriptors, Descriptor{Name: d.Name, Suffix: d.Suffix})
	}
	return out, nil
}

// LastDescriptor is the descriptor that says what a symbol is.
func LastDescriptor(sym string) (Descriptor, error) {
	s, err := ParseSymbol(sym)
	if err != nil {
		return Descriptor{}, err
	}
	if len(s.Descriptors) == 0 {
		return Descriptor{}, &symbolError{sym}
	}
	return s.Descriptors[len(s.Descriptors)-1], nil
}

type symbolError struct{ sym string }

func (e *symbolError) Error() string { return "SCIP symbol without descriptors: " + e.sym }

// langTags give the key tag of a language by indexer scheme; Go (scip-go)
// has none, as in `ingest go`.
var langTags = map[string]string{"scip-go": "", "scip-python": "py", "scip-typescript": "ts", "rust-analyzer": "rs"}

// split divides descriptors into the leading namespaces (the package or
// module path) and the rest (types, terms, methods, macros); ok is false
// for symbols memctl gives no node: parameters, type parameters, locals,
// meta descriptors, and namespaces inside types.
func split(ds []Descriptor) (ns, rest []Descriptor, ok bool) {
	i := 0
	for i < len(ds) && ds[i].Suffix == scippb.Descriptor_Namespace {
		i++
	}
	for _, d := range ds[i:] {
		switch d.Suffix {
		case scippb.Descriptor_Type, scippb.Descriptor_Term, scippb.Descriptor_Method, scippb.Descriptor_Macro:
		default:
			return nil, nil, false
		}
	}
	return ds[:i], ds[i:], true
}

// keyOf maps a symbol onto a memctl key (SPEC.md §9.7); lang is the
// language of the defining document ("" unknown). ok is false for symbols
// with no node.
//
//	Go:          sym:<import path>.<Name>[.<Member>]   pkg:<import path>
//	Python:      sym:py:<module>.<Name>[.<Member>]     pkg:py:<module>
//	TypeScript:  sym:ts:<path>#<Name>[.<Member>]       (namespaces are the file path)
//	other:       sym:<tag>:<ns/ns>#<Name>[.<Member>]   pkg:<tag>:<ns/ns>
func keyOf(s Symbol, lang string) (key string, isPkg, ok bool) {
	ns, rest, ok := split(s.Descriptors)
	if !ok || len(ns) == 0 && len(rest) == 0 {
		return "", false, false
	}
	tag, known := langTags[s.Scheme]
	if !known {
		tag = strings.ToLower(s.Scheme)
	}
	if s.Scheme == "scip-typescript" && isJS(lang) {
		tag = "js"
	}
	names := func(ds []Descriptor) []string {
		out := make([]string, len(ds))
		for i, d := range ds {
			out[i] = d.Name
		}
		return out
	}
	nsSep, restSep := "/", "#"
	if s.Scheme == "scip-go" || s.Scheme == "scip-python" {
		if s.Scheme == "scip-python" {
			nsSep = "."
		}
		restSep = "."
	}
	prefix := "sym:"
	if tag != "" {
		prefix += tag + ":"
	}
	path := strings.Join(names(ns), nsSep)
	if len(rest) == 0 {
		if tag == "" {
			return "pkg:" + path, true, true
		}
		return "pkg:" + tag + ":" + path, true, true
	}
	member := strings.Join(names(rest), ".")
	if path == "" {
		return prefix + member, false, true
	}
	return prefix + path + restSep + member, false, true
}

func isJS(lang string) bool {
	l := strings.ToLower(lang)
	return l == "javascript" || l == "javascriptreact"
}

// Members divides a global symbol into its namespaces (the package or
// module path) and its member path (types, terms, methods, macros); ok is
// false for symbols that get no node (§9.11).
func Members(sym string) (ns, rest []Descriptor, ok bool) {
	s, err := ParseSymbol(sym)
	if err != nil {
		return nil, nil, false
	}
	ns, rest, ok = split(s.Descriptors)
	return ns, rest, ok && len(rest) > 0
}

// KeyOf is the key `ingest scip` gives a symbol (§9.11); lang is the
// language of its defining document.
func KeyOf(sym, lang string) (key string, ok bool) {
	s, err := ParseSymbol(sym)
	if err != nil {
		return "", false
	}
	key, isPkg, ok := keyOf(s, lang)
	return key, ok && !isPkg
}
