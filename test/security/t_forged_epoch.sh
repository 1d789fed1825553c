#!/bin/bash
# A forged EPOCH_REPLY on a keyless ring (issue 26, item 1; PROTOCOL.md
# §4.2, §5.3; SPEC.md "Hostile input": no epoch a datagram carries can
# wedge the ring). The nonce of an EPOCH_QUERY travels in clear, so a
# stranger that can see a query (here: bound to a down member's port, as
# anyone on the host can) answers it with the real nonce. Two plays:
#
# 1. restart: a 3-member ring is restarted whole (SIGTERM all, start all,
#    as docs/operations.md prescribes for an upgrade) while a stranger
#    bound to member 3's port answers every EPOCH_QUERY with epoch
#    0xffffffff. Then member 3 comes back, and a member that exited is
#    started again once (as systemd's Restart= would). Every member's
#    epoch (status --json and the epoch file) must stay within 2^16
#    generations of what it was before the restart (the reach of any
#    datagram, RING_GEN_JUMP), no member may log epoch_exhausted or
#    fatal, and the ring must grant again.
# 2. late: member 3 is down while member 1 restarts; once member 1 is
#    proven (epoch_learned), a stranger on member 3's port sends it one
#    late EPOCH_REPLY with its real nonce and an epoch 2^16 + 1
#    generations ahead. Then member 3 comes back: member 1 must not refuse
#    member 3's tokens for ever. Take-backs (member_rejoin, logged by
#    node.c take_back) and retransmits are counted over a window and
#    bounded; the ring must grant.
#
# Figures go to "| " lines. Every check is made and reported; the script
# fails at the end with all that failed.
source "$(dirname "$0")/lib.sh"

MEMBERS=3
GEN_JUMP=65536          # node.c RING_GEN_JUMP: generations a datagram may jump
WINDOW_S=${WINDOW_S:-10} # the window grants and take-backs are counted over
MIN_GRANTS=10           # grants the ring must make in the window
MAX_TAKEBACKS=5         # a restarted member costs one or two; for ever is thousands
[[ -x $HOSTILE ]] || fail "build/hostile missing (make build/hostile)"

FAILED=()
check() { # MESSAGE CONDITION...: records MESSAGE when the condition fails
	local msg=$1
	shift
	if "$@"; then return 0; fi
	FAILED+=("$msg")
	say "CHECK FAILED: $msg"
}

# The workload: member $1 takes the region in a loop; each grant is a
# cs_enter in its log. Bounded by iterations, time and the stop file; a
# member that is down is waited for (polled, 1 s at most), not hammered.
export RINGCTL
work() {
	local i end=$((SECONDS + 120))
	for ((i = 0; i < 5000 && SECONDS < end; i++)); do
		[[ -e $STOP ]] && break
		"$RINGCTL" -c "$CONF" -n "$1" run -t 2000 -- true >/dev/null 2>&1 ||
			WAIT_QUIET=1 wait_until 1 "$RINGCTL" -c "$CONF" -n "$1" status --json
	done
}
start_work() {
	local i
	STOP=$T/stop.$1
	export STOP CONF
	for ((i = 1; i <= MEMBERS; i++)); do spawn work $i; done
}
stop_work() {
	local pid
	touch "$STOP"
	for pid in "${BG_PIDS[@]}"; do wait_gone "$pid" 30 || fail "a workload loop did not stop within 30 s"; done
	BG_PIDS=()
}

grants_since() { all_logs cs_enter "(us >= $1)" | wc -l; }
enough_grants() { (($(grants_since "$1") >= $2)); }
file_epoch() { sed -n 's/^epoch \([0-9]*\)$/\1/p' "$(conf_value state_dir)/node-$1.epoch" 2>/dev/null; }
status_epoch() { status "$1" 2>/dev/null | jq -r '.epoch // empty'; }
gen() { echo $(($1 >> 8)); }
within_reach() { # EPOCH BEFORE
	[[ -n $1 ]] && (($1 >= $2 && ($1 >> 8) - ($2 >> 8) <= GEN_JUMP))
}
running() { [[ -n ${PIDS[$1]:-} ]] && pid_alive "${PIDS[$1]}"; }
# up_or_gone ID: member ID answers on its control socket, or has exited.
up_or_gone() { ! running "$1" || "$RINGCTL" -c "$CONF" -n "$1" status --json >/dev/null 2>&1; }
proven_since() { log_has "$1" epoch_learned "(us >= $2 and .start == 1)"; }
fatal_since() { any_log_has fatal "(us >= $1)" || any_log_has epoch_exhausted "(us >= $1)"; }
exit_of() { # ID: reaps member ID when it has exited; its status in EXITED[ID]
	running "$1" && return 1
	[[ -n ${PIDS[$1]:-} ]] || return 0
	wait "${PIDS[$1]}"
	EXITED[$1]=$?
	unset "PIDS[$1]"
}
declare -A EXITED=()

# ---------------------------------------------------------------- 1. restart
make_conf "$CONF" $MEMBERS secret_file= authentication=off name=forged-$$
"$RINGD" -c "$CONF" -n 1 --check >"$T/check.txt" 2>&1 || fail "ringd --check: $(cat "$T/check.txt")"
grep -q '^authentication: off' "$T/check.txt" || fail "the ring is not keyless: $(grep authentication "$T/check.txt")"
start_ring $MEMBERS
wait_until 10 any_log_has token_regen || fail "no token minted within 10 s"
t_work=$(now_us)
start_work 1
wait_until 20 enough_grants "$t_work" 10 || fail "fewer than 10 grants in 20 s before the restart"
stop_work
declare -A BEFORE=()
for ((i = 1; i <= MEMBERS; i++)); do
	BEFORE[$i]=$(status_epoch $i)
	[[ -n ${BEFORE[$i]} ]] || fail "member $i: no epoch in status --json"
done
say "keyless ring of $MEMBERS up, $(grants_since "$t_work") grants; epochs ${BEFORE[*]}"

for ((i = 1; i <= MEMBERS; i++)); do
	stop_member $i 10 || fail "member $i did not stop within 10 s of SIGTERM"
	[[ $STOP_RC == 0 ]] || fail "member $i exited $STOP_RC on SIGTERM"
done
for ((i = 1; i <= MEMBERS; i++)); do
	fe=$(file_epoch $i)
	[[ $fe == "${BEFORE[$i]}" ]] || say "member $i: epoch file says $fe, status said ${BEFORE[$i]}"
	((fe > BEFORE[$i])) && BEFORE[$i]=$fe
done

# The stranger takes member 3's port while the ring is down.
SPAWN_OUT=$T/stranger1.out spawn "$HOSTILE" -c "$CONF" --stranger 3 --reply-epoch 0xffffffff \
	--until "$T/stranger1.stop" --seconds 60
stranger1=$BG_PID
stranger_on() { grep -q '^hostile-stranger: on ' "$1"; }
wait_until 5 stranger_on "$T/stranger1.out" || fail "the stranger did not bind member 3's port: $(cat "$T/stranger1.out")"
t_restart=$(now_us)
say "whole-ring restart: members 1 and 2 start, a stranger on member 3's port answers 0xffffffff"
start_ringd 1
start_ringd 2
for i in 1 2; do
	wait_until 10 up_or_gone $i || fail "member $i neither answers nor exits 10 s after start"
done
t_work=$(now_us)
start_work 2
# Either the ring grants again (what must happen), or a member dies.
grants_or_death() { enough_grants "$t_work" 3 || ! running 1 || ! running 2; }
wait_until 15 grants_or_death || say "members 1 and 2: no grant and no exit 15 s after the restart"
touch "$T/stranger1.stop"
wait_gone "$stranger1" 5 || fail "the stranger did not stop within 5 s"
stranger1_summary=$(grep '^hostile-stranger: queries=' "$T/stranger1.out")
say "the stranger: ${stranger1_summary#hostile-stranger: }"
for i in 1 2; do exit_of $i; done

say "member 3 comes back"
start_ringd 3
wait_until 10 up_or_gone 3 || fail "member 3 neither answers nor exits 10 s after start"
# systemd's Restart=: a member that exited is started again, once.
RESTARTED=()
for i in 1 2 3; do
	exit_of $i || continue
	RESTARTED+=("$i(exit ${EXITED[$i]})")
	start_ringd $i
	wait_until 10 up_or_gone $i || fail "member $i neither answers nor exits 10 s after its restart"
done
((${#RESTARTED[@]})) && say "started again after they exited: ${RESTARTED[*]}"
t_window=$(now_us)
wait_until "$WINDOW_S" enough_grants "$t_window" $MIN_GRANTS
grants1=$(grants_since "$t_window")
stop_work
for i in 1 2 3; do exit_of $i; done

echo "| restart with a stranger answering 0xffffffff on member 3's port (${stranger1_summary#hostile-stranger: })"
printf '| %-7s %12s %12s %12s %10s\n' member before status file exit
declare -A AFTER_S=() AFTER_F=()
for ((i = 1; i <= MEMBERS; i++)); do
	AFTER_S[$i]=$(running $i && status_epoch $i)
	AFTER_F[$i]=$(file_epoch $i)
	printf '| %-7s %12s %12s %12s %10s\n' "m$i" "${BEFORE[$i]}" "${AFTER_S[$i]:-down}" \
		"${AFTER_F[$i]:-none}" "${EXITED[$i]:-running}"
done
n_fatal=$(all_logs fatal "(us >= $t_restart)" | wc -l)
n_exhausted=$(all_logs epoch_exhausted "(us >= $t_restart)" | wc -l)
n_adopt=$(all_logs epoch_adopt "(us >= $t_restart and .epoch >= 4278190080)" | wc -l)
echo "| after the restart: $grants1 grants in the ${WINDOW_S} s window once member 3 was back (want >= $MIN_GRANTS);" \
	"$n_exhausted epoch_exhausted, $n_fatal fatal, $n_adopt epoch_adopt of 0xff000000+; started again: ${RESTARTED[*]:-none}"
for ((i = 1; i <= MEMBERS; i++)); do
	check "restart: member $i's epoch file is ${AFTER_F[$i]:-missing}, more than 2^16 generations from ${BEFORE[$i]} before the restart" \
		within_reach "${AFTER_F[$i]}" "${BEFORE[$i]}"
	if [[ -n ${AFTER_S[$i]} ]]; then
		check "restart: member $i's status epoch is ${AFTER_S[$i]}, more than 2^16 generations from ${BEFORE[$i]} before the restart" \
			within_reach "${AFTER_S[$i]}" "${BEFORE[$i]}"
	fi
	check "restart: member $i is not running (exit ${EXITED[$i]:-?})" running $i
done
check "restart: $n_exhausted epoch_exhausted and $n_fatal fatal events after the restart" \
	test $((n_exhausted + n_fatal)) -eq 0
check "restart: $grants1 grants in the ${WINDOW_S} s after member 3 was back, want >= $MIN_GRANTS" \
	test "$grants1" -ge $MIN_GRANTS

for ((i = 1; i <= MEMBERS; i++)); do running $i && stop_member $i 10; done
for ((i = 1; i <= MEMBERS; i++)); do
	[[ -n ${PIDS[$i]:-} ]] && kill_member $i
done

# ---------------------------------------------------------------- 2. late
# A fresh ring under another name and state_dir, on the same ports; its
# logs in $T/late.
LOG_DIR=$T/late
mkdir -p "$LOG_DIR"
CONF=$T/late.ini
make_conf "$CONF" $MEMBERS secret_file= authentication=off name=late-$$ state_dir="$T/state-late"
EXITED=()
start_ring $MEMBERS
wait_until 10 any_log_has token_regen || fail "late: no token minted within 10 s"
t_work=$(now_us)
start_work 3
wait_until 20 enough_grants "$t_work" 10 || fail "late: fewer than 10 grants in 20 s"
stop_member 3 10 || fail "late: member 3 did not stop within 10 s of SIGTERM"
stop_member 1 10 || fail "late: member 1 did not stop within 10 s of SIGTERM"
e1=$(file_epoch 1)
e2=$(file_epoch 2)
top=$((e1 > e2 ? e1 : e2))
forged=$(((((top >> 8) + GEN_JUMP + 1) << 8) | (top & 255)))
SPAWN_OUT=$T/stranger2.out spawn "$HOSTILE" -c "$CONF" --stranger 3 --reply-epoch "$forged" \
	--late "$T/late.go" --seconds 60
stranger2=$BG_PID
wait_until 5 stranger_on "$T/stranger2.out" || fail "late: the stranger did not bind member 3's port: $(cat "$T/stranger2.out")"
t_restart=$(now_us)
start_member 1
wait_until 10 proven_since 1 "$t_restart" || fail "late: member 1 not proven (epoch_learned) 10 s after its restart"
e1_proven=$(status_epoch 1)
touch "$T/late.go"
wait_gone "$stranger2" 5 || fail "late: the stranger did not send its late reply within 5 s"
late_line=$(grep '^hostile-stranger: late reply' "$T/stranger2.out" | head -1)
[[ -n $late_line ]] || fail "late: the stranger saw no EPOCH_QUERY from member 1: $(cat "$T/stranger2.out")"
say "late: member 1 proven at epoch $e1_proven; ${late_line#hostile-stranger: }"
# Whatever member 1 made of it shows in its log before member 3 is back:
# a status round trip comes after the reply in its socket.
status 1 >/dev/null
start_member 3
t_window=$(now_us)
counters_json() { for i in 1 2 3; do status $i || echo '{"node":'"$i"',"down":true}'; done | jq -s .; }
counters_json >"$T/late0.json"
wait_until "$WINDOW_S" enough_grants "$t_window" $MIN_GRANTS
# The window is the whole WINDOW_S for take-backs: they are counted at its end.
window_end() { (($(now_us) >= t_window + WINDOW_S * 1000000)); }
wait_until $((WINDOW_S + 1)) window_end
grants2=$(grants_since "$t_window")
counters_json >"$T/late1.json"
all_logs member_rejoin "(us >= $t_window)" >"$T/takebacks.json"
takebacks=$(wc -l <"$T/takebacks.json")
takebacks_1=$(jq -s '[.[] | select(.node == 3 and .id == 1)] | length' "$T/takebacks.json")
retrans=$(($(jq '[.[].retransmits // 0] | add' "$T/late1.json") - $(jq '[.[].retransmits // 0] | add' "$T/late0.json")))
e1_after=$(status_epoch 1)
stop_work
echo "| late reply to member 1 from member 3's port: epoch $forged ($(gen "$forged") generations; member 1 proven at $e1_proven, $(gen "${e1_proven:-0}") generations)"
echo "| in the ${WINDOW_S} s once member 3 was back: $grants2 grants (want >= $MIN_GRANTS), $takebacks take-backs (member_rejoin; $takebacks_1 of member 1 by member 3; want <= $MAX_TAKEBACKS), $retrans retransmits; member 1's epoch $e1_after"
for i in 1 2 3; do
	check "late: member $i is not running" running $i
done
check "late: $takebacks take-backs (member_rejoin) in ${WINDOW_S} s, want <= $MAX_TAKEBACKS: member 1 refuses member 3's tokens" \
	test "$takebacks" -le $MAX_TAKEBACKS
check "late: $grants2 grants in ${WINDOW_S} s, want >= $MIN_GRANTS" test "$grants2" -ge $MIN_GRANTS
check "late: member 1's epoch went from $e1_proven to $e1_after, more than 2^16 generations" \
	within_reach "$e1_after" "$e1_proven"

for i in 1 2 3; do
	running $i || continue
	stop_member $i 10 || FAILED+=("member $i did not stop within 10 s of SIGTERM")
done
((${#FAILED[@]} == 0)) || fail "${#FAILED[@]} checks failed: $(printf '%s; ' "${FAILED[@]}")"
pass "a forged EPOCH_REPLY with the real nonce neither poisons a whole-ring restart nor makes a member refuse a sender for ever"
