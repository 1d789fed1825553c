#!/usr/bin/env bash
# The fuzzers' seeds are of the code as it is (test/fuzz/seeds.c): every
# datagram of test/fuzz/corpus/datagram decodes at this wire version and
# every message type has one, every control line parses and every command
# and inject has one, every config seed loads and every key is set in one;
# and the datagram corpus is what the generator writes now, so that a seed
# is changed in seeds.c, not by hand (a regression input becomes a
# scenario there). Fails, saying what drifted; `make fuzz-seeds` writes the
# datagram seeds again.
# Usage: test/house/seeds.sh   (after make build/seeds)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
seeds=build/seeds
[ -x "$seeds" ] || { echo "seeds: build $seeds first (make build/seeds)" >&2; exit 2; }
tmp=$(mktemp -d /tmp/ring-seeds.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
"$seeds" --check test/fuzz/corpus conf || fail=1
"$seeds" "$tmp" >/dev/null || exit 2
drift=$(diff -rq "$tmp" test/fuzz/corpus/datagram 2>&1 | sed "s|$tmp|(what seeds.c makes)|")
if [ -n "$drift" ]; then
	echo "$drift" >&2
	echo "seeds: test/fuzz/corpus/datagram is not what test/fuzz/seeds.c makes: run make fuzz-seeds (an input of its own belongs in seeds.c as a scenario)" >&2
	fail=1
else
	echo "seeds: test/fuzz/corpus/datagram is what test/fuzz/seeds.c makes"
fi
exit "$fail"
