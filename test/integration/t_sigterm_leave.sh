#!/bin/bash
# A graceful leave: SIGTERM the member whose client is in the critical
# region while clients elsewhere keep asking. It exits 0 at once, logs its
# leave, the others log member_leave, and the next grant elsewhere comes
# without any loss wait: no loss_suspect, no regeneration.
source "$(dirname "$0")/lib.sh"

N=5 V=3 LOSS_MS=1000
# A long lease pins the token at V for as long as the test wants; a loss
# timeout of 1 s makes "no loss wait" easy to tell from one.
make_conf "$CONF" $N lease_ms=30000 loss_timeout_ms=$LOSS_MS
start_ring $N
wait_until 5 any_log_has token_regen || fail "no token minted"

pin $V in # never let go: the leave ends it
holder_client=$PIN_PID

# Clients at every other member ask again and again (until $T/stop, at most 200 runs).
asker() {
	local i
	for ((i = 0; i < 200; i++)); do
		[[ -e $T/stop ]] && return 0
		"$RINGCTL" -c "$CONF" -n "$1" run -t 10000 -- true || echo "run at $1 exited $?"
	done
}
for ((id = 1; id <= N; id++)); do
	((id == V)) || spawn asker $id
done
queued() { (($(field "$1" .queued) > 0)); }
for id in 1 2 4 5; do wait_until 5 queued $id || fail "no client waits at member $id"; done
say "member $V holds the token, clients wait at the others; SIGTERM $V"

t0=$(now_ms)
STOP_WAIT_S=5 stop_member $V || fail "member $V still running 5 s after SIGTERM"
took=$(($(now_ms) - t0))
((STOP_RC == 0)) || fail "member $V exited $STOP_RC after SIGTERM, want 0"
stall=$(stalled_ms $((t0 * 1000)))
((took < 2000 + stall)) || fail "member $V took $took ms to leave, want < 2000$(stall_note $stall)"
say "member $V exited 0 in $took ms"
for ev in leave_start leave_done node_stop; do
	log_has $V $ev || fail "member $V did not log $ev"
done
wait_bg "$holder_client" 5 || fail "the client at member $V still runs"
((BG_RC == 70)) || fail "the client at the leaving member exited $BG_RC, want 70 (lease lost)"

leave_us=$(first_ts_us $V leave_start)
after="(us > $leave_us)"
others_logged() { local id; for id in 1 2 4 5; do log_has $id member_leave ".id == $V" || return 1; done; }
wait_until 3 others_logged || fail "not every other member logged member_leave id=$V"
next_grant() { all_logs cs_enter "$after" | jq -r "$JQ_TS us" | sort -n | head -n 1; }
granted_since() { [[ -n $(next_grant) ]]; } # asked again at every poll
wait_until 3 granted_since || fail "no grant elsewhere within 3 s of the leave"
gap=$((($(next_grant) - leave_us) / 1000))
stall=$(stalled_ms $leave_us $(($(next_grant) + 1)))
say "next grant elsewhere $gap ms after leave_start$(stall_note $stall)"
((gap < LOSS_MS / 2 + stall)) || fail "the next grant came $gap ms after the leave: a loss wait (loss_timeout_ms $LOSS_MS)?$(stall_note $stall)"
# Let the ring run on for longer than a loss timeout and a half: grants go
# on, and still no loss, no regeneration.
ran_on() { (($(now_ms) * 1000 > leave_us + LOSS_MS * 1500)) && (($(all_logs cs_enter "$after" | wc -l) >= 20)); }
wait_until 6 ran_on || fail "grants did not go on after the leave ($(all_logs cs_enter "$after" | wc -l) since)"
touch "$T/stop"
bad=$(unexplained loss_suspect "$after")
[[ -z $bad ]] || fail "loss suspected after a graceful leave: $bad"
bad=$(unexplained token_regen "$after")
[[ -z $bad ]] || fail "a regeneration after a graceful leave: $bad"
! grep -q 'exited' "$T/bg.log" || fail "a client run failed: $(grep exited "$T/bg.log" | head -3)"
pass "left in $took ms, next grant after $gap ms, no loss wait"
