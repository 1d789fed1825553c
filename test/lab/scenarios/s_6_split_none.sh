#!/bin/bash
# needs: netns
# Scenario 6: the partition of scenario 5 with quorum = none. Both sides
# regenerate and go on granting (each side's logs show cs_enter during the
# split): availability over consistency. The trace (--allow-overlap) shows
# the overlapping critical regions and no other violation, and fencing made
# them harmless: the fenced file's accepted fences never go back, and the
# clients of the side with the older epoch had writes refused as stale
# (exit 3) once the other side had written; when no write happened to
# collide, the table says so. After heal the ring merges back to one token.
source "$(dirname "$0")/lib.sh"

N=5 SPLIT_HOLD_S=4
lab_up $N quorum=none

start_clients 1 2 3 4 5
wait_until 20 at_least 10 writes_above 0 || fail "the clients wrote $(writes_above 0) lines in 20 s, want 10"
say "all five clients write ($(writes_above 0) lines): split 1,2,3 | 4,5"

t_split=$(now_us)
lab split "1,2,3" "4,5" || fail "lab.sh split failed"
side_grants() { # FROM_US IDS...: cs_enter events of those members since FROM_US
	local from=$1 i n=0
	shift
	for i in "$@"; do n=$((n + $(grants "$i" "$from"))); done
	echo "$n"
}
both_sides() { (($(side_grants "$t_split" 1 2 3) >= 5 && $(side_grants "$t_split" 4 5) >= 5)); }
wait_until 20 both_sides ||
	fail "not both sides granted 5 times within 20 s of the split (1,2,3: $(side_grants "$t_split" 1 2 3); 4,5: $(side_grants "$t_split" 4 5))"
say "both sides grant: 1,2,3: $(side_grants "$t_split" 1 2 3), 4,5: $(side_grants "$t_split" 4 5)"
# Keep the split SPLIT_HOLD_S seconds: both tokens run, the clients collide.
held() { (($(now_us) - t_split >= SPLIT_HOLD_S * 1000000)); }
WAIT_QUIET=1 wait_until "$(secs $((SPLIT_HOLD_S * 1000 + 1000)))" held
t_heal=$(now_us)
g_major=$(side_grants "$t_split" 1 2 3) g_minor=$(side_grants "$t_split" 4 5)
epochs=$(all_logs cs_enter "us > $t_split and us < $t_heal" | jq -r '"\(.node):\(.epoch)"' | sort -u -t: -k1,1n | tr '\n' ' ')
say "during the split: 1,2,3 granted $g_major times, 4,5 $g_minor times (member:first epoch $epochs); heal"
lab heal || fail "lab.sh heal failed"

t0=$(now_ms)
wait_until 15 ring_whole $N || fail "the ring did not merge (all $N alive, one epoch, one token) within 15 s of the heal: $(ring_json)"
say "merged: all $N alive, one token, $(($(now_ms) - t0)) ms after the heal"
F1=$(max_fence)
wait_until 15 at_least 5 writes_above "$F1" || fail "no grants after the merge"
stop_clients
trace_check --allow-overlap
stale=$(stale_refused)
if ((stale > 0)); then trace_result --allow-overlap "$stale"; else trace_result --allow-overlap "0 (none collided)"; fi

((TR_RC == 0)) || fail "the trace checker found a violation (exit $TR_RC)"
(($(tj .overlaps) >= 1)) || fail "the trace shows no overlap, though both sides granted during the split"
bad=$(fences_never_back) || fail "the fenced file's fences went back: $bad"
if ((stale > 0)); then
	note="$stale stale write(s) refused (exit 3), e.g. '$(grep -ho 'stale fence [0-9]* < [0-9]*' "$LAB_DIR"/c*.txt | head -n 1)'"
else
	note="no write happened to collide, so none was refused"
fi
pass "split 3|2 (quorum none): both sides granted ($g_major | $g_minor), $(tj .overlaps) overlap(s) (longest $(tj .worst_overlap_s) s), accepted fences never went back; $note"
