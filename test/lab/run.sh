#!/bin/bash
# test/lab/run.sh [NAME...]: runs the fault-lab scenarios
# (test/lab/scenarios/s_*.sh, or those NAMEs: "s_3_pause_holder", "3",
# "pause"), each under `timeout 180` in its own lab dir, one line per
# scenario (PASS/FAIL name (Ns), the output of failures), then a table of
# results (also in build/lab-results.txt) and the line "N passed, M failed"
# (", K skipped" after it when some were). Exit status 1 when any failed.
#
# `lab.sh check` runs first: where network namespaces cannot be made, each
# scenario that needs them (marked "# needs: netns") is skipped with its
# reason, and the loopback scenario still runs.
# KEEP=1 keeps every scenario's dir (logs, faults.log, trace.txt); a failed
# scenario's dir is always kept. See docs/testing.md.
set -u
export LC_ALL=C
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LIMIT_S=${LAB_SCENARIO_TIMEOUT_S:-180}
RESULTS=$ROOT/build/lab-results.txt

scenarios=()
if (($# == 0)); then
	for s in "$HERE"/scenarios/s_*.sh; do scenarios+=("$s"); done
else
	for a in "$@"; do
		a=${a##*/}
		a=${a%.sh}
		if [[ -f $HERE/scenarios/$a.sh ]]; then
			scenarios+=("$HERE/scenarios/$a.sh")
			continue
		fi
		m=()
		for s in "$HERE"/scenarios/s_*.sh; do
			[[ $(basename "$s" .sh) == *"$a"* ]] && m+=("$s")
		done
		((${#m[@]} == 1)) || {
			echo "run.sh: '$a' names ${#m[@]} scenarios in test/lab/scenarios (want one)"
			exit 2
		}
		scenarios+=("${m[0]}")
	done
fi

# Can labs run here? One reason line for the skips.
netns_ok=1 reason=
if ! check=$(bash "$HERE/lab.sh" check 2>&1); then
	netns_ok=0
	reason=$(grep -E 'missing|fails|cannot|: no' <<<"$check" | grep -v 'labs cannot run here' | sed 's/^check: //' | paste -sd ';' | sed 's/;/; /g')
	[[ -n $reason ]] || reason=$(tail -n 1 <<<"$check")
fi

tmp=$(mktemp -d /tmp/ring-lab-run.XXXXXX) || exit 1
child=
stop() {
	if [[ -n $child ]]; then
		kill -TERM "$child" 2>/dev/null
		wait "$child" 2>/dev/null
	fi
	rm -rf "$tmp"
	echo "run.sh: interrupted"
	exit 130
}
trap stop INT TERM HUP

declare -A row=()
names=()
passed=0 failed=0 skipped=0 t_all=${EPOCHREALTIME/./}
for s in "${scenarios[@]}"; do
	name=$(basename "$s" .sh)
	names+=("$name")
	if ((!netns_ok)) && grep -q '^# needs: netns' "$s"; then
		echo "SKIP $name (network namespaces unavailable: $reason)"
		skipped=$((skipped + 1))
		row[$name]="skipped"
		continue
	fi
	dir=$(mktemp -d /tmp/ring-lab-s.XXXXXX) || exit 1
	res=$tmp/$name.result out=$tmp/$name.out
	: >"$res"
	t0=${EPOCHREALTIME/./}
	LAB_DIR=$dir LAB_RESULT=$res timeout -k 30 "$LIMIT_S" bash "$s" >"$out" 2>&1 </dev/null &
	child=$!
	wait "$child"
	rc=$?
	child=
	t1=${EPOCHREALTIME/./}
	secs=$(printf '%d.%d' $(((t1 - t0) / 1000000)) $(((t1 - t0) / 100000 % 10)))
	cp "$out" "$dir/output.txt" 2>/dev/null
	if ((rc == 0)); then
		passed=$((passed + 1))
		echo "PASS $name (${secs}s)"
		if [[ ${KEEP:-0} == 1 ]]; then echo "    files kept in $dir"; else rm -rf "$dir"; fi
	else
		failed=$((failed + 1))
		((rc == 124 || rc == 137)) && echo "$name: killed after ${LIMIT_S}s (timeout)" >>"$out"
		echo "FAIL $name (${secs}s)"
		sed 's/^/    /' "$out"
		echo "    files kept in $dir"
	fi
	row[$name]="$rc $secs"
	cp "$res" "$tmp/$name.kv" 2>/dev/null
done

# The table: one row per scenario, from what each wrote to LAB_RESULT.
get() { sed -n "s/^$2=//p" "$tmp/$1.kv" 2>/dev/null | tail -n 1; }
{
	printf '%-20s %7s %-17s %15s %9s %-18s %s\n' scenario time "recovery ms" loss_timeout_ms overlaps "stale refused" verdict
	printf '%-20s %7s %-17s %15s %9s %-18s %s\n' "" "" "(median / max)" "" "" "" ""
	for name in "${names[@]}"; do
		if [[ ${row[$name]} == skipped ]]; then
			printf '%-20s %7s %-17s %15s %9s %-18s %s\n' "$name" - - - - - "skipped: no network namespaces"
			continue
		fi
		read -r rc secs <<<"${row[$name]}"
		med=$(get "$name" recovery_median_ms) max=$(get "$name" recovery_max_ms)
		verdict=$(get "$name" verdict)
		if ((rc != 0)); then verdict="FAIL${verdict:+ (trace: $verdict)}"; fi
		printf '%-20s %7s %-17s %15s %9s %-18s %s\n' "$name" "${secs}s" "${med:--} / ${max:--}" \
			"$(get "$name" loss_timeout_ms)" "$(get "$name" overlaps)" "$(get "$name" stale_refused)" "${verdict:--}"
	done
} >"$tmp/table"
echo
cat "$tmp/table"
mkdir -p "$(dirname "$RESULTS")"
{
	echo "# ring fault lab, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -n); test/lab/run.sh"
	cat "$tmp/table"
} >"$RESULTS"
t1=${EPOCHREALTIME/./}
echo "lab: $((passed + failed + skipped)) scenarios in $(((t1 - t_all) / 1000000))s; table in ${RESULTS#"$ROOT"/}"
rm -rf "$tmp"
if ((skipped)); then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
((failed == 0))
