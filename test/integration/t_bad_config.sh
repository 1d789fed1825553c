#!/bin/bash
# Bad configuration files are refused at start: exit 78 and one line
# "FILE:LINE: what is wrong" on stderr, LINE naming the line to fix
# (docs/configuration.md, Errors). Also --check, non-members, usage, --help.
source "$(dirname "$0")/lib.sh"

pick_ports 4
P=$PORT_BASE
# Every ringd here must refuse and exit at once; the timeout only stops one
# that wrongly starts (generous: a loaded machine can stall for seconds).
SAFETY_S=30
HEAD="[ring]
name = bad
state_dir = $T/state
allow_inject = true" # lines 1..4
NODES="
[node.1]
host = 127.0.0.1
port = $P

[node.2]
host = 127.0.0.1
port = $((P + 1))" # lines 5..12 after HEAD, 4..11 after a 3-line [ring]

# bad NAME LINE REGEX: the file on stdin must make ringd (and ringctl) exit
# 78 with "FILE:LINE: " and a message matching REGEX (grep -Ei).
cases=0
bad() {
	local name=$1 line=$2 re=$3 f=$T/$1.ini rc out
	cat >"$f"
	out=$(timeout $SAFETY_S "$RINGD" -c "$f" -n 1 2>&1 >/dev/null)
	rc=$?
	((rc == 78)) || fail "$name: ringd exited $rc, want 78 (stderr: $out)"
	[[ $(wc -l <<<"$out") -eq 1 ]] || fail "$name: want one line on stderr, got: $out"
	[[ $out == "$f:$line: "* ]] || fail "$name: want '$f:$line: ...', got: $out
$(cat -n "$f")"
	grep -Eqi -- "$re" <<<"$out" || fail "$name: message does not match /$re/: $out"
	out=$(timeout $SAFETY_S "$RINGCTL" -c "$f" -n 1 status 2>&1 >/dev/null)
	rc=$?
	((rc == 78)) || fail "$name: ringctl exited $rc, want 78 (stderr: $out)"
	[[ $out == "$f:$line: "* ]] || fail "$name: ringctl says '$out', want '$f:$line: ...'"
	cases=$((cases + 1))
	say "$name -> ${out#"$T"/}"
}

# The good file first: each case below differs from it in one thing.
printf '%s\n%s\n' "$HEAD" "$NODES" >"$T/good.ini"
timeout $SAFETY_S "$RINGD" -c "$T/good.ini" --check >/dev/null ||
	fail "the base file is refused: $(timeout $SAFETY_S "$RINGD" -c "$T/good.ini" --check 2>&1)"

bad unknown_key 3 'unknown key.*leese' <<-END
	[ring]
	name = bad
	leese_ms = 100
	state_dir = $T/state
	$NODES
END

bad unknown_section 6 'section|nodes' <<-END
	$HEAD

	[nodes.1]
	host = 127.0.0.1
	port = $P
	$NODES
END

bad bad_number 3 'lease_ms' <<-END
	[ring]
	name = bad
	lease_ms = 12x
	state_dir = $T/state
	$NODES
END

bad number_out_of_range 3 'retries' <<-END
	[ring]
	name = bad
	retries = 1000
	state_dir = $T/state
	$NODES
END

# A second [node.2] section: the duplicate's header (line 14).
bad duplicate_id 14 'node\.2|duplicate|twice|again' <<-END
	$HEAD
	$NODES

	[node.2]
	host = 127.0.0.1
	port = $((P + 2))
END

# Two members on one host:port: the later one's port (line 12).
bad duplicate_port 12 'port|same|duplicate' <<-END
	$HEAD

	[node.1]
	host = 127.0.0.1
	port = $P

	[node.2]
	host = 127.0.0.1
	port = $P
END

# One address under two names: localhost is 127.0.0.1 (in every
# /etc/hosts), so these are one member twice. Caught once the hosts are
# resolved (net.c ring_net_check_conf); --check must refuse it too.
bad same_address_two_names 13 'one address, two members' <<-END
	$HEAD
	authentication = off

	[node.1]
	host = 127.0.0.1
	port = $P

	[node.2]
	host = localhost
	port = $P
END
out=$(timeout $SAFETY_S "$RINGD" -c "$T/same_address_two_names.ini" --check 2>&1 >/dev/null)
rc=$?
((rc == 78)) && [[ $out == "$T/same_address_two_names.ini:13: "* ]] ||
	fail "ringd --check of one address under two names: exit $rc, '$out'; want 78 and FILE:13"

# 1 -> 2 -> 1 and 3 -> 4 -> 3: every member has one predecessor, but the
# order is two cycles. The line is the successor that closes 1 -> 2 -> 1.
bad broken_cycle 14 'cycle|missing' <<-END
	$HEAD

	[node.1]
	host = 127.0.0.1
	port = $P
	successor = 2

	[node.2]
	host = 127.0.0.1
	port = $((P + 1))
	successor = 1

	[node.3]
	host = 127.0.0.1
	port = $((P + 2))
	successor = 4

	[node.4]
	host = 127.0.0.1
	port = $((P + 3))
	successor = 3
END

bad successor_not_member 9 'successor|member' <<-END
	$HEAD

	[node.1]
	host = 127.0.0.1
	port = $P
	successor = 9

	[node.2]
	host = 127.0.0.1
	port = $((P + 1))
END

# [ring] without name: the [ring] header.
bad missing_name 1 'name' <<-END
	[ring]
	lease_ms = 1000
	state_dir = $T/state
	$NODES
END

# [node.3] without host: that node's header.
bad missing_host 14 'host' <<-END
	$HEAD
	$NODES

	[node.3]
	port = $((P + 2))
END

bad missing_port 14 'port' <<-END
	$HEAD
	$NODES

	[node.3]
	host = 127.0.0.1
END

bad timing_rule 3 'loss_timeout_ms.*heartbeat' <<-END
	[ring]
	name = bad
	loss_timeout_ms = 100
	heartbeat_ms = 50
	state_dir = $T/state
	$NODES
END

bad one_member 6 'member' <<-END
	$HEAD

	[node.1]
	host = 127.0.0.1
	port = $P
END

# ---- a ring beyond loopback authenticates unless it says otherwise ----
# (docs/configuration.md, authentication.) Refused at the first member that
# is not on loopback, naming the fix: a key, or authentication = off.
bad remote_without_key 7 'node\.1\] host 192\.0\.2\.1 is not a loopback address.*`ringctl keygen bad\.key`.*secret_file = bad\.key.*authentication = off' <<-END
	$HEAD

	[node.1]
	host = 192.0.2.1
	port = $P

	[node.2]
	host = 192.0.2.2
	port = $P
END
bad remote_second_member 11 'node\.2\] host 10\.1\.2\.3 is not a loopback' <<-END
	$HEAD

	[node.1]
	host = 127.0.0.1
	port = $P

	[node.2]
	host = 10.1.2.3
	port = $P
END
bad auth_on_without_key 5 'authentication = on needs a key.*ringctl keygen' <<-END
	$HEAD
	authentication = on
	$NODES
END
bad auth_off_with_key 6 'authentication = off, but secret_file is set \(line 5\)' <<-END
	$HEAD
	secret_file = some.key
	authentication = off
	$NODES
END
bad auth_word 5 'authentication = "maybe" is not one of auto, on or off' <<-END
	$HEAD
	authentication = maybe
	$NODES
END

# ---- --check on the shipped files ----
# conf/hosts5.ini is the keyed setup: it names prod.key beside it, which
# every site makes for itself (ringctl keygen); a copy with its key passes.
mkdir -p "$T/hosts5"
cp "$ROOT/conf/hosts5.ini" "$T/hosts5/"
out=$(timeout $SAFETY_S "$RINGD" -c "$T/hosts5/hosts5.ini" --check 2>&1 >/dev/null)
rc=$?
((rc == 78)) && grep -q "prod.key: No such file" <<<"$out" ||
	fail "hosts5.ini without its key: --check exited $rc, want 78 naming prod.key: $out"
"$RINGCTL" keygen "$T/hosts5/prod.key" >/dev/null || fail "keygen failed"
for f in "$ROOT/conf/local5.ini" "$T/hosts5/hosts5.ini"; do
	out=$(cd "$ROOT" && timeout $SAFETY_S "$RINGD" -c "$f" --check 2>&1)
	rc=$?
	((rc == 0)) || fail "ringd -c $f --check exited $rc: $out"
	grep -q '5 members' <<<"$out" || fail "ringd -c $f --check does not describe 5 members: $out"
done
grep -q "^authentication: on ($T/hosts5/prod.key)$" <<<"$out" ||
	fail "hosts5.ini's --check does not say it authenticates with prod.key: $out"
out=$(timeout $SAFETY_S "$RINGD" -c "$ROOT/conf/local5.ini" --check 2>&1)
grep -q "^authentication: on (the ring's own key $ROOT/conf/demo-state/ring.key: every member is on loopback and\$" <<<"$out" ||
	fail "local5.ini's --check does not say it is keyed by the ring's own key: $out"
say "--check accepts conf/local5.ini (the ring's own key) and conf/hosts5.ini with its key (on)"
# The same hosts without the key: refused at the first host line; with
# authentication = off: accepted, and --check says what that means.
grep -v '^secret_file' "$T/hosts5/hosts5.ini" >"$T/hosts5/open.ini"
line=$(grep -n '^host = ' "$T/hosts5/open.ini" | head -n 1 | cut -d: -f1)
out=$(timeout $SAFETY_S "$RINGD" -c "$T/hosts5/open.ini" -n 1 2>&1)
rc=$?
((rc == 78)) && [[ $out == "$T/hosts5/open.ini:$line: [node.1] host 192.0.2.11 is not a loopback address"* ]] ||
	fail "hosts5.ini without secret_file: ringd exited $rc, want 78 and line $line: $out"
sed -i 's/^\[ring\]$/[ring]\nauthentication = off/' "$T/hosts5/open.ini"
out=$(timeout $SAFETY_S "$RINGD" -c "$T/hosts5/open.ini" --check 2>&1)
rc=$?
((rc == 0)) || fail "hosts5.ini with authentication = off: --check exited $rc: $out"
grep -q '^authentication: off (authentication = off: anyone who can reach these ports can act as a member)$' <<<"$out" ||
	fail "--check of authentication = off does not say what it means: $out"
say "hosts5.ini without its key: refused at line $line (exit 78); with authentication = off: accepted, and said"

# ---- --check reads the key file as a start would ----
# (ExecStartPre=ringd --check must catch a key the start would refuse.)
keyed() { # NAME: key-NAME.ini, good.ini with secret_file = NAME.key
	sed "s#^name = bad#name = bad\nsecret_file = $1.key#" "$T/good.ini" >"$T/key-$1.ini"
}
check_key() { # NAME WANT REGEX: ringd --check of key-NAME.ini exits WANT, stderr matching REGEX
	local out rc
	out=$(timeout $SAFETY_S "$RINGD" -c "$T/key-$1.ini" --check 2>&1 >"$T/key-$1.check")
	rc=$?
	((rc == $2)) || fail "--check with key $1 exited $rc, want $2: $out"
	grep -Eq -- "$3" <<<"$out" || fail "--check with key $1: stderr does not match /$3/: $out"
}
"$RINGCTL" keygen "$T/good.key" >/dev/null || fail "keygen failed"
keyed good
check_key good 0 '^$'
grep -q "authentication: on ($T/good.key)" "$T/key-good.check" || fail "--check does not show the key: $(cat "$T/key-good.check")"
# A key fingerprint to compare across hosts: the same for a copy of the
# key, another for another key, and never the key itself.
fp_good=$(sed -n 's/^key fingerprint \([0-9a-f]\{16\}\) (signs)$/\1/p' "$T/key-good.check")
[[ -n $fp_good ]] || fail "--check prints no key fingerprint: $(cat "$T/key-good.check")"
! grep -qF "$(cat "$T/good.key")" "$T/key-good.check" || fail "--check prints the key itself"
cp -p "$T/good.key" "$T/copy.key" && keyed copy && check_key copy 0 '^$'
grep -qx "key fingerprint $fp_good (signs)" "$T/key-copy.check" || fail "a copy of the key has another fingerprint: $(grep '^key' "$T/key-copy.check")"
"$RINGCTL" keygen "$T/other.key" >/dev/null && keyed other && check_key other 0 '^$'
! grep -q "key fingerprint $fp_good" "$T/key-other.check" || fail "another key has the same fingerprint $fp_good"
say "--check: key fingerprint $fp_good, the same for a copy, another for another key"
keyed missing
check_key missing 78 'missing.key: No such file'
cp "$T/good.key" "$T/open.key" && chmod 644 "$T/open.key" && keyed open
check_key open 78 'readable by others'
cp "$T/good.key" "$T/group.key" && chmod 640 "$T/group.key" && keyed group
check_key group 78 'readable by its group \(mode 0640\)'
(umask 077 && echo short >"$T/short.key") && keyed short
check_key short 78 'at least 32'
(umask 077 && head -c 64 /dev/urandom >"$T/binary.key") && keyed binary
check_key binary 78 'not text.*ringctl keygen'
say "--check refuses a missing, 0644, short or binary key file (exit 78)"

# ---- --check -n ID finds what member ID's start needs of this host ----
# (README's multi-host step 2: a file for host 3 checked on host 1 passed,
# and a state_dir whose folder was missing passed --check, then the start
# failed.) Each failing check names the cause; --no-local-checks skips them.
check_here() { # NAME WANT REGEX ARGS...: ringd --check ARGS exits WANT, stderr matching REGEX
	local name=$1 want=$2 re=$3 out rc
	shift 3
	out=$(timeout $SAFETY_S "$RINGD" --check "$@" 2>&1 >"$T/$name.check")
	rc=$?
	((rc == want)) || fail "--check $name exited $rc, want $want: $out"
	grep -Eq -- "$re" <<<"$out" || fail "--check $name: stderr does not match /$re/: $out"
}
sed "s/^host = 127.0.0.1$/host = 192.0.2.12/; s/^name = bad$/name = bad\nauthentication = off/" "$T/good.ini" >"$T/far.ini" # TEST-NET: never local
sed -i "0,/^host = 192.0.2.12$/ s//host = 127.0.0.1/" "$T/far.ini"        # member 1 stays local
check_here far2 78 "member 2's host 192.0.2.12 is not an address of this host .*--no-local-checks" -c "$T/far.ini" -n 2
check_here far1 0 '^$' -c "$T/far.ini" -n 1
check_here far2-elsewhere 0 '^$' -c "$T/far.ini" -n 2 --no-local-checks
grep -q '^not checked (--no-local-checks): ' "$T/far2-elsewhere.check" || fail "--no-local-checks does not say what it skipped: $(tail -2 "$T/far2-elsewhere.check")"
sed "s#^state_dir = .*#state_dir = $T/no/such/prod3#" "$T/good.ini" >"$T/deep.ini"
check_here deep 78 "cannot open state_dir's folder $T/no/such: No such file or directory; ringd makes only the last component of $T/no/such/prod3 .*install -d $T/no/such" -c "$T/deep.ini" -n 1
[[ ! -e $T/no ]] || fail "--check created something: $(ls -R "$T/no")"
out=$(timeout $SAFETY_S "$RINGD" -c "$T/deep.ini" -n 1 2>&1) && fail "the start with a state_dir whose folder is missing did not fail"
grep -q "cannot open state_dir's folder $T/no/such: No such file" <<<"$out" || fail "the start failed otherwise than --check said: $out"
check_here deep-elsewhere 0 '^$' -c "$T/deep.ini" -n 1 --no-local-checks
mkdir -p "$T/no/such" && check_here deep-made 0 '^$' -c "$T/deep.ini" -n 1
[[ ! -e $T/no/such/prod3 ]] || fail "--check made state_dir"
sed "0,/^port = $P\$/ s##port = $P\ncontrol = $T/no/socks/n1.sock#" "$T/good.ini" >"$T/sock.ini"
check_here sock 78 "member 1's control socket folder $T/no/socks does not exist" -c "$T/sock.ini" -n 1
# The member's port: one this user may not bind is refused; one in use
# now only noted (the member itself may be running while its file is
# checked). The hostile review found both passing, then the start failing.
sed "0,/^port = $P\$/ s##port = 80#" "$T/good.ini" >"$T/low.ini"
if [[ $(cat /proc/sys/net/ipv4/ip_unprivileged_port_start 2>/dev/null) -gt 80 ]] && id nobody >/dev/null 2>&1; then
	chmod o+rx "$T" && chmod o+r "$T/low.ini"
	out=$(timeout $SAFETY_S setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$RINGD" -c "$T/low.ini" -n 1 --check --no-local-checks 2>&1 >/dev/null)
	[[ $? == 0 ]] || fail "--check --no-local-checks of port 80 as nobody: $out"
	out=$(timeout $SAFETY_S setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$RINGD" -c "$T/low.ini" -n 1 --check 2>&1 >/dev/null)
	rc=$?
	((rc == 78)) && grep -q "member 1's port 80 cannot be bound by this user" <<<"$out" ||
		fail "--check of port 80 as nobody: exit $rc, want 78 naming the port: $out"
fi
spawn perl -MIO::Socket::INET -e 'my $s = IO::Socket::INET->new(Proto => "udp", LocalAddr => "127.0.0.1", LocalPort => $ARGV[0]) or die; sleep 30' "$P"
port_taken() { ss -lunH "sport = :$P" | grep -q .; }
wait_until 5 port_taken || fail "could not take port $P for the check"
check_here busy 0 "note: member 1's port $P is in use on this host now" -c "$T/good.ini" -n 1
end_groups "$BG_PID"
# Members of two address families: the start refuses them (one family per ring).
sed "0,/^host = 127.0.0.1\$/! s/^host = 127.0.0.1\$/host = ::1/" "$T/good.ini" >"$T/mixed.ini"
check_here mixed 78 "host ::1\) is IPv6 only, \[node.1\] \(host 127.0.0.1\) IPv4 only" -c "$T/mixed.ini"
say "--check -n: a non-local address, a state_dir that cannot be made, a missing socket folder, a port this user may not bind and mixed address families refused (78), a port in use noted; --no-local-checks passes the host's own checks"

# ---- a member id the file does not have ----
out=$(timeout $SAFETY_S "$RINGD" -c "$T/good.ini" -n 3 2>&1)
rc=$?
((rc == 78)) || fail "ringd -n 3 of a 2-member ring exited $rc, want 78: $out"
grep -q '3' <<<"$out" || fail "ringd -n 3: the message does not name the id: $out"
out=$(timeout $SAFETY_S "$RINGCTL" -c "$T/good.ini" -n 3 status 2>&1)
rc=$?
((rc == 78)) || fail "ringctl -n 3 status of a 2-member ring exited $rc, want 78: $out"

# ---- usage ----
usage() { # WANT ARGS...: ringd ARGS must exit WANT
	local want=$1 rc
	shift
	timeout $SAFETY_S "$RINGD" "$@" >"$T/usage.out" 2>"$T/usage.err"
	rc=$?
	((rc == want)) || fail "ringd $* exited $rc, want $want: $(cat "$T/usage.err")"
}
usage 2
usage 2 -c "$T/good.ini"
usage 2 -c "$T/good.ini" -n 1 --bogus
usage 2 -c "$T/good.ini" -n 1 --no-local-checks # only with --check
usage 2 -c "$T/good.ini" -n 0
usage 2 -c "$T/good.ini" -n 70000
usage 2 -c "$T/good.ini" -n 1 --log-format yaml
usage 2 -c "$T/good.ini" -n 1 extra
usage 0 --help
grep -q -- '-c CONFIG -n ID' "$T/usage.out" || fail "ringd --help does not show the synopsis on stdout"
for args in "" "bogus" "-c $T/good.ini status" "-c $T/good.ini -n 1 run" "-n 1 status" "-c $T/good.ini -n 1 inject"; do
	# shellcheck disable=SC2086
	timeout $SAFETY_S "$RINGCTL" $args >/dev/null 2>&1
	rc=$?
	((rc == 2)) || fail "ringctl $args exited $rc, want 2"
done
timeout $SAFETY_S "$RINGCTL" --help | grep -q 'fenced-append' || fail "ringctl --help does not list fenced-append"
# Each command of ringctl's table has its own help, on stdout, exit 0, with
# no -n or -c asked first: its synopsis and what it does (issue 30).
cmds=$(sed -n '/} commands\[\] = {/,/^};/p' "$ROOT/ring/ctl/ringctl.c" | grep -oP '^\s*\{"\K[a-z-]+(?=")')
[[ -n $cmds ]] || fail "no command table in ring/ctl/ringctl.c"
for c in $cmds; do
	out=$(timeout $SAFETY_S "$RINGCTL" "$c" --help 2>"$T/help.err")
	rc=$?
	((rc == 0)) && [[ $(head -n 1 <<<"$out") == "usage: ringctl "*"$c"* && ! -s $T/help.err ]] ||
		fail "ringctl $c --help: exit $rc, '$(head -n 1 <<<"$out")', stderr '$(cat "$T/help.err")'"
	(($(grep -c '^usage: \|^       ringctl' <<<"$out") <= 2)) || fail "ringctl $c --help printed every command's usage"
done
# A file that is not there: line 0.
out=$(timeout $SAFETY_S "$RINGD" -c "$T/none.ini" -n 1 2>&1)
rc=$?
((rc == 78)) && [[ $out == "$T/none.ini:0: "* ]] ||
	fail "a missing file: exit $rc, '$out'; want 78 and '$T/none.ini:0: ...'"
pass "$cases bad files refused with FILE:LINE and exit 78; --check, non-member, usage, --help"
