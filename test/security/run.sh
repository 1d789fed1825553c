#!/bin/bash
# Runs the security tests (test/security/t_*.sh), each in its own process
# under `timeout` (SECURITY_TIMEOUT_S, 300 s), one PASS or FAIL line per
# test with the failing test's output under it (for a passing one, its
# "| " table and SPEC GAP/NOTE lines), then the line
# "N passed, M failed". Exit status 1 when any failed. Arguments pick tests
# by name: bash test/security/run.sh hostile valgrind. Needs root (raw and
# packet sockets); KEEP=1 keeps each test's temp dir.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
LIMIT_S=${SECURITY_TIMEOUT_S:-300}

tests=()
if (($# == 0)); then
	for t in "$HERE"/t_*.sh; do tests+=("$t"); done
else
	for a in "$@"; do
		a=${a##*/}
		a=${a%.sh}
		a=t_${a#t_}
		[[ -f $HERE/$a.sh ]] || { echo "run.sh: no test $HERE/$a.sh"; exit 2; }
		tests+=("$HERE/$a.sh")
	done
fi

out=$(mktemp /tmp/ring-sec-run.XXXXXX)
child=
stop() { # Ctrl-C or a kill: end the running test, which stops what it started
	[[ -n $child ]] && kill -TERM "$child" 2>/dev/null && wait "$child" 2>/dev/null
	rm -f "$out"
	exit 130
}
trap stop INT TERM

passed=0 failed=0
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	t0=${EPOCHREALTIME/./}
	timeout -k 10 "$LIMIT_S" bash "$t" >"$out" 2>&1 </dev/null &
	child=$!
	wait "$child"
	rc=$?
	child=
	t1=${EPOCHREALTIME/./}
	secs=$(printf '%d.%d' $(((t1 - t0) / 1000000)) $(((t1 - t0) / 100000 % 10)))
	if ((rc == 0)); then
		passed=$((passed + 1))
		echo "PASS $name (${secs}s)"
		grep -E '^(\| |SPEC GAP:|NOTE:)' "$out" | sed 's/^/    /'
	else
		failed=$((failed + 1))
		((rc == 124 || rc == 137)) && echo "$name: killed after ${LIMIT_S}s (timeout)" >>"$out"
		echo "FAIL $name (${secs}s, exit $rc)"
		sed 's/^/    /' "$out"
	fi
done
rm -f "$out"
echo "$passed passed, $failed failed"
((failed == 0))
