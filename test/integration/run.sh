#!/bin/bash
# Runs the integration tests (test/integration/t_*.sh), each in its own
# process under `timeout 120`, one line per test, then "N passed, M failed".
# Exit status 1 when any failed. Arguments pick a subset by name:
#   bash test/integration/run.sh                  every test
#   bash test/integration/run.sh t_mutex lease    t_mutex.sh and t_lease.sh
#   bash test/integration/run.sh sigterm          a unique prefix: t_sigterm_leave.sh
# KEEP=1 keeps each test's temp dir (its logs) for a look afterwards.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
LIMIT_S=${TEST_TIMEOUT_S:-120}

tests=()
if (($# == 0)); then
	for t in "$HERE"/t_*.sh; do tests+=("$t"); done
else
	for a in "$@"; do
		a=${a##*/}
		a=${a%.sh}
		a=t_${a#t_}
		if [[ -f $HERE/$a.sh ]]; then
			tests+=("$HERE/$a.sh")
			continue
		fi
		# Else a unique prefix: sigterm for t_sigterm_leave.
		m=("$HERE/$a"*.sh)
		[[ ${#m[@]} == 1 && -f ${m[0]} ]] || { echo "run.sh: no test $a (test/integration/$a*.sh)"; exit 2; }
		tests+=("${m[0]}")
	done
fi

out=$(mktemp /tmp/ring-it-run.XXXXXX)
child=
# A Ctrl-C or a kill of this script ends the running test, which stops
# what it started (its own trap).
stop() {
	[[ -n $child ]] && kill -TERM "$child" 2>/dev/null && wait "$child" 2>/dev/null
	rm -f "$out"
	exit 130
}
trap stop INT TERM

passed=0 failed=0 t_all=${EPOCHREALTIME/./}
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
	else
		failed=$((failed + 1))
		((rc == 124 || rc == 137)) && echo "$name: killed after ${LIMIT_S}s (timeout)" >>"$out"
		echo "FAIL $name (${secs}s)"
		sed 's/^/    /' "$out"
	fi
done
rm -f "$out"
t1=${EPOCHREALTIME/./}
echo "integration: $((passed + failed)) tests in $(((t1 - t_all) / 1000000))s"
echo "$passed passed, $failed failed"
((failed == 0))
