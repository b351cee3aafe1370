package ingest

// Which syntax-only packages' declarations are needed when (extractSyntax):
// a package's declarations are parsed just before the first package whose
// extraction may read them, and let go after the last.

// syntaxBatch is how many packages extractSyntax extracts between
// parsing the declarations they need (unless a test sets
// extractor.syntaxBatch): the declarations in memory are those of the
// packages whose span meets the batch, not the tree's.
const syntaxBatch = 64

// declSpan is the range of packages (indices in extractSyntax's
// import-path order) whose extraction may read one package's
// declarations.
type declSpan struct{ first, last int }

// declSpans returns the span of every package of want: from the first to
// the last of ips whose imports reach it, directly or through the
// packages they reach (type inference follows a declaration into what its
// file imports), a package reaching itself. imports(p) lists what p's
// files import.
func declSpans(ips []string, imports func(p string) []string, want map[string]bool) map[string]declSpan {
	spans := make(map[string]declSpan, len(want))
	seen := make(map[string]int) // package → 1 + the last index whose walk met it
	var stack []string
	for i, ip := range ips {
		seen[ip] = i + 1
		stack = append(stack[:0], ip)
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if want[p] {
				sp, ok := spans[p]
				if !ok {
					sp.first = i
				}
				sp.last = i
				spans[p] = sp
			}
			for _, q := range imports(p) {
				if seen[q] != i+1 {
					seen[q] = i + 1
					stack = append(stack, q)
				}
			}
		}
	}
	return spans
}
