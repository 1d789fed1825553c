#!/bin/bash
# Pipelining on the control socket (docs/control.md, Pipelining): client A
# at member 1 sends RELEASE and its next ACQUIRE in one write, in a loop, as
# fast as it can; its replies must come complete and in order ("OK", then
# "GRANTED" with a higher fence, every time). Meanwhile client B at member 2
# asks, five times: each time the summons must make the token leave member 1
# before A is granted again (no A grant between member 1 logging the
# summons, token_unpark, and B's grant), and B is granted well within a lap
# (loss_timeout_ms, when a parked token goes round anyway).
source "$(dirname "$0")/lib.sh"

ROUNDS=5 WAIT_LIMIT_MS=1000
# Laps far apart: a lap that happens to serve B would prove nothing.
make_conf "$CONF" 3 lease_ms=30000 loss_timeout_ms=4000
start_ring 3
wait_until 5 any_log_has token_regen || fail "no token minted"
S1=$T/state/node-1.sock

# Client A (perl-base, like ctl_chat): loops until $T/a.stop exists, then
# releases and prints "entries N revoked R reads_per_pair X"; dies with the
# reason on the first reply out of place.
spawn perl -e '
	use strict; use IO::Socket::UNIX;
	my ($path, $stop) = @ARGV;
	my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path) or die "A: connect $path: $!\n";
	my ($buf, $reads, $last, $n, $revoked) = ("", 0, 0, 0, 0);
	$SIG{ALRM} = sub { die "A: no reply within 10 s after grant $last\n" };
	sub line {
		while (index($buf, "\n") < 0) {
			my $r = sysread($s, $buf, 65536, length $buf);
			die "A: connection closed after grant $last\n" unless $r;
			$reads++;
		}
		$buf =~ s/^([^\n]*)\n//;
		return $1;
	}
	sub granted {
		my $l = line();
		$l =~ /^GRANTED (\d+) \d+$/ or die "A: ACQUIRE after grant $last answered \"$l\"\n";
		$1 > $last or die "A: fence $1 granted after fence $last\n";
		$last = $1;
		$n++;
	}
	alarm 10;
	syswrite($s, "ACQUIRE\n") == 8 or die "A: write: $!\n";
	granted();
	$reads = 0;
	for (my $i = 1; ; $i++) {
		if ($i % 64 == 0) { last if -e $stop; alarm 10 }
		syswrite($s, "RELEASE\nACQUIRE\n") == 16 or die "A: write: $!\n";
		my $l = line();
		my $rev = 0;
		while ($l =~ /^REVOKED (\d+)$/) {
			$1 == $last or die "A: REVOKED $1 while holding $last\n";
			($rev, $l) = (1, line());
			$revoked++;
		}
		$l eq ($rev ? "ERR not holding" : "OK") or die "A: RELEASE of $last answered \"$l\"\n";
		granted();
	}
	my $pairs = $n - 1;
	syswrite($s, "RELEASE\n");
	my $l = line();
	$l eq "OK" or $l =~ /^REVOKED / or die "A: last RELEASE answered \"$l\"\n";
	printf "entries %d revoked %d reads_per_pair %.3f\n", $n, $revoked, $pairs ? $reads / $pairs : 0;
' "$S1" "$T/a.stop"
A=$BG_PID
entries1() { field 1 .cs_entries; }
looping() { (($(entries1) >= 500)); }
wait_until 10 looping || fail "client A did not get going at member 1: $(cat "$T/bg.log")"
say "client A loops pipelined at member 1 ($(entries1) entries so far)"

waits=()
for ((r = 1; r <= ROUNDS; r++)); do
	before=$(entries1)
	t0=$(now_us)
	"$RINGCTL" -c "$CONF" -n 2 run -t 10000 -- sh -c 'echo "$RING_FENCE" > "$0"' "$T/b.$r" ||
		fail "round $r: B at member 2 was not granted in 10 s (exit $?)$(stall_note "$(stalled_ms "$t0")")"
	took=$((($(now_us) - t0) / 1000))
	waits+=("$took")
	((took <= WAIT_LIMIT_MS)) || (($(stalled_ms "$t0") > 0)) ||
		fail "round $r: B waited $took ms for the token (limit $WAIT_LIMIT_MS ms; a lap is every 4000 ms)"
	pid_alive "$A" || fail "client A died: $(cat "$T/bg.log")"
	# A kept going while B waited and after: the token came back.
	wait_until 5 eval '(($(entries1) >= before + 100))' || fail "round $r: client A stopped being granted"
done
touch "$T/a.stop"
wait_bg "$A" 10 || fail "client A did not stop: $(cat "$T/bg.log")"
((BG_RC == 0)) || fail "client A: $(cat "$T/bg.log")"
a_report=$(tail -n 1 "$T/bg.log")
say "A: $a_report; B waited ${waits[*]} ms"

# Member 1's log in order: A's grants (cs_enter) and the summonses from
# member 2 (token_unpark by 2); B's fences from member 2. After each
# summons, member 1's next grant must come after one of B's: the token left.
b_fences=$(log_events 2 cs_enter | jq -s -c 'map(.fence)')
verdict=$(grep -F -e '"event":"cs_enter"' -e '"event":"token_unpark"' "$T/n1.log" |
	jq -R -s -r --argjson b "$b_fences" '
		[split("\n")[] | fromjson? | select(.event == "cs_enter" or (.event == "token_unpark" and .by == 2))]
		| . as $ev
		| [range(0; length) | select($ev[.].event == "token_unpark") as $i
			| ([$ev[0:$i][] | select(.event == "cs_enter") | .fence] | last // 0) as $prev
			| ([$ev[$i + 1:][] | select(.event == "cs_enter") | .fence] | first // null) as $next
			| {prev: $prev, next: $next,
			   b: ([$b[] | select(. > $prev and ($next == null or . < $next))] | length)}]
		| "\(length) \(map(select(.b == 0)) | length) \(map(select(.b == 0)) | .[0:3] | tojson)"')
read -r summons unfair example <<<"$verdict"
((unfair == 0)) ||
	fail "$unfair of $summons summonses from member 2: member 1 granted A again before B (A's fences before/after, e.g. $example)"
# Each round that found the token parked at member 1 summoned it; most must have.
((summons >= ROUNDS - 2)) || fail "only $summons of $ROUNDS rounds summoned the token from member 1: the check saw too little"
pass "A pipelined ($a_report), replies in order; $summons summonses, each made the token leave member 1 before A's next grant; B waited ${waits[*]} ms"
