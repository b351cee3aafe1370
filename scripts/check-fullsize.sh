#!/usr/bin/env bash
# check-fullsize.sh FULLSIZE PKGS: make test's race pass runs some tests
# scaled down or not at all (they check raceEnabled, or need
# MEMCTL_INGEST_STD); its non-race pass runs exactly the tests named in
# FULLSIZE (a|b|c, the Makefile's list) in the packages PKGS (./a/ ./b/) at
# full size. Fails, naming them, if a test that checks either is not in the
# list or not in those packages, or a name in the list is no test.
set -euo pipefail
cd "$(dirname "$0")/.."
listed=$(tr '|' '\n' <<<"$1" | sort -u)
tests=$( (git ls-files '*_test.go' 2>/dev/null || find . -name '*_test.go' -not -path './.git/*' | sed 's|^\./||') | grep -v '^bench/')
# Test and Fuzz functions whose body (not a comment) checks either.
found=$(for f in $tests; do
	awk -v dir="./$(dirname "$f")/" '/^func (Test|Fuzz)[A-Za-z0-9_]*\(/ { name = $2; sub(/\(.*/, "", name) }
	     /^[ \t]*\/\// { next }
	     /raceEnabled|MEMCTL_INGEST_STD|pageDamageTrials\(\)/ { if (name != "" && name != "TestMain") print name, dir }' "$f"
done | sort -u)
needs=$(cut -d' ' -f1 <<<"$found" | sort -u)
outside=$(while read -r name dir; do
	[ -z "$name" ] || [[ " $2 " == *" $dir "* ]] || echo "$name ($dir)"
done <<<"$found")
defined=$(for f in $tests; do sed -n 's/^func \(\(Test\|Fuzz\)[A-Za-z0-9_]*\)(.*/\1/p' "$f"; done | sort -u)
missing=$(comm -23 <(echo "$needs") <(echo "$listed"))
stale=$(comm -23 <(echo "$listed") <(echo "$defined"))
if [ -n "$missing" ] || [ -n "$stale" ] || [ -n "$outside" ]; then
	[ -z "$missing" ] || echo "check-fullsize: not in the Makefile's FULLSIZE_TESTS, so never run at full size:" $missing
	[ -z "$stale" ] || echo "check-fullsize: in FULLSIZE_TESTS but no such test:" $stale
	[ -z "$outside" ] || echo "check-fullsize: in a package FULLSIZE_PKGS leaves out:" $outside
	exit 1
fi
