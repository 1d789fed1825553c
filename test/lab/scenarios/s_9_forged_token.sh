#!/bin/bash
# needs: netns
# Scenario 9: a forged TOKEN, from a host on the network that is no member
# (lab.sh stranger: build/forge, from test/lab/forge.c), spoofing member F's
# address to member V, with the ring's fingerprint and its current epoch.
#  A. authentication = off: a client at H is in the critical region with the
#     real token and a client at V waits. V believes the forgery and grants:
#     two members hold at once (ringctl ring), the trace finds the overlap,
#     and the fenced file refuses H's later write (stale fence, exit 3)
#     because the forgery's fences are higher. The two tokens then meet
#     (the real one is a duplicate hop at V) and one is left.
#  B. the lab's default, a key: the same datagrams, and the same again
#     with a random 40-byte trailer, count as auth_failures at V and change
#     nothing else: V keeps waiting, H alone holds, no epoch or other
#     counter moves, and the trace finds no overlap.
source "$(dirname "$0")/lib.sh"

FORGE=$ROOT/build/forge
[[ -x $FORGE ]] || fail "build/forge is missing: make build/forge (make lab builds it)"
N=5 H=2 V=4 F=3 # F is V's predecessor: V has heard F, so it judges F's tokens at once
BASE=$LAB_DIR
COUNTERS='{epoch, state, has_token, in_cs, auth_failures, bad_packets, stale_dropped, config_mismatches, elections, regenerations, cs_entries}'

# use_dir NAME: this part's lab dir (logs, fenced file, clients' files).
use_dir() {
	LAB_DIR=$BASE/$1 OUT=$BASE/$1/resource CONF=$BASE/$1/h1/ring.ini LOG_DIR=$BASE/$1
	export LAB_DIR
	mkdir -p "$LAB_DIR"
}
counters() { status "$1" | jq -c "$COUNTERS"; }
holders() { ring_json | jq -c '[.[] | select(.has_token == true) | .node]'; }
state_is() { [[ $(status "$1" | jq -r .state) == "$2" ]]; }

# client M NAME: a client at member M that enters the critical region,
# appends "n=M f=FENCE NAME in" to the fenced file, says its fence in
# NAME.in, waits for NAME.go (30 s at most), then appends "... NAME out" and
# exits with that append's status (3: stale fence). It ignores SIGTERM so
# that its last write is made even after a revocation.
client() {
	SPAWN_OUT="$LAB_DIR/$2.client" spawn bash "$LAB" exec "$1" ringctl -c "$(lab ini "$1")" -n "$1" run -t 20000 -- sh -c '
		trap "" TERM
		ringctl fenced-append "$1" "n=$RING_NODE f=$RING_FENCE $2 in" || exit 9
		echo "$RING_FENCE" > "$0.in"
		i=0; while [ ! -e "$0.go" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
		ringctl fenced-append "$1" "n=$RING_NODE f=$RING_FENCE $2 out"
		rc=$?
		echo "out_append=$rc"
		exit $rc' "$LAB_DIR/$2" "$OUT" "$2"
}

# forge ARG...: build/forge as the stranger, against host 1's copy of the INI;
# its line goes to faults.log too, so that the trace shows when it came.
forge() {
	local t0 out
	t0=$(now_us)
	out=$(lab stranger "$FORGE" -c "$(lab ini 1)" --from $F --to $V "$@" 2>&1) || fail "forge $* failed: $out"
	fault_line "forged token $F->$V" "$t0" "$(now_us)"
	say "$out"
}

# setup: the real token pinned at H (its fence in FH, epoch E), a client
# waiting at V.
setup() {
	client $H hpin
	PIN_H=$BG_PID
	await_pinned $H hpin
	FH=$PIN_FENCE E=$((PIN_FENCE >> 32))
	client $V tpin
	PIN_T=$BG_PID
	wait_until 10 state_is $V waiting || fail "member $V does not wait for the token: $(status $V)"
	say "member $H holds the token (fence $(fence_str "$FH")), member $V waits"
}

# ---------------- A. authentication = off ----------------
use_dir open
lab_up $N authentication=off lease_ms=10000
lab ring | grep -m1 '^ring "' | grep -q 'datagrams NOT authenticated (authentication = off: anyone who can reach these ports can act as a member)' ||
	fail "ringctl ring does not say the ring is unauthenticated: $(lab ring | grep -m1 '^ring "')"
log_has 1 auth_off || fail "member 1 did not log auth_off"
setup
before_open=$(counters $V)
C=$(((FH & 0xffffffff) + 1000)) # the forgery's grants: above every real one
forge --epoch $E --counter $C --count 3
wait_until 10 test -s "$LAB_DIR/tpin.in" || fail "member $V did not grant the forged token: $(status $V)"
FT=$(cat "$LAB_DIR/tpin.in")
((FT > FH && FT >> 32 == E)) || fail "the forged grant's fence $(fence_str "$FT") is not above $(fence_str "$FH") in epoch $E"
two=$(holders)
[[ $two == "[$H,$V]" ]] || fail "ringctl ring shows holders $two, want [$H,$V]"
in_cs=$(for m in $H $V; do status $m | jq -r .in_cs; done | paste -sd ' ')
[[ $in_cs == "true true" ]] || fail "members $H and $V are not both in the critical region: in_cs $in_cs"
after_open=$(counters $V)
say "two holders: ringctl ring shows $two, both in the critical region (fences $(fence_str "$FH") and $(fence_str "$FT"))"
touch "$LAB_DIR/hpin.go" # the older holder writes again
wait_bg "$PIN_H" 15 || fail "the client at member $H still runs 15 s after its go"
h_out=$(cat "$LAB_DIR/hpin.client")
grep -q 'out_append=3' <<<"$h_out" || fail "member $H's write with fence $FH after $FT was not refused (exit 3): $h_out"
grep -q "stale fence $FH < $FT" <<<"$h_out" || fail "fenced-append did not say 'stale fence $FH < $FT': $h_out"
touch "$LAB_DIR/tpin.go"
wait_bg "$PIN_T" 15 || fail "the client at member $V still runs 15 s after its go"
((BG_RC == 0)) || fail "the client at member $V exited $BG_RC: $(cat "$LAB_DIR/tpin.client")"
wait_until 15 ring_whole $N || fail "the two tokens did not become one within 15 s: $(ring_json)"
trace_check --allow-overlap
ov_open=$(tj .overlaps)
((ov_open >= 1)) || fail "the trace finds no overlap on the unauthenticated ring"
((TR_RC == 0)) || fail "the trace found more than the overlap (exit $VR_RC)"
note_open="open: V=$V took the forged token (epoch $E, counter $C): state $(jq -r .state <<<"$before_open") -> $(jq -r .state <<<"$after_open"), cs_entries $(jq .cs_entries <<<"$before_open") -> $(jq .cs_entries <<<"$after_open"), auth_failures $(jq .auth_failures <<<"$before_open") -> $(jq .auth_failures <<<"$after_open"), bad_packets $(jq .bad_packets <<<"$before_open") -> $(jq .bad_packets <<<"$after_open"); holders $two; overlaps $ov_open; H's write refused (stale fence $(fence_str "$FH") < $(fence_str "$FT"), exit 3)"
say "open ring: forged token accepted at $V: $before_open -> $after_open; $ov_open overlap(s); H's late write refused (stale fence, exit 3); one token again"
lab down >"$LAB_DIR/down.out" 2>&1 || fail "lab.sh down failed: $(cat "$LAB_DIR/down.out")"
LAB_UP=0

# ---------------- B. keyed (the lab's default) ----------------
use_dir keyed
lab_up $N lease_ms=10000
lab ring | grep -m1 '^ring "' | grep -q "datagrams authenticated ($LAB_DIR/h1/ring.key)" ||
	fail "ringctl ring does not say the ring is authenticated: $(lab ring | grep -m1 '^ring "')"
! log_has 1 auth_off || fail "a keyed member logged auth_off"
setup
before=$(counters $V)
epochs0=$(ring_json | jq -c '[.[].epoch]')
C=$(((FH & 0xffffffff) + 1000))
forge --epoch $E --counter $C --count 3
forge --epoch $E --counter $C --count 3 --trailer
a0=$(jq .auth_failures <<<"$before")
counted() { (($(status $V | jq .auth_failures) >= a0 + 6)); }
wait_until 10 counted || fail "member $V counted $(($(status $V | jq .auth_failures) - a0)) auth failures, want 6"
after=$(counters $V)
# Everything but auth_failures as it was; the datagrams were all read, so
# anything they did would show by now.
same=$(jq -n --argjson a "$before" --argjson b "$after" '($a | del(.auth_failures)) == ($b | del(.auth_failures)) and $b.auth_failures - $a.auth_failures == 6')
[[ $same == true ]] || fail "the forgery changed member $V: $before -> $after"
[[ $(holders) == "[$H]" ]] || fail "ringctl ring shows holders $(holders), want [$H]"
[[ $(ring_json | jq -c '[.[].epoch]') == "$epochs0" ]] || fail "epochs moved: $epochs0 -> $(ring_json | jq -c '[.[].epoch]')"
[[ ! -s $LAB_DIR/tpin.in ]] || fail "member $V granted during the attack"
say "keyed ring: 6 forged datagrams at $V: $before -> $after"
touch "$LAB_DIR/hpin.go"
wait_bg "$PIN_H" 15 || fail "the client at member $H still runs 15 s after its go"
((BG_RC == 0)) || fail "the client at member $H exited $BG_RC: $(cat "$LAB_DIR/hpin.client")"
wait_until 15 test -s "$LAB_DIR/tpin.in" || fail "member $V was not granted after $H released"
touch "$LAB_DIR/tpin.go"
wait_bg "$PIN_T" 15 || fail "the client at member $V still runs 15 s after its go"
((BG_RC == 0)) || fail "the client at member $V exited $BG_RC: $(cat "$LAB_DIR/tpin.client")"
FT2=$(cat "$LAB_DIR/tpin.in")
trace_strict
ov_keyed=$(tj .overlaps)
((TR_RC == 0)) || fail "the trace checker found a violation on the keyed ring (exit $VR_RC)"
bad=$(fences_never_back) || fail "the fenced file's fences went back: $bad"

note_keyed="keyed: auth_failures $(jq .auth_failures <<<"$before") -> $(jq .auth_failures <<<"$after") at V=$V, bad_packets $(jq .bad_packets <<<"$before") -> $(jq .bad_packets <<<"$after"), stale_dropped, elections, regenerations, cs_entries, epoch unchanged; holders [$H]; overlaps $ov_keyed; V granted after H at $(fence_str "$FT2")"
result "overlaps=open $ov_open / keyed $ov_keyed" "stale_refused=1" \
	"verdict=OK (open: 2 holders; keyed: refused)" "note=$note_open" "note=$note_keyed"
pass "forged TOKEN: without a key, 2 holders and a refused stale write; with a key, $(($(jq .auth_failures <<<"$after") - a0)) auth_failures and nothing else"
