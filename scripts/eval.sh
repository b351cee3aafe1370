#!/usr/bin/env bash
# memctl answer quality: `make eval` runs this with the freshly built
# binary and prints the tables BENCHMARKS.md "Answer quality" reports.
#
# Repositories: etcd-io/bbolt and spf13/cobra (Go) from the git bundles in
# shared/eval-repos (the nearest ancestor directory that has one, or
# $MEMCTL_EVAL_REPOS); sindresorhus/ky (TypeScript) and pallets/flask
# (Python), each at a pinned commit, from $MEMCTL_EVAL_SOURCES/NAME (a git
# repository or NAME.bundle; default /tmp/repos) or else cloned from
# GitHub; this repository at HEAD; and net/http from the Go toolchain's
# source (impact only: it has no history here). Windows: bbolt's
# selection window (--skip 30 --commits 100, where the defaults were
# chosen), then the newest 30 qualifying commits of bbolt, cobra, ky, flask
# and this repository, each with every baseline in the same run and
# bootstrap intervals over commits (SPEC.md §11).
# Clones and eval stores are kept in $EVAL_WORK (default
# ${TMPDIR:-/tmp}/memctl-eval), so a second run ingests only what differs.
# Takes several minutes on two cores the first time (21 minutes at a load
# of about 15; less when the eval stores are kept).
set -euo pipefail

MEMCTL=${1:-bin/memctl}
case $MEMCTL in /*) ;; *) MEMCTL="$PWD/$MEMCTL" ;; esac
[ -x "$MEMCTL" ] || { echo "eval: no memctl binary at $MEMCTL (run make build)" >&2; exit 1; }
ROOT=$(git rev-parse --show-toplevel)
WORK=${EVAL_WORK:-${TMPDIR:-/tmp}/memctl-eval}
mkdir -p "$WORK"

bundles=${MEMCTL_EVAL_REPOS:-}
if [ -z "$bundles" ]; then
	d=$ROOT
	while [ "$d" != / ]; do
		if [ -d "$d/shared/eval-repos" ]; then bundles=$d/shared/eval-repos; break; fi
		d=$(dirname "$d")
	done
fi
[ -n "$bundles" ] || { echo "eval: no shared/eval-repos above $ROOT; set MEMCTL_EVAL_REPOS to the directory of bbolt.bundle and cobra.bundle" >&2; exit 1; }

# clone SRC NAME: a fresh clone of SRC at its HEAD in $WORK/NAME (the
# eval store beside it, $WORK/NAME.store, is kept).
clone() {
	rm -rf "$WORK/$2"
	git -c advice.detachedHead=false clone -q "$1" "$WORK/$2"
}
clone "$bundles/bbolt.bundle" bbolt
clone "$bundles/cobra.bundle" cobra
clone "$ROOT" self

# pinned NAME URL COMMIT: a clone of the repository at COMMIT, from
# $MEMCTL_EVAL_SOURCES when it has it, else from URL.
sources=${MEMCTL_EVAL_SOURCES:-/tmp/repos}
pinned() {
	local src=$2
	if [ -e "$sources/$1.bundle" ]; then src=$sources/$1.bundle; elif [ -d "$sources/$1/.git" ]; then src=$sources/$1; fi
	clone "$src" "$1" || { echo "eval: cannot clone $1 from $src (set MEMCTL_EVAL_SOURCES to a directory holding $1 or $1.bundle)" >&2; exit 1; }
	git -C "$WORK/$1" -c advice.detachedHead=false checkout -q "$3" ||
		{ echo "eval: $src has no commit $3" >&2; exit 1; }
}
pinned ky https://github.com/sindresorhus/ky 3419113b48e034fdcf8fa6bd3be3da7b3d0d758f
pinned flask https://github.com/pallets/flask 2ac89889f4cc330eabd50f295dcef02828522c69

predictors="--predictor activate --predictor activate-graph --predictor cochange --predictor samedir --predictor pagerank --predictor lexical --predictor context-2k --predictor context-8k"
cochange() { # NAME [flags]
	local name=$1 store=$1; shift
	[ "${1:-}" = --skip ] && store=$name-selection
	printf '\n== eval cochange %s %s ==\n' "$name" "$*"
	# shellcheck disable=SC2086
	"$MEMCTL" eval cochange "$WORK/$name" --work "$WORK/$store.store" $predictors "$@"
}
cochange bbolt --skip 30 --commits 100
cochange bbolt
cochange cobra
cochange ky
cochange flask
cochange self

for name in bbolt cobra self; do
	printf '\n== eval impact %s ==\n' "$name"
	"$MEMCTL" eval impact "$WORK/$name"
done
nethttp=$(go env GOROOT)/src/net/http
if [ -d "$nethttp" ]; then
	printf '\n== eval impact net/http ==\n'
	"$MEMCTL" eval impact "$nethttp"
fi
