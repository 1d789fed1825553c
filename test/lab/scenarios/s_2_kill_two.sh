#!/bin/bash
# needs: netns
# Scenario 2: kill -9 two members that are not neighbours (2 and 4 of 5)
# while every member runs a client loop. The three left (a majority) go on:
# each of them is granted again, each counts exactly 1, 3, 5 alive; the
# trace finds no violation and the fenced file's fences never go back.
source "$(dirname "$0")/lib.sh"

N=5
lab_up $N

start_clients 1 2 3 4 5
wait_until 20 at_least 10 writes_above 0 || fail "the clients wrote $(writes_above 0) lines in 20 s, want 10"
F0=$(max_fence)
say "all five clients write ($(writes_above 0) lines, newest fence $(fence_str "$F0")): kill -9 members 2 and 4"

t_kill=$(now_us)
lab kill 2 || fail "lab.sh kill 2 failed"
lab kill 4 || fail "lab.sh kill 4 failed"
for i in 1 3 5; do
	wait_until 15 at_least 2 writes_above "$F0" $i ||
		fail "member $i was not granted twice within 15 s of the kills ($(writes_above "$F0" $i) writes above $F0)"
done
say "members 1, 3, 5 are granted again: $(writes_above "$F0") writes above fence $(fence_str "$F0")"
three_alive() {
	local i
	for i in 1 3 5; do status $i | jq -e '.alive == [1,3,5]' || return 1; done
}
wait_until 10 three_alive || fail "the survivors do not agree that 1, 3, 5 are alive: $(ring_json)"
n0=$(writes_above "$F0")
wait_until 20 at_least $((n0 + 9)) writes_above "$F0" || fail "grants stopped: $(writes_above "$F0") writes after the kills"
stop_clients
trace_strict
trace_result

((TR_RC == 0)) || fail "the trace checker found a violation (exit $TR_RC)"
skips=$(all_logs successor_skip "us > $t_kill" | jq -r .dead | sort -u | tr '\n' ' ')
regens=$(all_logs token_regen "us > $t_kill" | wc -l)
bad=$(fences_never_back) || fail "the fenced file's fences went back: $bad"
pass "two members killed: $(writes_above "$F0") grants at 1, 3, 5 afterwards (skipped: ${skips:-none}; regenerations: $regens), no violation"
