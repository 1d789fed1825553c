# shellcheck shell=bash
# test/security/lib.sh: what only the security tests need, on top of
# test/lib.sh (ports, members, waits, logs, cleanup). Sourced by every
# test/security/t_*.sh: real ringd processes on 127.0.0.1, each test in its
# own temp dir on its own ports, keyed with `ringctl keygen`, members
# logging token hops (-v). test/run.sh test/security runs them, as root.

source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
HOSTILE=$ROOT/build/hostile
need_ring
need_tools jq ss timeout
[[ $(id -u) == 0 ]] || fail "run as root (raw sockets, AF_PACKET capture)"
lib_init ring-sec
CONF=$T/ring.ini
KEY=$T/ring.key
CONF_DEFAULT[name]=sec-$$
CONF_DEFAULT[secret_file]=$KEY
CONF_DEFAULT[allow_inject]=false
RINGD_ARGS=(-v)
SPAWN_OUT=$T/bg.out

# members: the member ids of $CONF.
members() { sed -n 's/^\[node\.\([0-9]*\)\]/\1/p' "$CONF"; }

# counters FILE: every member's status as one JSON array in FILE.
counters() {
	local i
	for i in $(members); do status "$i" || echo '{"node":'"$i"',"down":true}'; done | jq -s . >"$1"
}

# fenced_lines FILE: lines in the fenced resource (0 when none yet).
fenced_lines() { [[ -f $1 ]] && wc -l <"$1" || echo 0; }

# stalls: how many pause_detected the members logged. A loaded machine that
# stalls members makes two of them believe they hold for a moment
# (docs/operations.md): then only what fencing guarantees can be checked.
stalls() { all_logs pause_detected | wc -l; }

# trace_ok: ringctl trace over every member's log into $T/trace.json; true
# when its verdict is ok. With stalls, overlapping regions are allowed (the
# newer fence wins at the resource); fences granted twice or going
# backwards never are.
trace_ok() {
	local allow=()
	(($(stalls) > 0)) && allow=(--allow-overlap)
	"$RINGCTL" trace --json "${allow[@]}" "$T"/n*.log >"$T/trace.json" &&
		[[ $(jq -r .verdict "$T/trace.json") == ok ]]
}
