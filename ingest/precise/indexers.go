package precise

// The SCIP indexers `ingest code --precise` knows (SPEC.md §9.12): one
// table row each — the languages an index covers, the variable that
// points at the executable, and the arguments that make it write an index
// of the tree (run with the tree as working directory).

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/memctl/memctl/ingest"
)

// Indexer is one SCIP indexer.
type Indexer struct {
	// Name is the executable's name on PATH and the name the flag
	// `--indexer NAME=PATH` and the payloads' `precise` field use.
	Name string
	// Langs are the languages of the documents it indexes.
	Langs []string
	// Env names the variable that points at the executable.
	Env string
	// Args are the arguments that index dir into out.
	Args func(dir, out string) []string
	// Leaves lists files (relative to dir) the indexer may create in the
	// tree when they are absent: run removes the ones it created.
	Leaves []string
}

// Indexers is the table, in ingest.Languages order.
var Indexers = []Indexer{
	{Name: "scip-go", Langs: []string{ingest.LangGo}, Env: "MEMCTL_SCIP_GO",
		// Package patterns, not an `index` subcommand.
		Args: func(dir, out string) []string { return []string{"--quiet", "-o", out, "./..."} }},
	{Name: "scip-python", Langs: []string{ingest.LangPython}, Env: "MEMCTL_SCIP_PYTHON",
		Args: func(dir, out string) []string {
			return []string{"index", "--quiet", "--project-name", filepath.Base(dir), "--output", out}
		}},
	{Name: "scip-typescript", Langs: []string{ingest.LangTypeScript, ingest.LangJavaScript}, Env: "MEMCTL_SCIP_TYPESCRIPT",
		Args: func(dir, out string) []string {
			args := []string{"index", "--no-progress-bar", "--output", out}
			if !exists(filepath.Join(dir, "tsconfig.json")) {
				// No project file (a JavaScript tree): let the indexer
				// infer one that includes every file. It writes it into
				// the tree (Leaves).
				args = append(args, "--infer-tsconfig")
			}
			return args
		},
		Leaves: []string{"tsconfig.json"}},
	{Name: "rust-analyzer", Langs: []string{ingest.LangRust}, Env: "MEMCTL_RUST_ANALYZER",
		Args: func(dir, out string) []string { return []string{"scip", ".", "--output", out} }},
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// IndexerFor is the indexer of a language (nil when none).
func IndexerFor(lang string) *Indexer {
	for i := range Indexers {
		for _, l := range Indexers[i].Langs {
			if l == lang {
				return &Indexers[i]
			}
		}
	}
	return nil
}

// Options says where the indexers are.
type Options struct {
	// Paths maps an indexer's name to its executable (`--indexer
	// NAME=PATH`); it wins over the environment and PATH.
	Paths map[string]string
	// Getenv reads the environment (nil: os.Getenv).
	Getenv func(string) string
	// LookPath finds an executable on PATH (nil: exec.LookPath; LookPathIn
	// searches a given PATH value).
	LookPath func(string) (string, error)
}

// LookPathIn finds executables in the directories of a PATH value.
func LookPathIn(pathVar string) func(string) (string, error) {
	return func(name string) (string, error) {
		for _, d := range filepath.SplitList(pathVar) {
			if d == "" || !filepath.IsAbs(d) {
				continue // as exec.LookPath, never the working directory
			}
			p := filepath.Join(d, name)
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return p, nil
			}
		}
		return "", exec.ErrNotFound
	}
}

// ParsePaths reads `NAME=PATH` flag values; a name that is not an indexer
// of the table is an error.
func ParsePaths(vals []string) (map[string]string, error) {
	out := make(map[string]string, len(vals))
	for _, v := range vals {
		name, p, ok := strings.Cut(v, "=")
		if !ok || p == "" {
			return nil, fmt.Errorf("--indexer %q: want NAME=PATH", v)
		}
		known := false
		for _, ix := range Indexers {
			known = known || ix.Name == name
		}
		if !known {
			return nil, fmt.Errorf("--indexer %q: unknown indexer %s (known: %s)", v, name, indexerNames())
		}
		out[name] = p
	}
	return out, nil
}

func indexerNames() string {
	var names []string
	for _, ix := range Indexers {
		names = append(names, ix.Name)
	}
	return strings.Join(names, ", ")
}

// ErrNotFound: the indexer is neither named by a flag or variable nor on
// PATH.
var ErrNotFound = errors.New("not found")

// Find locates an indexer's executable: the flag's path, else the
// variable's, else PATH. A flag or variable naming a missing file is an
// error naming it.
func (o Options) Find(ix *Indexer) (string, error) {
	getenv, look := o.Getenv, o.LookPath
	if getenv == nil {
		getenv = os.Getenv
	}
	if look == nil {
		look = exec.LookPath
	}
	if p := o.Paths[ix.Name]; p != "" {
		return checkExe(p, "--indexer "+ix.Name)
	}
	if p := getenv(ix.Env); p != "" {
		return checkExe(p, ix.Env)
	}
	p, err := look(ix.Name)
	if err != nil {
		return "", fmt.Errorf("%s %w (PATH, %s, --indexer %s=PATH)", ix.Name, ErrNotFound, ix.Env, ix.Name)
	}
	return p, nil
}

func checkExe(p, from string) (string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("%s=%s: %w", from, p, ErrNotFound)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s=%s: not an executable file", from, p)
	}
	return filepath.Abs(p)
}
