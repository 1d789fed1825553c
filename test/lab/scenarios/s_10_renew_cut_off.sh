#!/bin/bash
# needs: netns
# Scenario 10: a long job renews its grant while its member is cut off from
# the ring (PROTOCOL.md §3.3, "Renewal needs contact"). Member 1's client
# runs a job far longer than lease_ms under `ringctl run`, which renews it.
# The lab then splits 1 | 2,3. Nobody acks member 1's heartbeats any more,
# so its renewals reach no further than a lease past the last beat a
# majority acked: the job's run exits 70 (revoked, CMD stopped) within
# about a lease of the split, while the majority regenerates and grants.
# Before contact was required, member 1 renewed for as long as the job ran.
source "$(dirname "$0")/lib.sh"

N=3 H=1 LEASE_MS=2000
lab_up $N quorum=majority lease_ms=$LEASE_MS
HB=$(conf_value heartbeat_ms)
LOSS=$(conf_value loss_timeout_ms)
# The revoke comes a lease after the last acked beat (a heartbeat before
# the split at most); the signal, run's exit and a loaded machine on top.
REVOKE_BOUND_MS=$((LEASE_MS + HB + 1500))

SPAWN_OUT="$LAB_DIR/long.client" spawn bash "$LAB" exec $H ringctl -c "$(lab ini $H)" -n $H run -t 15000 -- sh -c '
	echo "$RING_FENCE" > "$0.in"
	exec sleep 60' "$LAB_DIR/long"
long=$BG_PID
await_pinned $H long
F0=$PIN_FENCE
# Past two leases: the job lives on renewals, not on its first lease.
t_in=$(now_us)
renewed() { (($(now_us) - t_in > 2 * LEASE_MS * 1000)); }
wait_until 10 renewed
proc_running() { kill -0 "$long" 2>/dev/null; }
proc_running || fail "the job's run ended before the split: $(cat "$LAB_DIR/long.client")"
! log_has $H lease_expired ".fence == $F0" || fail "member $H let fence $F0's lease expire before the split"
say "member $H's job (fence $(fence_str "$F0")) holds past two leases of $LEASE_MS ms on renewals: split $H | 2,3"

t_split=$(now_us)
lab split "$H" "2,3" || fail "lab.sh split failed"
wait_bg "$long" $(((REVOKE_BOUND_MS + 999) / 1000)) ||
	fail "the cut-off job still runs $REVOKE_BOUND_MS ms after the split: its renewals went on"
rc=$BG_RC took=$((($(now_us) - t_split) / 1000))
((rc == 70)) || fail "the cut-off job's run exited $rc, want 70 (revoked): $(cat "$LAB_DIR/long.client")"
wait_until 5 log_has $H lease_expired ".fence == $F0" || fail "member $H logged no lease_expired for fence $F0"
say "cut off: member $H revoked its renewed grant and run exited 70 $took ms after the split (lease $LEASE_MS ms)"

# The majority goes on: it regenerates and grants.
start_clients 2 3
wait_until 20 at_least 2 writes_above "$F0" || fail "the majority granted nothing within 20 s of the split"
stop_clients
lab heal || fail "lab.sh heal failed"
wait_until 15 ring_whole $N || fail "the ring did not come back whole after the heal: $(ring_json)"
trace_check --allow-overlap
trace_result --allow-overlap
((TR_RC == 0)) || fail "the trace checker found a violation (exit $TR_RC)"
pass "a renewing job cut off from the ring: revoked, run exited 70 $took ms after the split (lease $LEASE_MS ms, bound $REVOKE_BOUND_MS); the majority granted; whole after heal"
