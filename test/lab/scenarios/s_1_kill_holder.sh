#!/bin/bash
# needs: netns
# Scenario 1: kill -9 the holder. Members 1, 2, 4, 5 run client loops on the
# shared fenced file; a client at member 3 enters the critical region and
# stays; member 3 is killed there. The others suspect the loss, regenerate
# and grant again: the trace's worst recovery (kill -> next grant) stays
# under loss_timeout_ms + 2 s, it finds no violation (overlaps included),
# and the fenced file's fences never go back.
source "$(dirname "$0")/lib.sh"

N=5 V=3
# A long lease: the client at V keeps the token pinned there for as long as
# the scenario wants; loss detection does not depend on the lease.
lab_up $N lease_ms=5000
LOSS=$(conf_value loss_timeout_ms)

start_clients 1 2 4 5
wait_until 20 at_least 8 writes_above 0 || fail "the clients wrote $(writes_above 0) lines in 20 s, want 8"
say "clients at 1 2 4 5 write: $(writes_above 0) lines"

# The holder: a client at V that writes, says its fence, and stays (30 s at most).
SPAWN_OUT="$LAB_DIR/pin.client" spawn bash "$LAB" exec $V ringctl -c "$(lab ini $V)" -n $V run -t 15000 -- sh -c '
	ringctl fenced-append "$1" "n=$RING_NODE f=$RING_FENCE pinned"
	echo "$RING_FENCE" > "$0.in"
	i=0; while [ ! -e "$0.go" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done' "$LAB_DIR/pin" "$OUT"
pin=$BG_PID
await_pinned $V pin
F0=$PIN_FENCE
say "member $V holds the token, its client is in the critical region (fence $(fence_str "$F0")): kill -9"

t_kill=$(now_us)
lab kill $V || fail "lab.sh kill $V failed"
wait_until "$(secs $((LOSS + 10000)))" at_least 3 writes_above "$F0" ||
	fail "no 3 writes above fence $F0 within $((LOSS + 10000)) ms of the kill"
say "grants again: $(writes_above "$F0") writes above the holder's fence"
wait_bg "$pin" 10 || fail "the client of the killed member still runs 10 s later"
((BG_RC == 70)) || fail "the client of the killed member exited $BG_RC, want 70 (lease lost)"

# More grants after the recovery, then the verdict.
n0=$(writes_above "$F0")
wait_until 20 at_least $((n0 + 12)) writes_above "$F0" || fail "grants stopped after the recovery: $(writes_above "$F0") writes"
t_end=$(now_us)
stop_clients
trace_strict
trace_result

((TR_RC == 0)) || fail "the trace checker found a violation (exit $TR_RC)"
rec_ms=$(awk -v s="$(tj .worst_recovery_s)" 'BEGIN { printf "%d", s * 1000 + 0.5 }')
stall=$(stalled_ms "$t_kill" "$t_end")
((rec_ms < LOSS + 2000 + stall)) ||
	fail "worst recovery $rec_ms ms, want < $((LOSS + 2000 + stall)) (loss_timeout_ms + 2 s)$(stall_note "$stall")"
regen=$(all_logs token_regen "us > $t_kill" | wc -l)
((regen >= 1)) || fail "no token_regen after the kill"
bad=$(fences_never_back) || fail "the fenced file's fences went back: $bad"

# What a monitoring system inside host 2 sees: metrics that parse (Python's
# prometheus_client), an epoch newer than the killed holder's, and grants.
m2=$(timeout 5 bash "$LAB" ctl 2 metrics) || fail "ringctl metrics inside host 2 failed"
strict=$(/usr/bin/python3 "$ROOT/test/integration/prom_check.py" <<<"$m2") ||
	fail "host 2's metrics do not parse: $strict"
sample() { awk -v n="$1" '$1 == n { print $2 }' <<<"$m2"; }
e2=$(sample ring_epoch) cs2=$(sample ring_cs_entries_total)
((e2 > (F0 >> 32))) || fail "host 2's ring_epoch is $e2, want above the killed holder's $((F0 >> 32))"
((cs2 >= 1)) || fail "host 2's ring_cs_entries_total is $cs2 after the recovery"
say "host 2's metrics: $strict; ring_epoch $e2 > $((F0 >> 32)), ring_cs_entries_total $cs2"
pass "holder killed: next grant after $rec_ms ms (< $((LOSS + 2000))), $regen regeneration(s), $(tj .grants) grants, no violation"
