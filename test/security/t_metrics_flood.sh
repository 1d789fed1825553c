#!/bin/bash
# The metrics listener cannot take a member down (SPEC.md "Hostile input":
# any listener a member opens is bounded in connections and time). Member 1
# of a keyed 3-member ring serves metrics_listen and runs with a limit of
# 256 open files (prlimit, as a unit's LimitNOFILE would). As nobody,
# test/security/metrics_flood.py keeps 400 idle connections to it (opening
# a new one for each the member closes) and 4 slowloris clients. Over the
# window of the attack (until it has made 1600 more connections and had its
# slow clients dropped, at most 15 s) member 1 must stay cheap (CPU under
# 25%), log little for it (under 8 KiB/s, grants' own lines aside), answer
# STATUS within 3 s and grant within 2 s every time it is asked; once the
# attacker lets go, GET /metrics answers again. Then slowloris clients alone
# (a byte a second) are dropped within 10 s. Every figure is reported ("| "
# lines) before the verdict, so a failing run shows them too.
source "$(dirname "$0")/lib.sh"
need_tools curl prlimit setpriv
PY=/usr/bin/python3 # the system's: an unprivileged user has no pyenv
[[ -x $PY ]] || fail "$PY is missing"
ATTACKER=$(dirname "$0")/metrics_flood.py
LIMIT=256 BULK=400 SLOW=4
CPU_MAX_PCT=25 LOG_MAX_BPS=8192 GRANT_MAX_MS=2000 SLOW_MAX_S=10
RINGD_ARGS=() # no token hops in the logs: their size is one of the figures

# Three UDP ports for the members and one more whose TCP twin is free, for
# the HTTP listener: reserved together against the other scripts.
pick_ports_with_http 4
"$RINGCTL" keygen "$KEY" >/dev/null || fail "ringctl keygen $KEY failed"
make_conf "$CONF" 3 node.1.metrics_listen=127.0.0.1:$HTTP
RINGD_WRAP=(prlimit --nofile=$LIMIT:$LIMIT)
start_member 1
RINGD_WRAP=()
start_member 2
start_member 3
wait_until 10 any_log_has token_regen || fail "no token minted within 10 s"
P=${PIDS[1]}
[[ $(awk '/^Max open files/ {print $4}' /proc/"$P"/limits) == "$LIMIT" ]] ||
	fail "member 1 does not run with $LIMIT open files: $(grep 'open files' /proc/"$P"/limits)"
scrape() { curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$HTTP/metrics"; }
wait_until 5 scrape || fail "GET /metrics does not answer before the attack"

problems=()
bad() { problems+=("$*"); }
cpu() { local s; s=$(cat "/proc/$P/stat") && s=${s##*) } && set -- $s && echo $((${12} + ${13})); }
err_bytes() { wc -c <"$T/n1.err"; }
# flood_log_bytes FROM TO: what member 1's log got between those offsets,
# less the grants' own lines (cs_*, token_*): what the attack made it write.
flood_log_bytes() {
	tail -c +$(($1 + 1)) "$T/n1.log" | head -c $(($2 - $1)) |
		grep -v -e '"event":"cs_' -e '"event":"token_' | wc -c
}
# attack NAME BULK SLOW: the attacker as nobody, in its own process group,
# its lines in $T/NAME.out; its pid in ATK.
attack() {
	set -m
	prlimit --nofile=4096:4096 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$PY" "$ATTACKER" "$HTTP" "$2" "$3" 60 >"$T/$1.out" 2>&1 &
	ATK=$!
	set +m
	BG_PIDS+=("$ATK")
}
# got NAME KEY: KEY's value in the attacker's last line (0 before any).
got() { tail -n 1 "$T/$1.out" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | grep . || echo 0; }
over() { (($(got flood connects) > LIMIT)); }

# ---- the flood: more connections than member 1 may open files ----
attack flood $BULK $SLOW
wait_until 20 over || bad "the attacker completed only $(got flood connects) connections in 20 s"
uid=$(awk '/^Uid:/ {print $2}' /proc/"$ATK"/status 2>/dev/null)
[[ $uid == "$(id -u nobody)" ]] || fail "the attacker runs as uid '$uid', not nobody's"
n0=$(got flood connects) c0=$(cpu) e0=$(err_bytes) l0=$(wc -c <"$T/n1.log") t0=$(now_ms)
timeout 3 "$RINGCTL" -c "$CONF" -n 1 status --json >/dev/null || bad "member 1 did not answer STATUS within 3 s during the attack"
# The window: until the attacker has made 4 x BULK more connections (3 s
# or more at its pace) and had its slow clients dropped, at most 15 s; a
# grant at member 1 every poll meanwhile, each timed.
grants=0 worst=0 gfail=0
window_done() { (($(got flood connects) >= n0 + 4 * BULK && $(got flood slow_dropped) >= SLOW)); }
grant_then_check() {
	local g0 g
	g0=$(now_ms)
	if timeout 5 "$RINGCTL" -c "$CONF" -n 1 run -t 3000 -- true; then
		g=$(($(now_ms) - g0))
		((g > worst)) && worst=$g
		grants=$((grants + 1))
	else
		gfail=$((gfail + 1))
	fi
	window_done
}
wait_until 15 grant_then_check || bad "the attack window did not end within 15 s: $(tail -n 1 "$T/flood.out")"
c1=$(cpu) e1=$(err_bytes) l1=$(wc -c <"$T/n1.log") t1=$(now_ms)
((gfail == 0)) || bad "$gfail grants at member 1 failed or took over 3 s during the attack"
fds=$(ls /proc/"$P"/fd 2>/dev/null | wc -l)
ms=$((t1 - t0))
pct=$(((c1 - c0) * 10 * 100 / ms)) # ticks of 10 ms
bytes=$((e1 - e0 + $(flood_log_bytes "$l0" "$l1")))
bps=$((bytes * 1000 / ms))
echo "| attacker (nobody): $(got flood connects) connections completed, $(got flood open) open (peak $(got flood peak)), $(got flood pending) waiting in connect(), $(got flood closed) closed by member 1; member 1 has $fds of $LIMIT files open"
echo "| over $ms ms of attack member 1 used $pct% CPU, wrote $bytes bytes of log and stderr for it ($bps B/s), served $grants grants (slowest $worst ms, $gfail failed)"
end_groups "$ATK"
wait_until 10 scrape || bad "GET /metrics does not answer 10 s after the attacker let go"
pid_gone "$P" && bad "member 1 died: $(tail -n 2 "$T/n1.err")"
((pct < CPU_MAX_PCT)) || bad "member 1 used $pct% CPU during the attack (want < $CPU_MAX_PCT%)"
((bps < LOG_MAX_BPS)) || bad "member 1 logged $bps B/s during the attack (want < $LOG_MAX_BPS)"
((grants >= 3)) || bad "only $grants grants during the attack"
((worst < GRANT_MAX_MS)) || bad "a grant took $worst ms during the attack (want < $GRANT_MAX_MS)"

# ---- slowloris alone: a byte a second does not keep a connection ----
pid_gone "$P" || {
	attack slow 0 $SLOW
	dropped() { (($(got slow slow_dropped) >= SLOW)); }
	wait_until $SLOW_MAX_S dropped || bad "slowloris: $(got slow slow_dropped) of $SLOW slow clients dropped within $SLOW_MAX_S s (oldest open $(got slow slow_oldest) s)"
	echo "| slowloris: $(got slow slow_dropped) slow clients dropped, the longest lived $(got slow slow_life) s"
	end_groups "$ATK"
	wait_until 10 scrape || bad "GET /metrics does not answer after the slowloris clients"
}
logged=$(grep -c '"event":"metrics_' "$T/n1.log")
echo "| member 1 logged $logged metrics_* lines in all: $(grep -o '"event":"metrics_[a-z_]*"' "$T/n1.log" | sort | uniq -c | tr -s ' \n' ' ')"

if ((${#problems[@]})); then
	printf '  %s\n' "${problems[@]}"
	fail "${#problems[@]} problem(s) under a metrics flood"
fi
pass "member 1 stayed up and cheap under $BULK connections over its $LIMIT-file limit and slowloris, and served grants"
