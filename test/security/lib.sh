# Helpers for the security tests (test/security/t_*.sh): real ringd
# processes on 127.0.0.1, each test in its own temp dir on its own ports,
# keyed with `ringctl keygen`. Sourced, never run.
#
# Every wait is bounded polling (wait_until), never a fixed sleep; every
# process a test starts is recorded by PID and ended by PID on exit
# (members, and background loops with their process group); nothing is
# looked up by name.

set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RINGD=$ROOT/ring/ringd
RINGCTL=$ROOT/ring/ringctl
HOSTILE=$ROOT/build/hostile
TEST_NAME=$(basename "$0" .sh)

for b in "$RINGD" "$RINGCTL"; do
	[[ -x $b ]] || { echo "FAIL $TEST_NAME: $b missing (make ring/ringd ring/ringctl)"; exit 1; }
done
for tool in jq ss timeout; do
	command -v $tool >/dev/null || { echo "FAIL $TEST_NAME: $tool is missing (make deps)"; exit 1; }
done
[[ $(id -u) == 0 ]] || { echo "FAIL $TEST_NAME: run as root (raw sockets, AF_PACKET capture)"; exit 1; }

T=$(mktemp -d /tmp/ring-sec.XXXXXX) || exit 1
CONF=$T/ring.ini
KEY=$T/ring.key
PORT_BASE=0
declare -A PIDS=() # member id -> pid
BG_PIDS=()         # background loops, each leading its own process group
T0=${EPOCHREALTIME/./}

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
say() { local t=${EPOCHREALTIME/./}; printf '[%d.%03ds] %s\n' $(((t - T0) / 1000000)) $(((t - T0) / 1000 % 1000)) "$*"; }

dump_logs() {
	local f
	for f in "$T"/*.log "$T"/*.err; do
		[[ -s $f ]] || continue
		echo "--- tail of ${f#"$T"/}"
		tail -n "${TAIL_LINES:-12}" "$f"
	done
}

fail() {
	echo "FAIL $TEST_NAME: $*"
	dump_logs
	exit 1
}

pass() {
	echo "PASS $TEST_NAME${1:+: $1}"
	exit 0
}

pid_gone() { # PID: true once it has exited (gone, or a zombie)
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	s=${s##*) }
	[[ ${s:0:1} == Z ]]
}

# wait_gone PID SECONDS: true once PID has exited, polling every 50 ms.
wait_gone() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		pid_gone "$1" && return 0
		sleep 0.05
	done
	return 1
}

cleanup() {
	local rc=$? pid i left
	trap - EXIT INT TERM
	set +e
	exec 2>/dev/null
	# Background loops first (their whole group: ringctl run and its CMD),
	# then members; SIGKILL what is left after 3 s. All by PID or PGID.
	for pid in "${BG_PIDS[@]}"; do kill -TERM -- "-$pid"; done
	for pid in "${PIDS[@]}"; do kill -TERM "$pid"; done
	for ((i = 0; i < 60; i++)); do
		left=
		for pid in "${BG_PIDS[@]}" "${PIDS[@]}"; do pid_gone "$pid" || left+=" $pid"; done
		[[ -z $left ]] && break
		sleep 0.05
	done
	for pid in "${BG_PIDS[@]}"; do kill -KILL -- "-$pid"; done
	for pid in "${PIDS[@]}"; do pid_gone "$pid" || kill -KILL "$pid"; done
	for pid in "${BG_PIDS[@]}" "${PIDS[@]}"; do wait "$pid"; done
	if [[ ${KEEP:-0} == 1 ]]; then
		echo "KEEP=1: $TEST_NAME left its files in $T"
	else
		rm -rf "$T"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'echo "$TEST_NAME: interrupted"; exit 130' INT
trap 'echo "$TEST_NAME: terminated (timeout?)"; dump_logs; exit 143' TERM

# wait_until SECONDS CMD [ARG...]: runs CMD every 50 ms until it succeeds or
# SECONDS (an integer) have passed; then says what it waited for, returns 1.
wait_until() {
	local limit=$1 deadline
	shift
	deadline=$(($(now_ms) + limit * 1000))
	local n=0
	while ((n++ < 100000)); do
		"$@" >/dev/null 2>&1 && return 0
		(($(now_ms) >= deadline)) && break
		sleep 0.05
	done
	echo "timed out after ${limit}s waiting for: $*"
	return 1
}

# pick_ports N: PORT_BASE..PORT_BASE+N-1 free UDP ports, from a random base
# in 30000..59000 kept below the kernel's ephemeral range when it leaves
# room (a client's socket could take a port there meanwhile), checked with
# `ss -Hlun`.
pick_ports() {
	local n=$1 lo=30000 hi=$((59000 - $1)) eph_lo eph_hi try base p used ok
	read -r eph_lo eph_hi </proc/sys/net/ipv4/ip_local_port_range
	((eph_lo - n - lo > 500)) && hi=$((eph_lo - n < hi ? eph_lo - n : hi))
	for ((try = 0; try < 50; try++)); do
		base=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo + 1)))
		used=$(ss -Hlun | awk '{k = split($4, a, ":"); print a[k]}')
		ok=1
		for ((p = base; p < base + n; p++)); do
			grep -qx "$p" <<<"$used" && { ok=0; break; }
		done
		((ok)) && { PORT_BASE=$base; return 0; }
	done
	fail "pick_ports: no $n free consecutive UDP ports after 50 tries"
}

# make_conf FILE N [key=value ...]: N members on 127.0.0.1 from PORT_BASE;
# key=value sets (or with an empty value drops) a [ring] key.
make_conf() {
	local file=$1 n=$2 kv k i
	shift 2
	((PORT_BASE > 0)) || pick_ports "$n"
	local keys=(name lease_ms ack_timeout_ms retries heartbeat_ms loss_timeout_ms idle_pass_ms quorum state_dir secret_file allow_inject)
	declare -A v=(
		[name]=sec-$$ [lease_ms]=2000 [ack_timeout_ms]=20 [retries]=3 [heartbeat_ms]=50
		[loss_timeout_ms]=400 [idle_pass_ms]=0 [quorum]=majority [state_dir]=$T/state
		[secret_file]=$KEY [allow_inject]=false
	)
	for kv in "$@"; do
		k=${kv%%=*}
		[[ -v v[$k] ]] || keys+=("$k")
		v[$k]=${kv#*=}
	done
	{
		echo "; written by test/security/$TEST_NAME.sh"
		echo "[ring]"
		for k in "${keys[@]}"; do
			[[ -n ${v[$k]} ]] && echo "$k = ${v[$k]}"
		done
		for ((i = 1; i <= n; i++)); do
			printf '\n[node.%d]\nhost = 127.0.0.1\nport = %d\n' "$i" $((PORT_BASE + i - 1))
		done
	} >"$file"
}

# start_member ID [WRAPPER...]: ringd for member ID (under WRAPPER, e.g.
# valgrind, when given), JSON log with token hops in $T/nID.log, stderr in
# $T/nID.err; waits (bounded) until its control socket answers.
start_member() {
	local id=$1 limit=${START_WAIT_S:-10} i
	shift
	"$@" "$RINGD" -c "$CONF" -n "$id" --log-format json --log-file "$T/n$id.log" -v \
		2>>"$T/n$id.err" &
	PIDS[$id]=$!
	for ((i = 0; i < limit * 20; i++)); do
		"$RINGCTL" -c "$CONF" -n "$id" status --json >/dev/null 2>&1 && return 0
		pid_gone "${PIDS[$id]}" && fail "member $id exited at start: $(cat "$T/n$id.err")"
		sleep 0.05
	done
	fail "member $id: control socket not answering ${limit} s after start"
}

# stop_member ID SECONDS: SIGTERM by PID, wait at most SECONDS; STOP_RC is
# its exit status ("timeout" when it did not exit).
STOP_RC=
stop_member() {
	local pid=${PIDS[$1]}
	kill -TERM "$pid" 2>/dev/null
	if ! wait_gone "$pid" "$2"; then
		STOP_RC=timeout
		return 1
	fi
	wait "$pid"
	STOP_RC=$?
	unset "PIDS[$1]"
}

# spawn CMD [ARG...]: CMD in the background in its own process group (so
# cleanup ends what it started too); output to $T/bg.out; pid in BG_PID.
BG_PID=
spawn() {
	set -m
	"$@" >>"$T/bg.out" 2>&1 &
	BG_PID=$!
	set +m
	BG_PIDS+=("$BG_PID")
}

status() { "$RINGCTL" -c "$CONF" -n "$1" status --json; }
ring_json() { "$RINGCTL" -c "$CONF" ring --json; }

# counters FILE: every member's status as one JSON array in FILE.
counters() {
	local i
	for i in $(members); do status "$i" || echo '{"node":'"$i"',"down":true}'; done | jq -s . >"$1"
}

members() { sed -n 's/^\[node\.\([0-9]*\)\]/\1/p' "$CONF"; }

# log_count ID EVENT: member ID's EVENT lines (tolerates a line being written).
log_count() { jq -cR --arg e "$2" 'fromjson? | select(.event == $e)' "$T/n$1.log" 2>/dev/null | wc -l; }

# any_log EVENT: true when some member logged EVENT.
any_log() {
	local i
	for i in $(members); do (($(log_count "$i" "$1") > 0)) && return 0; done
	return 1
}

# fenced_lines FILE: lines in the fenced resource (0 when none yet).
fenced_lines() { [[ -f $1 ]] && wc -l <"$1" || echo 0; }

# stalls: how many pause_detected the members logged. A loaded machine that
# stalls members makes two of them believe they hold for a moment
# (docs/operations.md): then only what fencing guarantees can be checked.
stalls() { cat "$T"/n*.log 2>/dev/null | jq -cR 'fromjson? | select(.event == "pause_detected")' | wc -l; }

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
