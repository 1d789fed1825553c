# shellcheck shell=bash
# test/integration/trace_crash.sh: the scenario behind t_trace_parked.sh and
# t_trace_busy.sh (sourced, after lib.sh): a 3-member ring with the default
# timings, a graceful restart (SIGTERM, start again) that is not a fault,
# then a real kill -9 of the holder at a known time, and a client elsewhere
# granted after it. What ringctl trace and timeline read in the members'
# logs must agree with what the script saw from outside: one fault, the
# crash dated within loss_timeout_ms of the kill, its recovery within 10%
# of the one measured, no stretch without a token but the outage, one
# crash on the timeline, where the kill was, and the victim's hold reaching
# it.
#
# crash_scenario MODE VERBOSE: MODE parked (nobody asks while the token is
# parked at the victim; the client asks right after the kill) or busy (the
# victim's client is in the critical region, clients at the two others
# queue for it); VERBOSE 1 runs ringd -v (token hops logged).

LOSS_MS=1000 # ringd's default, as a ring that sets nothing

# A client at member ID that appends the time it was granted to FILE.
stamp_client() { # ID FILE [MS]
	"$RINGCTL" -c "$CONF" -n "$1" run -t "${3:-20000}" -- sh -c 'echo "${EPOCHREALTIME:-$(date +%s.%N)}" >>"$0"' "$2"
}

# Busy mode: member ID asks again and again until $T/stop exists.
load_loop() { # ID
	local i
	for ((i = 0; i < 2000; i++)); do
		[[ -e $T/stop ]] && return 0
		"$RINGCTL" -c "$CONF" -n "$1" run -t 20000 -- sh -c 'date +%s%N >>"$0"' "$T/load$1.stamps" || true
	done
}

# The first line of FILE (seconds, fractional, or nanoseconds) after T_US, in µs.
first_stamp_after() { # FILE T_US
	awk -v t="$2" '{ v = $1; if (index(v, ".") == 0) us = int(v / 1000); else { split(v, p, "."); us = p[1] * 1000000 + int(substr(p[2] "000000", 1, 6)) } if (us > t) { printf "%.0f\n", us; exit } }' "$1"
}

crash_scenario() {
	local mode=$1 verbose=$2 other victim restarted t_kill t_grant s
	rm -f "$T"/n*.log "$T"/n*.err "$T"/*.stamps "$T/stop"
	RINGD_ARGS=()
	((verbose)) && RINGD_ARGS=(-v)
	release_ports
	PORT_BASE=0
	make_conf "$CONF" 3 heartbeat_ms= loss_timeout_ms= ack_timeout_ms= retries= lease_ms=60000 \
		state_dir="$T/state-$mode-$verbose"
	start_ring 3
	wait_until 10 any_log_has token_park || fail "no token parked"

	# A graceful restart of a member that does not hold the token.
	victim=$(holder)
	[[ $victim =~ ^[1-3]$ ]] || fail "no single holder: '$victim'"
	restarted=$((victim % 3 + 1))
	other=$((restarted % 3 + 1))
	stop_member "$restarted" || fail "member $restarted did not stop on SIGTERM"
	start_member "$restarted"
	wait_until 10 alive_has "$victim" "$restarted" || fail "member $restarted did not rejoin"
	say "member $restarted restarted gracefully (SIGTERM)"
	# A grant after it: the restart would be a fault of its own, not
	# merged into the crash, if trace took it for one.
	stamp_client "$victim" "$T/pre.stamps" || fail "no grant at member $victim after the restart"

	if [[ $mode == busy ]]; then
		pin "$victim" busy
		local id
		for id in "$restarted" "$other"; do spawn load_loop "$id"; done
		# Both wait behind the pinned client, and may have been served
		# before it: the ring is busy.
		both_waiting() { [[ $(field "$restarted" .state) == waiting && $(field "$other" .state) == waiting ]]; }
		wait_until 10 both_waiting || fail "the clients at members $restarted and $other are not waiting"
	else
		# Parked and quiet for a while: silences the logs must not
		# take for a lost token.
		local quiet_until=$(($(now_ms) + 2500))
		quiet_enough() { (($(now_ms) >= quiet_until)); }
		wait_until 4 quiet_enough
		victim=$(holder)
	fi
	[[ $victim =~ ^[1-3]$ ]] || fail "no single holder before the kill: '$victim'"
	t_kill=$(now_us)
	kill_member "$victim"
	say "killed the holder, member $victim, with -9 ($mode, -v $verbose)"
	if [[ $mode == parked ]]; then
		other=$((victim % 3 + 1))
		stamp_client "$other" "$T/grant.stamps" || fail "the client at member $other was not granted after the kill"
		t_grant=$(first_stamp_after "$T/grant.stamps" "$t_kill")
	else
		wait_until 20 test -s "$T/load$restarted.stamps" -o -s "$T/load$other.stamps" ||
			fail "no client granted after the kill"
		local a b
		a=$(first_stamp_after "$T/load$restarted.stamps" "$t_kill" 2>/dev/null)
		b=$(first_stamp_after "$T/load$other.stamps" "$t_kill" 2>/dev/null)
		t_grant=${a:-$b}
		[[ -n $b && $b -lt $t_grant ]] && t_grant=$b
		touch "$T/stop"
		wait_bg "$PIN_PID" 5
	fi
	[[ -n $t_grant ]] || fail "no grant stamp after the kill"
	local out_ms=$(((t_grant - t_kill) / 1000))
	say "granted again $out_ms ms after the kill (measured from outside)"
	# A moment of the ring after it, so that its logs hold the recovery.
	stamp_client "$other" "$T/after.stamps" || fail "no grant after the recovery"
	[[ $mode == busy ]] && end_groups "${BG_PIDS[@]}"
	check_trace "$victim" "$t_kill" "$out_ms"
	check_timeline "$victim" "$t_kill" "$mode"
	local id
	for id in 1 2 3; do
		[[ -n ${PIDS[$id]:-} ]] && { stop_member "$id" || fail "member $id did not stop"; }
	done
	return 0
}

# The logs' first line, in µs: trace's and timeline's times are after it.
logs_base_us() {
	cat "$T"/n*.log | jq -rR "$JQ_TS fromjson? | us" | sort -n | head -n 1
}

check_trace() { # VICTIM T_KILL OUT_MS
	local v=$1 t_kill=$2 out_ms=$3 json base crash at_us rec_ms d
	"$RINGCTL" trace "$T"/n*.log >"$T/trace.txt" 2>&1
	sed 's/^/  | /' "$T/trace.txt"
	json=$("$RINGCTL" trace --json "$T"/n*.log | tail -n 1)
	base=$(logs_base_us)
	# One fault: the crash. The graceful restart is none.
	[[ $(jq '.faults' <<<"$json") == 1 ]] || fail "trace counts $(jq .faults <<<"$json") faults, want 1 (the kill): $(jq -c .fault_list <<<"$json")"
	crash=$(jq -c '.fault_list[0]' <<<"$json")
	[[ $(jq -r .what <<<"$crash") == "crash n$v" ]] || fail "the fault is not crash n$v: $crash"
	at_us=$(jq -r --argjson b "$base" '.at_s * 1000000 + $b | floor' <<<"$crash")
	d=$(((at_us - t_kill) / 1000))
	((d < 0)) && d=$((-d))
	((d <= LOSS_MS)) || fail "trace dates the crash $(((at_us - t_kill) / 1000)) ms from the kill, want within $LOSS_MS ms"
	rec_ms=$(jq -r '.recovery_s * 1000 | floor' <<<"$crash")
	local diff=$((rec_ms - out_ms))
	((diff < 0)) && diff=$((-diff))
	((diff * 10 <= out_ms)) || fail "trace's recovery is $rec_ms ms, measured $out_ms ms: more than 10% apart"
	# No stretch without a token but the outage itself.
	local gap_from
	while read -r gap_from; do
		local g_us
		g_us=$(awk -v s="$gap_from" -v b="$base" 'BEGIN { printf "%.0f", b + s * 1000000 }')
		((g_us >= t_kill - LOSS_MS * 1000 && g_us <= t_kill + 2 * LOSS_MS * 1000)) ||
			fail "trace reports a stretch with no token from $gap_from s, not the outage after the kill (at $(((t_kill - base) / 1000)) ms)"
	done < <(sed -n 's/^no token seen for [0-9.]* s from \([0-9.]*\) s$/\1/p' "$T/trace.txt")
	pass_note="trace: crash n$v dated $(((at_us - t_kill) / 1000)) ms from the kill, recovery $rec_ms ms (measured $out_ms ms)"
	say "$pass_note"
	RESULTS+=("$pass_note")
}

check_timeline() { # VICTIM T_KILL MODE
	local v=$1 t_kill=$2 mode=$3 svg=$T/tl.svg base n at_s at_us d held
	"$RINGCTL" timeline "$T"/n*.log -o "$svg" >/dev/null 2>&1 || fail "timeline exited $?"
	base=$(logs_base_us)
	n=$(grep -c '<title>member [0-9]*, +[0-9.]* s: crash' "$svg")
	((n == 1)) || fail "the timeline marks $n crashes, want 1: $(grep -o '<title>member [0-9]* running[^<]*' "$svg")"
	grep -q "<title>member $v, +[0-9.]* s: crash" "$svg" || fail "the timeline's crash is not member $v's"
	at_s=$(sed -n "s/.*<title>member $v, +\([0-9.]*\) s: crash.*/\1/p" "$svg" | head -n 1)
	at_us=$(awk -v s="$at_s" -v b="$base" 'BEGIN { printf "%.0f", b + s * 1000000 }')
	d=$(((at_us - t_kill) / 1000))
	((d < 0)) && d=$((-d))
	((d <= LOSS_MS)) || fail "the timeline puts the crash $(((at_us - t_kill) / 1000)) ms from the kill"
	# The victim held the token up to its crash: its last hold (and in
	# busy mode its client's critical region) ends there.
	local kind=hold what="held the token"
	[[ $mode == busy ]] && kind=cs what="a client in the critical region"
	# The span that ends last, whatever the document's order (a park
	# logged on arrival is drawn before the grant that follows it).
	held=$(grep -o "<title>member $v[:]* $what[^<]*</title>" "$svg" |
		awk '{ if (match($0, /[0-9.]+ ms \(\+[0-9.]+ s\)/)) { split(substr($0, RSTART, RLENGTH), f, " ");
			e = substr(f[3], 3) + f[1] / 1000; if (e >= best) { best = e; line = $0 } } }
			END { print line }')
	local ms start_s end_us
	ms=$(sed -n 's/.* \([0-9.]*\) ms (+\([0-9.]*\) s).*/\1/p' <<<"$held")
	start_s=$(sed -n 's/.* \([0-9.]*\) ms (+\([0-9.]*\) s).*/\2/p' <<<"$held")
	[[ -n $ms ]] || fail "no $kind span of member $v on the timeline"
	end_us=$(awk -v s="$start_s" -v m="$ms" -v b="$base" 'BEGIN { printf "%.0f", b + s * 1000000 + m * 1000 }')
	d=$(((end_us - t_kill) / 1000))
	((d < 0)) && d=$((-d))
	((d <= LOSS_MS)) || fail "member $v's last $kind span ends $(((end_us - t_kill) / 1000)) ms from the kill: $held"
	say "timeline: one crash, member $v's, at +$at_s s; its last $kind span ends $(((end_us - t_kill) / 1000)) ms from the kill"
}
