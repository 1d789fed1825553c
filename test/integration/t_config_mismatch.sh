#!/bin/bash
# A member started from a different file (another lease_ms) is refused by
# the others with config_mismatch instead of half-joining: never in their
# alive lists, never granted; the two good members (a majority of 3) go on
# granting. The errors point at the cause: config_mismatch names the
# sender's address, `ringctl ring` with the other file shows the members as
# `other file` with both fingerprints; a member whose own file gives it
# another port is logged as bad_packet with the address it sends from.
source "$(dirname "$0")/lib.sh"

pick_ports 6 # 3 members, and a port of nobody's for the last part
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
addr3="127.0.0.1:$((PORT_BASE + 2))"
log_has 1 config_mismatch ".from == 3 and .addr == \"$addr3\"" ||
	fail "config_mismatch does not name the sender's address $addr3: $(log_events 1 config_mismatch | head -1)"

# ringctl with member 3's file: the others answer that theirs is another.
fp_ours=$("$RINGD" -c "$T/other.ini" --check | sed -n 's/.*fingerprint \([0-9a-f]*\).*/\1/p' | head -1)
fp_theirs=$("$RINGD" -c "$CONF" --check | sed -n 's/.*fingerprint \([0-9a-f]*\).*/\1/p' | head -1)
[[ -n $fp_ours && -n $fp_theirs && $fp_ours != "$fp_theirs" ]] || fail "--check fingerprints: '$fp_ours' '$fp_theirs'"
"$RINGCTL" -c "$T/other.ini" ring >"$T/other.ring" 2>&1
for id in 1 2; do
	grep -Eq "^ +$id +127\.0\.0\.1:[0-9]+ +other file" "$T/other.ring" ||
		fail "ring with other.ini does not show member $id as 'other file': $(cat "$T/other.ring")"
done
grep -q "member 1 answers from 127.0.0.1:$PORT_BASE with another file (fingerprint $fp_theirs, this one's $fp_ours)" "$T/other.ring" ||
	fail "ring with other.ini does not give both fingerprints: $(cat "$T/other.ring")"
"$RINGCTL" -c "$T/other.ini" ring --json 2>/dev/null | jq -e '[.[] | select(.problem == "other file")] | length == 2' >/dev/null ||
	fail "ring --json with other.ini: $("$RINGCTL" -c "$T/other.ini" ring --json 2>&1)"
say "ringctl ring with other.ini: 1 and 2 'other file' ($fp_theirs vs $fp_ours)"

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

# Member 3 from a file that gives it another port: it sends from an
# address that is no member's, and the others say which.
kill_member 3
make_conf "$T/port.ini" 3 node.3.port=$((PORT_BASE + 5))
sed -i "/^\[node.3\]/,\$ { /^port = $((PORT_BASE + 2))\$/d }" "$T/port.ini"
grep -A3 '^\[node.3\]' "$T/port.ini" | grep -qx "port = $((PORT_BASE + 5))" || fail "port.ini: $(cat "$T/port.ini")"
start_member 3 "$T/port.ini"
wrong="127.0.0.1:$((PORT_BASE + 5))"
wait_until 5 log_has 1 bad_packet ".addr == \"$wrong\" and .reason == \"sender is not a member\"" ||
	fail "member 1 logged no bad_packet naming $wrong: $(log_events 1 bad_packet | tail -2)"
say "member 3 on port $((PORT_BASE + 5)): $(log_events 1 bad_packet ".addr == \"$wrong\"" | head -1)"
pass "member 3 refused (config_mismatch, with its address), never alive; 1 and 2 grant; ring says 'other file'; a wrong port is named"
