#!/bin/bash
# needs: netns
# Scenario 7: stop the whole ring (lab.sh stop, SIGTERM, every member) and
# restart every member with its state dir. Epochs and fences never go back:
# each host's durable epoch (state_dir/node-I.epoch) is at least what it
# was before, and the first fence granted after the restart is above the
# last one granted before. The trace over both lives finds no violation.
# (The recovery of the `stop` faults in the table includes the time the
# ring was down on purpose.)
source "$(dirname "$0")/lib.sh"

N=5
lab_up $N

# durable_epochs: "I:EPOCH" for every host, from its state dir.
durable_epochs() {
	local i e
	for ((i = 1; i <= N; i++)); do
		e=$(sed -n 's/^epoch \([0-9]*\)$/\1/p' "$LAB_DIR/h$i/state/node-$i.epoch" 2>/dev/null)
		echo "$i:${e:-none}"
	done
}
# max_granted [FROM_US]: the highest fence granted (cs_enter) in any log since FROM_US.
max_granted() { all_logs cs_enter "us > ${1:-0}" | jq -s '[.[].fence] | max // 0'; }

start_clients 1 2 3 4 5
wait_until 20 at_least 15 writes_above 0 || fail "the clients wrote $(writes_above 0) lines in 20 s, want 15"
stop_clients
F_last=$(max_granted)
before=$(durable_epochs | tr '\n' ' ')
say "before: $(writes_above 0) writes, last fence granted $(fence_str "$F_last"); durable epochs $before"

for ((i = 1; i <= N; i++)); do lab stop $i || fail "lab.sh stop $i failed"; done
stopped=$(durable_epochs | tr '\n' ' ')
say "all stopped; durable epochs $stopped"
t_restart=$(now_us)
for ((i = 1; i <= N; i++)); do lab restart $i || fail "lab.sh restart $i failed"; done
wait_until 20 ring_whole $N || fail "the ring did not form again within 20 s of the restarts: $(ring_json)"
after=$(durable_epochs | tr '\n' ' ')
say "restarted: one token, all $N alive; durable epochs $after"

start_clients 1 2 3 4 5
wait_until 20 at_least 10 writes_above "$F_last" || fail "no 10 grants above fence $F_last within 20 s of the restart"
stop_clients
first=$(all_logs cs_enter "us > $t_restart" | jq -s 'sort_by(.ts) | .[0].fence // 0')
trace_strict
trace_result

((TR_RC == 0)) || fail "the trace checker found a violation (exit $TR_RC)"
# Durable epochs never go back: before <= stopped <= after, per host.
for ((i = 1; i <= N; i++)); do
	b=$(sed -n "s/.*\b$i:\([0-9]*\).*/\1/p" <<<"$before") s=$(sed -n "s/.*\b$i:\([0-9]*\).*/\1/p" <<<"$stopped")
	a=$(sed -n "s/.*\b$i:\([0-9]*\).*/\1/p" <<<"$after")
	[[ -n $b && -n $s && -n $a ]] || fail "host $i: an epoch file is missing or unreadable (before $before, stopped $stopped, after $after)"
	((b <= s && s <= a)) || fail "host $i: the durable epoch went back: $b before, $s stopped, $a after"
done
((first > F_last)) || fail "the first fence granted after the restart ($(fence_str "$first")) is not above the last before it ($(fence_str "$F_last"))"
low=$(all_logs cs_enter "us > $t_restart and .fence <= $F_last" | head -n 1)
[[ -z $low ]] || fail "a fence at or below the last one before the restart was granted after it: $low"
bad=$(fences_never_back) || fail "the fenced file's fences went back: $bad"
pass "whole ring restarted: first fence after $(fence_str "$first") > last before $(fence_str "$F_last"); durable epochs never went back ($before-> $after)"
