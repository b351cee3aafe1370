#!/usr/bin/env bash
# `make fuzz`: run every fuzz target of the module for FUZZTIME each
# (default 30s). Go fuzzes one target per invocation, so targets run in turn.
# New crashers land in the package's testdata/fuzz/ and fail the run.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${1:-30s}
GO=${GO:-go}

status=0
for pkg in $($GO list ./...); do
	for target in $($GO test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
		echo "== $pkg $target ($FUZZTIME)"
		if ! $GO test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$pkg"; then
			status=1
		fi
	done
done
exit $status
