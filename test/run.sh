#!/bin/bash
# test/run.sh [-t SECONDS] SUITE-DIR [NAME...]: runs a scripted suite, the
# scripts t_*.sh or s_*.sh of SUITE-DIR (test/integration, test/security,
# test/lab/scenarios), or those NAMEs (a file name, or a unique part of one:
# "sigterm", "3", "pause"). Each runs in its own process, under `timeout`
# (SECONDS, default 120; TEST_TIMEOUT_S overrides), its output kept.
#
# One line per script: PASS name (Ns) with the script's "| " lines (its
# report); FAIL name (Ns) with its whole output; SKIP name (Ns): reason,
# for a script that exits 77 (test/lib.sh skip: it cannot run here). Then
# "SUITE: N scripts in Ss", the failed ones by name, and
# "P passed, F failed[, K skipped]". Exit status 1 when any failed.
#
# When SUITE-DIR (or its parent) holds report.sh, it runs last with the
# results folder: for each script NAME.rc, NAME.secs, NAME.out, and
# NAME.result (key=value lines the script wrote to $RUN_RESULT). The lab's
# table (build/lab-results.txt) is made that way.
# KEEP=1 keeps every script's temp dir (a failing one's is always kept).
set -u
export LC_ALL=C
limit=${TEST_TIMEOUT_S:-120}
if [[ ${1:-} == -t ]]; then
	[[ -z ${TEST_TIMEOUT_S:-} ]] && limit=$2
	shift 2
fi
(($# >= 1)) || { echo "usage: test/run.sh [-t SECONDS] SUITE-DIR [NAME...]" >&2; exit 2; }
dir=${1%/}
shift
[[ -d $dir ]] || { echo "run.sh: no folder $dir" >&2; exit 2; }
suite=$(basename "$dir")
[[ $suite == scenarios ]] && suite=$(basename "$(dirname "$dir")")

all=()
for s in "$dir"/t_*.sh "$dir"/s_*.sh; do [[ -f $s ]] && all+=("$s"); done
((${#all[@]})) || { echo "run.sh: no t_*.sh or s_*.sh in $dir" >&2; exit 2; }
scripts=()
if (($# == 0)); then
	scripts=("${all[@]}")
else
	for a in "$@"; do
		a=${a##*/}
		a=${a%.sh}
		m=()
		for s in "${all[@]}"; do
			n=$(basename "$s" .sh)
			if [[ $n == "$a" || $n == "t_$a" || $n == "s_$a" ]]; then m=("$s"); break; fi
			[[ $n == *"$a"* ]] && m+=("$s")
		done
		((${#m[@]} == 1)) || { echo "run.sh: '$a' names ${#m[@]} scripts in $dir (want one)" >&2; exit 2; }
		scripts+=("${m[0]}")
	done
fi

res=$(mktemp -d /tmp/ring-run.XXXXXX) || exit 1
child=
stop() { # Ctrl-C or a kill: end the running script, which stops what it started
	if [[ -n $child ]]; then
		kill -TERM "$child" 2>/dev/null
		wait "$child" 2>/dev/null
	fi
	rm -rf "$res"
	echo "run.sh: interrupted"
	exit 130
}
trap stop INT TERM HUP

passed=0 failed=0 skipped=0 failures=() t_all=${EPOCHREALTIME/./}
for s in "${scripts[@]}"; do
	name=$(basename "$s" .sh)
	out=$res/$name.out
	: >"$res/$name.result"
	t0=${EPOCHREALTIME/./}
	RUN_RESULT=$res/$name.result timeout -k 30 "$limit" bash "$s" >"$out" 2>&1 </dev/null &
	child=$!
	wait "$child"
	rc=$?
	child=
	t1=${EPOCHREALTIME/./}
	secs=$(printf '%d.%d' $(((t1 - t0) / 1000000)) $(((t1 - t0) / 100000 % 10)))
	echo "$rc" >"$res/$name.rc"
	echo "$secs" >"$res/$name.secs"
	if ((rc == 0)); then
		passed=$((passed + 1))
		echo "PASS $name (${secs}s)"
		grep '^| ' "$out" | sed 's/^/    /'
	elif ((rc == 77)); then
		skipped=$((skipped + 1))
		echo "SKIP $name (${secs}s): $(sed -n "s/^SKIP $name: //p" "$out" | tail -n 1)"
	else
		failed=$((failed + 1))
		failures+=("$name")
		((rc == 124 || rc == 137)) && echo "$name: killed after ${limit}s (timeout)" >>"$out"
		echo "FAIL $name (${secs}s, exit $rc)"
		sed 's/^/    /' "$out"
	fi
done
t1=${EPOCHREALTIME/./}
report=
for r in "$dir/report.sh" "$(dirname "$dir")/report.sh"; do
	[[ -f $r ]] && { report=$r; break; }
done
if [[ -n $report ]]; then
	echo
	bash "$report" "$res" "${scripts[@]}"
fi
rm -rf "$res"
echo "$suite: $((passed + failed + skipped)) scripts in $(((t1 - t_all) / 1000000))s${failures[*]:+; failed: ${failures[*]}}"
echo "$passed passed, $failed failed$( ((skipped)) && echo ", $skipped skipped")"
((failed == 0))
