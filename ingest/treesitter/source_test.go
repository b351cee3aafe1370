package treesitter

import "testing"

func TestLangOf(t *testing.T) {
	for name, want := range map[string]string{
		"main.go": "go", "pkg/x/a_test.go": "go", "src/flask/app.py": "python",
		"web/a.ts": "typescript", "web/a.tsx": "typescript", "a.mts": "typescript", "d/a.d.ts": "typescript",
		"index.js": "javascript", "a.cjs": "javascript", "a.mjs": "javascript", "a.jsx": "javascript",
		"src/lib.rs":     "rust",
		"dist/ky.min.js": "", "README.md": "", "go.mod": "", "package.json": "", "Makefile": "", "a.go.txt": "",
	} {
		if got := LangOf(name); got != want {
			t.Errorf("LangOf(%q) = %q, want %q", name, got, want)
		}
	}
}
