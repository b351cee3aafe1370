#!/bin/sh
# std-copies.sh OUT [N]: N copies (default 3) of the Go files of
# $(go env GOROOT)/src under OUT/a, OUT/b, OUT/c…, each its own module
# (example.com/a, example.com/b, …), for the ingest scaling figures
# (BENCHMARKS.md "Ingest scaling"). testdata, vendor and hidden
# directories are left out, as `ingest go` skips them by default.
set -eu
out=${1:?usage: std-copies.sh OUT [N]}
n=${2:-3}
src=$(go env GOROOT)/src
if [ -e "$out" ]; then
	echo "std-copies.sh: $out exists; give a new directory" >&2
	exit 2
fi
mkdir -p "$out"
i=0
for name in a b c d e f g h i j k l m n o p q r s t u v w x y z; do
	[ "$i" -lt "$n" ] || break
	i=$((i + 1))
	dst="$out/$name"
	mkdir -p "$dst"
	(cd "$src" && find . -mindepth 1 \( -name testdata -o -name vendor -o -name '.*' -o -name '_*' \) -prune -o -name '*.go' -type f -print) |
		while IFS= read -r f; do
			mkdir -p "$dst/$(dirname "$f")"
			cp "$src/$f" "$dst/$f"
		done
	printf 'module example.com/%s\n\ngo %s\n' "$name" "$(go env GOVERSION | sed 's/^go//; s/^\([0-9]*\.[0-9]*\).*/\1/')" >"$dst/go.mod"
done
