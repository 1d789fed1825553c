#!/usr/bin/env bash
# make layers: the folders of ring/ are the layers of docs/ARCHITECTURE.md,
# and a file includes only from its own layer or one below it:
#   core (the pure protocol)  <  common (what both programs share)  <  daemon (ringd), ctl (ringctl)
# ringd and ringctl never include each other, and every include names its
# layer ("core/node.h"), so a reader sees at each #include where it points.
# The core also includes no system header that does I/O or reads a clock:
# the simulator links it alone, on virtual time.
# Usage: test/house/layers.sh [ROOT]   (ROOT defaults to the repository)
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2

declare -A rank=([core]=0 [common]=1 [daemon]=2 [ctl]=2)
# Standard headers the core may use: no stdio files, sockets, clocks, processes.
core_std='^(stdbool|stddef|stdint|stdio|stdlib|string|limits|inttypes|errno)\.h$'
fail=0
bad() { echo "layers: $*" >&2; fail=1; }

shopt -s nullglob
files=(ring/*/*.[ch])
[ ${#files[@]} -gt 0 ] || { echo "layers: no sources under ring/*/" >&2; exit 2; }
for f in ring/*.[ch]; do bad "$f is in no layer: move it into ring/core, common, daemon or ctl"; done
for d in ring/*/; do
	d=${d%/}; d=${d#ring/}
	[ -n "${rank[$d]+x}" ] || bad "ring/$d/ is not a layer (core, common, daemon, ctl)"
done

for f in "${files[@]}"; do
	from=${f#ring/}; from=${from%%/*}
	[ -n "${rank[$from]+x}" ] || continue
	n=0
	while IFS= read -r line; do
		n=$((n + 1))
		[[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*([\"\<])([^\"\>]+)[\"\>] ]] || continue
		kind=${BASH_REMATCH[1]} inc=${BASH_REMATCH[2]}
		if [ "$kind" = '<' ]; then
			if [ "$from" = core ] && ! [[ $inc =~ $core_std ]]; then
				bad "$f:$n: the core includes <$inc>; it does no I/O and reads no clock"
			fi
			continue
		fi
		to=${inc%%/*}
		if [ "$to" = "$inc" ] || [ -z "${rank[$to]+x}" ]; then
			bad "$f:$n: #include \"$inc\" names no layer (write \"core/...\", \"common/...\", ...)"
			continue
		fi
		[ -f "ring/$inc" ] || { bad "$f:$n: #include \"$inc\": no such file ring/$inc"; continue; }
		if [ "$to" != "$from" ]; then
			if [ "${rank[$to]}" -gt "${rank[$from]}" ]; then
				bad "$f:$n: $from includes \"$inc\" from $to, a layer above it"
			elif [ "${rank[$to]}" -eq "${rank[$from]}" ]; then
				bad "$f:$n: $from includes \"$inc\": ringd (daemon) and ringctl (ctl) do not include each other"
			fi
		fi
	done <"$f"
done
[ "$fail" = 0 ] && echo "layers: ${#files[@]} files in 4 layers, every include from its own layer or below"
exit "$fail"
