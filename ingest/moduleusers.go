package ingest

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
)

// How long the type-checked packages of a tree's module are needed
// (loadTyped, releaseModule). The modules are checked one after another
// (t.Modules); a check keeps every package it checked for the checks after
// it. A module's packages are needed by its own check and by the check of
// any module that imports one: a module imports another's packages only
// when its go.mod requires it (since Go 1.17 a go.mod lists every module
// that provides a package it imports, indirect ones too) or replaces it,
// or through a workspace (go.work), where every module's packages are
// every other's. The Go standard library ("std") is imported without
// being required. A release that proves wrong costs time, not answers:
// the released packages are checked again by the module that lists them.

// neededUntil is, for each module of t (by directory), the index in
// t.Modules of the last module whose check may import its packages;
// len(t.Modules) when any may (std, a workspace, a go.mod that cannot be
// parsed). env is the go command's environment.
func neededUntil(t *tree, env []string) map[string]int {
	need := make(map[string]int, len(t.Modules))
	always := func() map[string]int {
		for _, m := range t.Modules {
			need[m.Dir] = len(t.Modules)
		}
		return need
	}
	if workspaceAbove(t.Root, env) {
		return always()
	}
	mods := make(map[string][]byte, len(t.ModFiles))
	for _, f := range t.ModFiles {
		mods[f.Rel] = f.Content
	}
	last := make(map[string]int) // module path → index of the last module whose go.mod names it
	for i, m := range t.Modules {
		name := path.Join(m.Dir, "go.mod")
		b, ok := mods[name]
		if !ok {
			// A root without a go.mod: the go command uses the one above
			// it, if any.
			name, b = goModAbove(t.Root)
			if b == nil {
				continue
			}
		}
		f, err := modfile.ParseLax(name, b, nil)
		if err != nil {
			return always()
		}
		for _, r := range f.Require {
			last[r.Mod.Path] = i
		}
		for _, r := range f.Replace {
			last[r.Old.Path] = i
		}
	}
	for i, m := range t.Modules {
		need[m.Dir] = max(i, last[m.Path])
		if m.Path == "std" {
			need[m.Dir] = len(t.Modules)
		}
	}
	return need
}

// goModAbove is the go.mod of the closest directory above root holding
// one, and its content; nil if there is none.
func goModAbove(root string) (string, []byte) {
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		name := filepath.Join(d, "go.mod")
		if b, err := os.ReadFile(name); err == nil {
			return name, b
		}
		if filepath.Dir(d) == d {
			return "", nil
		}
	}
}

// workspaceAbove reports whether a go.work in root or a directory above it
// may make the go command load the tree's modules as one workspace:
// unless GOWORK in env (its last setting, as the go command reads it) is
// "off"; any other GOWORK names one.
func workspaceAbove(root string, env []string) bool {
	gowork := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOWORK="); ok {
			gowork = v
		}
	}
	switch gowork {
	case "off":
		return false
	case "":
	default:
		return true
	}
	for d := root; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}
