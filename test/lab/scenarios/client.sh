#!/bin/bash
# test/lab/scenarios/client.sh OUT RECORD STOPFILE [ITERATIONS] [SECONDS]: one
# member's client loop for the lab scenarios. Runs in the member's host
# (lab.sh exec I, which sets LAB_INI and LAB_NODE and puts ring/ first in
# PATH) or on loopback (the caller sets the same variables).
#
# Each iteration asks member LAB_NODE for the critical region (run -t 5000),
# appends "n=NODE f=FENCE" to the fenced file OUT from inside it, stays
# 50 ms, and writes one line to RECORD:
#   <start, $EPOCHREALTIME> <node> run=<run's exit> [fence=<F> append=<fenced-append's exit>] [messages]
# Bounded: ITERATIONS (400) iterations, SECONDS (150) seconds, or until
# STOPFILE exists, whichever comes first.
set -u
out=$1 record=$2 stop=$3 iters=${4:-400} secs=${5:-150}
t_end=$((SECONDS + secs))
for ((k = 0; k < iters && SECONDS < t_end; k++)); do
	[[ -e $stop ]] && break
	t=$EPOCHREALTIME
	msg=$(ringctl -c "$LAB_INI" -n "$LAB_NODE" run -t 5000 -- sh -c '
		ringctl fenced-append "$0" "n=$RING_NODE f=$RING_FENCE"
		rc=$?
		echo "fence=$RING_FENCE append=$rc"
		sleep 0.05
		exit $rc' "$out" 2>&1)
	rc=$?
	echo "$t $LAB_NODE run=$rc ${msg//$'\n'/ | }" >>"$record"
	# 69 (member down or unreachable) and other failures come back at
	# once: pace the loop instead of spinning on a dead member.
	case $rc in
	0 | 3 | 70 | 75) ;;
	*) sleep 0.2 ;;
	esac
done
exit 0
