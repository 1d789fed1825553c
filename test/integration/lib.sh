# Shared helpers for the integration tests: real ringd processes on
# 127.0.0.1, each test in its own temp dir with its own ports. Sourced by
# every test/integration/t_*.sh; see test/integration/run.sh.
#
# Rules kept here so the tests need not repeat them: every wait is bounded
# polling (wait_until), never a fixed sleep; every process a test starts is
# recorded and ended by PID on exit (members by their PID, background
# clients with every process of the group each leads); nothing is ever
# looked up by name.

# shellcheck disable=SC2034 # STOP_RC, BG_RC, PIN_*: set here, read by the tests
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RINGD=$ROOT/ring/ringd
RINGCTL=$ROOT/ring/ringctl
TEST_NAME=$(basename "$0" .sh)
PORT_LOCKS=/tmp/ring-it-ports # one directory per port in use by a running test

[[ -x $RINGD && -x $RINGCTL ]] || { echo "FAIL $TEST_NAME: build ring/ringd and ring/ringctl first (make)"; exit 1; }
for tool in jq ss timeout; do
	command -v $tool >/dev/null || { echo "FAIL $TEST_NAME: $tool is missing (make deps)"; exit 1; }
done

T=$(mktemp -d /tmp/ring-it.XXXXXX) || exit 1
CONF=$T/ring.ini    # the test's ring; make_conf writes it
PORT_BASE=0         # pick_ports sets it
declare -A PIDS=()  # member id -> ringd pid
BG_PIDS=()          # background clients (each leads its process group)
PORTS_HELD=()
T0=$EPOCHREALTIME
IT_TIME_SCALE=${IT_TIME_SCALE:-1}

# ---- time and reporting ----

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

# Seconds since the test started, for the progress lines.
elapsed() { local t=${EPOCHREALTIME/./} t0=${T0/./}; printf '%d.%03d' $(((t - t0) / 1000000)) $(((t - t0) / 1000 % 1000)); }

say() { echo "[$(elapsed)s] $*"; }

# The tail of every member's log and stderr: what a failure report needs.
dump_logs() {
	local f
	for f in "$T"/n*.log "$T"/n*.err "$T"/bg.log; do
		[[ -s $f ]] || continue
		echo "--- tail of ${f#"$T"/}"
		tail -n "${TAIL_LINES:-15}" "$f"
	done
}

fail() {
	echo "FAIL $TEST_NAME: $*"
	dump_logs
	# A member that finds its own process stalled logs pause_detected. One
	# the test did not inject means the machine froze for that long, which
	# no timing assertion survives: say so next to the failure.
	local stalls
	stalls=$(all_logs pause_detected 2>/dev/null | jq -r '"member \(.node) stalled \(.ms) ms at \(.ts)"' 2>/dev/null)
	[[ -z $stalls ]] || echo "NOTE: pause_detected (a pause the test did not inject means the machine stalled):
$stalls"
	exit 1
}

pass() {
	echo "PASS $TEST_NAME${1:+: $1}"
	exit 0
}

# ---- cleanup: every process we started, by PID; then the temp dir ----

pid_gone() { # PID: true once it has exited (gone, or a zombie not yet reaped)
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	s=${s##*) }
	[[ ${s:0:1} == Z ]]
}

# group_pids PGID...: the live processes of those process groups that are in
# this test's session: what spawn started, and only that. (A group number
# is only ever reused once its group is empty, and then not in our session.)
MY_SID=$(s=$(cat /proc/$$/stat) && s=${s##*) } && set -- $s && echo "$4")
group_pids() {
	local f s want=" $* "
	for f in /proc/[0-9]*/stat; do
		s=$(cat "$f" 2>/dev/null) || continue
		s=${s##*) }
		set -- $s # state ppid pgrp session ...
		[[ $1 != Z && $4 == "$MY_SID" && $want == *" $3 "* ]] && echo "${f//[^0-9]/}"
	done
}

cleanup() {
	local rc=$? pid i left
	trap - EXIT INT TERM
	set +e
	exec 2>/dev/null # no "Killed"/"Terminated" job notices: we are ending them on purpose
	# Clients first (ringctl run passes SIGTERM on to its CMD), then the
	# members; SIGKILL whatever has not gone within 3 s. All by PID.
	((${#BG_PIDS[@]})) && for pid in $(group_pids "${BG_PIDS[@]}"); do kill -TERM "$pid"; done
	for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
	for ((i = 0; i < 60; i++)); do
		left=$( ((${#BG_PIDS[@]})) && group_pids "${BG_PIDS[@]}")
		for pid in "${PIDS[@]}"; do pid_gone "$pid" || left+=" $pid"; done
		[[ -z ${left// /} ]] && break
		sleep 0.05
	done
	((${#BG_PIDS[@]})) && for pid in $(group_pids "${BG_PIDS[@]}"); do kill -KILL "$pid"; done
	for pid in "${PIDS[@]}"; do pid_gone "$pid" || kill -KILL "$pid"; done
	for pid in "${BG_PIDS[@]}" "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
	for i in "${PORTS_HELD[@]}"; do rm -rf "${PORT_LOCKS:?}/$i"; done
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

# ---- polling ----

# wait_until TIMEOUT_S CMD [ARG...]: runs CMD every 50 ms until it succeeds
# (returns 0) or TIMEOUT_S seconds have passed (prints what it awaited and
# the logs' tails, returns 1; WAIT_QUIET=1 spares the report). Fractions
# work: wait_until 0.5 ...
wait_until() {
	local limit=$1
	shift
	# IT_TIME_SCALE=N stretches every wait N times, for a slow machine.
	if [[ ${IT_TIME_SCALE:-1} != 1 ]]; then
		limit=$(awk -v l="$limit" -v k="$IT_TIME_SCALE" 'BEGIN { printf "%.3f", l * k }')
	fi
	local t0 deadline
	t0=$(now_ms)
	deadline=$((t0 + ${limit%.*} * 1000))
	[[ $limit == *.* ]] && deadline=$((deadline + 10#$(printf '%-3.3s' "${limit#*.}" | tr ' ' 0)))
	local n=0
	while ((n++ < 100000)); do
		"$@" >/dev/null 2>&1 && return 0
		(($(now_ms) >= deadline)) && break
		sleep 0.05
	done
	[[ ${WAIT_QUIET:-0} == 1 ]] && return 1 # the caller has a plan B
	echo "timed out after ${limit}s waiting for: $*"
	dump_logs
	return 1
}

# ---- ports ----

# pick_ports N: sets PORT_BASE so that PORT_BASE..PORT_BASE+N-1 are free UDP
# ports in 20000..59000 (outside the kernel's ephemeral range, where a
# ringctl's socket could take one meanwhile), and reserves them against
# the other tests running at the same time (a directory per port).
pick_ports() {
	local n=$1 lo hi eph_lo=0 try base p ok used
	read -r eph_lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
	mkdir -p "$PORT_LOCKS" 2>/dev/null
	for ((try = 0; try < 50; try++)); do
		lo=20000 hi=$((59000 - n))
		if ((eph_lo > lo + 1000)); then hi=$((eph_lo - n < hi ? eph_lo - n : hi)); fi
		base=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo + 1)))
		used=$(ss -Huan 2>/dev/null | awk '{n = split($4, a, ":"); print a[n]}')
		ok=1
		for ((p = base; p < base + n; p++)); do
			if grep -qx "$p" <<<"$used"; then ok=0; break; fi
		done
		((ok)) || continue
		local got=()
		for ((p = base; p < base + n; p++)); do
			if mkdir "$PORT_LOCKS/$p" 2>/dev/null; then
				echo $$ >"$PORT_LOCKS/$p/owner"
				got+=("$p")
			else
				# Taken by a live test, or left by a dead one: reclaim only the latter.
				local owner
				owner=$(cat "$PORT_LOCKS/$p/owner" 2>/dev/null)
				if [[ -n $owner ]] && ! kill -0 "$owner" 2>/dev/null; then
					echo $$ >"$PORT_LOCKS/$p/owner"
					got+=("$p")
				else
					ok=0
					break
				fi
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

# ---- configuration ----

# make_conf FILE N [key=value ...]: a ring of N members on 127.0.0.1 at
# PORT_BASE.. (pick_ports first), fast timings, state in the temp dir,
# injection allowed. key=value overrides a [ring] key ("key=" drops it);
# node.ID.key=value sets a key of member ID.
make_conf() {
	local file=$1 n=$2
	shift 2
	((PORT_BASE > 0)) || pick_ports "$n"
	local keys=(name lease_ms ack_timeout_ms retries heartbeat_ms loss_timeout_ms idle_pass_ms quorum state_dir allow_inject)
	declare -A v=(
		[name]=it-$$ [lease_ms]=2000 [ack_timeout_ms]=20 [retries]=3 [heartbeat_ms]=50
		[loss_timeout_ms]=400 [idle_pass_ms]=0 [quorum]=majority [state_dir]=$T/state
		[allow_inject]=true
	)
	declare -A node=()
	local kv k
	for kv in "$@"; do
		k=${kv%%=*}
		if [[ $k == node.*.* ]]; then
			node[$k]=${kv#*=}
		else
			[[ -v v[$k] ]] || keys+=("$k")
			v[$k]=${kv#*=}
		fi
	done
	{
		echo "; written by $TEST_NAME (test/integration/lib.sh make_conf)"
		echo "[ring]"
		for k in "${keys[@]}"; do
			[[ -n ${v[$k]} ]] && echo "$k = ${v[$k]}"
		done
		local i
		for ((i = 1; i <= n; i++)); do
			echo
			echo "[node.$i]"
			echo "host = 127.0.0.1"
			echo "port = $((PORT_BASE + i - 1))"
			for kv in "${!node[@]}"; do
				[[ $kv == node.$i.* ]] && echo "${kv#node."$i".} = ${node[$kv]}"
			done
		done
	} >"$file"
}

# ---- members ----

ctl() { "$RINGCTL" -c "$CONF" "$@"; }

# status ID: the member's status JSON (one line).
status() { "$RINGCTL" -c "$CONF" -n "$1" status --json; }

# field ID JQ: one field of member ID's status, e.g. field 2 .tokens_passed
field() { status "$1" | jq -r "$2"; }

# start_member ID [CONFIG]: starts ringd for member ID with a JSON log in
# $T/nID.log (stderr in $T/nID.err) and waits until its control socket answers.
start_member() {
	local id=$1 conf=${2:-$CONF}
	"$RINGD" -c "$conf" -n "$id" --log-format json --log-file "$T/n$id.log" 2>>"$T/n$id.err" &
	PIDS[$id]=$!
	local i
	for ((i = 0; i < 200; i++)); do
		"$RINGCTL" -c "$conf" -n "$id" status --json >/dev/null 2>&1 && return 0
		pid_gone "${PIDS[$id]}" && fail "member $id exited at start: $(cat "$T/n$id.err")"
		sleep 0.05
	done
	fail "member $id: control socket not answering 10 s after start"
}

start_ring() { # N: starts members 1..N
	local i
	for ((i = 1; i <= $1; i++)); do start_member "$i"; done
}

# wait_gone PID SECONDS: true once PID has exited, polling.
wait_gone() {
	local pid=$1 i k=${IT_TIME_SCALE%.*}
	((k >= 1)) || k=1
	for ((i = 0; i < $2 * 20 * k; i++)); do
		pid_gone "$pid" && return 0
		sleep 0.05
	done
	return 1
}

# stop_member ID: SIGTERM; waits at most STOP_WAIT_S (5) s; sets STOP_RC to
# ringd's exit status. Returns 1 when it did not exit in time.
STOP_RC=
stop_member() {
	local id=$1 pid=${PIDS[$1]}
	kill -TERM "$pid" 2>/dev/null
	if ! wait_gone "$pid" "${STOP_WAIT_S:-5}"; then
		STOP_RC=timeout
		return 1
	fi
	wait "$pid"
	STOP_RC=$?
	unset "PIDS[$id]"
	return 0
}

# kill_member ID: SIGKILL, and reap it at once (which also keeps bash from
# printing a "Killed" notice).
kill_member() {
	local id=$1 pid=${PIDS[$1]}
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	unset "PIDS[$id]"
}

# spawn CMD [ARG...]: runs CMD (a program or a function) in the background,
# in its own process group so that cleanup ends it together with whatever
# it started (a CMD under ringctl run). Its output goes to $T/bg.log; its
# pid is in BG_PID.
BG_PID=
spawn() {
	set -m
	"$@" >>"$T/bg.log" 2>&1 &
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

# ---- ring-wide views ----

# ring_json: every member's state over UDP (ringctl ring --json).
ring_json() { "$RINGCTL" -c "$CONF" ring --json; }

# holder: the id of the member that has the token, per `ringctl ring`;
# empty when none says so, several ids when several do.
holder() { ring_json | jq -r '[.[] | select(.has_token == true) | .node] | map(tostring) | join(" ")'; }

# alive_has ID OTHER: true when member ID's alive list contains OTHER.
alive_has() { status "$1" | jq -e --argjson o "$2" '.alive | index($o) != null' >/dev/null; }

# ---- logs ----

# log_events ID EVENT [JQ-CONDITION]: member ID's log lines (JSON) for EVENT.
# Tolerates a line being written meanwhile.
log_events() {
	local f=$T/n$1.log
	[[ -f $f ]] || return 0
	jq -cR --arg e "$2" "fromjson? | select(.event == \$e) | select(${3:-true})" "$f"
}

log_count() { log_events "$@" | wc -l; }

# jq definitions for log lines: .ts ("2026-01-02T03:04:05.123456Z", UTC) as
# microseconds since the epoch, comparable across members of one host.
JQ_TS='def us: .ts | ((.[0:19] + "Z" | fromdateiso8601) * 1000000 + (.[20:26] | tonumber));'

# first_ts_us ID EVENT [JQ-CONDITION]: the time of member ID's first such event.
first_ts_us() { log_events "$@" | head -n 1 | jq -r "$JQ_TS us"; }

log_has() { [[ -n $(log_events "$@" | head -n 1) ]]; }

# ---- machine stalls ----
# A loaded machine can stall every process for a while (members log
# pause_detected when they wake: ms is how late they were). No timing
# assertion survives that, so the tests allow for it where they must: a
# time bound grows by the stall seen meanwhile, and "nothing regenerated"
# means nothing that a stall does not explain.

conf_value() { sed -n "s/^$1 *= *\([^ ;]*\).*/\1/p" "${2:-$CONF}" | head -n 1; }

# stalled_ms FROM_US [TO_US]: the longest stall any member detected that
# overlaps FROM_US..TO_US (microseconds since the epoch, as JQ_TS us); 0 if none.
stalled_ms() {
	local to=${2:-$(($(now_ms) * 1000))}
	all_logs pause_detected | jq -s "$JQ_TS [.[] | select(us >= $1 and us - .ms * 1000 <= $to) | .ms] | max // 0"
}

# stall_note MS: " (the machine stalled MS ms meanwhile)", or nothing for 0.
stall_note() { (($1 > 0)) && echo " (the machine stalled $1 ms meanwhile)"; }

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

# any_log_has EVENT [JQ-CONDITION]: true when some member's log has it.
any_log_has() {
	local f id
	for f in "$T"/n*.log; do
		[[ -f $f ]] || continue
		id=${f##*/n}
		id=${id%.log}
		log_has "$id" "$@" && return 0
	done
	return 1
}

# all_logs EVENT [JQ-CONDITION]: the events of every member's log.
all_logs() {
	local f id
	for f in "$T"/n*.log; do
		[[ -f $f ]] || continue
		id=${f##*/n}
		id=${id%.log}
		log_events "$id" "$@"
	done
}
