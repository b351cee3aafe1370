#!/usr/bin/env bash
# `make fuzz`: run every fuzz target of the module for FUZZTIME each
# (default 30s), one after the other (Go fuzzes one target per invocation),
# and print the executions of each. New crashers land in the package's
# testdata/fuzz/<Target>/ and make the run fail.
#
#   scripts/fuzz.sh [FUZZTIME] [TARGET-REGEXP]
#   FUZZ_PARALLEL=n   workers per target (default: go's, one per core)
#
# Executions are the fuzzer's own count; the time it spends minimizing new
# inputs is not in it (capped at 5s per input with -fuzzminimizetime, since
# snapshot inputs are tens of kilobytes).
set -uo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${1:-30s}
ONLY=${2:-.}
GO=${GO:-go}
PARALLEL=()
if [[ -n "${FUZZ_PARALLEL:-}" ]]; then
	PARALLEL=(-parallel "$FUZZ_PARALLEL")
fi

logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT
summary=()
status=0
for pkg in $($GO list ./...); do
	for target in $($GO test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' | grep -E -- "$ONLY" || true); do
		log="$logdir/$target.log"
		echo "== $pkg $target ($FUZZTIME)"
		if $GO test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 5s "${PARALLEL[@]}" "$pkg" >"$log" 2>&1; then
			result=ok
		else
			result=FAIL
			status=1
			grep -v '^fuzz: elapsed' "$log" | head -40
		fi
		execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | awk '{print $2}')
		corpus=$(grep -o 'total: [0-9]*' "$log" | tail -1 | awk '{print $2}')
		summary+=("$(printf '%-6s %-40s %-26s %12s execs  corpus %s' "$result" "${pkg#github.com/memctl/memctl/}" "$target" "${execs:-0}" "${corpus:-?}")")
	done
done
echo
echo "== fuzz summary ($FUZZTIME per target)"
printf '%s\n' "${summary[@]}"
exit $status
