#!/bin/bash
# `ringctl run` and its exits: a CMD that outlives its grant is stopped and
# run exits 70 (lease_expired logged); a request not granted within -t
# exits 75; otherwise run exits with CMD's status. run renews the grant
# while CMD runs (t_renew.sh), so here max_hold_ms = lease_ms bounds every
# grant to one lease however it is renewed.
source "$(dirname "$0")/lib.sh"

LEASE_MS=300
make_conf "$CONF" 3 lease_ms=$LEASE_MS max_hold_ms=$LEASE_MS
start_ring 3
wait_until 5 any_log_has token_regen || fail "no token minted"
"$RINGCTL" -c "$CONF" -n 1 run -t 5000 -- true || fail "a first run at member 1 exited $?"

# ---- 1. the lease runs out: CMD gets SIGTERM, run exits 70 ----
# CMD writes its pid and fence, then would live 5 s; it must be gone as
# soon as run exits 70.
t0=$(now_ms)
"$RINGCTL" -c "$CONF" -n 1 run -t 5000 -- sh -c '
	trap "exit 143" TERM
	echo $$ > "$0.pid"; echo "$RING_FENCE" > "$0.fence"
	i=0; while [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done' "$T/long" 2>"$T/long.err"
rc=$?
took=$(($(now_ms) - t0))
((rc == 70)) || fail "run with a CMD outliving the lease exited $rc, want 70: $(cat "$T/long.err")"
stall=$(stalled_ms $((t0 * 1000)))
((took < 1500 + stall)) || fail "run took $took ms to give up a ${LEASE_MS} ms lease, want < 1500$(stall_note $stall)"
grep -qi 'lease' "$T/long.err" || fail "run said nothing about the lease: $(cat "$T/long.err")"
cmd_pid=$(cat "$T/long.pid")
fence=$(cat "$T/long.fence")
wait_until 1 pid_gone "$cmd_pid" || fail "CMD (pid $cmd_pid) still runs after run exited 70"
wait_until 2 log_has 1 lease_expired ".fence == $fence" || fail "member 1 did not log lease_expired fence=$fence"
say "lease ran out: run exited 70 after $took ms, CMD stopped, lease_expired fence=$fence"

# ---- 2. not granted within -t: exit 75 ----
# At member 2 one client is in the critical region and three more wait in
# line, each with a CMD that uses its whole lease (one visit serves one
# client). Asked while at least two still wait, a fifth client cannot be
# served within 200 ms: two full leases (600 ms) stand before it.
spawn "$RINGCTL" -c "$CONF" -n 2 run -- sh -c 'touch "$0"; exec sleep 5' "$T/h.in"
lined=("$BG_PID")
wait_until 5 test -e "$T/h.in" || fail "first client at member 2 not granted"
for k in 1 2 3; do
	spawn "$RINGCTL" -c "$CONF" -n 2 run -- sh -c 'exec sleep 5'
	lined+=("$BG_PID")
done
queued() { (($(field 2 .queued) >= $1)); }
wait_until 2 queued 2 || fail "setup: fewer than two clients wait at member 2: $(status 2)"
t0=$(now_ms)
"$RINGCTL" -c "$CONF" -n 2 run -t 200 -- touch "$T/t.granted" 2>"$T/t.err"
rc=$?
took=$(($(now_ms) - t0))
((rc == 75)) || fail "run -t 200 behind two full leases exited $rc, want 75: $(cat "$T/t.err")"
[[ ! -e $T/t.granted ]] || fail "run -t 200 exited 75 but its CMD ran"
stall=$(stalled_ms $((t0 * 1000)))
((took >= 150 && took < 1500 + stall)) || fail "run -t 200 gave up after $took ms$(stall_note $stall)"
grep -q 'not granted' "$T/t.err" || fail "run -t said nothing on stderr: $(cat "$T/t.err")"
say "run -t 200 exited 75 after $took ms"
for pid in "${lined[@]}"; do
	wait_bg $pid 5 || fail "a lease-bound client at member 2 still runs"
	((BG_RC == 70)) || fail "a client whose CMD outlived the lease exited $BG_RC, want 70"
done

# ---- 3. CMD's status is run's ----
"$RINGCTL" -c "$CONF" -n 3 run -t 5000 -- sh -c 'exit 7'
rc=$?
((rc == 7)) || fail "run of a CMD exiting 7 exited $rc"
"$RINGCTL" -c "$CONF" -n 3 run -t 5000 -- sh -c '[ -n "$RING_FENCE" ] && [ -n "$RING_EPOCH" ] && [ "$RING_NODE" = 3 ]' ||
	fail "CMD lacks RING_FENCE, RING_EPOCH or RING_NODE"
# ---- 4. a RELEASE read in the step that ends the grant: ERR not holding ----
# One client at member 1: ACQUIRE; once GRANTED, "INJECT pause 700" and
# "RELEASE" in one write. The member stalls 700 ms inside the INJECT (more
# than the lease) and handles the RELEASE right after it, before any timer:
# that step ends the grant first (the lease, or the pause, ran out) and
# says REVOKED; the RELEASE then ends nothing and must be answered
# `ERR not holding` (docs/control.md), never OK for a region it had lost.
out=$(perl -e '
	use strict; use IO::Socket::UNIX; use IO::Select;
	my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $ARGV[0]) or die "connect: $!\n";
	my $sel = IO::Select->new($s);
	my $got = "";
	my $read = sub { # until RE matches or 5 s
		my ($re) = @_;
		for (my $n = 100; $n > 0 && $got !~ $re; $n--) {
			next unless $sel->can_read(0.05);
			my $r = sysread($s, my $chunk, 4096);
			if (!$r) { $got .= "<EOF>\n"; last }
			$got .= $chunk;
		}
	};
	syswrite($s, "ACQUIRE 5000\n");
	$read->(qr/^GRANTED .*\n/m);
	syswrite($s, "INJECT pause 700\nRELEASE\n") if $got =~ /^GRANTED/m;
	$read->(qr/^GRANTED .*\n(.*\n){3}/m);
	print $got;' "$T/state/node-1.sock")
replies=$(sed -n '2,4p' <<<"$out" | sed 's/^REVOKED [0-9]*$/REVOKED F/' | paste -sd '|')
echo "| RELEASE after the lease ran out in the same step: $(paste -sd '|' <<<"$out")"
[[ $(head -1 <<<"$out") == GRANTED\ * ]] || fail "the client at member 1 was not granted: $out"
[[ $replies == "OK|REVOKED F|ERR not holding" ]] ||
	fail "RELEASE read in the step that revoked the grant: replies '$replies' after GRANTED, want 'OK|REVOKED F|ERR not holding' (INJECT's OK, the revoke, the RELEASE)"
wait_until 2 log_has 1 pause_detected || fail "member 1 did not log pause_detected for the 700 ms stall"
"$RINGCTL" -c "$CONF" -n 1 run -t 5000 -- true || fail "run at member 1 after the stall exited $?"

pass "exit 70 on lease loss ($LEASE_MS ms), 75 on -t, CMD's own status otherwise; RELEASE after a revoke in its step: ERR not holding"
