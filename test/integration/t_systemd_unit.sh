#!/bin/bash
# conf/ring@.service, without starting it under this machine's systemd:
# `systemd-analyze verify` passes without a warning on a copy whose ringd is
# the one built here; `systemd-analyze security` rates its sandbox; its
# ExecStartPre and ExecStart lines run a member of a real ring; and every
# system call and socket family ringd uses on the way (join, a grant, the
# metrics, a key reload, a pause, the leave) is one the unit's
# SystemCallFilter= and RestrictAddressFamilies= let through, traced with strace.
source "$(dirname "$0")/lib.sh"
need_tools systemd-analyze strace

UNIT=$ROOT/conf/ring@.service
[[ -f $UNIT ]] || fail "no $UNIT"
MAX_EXPOSURE=15 # systemd-analyze security's scale, tenths: 1.5 "OK"

# ---- 1. verify, on a copy that runs the ringd built here ----
mkdir -p "$T/unit"
sed "s|/usr/local/bin/ringd|$RINGD|g" "$UNIT" >"$T/unit/ring@.service"
grep -q "$RINGD" "$T/unit/ring@.service" || fail "the unit does not run /usr/local/bin/ringd (what make install puts there)"
# verify exits 0 after a line it ignores ("Unknown key", a bad value): any
# output at all fails the test.
out=$(cd "$T/unit" && systemd-analyze verify --man=no ring@.service ring@3.service 2>&1)
rc=$?
((rc == 0)) && [[ -z $out ]] || fail "systemd-analyze verify (exit $rc): $out"
say "systemd-analyze verify: clean"

# ---- 2. what the unit promises (SPEC.md, docs/operations.md) ----
key() { sed -n "s/^$1=//p" "$UNIT"; }
[[ $(key Type) == notify ]] || fail "Type=$(key Type), want notify (READY=1 once joined)"
[[ $(key WatchdogSec) =~ ^[1-9][0-9]*$ ]] || fail "WatchdogSec=$(key WatchdogSec), want whole seconds"
[[ $(key ExecReload) == *"kill -HUP"* ]] || fail "ExecReload=$(key ExecReload), want SIGHUP (key reload)"
[[ $(key ExecStartPre) == *"--check"* ]] || fail "ExecStartPre=$(key ExecStartPre), want ringd --check"
[[ $(key RestartPreventExitStatus) == *78* ]] || fail "a bad file (exit 78) must not be retried"
# Group=ringusers and 0710: control_group = ringusers needs no chown (which
# @privileged refuses) and its members may pass through /var/lib/ring.
for k in NoNewPrivileges=yes ProtectSystem=strict StateDirectory=ring Group=ringusers StateDirectoryMode=0710; do
	grep -qx "$k" "$UNIT" || fail "no $k in the unit"
done
exposure=$(cd "$T/unit" && systemd-analyze security --offline=yes --man=no ring@1.service 2>&1 |
	sed -n 's/.*Overall exposure level for ring@1.service: \([0-9.]*\).*/\1/p')
[[ -n $exposure ]] || fail "systemd-analyze security gave no exposure level"
(cd "$T/unit" && systemd-analyze security --offline=yes --man=no --threshold=$MAX_EXPOSURE ring@1.service >/dev/null 2>&1) ||
	fail "sandbox exposure $exposure, want at most $((MAX_EXPOSURE / 10)).$((MAX_EXPOSURE % 10))"
say "systemd-analyze security: exposure $exposure"

# ---- 3. its command lines, as systemd would run them for instance ID ----
"$RINGCTL" keygen "$T/ring.key" >/dev/null || fail "ringctl keygen failed"
make_conf "$CONF" 3 secret_file="$T/ring.key"
# cmdline KEY ID [CONFIG]: the unit's KEY= line for instance ID, with
# RING_CONFIG set as its Environment= line would (CONFIG, default $CONF).
cmdline() {
	local l
	l=$(key "$1" | sed "s|/usr/local/bin/ringd|$RINGD|; s|%i|$2|g; s|\${RING_CONFIG}|${3:-$CONF}|g")
	[[ $l != *'$'* && $l != *%* ]] || fail "the unit's $1 needs what this test does not set: $l"
	echo "$l"
}
key Environment | grep -qx 'RING_CONFIG=/etc/ring/ring.conf' || fail "Environment=RING_CONFIG=/etc/ring/ring.conf is gone"
read -ra pre <<<"$(cmdline ExecStartPre 2)"
"${pre[@]}" >"$T/check.out" 2>&1 || fail "ExecStartPre exited $?: $(cat "$T/check.out")"
echo "[ring]
name = broken
bogus = 1" >"$T/bad.ini"
read -ra pre <<<"$(cmdline ExecStartPre 2 "$T/bad.ini")"
"${pre[@]}" >/dev/null 2>&1
rc=$?
((rc == 78)) || fail "ExecStartPre on a bad file exited $rc, want 78"
read -ra pre <<<"$(cmdline ExecStartPre 9)"
"${pre[@]}" >/dev/null 2>&1 && fail "ExecStartPre for a member the file lacks passed"

# ExecStart for every member; member 1 under strace. The log goes to stderr
# (the journal's place), kept in nID.err.
start_unit_member() {
	local -a cmd
	read -ra cmd <<<"$(cmdline ExecStart "$1")"
	"${RINGD_WRAP[@]}" "${cmd[@]}" 2>>"$T/n$1.err" &
	PIDS[$1]=$!
}
RINGD_WRAP=(strace -f -qq -o "$T/strace.txt")
NOTIFY_SOCKET=$T/nobody.sock WATCHDOG_USEC=200000 start_unit_member 1
RINGD_WRAP=()
tracer=${PIDS[1]}
# strace's first child may be its own short-lived probe of ptrace's
# options, not the tracee: ringd is the child that has exec'd ringd.
traced() {
	local c
	for c in $(cat "/proc/$tracer/task/$tracer/children" 2>/dev/null); do
		[[ $(cat "/proc/$c/comm" 2>/dev/null) == ringd ]] && { ringd_pid=$c; return 0; }
	done
	return 1
}
wait_until 5 traced || fail "strace started no ringd: $(tail -n 3 "$T/n1.err")"
start_unit_member 2
start_unit_member 3
wait_until 15 member_up 1 || fail "member 1 (ExecStart under strace) not answering"
formed() { [[ $(status 1 | jq '.alive | length') == 3 ]]; }
wait_until 10 formed || fail "the ring did not form: $(status 1)"
timeout 20 "$RINGCTL" -c "$CONF" -n 1 run -t 10000 -- true || fail "no grant at member 1"
timeout 10 "$RINGCTL" -c "$CONF" -n 1 metrics >/dev/null || fail "no metrics from member 1"
ring_json >/dev/null || fail "ringctl ring failed"
kill -HUP "$ringd_pid"
wait_until 5 grep -q '"event":"keys_reloaded"' "$T/n1.err" || fail "member 1 did not reload its keys"
"$RINGCTL" -c "$CONF" -n 1 inject pause 50 >/dev/null || fail "inject pause failed"
kill -TERM "$ringd_pid"
wait_gone "$tracer" 10 || fail "member 1 did not leave after SIGTERM"
wait "$tracer"
rc=$?
unset "PIDS[1]"
((rc == 0)) || fail "member 1 under strace exited $rc"
grep -q '"event":"leave_done"' "$T/n1.err" || fail "member 1 did not leave gracefully"
say "ExecStart ran members 1-3; member 1, traced, joined, granted, reloaded, paused, left"

# ---- 4. the system calls and socket families it used, against the unit ----
# expand GROUP-OR-CALL...: the system calls, as systemd-analyze's table of
# groups (read once) names them; groups nest.
systemd-analyze syscall-filter 2>/dev/null >"$T/groups.txt"
grep -q '^@system-service' "$T/groups.txt" || fail "systemd-analyze syscall-filter lists no @system-service"
expand() {
	awk -v want="$*" '
		/^@/ { g = $1; next }
		g != "" && NF && $1 !~ /^#/ { m[g] = m[g] " " $1 }
		function out(x,   n, i, a) {
			if (x !~ /^@/) { print x; return }
			if (seen[x]++) return
			n = split(m[x], a, " ")
			for (i = 1; i <= n; i++) out(a[i])
		}
		END { n = split(want, w, " "); for (i = 1; i <= n; i++) out(w[i]) }' "$T/groups.txt"
}
allow=$(key SystemCallFilter | grep -v '^~')
deny=$(key SystemCallFilter | sed -n 's/^~//p')
[[ -n $allow ]] || fail "no SystemCallFilter= allow list in the unit"
expand "$allow" | sort -u >"$T/allow.txt"
expand "$deny" | sort -u >"$T/deny.txt"
comm -23 "$T/allow.txt" "$T/deny.txt" >"$T/filter.txt"
sed -n 's/^[0-9]* *\([a-z_0-9]*\)(.*/\1/p' "$T/strace.txt" | sort -u >"$T/used.txt"
(($(wc -l <"$T/used.txt") >= 20)) || fail "strace saw only $(wc -l <"$T/used.txt") system calls"
blocked=$(comm -23 "$T/used.txt" "$T/filter.txt" | tr '\n' ' ')
[[ -z $blocked ]] || fail "ringd uses system calls the unit's SystemCallFilter= refuses: $blocked"
families=$(sed -n 's/^[0-9]* *socket(\(AF_[A-Z0-9]*\).*/\1/p' "$T/strace.txt" | sort -u | tr '\n' ' ')
for f in $families; do
	[[ " $(key RestrictAddressFamilies) " == *" $f "* ]] ||
		fail "ringd opens $f sockets, which RestrictAddressFamilies= refuses"
done
[[ $families == *AF_UNIX* && $families == *AF_INET* ]] || fail "strace saw no AF_UNIX and AF_INET sockets: $families"

pass "verify clean, exposure $exposure, $(wc -l <"$T/used.txt") system calls all allowed, families: $families"
