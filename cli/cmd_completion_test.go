package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// completionScript writes `memctl completion SHELL` to a file.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "memctl."+shell)
	if err := os.WriteFile(p, []byte(ok(t, "completion", shell)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func needShell(t *testing.T, shell string) string {
	t.Helper()
	p, err := exec.LookPath(shell)
	if err != nil {
		t.Skipf("%s not installed", shell)
	}
	return p
}

// Issue #27.4: the bash script completes verbs, subcommands and flags.
func TestCompletionBash(t *testing.T) {
	bash := needShell(t, "bash")
	script := completionScript(t, "bash")
	for _, tc := range []struct {
		words []string // the last is the word being completed
		want  string
	}{
		{[]string{"memctl", "sn"}, "snapshot"},
		{[]string{"memctl", "snapshot", ""}, "info verify hash get-node get-out get-in diff"},
		{[]string{"memctl", "--db", "x", "snapshot", "i"}, "info"},
		{[]string{"memctl", "rel", "a"}, "add"},
		{[]string{"memctl", "ingest", "py"}, "python"},
		{[]string{"memctl", "put-edge", "a", "calls", "b", "--we"}, "--weight"},
		{[]string{"memctl", "--d"}, "--db"},
		{[]string{"memctl", "get-out", "--rel", "calls", "x", "--include-s"}, "--include-superseded"},
		{[]string{"memctl", "completion", "--js"}, "--json"},
	} {
		cmd := exec.Command(bash, "--norc", "-c", `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _memctl; echo "${COMPREPLY[*]}"`, "bash", script)
		cmd.Args = append(cmd.Args, tc.words...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", tc.words, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("complete %q: got %q, want %q", strings.Join(tc.words, " "), got, tc.want)
		}
	}
}

// The zsh script parses, and its completion function offers what bash's
// does (run with _describe and _files stubbed: the completion system needs
// a terminal).
func TestCompletionZsh(t *testing.T) {
	zsh := needShell(t, "zsh")
	script := completionScript(t, "zsh")
	if out, err := exec.Command(zsh, "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"memctl", "snapshot", ""}, "info verify hash get-node get-out get-in diff"},
		{[]string{"memctl", "--db", "x", "rel", ""}, "list add"},
		{[]string{"memctl", "put-edge", "--"}, "--weight"}, // among the flags
		{[]string{"memctl", "get-node", "k", ""}, "FILES"},
	} {
		prog := `compdef() { : }; source "$1"; shift
_describe() { local -a a; a=("${(@P)4}"); print -r -- ${a%%:*} }
_files() { print FILES }
words=("$@"); CURRENT=${#words}; _memctl`
		cmd := exec.Command(zsh, "-f", "-c", prog, "zsh", script)
		cmd.Args = append(cmd.Args, tc.words...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", tc.words, err, out)
		}
		if got := strings.TrimSpace(string(out)); !strings.Contains(" "+got+" ", " "+tc.want+" ") {
			t.Errorf("complete %q: got %q, want %q", strings.Join(tc.words, " "), got, tc.want)
		}
	}
}

// The fish script parses and fish's own completion engine uses it.
func TestCompletionFish(t *testing.T) {
	fish := needShell(t, "fish")
	script := completionScript(t, "fish")
	for _, tc := range []struct {
		line string
		want []string
		not  []string
	}{
		{"memctl snapshot ", []string{"info\t", "verify\t", "diff\t"}, []string{"put-node"}},
		{"memctl --db x put-edge a calls b --we", []string{"--weight\t"}, nil},
		{"memctl ing", []string{"ingest\t"}, nil},
		{"memctl rel ", []string{"add\t", "list\t"}, []string{"snapshot"}},
	} {
		out, err := exec.Command(fish, "--no-config", "-c", `source $argv[1]; complete -C $argv[2]`, script, tc.line).CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", tc.line, err, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("complete %q lacks %q:\n%s", tc.line, w, out)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(string(out), w) {
				t.Errorf("complete %q offers %q:\n%s", tc.line, w, out)
			}
		}
	}
}

func TestCompletionUnknownShell(t *testing.T) {
	wantFailure(t, memctl(t, "completion", "tcsh"), ExitUsage, `unknown shell "tcsh"`)
	wantFailure(t, memctl(t, "completion"), ExitUsage, "completion needs 1 argument(s) (SHELL)")
}
