#!/bin/bash
# Scenario 8 (loopback: no namespaces, runs everywhere): a 3-member ring on
# 127.0.0.1 with its own INI, faulted through `ringctl inject`; the
# scenario writes faults.log itself, in lab.sh's shape.
#  1. drop-token at the holder (its client in the critical region, then
#     released: the token it passes on is lost): recovery (the trace's
#     inject -> next grant) < loss_timeout_ms + 2 s, and the trace counts a
#     regeneration beyond the first token.
#  2. pause 1500 at the member whose client holds the critical region: its
#     run exits 70, it logs pause_detected, and its client's fenced-append
#     with the old fence, made after a newer fence was accepted, is refused
#     with exit 3.
# The trace (--allow-overlap: the paused member's region overlaps the
# next ones) says OK.
source "$(dirname "$0")/lib.sh"

LOOPBACK=1 N=3 LOSS=500
CONF=$LAB_DIR/ring.ini
RINGD_ARGS=(-v) # token hops in the logs, for the trace

# A port can still be taken between pick_ports and ringd's bind (by a socket
# outside every lock): then new ports, at most 3 times.
started=0
for ((attempt = 1; attempt <= 3 && !started; attempt++)); do
	PORT_BASE=0
	make_conf "$CONF" $N name=lab-loop-$$ lease_ms=5000 loss_timeout_ms=$LOSS idle_pass_ms=10 \
		state_dir="$LAB_DIR/state"
	rm -rf "$LAB_DIR/state" "$LAB_DIR"/n*.log "$LAB_DIR"/n*.err
	mkdir -p "$LAB_DIR/state"
	started=1
	for ((i = 1; i <= N; i++)); do
		start_ringd $i
		if ! WAIT_QUIET=1 wait_until 10 member_up $i || pid_gone "${PIDS[$i]}"; then
			say "member $i did not start on port $((PORT_BASE + i - 1)) ($(tail -n 1 "$LAB_DIR/n$i.err")): new ports"
			stop_pids "${PIDS[@]}"
			PIDS=()
			release_ports
			started=0
			break
		fi
	done
done
((started)) || fail "the loopback ring did not start in 3 attempts"
wait_until 10 ring_whole $N || fail "the loopback ring did not form within 10 s: $(ring_json)"
: >"$LAB_DIR/faults.log"
say "loopback ring of $N on 127.0.0.1:$PORT_BASE..$((PORT_BASE + N - 1)) formed; $CONF"

inject() { "$RINGCTL" -c "$CONF" -n "$1" inject "${@:2}"; }

# ---- 1. drop-token at the holder ----
V=2
start_clients 1 3
wait_until 20 at_least 6 writes_above 0 || fail "the clients wrote $(writes_above 0) lines in 20 s, want 6"
SPAWN_OUT="$LAB_DIR/pin.client" spawn "$RINGCTL" -c "$CONF" -n $V run -t 15000 -- sh -c '
	echo "$RING_FENCE" > "$0.in"
	i=0; while [ ! -e "$0.go" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done' "$LAB_DIR/pin"
pin=$BG_PID
await_pinned $V pin
F_pin=$PIN_FENCE
t_drop=$(now_us)
inject $V drop-token || fail "inject drop-token at member $V exited $?"
fault_line "drop-token $V" "$t_drop" "$(now_us)"
touch "$LAB_DIR/pin.go" # the visit ends; the token passed on is lost
wait_bg "$pin" 10 || fail "the client at member $V still runs 10 s after its release"
((BG_RC == 0)) || fail "the client at member $V exited $BG_RC"
new_regen() { log_has "$1" token_regen "us > $t_drop"; }
any_regen() { local i; for ((i = 1; i <= N; i++)); do new_regen $i && return 0; done; return 1; }
wait_until "$(secs $((LOSS + 8000)))" any_regen || fail "no token_regen after the dropped token"
wait_until 15 at_least 3 writes_above "$F_pin" || fail "no grants after the regeneration"
say "drop-token at member $V: regenerated ($(all_logs token_regen "us > $t_drop" | jq -r '"epoch \(.epoch) by member \(.node)"' | head -n 1)); grants go on"

# ---- 2. pause the member whose client is in the critical region ----
P=3
stop_clients 3
start_clients 2
SPAWN_OUT="$LAB_DIR/late.client" spawn "$RINGCTL" -c "$CONF" -n $P run -t 15000 -- sh -c '
	trap "" TERM
	echo "$RING_FENCE" > "$0.in"
	i=0; while [ ! -e "$0.go" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
	"$2" fenced-append "$1" "n=$RING_NODE f=$RING_FENCE late"
	rc=$?
	echo "late_append=$rc"
	exit $rc' "$LAB_DIR/late" "$OUT" "$RINGCTL"
late=$BG_PID
await_pinned $P late
F0=$PIN_FENCE
t_pause=$(now_us)
SPAWN_OUT="$LAB_DIR/pause.out" spawn "$RINGCTL" -c "$CONF" -n $P inject pause 1500
pauser=$BG_PID
fault_line "pause $P 1500ms" "$t_pause" "$(now_us)"
wait_until 15 at_least 1 writes_above "$F0" || fail "no newer fence was written within 15 s of the pause"
H=$(max_fence)
wait_bg "$pauser" 15 || fail "inject pause 1500 has not returned after 15 s"
((BG_RC == 0)) || fail "inject pause 1500 exited $BG_RC: $(cat "$LAB_DIR/pause.out")"
wait_until 5 log_has $P pause_detected "us > $t_pause" || fail "member $P did not log pause_detected after the inject"
touch "$LAB_DIR/late.go" # now the paused holder's client writes, with its old fence
wait_bg "$late" 15 || fail "the paused member's client still runs 15 s after the pause"
run_rc=$BG_RC
late_out=$(cat "$LAB_DIR/late.client")
((run_rc == 70)) || fail "the paused member's run exited $run_rc, want 70 (lease lost): $late_out"
grep -q 'late_append=3' <<<"$late_out" || fail "the late write with fence $F0 after $H was not refused with exit 3: $late_out"
grep -q "stale fence $F0 < " <<<"$late_out" || fail "fenced-append did not say 'stale fence $F0 < H': $late_out"
grep -q ' late$' "$OUT" && fail "the late write reached the fenced file"
pd=$(log_events $P pause_detected "us > $t_pause" | jq -r .ms | head -n 1)
say "pause 1500 at member $P: pause_detected ms=$pd, run exited 70, $(grep -o 'stale fence [0-9]* < [0-9]*' <<<"$late_out") (exit 3)"

wait_until 10 ring_whole $N || fail "the ring did not come back to one token after the pause: $(ring_json)"
stop_clients
trace_check --allow-overlap
trace_result --allow-overlap $(($(stale_refused) + 1))

((TR_RC == 0)) || fail "the trace checker found a violation (exit $TR_RC)"
(($(tj .regenerations) >= 2)) || fail "the trace shows $(tj .regenerations) regeneration(s), want the first token and one after drop-token"
rec=$(sed -n "s/^fault at .*drop-token $V *next grant \([0-9.]*\) s later.*/\1/p" "$LAB_DIR/trace.txt" | awk '{ printf "%d", $1 * 1000 + 0.5 }')
[[ -n $rec ]] || fail "the trace shows no grant after the drop-token"
stall=$(stalled_ms "$t_drop" "$t_pause")
((rec < LOSS + 2000 + stall)) || fail "drop-token recovery $rec ms, want < $((LOSS + 2000 + stall))$(stall_note "$stall")"
bad=$(fences_never_back) || fail "the fenced file's fences went back: $bad"
pass "drop-token recovered in $rec ms with a regeneration; paused holder revoked (70), pause_detected, late write refused (exit 3); trace OK"
