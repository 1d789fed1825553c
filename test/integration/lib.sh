# shellcheck shell=bash
# test/integration/lib.sh: what only the integration tests need, on top of
# test/lib.sh (ports, members, waits, logs, cleanup). Sourced by every
# test/integration/t_*.sh: real ringd processes on 127.0.0.1, each test in
# its own temp dir with its own ports. test/run.sh test/integration runs them.

# shellcheck disable=SC2034 # PIN_*: set here, read by the tests
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
need_ring
need_tools jq ss timeout perl
CONF_DEFAULT[name]=it-$$
lib_init ring-it
CONF=$T/ring.ini # the test's ring; make_conf writes it

# field ID JQ: one field of member ID's status, e.g. field 2 .tokens_passed
field() { status "$1" | jq -r "$2"; }

# alive_has ID OTHER: true when member ID's alive list contains OTHER.
alive_has() { status "$1" | jq -e --argjson o "$2" '.alive | index($o) != null' >/dev/null; }

# holder: the id of the member that has the token, per `ringctl ring`;
# empty when none says so, several ids when several do.
holder() { ring_json | jq -r '[.[] | select(.has_token == true) | .node] | map(tostring) | join(" ")'; }

# pin ID TAG: a client at member ID that enters the critical region, writes
# its fence to $T/TAG.in and stays until $T/TAG.go exists (at most 30 s), so
# that the token stays at ID meanwhile (lease_ms permitting). Its pid is in
# PIN_PID, its fence in PIN_FENCE, ID's epoch in PIN_EPOCH. On a busy machine a grant can be revoked
# at once (a live member too slow to ack is skipped, the ring re-epochs and
# the older token is dropped: PROTOCOL.md 3.2, 4.3); then it asks again.
PIN_PID='' PIN_FENCE='' PIN_EPOCH=''
pin() {
	local id=$1 tag=$2 try s
	for ((try = 1; try <= 5; try++)); do
		rm -f "$T/$tag.in"
		spawn "$RINGCTL" -c "$CONF" -n "$id" run -- sh -c '
			echo "$RING_FENCE" > "$0.in"
			i=0; while [ ! -e "$0.go" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done' "$T/$tag"
		PIN_PID=$BG_PID
		wait_until 10 test -s "$T/$tag.in" || fail "the client at member $id was not granted"
		PIN_FENCE=$(cat "$T/$tag.in")
		s=$(status "$id")
		if jq -e --argjson f "$PIN_FENCE" '.has_token and .state == "holding" and .fence == $f' <<<"$s" >/dev/null &&
			! log_has "$id" cs_exit ".fence == $PIN_FENCE"; then
			PIN_EPOCH=$(jq .epoch <<<"$s")
			return 0
		fi
		say "member $id's grant $PIN_FENCE did not last (the ring re-epoched meanwhile); again"
		wait_bg "$PIN_PID" 5
	done
	fail "member $id could not keep a grant 5 times in a row"
}

# ctl_chat SOCKET WAIT_MS UNTIL_RE DATA [HOLD_FILE]: talks to a control
# socket directly (perl-base, no extra package): sends DATA ("\n" in it is
# a newline), prints what comes back until UNTIL_RE matches it, the member
# closes (printed as "<EOF>") or WAIT_MS pass. With HOLD_FILE it then keeps
# the connection open until that file exists (at most 30 s) before closing.
ctl_chat() {
	perl -e '
		use strict; use IO::Socket::UNIX; use IO::Select;
		$| = 1;
		my ($path, $wait, $until, $data, $hold) = @ARGV;
		my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path)
			or die "connect $path: $!\n";
		$data =~ s/\\n/\n/g;
		syswrite($s, $data) if length $data;
		my $sel = IO::Select->new($s);
		my $got = "";
		for (my $n = int($wait / 50) + 1; $n > 0; $n--) {
			last if length $until && $got =~ /$until/;
			next unless $sel->can_read(0.05);
			my $r = sysread($s, my $chunk, 65536);
			if (!$r) { $got .= "<EOF>\n"; last }
			$got .= $chunk;
		}
		print $got;
		if (defined $hold && length $hold) {
			for (my $i = 0; $i < 600 && !-e $hold; $i++) { select(undef, undef, undef, 0.05) }
		}' "$@"
}

# unexplained EVENT [JQ-CONDITION]: EVENT lines of every member that no
# stall explains: not from the stall's start until 2 x loss_timeout_ms + 2 s
# after it ended (the ring may take a few rounds to settle).
unexplained() {
	local loss grace windows
	loss=$(conf_value loss_timeout_ms)
	grace=$(((2 * ${loss:-1000} + 2000) * 1000))
	windows=$(all_logs pause_detected | jq -sc "$JQ_TS [.[] | [us - .ms * 1000 - 100000, us + $grace]]")
	all_logs "$@" | jq -c --argjson w "${windows:-[]}" "$JQ_TS us as \$t | select(all(\$w[]; \$t < .[0] or \$t > .[1]))"
}
