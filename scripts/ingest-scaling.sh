#!/bin/sh
# ingest-scaling.sh [-n REPS] TREE BIN...: the ingest scaling figures
# (BENCHMARKS.md "Ingest scaling"). For each repetition, each memctl
# binary in turn (so that the machine's load falls on all of them alike)
# runs `memctl --db D --no-sync ingest go TREE` into a new store under
# /usr/bin/time -v, and one line is printed: binary, load average, wall,
# CPU user+sys, peak RSS, files, nodes, edges and the store's logical
# snapshot hash (`export --logical --no-pagerank`, `snapshot hash`).
# Trees: a repository, $(go env GOROOT)/src, scripts/std-copies.sh's.
set -eu
reps=1
if [ "${1:-}" = "-n" ]; then
	reps=$2
	shift 2
fi
tree=${1:?usage: ingest-scaling.sh [-n REPS] TREE BIN...}
shift
[ $# -gt 0 ] || { echo "ingest-scaling.sh: name at least one memctl binary" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
field() { grep "$1" "$work/time" | awk '{print $NF}'; }
i=0
while [ "$i" -lt "$reps" ]; do
	i=$((i + 1))
	for bin in "$@"; do
		db=$work/db
		rm -rf "$db" "$work/snap"
		"$bin" --db "$db" init >/dev/null
		load=$(cut -d' ' -f1 /proc/loadavg)
		if ! /usr/bin/time -v -o "$work/time" "$bin" --db "$db" --no-sync ingest go "$tree" >"$work/out" 2>"$work/err"; then
			echo "$bin: ingest failed:" >&2
			tail -3 "$work/err" >&2
			continue
		fi
		summary=$(grep "^ingest go " "$work/out" | head -1)
		files=$(echo "$summary" | sed -n 's/.*: \([0-9]*\) files,.*/\1/p')
		nodes=$(echo "$summary" | sed -n 's/.*, \([0-9]*\) nodes, \([0-9]*\) edges.*/\1/p' | head -1)
		edges=$(echo "$summary" | sed -n 's/.*, \([0-9]*\) nodes, \([0-9]*\) edges.*/\2/p' | head -1)
		"$bin" --db "$db" export --logical --no-pagerank --out "$work/snap" >/dev/null
		hash=$("$bin" snapshot hash "$work/snap" | cut -c1-16)
		cpu=$(echo "$(field 'User time') + $(field 'System time')" | bc)
		rss=$(echo "scale=2; $(field 'Maximum resident') / 1048576" | bc)
		echo "$bin load=$load wall=$(field 'Elapsed (wall') cpu=${cpu}s rss=${rss}GB files=$files nodes=$nodes edges=$edges hash=$hash"
	done
done
