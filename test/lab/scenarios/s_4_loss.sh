#!/bin/bash
# needs: netns
# Scenario 4: 10% loss on every link (each host drops 10% of its incoming
# and 10% of its outgoing UDP: about 19% between two hosts) for 20 s while
# every member runs a client loop. Grants keep coming (more than
# LOSS_FLOOR in the window, by the members' cs_enter events), no fence is
# ever granted twice, then heal and grants go on. Loss may make a member
# skip a live successor whose ack was lost; the skipped member's copy of
# the token is then of an older epoch and may still grant once before it
# learns better: an overlap the fence makes harmless. So the trace runs
# with --allow-overlap and the table shows how many there were.
source "$(dirname "$0")/lib.sh"

N=5 LOSS_PCT=10 WINDOW_S=${LOSS_WINDOW_S:-20} LOSS_FLOOR=${LOSS_FLOOR:-20}
lab_up $N

start_clients 1 2 3 4 5
wait_until 20 at_least 10 writes_above 0 || fail "the clients wrote $(writes_above 0) lines in 20 s, want 10"
say "all five clients write: $(writes_above 0) lines; loss all $LOSS_PCT for $WINDOW_S s"

t0=$(now_us)
lab loss all $LOSS_PCT || fail "lab.sh loss all $LOSS_PCT failed"
# The fault's duration, not a synchronisation: watch the grants meanwhile.
window_over() { (($(now_us) - t0 >= WINDOW_S * 1000000)); }
for ((k = 1; k <= 4; k++)); do
	WAIT_QUIET=1 wait_until "$(secs $((WINDOW_S * 250)))" window_over
	say "  $(grants_all "$t0") grants so far under loss"
done
WAIT_QUIET=1 wait_until 5 window_over
t1=$(now_us)
in_window=$(grants_all "$t0" "$t1")
lab heal || fail "lab.sh heal failed"
say "$in_window grants in the ${WINDOW_S} s under loss; healed"

F1=$(max_fence)
wait_until 15 at_least 10 writes_above "$F1" || fail "grants did not go on after heal ($(writes_above "$F1") writes)"
stop_clients
trace_check --allow-overlap
trace_result --allow-overlap

((TR_RC == 0)) || fail "the trace checker found a violation (exit $TR_RC)"
(($(tj .duplicate_fences) == 0)) || fail "fences granted twice: $(tj .duplicate_fences)"
((in_window > LOSS_FLOOR)) || fail "only $in_window grants in $WINDOW_S s under ${LOSS_PCT}% loss, want more than $LOSS_FLOOR"
bad=$(fences_never_back) || fail "the fenced file's fences went back: $bad"
retrans=$(all_logs retransmit "us > $t0 and us < $t1" | wc -l)
pass "${LOSS_PCT}% loss for $WINDOW_S s: $in_window grants (floor $LOSS_FLOOR), $retrans retransmits, no fence twice, $(tj .overlaps) overlap(s)"
