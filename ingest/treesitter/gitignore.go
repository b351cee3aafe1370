package treesitter

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// This file matches paths against .gitignore files as git does
// (gitignore(5)): blank lines and lines starting with "#" are skipped,
// trailing unescaped spaces are dropped, "!" negates, a trailing "/"
// matches directories only, a pattern with a "/" at its start or middle is
// anchored to its file's directory and any other matches a name at any
// depth, "*" and "?" and "[…]" never match "/", and "**" matches across
// directories in "**/x", "x/**" and "x/**/y". The last pattern that
// matches decides, files deeper in the tree after the ones above them;
// the walk does not enter an ignored directory, so (as in git) nothing
// below it can be re-included. Tests compare it with git itself.

// ignorePattern is one compiled line of an ignore file.
type ignorePattern struct {
	re      *regexp.Regexp
	negate  bool
	dirOnly bool
	// base is the directory of the ignore file, relative to the matcher's
	// root ("" for the root itself).
	base string
}

// ignoreMatcher holds the patterns of the ignore files read so far, in
// precedence order (later patterns win).
type ignoreMatcher struct {
	patterns []ignorePattern
}

// parseIgnore compiles the lines of an ignore file whose directory is
// base (slash-separated, relative to the matcher's root, "" for the root).
func parseIgnore(data []byte, base string) []ignorePattern {
	var out []ignorePattern
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if p, ok := compileIgnoreLine(sc.Text(), base); ok {
			out = append(out, p)
		}
	}
	return out
}

func compileIgnoreLine(line, base string) (ignorePattern, bool) {
	line = strings.TrimSuffix(line, "\r")
	if line == "" || line[0] == '#' {
		return ignorePattern{}, false
	}
	// Trailing spaces are dropped unless escaped with a backslash.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
		line = line[:len(line)-1]
	}
	p := ignorePattern{base: base}
	if line[0] == '!' {
		p.negate = true
		line = line[1:]
	} else if strings.HasPrefix(line, "\\!") || strings.HasPrefix(line, "\\#") {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return ignorePattern{}, false
	}
	anchored := strings.Contains(line, "/")
	line = strings.TrimPrefix(line, "/")
	expr := globToRegexp(line)
	if !anchored {
		expr = "(?:.*/)?" + expr
	}
	re, err := regexp.Compile("^" + expr + "$")
	if err != nil {
		return ignorePattern{}, false // git ignores what it cannot parse too
	}
	p.re = re
	return p, true
}

// globToRegexp translates a gitignore glob to a regular expression over
// slash-separated paths.
func globToRegexp(g string) string {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch {
		case c == '*' && strings.HasPrefix(g[i:], "**") && (i == 0 || g[i-1] == '/') && (i+2 == len(g) || g[i+2] == '/'):
			// "**" as a whole path component.
			switch {
			case i+2 == len(g) && i == 0: // "**"
				b.WriteString(".*")
			case i+2 == len(g): // "x/**": everything inside
				b.WriteString(".*")
			default: // "**/": zero or more directories
				b.WriteString("(?:.*/)?")
				i += 2 // skip "*/"
				continue
			}
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			end := strings.IndexByte(g[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			// A "]" right after "[" or "[!" is part of the class.
			j := i + 1
			if j < len(g) && (g[j] == '!' || g[j] == '^') {
				j++
			}
			if j < len(g) && g[j] == ']' {
				j++
			}
			k := strings.IndexByte(g[j:], ']')
			if k < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := g[i+1 : j+k]
			b.WriteByte('[')
			if class[0] == '!' || class[0] == '^' {
				b.WriteByte('^')
				class = class[1:]
			}
			for _, r := range class {
				if r == '\\' || r == '[' || r == ']' || r == '^' {
					b.WriteByte('\\')
				}
				b.WriteRune(r)
			}
			b.WriteByte(']')
			i = j + k
		case c == '\\' && i+1 < len(g):
			i++
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		default:
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		}
	}
	return b.String()
}

// add appends the patterns of one ignore file.
func (m *ignoreMatcher) add(ps []ignorePattern) { m.patterns = append(m.patterns, ps...) }

// ignored reports whether the path rel (slash-separated, relative to the
// matcher's root) is ignored; isDir says whether it is a directory.
func (m *ignoreMatcher) ignored(rel string, isDir bool) bool {
	for i := len(m.patterns) - 1; i >= 0; i-- {
		p := &m.patterns[i]
		if p.dirOnly && !isDir {
			continue
		}
		sub := rel
		if p.base != "" {
			var ok bool
			if sub, ok = strings.CutPrefix(rel, p.base+"/"); !ok {
				continue
			}
		}
		if p.re.MatchString(sub) {
			return !p.negate
		}
	}
	return false
}

// gitContext finds the git work tree above the absolute directory dir: its
// root, and dir relative to it ("" when dir is the root). ok is false
// outside a work tree.
func gitContext(dir string) (root, rel string, ok bool) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			r, _ := filepath.Rel(d, dir)
			r = filepath.ToSlash(r)
			if r == "." {
				r = ""
			}
			return d, r, true
		}
		if filepath.Dir(d) == d {
			return "", "", false
		}
	}
}

// newIgnoreMatcher reads the ignore files that apply to the walk of the
// absolute directory dir before it starts: the work tree's
// .git/info/exclude and the .gitignore files of dir's ancestors inside
// the work tree. It returns the matcher and the prefix ("" or "a/b/") that
// turns a path relative to dir into one relative to the matcher's root.
func newIgnoreMatcher(dir string) (*ignoreMatcher, string) {
	m := &ignoreMatcher{}
	root, rel, ok := gitContext(dir)
	if !ok {
		return m, ""
	}
	if b, err := os.ReadFile(filepath.Join(root, ".git", "info", "exclude")); err == nil {
		m.add(parseIgnore(b, ""))
	}
	if rel == "" {
		return m, ""
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		base := path.Join(parts[:i]...)
		if b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(base), ".gitignore")); err == nil {
			m.add(parseIgnore(b, base))
		}
	}
	return m, rel + "/"
}
