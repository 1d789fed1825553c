#!/usr/bin/env bash
# docs/ARCHITECTURE.md says what each file of ring/ owns. This check keeps
# its tables and the tree in step: every .c and .h under ring/*/ must be
# named in a table row (`ring/core/wire.{c,h}`, `ring/core/bytes.h`, ...),
# and every file a row names must exist.
# Usage: test/house/architecture.sh [ROOT]
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
doc=docs/ARCHITECTURE.md
[ -f "$doc" ] || { echo "architecture: no $doc" >&2; exit 2; }
fail=0

# The paths the tables' first column names, {c,h} expanded.
named=$(grep '^| `ring/' "$doc" | cut -d'|' -f2 | grep -o '`ring/[^`]*`' | tr -d '`' |
	sed -E 's/^(.*)\.\{c,h\}$/\1.c\n\1.h/')
[ -n "$named" ] || { echo "architecture: $doc has no table rows naming ring/ files" >&2; exit 2; }

shopt -s nullglob
n=0
for f in ring/*/*.[ch]; do
	n=$((n + 1))
	grep -qxF "$f" <<<"$named" || { echo "architecture: $f is in no table of $doc" >&2; fail=1; }
done
while IFS= read -r f; do
	[ -f "$f" ] || { echo "architecture: $doc names $f, which does not exist" >&2; fail=1; }
done <<<"$named"
[ "$fail" = 0 ] && echo "architecture: all $n files of ring/ are in $doc's tables, and every row's file exists"
exit "$fail"
