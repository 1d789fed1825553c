#!/bin/bash
# test/lab/report.sh RESULTS SCRIPT...: the fault lab's table of results,
# run by test/run.sh after the scenarios: one row per scenario from what it
# wrote to $RUN_RESULT (recovery_median_ms, recovery_max_ms, loss_timeout_ms,
# overlaps, stale_refused, verdict, and note lines printed under the row;
# test/lab/scenarios/lib.sh result),
# printed and written to build/lab-results.txt.
set -u
res=$1
shift
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RESULTS=$ROOT/build/lab-results.txt

get() { sed -n "s/^$2=//p" "$res/$1.result" 2>/dev/null | tail -n 1; }
row() { printf '%-20s %7s %-17s %15s %9s %-18s %s\n' "$@"; }
{
	row scenario time "recovery ms" loss_timeout_ms overlaps "stale refused" verdict
	row "" "" "(median / max)" "" "" "" ""
	for s in "$@"; do
		name=$(basename "$s" .sh)
		rc=$(cat "$res/$name.rc") secs=$(cat "$res/$name.secs")
		if ((rc == 77)); then
			row "$name" - - - - - "skipped: $(sed -n "s/^SKIP $name: //p" "$res/$name.out" | tail -n 1)"
			continue
		fi
		med=$(get "$name" recovery_median_ms) max=$(get "$name" recovery_max_ms)
		verdict=$(get "$name" verdict)
		((rc != 0)) && verdict="FAIL${verdict:+ (trace: $verdict)}"
		row "$name" "${secs}s" "${med:--} / ${max:--}" "$(get "$name" loss_timeout_ms)" \
			"$(get "$name" overlaps)" "$(get "$name" stale_refused)" "${verdict:--}"
		# A scenario's notes (s_9: counters before and after), under its row.
		sed -n 's/^note=/    /p' "$res/$name.result" 2>/dev/null
	done
} >"$res/table"
cat "$res/table"
mkdir -p "$(dirname "$RESULTS")"
{
	echo "# ring fault lab, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -n); test/run.sh test/lab/scenarios"
	cat "$res/table"
} >"$RESULTS"
echo "table in ${RESULTS#"$ROOT"/}"
