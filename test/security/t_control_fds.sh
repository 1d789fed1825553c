#!/bin/bash
# A control-socket client that holds connections until the member runs out
# of file descriptors (SPEC.md "Hostile input": anything written to the
# control socket never crashes a member). Member 1 of a keyed 3-member ring
# gets a limit of 256 open files (prlimit, as a systemd unit's
# LimitNOFILE would) and build/hostile --hold opens 300 connections. While
# they are held, member 3 leaves (SIGTERM), so the ring moves to a new
# epoch that member 1 must persist. Member 1 must survive that, and once
# the connections are gone answer STATUS and serve a grant. Also measured
# (a "| " report line, not asserted): member 1's CPU use and stderr lines
# meanwhile.
source "$(dirname "$0")/lib.sh"

command -v prlimit >/dev/null || fail "prlimit is missing (util-linux)"
[[ -x $HOSTILE ]] || fail "build/hostile missing (make build/hostile)"
"$RINGCTL" keygen "$KEY" >/dev/null || fail "ringctl keygen $KEY failed"
make_conf "$CONF" 3
for i in 1 2 3; do start_member $i; done
wait_until 10 any_log_has token_regen || fail "no token minted within 10 s"
P=${PIDS[1]}
prlimit --pid "$P" --nofile=256:256 || fail "prlimit on member 1 (pid $P) failed"

epoch_before=$(status 1 | jq .epoch)
set -m # its own process group, as cleanup expects of BG_PIDS
"$HOSTILE" -c "$CONF" --only 1 --hold 300 "$T/release" >"$T/hold.out" 2>&1 &
HOLD=$!
set +m
BG_PIDS+=("$HOLD")
holding() { grep -q '^hostile: holding' "$T/hold.out"; }
wait_until 20 holding || fail "build/hostile did not report its connections: $(cat "$T/hold.out")"
say "$(cat "$T/hold.out"); member 1 has $(ls /proc/"$P"/fd | wc -l) open files (limit 256)"
cpu() { local s; s=$(cat "/proc/$P/stat") && s=${s##*) } && set -- $s && echo $((${12} + ${13})); }
c0=$(cpu) e0=$(wc -l <"$T/n1.err") t0=$(now_ms)

stop_member 3 10 || fail "member 3 did not leave within 10 s"
new_epoch() { (($(jq -rR 'fromjson? | select(.event == "member_leave") | .epoch' "$T/n2.log" | wc -l) > 0)); }
wait_until 10 new_epoch || fail "member 2 saw no member_leave"
# Member 1 adopts the new epoch (persisting it) on the token's next visit.
adopted() { pid_gone "$P" || (($(jq -cR 'fromjson? | select(.event == "token_recv")' "$T/n1.log" | tail -1 | jq .epoch) > epoch_before)); }
wait_until 10 adopted || fail "member 1 took no token of the new epoch within 10 s while its descriptors were held"
c1=$(cpu 2>/dev/null) e1=$(wc -l <"$T/n1.err")
t1=$(now_ms)
echo "| while a client held its descriptors, member 1 $([[ -n $c1 ]] && echo "used $((c1 - c0)) CPU ticks (1/100 s) in $((t1 - t0)) ms and ")wrote $((e1 - e0)) lines to stderr, e.g. \"$(grep -m1 'Error from accept' "$T/n1.err")\""
touch "$T/release"
wait_gone "$HOLD" 10 || fail "build/hostile --hold did not let go"
pid_gone "$P" && fail "member 1 died while a client held its file descriptors: $(grep -v 'Error from accept' "$T/n1.err" | tail -2)"
wait_until 10 status 1 || fail "member 1 does not answer STATUS after the connections closed"
timeout 20 "$RINGCTL" -c "$CONF" -n 1 run -t 15000 -- true || fail "member 1 serves no grant after the connections closed"
pass "member 1 survived $(sed -n 's/^hostile: holding \([0-9]*\).*/\1/p' "$T/hold.out") held connections over its file limit and an epoch change, then served a grant"
