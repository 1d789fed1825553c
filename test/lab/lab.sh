#!/bin/bash
# test/lab/lab.sh: a fault lab. Runs ring members as separate hosts, each in
# its own network namespace on a bridge, and faults them from outside: kill,
# pause, stop, restart, and nftables cuts and loss inside the namespaces.
# See test/lab/README.md; `lab.sh --help` lists the commands.
#
# Rules it keeps: it touches only namespaces it made itself (addresses in
# 10.213.X.0/24, X a slot taken under /run/ring-lab.lock so that labs running
# at once never share names or addresses); every wait is bounded; every
# process is signalled by a PID it recorded (checked against the process's
# start time) or found inside the lab's own namespaces; `down`, a failed
# `up` and an interrupted `up` remove everything the lab made.
set -u
export LC_ALL=C

# test/lib.sh: wait_until, now_ms; only definitions (no lib_init: lab.sh
# is a tool, whose labs outlive it until `down`).
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
GLOBAL_LOCK=/run/ring-lab.lock # flock: taking a slot, releasing it
SLOTS=/run/ring-lab             # slot-X: the marker of the lab in slot X
PORT=7100                       # every member's port (each host has its own address)
MAX_SLOT=250
STOP_WAIT_S=${LAB_STOP_WAIT_S:-5} # SIGTERM -> gone, before SIGKILL (down) or giving up (stop)
UP_WAIT_S=${LAB_UP_WAIT_S:-30}   # up: members started -> ring formed

ENV_LAB_DIR=${LAB_DIR:-}
SLOT='' N='' NET='' LAB_DIR='' DEFAULT_DIR=0 CREATED_DIR=0

usage() {
	cat <<'EOF'
usage: test/lab/lab.sh [--dir DIR] CMD [ARG...]

A fault lab: ring members as separate hosts in network namespaces (a hub
namespace with a bridge, one namespace per member at 10.213.X.I/24, X a free
slot). The lab's files are in DIR: --dir DIR, else $LAB_DIR, else
/tmp/ring-lab-$LAB_TAG when LAB_TAG is set, else /tmp/ring-lab-X. Without any
of those, commands other than `up` use the one lab that was started without
them. Needs root, iproute2 and nftables.

  up N [key=value ...]   N hosts (2..254) and a running ring of N members
                         (name lab, port 7100, ack_timeout_ms 20, retries 3,
                         heartbeat_ms 50, loss_timeout_ms 500, lease_ms 2000,
                         idle_pass_ms 10, allow_inject true, quorum majority,
                         secret_file ring.key: a key made by ringctl keygen,
                         a copy per host in DIR/hI/; state_dir DIR/hI/state);
                         key=value sets a [ring] key ("key=" drops it;
                         authentication=off drops the key), node.I.key=value
                         a key of member I
  down [--purge]         stop every member (SIGTERM, then SIGKILL after a
                         bounded wait), remove namespaces, links, nft tables;
                         keeps the logs unless --purge
  kill I                 kill -9 member I
  pause I | cont I       SIGSTOP | SIGCONT member I
  stop I                 SIGTERM member I and wait (bounded) until it is gone
  restart I              start member I again (same INI and state; kill -9
                         first if it still runs)
  isolate I              host I drops all UDP to and from the other hosts
  split "1,2,3" "4,5"    each side drops UDP to and from the other side
  loss I|all PCT         host I (or every host) drops PCT% of its incoming
                         and of its outgoing UDP (0 removes it)
  heal                   remove every lab nft rule (isolate, split, loss)
  ring [--from I] [--json]  ringctl ring, from host I; default: the first
                         host whose member runs and that is not cut off
  holder                 the member(s) that have the token, per `ring`
  exec I CMD [ARG...]    run CMD in host I's namespace ($LAB_INI, $LAB_NODE,
                         $LAB_DIR set; ring/ is first in PATH)
  stranger CMD [ARG...]  run CMD on the lab's network as a host that is no
                         member: in the hub namespace, whose bridge gets
                         10.213.X.254 (N <= 253); $LAB_DIR set
  ctl I ARG...           ringctl -c INI -n I ARG... in host I (ring and watch
                         take no -n: ctl I watch watches the ring from host I)
  pids | logs | ini I | dir   member pids and states | log paths |
                         host I's INI | the lab dir
  list                   the labs up on this machine
  check                  whether labs can run here (exit 0) or not (exit 1)

Fault commands append one JSON line to DIR/faults.log, shaped like ringd's
JSON logs: {"ts":"...Z","node":0,"event":"fault","what":"kill 3"}.
Environment: LAB_DIR, LAB_TAG, LAB_UP_WAIT_S (30), LAB_STOP_WAIT_S (5).
EOF
}

die() {
	echo "lab.sh: $*" >&2
	exit 1
}

# One line per action.
say() { echo "lab${SLOT:+ $SLOT}: $*"; }


# ---- names: every one carries the slot ----------------------------------

hub_ns() { echo "ring-lab-$SLOT-hub"; }
host_ns() { echo "ring-lab-$SLOT-h$1"; }
bridge() { echo "rl$SLOT-br"; }
hub_veth() { echo "rl$SLOT-v$1"; }  # the bridge's end, in the hub
host_veth() { echo "rl$SLOT-e$1"; } # the host's end, in host I
nft_table() { echo "ring_lab_$SLOT"; }
addr() { echo "$NET.$1"; }
ini() { echo "$LAB_DIR/h$1/ring.ini"; }

# ---- processes ----------------------------------------------------------

# proc_stat PID: sets P_STATE (R, S, T, Z...) and P_START (start time in
# clock ticks since boot); false when there is no such process.
P_STATE='' P_START=''
proc_stat() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	# shellcheck disable=SC2086
	set -- $s
	P_STATE=$1 P_START=${20}
}

# member_pid I: prints the pid of member I's ringd when the process recorded
# at its start still runs (or is stopped); false otherwise.
member_pid() {
	local f=$LAB_DIR/h$1/pid pid start
	[[ -r $f ]] || return 1
	read -r pid start <"$f" || return 1
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	proc_stat "$pid" || return 1
	[[ $P_START == "$start" && $P_STATE != [ZX] ]] || return 1
	echo "$pid"
}

# gone PID START: true once that process has exited (gone or a zombie).
gone() {
	proc_stat "$1" || return 0
	[[ $P_START != "$2" || $P_STATE == [ZX] ]]
}

# wait_exit PID START SECONDS: true once that process has exited, polling.
wait_exit() { WAIT_QUIET=1 wait_until "$3" gone "$1" "$2"; }

# in_ns I CMD...: CMD in host I's namespace.
in_ns() {
	local ns
	ns=$(host_ns "$1")
	shift
	ip netns exec "$ns" "$@"
}

# ---- the fault log ------------------------------------------------------

# fault_log START DONE EVENT WHAT: one JSON line in faults.log, in the shape
# of ringd's JSON logs. START and DONE are $EPOCHREALTIME values taken just
# before the action's first change and just after its last: "ts" is START
# (nothing logged before it can be the fault's doing; a resumed or healed
# member may log within microseconds of it), "done" is DONE (from then on
# the fault is wholly in effect: all of a split's rules, a restarted
# member's socket answering).
fault_log() {
	local ts fin what=${4//\\/\\\\}
	what=${what//\"/\\\"}
	ts=$(date -u -d "@$1" +%Y-%m-%dT%H:%M:%S.%6NZ)
	fin=$(date -u -d "@$2" +%Y-%m-%dT%H:%M:%S.%6NZ)
	printf '{"ts":"%s","node":0,"event":"%s","what":"%s","done":"%s"}\n' \
		"$ts" "$3" "$what" "$fin" >>"$LAB_DIR/faults.log"
}

# ---- slots and lab state ------------------------------------------------

# marker_get FILE KEY
marker_get() { sed -n "s/^$2=//p" "$1" 2>/dev/null | head -n 1; }

# A slot's marker is stale when the lab dir it names holds no lab of that
# slot and no namespace of the slot exists (a lab dir removed by hand after
# a crash): such a slot is taken over.
slot_stale() {
	local x=$1 m=$SLOTS/slot-$1 d
	d=$(marker_get "$m" dir)
	[[ -n $d && $(marker_get "$d/lab.env" SLOT) == "$x" ]] && return 1
	[[ -n $(compgen -G "/run/netns/ring-lab-$x-*") ]] && return 1
	return 0
}

# take_slot DIR DEFAULT: the first free X in 1..MAX_SLOT, marked under the lock.
take_slot() {
	local want_dir=$1 is_default=$2 x d
	exec 9>>"$GLOBAL_LOCK" || die "cannot open $GLOBAL_LOCK"
	flock -w 10 9 || die "$GLOBAL_LOCK: still locked after 10 s"
	mkdir -p "$SLOTS" || die "cannot make $SLOTS" # under the lock: release_slot removes it when empty
	for ((x = 1; x <= MAX_SLOT; x++)); do
		if [[ -e $SLOTS/slot-$x ]]; then
			slot_stale "$x" || continue
			echo "lab: slot $x: its lab ($(marker_get "$SLOTS/slot-$x" dir)) is gone, taking it over"
		fi
		d=$want_dir
		[[ -n $d ]] || d=/tmp/ring-lab-$x
		printf 'dir=%s\ndefault=%s\nup_pid=%s\n' "$d" "$is_default" "$$" >"$SLOTS/slot-$x"
		SLOT=$x LAB_DIR=$d
		break
	done
	exec 9>&-
	[[ -n $SLOT ]] || die "no free slot in 1..$MAX_SLOT (see: lab.sh list)"
}

release_slot() {
	[[ -n $SLOT ]] || return 0
	exec 9>>"$GLOBAL_LOCK" || return 1
	flock -w 10 9 || echo "lab.sh: $GLOBAL_LOCK still locked after 10 s; releasing slot $SLOT anyway" >&2
	if [[ $(marker_get "$SLOTS/slot-$SLOT" dir) == "$LAB_DIR" ]]; then
		rm -f "$SLOTS/slot-$SLOT"
		say "release slot $SLOT (10.213.$SLOT.0/24)"
	fi
	rmdir "$SLOTS" 2>/dev/null
	exec 9>&-
}

# load_lab: reads DIR/lab.env; false when no lab is up there.
load_lab() {
	local k v
	[[ -r $LAB_DIR/lab.env ]] || return 1
	while IFS='=' read -r k v; do
		case $k in
		SLOT) SLOT=$v ;;
		N) N=$v ;;
		NET) NET=$v ;;
		DEFAULT_DIR) DEFAULT_DIR=$v ;;
		CREATED_DIR) CREATED_DIR=$v ;;
		esac
	done <"$LAB_DIR/lab.env"
	[[ $SLOT =~ ^[0-9]+$ && $N =~ ^[0-9]+$ && -n $NET ]] || die "$LAB_DIR/lab.env is damaged"
}

need_lab() {
	load_lab || die "no lab is up in $LAB_DIR"
}

# host_id ARG: validates a member id of this lab.
host_id() {
	[[ $1 =~ ^[1-9][0-9]*$ ]] && (($1 >= 1 && $1 <= N)) || die "no host '$1' in this lab (1..$N)"
}

# Finds the lab dir for commands other than up: --dir, LAB_DIR, LAB_TAG,
# else the single lab started without them.
find_dir() {
	local m found=()
	if [[ -n $LAB_DIR ]]; then
		return 0
	fi
	for m in "$SLOTS"/slot-*; do
		[[ -e $m && $(marker_get "$m" default) == 1 ]] && found+=("$(marker_get "$m" dir)")
	done
	case ${#found[@]} in
	1) LAB_DIR=${found[0]} ;;
	0) return 1 ;;
	*) die "several labs are up (${found[*]}): choose one with --dir DIR or LAB_DIR" ;;
	esac
}

# ---- nftables, inside the hosts' namespaces ------------------------------

# nft_apply I RULES: the lab's table and chains (made when missing, its base
# chains rewritten), then RULES (nft -f syntax), in one transaction in host I.
nft_apply() {
	local t
	t=$(nft_table)
	in_ns "$1" nft -f - <<EOF
table inet $t {
	chain input { type filter hook input priority 0; policy accept; }
	chain output { type filter hook output priority 0; policy accept; }
	chain cut_in { }
	chain cut_out { }
	chain loss_in { }
	chain loss_out { }
}
flush chain inet $t input
flush chain inet $t output
add rule inet $t input iif "lo" accept
add rule inet $t input jump cut_in
add rule inet $t input jump loss_in
add rule inet $t output oif "lo" accept
add rule inet $t output jump cut_out
add rule inet $t output jump loss_out
$2
EOF
}

# cut_rules WHY ADDR...: drop UDP from and to those addresses.
cut_rules() {
	local why=$1 t set
	shift
	t=$(nft_table)
	set=$(
		IFS=,
		echo "$*"
	)
	echo "add rule inet $t cut_in ip saddr { $set } meta l4proto udp counter drop comment \"$why\""
	echo "add rule inet $t cut_out ip daddr { $set } meta l4proto udp counter drop comment \"$why\""
}

nft_has_table() { in_ns "$1" nft list table inet "$(nft_table)" >/dev/null 2>&1; }

# ---- members ------------------------------------------------------------

# ns_start_member I: ringd for member I in host I, in the background; its pid
# and start time in DIR/hI/pid, the moment it was started in STARTED_AT
# (EPOCHREALTIME). Waits (10 s at most) for its control socket.
STARTED_AT=''
ns_start_member() {
	local i=$1 ns pid
	ns=$(host_ns "$i")
	STARTED_AT=$EPOCHREALTIME
	ip netns exec "$ns" "$RINGD" -c "$(ini "$i")" -n "$i" --log-format json -v \
		--log-file "$LAB_DIR/n$i.log" </dev/null >>"$LAB_DIR/n$i.err" 2>&1 9>&- &
	pid=$!
	if ! proc_stat "$pid"; then
		die "member $i: ringd (pid $pid) vanished at once: $(tail -n 3 "$LAB_DIR/n$i.err")"
	fi
	echo "$pid $P_START" >"$LAB_DIR/h$i/pid"
	say "start member $i in $ns ($(addr "$i"):$PORT): pid $pid"
	if ! WAIT_QUIET=1 wait_until 10 member_answers "$i" "$pid" "$P_START"; then
		gone "$pid" "$P_START" && die "member $i exited at start: $(tail -n 3 "$LAB_DIR/n$i.err")"
		die "member $i: control socket silent 10 s after start"
	fi
}

member_answers() {
	gone "$2" "$3" && return 0 # reported by the caller
	in_ns "$1" timeout 2 "$RINGCTL" -c "$(ini "$1")" -n "$1" status --json >/dev/null 2>&1
}

# ring_formed: all N answer `ringctl ring` in host 1, in one epoch, and one
# has the token. The members answer one after the other while the token
# moves, so a token in flight shows at two neighbours: that counts as one.
ring_formed() {
	local out
	out=$(in_ns 1 timeout 5 "$RINGCTL" -c "$(ini 1)" ring --json 2>/dev/null) || return 1
	jq -e --argjson n "$N" '
		[.[] | select(.state != "down")] as $up
		| [.[] | select(.has_token == true)] as $h
		| ($up | length) == $n and ([$up[].epoch] | unique | length) == 1
		  and (($h | length) == 1
		       or (($h | length) == 2
		           and ($h[0].successor == $h[1].node or $h[1].successor == $h[0].node)))' \
		<<<"$out" >/dev/null 2>&1
}

# ---- teardown -----------------------------------------------------------

# stop_all: SIGTERM (and SIGCONT, for paused ones) to every member, SIGKILL
# to those still there after STOP_WAIT_S; then anything else still inside the
# lab's namespaces (commands started with `exec`), by PID.
stop_all() {
	local i pid start f ns p cmd t0 n
	declare -A live=()
	for ((i = 1; i <= N; i++)); do
		f=$LAB_DIR/h$i/pid
		[[ -r $f ]] || continue
		read -r pid start <"$f"
		if ! member_pid "$i" >/dev/null; then
			say "member $i (pid $pid) has exited already"
			continue
		fi
		kill -TERM "$pid" 2>/dev/null
		kill -CONT "$pid" 2>/dev/null
		live[$pid]=$start
		say "stop member $i: SIGTERM pid $pid"
	done
	t0=$(now_ms)
	for ((n = 0; n < STOP_WAIT_S * 20 + 20 && ${#live[@]} > 0 && $(now_ms) - t0 < STOP_WAIT_S * 1000; n++)); do
		for pid in "${!live[@]}"; do
			gone "$pid" "${live[$pid]}" && unset "live[$pid]"
		done
		((${#live[@]} > 0)) && sleep 0.05
	done
	for pid in "${!live[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		say "pid $pid still there after ${STOP_WAIT_S} s: SIGKILL"
		wait_exit "$pid" "${live[$pid]}" 2
	done
	# Whatever else runs inside the lab's namespaces was started in them
	# through this lab (exec, ctl): end it too.
	declare -A rest=()
	for ns in "$(hub_ns)" $(for ((i = 1; i <= N; i++)); do host_ns "$i"; done); do
		[[ -e /run/netns/$ns ]] || continue
		for p in $(ip netns pids "$ns" 2>/dev/null); do
			proc_stat "$p" && [[ $P_STATE != [ZX] ]] || continue
			rest[$p]=$P_START
			cmd=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)
			say "end pid $p left in $ns (${cmd:0:60}): SIGTERM"
			kill -TERM "$p" 2>/dev/null
			kill -CONT "$p" 2>/dev/null
		done
	done
	t0=$(now_ms)
	for ((n = 0; n < 60 && ${#rest[@]} > 0 && $(now_ms) - t0 < 2000; n++)); do
		for p in "${!rest[@]}"; do
			gone "$p" "${rest[$p]}" && unset "rest[$p]"
		done
		((${#rest[@]} > 0)) && sleep 0.05
	done
	for p in "${!rest[@]}"; do
		say "pid $p still there after 2 s: SIGKILL"
		kill -KILL "$p" 2>/dev/null
		wait_exit "$p" "${rest[$p]}" 1
	done
}

# teardown PURGE: everything the lab made, in reverse; logs stay unless PURGE=1.
TORN=0
teardown() {
	local purge=$1 i ns kind a b
	((TORN)) && return 0
	TORN=1
	[[ -n $SLOT && -n $N ]] || return 0
	stop_all
	for ((i = 1; i <= N; i++)); do
		[[ -e /run/netns/$(host_ns "$i") ]] || continue
		if nft_has_table "$i"; then
			in_ns "$i" nft delete table inet "$(nft_table)" && say "nft delete table $(nft_table) in $(host_ns "$i")"
		fi
	done
	# DIR/made lists what up created, in order: remove it in reverse.
	if [[ -r $LAB_DIR/made ]]; then
		while read -r kind a b; do
			case $kind in
			link)
				if ip -n "$a" link show "$b" >/dev/null 2>&1; then
					ip -n "$a" link del "$b" && say "link del $b in $a"
				fi
				;;
			netns)
				if [[ -e /run/netns/$a ]]; then
					ip netns del "$a" && say "netns del $a"
				fi
				;;
			esac
		done < <(tac "$LAB_DIR/made")
	fi
	for ((i = 1; i <= N; i++)); do
		rm -rf "${LAB_DIR:?}/h$i"
	done
	if ((purge)); then
		rm -f "$LAB_DIR"/n*.log "$LAB_DIR"/n*.err "$LAB_DIR/faults.log"
	fi
	rm -f "$LAB_DIR/made" "$LAB_DIR/lab.env"
	if [[ ! -d $LAB_DIR ]]; then
		:
	elif ((purge)); then
		if rmdir "$LAB_DIR" 2>/dev/null; then
			say "removed $LAB_DIR"
		else
			say "left $LAB_DIR: it holds files the lab did not make"
		fi
	else
		say "logs kept in $LAB_DIR (lab.sh --dir $LAB_DIR down --purge removes them)"
	fi
	release_slot
}

# ---- commands -----------------------------------------------------------

UP_DONE=0
up_on_exit() {
	local rc=$?
	((UP_DONE)) && return 0
	trap '' INT TERM HUP
	[[ -n $SLOT ]] && say "up failed: tearing down"
	teardown 0
	exit $((rc ? rc : 1))
}
up_on_signal() {
	trap '' INT TERM HUP
	UP_DONE=1 # the exit trap has nothing more to do
	echo "lab${SLOT:+ $SLOT}: up interrupted: tearing down"
	teardown 1 # with the logs: the dir goes too unless it holds files of yours
	exit "$1"
}

cmd_up() {
	(($# >= 1)) || die "usage: up N [key=value ...]"
	local n=$1 kv k i
	UP_STARTED=$EPOCHREALTIME
	shift
	[[ $n =~ ^[1-9][0-9]*$ ]] && ((n >= 2 && n <= 254)) || die "up: N must be 2..254, not '$n'"
	# idle_pass_ms = 10 (as in conf/local5.ini): with ringd's default of 0
	# an idle token hops some 10^4 times a second, and with -v every member
	# logs every hop: megabytes a second. idle_pass_ms=0 brings that back.
	# Keyed, as a ring across hosts must be (docs/security.md): a ring
	# beyond loopback without a key does not start unless it says
	# authentication = off, which then drops the key.
	declare -A ring=(
		[name]=lab [ack_timeout_ms]=20 [retries]=3 [heartbeat_ms]=50 [loss_timeout_ms]=500
		[lease_ms]=2000 [idle_pass_ms]=10 [allow_inject]=true [quorum]=majority
		[secret_file]=ring.key
	)
	local keys=(name ack_timeout_ms retries heartbeat_ms loss_timeout_ms lease_ms idle_pass_ms allow_inject quorum
		secret_file)
	local node_kv=()
	for kv in "$@"; do
		[[ $kv == *=* ]] || die "up: want key=value, not '$kv'"
		k=${kv%%=*}
		if [[ $k =~ ^node\.[0-9]+\.[a-z_]+$ ]]; then
			node_kv+=("$kv")
			continue
		fi
		[[ $k =~ ^[a-z_]+$ ]] || die "up: bad key '$k'"
		[[ $k == state_dir ]] && die "up: state_dir is per host in the lab (DIR/hI/state)"
		[[ -v ring[$k] ]] || keys+=("$k")
		ring[$k]=${kv#*=}
	done
	[[ ${ring[authentication]:-} == off ]] && ring[secret_file]=''
	check_tools || exit 1
	if [[ ${ring[idle_pass_ms]:-0} == 0 ]]; then
		echo "lab: note: idle_pass_ms=0: the idle token never rests and -v logs every hop (MB/s per member)"
	fi

	local explicit=$LAB_DIR is_default=0
	[[ -n $explicit ]] || is_default=1
	if [[ -n $explicit && -e $explicit/lab.env ]]; then
		die "a lab is already up in $explicit (lab.sh --dir $explicit down)"
	fi
	# From here on, a failure or a signal removes what was made so far.
	trap up_on_exit EXIT
	trap 'up_on_signal 130' INT
	trap 'up_on_signal 143' TERM
	trap 'up_on_signal 129' HUP
	N=$n
	take_slot "$explicit" "$is_default"
	NET=10.213.$SLOT DEFAULT_DIR=$is_default
	if [[ -e $LAB_DIR/lab.env ]]; then
		# This dir holds another lab (up at the same time?): give the slot back.
		release_slot >/dev/null
		SLOT=''
		die "a lab is already up in $LAB_DIR"
	fi
	if [[ -d $LAB_DIR ]]; then
		CREATED_DIR=0
		# Files of an earlier lab in this dir: ringd appends to its log, so start afresh.
		rm -f "$LAB_DIR"/n*.log "$LAB_DIR"/n*.err "$LAB_DIR/faults.log" "$LAB_DIR/made"
	else
		CREATED_DIR=1
		mkdir -p "$LAB_DIR" || die "cannot make $LAB_DIR"
	fi
	printf 'SLOT=%s\nN=%s\nNET=%s\nDEFAULT_DIR=%s\nCREATED_DIR=%s\n' \
		"$SLOT" "$N" "$NET" "$DEFAULT_DIR" "$CREATED_DIR" >"$LAB_DIR/lab.env"
	: >"$LAB_DIR/made"
	say "slot $SLOT: $NET.0/24, dir $LAB_DIR"

	# Each object is written to DIR/made before it is made, so that a
	# signal between the two cannot leak it; names of the slot must be
	# free (they are, unless someone made them by hand).
	local hub br ns hv ev
	hub=$(hub_ns) br=$(bridge)
	for ns in "$hub" $(for ((i = 1; i <= N; i++)); do host_ns "$i"; done); do
		[[ ! -e /run/netns/$ns ]] || die "namespace $ns exists already: not made by this lab, left alone"
	done
	echo "netns $hub" >>"$LAB_DIR/made"
	ip netns add "$hub" || exit 1
	echo "link $hub $br" >>"$LAB_DIR/made"
	ip -n "$hub" link add "$br" type bridge &&
		ip -n "$hub" link set "$br" up || exit 1
	say "netns add $hub, bridge $br up"
	for ((i = 1; i <= N; i++)); do
		ns=$(host_ns "$i") hv=$(hub_veth "$i") ev=$(host_veth "$i")
		echo "netns $ns" >>"$LAB_DIR/made"
		ip netns add "$ns" || exit 1
		# Both ends are made inside the lab's namespaces: the root
		# namespace never sees them.
		echo "link $hub $hv" >>"$LAB_DIR/made"
		ip -n "$hub" link add "$hv" type veth peer name "$ev" netns "$ns" || exit 1
		ip -n "$hub" link set "$hv" master "$br" &&
			ip -n "$hub" link set "$hv" up &&
			ip -n "$ns" link set lo up &&
			ip -n "$ns" addr add "$(addr "$i")/24" dev "$ev" &&
			ip -n "$ns" link set "$ev" up || exit 1
		mkdir -p "$LAB_DIR/h$i" || exit 1
		say "netns add $ns: $ev $(addr "$i")/24 <-> $hv on $br"
	done

	# The ring's key, made once; each host has its own copy beside its INI,
	# as separate machines would.
	if [[ ${ring[secret_file]} == ring.key ]]; then
		rm -f "$LAB_DIR/ring.key"
		"$RINGCTL" keygen "$LAB_DIR/ring.key" >/dev/null || die "up: ringctl keygen failed"
		for ((i = 1; i <= N; i++)); do
			cp -p "$LAB_DIR/ring.key" "$LAB_DIR/h$i/ring.key" || exit 1
		done
		say "key: ringctl keygen $LAB_DIR/ring.key, a copy in each host's dir (secret_file = ring.key)"
	fi
	for ((i = 1; i <= N; i++)); do
		{
			echo "; ring lab, host $i of $N (test/lab/lab.sh up); the hosts' copies differ only in state_dir"
			echo "[ring]"
			for k in "${keys[@]}"; do
				[[ -n ${ring[$k]} ]] && echo "$k = ${ring[$k]}"
			done
			echo "state_dir = $LAB_DIR/h$i/state"
			local j
			for ((j = 1; j <= N; j++)); do
				echo
				echo "[node.$j]"
				echo "host = $(addr "$j")"
				echo "port = $PORT"
				for kv in "${node_kv[@]}"; do
					[[ $kv == node.$j.* ]] || continue
					kv=${kv#node."$j".}
					echo "${kv%%=*} = ${kv#*=}"
				done
			done
		} >"$(ini "$i")"
	done
	local check
	if ! check=$("$RINGD" -c "$(ini 1)" --check 2>&1); then
		echo "$check" >&2
		exit 78
	fi
	say "wrote $LAB_DIR/h{1..$N}/ring.ini (fingerprint $(sed -n 's/.*fingerprint \([0-9a-f]*\).*/\1/p' <<<"$check" | head -n 1))"

	for ((i = 1; i <= N; i++)); do
		ns_start_member "$i"
	done
	local t0
	t0=$(now_ms)
	if ! WAIT_QUIET=1 wait_until "$UP_WAIT_S" ring_formed; then
		in_ns 1 timeout 5 "$RINGCTL" -c "$(ini 1)" ring >&2
		echo "lab.sh: up: the ring did not form within ${UP_WAIT_S} s (all $N answering, one with the token)" >&2
		exit 1
	fi
	say "ring formed: $N members answer, one has the token ($(($(now_ms) - t0)) ms after the last start)"
	fault_log "$UP_STARTED" "$EPOCHREALTIME" lab "up $N"
	UP_DONE=1
	trap - EXIT INT TERM HUP
	say "ready: INI of host I is $LAB_DIR/hI/ring.ini; try: $0${explicit:+ --dir $LAB_DIR} ring"
}

cmd_down() {
	local purge=0
	[[ ${1:-} == --purge ]] && purge=1
	if ! load_lab; then
		echo "lab: no lab up in $LAB_DIR"
		if ((purge)) && [[ -d $LAB_DIR ]]; then
			rm -f "$LAB_DIR"/n*.log "$LAB_DIR"/n*.err "$LAB_DIR/faults.log"
			rmdir "$LAB_DIR" 2>/dev/null && echo "lab: removed the logs and $LAB_DIR"
		fi
		return 0
	fi
	# Finish once started: a second Ctrl-C would leave half a lab.
	trap 'echo "lab.sh: down: finishing the cleanup first" >&2' INT TERM HUP
	fault_log "$EPOCHREALTIME" "$EPOCHREALTIME" lab down
	teardown "$purge"
}

cmd_kill() {
	(($# == 1)) || die "usage: kill I"
	host_id "$1"
	local pid start t
	pid=$(member_pid "$1") || die "member $1 is not running"
	read -r _ start <"$LAB_DIR/h$1/pid"
	t=$EPOCHREALTIME
	kill -KILL "$pid" || die "kill -9 $pid failed"
	fault_log "$t" "$EPOCHREALTIME" fault "kill $1"
	say "kill -9 member $1 (pid $pid)"
	wait_exit "$pid" "$start" 2 || die "pid $pid still there 2 s after SIGKILL"
}

cmd_signal() { # pause|cont I
	local what=$1 sig
	shift
	(($# == 1)) || die "usage: $what I"
	host_id "$1"
	[[ $what == pause ]] && sig=STOP || sig=CONT
	local pid t
	pid=$(member_pid "$1") || die "member $1 is not running"
	t=$EPOCHREALTIME
	kill "-$sig" "$pid" || die "kill -$sig $pid failed"
	fault_log "$t" "$EPOCHREALTIME" fault "$what $1"
	say "$what member $1: SIG$sig pid $pid"
}

cmd_stop() {
	(($# == 1)) || die "usage: stop I"
	host_id "$1"
	local pid start t0 t
	pid=$(member_pid "$1") || die "member $1 is not running"
	read -r _ start <"$LAB_DIR/h$1/pid"
	t0=$(now_ms)
	t=$EPOCHREALTIME
	kill -TERM "$pid" || die "kill -TERM $pid failed"
	proc_stat "$pid" && [[ $P_STATE == T ]] && kill -CONT "$pid" && say "member $1 was paused: SIGCONT so that it can leave"
	fault_log "$t" "$EPOCHREALTIME" fault "stop $1"
	say "stop member $1: SIGTERM pid $pid"
	wait_exit "$pid" "$start" "$STOP_WAIT_S" ||
		die "member $1 (pid $pid) still running ${STOP_WAIT_S} s after SIGTERM (lab.sh kill $1 ends it)"
	say "member $1 left after $(($(now_ms) - t0)) ms"
}

cmd_restart() {
	(($# == 1)) || die "usage: restart I"
	host_id "$1"
	local pid start t
	if pid=$(member_pid "$1"); then
		read -r _ start <"$LAB_DIR/h$1/pid"
		t=$EPOCHREALTIME
		kill -KILL "$pid"
		fault_log "$t" "$EPOCHREALTIME" fault "kill $1"
		say "member $1 still running: kill -9 pid $pid first"
		wait_exit "$pid" "$start" 2 || die "pid $pid still there 2 s after SIGKILL"
	fi
	ns_start_member "$1"
	fault_log "$STARTED_AT" "$EPOCHREALTIME" fault "restart $1"
}

cmd_isolate() {
	(($# == 1)) || die "usage: isolate I"
	host_id "$1"
	local j others=() t
	for ((j = 1; j <= N; j++)); do
		((j == $1)) || others+=("$(addr "$j")")
	done
	t=$EPOCHREALTIME
	nft_apply "$1" "$(cut_rules "isolate $1" "${others[@]}")" || die "nft failed in $(host_ns "$1")"
	echo "isolate $1" >>"$LAB_DIR/h$1/cut"
	fault_log "$t" "$EPOCHREALTIME" fault "isolate $1"
	say "isolate $1: $(host_ns "$1") drops UDP to and from ${others[*]}"
}

# side LIST: member ids from "1,2,3" (or "1 2 3"), validated.
parse_side() {
	local id out=()
	for id in ${1//,/ }; do
		host_id "$id"
		out+=("$id")
	done
	((${#out[@]})) || die "split: an empty side"
	echo "${out[*]}"
}

cmd_split() {
	(($# == 2)) || die "usage: split \"1,2,3\" \"4,5\""
	local a b i j
	a=$(parse_side "$1") || exit 1
	b=$(parse_side "$2") || exit 1
	for i in $a; do
		for j in $b; do ((i != j)) || die "split: member $i is on both sides"; done
	done
	apply_side() { # THIS_SIDE OTHER_SIDE
		local i j addrs=()
		for j in $2; do addrs+=("$(addr "$j")"); done
		for i in $1; do
			nft_apply "$i" "$(cut_rules "split ${a// /,}|${b// /,}" "${addrs[@]}")" ||
				die "nft failed in $(host_ns "$i")"
			echo "split ${a// /,}|${b// /,}" >>"$LAB_DIR/h$i/cut"
		done
	}
	local t=$EPOCHREALTIME
	apply_side "$a" "$b"
	apply_side "$b" "$a"
	fault_log "$t" "$EPOCHREALTIME" fault "split ${a// /,} ${b// /,}"
	say "split {${a// /,}} | {${b// /,}}: each side drops UDP to and from the other"
}

cmd_heal() {
	(($# == 0)) || die "usage: heal"
	local i healed=() t=$EPOCHREALTIME
	for ((i = 1; i <= N; i++)); do
		if nft_has_table "$i"; then
			in_ns "$i" nft delete table inet "$(nft_table)" || die "nft failed in $(host_ns "$i")"
			healed+=("$i")
		fi
		rm -f "$LAB_DIR/h$i/cut"
	done
	fault_log "$t" "$EPOCHREALTIME" fault heal
	if ((${#healed[@]})); then
		say "heal: removed the lab's nft table in hosts ${healed[*]}"
	else
		say "heal: no lab nft rules to remove"
	fi
}

cmd_loss() {
	(($# == 2)) || die "usage: loss I|all PCT"
	local pct=$2 hosts=() i t rules
	[[ $pct =~ ^(0|[1-9][0-9]*)$ ]] && ((pct <= 100)) || die "loss: PCT must be 0..100, not '$pct'"
	if [[ $1 == all ]]; then
		for ((i = 1; i <= N; i++)); do hosts+=("$i"); done
	else
		host_id "$1"
		hosts=("$1")
	fi
	local t0=$EPOCHREALTIME
	t=$(nft_table)
	for i in "${hosts[@]}"; do
		rules="flush chain inet $t loss_in
flush chain inet $t loss_out"
		if ((pct > 0)); then
			rules+="
add rule inet $t loss_in ip saddr $NET.0/24 meta l4proto udp numgen random mod 100 < $pct counter drop comment \"loss $pct\"
add rule inet $t loss_out ip daddr $NET.0/24 meta l4proto udp numgen random mod 100 < $pct counter drop comment \"loss $pct\""
		fi
		nft_apply "$i" "$rules" || die "nft failed in $(host_ns "$i")"
	done
	fault_log "$t0" "$EPOCHREALTIME" fault "loss $1 $pct"
	if ((pct > 0)); then
		say "loss $1 $pct: host(s) ${hosts[*]} drop $pct% of incoming and $pct% of outgoing UDP"
	else
		say "loss $1 0: host(s) ${hosts[*]} drop no UDP for loss"
	fi
}

# ring [--from I] [ringctl ring options]: from host I; by default from the
# first host whose member runs (not paused) and that no isolate or split
# cuts, else the first whose member runs, else host 1.
cmd_ring() {
	local i from='' pid first_live=''
	if [[ ${1:-} == --from ]]; then
		(($# >= 2)) || die "usage: ring [--from I] [--json]"
		host_id "$2"
		from=$2
		shift 2
	fi
	for ((i = 1; i <= N && ${#from} == 0; i++)); do
		pid=$(member_pid "$i") || continue
		proc_stat "$pid" && [[ $P_STATE != T ]] || continue
		[[ -n $first_live ]] || first_live=$i
		[[ -e $LAB_DIR/h$i/cut ]] || from=$i
	done
	[[ -n $from ]] || from=${first_live:-1}
	echo "lab $SLOT: ringctl ring from host $from"
	in_ns "$from" timeout 10 "$RINGCTL" -c "$(ini "$from")" ring "$@"
}

# holder: the members that say they have the token (ringctl ring, from the
# host `ring` would use); false when none does.
cmd_holder() {
	local out ids
	out=$(cmd_ring --json 2>/dev/null | tail -n 1)
	ids=$(jq -r '[.[] | select(.has_token == true) | .node] | map(tostring) | join(" ")' <<<"$out" 2>/dev/null)
	[[ -n $ids ]] || return 1
	echo "$ids"
}

cmd_exec() {
	(($# >= 2)) || die "usage: exec I CMD [ARG...]"
	host_id "$1"
	local i=$1
	shift
	exec ip netns exec "$(host_ns "$i")" env LAB_DIR="$LAB_DIR" LAB_INI="$(ini "$i")" LAB_NODE="$i" \
		PATH="$ROOT/ring:$PATH" "$@" 9>&-
}

# stranger CMD...: CMD on the lab's network from a host that is no member
# (the hub, its bridge addressed $NET.254): where an attacker would be.
cmd_stranger() {
	(($# >= 1)) || die "usage: stranger CMD [ARG...]"
	((N < 254)) || die "stranger: the lab has 254 hosts; its address $NET.254 is a member's"
	ip -n "$(hub_ns)" addr replace "$NET.254/24" dev "$(bridge)" || die "stranger: cannot address $(bridge)"
	exec ip netns exec "$(hub_ns)" env LAB_DIR="$LAB_DIR" PATH="$ROOT/ring:$PATH" "$@" 9>&-
}

cmd_ctl() {
	(($# >= 2)) || die "usage: ctl I ARG..."
	host_id "$1"
	local i=$1
	shift
	case $1 in
	ring | watch) cmd_exec "$i" "$RINGCTL" -c "$(ini "$i")" "$@" ;;
	fenced-append) cmd_exec "$i" "$RINGCTL" "$@" ;;
	*) cmd_exec "$i" "$RINGCTL" -c "$(ini "$i")" -n "$i" "$@" ;;
	esac
}

cmd_pids() {
	local i pid st
	for ((i = 1; i <= N; i++)); do
		if pid=$(member_pid "$i"); then
			proc_stat "$pid"
			[[ $P_STATE == T ]] && st=paused || st=running
			echo "member $i: pid $pid $st ($(host_ns "$i"), $(addr "$i"):$PORT)"
		else
			echo "member $i: not running ($(host_ns "$i"), $(addr "$i"):$PORT)"
		fi
	done
}

cmd_logs() {
	local i
	for ((i = 1; i <= N; i++)); do echo "$LAB_DIR/n$i.log"; done
	echo "$LAB_DIR/faults.log"
}

cmd_list() {
	local m x any=0
	for m in "$SLOTS"/slot-*; do
		[[ -e $m ]] || continue
		x=${m##*slot-}
		any=1
		if slot_stale "$x"; then
			echo "slot $x: 10.213.$x.0/24 $(marker_get "$m" dir) (stale: no lab there)"
		else
			echo "slot $x: 10.213.$x.0/24 $(marker_get "$m" dir) N=$(marker_get "$(marker_get "$m" dir)/lab.env" N)"
		fi
	done
	((any)) || echo "no labs up"
}

check_tools() {
	local ok=0 t
	[[ $(id -u) == 0 ]] || {
		echo "lab: not root: network namespaces need root"
		ok=1
	}
	for t in ip nft jq flock timeout tac; do
		command -v "$t" >/dev/null || {
			echo "lab: $t is missing (ip: iproute2, nft: nftables, jq: jq)"
			ok=1
		}
	done
	[[ -x $RINGD && -x $RINGCTL ]] || {
		echo "lab: build first: make (ring/ringd and ring/ringctl are missing)"
		ok=1
	}
	return $ok
}

cmd_check() {
	local ns=ring-lab-check-$$ ok=0
	if [[ $(id -u) == 0 ]]; then echo "check: root: yes"; else
		echo "check: root: no (labs need root for network namespaces)"
		exit 1
	fi
	local t
	for t in ip nft jq flock timeout; do
		if command -v "$t" >/dev/null; then echo "check: $t: $(command -v "$t")"; else
			echo "check: $t: missing"
			ok=1
		fi
	done
	((ok)) && exit 1
	if ip netns add "$ns" 2>/dev/null; then
		echo "check: ip netns add: works"
		if ip -n "$ns" link add rlc-a type veth peer name rlc-b 2>/dev/null &&
			ip -n "$ns" link add rlc-br type bridge 2>/dev/null &&
			ip -n "$ns" link set rlc-a master rlc-br 2>/dev/null; then
			echo "check: veth and bridge: work"
		else
			echo "check: veth and bridge: cannot be made in a namespace"
			ok=1
		fi
		if ip netns exec "$ns" nft -f - 2>/dev/null <<'EOF'; then
table inet ring_lab_check {
	chain input { type filter hook input priority 0; policy accept; }
}
add rule inet ring_lab_check input meta l4proto udp numgen random mod 100 < 10 drop
EOF
			echo "check: nft (with numgen): works"
		else
			echo "check: nft: cannot load a table in a namespace"
			ok=1
		fi
		ip netns del "$ns"
	else
		echo "check: ip netns add: fails (no CAP_SYS_ADMIN, or a restricted container)"
		ok=1
	fi
	if [[ -x $RINGD && -x $RINGCTL ]]; then echo "check: ring/ringd, ring/ringctl: built"; else
		echo "check: ring/ringd, ring/ringctl: not built (make)"
	fi
	if ((ok)); then echo "check: labs cannot run here"; else echo "check: labs can run here"; fi
	exit $ok
}

# ---- main ---------------------------------------------------------------

main() {
	local dir_opt=
	while (($#)); do
		case $1 in
		--dir)
			(($# >= 2)) || die "--dir needs a value"
			dir_opt=$2
			shift 2
			;;
		--dir=*)
			dir_opt=${1#--dir=}
			shift
			;;
		-h | --help | help)
			usage
			exit 0
			;;
		-*) die "unknown option $1 (see --help)" ;;
		*) break ;;
		esac
	done
	(($#)) || {
		usage >&2
		exit 2
	}
	local cmd=$1
	shift
	if [[ -n $dir_opt ]]; then
		LAB_DIR=$dir_opt
	elif [[ -n $ENV_LAB_DIR ]]; then
		LAB_DIR=$ENV_LAB_DIR
	elif [[ -n ${LAB_TAG:-} ]]; then
		[[ $LAB_TAG =~ ^[A-Za-z0-9._-]+$ ]] || die "LAB_TAG: letters, digits, . _ - only"
		LAB_DIR=/tmp/ring-lab-$LAB_TAG
	else
		LAB_DIR=
	fi
	[[ -z $LAB_DIR ]] || LAB_DIR=$(realpath -m "$LAB_DIR")

	case $cmd in
	check) cmd_check ;;
	list) cmd_list ;;
	up) cmd_up "$@" ;;
	*)
		if ! find_dir; then
			[[ $cmd == down ]] && {
				echo "lab: no lab is up (started without --dir/LAB_DIR); nothing to do"
				exit 0
			}
			die "no lab is up here (or give --dir DIR / LAB_DIR)"
		fi
		if [[ $cmd == down ]]; then
			cmd_down "$@"
			return
		fi
		need_lab
		case $cmd in
		kill) cmd_kill "$@" ;;
		pause | cont) cmd_signal "$cmd" "$@" ;;
		stop) cmd_stop "$@" ;;
		restart) cmd_restart "$@" ;;
		isolate) cmd_isolate "$@" ;;
		split) cmd_split "$@" ;;
		heal) cmd_heal "$@" ;;
		loss) cmd_loss "$@" ;;
		ring) cmd_ring "$@" ;;
		holder) cmd_holder ;;
		exec) cmd_exec "$@" ;;
		stranger) cmd_stranger "$@" ;;
		ctl) cmd_ctl "$@" ;;
		pids) cmd_pids ;;
		logs) cmd_logs ;;
		ini)
			(($# == 1)) || die "usage: ini I"
			host_id "$1"
			ini "$1"
			;;
		dir) echo "$LAB_DIR" ;;
		*) die "unknown command '$cmd' (see --help)" ;;
		esac
		;;
	esac
}

main "$@"
