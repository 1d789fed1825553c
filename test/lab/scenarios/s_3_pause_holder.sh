#!/bin/bash
# needs: netns
# Scenario 3: SIGSTOP the holder inside its critical region, longer than
# loss_timeout_ms, then SIGCONT. Members 1, 2, 4, 5 run client loops; a
# client at member 3 enters the critical region, ignores SIGTERM and writes
# to the fenced file only once its member has been resumed, with the fence
# it was granted before the pause. Meanwhile the others regenerated and
# wrote with newer fences, so that late write is refused (exit 3, "stale
# fence F < H"); its run exits 70 (revoked); member 3 logs pause_detected
# and drops its old token (token_stale_drop or epoch_adopt after the cont);
# afterwards the ring runs with one token again, member 3 included. The
# trace (--allow-overlap) finds no violation and shows the overlap, which
# is expected: the paused member's grant lasted, by its own log, until it
# woke up.
source "$(dirname "$0")/lib.sh"

N=5 V=3
lab_up $N
LOSS=$(conf_value loss_timeout_ms)

start_clients 1 2 4 5
wait_until 20 at_least 8 writes_above 0 || fail "the clients wrote $(writes_above 0) lines in 20 s, want 8"
say "clients at 1 2 4 5 write: $(writes_above 0) lines"

# The late writer: granted at V, ignores the SIGTERM of the revoke, waits
# for LAB_DIR/late.go (30 s at most), then writes with its (old) fence.
SPAWN_OUT="$LAB_DIR/late.client" spawn bash "$LAB" exec $V ringctl -c "$(lab ini $V)" -n $V run -t 15000 -- sh -c '
	trap "" TERM
	echo "$RING_FENCE" > "$0.in"
	i=0; while [ ! -e "$0.go" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
	ringctl fenced-append "$1" "n=$RING_NODE f=$RING_FENCE late"
	rc=$?
	echo "late_append=$rc"
	exit $rc' "$LAB_DIR/late" "$OUT"
late=$BG_PID
await_pinned $V late
F0=$PIN_FENCE
say "member $V holds the token, its client is in the critical region (fence $(fence_str "$F0")): SIGSTOP"

t_pause=$(now_us)
lab pause $V || fail "lab.sh pause $V failed"
# Paused for longer than loss_timeout_ms, and until the others have
# regenerated and the fenced file has accepted a newer fence.
moved_on() { (($(writes_above "$F0") >= 2 && $(now_us) - t_pause > (LOSS + 300) * 1000)); }
wait_until 15 moved_on || fail "no newer fence written within 15 s of the pause ($(writes_above "$F0") above $F0)"
H=$(max_fence)
t_cont=$(now_us)
lab cont $V || fail "lab.sh cont $V failed"
say "paused $((($(now_us) - t_pause) / 1000)) ms; the others wrote up to fence $(fence_str "$H"); SIGCONT, then the late write"
touch "$LAB_DIR/late.go"
wait_bg "$late" 15 || fail "the late writer's run still runs 15 s after the cont"
run_rc=$BG_RC
late_out=$(cat "$LAB_DIR/late.client")
grep -q 'late_append=3' <<<"$late_out" || fail "the late write with fence $F0 was not refused with exit 3: $late_out"
grep -q "stale fence $F0 < " <<<"$late_out" || fail "fenced-append did not say 'stale fence $F0 < H': $late_out"
grep -q ' late$' "$OUT" && fail "the late write reached the fenced file"
((run_rc == 70)) || fail "the late writer's run exited $run_rc, want 70 (revoked): $late_out"
say "late write refused: $(grep -o "stale fence [0-9]* < [0-9]*" <<<"$late_out"); its run exited 70"

wait_until 5 log_has $V pause_detected "us > $t_cont" || fail "member $V did not log pause_detected after the cont"
dropped() { log_has $V token_stale_drop "us > $t_cont" || log_has $V epoch_adopt "us > $t_cont"; }
wait_until 5 dropped || fail "member $V logged neither token_stale_drop nor epoch_adopt after the cont"
say "member $V: $(log_events $V pause_detected "us > $t_cont" | jq -r '"pause_detected ms=\(.ms)"' | head -n 1); $(
	{ log_events $V token_stale_drop "us > $t_cont"; log_events $V epoch_adopt "us > $t_cont"; } | jq -r '"\(.event) epoch=\(.epoch)"' | head -n 2 | tr '\n' ' ')"

# One token again, member V in it: it is granted again.
start_clients $V
wait_until 15 at_least 2 writes_above "$H" $V || fail "member $V was not granted again within 15 s of the cont"
wait_until 15 ring_whole $N || fail "the ring did not come back to one token with all $N members: $(ring_json)"
stop_clients
trace_check --allow-overlap
stale=$(($(stale_refused) + 1)) # the clients' and the late writer's
trace_result --allow-overlap "$stale"

((TR_RC == 0)) || fail "the trace checker found a violation (exit $TR_RC)"
(($(tj .overlaps) >= 1)) || fail "the trace shows no overlap: the paused holder's grant should overlap the next ones"
bad=$(fences_never_back) || fail "the fenced file's fences went back: $bad"
pass "paused holder: late write refused (exit 3), run exited 70, old token dropped, one token again; $(tj .overlaps) overlap(s) shown (longest $(tj .worst_overlap_s) s), no violation"
