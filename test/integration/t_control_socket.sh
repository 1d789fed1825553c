#!/bin/bash
# The control socket: mode 0600; junk gets "ERR ..." and harms nothing; a
# line over 512 bytes without a newline gets its client dropped, the member
# runs on; a client that disconnects while it holds (or waits) releases.
source "$(dirname "$0")/lib.sh"

make_conf "$CONF" 3 lease_ms=30000
start_ring 3
wait_until 5 any_log_has token_regen || fail "no token minted"
S=$T/state/node-1.sock

# ---- mode 0600 ----
for id in 1 2 3; do
	m=$(stat -c %a "$T/state/node-$id.sock")
	[[ $m == 600 ]] || fail "member $id's control socket has mode $m, want 600"
	[[ -S $T/state/node-$id.sock ]] || fail "member $id's control socket is not a socket"
done
say "control sockets are mode 0600"

alive1() { ! pid_gone "${PIDS[1]}" && status 1 >/dev/null; }

# ---- junk: one ERR line each, the connection and the member stay ----
junk=('HELLO' 'acquire' 'ACQUIRE abc' 'ACQUIRE -5' 'ACQUIRE 99999999999999999999' 'ACQUIRE 1 2'
	'RELEASE' 'RELEASE now' 'STATUS please' 'INJECT' 'INJECT bogus' 'INJECT pause x'
	'INJECT loss 101' 'INJECT block 0' ' ' "$(printf '\001\002\003\377')" 'GRANTED 1 1' '{"json":true}')
for j in "${junk[@]}"; do
	out=$(ctl_chat "$S" 2000 '\n' "$j\\n")
	[[ $out == ERR\ * ]] || fail "junk line '$j' got '$out', want 'ERR ...'"
	[[ $(wc -l <<<"$out") == 1 ]] || fail "junk line '$j' got more than one line: $out"
	alive1 || fail "member 1 died after junk line '$j'"
done
# Several junk lines on one connection, then a good command on it.
out=$(ctl_chat "$S" 2000 '"node":1' 'junk one\n\njunk three\nSTATUS\n')
[[ $(grep -c '^ERR ' <<<"$out") == 3 ]] || fail "three junk lines on one connection: $out"
grep -q '"node":1' <<<"$out" || fail "STATUS after junk on the same connection: $out"
# A line over 512 bytes with its newline: refused, the connection stays.
long=$(printf 'x%.0s' {1..600})
out=$(ctl_chat "$S" 2000 '"node":1' "$long\\nSTATUS\\n")
[[ $(head -1 <<<"$out") == ERR\ * ]] || fail "a 600-byte line got '$(head -c 100 <<<"$out")', want ERR"
grep -q '"node":1' <<<"$out" || fail "STATUS after a long line on the same connection: $out"
say "${#junk[@]} junk lines answered ERR, member 1 alive"

# ---- over 512 bytes without a newline: the member drops the client ----
for size in 600 100000; do
	out=$(ctl_chat "$S" 3000 '<EOF>' "$(printf 'y%.0s' $(seq $size))")
	grep -q '<EOF>' <<<"$out" || fail "$size bytes without a newline: the member kept the client ($out)"
	[[ $(head -n 1 <<<"$out") == 'ERR line too long' ]] ||
		fail "$size bytes without a newline: no 'ERR line too long' before the close ($(head -c 100 <<<"$out"))"
	alive1 || fail "member 1 died after $size bytes without a newline"
done
say "clients sending 600 and 100000 bytes without a newline dropped, member alive"

# ---- ACQUIRE then disconnect: released ----
# Client A holds at member 1 over a raw connection, B waits at member 2;
# A goes away without RELEASE; B must be granted at once (the lease is 30 s).
spawn ctl_chat "$S" 5000 'GRANTED' 'ACQUIRE\n' "$T/a.go"
a=$BG_PID
wait_until 5 grep -q GRANTED "$T/bg.log" || fail "raw client A was not granted"
fence_a=$(sed -n 's/^GRANTED \([0-9]*\) .*/\1/p' "$T/bg.log")
spawn "$RINGCTL" -c "$CONF" -n 2 run -t 20000 -- touch "$T/b.granted"
b=$BG_PID
queued() { (($(field 2 .queued) >= 1)); }
wait_until 5 queued || fail "client B does not wait at member 2"
[[ ! -e $T/b.granted ]] || fail "B was granted while A held"
t0=$(now_ms)
touch "$T/a.go"
wait_bg $a 5 || fail "raw client A did not go away"
wait_until 3 test -e "$T/b.granted" || fail "B not granted 3 s after A disconnected while holding"
took=$(($(now_ms) - t0))
wait_bg $b 5 && ((BG_RC == 0)) || fail "B's run exited $BG_RC"
wait_until 2 log_has 1 cs_exit ".fence == $fence_a" || fail "member 1 logged no cs_exit for A's fence $fence_a"
say "A disconnected while holding: B granted $took ms later"

# ---- waiting, then disconnect: the request is dropped, nothing sticks ----
rm -f "$T/bg.log"
spawn ctl_chat "$S" 5000 'GRANTED' 'ACQUIRE\n' "$T/c.go"
c=$BG_PID
wait_until 5 grep -q GRANTED "$T/bg.log" || fail "raw client C was not granted"
out=$(ctl_chat "$S" 300 'GRANTED' 'ACQUIRE\n') # D waits 300 ms, then hangs up
[[ -z $out ]] || fail "client D got '$out' while C held"
touch "$T/c.go"
wait_bg $c 5 || fail "raw client C did not go away"
for id in 1 2 3 1; do
	"$RINGCTL" -c "$CONF" -n $id run -t 3000 -- true || fail "run at member $id after a waiter hung up: exit $?"
done
q=$(field 1 .queued)
((q == 0)) || fail "member 1 still has $q queued after its clients went away"
alive1 || fail "member 1 is gone"
pass "mode 0600, junk refused, long lines dropped, disconnect releases (B granted ${took} ms after)"
