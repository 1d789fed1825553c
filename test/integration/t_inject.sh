#!/bin/bash
# Loopback fault drills through `ringctl inject`: a dropped token is
# regenerated; a paused member revokes its grant (pause_detected, run exits
# 70) and its old fence is refused by the resource once a newer one wrote;
# loss is ridden out by retransmits; a member with allow_inject = false
# refuses every drill.
source "$(dirname "$0")/lib.sh"

N=5 LOSS_MS=400
make_conf "$CONF" $N lease_ms=30000 loss_timeout_ms=$LOSS_MS
# Member 5 refuses drills. allow_inject is a local matter, not part of the
# fingerprint, so it is a full member all the same.
make_conf "$T/noinject.ini" $N lease_ms=30000 loss_timeout_ms=$LOSS_MS allow_inject=false
for id in 1 2 3 4; do start_member $id; done
start_member 5 "$T/noinject.ini"
wait_until 5 any_log_has token_regen || fail "no token minted"
five_alive() { (($(field 1 '.alive | length') == 5)); }
wait_until 5 five_alive || fail "not every member is in the ring: $(status 1)"
! any_log_has config_mismatch || fail "allow_inject = false made a config_mismatch"
inject() { "$RINGCTL" -c "$CONF" -n "$1" inject "${@:2}"; }

count() { all_logs "$@" | wc -l; }

# ---- 1. drop-token at the holder ----
V=2
pin $V a
client_a=$PIN_PID
e0=$(field 1 .epoch)
inject $V drop-token || fail "inject drop-token at member $V exited $?"
wait_until 2 log_has $V inject '.what == "drop-token"' || fail "member $V did not log inject what=drop-token"
losses=$(count loss_suspect)
t0=$(now_ms)
touch "$T/a.go" # the visit ends, the token is passed: and swallowed
wait_bg $client_a 5 && ((BG_RC == 0)) || fail "the client at member $V exited $BG_RC"
new_regen() { (($(count token_regen "(.epoch > $e0)") > 0)); }
wait_until $(((LOSS_MS + 2000) / 1000 + 3)) new_regen || fail "no token_regen above epoch $e0 after drop-token"
regen_us=$(all_logs token_regen "(.epoch > $e0)" | jq -s "$JQ_TS map(us) | min")
took=$(((regen_us - t0 * 1000) / 1000))
stall=$(stalled_ms $((t0 * 1000)) "$regen_us")
((took < LOSS_MS + 2000 + stall)) || fail "regeneration took $took ms after the drop, want < $((LOSS_MS + 2000))$(stall_note $stall)"
(($(count loss_suspect) > losses)) || fail "no loss_suspect after drop-token"
for id in 1 3 4 5; do
	"$RINGCTL" -c "$CONF" -n $id run -t 5000 -- true || fail "run at member $id after the regeneration: exit $?"
done
say "drop-token: loss_suspect and token_regen $(all_logs token_regen "(.epoch > $e0)" | jq -r .epoch | tail -1) after $took ms; grants go on"

# ---- 2. pause the member whose client is in a long critical region ----
R=$T/resource
P=3
pin $P p
client_p=$PIN_PID old=$PIN_FENCE
"$RINGCTL" fenced-append "$R" "first, from the holder" --fence "$old" || fail "fenced-append with the holder's fence $old: exit $?"
say "member $P holds fence $old; inject pause 1500"
spawn inject $P pause 1500
pauser=$BG_PID
# Meanwhile the others suspect the loss, regenerate, and a client elsewhere writes.
# (On a busy machine that grant can be revoked by a re-epoch: ask again.)
for try in 1 2 3; do
	"$RINGCTL" -c "$CONF" -n 4 run -t 5000 -- sh -c '"$0" fenced-append "$1" "n=$RING_NODE f=$RING_FENCE" && echo "$RING_FENCE" > "$2"' \
		"$RINGCTL" "$R" "$T/new.fence"
	rc=$?
	((rc == 70)) || break
done
((rc == 0)) || fail "run with fenced-append at member 4 while $P paused: exit $rc"
new=$(cat "$T/new.fence")
((new > old)) || fail "the fence granted during the pause ($new) is not above the paused holder's ($old)"
wait_bg $pauser 10 || fail "inject pause 1500 did not return"
((BG_RC == 0)) || fail "inject pause 1500 exited $BG_RC"
wait_bg $client_p 5 || fail "the run at the paused member still goes on after the pause"
((BG_RC == 70)) || fail "the run at the paused member exited $BG_RC, want 70 (revoked)"
# (A loaded machine may stall a member on its own: look after the inject.)
inject_us=$(first_ts_us $P inject '.what == "pause 1500"')
[[ -n $inject_us ]] || fail "member $P did not log inject what=\"pause 1500\""
log_has $P pause_detected "us >= $inject_us" || fail "member $P did not log pause_detected after the inject"
ms=$(log_events $P pause_detected "us >= $inject_us" | jq -s 'map(.ms) | max')
((ms >= 1000)) || fail "pause_detected ms=$ms for a 1500 ms pause"
out=$("$RINGCTL" fenced-append "$R" "late write of the paused holder" --fence "$old" 2>&1)
rc=$?
((rc == 3)) || fail "fenced-append with the old fence $old after $new exited $rc, want 3: $out"
grep -q "stale fence $old < $new" <<<"$out" || fail "fenced-append said '$out', want 'stale fence $old < $new'"
grep -q 'late write' "$R" && fail "the stale write reached the resource"
say "pause: pause_detected ms=$ms, run exited 70, old fence $old refused after $new"
for id in 1 2 3 4 5; do
	"$RINGCTL" -c "$CONF" -n $id run -t 5000 -- true || fail "run at member $id after the pause: exit $?"
done

# ---- 3. loss: retransmits ride it out ----
rt0=$(field 1 .retransmits)
inject 1 loss 50 || fail "inject loss 50 exited $?"
# An idle token parks (it moves once a loss timeout): entries at 2 and 1
# make member 1 pass it, and some of its passes are lost.
retransmitted() {
	"$RINGCTL" -c "$CONF" -n 2 run -t 5000 -- true >/dev/null 2>&1
	"$RINGCTL" -c "$CONF" -n 1 run -t 5000 -- true >/dev/null 2>&1
	(($(field 1 .retransmits) > rt0))
}
wait_until 20 retransmitted || fail "no retransmit at member 1 under 50% loss"
for id in 2 1; do
	"$RINGCTL" -c "$CONF" -n $id run -t 5000 -- true || fail "run at member $id under loss: exit $?"
done
inject 1 clear || fail "inject clear exited $?"
say "loss 50: $(($(field 1 .retransmits) - rt0)) retransmits, grants go on; cleared"

# ---- 4. allow_inject = false ----
for what in drop-token "pause 100" clear; do
	# shellcheck disable=SC2086
	out=$("$RINGCTL" -c "$T/noinject.ini" -n 5 inject $what 2>&1)
	rc=$?
	((rc == 1)) || fail "inject $what at member 5 (allow_inject = false) exited $rc, want 1: $out"
	grep -q 'allow_inject' <<<"$out" || fail "the refusal does not say why: $out"
done
! log_has 5 inject || fail "member 5 logged an inject it refused"
say "allow_inject = false: refused with '$out'"
pass "drop-token regenerated in $took ms; pause revoked and fenced; loss ridden out; inject refused where not allowed"
