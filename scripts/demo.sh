#!/usr/bin/env bash
# memctl demo: `make demo` runs this with the freshly built binary.
#
# It creates a throw-away store, writes a small memory graph of a Go
# repository over several revisions (files, symbols, a decision, a
# constraint, a procedure, each write tagged with a run and a task), then
# reads it back: neighbours, a point-in-time read, a filtered diff, stats
# and an integrity check. Any failing command stops the demo with a
# non-zero exit.
set -euo pipefail

MEMCTL=${1:-bin/memctl}
case $MEMCTL in /*) ;; *) MEMCTL="$PWD/$MEMCTL" ;; esac
[ -x "$MEMCTL" ] || { echo "demo: no memctl binary at $MEMCTL (run make build)" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/memctl-demo.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export MEMCTL_DB="$WORK/store"

if [ -t 1 ]; then BOLD=$'\033[1m' PLAIN=$'\033[0m'; else BOLD= PLAIN=; fi
heading() { printf '\n%s== %s ==%s\n' "$BOLD" "$*" "$PLAIN"; }
note()    { printf '# %s\n' "$*"; }
# show prints a command line as one would type it.
show()    {
	local a line='$ memctl'
	for a in "$@"; do
		if [[ $a =~ ^[A-Za-z0-9_:./=@+-]+$ ]]; then line+=" $a"; else line+=" '$a'"; fi
	done
	printf '%s\n' "$line"
}
# run shows a command, then runs it.
run()     { show "$@"; "$MEMCTL" "$@"; }
# write shows and runs a write, and keeps the revision it committed in REV.
write()   {
	local out
	show "$@"
	out=$("$MEMCTL" "$@")
	printf '%s\n' "$out"
	REV=${out#rev }
	REV=${REV%% *}
}

heading "1. A new store"
run init

heading "2. Run 1, task index: files, symbols and how they relate"
note "One batch = one transaction = one revision (all or nothing)."
INDEX_OPS=$(cat <<'JSONL'
{"op":"put_node","key":"file:lmdbstore/store.go","payload":{"lang":"go","lines":612}}
{"op":"put_node","key":"file:cli/app.go","payload":{"lang":"go","lines":140}}
{"op":"put_node","key":"sym:lmdbstore.Open","type":"func"}
{"op":"put_node","key":"sym:lmdbstore.Store.Update","type":"method"}
{"op":"put_node","key":"sym:cli.Run","type":"func"}
{"op":"put_edge","src":"file:lmdbstore/store.go","rel":"defines","dst":"sym:lmdbstore.Open"}
{"op":"put_edge","src":"file:lmdbstore/store.go","rel":"defines","dst":"sym:lmdbstore.Store.Update"}
{"op":"put_edge","src":"file:cli/app.go","rel":"defines","dst":"sym:cli.Run"}
{"op":"put_edge","src":"sym:cli.Run","rel":"calls","dst":"sym:lmdbstore.Open","payload":{"line":31}}
{"op":"put_edge","src":"file:cli/app.go","rel":"imports","dst":"file:lmdbstore/store.go"}
JSONL
)
printf "\$ memctl batch --run run-1 --task index <<'JSONL'\n%s\nJSONL\n" "$INDEX_OPS"
out=$("$MEMCTL" batch --run run-1 --task index <<<"$INDEX_OPS")
printf '%s\n' "$out"
INDEXED=${out#rev }
INDEXED=${INDEXED%% *}

heading "3. Run 1, task review: a decision, a constraint, a procedure"
write put-kv repo decisions errors '{"rule":"wrap with %w; typed errors at boundaries"}' --run run-1 --task review
write put-kv repo constraints lmdb-values '{"rule":"never store a zero-length value"}' --run run-1 --task review
write put-kv repo procedures test '{"cmd":"make test"}' --run run-1 --task review
write put-node decision:errors --payload '{"summary":"typed errors at boundaries"}' --run run-1 --task review
write put-edge decision:errors decided_for file:lmdbstore/store.go --run run-1 --task review
write put-node constraint:lmdb-values --payload '{"summary":"no empty LMDB values"}' --run run-1 --task review
write put-edge constraint:lmdb-values constrains sym:lmdbstore.Store.Update --run run-1 --task review

heading "4. Run 2, task refactor: the code moves on"
BEFORE_REFACTOR=$REV
write put-node sym:lmdbstore.Init --type func --run run-2 --task refactor
write put-edge file:lmdbstore/store.go defines sym:lmdbstore.Init --run run-2 --task refactor
write put-edge sym:cli.Run calls sym:lmdbstore.Init --weight 0.5 --run run-2 --task refactor
write del-edge sym:cli.Run calls sym:lmdbstore.Open --run run-2 --task refactor
write put-kv repo decisions errors '{"rule":"wrap with %w; typed errors; no panics"}' --run run-2 --task refactor

heading "5. What is related to this file or symbol?"
run get-out file:lmdbstore/store.go
run get-in sym:lmdbstore.Store.Update
run get-in file:lmdbstore/store.go --rel decided_for
run --json get-out sym:cli.Run

heading "6. Point-in-time reads: the same questions before the refactor"
note "revision $BEFORE_REFACTOR is the last one before run 2"
run get-out sym:cli.Run --at-rev "$BEFORE_REFACTOR"
run get-kv repo decisions errors --at-rev "$BEFORE_REFACTOR"
run get-kv repo decisions errors

heading "7. What changed since the last task or run?"
run diff-since "$INDEXED" --task review
run diff-since "$BEFORE_REFACTOR" --run run-2

heading "8. Policy memory"
run list-kv repo decisions
run list-kv repo constraints
run list-kv repo procedures

heading "9. Relations"
run rel list

heading "10. Re-asserting is free; secrets never stored"
note "the same decision again, spelled differently: no change, no revision"
write put-kv repo decisions errors '{ "rule" : "wrap with %w; typed errors; no panics" }' --run run-3 --task check
note "a credential pasted from a terminal is redacted before anything is written"
write put-kv repo procedures deploy '{"cmd":"git push https://ci:ghp_R8kq2ZtW7vN3xLp9sQm4Yb6Hc1Fd5Gj0Ke2A@github.com/o/r"}' --run run-3 --task check
run get-kv repo procedures deploy

heading "10b. Memory that goes stale: supersede, contradict, valid time"
note "a newer decision replaces the old one: one revision, the old one becomes history"
write put-node decision:errors-v2 --payload '{"summary":"typed errors, wrapped once at the boundary"}' --run run-3 --task revise
write put-edge decision:errors-v2 decided_for file:lmdbstore/store.go --run run-3 --task revise
BEFORE_SUPERSEDE=$REV
write supersede decision:errors decision:errors-v2 --run run-3 --task revise
run get-node decision:errors
run get-in file:lmdbstore/store.go --rel decided_for
run get-in file:lmdbstore/store.go --rel decided_for --include-superseded
note "at a revision before the supersede, the old decision is still current"
run get-in file:lmdbstore/store.go --rel decided_for --at-rev "$BEFORE_SUPERSEDE"
note "two current decisions that disagree are flagged on every read until one supersedes the other"
write put-node decision:panics-ok --payload '{"summary":"panics are fine in tests"}' --valid-until 2030-01-01T00:00:00Z --run run-3 --task revise
write put-edge decision:panics-ok contradicts decision:errors-v2 --run run-3 --task revise
run get-node decision:errors-v2
note "valid time: after 2030 the contradicting decision has expired"
run get-node decision:errors-v2 --valid-at 2031-01-01T00:00:00Z

# --- Extension point: snapshot export, ingest and engines -----------------
# Later sections (ingest a repository, export a CSR snapshot, activate) go
# here, numbered from 11, using the store in $MEMCTL_DB. Keep stats and
# check last: they summarise everything the demo wrote.
# ---------------------------------------------------------------------------

heading "Stats"
run stats

heading "Integrity check"
run check

printf '\ndemo: ok\n'

# ===========================================================================
# Ingest block (owner: ingest). Appended after the store demo, with a store
# of its own: ingest this repository, export a snapshot, ask the engines
# about one of its files.
# ===========================================================================
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export MEMCTL_DB="$WORK/code"
DEMO_FILE=file:lmdbstore/store.go
DEMO_SYMBOL=sym:github.com/memctl/memctl/lmdbstore.Open

heading "11. Ingest this repository: Go packages, files, symbols"
run init
note "Type-checked when the go command can load the module, syntax-only otherwise."
run ingest go "$REPO" --run demo --task ingest
note "A second ingest of an unchanged tree writes nothing."
run ingest go "$REPO" --run demo --task ingest
if git -C "$REPO" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	heading "12. Ingest its git history: files changed together"
	run ingest git "$REPO" --run demo --task history
	run get-node "$DEMO_FILE"
else
	note "(not a git work tree: ingest git skipped)"
fi

heading "13. What is around $DEMO_FILE?"
run get-out "$DEMO_FILE" --rel imports
run export --out "$WORK/code.snap"
note "Spreading activation from the file: its symbols, package, neighbours."
run activate --snapshot "$WORK/code.snap" --top 12 "$DEMO_FILE"
note "Impact on the file: the tests that exercise it and the files that change with it."
run impact --snapshot "$WORK/code.snap" --top 10 --depth 1 --rel tests,co_changed "$DEMO_FILE"
note "Impact on one of its symbols: who calls or tests it, up to two hops away."
run impact --snapshot "$WORK/code.snap" --top 10 --depth 2 --rel calls,tests "$DEMO_SYMBOL"

heading "14. What applies here? One call, within a token budget"
note "A decision recorded for every file under lmdbstore/ (applies_to is a path glob)."
run put-kv repo decisions lmdbstore-errors '{"text":"wrap store errors with a keyspace and key","applies_to":["lmdbstore/**"]}' --run demo --task review
note "A constraint attached to the lmdbstore directory (a node and a constrains edge)."
run put-node constraint:store-cgo --payload '{"text":"only lmdbstore may use cgo"}' --run demo --task review
run put-edge constraint:store-cgo constrains dir:lmdbstore --run demo --task review
note "Policies that apply, related code, what changed and what was tried: no export needed."
run context lmdbstore/store.go --budget 500
note "Neither applies to a file outside lmdbstore/."
run context cli/app.go --budget 120
run check

heading "15. Give the space back: a dense copy, history included"
note "Like SQLite's VACUUM INTO: the same store (every revision, the log) in full pages."
run vacuum --to "$WORK/vacuumed"
run --db "$WORK/vacuumed" check
run --db "$WORK/vacuumed" get-out "$DEMO_FILE" --rel imports

heading "16. Memory that keeps up: edits without a manual ingest, decisions that follow the code"
note "A small Python project in git; the store follows the tree it ingested."
TREE="$WORK/shop"
mkdir -p "$TREE/shop"
printf '' >"$TREE/shop/__init__.py"
printf 'def total(items):\n    return sum(i.price for i in items)\n' >"$TREE/shop/cart.py"
git -C "$TREE" init -q -b main
git -C "$TREE" add -A
git -C "$TREE" -c user.name=demo -c user.email=demo@example.com commit -q -m "cart"
export MEMCTL_DB="$WORK/shop-store"
run init
run ingest python "$TREE" --run demo --task ingest
run put-node decision:money --payload '{"text":"amounts are integers in cents"}' --run demo --task review
run put-edge decision:money decided_for file:shop/cart.py --run demo --task review
note "An agent writes a new caller; no ingest is run."
printf 'from shop.cart import total\n\n\ndef checkout(items):\n    return total(items)\n' >"$TREE/shop/pay.py"
note "--no-refresh answers from memory as it is, and says what it does not see (stderr):"
run impact --no-refresh sym:py:shop.cart.total --top 5
note "By default the answer first re-reads the changed file (one revision), then answers:"
run impact sym:py:shop.cart.total --top 5
note "The file is renamed with git; the decision moves with it, in the refresh's revision."
git -C "$TREE" mv shop/cart.py shop/basket.py
sed -i 's/shop.cart/shop.basket/' "$TREE/shop/pay.py"
run context shop/basket.py --budget 200
run get-out decision:money
note "The move is in the history (memctl/moves), and nothing is orphaned:"
run orphans
run check

printf '\ndemo (ingest): ok\n'
