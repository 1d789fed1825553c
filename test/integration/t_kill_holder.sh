#!/bin/bash
# Crashes: kill -9 the member whose client is inside the critical region
# (so it holds the token): the others suspect the loss, elect, regenerate
# under a higher epoch and grant again within loss_timeout_ms + 2 s.
# Then kill -9 a member that does not hold the token: its predecessor
# skips it, grants go on, and nothing is regenerated.
source "$(dirname "$0")/lib.sh"

LOSS_MS=400
# A long lease: the client's CMD keeps the token pinned at its member for
# as long as the test wants, and loss detection must not depend on it.
make_conf "$CONF" 5 lease_ms=30000 loss_timeout_ms=$LOSS_MS
start_ring 5
wait_until 5 any_log_has token_regen || fail "no token minted"

# ---- 1. the holder dies ----
# crash_holder V TAG: pins the token at V with a client in the critical
# region and kills V at once. Returns 1 when V had lost the token before it
# died after all (a stall made it revoke, PROTOCOL.md 5.5): no crash of a
# holder then, and the caller restarts V and tries again.
crash_holder() {
	local v=$1 tag=$2
	pin $v $tag # checks that status says holding, with the client's fence
	t_kill=$(now_ms)
	kill_member $v
	victim_client=$PIN_PID fence=$PIN_FENCE e0=$PIN_EPOCH
	say "member $v held the token (fence $fence, epoch $e0): killed with -9"
	! log_has $v cs_exit ".fence == $fence"
}
V=3
for attempt in 1 2 3; do
	crash_holder $V a$attempt && break
	((attempt < 3)) || fail "member $V lost the token before the kill $attempt times in a row"
	say "member $V had given up the token before it died (a stall or a re-epoch on a busy machine); again"
	wait_bg "$victim_client" 5
	start_member $V
	wait_until 10 alive_has 1 $V || fail "member $V did not rejoin"
done

"$RINGCTL" -c "$CONF" -n 1 run -t 5000 -- true
rc=$?
((rc == 0)) || fail "run at member 1 after the holder died exited $rc"
# The grant is member 1's cs_enter under a new epoch (ringctl's own start
# and exit are not part of it).
after_kill="us > $((t_kill * 1000))"
grant_us=$(first_ts_us 1 cs_enter "$after_kill and .epoch > $e0")
[[ -n $grant_us ]] || fail "member 1 logged no cs_enter above epoch $e0 after the kill"
took=$(((grant_us - t_kill * 1000) / 1000))
stall=$(stalled_ms $((t_kill * 1000)) "$grant_us")
say "granted at member 1 ${took} ms after the kill$(stall_note $stall)"
((took < LOSS_MS + 2000 + stall)) || fail "kill to grant took $took ms, want < $((LOSS_MS + 2000 + stall))$(stall_note $stall)"
for ev in loss_suspect election_start token_regen; do
	any_log_has $ev "$after_kill" || fail "no $ev logged after the holder died"
done
any_log_has token_regen "$after_kill and .epoch > $e0" ||
	fail "no token_regen above epoch $e0 after the kill: $(all_logs token_regen)"
say "logged loss_suspect, election_start, token_regen epoch $(all_logs token_regen "$after_kill" | jq -r .epoch | tail -1) > $e0"
wait_bg "$victim_client" 5 || fail "the client of the dead member is still running 5 s later"
((BG_RC == 70)) || fail "the client of the dead member exited $BG_RC, want 70 (lease lost)"

# ---- 2. a member without the token dies ----
# Pin the token at member 1 so that member 5 surely does not hold it.
pin 1 b
pin_client=$PIN_PID
say "member 1 holds the token; kill -9 member 5"
kill5_us=$(($(now_ms) * 1000))
kill_member 5
touch "$T/b.go"
wait_bg "$pin_client" 5 || fail "the client at member 1 did not finish"
# (70 only if a stall made member 1 revoke: pause_detected, PROTOCOL.md 5.5)
((BG_RC == 0)) || { ((BG_RC == 70)) && (($(stalled_ms $kill5_us) > 0)); } ||
	fail "the client at member 1 exited $BG_RC"
for id in 2 4 1 2 4; do
	"$RINGCTL" -c "$CONF" -n $id run -t 5000 -- true || fail "run at member $id after member 5 died: exit $?"
done
wait_until 5 any_log_has successor_skip '.dead == 5' || fail "nobody logged successor_skip dead=5"
say "successor_skip: $(all_logs successor_skip '.dead == 5' | head -1)"
after="us > $kill5_us"
bad=$(unexplained token_regen "$after")
[[ -z $bad ]] || fail "a regeneration happened after a non-holder died: $bad"
bad=$(unexplained loss_suspect "$after")
[[ -z $bad ]] || fail "loss suspected after a non-holder died: $bad"
pass "holder crash recovered in $took ms; non-holder crash skipped without regeneration"
