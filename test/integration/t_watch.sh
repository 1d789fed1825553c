#!/bin/bash
# ringctl watch on a real 5-member ring: its one-line-per-round output
# (not a terminal) names all 5 members and the token's holder; a client
# in the critical region is named by its member, fence and a growing
# duration, on plain lines and on an 80-column screen whose lines all fit,
# then free once released; a member
# killed with -9 is down by the next round and, restarted, comes back
# marked restarted; SIGINT ends it with 0; usage and config errors exit 2
# and 78. On a terminal (script(1)'s pty) it enters the alternate screen,
# gives it back on SIGTSTP and takes it again, and leaves it on SIGINT.
source "$(dirname "$0")/lib.sh"
need_tools script

N=5 V=3
make_conf "$CONF" $N
start_ring $N
wait_until 5 any_log_has token_regen || fail "no token minted"
# A grant at V, so that its counters are above zero: its restart is then
# seen by watch as counters going down.
"$RINGCTL" -c "$CONF" -n $V run -t 5000 -- true || fail "run at member $V: exit $?"

# ---- usage and configuration errors ----
expect_rc() { # RC ARG...: ringctl ARG... exits RC
	local want=$1 rc
	shift
	timeout 10 "$RINGCTL" "$@" >/dev/null 2>&1
	rc=$?
	((rc == want)) || fail "ringctl $* exited $rc, not $want"
}
expect_rc 2 -c "$CONF" watch --interval 49
expect_rc 2 -c "$CONF" watch --interval 60001
expect_rc 2 -c "$CONF" watch --interval x
expect_rc 2 -c "$CONF" watch --count 0
expect_rc 2 -c "$CONF" watch --bogus
expect_rc 2 watch --count 1
printf '[ring]\nname = x\nbogus = 1\n' >"$T/bad.ini"
expect_rc 78 -c "$T/bad.ini" watch --count 1
"$RINGCTL" --help | grep -q -- '-c CONFIG watch \[--interval MS\]' || fail "--help does not describe watch"

# ---- plain: one line per round ----
out=$(timeout 20 "$RINGCTL" -c "$CONF" watch --plain --count 3 --interval 100) ||
	fail "watch --plain --count 3 exited $?"
lines=$(grep -c '' <<<"$out")
((lines == 3)) || fail "watch --count 3 wrote $lines lines, not 3: $out"
while IFS= read -r l; do
	[[ $l == *" up=5/5 "* ]] || fail "a round without 5 of 5 up: $l"
	for ((i = 1; i <= N; i++)); do
		[[ $l == *"| $i "* ]] || fail "member $i missing from: $l"
	done
	# A round's answers come one by one, so a hop between two of them
	# shows both ends holding (token=1,2 parked=no): a moving token, not
	# two. Every member named must say so in its own entry.
	[[ $l =~ \ token=([0-9]+(,[0-9]+)?)\ parked=(yes|no)\  ]] || fail "no holder in: $l"
	hs=${BASH_REMATCH[1]}
	for h in ${hs//,/ }; do
		[[ $l =~ \|\ $h\ [a-z-]+\ token=(here|parked)\  ]] || fail "holder $h's own entry has no token: $l"
	done
done <<<"$out"
# The holder watch names is one `ringctl ring` names (a parked token stays put).
h_ring=$(holder)
say "watch: 3 lines of 5 members, holder $hs; ringctl ring says $h_ring"
named_by_watch() { local c; for c in ${hs//,/ }; do [[ " $(holder) " == *" $c "* ]] && return 0; done; return 1; }
wait_until 2 named_by_watch || fail "watch says the token is at $hs, ringctl ring at '$(holder)'"
# This loopback ring names no key: the ring's own key in state_dir keys it,
# and watch, reading the same key, says so and hears every member.
head -n 1 <<<"$out" | grep -q ' auth=on up=5/5 ' || fail "watch does not say the ring is authenticated: $(head -n 1 <<<"$out")"
# A second line has rates (the first has none: one answer is no rate).
sed -n 2p <<<"$out" | grep -Eq ' grants/s=[0-9]+\.[0-9] hops/s=[0-9]+\.[0-9] \|' ||
	fail "no ring rates in the second line: $(sed -n 2p <<<"$out")"

# ---- who holds the lock (issue 30) ----
# A client of member 2 in the critical region: every plain line names
# member 2 with its fence and a duration that grows; on an 80-column
# terminal the screen says so on its second line, the title keeps its
# figures whole and no line is wider than 80. Once released: free.
H=2
spawn "$RINGCTL" -c "$CONF" -n $H run -t 10000 -- sh -c 'echo "$RING_FENCE" >"$0.tmp" && mv "$0.tmp" "$0"; sleep 4' "$T/granted"
HOLD=$BG_PID
wait_until 10 test -s "$T/granted" || fail "run at member $H was not granted"
f=$(<"$T/granted")
lf="$((f >> 32)):$((f & 0xffffffff))"
out=$(timeout 20 "$RINGCTL" -c "$CONF" watch --plain --count 3 --interval 300) || fail "watch --plain during a hold exited $?"
prev=-1
while IFS= read -r l; do
	[[ $l =~ \ lock=$H\ held_ms=([0-9]+)\ lock_fence=$lf\  ]] || fail "member $H (fence $lf) not named as in the critical region: $l"
	ms=${BASH_REMATCH[1]}
	((ms > prev)) || fail "the hold's duration did not grow: $ms ms after $prev ms"
	((first = prev < 0 ? ms : first, prev = ms))
done <<<"$out"
((prev - first >= 300)) || fail "held_ms grew only $((prev - first)) ms over three rounds 300 ms apart"
say "watch: member $H in the critical region under fence $lf, for $first then $prev ms"
# script(1)'s pty made 80 columns wide; --count ends the watch by itself.
strip() { sed -e 's/\x1b\[[0-9;?]*[A-Za-z]/\n/g' -e 's/\r//g' "$1" | grep -v '^$' | grep -v '^Script '; }
timeout 20 script -qefc "stty cols 80 rows 24; exec '$RINGCTL' -c '$CONF' watch --interval 100 --count 2" "$T/tty80.out" >/dev/null ||
	fail "watch on an 80-column terminal exited $?"
screen=$(strip "$T/tty80.out")
grep -Eq "^lock held at member $H for [0-9]+\.[0-9] s \(fence $lf\)  token (parked )?at $H\$" <<<"$screen" ||
	fail "the screen does not name member $H in the critical region: $(head -n 3 <<<"$screen")"
grep -Eq '^ring ".*  [0-9]+/[0-9]+ up  [0-9.kMG>]+ grants/s  [0-9.kMG>]+ hops/s$' <<<"$screen" ||
	fail "the title is cut: $(grep -m1 '^ring ' <<<"$screen")"
wide=$(awk 'length($0) > 80' <<<"$screen" | head -n 1)
[[ -z $wide ]] || fail "a line wider than 80 columns: $wide"
wait_bg "$HOLD" 15 || fail "the hold at member $H did not end"
((BG_RC == 0)) || fail "run at member $H exited $BG_RC"
out=$(timeout 20 "$RINGCTL" -c "$CONF" watch --plain --count 1) || fail "watch after the release exited $?"
[[ $out == *" lock=free "* ]] || fail "the lock not free after the release: $out"
timeout 20 script -qefc "stty cols 80 rows 24; exec '$RINGCTL' -c '$CONF' watch --count 1" "$T/tty80.out" >/dev/null
strip "$T/tty80.out" | grep -Eq '^lock free  token ' || fail "the screen does not say the lock is free: $(strip "$T/tty80.out" | head -n 3)"
say "released: lock=free; on 80 columns every line fits and the title ends with its rates"

# ---- a member killed, restarted ----
W_OUT=$T/watch.out
SPAWN_OUT=$W_OUT spawn "$RINGCTL" -c "$CONF" watch --interval 100
WATCH=$BG_PID
lines_at_least() { (($(grep -c '' "$W_OUT") >= $1)); }
wait_until 5 lines_at_least 2 || fail "watch in the background wrote no lines"
kill_member $V
t_kill=$(now_ms)
n0=$(grep -c '' "$W_OUT")
# The round under way when the kill came may have had V's answer; the one
# after it must not. (+3: lines n0+1 and n0+2 complete, the third begun.)
wait_until 5 lines_at_least $((n0 + 3)) || fail "watch stopped writing after the kill"
sed -n "$((n0 + 1)),$((n0 + 2))p" "$W_OUT" | grep -q "| $V down |" ||
	fail "member $V not down within two rounds of its kill -9: $(sed -n "$((n0 + 1)),$((n0 + 2))p" "$W_OUT")"
line=$(grep "| $V down |" "$W_OUT" | head -n 1)
[[ $line == *" up=4/5 "* ]] || fail "a down member still counted up: $line"
say "member $V down in watch's output $(($(now_ms) - t_kill)) ms or less after kill -9"

n1=$(grep -c '' "$W_OUT")
start_member $V
back() { tail -n +"$((n1 + 1))" "$W_OUT" | grep -Eq "up=5/5 .*\| $V [a-z-]+ .* restarted( \||$)"; }
wait_until 10 back || fail "member $V not shown back and restarted after its restart: $(tail -n 1 "$W_OUT")"
say "member $V back: $(tail -n +"$((n1 + 1))" "$W_OUT" | grep -Eo "\| $V [a-z-]+ .* restarted" | head -n 1 | cut -c1-60)..."
# No negative rates, ever.
! grep -Eq '/s=-[0-9]' "$W_OUT" || fail "a negative rate: $(grep -E '/s=-[0-9]' "$W_OUT" | head -n 1)"

kill -INT "$WATCH"
wait_bg "$WATCH" 5 || fail "watch did not end within 5 s of SIGINT"
((BG_RC == 0)) || fail "watch exited $BG_RC on SIGINT, not 0"

# ---- a terminal ----
# script(1) gives watch a pty; -e returns watch's status. exec: the shell
# script starts is replaced by ringctl, so script's child is watch itself.
TTY_OUT=$T/tty.out
spawn script -qefc "exec '$RINGCTL' -c '$CONF' watch --interval 100" "$TTY_OUT"
SCRIPT=$BG_PID
child_of() { local c; c=$(cat /proc/"$1"/task/*/children 2>/dev/null) && [[ -n ${c// /} ]] && echo $c; }
wait_until 5 child_of "$SCRIPT" || fail "script(1) started nothing"
TWATCH=$(child_of "$SCRIPT")
has() { grep -c -F -- "$1" "$TTY_OUT" 2>/dev/null; }
ENTER=$'\e[?1049h' LEAVE=$'\e[?1049l'
drawn() { [[ $(has "$ENTER") -ge 1 ]] && grep -q '5/5 up' "$TTY_OUT"; }
wait_until 5 drawn || fail "watch on a terminal drew no screen: $(head -c 300 "$TTY_OUT" | od -c | head)"
grep -q -- '--plain\|ring=' "$TTY_OUT" && fail "watch on a terminal wrote plain lines"
# Ctrl-Z: the terminal is given back before stopping, and taken again on
# resume. (Under script, watch leads an orphaned process group, which the
# kernel does not stop; giving back and taking again must happen anyway.)
# (has runs inside each try: a $(has ...) argument would be counted once,
# before the first try, and never see watch's answer.)
at_least() { (($(has "$1") >= $2)); }
kill -TSTP "$TWATCH"
wait_until 3 at_least "$LEAVE" 1 || fail "SIGTSTP did not give the terminal back"
kill -CONT "$TWATCH"
wait_until 3 at_least "$ENTER" 2 || fail "the alternate screen not taken again after SIGCONT"
kill -INT "$TWATCH"
wait_bg "$SCRIPT" 5 || fail "watch on a terminal did not end within 5 s of SIGINT"
((BG_RC == 0)) || fail "watch on a terminal exited $BG_RC on SIGINT, not 0"
# script(1) appends its own "Script done" line; what watch wrote last must
# be the cursor shown and the screen left, with no drawing after them.
tty_all=$(<"$TTY_OUT")
[[ $tty_all == *$'\e[?25h\e[?1049l'* ]] || fail "the terminal not restored at exit (cursor shown, screen left)"
after=${tty_all##*$'\e[?1049l'}
[[ $after != *$'\e['* ]] || fail "watch drew after leaving the alternate screen: $(od -c <<<"$after" | head -n 3)"
pass "plain lines name 5 members and holder $hs; the lock's holder $H and its duration, then free; kill -9 of $V down within two rounds, back marked restarted; SIGINT exit 0; on a pty the alternate screen entered, given back on SIGTSTP, restored on SIGINT"
