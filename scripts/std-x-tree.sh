#!/bin/sh
# std-x-tree.sh OUT: one copy of std's Go files (scripts/std-copies.sh,
# module example.com/a) under OUT/std and these golang.org/x modules,
# fetched through the module proxy (`go mod download`), under OUT/x/NAME:
# the "std + x/" row of BENCHMARKS.md "Ingest scaling". `ingest go OUT`
# type-checks the x/ modules when their dependencies can be downloaded.
set -eu
out=${1:?usage: std-x-tree.sh OUT}
if [ -e "$out" ]; then
	echo "std-x-tree.sh: $out exists; give a new directory" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
"$here/std-copies.sh" "$out/.std" 1
mv "$out/.std/a" "$out/std"
rmdir "$out/.std"
mkdir -p "$out/x"
for m in tools@v0.51.0 net@v0.60.0 sys@v0.49.0 text@v0.43.0 crypto@v0.58.0 mod@v0.41.0 sync@v0.24.0 \
	term@v0.47.0 time@v0.16.0 oauth2@v0.35.0 exp@v0.0.0-20250218142911-aa4b98e5adaa \
	telemetry@v0.0.0-20260924152758-ed294f943157; do
	dir=$(cd "$out" && go mod download -json "golang.org/x/$m" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	cp -r "$dir" "$out/x/${m%@*}"
done
chmod -R u+w "$out/x"
