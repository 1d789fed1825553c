#!/usr/bin/env bash
# The layer check must catch what it is there for: each planted include
# below, in a copy of ring/, has to make test/house/layers.sh fail, and the
# unplanted copy has to pass. Run by make layers after the real check.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0

# file | line to add | what it breaks
plants=(
	'ring/core/wire.c|#include "daemon/metrics.h"|a core file includes a ringd header'
	'ring/core/layout.c|#include "common/conf.h"|the core includes from common'
	'ring/common/log.c|#include "ctl/job.h"|common includes a ringctl header'
	'ring/ctl/watch.c|#include "daemon/inject.h"|ringctl includes ringd'
	'ring/daemon/metrics.c|#include "ctl/watch.h"|ringd includes ringctl'
	'ring/daemon/inject.c|#include "wire.h"|an include that names no layer'
	'ring/core/node.c|#include <sys/socket.h>|the core includes a socket header'
	'ring/core/node.c|#include <time.h>|the core includes a clock'
)

copy() { rm -rf "$tmp/t"; mkdir -p "$tmp/t"; cp -R "$root/ring" "$tmp/t/ring"; }

copy
bash "$here/layers.sh" "$tmp/t" >/dev/null 2>&1 || { echo "layers selftest: the unplanted copy fails" >&2; fail=1; }
for p in "${plants[@]}"; do
	IFS='|' read -r file line what <<<"$p"
	copy
	[ -f "$tmp/t/$file" ] || { echo "layers selftest: no $file to plant in" >&2; fail=1; continue; }
	printf "%s\n" "$line" >>"$tmp/t/$file"
	if bash "$here/layers.sh" "$tmp/t" >/dev/null 2>&1; then
		echo "layers selftest: not caught: $what ($file: $line)" >&2
		fail=1
	fi
done
[ "$fail" = 0 ] && echo "layers selftest: ${#plants[@]} planted includes, each caught"
exit "$fail"
