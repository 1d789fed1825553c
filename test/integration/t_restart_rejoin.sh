#!/bin/bash
# A member killed with -9 is skipped; restarted, it is back in every
# member's alive list within a bound (member_rejoin), is granted the
# critical region, and its durable epoch never went backwards.
source "$(dirname "$0")/lib.sh"

N=4 V=2
make_conf "$CONF" $N
start_ring $N
wait_until 5 any_log_has token_regen || fail "no token minted"
others=()
for ((i = 1; i <= N; i++)); do ((i == V)) || others+=("$i"); done

# The epoch file must hold a number that never goes down, whenever we look.
EPOCH_FILE=$T/state/node-$V.epoch
last_epoch=0
check_epoch() {
	[[ -f $EPOCH_FILE ]] || return 0
	local line e
	line=$(cat "$EPOCH_FILE")
	[[ $line =~ ^epoch\ ([0-9]+)$ ]] || fail "$EPOCH_FILE holds '$line', not 'epoch N'"
	e=${BASH_REMATCH[1]}
	((e >= last_epoch)) || fail "$EPOCH_FILE went backwards: $last_epoch -> $e"
	last_epoch=$e
}
# Grants at V work before anything happens (and V's epoch is on disk).
"$RINGCTL" -c "$CONF" -n $V run -t 5000 -- true || fail "run at member $V before the kill: exit $?"
check_epoch
((last_epoch > 0)) || fail "member $V has no epoch on disk after a grant"
say "member $V granted; its epoch file says $last_epoch; kill -9"
kill_member $V

lacks_v() { ! alive_has "$1" $V; }
all_lack_v() { check_epoch; for id in "${others[@]}"; do lacks_v "$id" || return 1; done; }
wait_until 5 all_lack_v || fail "member $V still in an alive list 5 s after kill -9"
say "member $V skipped: alive lists $(for id in "${others[@]}"; do printf '%s=%s ' $id "$(field $id '.alive | map(tostring) | join(",")')"; done)"
check_epoch
e_dead=$last_epoch

rejoins=$(all_logs member_rejoin ".id == $V" | wc -l)
t0=$(now_ms)
start_member $V
all_have_v() { check_epoch; for id in "${others[@]}"; do alive_has "$id" $V || return 1; done; }
wait_until 5 all_have_v || fail "member $V not back in every alive list 5 s after its restart"
say "member $V back in every alive list after $(($(now_ms) - t0)) ms"
wait_until 2 any_log_has member_rejoin ".id == $V" || fail "no member_rejoin id=$V logged"
n=$(all_logs member_rejoin ".id == $V" | wc -l)
((n > rejoins)) || fail "no new member_rejoin id=$V after the restart"
"$RINGCTL" -c "$CONF" -n $V run -t 5000 -- sh -c 'echo "$RING_EPOCH" > "$0"' "$T/granted" ||
	fail "run at the restarted member $V: exit $?"
check_epoch
granted_epoch=$(cat "$T/granted")
((last_epoch >= e_dead)) || fail "epoch went backwards across the restart: $e_dead -> $last_epoch"
((granted_epoch > e_dead)) || fail "the restarted member granted under epoch $granted_epoch, not above its pre-crash $e_dead"
start_epoch=$(log_events $V node_start | tail -1 | jq -r .epoch)
((start_epoch == e_dead)) || fail "member $V restarted from epoch $start_epoch, its file said $e_dead"
pass "rejoined in $(($(now_ms) - t0)) ms; epoch file $e_dead -> $last_epoch, granted under $granted_epoch"
