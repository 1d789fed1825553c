#!/bin/bash
# A member started from a different file (another lease_ms) is refused by
# the others with config_mismatch instead of half-joining: never in their
# alive lists, never granted; the two good members (a majority of 3) go on
# granting.
source "$(dirname "$0")/lib.sh"

make_conf "$CONF" 3
make_conf "$T/other.ini" 3 lease_ms=2500
# The ring first runs whole: members with an empty state_dir wait for a
# majority of the others (PROTOCOL.md §5.3), so the change of file comes,
# as it would in practice, with a restart of member 3.
start_ring 3
wait_until 5 any_log_has token_regen || fail "no token minted"
kill_member 3
restart_us=$(($(now_ms) * 1000))
start_member 3 "$T/other.ini"
say "members 1, 2 from ring.ini, member 3 restarted from other.ini (lease_ms 2500)"

for id in 1 2; do
	wait_until 5 log_has $id config_mismatch '.from == 3' || fail "member $id logged no config_mismatch from=3"
done
say "config_mismatch from=3 at 1 and 2: $(log_events 1 config_mismatch '.from == 3' | head -1)"

# The good two still grant, many times.
for i in 1 2 3 4 5; do
	for id in 1 2; do
		"$RINGCTL" -c "$CONF" -n $id run -t 5000 -- true || fail "run at member $id exited $?"
	done
done
say "members 1 and 2 grant"

# Member 3 asks too, and must never be granted: it is not in the ring.
spawn "$RINGCTL" -c "$T/other.ini" -n 3 run -t 3000 -- touch "$T/3.granted"
asker=$BG_PID

# For longer than two loss timeouts and a half (1 s), member 3 is in no alive list.
lacks3() { ! alive_has "$1" 3; }
t0=$(now_ms)
for ((i = 0; i < 100 && $(now_ms) - t0 < 1500; i++)); do
	for id in 1 2; do
		lacks3 $id || fail "member 3 is in member $id's alive list: $(status $id)"
	done
	sleep 0.05
done
wait_bg $asker 5 || fail "ringctl run -t 3000 at member 3 did not return"
[[ ! -e $T/3.granted ]] || fail "the mismatched member 3 granted the critical region"
((BG_RC != 0)) || fail "run at the mismatched member exited 0"
# Nobody ever let 3 in.
! any_log_has member_rejoin ".id == 3 and us > $restart_us" || fail "member 3 was let into the ring: $(all_logs member_rejoin '.id == 3')"
c=$(field 1 .config_mismatches)
((c > 0)) || fail "member 1's config_mismatches counter is $c"
pass "member 3 refused (config_mismatch), never alive; 1 and 2 grant"
