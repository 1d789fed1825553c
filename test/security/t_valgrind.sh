#!/bin/bash
# Memory errors and leaks: a 3-member ring whose member 1 runs under
# valgrind (memcheck), once with secret_file and once without. Member 1
# serves grants, takes hostile datagrams and control-socket junk
# (build/hostile --only 1), then leaves on SIGTERM: it must exit 0 with
# "ERROR SUMMARY: 0 errors" (definite and indirect leaks count as errors).
source "$(dirname "$0")/lib.sh"

command -v valgrind >/dev/null || fail "valgrind is missing (apt-get install valgrind)"
[[ -x $HOSTILE ]] || fail "build/hostile missing (make build/hostile)"
VG=(valgrind --leak-check=full --show-leak-kinds=definite,indirect
	--errors-for-leak-kinds=definite,indirect --error-exitcode=99 --track-fds=no)
"$RINGCTL" keygen "$KEY" >/dev/null || fail "ringctl keygen $KEY failed"

# phase NAME KEYFILE: one ring, member 1 under valgrind.
phase() {
	local name=$1 key=$2 i rc
	# Slow timings: valgrind runs member 1 some 20-50 times slower.
	make_conf "$CONF" 3 name=vg-$name-$$ state_dir="$T/state-$name" secret_file="$key" \
		ack_timeout_ms=250 heartbeat_ms=100 loss_timeout_ms=2000 idle_pass_ms=5 lease_ms=5000
	RINGD_WRAP=("${VG[@]}" --log-file="$T/vg-$name.log")
	START_WAIT_S=60 start_member 1
	RINGD_WRAP=()
	start_member 2
	start_member 3
	wait_until 30 any_log_has token_regen || fail "$name: no token minted within 30 s"
	say "$name: ring up, member 1 under valgrind (pid ${PIDS[1]})"

	for ((i = 1; i <= 3; i++)); do
		timeout 60 "$RINGCTL" -c "$CONF" -n 1 run -t 30000 -- true
		rc=$?
		((rc == 0)) || fail "$name: ringctl run at member 1 exited $rc"
	done
	say "$name: member 1 granted 3 runs"

	timeout 120 "$HOSTILE" -c "$CONF" --only 1 -N 20 --control --replay-s 5 >"$T/hostile-$name.out" 2>&1 ||
		fail "$name: build/hostile failed: $(tail -5 "$T/hostile-$name.out")"
	say "$name: $(grep '^hostile: sent=' "$T/hostile-$name.out")"
	timeout 60 "$RINGCTL" -c "$CONF" -n 1 run -t 30000 -- true ||
		fail "$name: member 1 grants no more after the attack"

	stop_member 1 60 || fail "$name: member 1 (valgrind) did not exit within 60 s of SIGTERM"
	((STOP_RC == 0)) || fail "$name: member 1 under valgrind exited $STOP_RC (99: valgrind found errors): $(grep -A20 'ERROR SUMMARY\|Invalid\|definitely' "$T/vg-$name.log" | head -40)"
	grep -q 'ERROR SUMMARY: 0 errors' "$T/vg-$name.log" ||
		fail "$name: valgrind: $(grep 'ERROR SUMMARY' "$T/vg-$name.log")"
	say "$name: member 1 left, exit 0, $(grep -o 'ERROR SUMMARY: .*' "$T/vg-$name.log" | head -1)"
	for i in 2 3; do
		stop_member $i 10 || fail "$name: member $i did not stop"
	done
}

phase keyed "$KEY"
phase unkeyed ""
pass "member 1 under valgrind, with and without secret_file: grants, hostile input, SIGTERM: exit 0, 0 errors, no definite or indirect leaks"
