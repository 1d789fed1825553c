#!/bin/bash
# needs: netns
# Scenario 5: partition 3 | 2 with quorum = majority, every member running a
# client loop. The minority (4, 5) reports state no-quorum (ringctl status
# --json, asked inside their hosts) within NOQ_BOUND_MS and grants nothing
# from the moment it said so until the heal (no cs_enter in their logs); the
# majority (1, 2, 3) goes on granting. After heal the ring merges back: all
# five alive, one epoch, one token, within MERGE_BOUND_MS, and 4 and 5 are
# granted again. The trace runs with --allow-overlap: a minority member may
# still have been in a critical region when the majority regenerated (its
# in-progress region overlaps); the table reports how many overlaps there were.
source "$(dirname "$0")/lib.sh"

N=5
lab_up $N quorum=majority
LOSS=$(conf_value loss_timeout_ms)
NOQ_BOUND_MS=$((LOSS * 4 + 6000)) MERGE_BOUND_MS=15000

start_clients 1 2 3 4 5
wait_until 20 at_least 10 writes_above 0 || fail "the clients wrote $(writes_above 0) lines in 20 s, want 10"
F0=$(max_fence)
say "all five clients write ($(writes_above 0) lines): split 1,2,3 | 4,5"

t_split=$(now_us)
lab split "1,2,3" "4,5" || fail "lab.sh split failed"
declare -A t_noq=()
noq() { status "$1" | jq -e '.state == "no-quorum"'; }
for i in 4 5; do
	wait_bounded "$(secs $NOQ_BOUND_MS)" "$t_split" noq $i || fail "member $i did not report no-quorum within $NOQ_BOUND_MS ms of the split: $(status $i)"
	t_noq[$i]=$(now_us)
	say "member $i reports no-quorum $(((t_noq[$i] - t_split) / 1000)) ms after the split"
done
for i in 1 2 3; do
	wait_until 15 at_least 2 writes_above "$F0" $i || fail "member $i (majority) was not granted within 15 s of the split"
done
# Keep the split SPLIT_HOLD_S more seconds (several of the minority's
# election retries) and as long as the majority grants 9 more times: more
# evidence that the minority stays quiet.
SPLIT_HOLD_S=3
n0=$(writes_above "$F0") t_hold=$(now_us)
held() { (($(now_us) - t_hold >= SPLIT_HOLD_S * 1000000)) && at_least $((n0 + 9)) writes_above "$F0"; }
wait_until 20 held || fail "the majority stopped granting during the split ($(writes_above "$F0") writes since)"
t_heal=$(now_us)
for i in 4 5; do
	late=$(log_events $i cs_enter "us > ${t_noq[$i]} and us < $t_heal")
	[[ -z $late ]] || fail "member $i granted after it reported no-quorum: $late"
done
say "majority granted $(grants_all "$t_split" "$t_heal") times during the split, the minority none after its no-quorum; heal"
lab heal || fail "lab.sh heal failed"

t0=$(now_ms)
wait_bounded "$(secs $MERGE_BOUND_MS)" "$(now_us)" ring_whole $N || fail "the ring did not merge (all $N alive, one epoch, one token) within $MERGE_BOUND_MS ms of the heal: $(ring_json)"
say "merged: all $N alive, one token, $(($(now_ms) - t0)) ms after the heal"
F1=$(max_fence)
for i in 4 5; do
	wait_until 15 at_least 1 writes_above "$F1" $i || fail "member $i was not granted within 15 s of the merge"
done
stop_clients
trace_check --allow-overlap
trace_result --allow-overlap

((TR_RC == 0)) || fail "the trace checker found a violation (exit $TR_RC)"
bad=$(fences_never_back) || fail "the fenced file's fences went back: $bad"
ov=$(tj .overlaps)
pass "split 3|2 (majority): minority no-quorum and silent, majority granted, merged after heal; $ov overlap(s)$( ((ov > 0)) && echo " (a minority member's region in progress at the split; longest $(tj .worst_overlap_s) s)")"
