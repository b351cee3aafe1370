package contextpack

import (
	"path"
	"strings"
)

// matchGlob reports whether the repository path p (slash separated,
// relative, "." for the root) matches pattern: path.Match per segment, and
// a "**" segment matches any number of segments, none included, so
// "lmdbstore/**" covers the directory lmdbstore and everything below it,
// "**/*_test.go" every test file. A malformed pattern matches nothing.
func matchGlob(pattern, p string) bool {
	pattern = strings.Trim(pattern, "/")
	if pattern == "" {
		return false
	}
	var ps []string
	if p != "." && p != "" {
		ps = strings.Split(p, "/")
	}
	return matchSegments(strings.Split(pattern, "/"), ps)
}

func matchSegments(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 1 && pat[1] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 1 {
				return true
			}
			for i := 0; i <= len(segs); i++ {
				if matchSegments(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		ok, err := path.Match(pat[0], segs[0])
		if err != nil || !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
