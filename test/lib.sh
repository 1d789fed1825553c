# shellcheck shell=bash
# test/lib.sh: what every scripted suite shares (test/integration,
# test/security, test/lab, test/bench, test/demo). Sourced, never run.
# Sourcing only defines things; lib_init makes the script's temp dir and
# installs the trap that ends, on every exit, everything the script started.
#
# Rules kept here so that no script need repeat them:
# - every wait is bounded polling (wait_until, in seconds; fractions work),
#   never a fixed sleep;
# - every process a script starts is recorded and ended by its PID (members
#   in PIDS, background commands in BG_PIDS, each leading its own process
#   group, ended with every process of that group in our session); nothing
#   is ever looked up by name;
# - ports come from pick_ports, reserved under $PORT_LOCKS against every
#   other script running at the same time (a lock left by a dead script is
#   reclaimed), and only on 127.0.0.1.
#
# Environment: KEEP=1 keeps the temp dir of a passing script too (a failing
# one always keeps it); TEST_TIME_SCALE=N stretches every wait_until bound
# N times, for a slow machine (not the bounds a test asserts).

# shellcheck disable=SC2034 # STOP_RC, BG_RC, PORT_BASE...: set here, read by the scripts
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RINGD=${RINGD:-$ROOT/ring/ringd}
RINGCTL=${RINGCTL:-$ROOT/ring/ringctl}
TEST_NAME=${TEST_NAME:-$(basename "$0" .sh)}
TEST_TIME_SCALE=${TEST_TIME_SCALE:-1}
PORT_LOCKS=/tmp/ring-test-ports # one directory per reserved port, its owner's pid inside

T=          # the script's temp dir (lib_init)
OWN_T=0     # 1: lib_init made it, cleanup removes it
CONF=       # the ring's INI (make_conf)
PORT_BASE=0 # pick_ports
PORTS_HELD=()
declare -A PIDS=() # member id -> ringd pid
BG_PIDS=()         # background commands, each leading its own process group
RINGD_ARGS=()      # extra ringd arguments of start_member (e.g. -v)
RINGD_WRAP=()      # a wrapper for start_member's ringd (e.g. valgrind ...)
CLEANUP_HOOKS=()   # functions cleanup calls first (a suite's own processes)
T0_US=${EPOCHREALTIME/./}

# ---- time and reporting ----

now_us() { echo "${EPOCHREALTIME/./}"; }
now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

# secs MS: MS milliseconds as seconds for wait_until ("1.500").
secs() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }

# Seconds since the script started, for the progress lines.
elapsed() { local t=${EPOCHREALTIME/./}; printf '%d.%03d' $(((t - T0_US) / 1000000)) $(((t - T0_US) / 1000 % 1000)); }
say() { echo "[$(elapsed)s] $*"; }

# The end of every member's log (without token hops) and of the other logs
# in $T: what a failure report needs.
dump_logs() {
	[[ -n $T && -d $T ]] || return 0
	local f
	for f in "$T"/n*.log; do
		[[ -s $f ]] || continue
		echo "--- ${f##*/} (last events other than token hops)"
		grep -v -e '"event":"token_recv"' -e '"event":"token_pass"' "$f" | tail -n "${TAIL_LINES:-12}"
	done
	for f in "$T"/*.err "$T"/*.log "$T"/*.out "$T"/c*.txt; do
		[[ -s $f && ${f##*/} != n*.log ]] || continue
		echo "--- ${f##*/} (tail)"
		tail -n 5 "$f"
	done
	return 0
}

# fail MESSAGE: the script fails with MESSAGE, the logs' tails, and the
# stalls its members saw (a pause the script did not inject means the
# machine froze for that long, which no timing assertion survives).
fail() {
	echo "FAIL $TEST_NAME: $*"
	dump_logs
	local stalls
	stalls=$(all_logs pause_detected 2>/dev/null | jq -r '"member \(.node) stalled \(.ms) ms at \(.ts)"' 2>/dev/null)
	[[ -z $stalls ]] || echo "stalls (pause_detected; one the script did not inject means the machine stalled):
$stalls"
	exit 1
}

pass() {
	echo "PASS $TEST_NAME${1:+: $1}"
	exit 0
}

# skip REASON: the script cannot run here (exit 77, which test/run.sh counts
# as skipped, with REASON).
skip() {
	echo "SKIP $TEST_NAME: $*"
	exit 77
}

# need_ring: ring/ringd and ring/ringctl are built; need_tools TOOL...: on PATH.
need_ring() {
	[[ -x $RINGD && -x $RINGCTL ]] || fail "build ring/ringd and ring/ringctl first (make)"
}
need_tools() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || fail "$t is missing (make deps)"
	done
}

# ---- polling ----

# wait_until SECONDS CMD [ARG...]: runs CMD every 50 ms until it succeeds
# (0) or SECONDS (times TEST_TIME_SCALE; fractions work) have passed; then
# says what it waited for (unless WAIT_QUIET=1) and returns 1. Bounded in
# time and in count.
wait_until() {
	# CMD runs anew at each try, but a $(...) among its words is expanded
	# once, before the first: wrap such a check in a function.
	# (Locals carry a prefix: CMD may read the caller's variables, which
	# bash's dynamic scoping would otherwise shadow.)
	local _wu_s=$1 _wu_ms _wu_end _wu_n
	shift
	_wu_ms=$(awk -v s="$_wu_s" -v k="$TEST_TIME_SCALE" 'BEGIN { printf "%d", s * k * 1000 }')
	_wu_end=$(($(now_ms) + _wu_ms))
	for ((_wu_n = 0; _wu_n < 1000000; _wu_n++)); do
		"$@" >/dev/null 2>&1 && return 0
		(($(now_ms) >= _wu_end)) && break
		sleep 0.05
	done
	[[ ${WAIT_QUIET:-0} == 1 ]] || echo "timed out after ${_wu_s}s waiting for: $*"
	return 1
}

# ---- processes, all by PID ----

# pid_gone PID: true once it has exited (gone, or a zombie not yet reaped).
pid_gone() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	s=${s##*) }
	[[ ${s:0:1} == Z ]]
}
pid_alive() { ! pid_gone "$1"; }

# wait_gone PID SECONDS: true once PID has exited, polling.
wait_gone() { WAIT_QUIET=1 wait_until "$2" pid_gone "$1"; }

# stop_pids PID...: SIGTERM, at most STOP_WAIT_S (3) s, then SIGKILL; reaps them.
stop_pids() {
	local p
	for p in "$@"; do kill -TERM "$p" 2>/dev/null; done
	for p in "$@"; do wait_gone "$p" "${STOP_WAIT_S:-3}" || kill -KILL "$p" 2>/dev/null; done
	for p in "$@"; do wait "$p" 2>/dev/null; done
	return 0
}

# group_pids PGID...: the live processes of those process groups that are
# in this script's session: what spawn started, and only that. (A group
# number is only reused once its group is empty, and then not in our session.)
MY_SID=$(s=$(cat /proc/$$/stat) && s=${s##*) } && set -- $s && echo "$4")
group_pids() {
	local f s want=" $* "
	for f in /proc/[0-9]*/stat; do
		read -r s 2>/dev/null <"$f" || continue # (read, not cat: no fork per process)
		s=${s##*) }
		# shellcheck disable=SC2086
		set -- $s # state ppid pgrp session ...
		[[ $1 != Z && $4 == "$MY_SID" && $want == *" $3 "* ]] && echo "${f//[^0-9]/}"
	done
}
groups_gone() { [[ -z $(group_pids "$@") ]]; }

# end_groups PGID...: SIGTERM to every process of those groups, SIGKILL to
# what is left after 3 s; reaps the leaders.
end_groups() {
	(($#)) || return 0
	local p
	for p in $(group_pids "$@"); do kill -TERM "$p" 2>/dev/null; done
	WAIT_QUIET=1 wait_until 3 groups_gone "$@" ||
		for p in $(group_pids "$@"); do kill -KILL "$p" 2>/dev/null; done
	for p in "$@"; do wait "$p" 2>/dev/null; done
	return 0
}

# spawn CMD [ARG...]: CMD (a program or a function) in the background, in
# its own process group so that cleanup ends it with whatever it started (a
# CMD under ringctl run). Output to $SPAWN_OUT ($T/bg.log); pid in BG_PID.
BG_PID=
spawn() {
	set -m
	"$@" </dev/null >>"${SPAWN_OUT:-$T/bg.log}" 2>&1 &
	BG_PID=$!
	set +m
	BG_PIDS+=("$BG_PID")
}

# wait_bg PID SECONDS: waits for a background job, bounded; its status in BG_RC.
BG_RC=
wait_bg() {
	if ! wait_gone "$1" "$2"; then
		BG_RC=timeout
		return 1
	fi
	wait "$1"
	BG_RC=$?
	return 0
}

# ---- ports ----

# pick_ports N: sets PORT_BASE so that PORT_BASE..PORT_BASE+N-1 are UDP
# ports no socket uses, in 20000..59000 and below the kernel's ephemeral
# range (where a client's socket could take one meanwhile), and reserves
# them against every other script (a directory per port holding its
# owner's pid; one whose owner is gone is reclaimed). cleanup releases them.
pick_ports() {
	local n=$1 lo=20000 hi eph_lo=0 try base p ok used owner got
	read -r eph_lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
	mkdir -p "$PORT_LOCKS" 2>/dev/null
	hi=$((59000 - n))
	((eph_lo > lo + 1000 && eph_lo - n < hi)) && hi=$((eph_lo - n))
	for ((try = 0; try < 50; try++)); do
		base=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo + 1)))
		used=" $(ss -Huan 2>/dev/null | awk '{k = split($4, a, ":"); printf "%s ", a[k]}')"
		ok=1
		for ((p = base; p < base + n; p++)); do
			[[ $used == *" $p "* ]] && { ok=0; break; }
		done
		((ok)) || continue
		got=()
		for ((p = base; p < base + n; p++)); do
			if mkdir "$PORT_LOCKS/$p" 2>/dev/null; then
				echo $$ >"$PORT_LOCKS/$p/owner"
				got+=("$p")
				continue
			fi
			# Taken by a live script, or left by a dead one: reclaim only the latter.
			owner=$(cat "$PORT_LOCKS/$p/owner" 2>/dev/null)
			if [[ -n $owner ]] && ! kill -0 "$owner" 2>/dev/null; then
				echo $$ >"$PORT_LOCKS/$p/owner"
				got+=("$p")
			else
				ok=0
				break
			fi
		done
		if ((ok)); then
			PORTS_HELD+=("${got[@]}")
			PORT_BASE=$base
			return 0
		fi
		for p in "${got[@]}"; do rm -rf "${PORT_LOCKS:?}/$p"; done
	done
	fail "pick_ports: no $n free consecutive UDP ports after 50 tries"
}

release_ports() {
	local p
	for p in "${PORTS_HELD[@]}"; do rm -rf "${PORT_LOCKS:?}/$p"; done
	PORTS_HELD=()
}

# pick_ports N, the last of them with its TCP twin free too, for an HTTP
# listener (metrics_listen): HTTP is that port. Fails the test when ten
# tries find none.
pick_ports_with_http() {
	local try
	for ((try = 0; try < 10; try++)); do
		pick_ports "$1"
		HTTP=$((PORT_BASE + $1 - 1))
		ss -Htln | awk '{print $4}' | grep -q ":$HTTP\$" || return 0
		release_ports
		PORT_BASE=0
	done
	fail "no free TCP port for the metrics listener"
}

# ---- configuration ----

# The [ring] keys make_conf writes, in this order, and their values; a suite
# changes CONF_DEFAULT before make_conf (an empty value leaves the key out,
# so ringd's default applies).
CONF_KEYS=(name lease_ms ack_timeout_ms retries heartbeat_ms loss_timeout_ms idle_pass_ms quorum state_dir secret_file allow_inject)
declare -A CONF_DEFAULT=(
	[name]=test-$$ [lease_ms]=2000 [ack_timeout_ms]=20 [retries]=3 [heartbeat_ms]=50
	[loss_timeout_ms]=400 [idle_pass_ms]=0 [quorum]=majority [state_dir]='$T/state'
	[secret_file]='' [allow_inject]=true
)

# make_conf FILE N [key=value ...]: a ring of N members on 127.0.0.1 at
# PORT_BASE.. (pick_ports first when none was picked). key=value sets a
# [ring] key ("key=" drops it); node.ID.key=value sets a key of member ID.
make_conf() {
	local file=$1 n=$2 kv k i keys=("${CONF_KEYS[@]}")
	shift 2
	((PORT_BASE > 0)) || pick_ports "$n"
	local -A v=() node=() known=()
	for k in "${keys[@]}"; do known[$k]=1; done
	for k in "${!CONF_DEFAULT[@]}"; do v[$k]=${CONF_DEFAULT[$k]}; done
	[[ -v v[state_dir] ]] && v[state_dir]=${v[state_dir]//'$T'/$T}
	for kv in "$@"; do
		k=${kv%%=*}
		if [[ $k == node.*.* ]]; then
			node[$k]=${kv#*=}
		else
			[[ -v known[$k] ]] || { keys+=("$k"); known[$k]=1; }
			v[$k]=${kv#*=}
		fi
	done
	{
		echo "; written by $TEST_NAME (test/lib.sh make_conf)"
		echo "[ring]"
		for k in "${keys[@]}"; do
			[[ -n ${v[$k]:-} ]] && echo "$k = ${v[$k]}"
		done
		for ((i = 1; i <= n; i++)); do
			printf '\n[node.%d]\nhost = 127.0.0.1\nport = %d\n' "$i" $((PORT_BASE + i - 1))
			for kv in "${!node[@]}"; do
				[[ $kv == node.$i.* ]] && echo "${kv#node."$i".} = ${node[$kv]}"
			done
		done
	} >"$file"
	return 0
}

# conf_value KEY [FILE]: a [ring] key's value in FILE ($CONF).
conf_value() { sed -n "s/^$1 *= *\([^ ;]*\).*/\1/p" "${2:-$CONF}" | head -n 1; }

# ---- members ----

ctl() { "$RINGCTL" -c "$CONF" "$@"; }
status() { timeout 10 "$RINGCTL" -c "$CONF" -n "$1" status --json; }
ring_json() { timeout 10 "$RINGCTL" -c "$CONF" ring --json; }

# start_ringd ID [CONFIG]: ringd for member ID of CONFIG ($CONF) in the background (under
# RINGD_WRAP, with RINGD_ARGS), JSON log in $LOG_DIR/nID.log, stderr in
# $LOG_DIR/nID.err (LOG_DIR: $T unless set); its pid in PIDS[ID]. Does not wait.
start_ringd() {
	local id=$1 d=${LOG_DIR:-$T} CONF=${2:-$CONF}
	"${RINGD_WRAP[@]}" "$RINGD" -c "$CONF" -n "$id" --log-format json --log-file "$d/n$id.log" \
		"${RINGD_ARGS[@]}" 2>>"$d/n$id.err" &
	PIDS[$id]=$!
}

member_up() { # ID [CONFIG]: its control socket answers, or it has exited
	pid_gone "${PIDS[$1]}" || "$RINGCTL" -c "${2:-$CONF}" -n "$1" status --json >/dev/null 2>&1
}

# start_member ID [CONFIG]: start_ringd, then waits (START_WAIT_S, 10 s) until its
# control socket answers; fails the script if it exits or stays silent.
start_member() {
	local id=$1 limit=${START_WAIT_S:-10}
	start_ringd "$id" "${2:-$CONF}"
	WAIT_QUIET=1 wait_until "$limit" member_up "$id" "${2:-$CONF}" ||
		fail "member $id: control socket not answering $limit s after start"
	pid_gone "${PIDS[$id]}" && fail "member $id exited at start: $(tail -n 3 "${LOG_DIR:-$T}/n$id.err")"
	return 0
}

start_ring() { # N: starts members 1..N
	local i
	for ((i = 1; i <= $1; i++)); do start_member "$i"; done
}

# stop_member ID [SECONDS]: SIGTERM; waits at most SECONDS (STOP_WAIT_S, 5);
# STOP_RC is ringd's exit status. Returns 1 when it did not exit in time.
STOP_RC=
stop_member() {
	local id=$1 pid=${PIDS[$1]}
	kill -TERM "$pid" 2>/dev/null
	if ! wait_gone "$pid" "${2:-${STOP_WAIT_S:-5}}"; then
		STOP_RC=timeout
		return 1
	fi
	wait "$pid"
	STOP_RC=$?
	unset "PIDS[$id]"
	return 0
}

# kill_member ID: SIGKILL, reaped at once (so bash prints no "Killed").
kill_member() {
	local id=$1 pid=${PIDS[$1]}
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	unset "PIDS[$id]"
}

# ---- logs ----

# jq: .ts ("2026-01-02T03:04:05.123456Z", UTC) as microseconds since 1970,
# comparable across members of one host and with $(now_us).
JQ_TS='def us: .ts | ((.[0:19] + "Z" | fromdateiso8601) * 1000000 + (.[20:26] | tonumber));'

# log_events ID EVENT [JQ-CONDITION]: member ID's log lines ($LOG_DIR/nID.log)
# for EVENT, as JSON; the condition may use `us`. Tolerates a line being written.
log_events() {
	local f=${LOG_DIR:-$T}/n$1.log
	[[ -f $f ]] || return 0
	grep -F "\"event\":\"$2\"" "$f" | jq -cR "$JQ_TS fromjson? | select(.event == \"$2\") | select(${3:-true})"
}
log_count() { log_events "$@" | wc -l; }
log_has() { [[ -n $(log_events "$@" | head -n 1) ]]; }

# all_logs EVENT [JQ-CONDITION]: the same, every member's log.
all_logs() {
	local f id
	for f in "${LOG_DIR:-$T}"/n*.log; do
		[[ -f $f ]] || continue
		id=${f##*/n}
		log_events "${id%.log}" "$@"
	done
}
any_log_has() { [[ -n $(all_logs "$@" | head -n 1) ]]; }

# first_ts_us ID EVENT [JQ-CONDITION]: the time of member ID's first such event.
first_ts_us() { log_events "$@" | head -n 1 | jq -r "$JQ_TS us"; }

# stalled_ms FROM_US [TO_US] [EXCEPT_ID]: the longest stall a member detected
# (pause_detected: its own process frozen, on a loaded machine) that
# overlaps FROM_US..TO_US, not counting member EXCEPT_ID (one the script
# paused itself); 0 if none.
stalled_ms() {
	all_logs pause_detected "(us >= $1 and us - .ms * 1000 <= ${2:-1e18} and .node != ${3:-0})" |
		jq -s '[.[].ms] | max // 0'
}
stall_note() { (($1 > 0)) && echo " (a member's process stalled $1 ms meanwhile)"; }

# ---- setup and cleanup ----

# lib_init PREFIX [DIR]: the script's temp dir in T (a new /tmp/PREFIX.XXXXXX,
# or DIR, which cleanup leaves in place), and the traps: on every exit,
# cleanup ends what the script started.
lib_init() {
	if [[ -n ${2:-} ]]; then
		T=$2
		mkdir -p "$T" || exit 1
	else
		T=$(mktemp -d "/tmp/$1.XXXXXX") || exit 1
		OWN_T=1
	fi
	trap cleanup EXIT
	trap 'echo "$TEST_NAME: interrupted"; exit 130' INT
	trap 'echo "$TEST_NAME: terminated (timeout?)"; dump_logs; exit 143' TERM
	trap 'exit 129' HUP
}

# cleanup: the suite's hooks, background groups, members (SIGTERM, SIGKILL
# after 3 s; a paused one is continued first), the ports; then the temp dir,
# unless the script failed or KEEP=1.
cleanup() {
	local rc=$? h p
	trap - EXIT
	trap '' INT TERM HUP
	set +e
	exec 3>&2 2>/dev/null # no "Killed"/"Terminated" notices: we end them on purpose
	for h in "${CLEANUP_HOOKS[@]}"; do "$h"; done
	end_groups "${BG_PIDS[@]}"
	if ((${#PIDS[@]})); then
		for p in "${PIDS[@]}"; do kill -CONT "$p"; done
		stop_pids "${PIDS[@]}"
	fi
	release_ports
	exec 2>&3 3>&-
	if ((OWN_T)); then
		if ((rc == 0)) && [[ ${KEEP:-0} != 1 ]]; then
			rm -rf "$T"
		else
			echo "$TEST_NAME: files kept in $T"
		fi
	fi
	exit "$rc"
}
