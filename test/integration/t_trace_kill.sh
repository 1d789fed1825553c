#!/bin/bash
# ringctl trace after a real crash, with no faults.log: kill -9 the member
# whose client holds the critical region; once the ring has regenerated and
# granted again, trace must infer the crash from the logs alone and time
# its recovery (> 0, and below a generous bound from loss_timeout_ms), and
# must not take the members still running for crashed ones.
source "$(dirname "$0")/lib.sh"

LOSS_MS=400
make_conf "$CONF" 3 lease_ms=30000 loss_timeout_ms=$LOSS_MS
start_ring 3
wait_until 5 any_log_has token_regen || fail "no token minted"

V=2
pin $V a
t_kill_us=$(now_us)
kill_member $V
say "member $V held the token (fence $PIN_FENCE): killed with -9"
"$RINGCTL" -c "$CONF" -n 1 run -t 10000 -- true || fail "run at member 1 after the kill exited $?"
wait_until 5 any_log_has cs_enter "us > $t_kill_us and .node != $V" || fail "no grant after the kill"
wait_bg "$PIN_PID" 5

"$RINGCTL" trace "$T"/n*.log >"$T/trace.txt" 2>&1
echo "ringctl trace n*.log (no faults.log):"
sed 's/^/  | /' "$T/trace.txt"
json=$("$RINGCTL" trace --json "$T"/n*.log | tail -n 1)
jq -e . <<<"$json" >/dev/null || fail "trace --json printed no JSON: $json"

stall=$(stalled_ms "$t_kill_us")
bound_ms=$((4 * LOSS_MS + 5000 + stall)) # generous: a loaded machine
crash=$(jq -c --argjson v $V '[.fault_list[] | select(.source == "inferred" and .what == "crash n\($v)")] | first // empty' <<<"$json")
[[ -n $crash ]] || fail "trace inferred no crash of member $V: $(jq -c .fault_list <<<"$json")"
rec_ms=$(jq -r '.recovery_s // -1 | . * 1000 | floor' <<<"$crash")
((rec_ms > 0)) || fail "the crash's recovery is $rec_ms ms, want > 0: $crash"
((rec_ms < bound_ms)) || fail "the crash's recovery is $rec_ms ms, want < $bound_ms$(stall_note "$stall")"
[[ $(jq -r '.faults_inferred' <<<"$json") -ge 1 ]] || fail "faults_inferred < 1: $json"
awk -v s="$(jq -r .slowest_recovery_s <<<"$json")" 'BEGIN { exit !(s > 0) }' ||
	fail "slowest_recovery_s is not > 0: $json"
# The members still running end their logs without node_stop too: no crash.
alive=$(jq -r --argjson v $V '[.fault_list[] | select(.what | test("^crash n")) | select(.what != "crash n\($v)")] | length' <<<"$json")
((alive == 0)) || fail "trace took a running member for crashed: $(jq -c .fault_list <<<"$json")"
grep -q "^inferred fault at .*: crash n$V .*next grant .* s later" "$T/trace.txt" ||
	fail "the text report has no inferred crash line"
grep -q "faults: [1-9][0-9]* (0 from faults.log, [1-9]" "$T/trace.txt" ||
	fail "the text summary does not count the inferred fault"
pass "trace inferred crash n$V, recovered in $rec_ms ms (bound $bound_ms)"
