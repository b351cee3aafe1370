package ingest

import "slices"

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

// declSpans returns the span of every package ips reach: from the first
// to the last of ips whose imports reach it, directly or through the
// packages they reach (type inference follows a declaration into what its
// file imports), a package reaching itself. imports(p) lists what p's
// files import.
func declSpans(ips []string, imports func(p string) []string) map[string]declSpan {
	spans := make(map[string]declSpan)
	seen := make(map[string]int) // package → 1 + the last index whose walk met it
	var stack []string
	for i, ip := range ips {
		seen[ip] = i + 1
		stack = append(stack[:0], ip)
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			sp, ok := spans[p]
			if !ok {
				sp.first = i
			}
			sp.last = i
			spans[p] = sp
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

// tableSpans says when extractSyntax lets each declarations table go
// (table.release): ends[i] are the tables no package after the i-th of ips
// reaches, released once the batch holding it is merged and its
// packages' implements edges added (implementsSyntaxOf reads the tables
// a package reaches; the edges of the other tables' packages wait for
// finish, which keeps those tables and what they reach). A table no
// package of ips reaches goes at the first batch's end.
type tableSpans struct{ ends map[int][]string }

// tableReleases is extractSyntax's tableSpans (at: each package of ips,
// by its index), or nil when some package of ips that is parsed once (not twice) is reached from an earlier one:
// its table is filled only when it is extracted, and an earlier
// package's implements edges would miss it, so that every table is kept
// and every package's edges wait for finish, as before.
func (x *extractor) tableReleases(at map[string]int, twice map[string]bool, spans map[string]declSpan, imports func(p string) []string) *tableSpans {
	for p, sp := range spans {
		if i, ok := at[p]; ok && !twice[p] && sp.first < i {
			return nil
		}
	}
	// Tables of packages not extracted here whose types were read from
	// syntax (files beside a type-checked package's): finish adds their
	// edges, so they and what they reach stay.
	keep := make(map[string]bool)
	var stack []string
	for _, p := range sortedKeys(x.tables) {
		if _, ok := at[p]; ok {
			continue
		}
		t := x.tables[p]
		if slices.ContainsFunc(t.recvs(), func(tname string) bool { return x.syntaxTypes.has(SymbolKey(p, tname)) }) && !keep[p] {
			keep[p] = true
			stack = append(stack[:0], p)
			for len(stack) > 0 {
				q := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for _, r := range imports(q) {
					if !keep[r] {
						keep[r] = true
						stack = append(stack, r)
					}
				}
			}
		}
	}
	ts := &tableSpans{ends: make(map[int][]string)}
	for _, p := range sortedKeys(x.tables) {
		if keep[p] {
			continue
		}
		last := 0 // reached by none: released with the first batch
		if sp, ok := spans[p]; ok {
			last = sp.last
		}
		ts.ends[last] = append(ts.ends[last], p)
	}
	return ts
}
