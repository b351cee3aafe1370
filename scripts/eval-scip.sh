#!/bin/sh
# eval-scip.sh: score `ingest code` and `ingest scip` against a SCIP index
# (SPEC.md §11.3; BENCHMARKS.md "Code graph against SCIP indexes").
#
#   scripts/eval-scip.sh NAME DIR INDEX [MEMCTL]
#
# builds two fresh stores under ${WORK:-/tmp/eval-scip}: NAME-code from
# `memctl ingest code DIR`, NAME-scip from `memctl ingest scip INDEX`, and
# runs `memctl eval graph DIR --scip INDEX` on each (text on stdout,
# --json beside the stores). The indexers are not installed here; see
# BENCHMARKS.md for the commands that made the indexes. Not part of make test.
set -eu
name=$1 dir=$2 index=$3 memctl=${4:-memctl}
work=${WORK:-/tmp/eval-scip}
mkdir -p "$work"
index=$(cd "$(dirname "$index")" && pwd)/$(basename "$index")
for kind in code scip; do
	db=$work/$name-$kind
	rm -rf "$db"
	"$memctl" --db "$db" init >/dev/null
	if [ $kind = code ]; then
		(cd "$dir" && "$memctl" --db "$db" ingest code .)
	else
		"$memctl" --db "$db" ingest scip "$index"
	fi
	(cd "$dir" && "$memctl" --db "$db" --json eval graph . --scip "$index" >"$db.json" &&
		"$memctl" --db "$db" eval graph . --scip "$index")
done
