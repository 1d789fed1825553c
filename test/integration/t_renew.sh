#!/bin/bash
# Renewal and try-lock, end to end (issue 29):
# 1. a job several leases long runs under `ringctl run` without a revoke:
#    run renews it (RENEW) every lease/3;
# 2. once that ringctl is frozen (kill -STOP) it renews nothing, and a client
#    waiting at another member is granted within about one lease;
# 3. `run --try` takes a free lock on an idle ring whose token is parked at
#    another member, and fails at once, with --conflict-exit-code's code,
#    while a client at another member holds the region;
# 4. RENEW over the control socket answers RENEWED <fence> <ms>, and
#    ERR not holding when the connection holds nothing.
# RENEW_JOB_S sets the job's length (default 8 s = 4 leases; the issue's
# acceptance is a 1-minute job: RENEW_JOB_S=60).
source "$(dirname "$0")/lib.sh"

LEASE_MS=2000
JOB_S=${RENEW_JOB_S:-8}
make_conf "$CONF" 3 lease_ms=$LEASE_MS
start_ring 3
wait_until 5 any_log_has token_regen || fail "no token minted"

# ---- 1. a job of JOB_S seconds, JOB_S/2 leases, is never revoked ----
# It ticks every 0.25 s so that the test waits on its progress, not on a
# clock; it writes its fence first.
job() {
	"$RINGCTL" -c "$CONF" -n 1 run -- sh -c '
		echo "$RING_FENCE" > "$0.fence"; i=0
		while [ $i -lt $(($1 * 4)) ]; do echo $i >> "$0.ticks"; sleep 0.25; i=$((i + 1)); done
		touch "$0.done"' "$T/job" "$JOB_S" 2>"$T/job.err"
}
ticks() { [[ -e $T/job.ticks ]] && (($(wc -l <"$T/job.ticks") >= $1)); }
t0=$(now_ms)
spawn job
job_pid=$BG_PID
wait_until 10 test -s "$T/job.fence" || fail "the job at member 1 was not granted: $(cat "$T/job.err")"
fence=$(cat "$T/job.fence")
wait_bg "$job_pid" $((JOB_S + 30)) || fail "the ${JOB_S} s job still runs after $((JOB_S + 30)) s"
took=$(($(now_ms) - t0))
((BG_RC == 0)) || fail "the ${JOB_S} s job under lease_ms = $LEASE_MS exited $BG_RC, want 0: $(cat "$T/job.err")"
[[ -e $T/job.done ]] || fail "the job exited 0 without finishing"
! log_has 1 lease_expired ".fence == $fence" || fail "member 1 logged lease_expired for the renewed job (fence $fence)"
((took >= JOB_S * 1000)) || fail "the job took $took ms, less than its ${JOB_S} s"
[[ $(log_count 1 cs_enter ".fence == $fence") == 1 ]] || fail "the job's fence $fence was granted more than once"
say "a ${JOB_S} s job ran under lease_ms = $LEASE_MS ($((took / LEASE_MS)) leases): no revoke, one grant"

# ---- 2. kill -STOP of the job's ringctl: revoked within a lease ----
rm -f "$T/job".*
spawn job
job_pid=$BG_PID
wait_until 10 test -s "$T/job.fence" || fail "the second job at member 1 was not granted"
fence=$(cat "$T/job.fence")
# Past the first lease on the job's own progress (8 ticks of 0.25 s = 2 s),
# so that what follows is about renewal, not the first lease.
wait_until 20 ticks 10 || fail "the second job made no progress"
! log_has 1 lease_expired ".fence == $fence" || fail "the second job was revoked before it was frozen"
spawn "$RINGCTL" -c "$CONF" -n 2 run -t 30000 -- touch "$T/waiter.granted"
waiter=$BG_PID
queued() { (($(field 2 .queued) >= 1)); }
wait_until 5 queued || fail "the client at member 2 does not wait: $(status 2)"
# The ringctl itself (not its job: the job runs in a group of its own).
rc_pid=$(pgrep -P "$job_pid" -x ringctl || echo "$job_pid")
[[ $(cat /proc/"$rc_pid"/comm 2>/dev/null) == ringctl ]] || fail "no ringctl process under the job's shell ($rc_pid)"
t_stop=$(now_ms)
kill -STOP "$rc_pid"
wait_until $((LEASE_MS * 3 / 1000 + 10)) test -e "$T/waiter.granted" || {
	kill -CONT "$rc_pid"
	fail "the client at member 2 was not granted after member 1's ringctl was frozen"
}
took=$(($(now_ms) - t_stop))
stall=$(stalled_ms $((t_stop * 1000)))
kill -CONT "$rc_pid"
((took < LEASE_MS + 1500 + stall)) ||
	fail "granted at member 2 $took ms after the STOP, want < one lease ($LEASE_MS ms) + 1500$(stall_note $stall)"
wait_until 2 log_has 1 lease_expired ".fence == $fence" || fail "member 1 logged no lease_expired for the frozen job"
wait_bg "$job_pid" 10 || fail "the frozen job's ringctl did not exit once continued"
((BG_RC == 70)) || fail "the frozen job's ringctl exited $BG_RC once continued, want 70 (lease lost)"
wait_bg "$waiter" 10 || fail "the client at member 2 did not finish"
((BG_RC == 0)) || fail "the client at member 2 exited $BG_RC"
say "frozen ringctl: member 2's client granted $took ms after kill -STOP (lease $LEASE_MS ms); the frozen run exited 70"

# ---- 3. --try ----
# The token parks once nobody asks: where it was last used, or where the
# walk it was on ends (PROTOCOL.md §3.5). A try at another member takes it.
parked_at=
parked() {
	local id
	for id in 1 2 3; do
		[[ $(field $id .parked) == true ]] && { parked_at=$id; return 0; }
	done
	return 1
}
wait_until 10 parked || fail "the token did not park: $(status 1) $(status 2) $(status 3)"
try_at=$((parked_at % 3 + 1))
t0=$(now_ms)
"$RINGCTL" -c "$CONF" -n $try_at run --try -- touch "$T/try.free" 2>"$T/try.err" ||
	fail "run --try at member $try_at on an idle ring parked at member $parked_at exited $?: $(cat "$T/try.err")"
say "run --try took the free lock parked elsewhere in $(($(now_ms) - t0)) ms"
spawn "$RINGCTL" -c "$CONF" -n 1 run -- sh -c 'touch "$0"; i=0; while [ $i -lt 40 ] && [ ! -e "$0.stop" ]; do sleep 0.1; i=$((i + 1)); done' "$T/holder"
holder=$BG_PID
wait_until 10 test -e "$T/holder" || fail "the holder at member 1 was not granted"
t0=$(now_ms)
"$RINGCTL" -c "$CONF" -n 3 run --try --conflict-exit-code 9 -- touch "$T/try.busy" 2>"$T/try.err"
rc=$?
took=$(($(now_ms) - t0))
touch "$T/holder.stop"
((rc == 9)) || fail "run --try --conflict-exit-code 9 while member 1's client holds exited $rc, want 9: $(cat "$T/try.err")"
[[ ! -e $T/try.busy ]] || fail "run --try ran its command while another client held the region"
stall=$(stalled_ms $((t0 * 1000)))
((took < 1000 + stall)) || fail "run --try took $took ms to fail, want at once (< 1000 ms)$(stall_note $stall)"
grep -q 'another client holds' "$T/try.err" || fail "run --try said nothing clear: $(cat "$T/try.err")"
wait_bg "$holder" 10 || fail "the holder at member 1 did not finish"
say "run --try while member 1's client holds: exit 9 after $took ms"

# ---- 4. the control commands ----
# ACQUIRE, and once GRANTED: RENEW, RELEASE, RENEW in one write.
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
	syswrite($s, "RENEW\nRELEASE\nRENEW\n") if $got =~ /^GRANTED/m;
	$read->(qr/^GRANTED .*\n(.*\n){3}/m);
	print $got;' "$T/state/node-3.sock")
echo "| $(paste -sd '|' <<<"$out")"
[[ $(sed -n 3p <<<"$out") == OK ]] || fail "RELEASE after RENEW: $out"
grep -q '^RENEWED [0-9]* [0-9]*$' <<<"$out" || fail "RENEW while holding: $out"
left=$(sed -n 's/^RENEWED [0-9]* \([0-9]*\)$/\1/p' <<<"$out")
((left > LEASE_MS - 200 && left <= LEASE_MS)) || fail "RENEWED says $left ms left, want about $LEASE_MS"
grep -q '^ERR not holding$' <<<"$out" || fail "RENEW without a grant: $out"

pass "a ${JOB_S} s job renewed under a $LEASE_MS ms lease; frozen, revoked within a lease; --try takes a free lock and fails at once on a held one"
