#!/bin/bash
# Key rotation without downtime (docs/security.md "Rotating the key"): a
# live 3-member ring, each member with its own copy of the key file as on
# separate hosts, under a fenced workload. Step 1: NEW second on every
# host, SIGHUP; step 2: NEW first, OLD second, SIGHUP; step 3: OLD gone,
# SIGHUP. Each SIGHUP goes to one member by PID and must log
# keys_reloaded, with auth_failures flat and grants going on. Then what
# must be refused: a reload of a file readable by others or with a short
# key (keys_reload_failed, old keys kept), such files at start (exit 78),
# and a member whose only key the others do not know (auth_failures grow;
# fixing its file and SIGHUP bring it back).
source "$(dirname "$0")/lib.sh"

MEMBERS=3
"$RINGCTL" keygen "$T/old.key" >/dev/null && "$RINGCTL" keygen "$T/new.key" >/dev/null &&
	"$RINGCTL" keygen "$T/rogue.key" >/dev/null || fail "ringctl keygen failed"

# set_keys ID KEY...: member ID's key file holds those keys, in that order;
# written aside and renamed, mode 0600, as an operator should.
set_keys() {
	local id=$1 f=$T/key-$1
	shift
	(umask 077 && cat "$@" >"$f.tmp") && mv "$f.tmp" "$f" || fail "cannot write $f"
}

make_conf "$CONF" $MEMBERS secret_file=
for ((i = 1; i <= MEMBERS; i++)); do
	set_keys $i "$T/old.key"
	sed "s|^\[ring\]$|[ring]\nsecret_file = $T/key-$i|" "$CONF" >"$T/ring-$i.ini"
done
cp "$T/ring-1.ini" "$CONF" # ringctl ring and status read member 1's copy
for ((i = 1; i <= MEMBERS; i++)); do CONF=$T/ring-$i.ini start_member $i; done
wait_until 10 any_log_has token_regen || fail "no token minted within 10 s"
say "$MEMBERS members up, each with its own key file holding OLD"

FENCED=$T/fenced
export RINGCTL FENCED T
work() {
	local i end=$((SECONDS + 120))
	for ((i = 0; i < 20000 && SECONDS < end; i++)); do
		[[ -e $T/stop ]] && break
		"$RINGCTL" -c "$T/ring-$1.ini" -n "$1" run -t 10000 -- \
			sh -c '"$RINGCTL" fenced-append "$FENCED" "n=$RING_NODE f=$RING_FENCE"'
		echo "$1 $?" >>"$T/runs"
	done
}
for ((i = 1; i <= MEMBERS; i++)); do spawn work $i; done
grants_at_least() { (($(fenced_lines "$FENCED") >= $1)); }
wait_until 20 grants_at_least 10 || fail "no grants from the workload"

auth_total() { counters "$T/c.json" && jq '[.[].auth_failures] | add' "$T/c.json"; }
auth_above() { (($(auth_total) > $1)); } # (a function, so that wait_until asks again each time)
reloads() { log_count "$1" keys_reloaded; }
# hup ID: SIGHUP to member ID by PID; waits until it logged one more
# keys_reloaded (or keys_reload_failed with WANT=keys_reload_failed).
hup() {
	local id=$1 want=${WANT:-keys_reloaded} n
	n=$(log_count "$id" "$want")
	kill -HUP "${PIDS[$id]}" || fail "SIGHUP to member $id (pid ${PIDS[$id]}) failed"
	more() { (($(log_count "$1" "$2") > $3)); }
	wait_until 10 more "$id" "$want" "$n" || fail "member $id logged no $want within 10 s of SIGHUP"
}
# settled_grants: 5 more grants, proof the ring works in the state it is in.
more_grants() {
	local g
	g=$(fenced_lines "$FENCED")
	wait_until 20 grants_at_least $((g + 5)) || fail "$1: grants stopped"
}

a0=$(auth_total)
step() { # N KEY...: step N on every member in turn
	local n=$1 id
	shift
	for ((id = 1; id <= MEMBERS; id++)); do
		set_keys $id "$@"
		hup $id
		more_grants "step $n, member $id"
		a=$(auth_total)
		((a == a0)) || fail "step $n, member $id: auth_failures went from $a0 to $a"
	done
	say "step $n done on all $MEMBERS members: keys_reloaded logged, auth_failures flat at $a0, grants go on"
}
step 1 "$T/old.key" "$T/new.key"
step 2 "$T/new.key" "$T/old.key"
step 3 "$T/new.key"
# OLD is gone everywhere: a datagram sealed with it is now refused.
sed "s|^secret_file = .*|secret_file = $T/old.key|" "$CONF" >"$T/ring-old.ini"
"$RINGCTL" -c "$T/ring-old.ini" ring --json >"$T/old-ring.json" 2>/dev/null
old_answers=$(jq '[.[] | select(.state != "down")] | length' "$T/old-ring.json" 2>/dev/null)
((${old_answers:-0} == 0)) || fail "members still answer a status request sealed with the old key"
wait_until 5 auth_above "$a0" || fail "a request sealed with the old key was not counted as an auth failure"
say "a request sealed with OLD: no member answers, auth_failures $a0 -> $(auth_total)"

# ---- what must be refused ----
chmod 644 "$T/key-2"
WANT=keys_reload_failed hup 2
reason=$(jq -rR 'fromjson? | select(.event == "keys_reload_failed") | .error' "$T/n2.log" | tail -1)
[[ $reason == *"readable by others"* ]] || fail "reload of a 0644 key file: '$reason'"
chmod 600 "$T/key-2"
printf 'short-key\n' >"$T/short.key" && chmod 600 "$T/short.key"
set_keys 3 "$T/short.key"
WANT=keys_reload_failed hup 3
reason=$(jq -rR 'fromjson? | select(.event == "keys_reload_failed") | .error' "$T/n3.log" | tail -1)
[[ $reason == *"at least 32"* ]] || fail "reload of a short key: '$reason'"
set_keys 3 "$T/new.key"
more_grants "after refused reloads (old keys kept)"
say "refused reloads: 0644 file and short key logged keys_reload_failed; the old keys stayed, grants go on"
for bad in mode short; do
	sed "s|^secret_file = .*|secret_file = $T/bad-$bad.key|; s|^state_dir = .*|state_dir = $T/state-bad|" \
		"$CONF" >"$T/bad-$bad.ini"
done
cp "$T/new.key" "$T/bad-mode.key" && chmod 640 "$T/bad-mode.key"
cp "$T/short.key" "$T/bad-short.key"
for bad in mode short; do
	timeout 10 "$RINGD" -c "$T/bad-$bad.ini" -n 1 2>"$T/bad-$bad.err"
	rc=$?
	((rc == 78)) || fail "ringd with a bad key file ($bad) exited $rc, want 78: $(cat "$T/bad-$bad.err")"
done
say "ringd refuses at start (exit 78): $(head -1 "$T/bad-mode.err" | cut -c1-80)..."

# A member whose only key nobody else knows: refused, counted, skipped.
a1=$(auth_total)
set_keys 1 "$T/rogue.key"
hup 1
wait_until 10 auth_above "$a1" || fail "member 1 with an unknown key: auth_failures did not grow"
say "member 1 signing with a key the others lack: auth_failures $a1 -> $(auth_total)"
set_keys 1 "$T/new.key"
hup 1
serves_1() { timeout 5 "$RINGCTL" -c "$T/ring-1.ini" -n 1 run -t 4000 -- true; }
wait_until 30 serves_1 || fail "member 1 did not serve a grant within 30 s of getting the right key back"
more_grants "after member 1's return"
say "member 1 back with NEW: grants again"

touch "$T/stop"
for pid in "${BG_PIDS[@]}"; do wait_gone "$pid" 30 || fail "a workload loop did not stop"; done
for ((i = 1; i <= MEMBERS; i++)); do
	stop_member $i 10 || fail "member $i did not stop within 10 s"
	((STOP_RC == 0)) || fail "member $i exited $STOP_RC"
done
trace_ok || fail "ringctl trace: $(cat "$T/trace.json")"
notinc=$(sed 's/.* f=//' "$FENCED" | awk 'NR > 1 && $1 <= prev { print NR; exit } { prev = $1 }')
[[ -z $notinc ]] || fail "fenced file not strictly increasing at line $notinc"
pass "rotated OLD -> NEW in 3 steps on a live ring: $((3 * MEMBERS)) SIGHUPs, auth_failures flat, $(fenced_lines "$FENCED") grants, trace ok"
