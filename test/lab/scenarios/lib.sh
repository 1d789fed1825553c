# test/lab/scenarios/lib.sh: what the fault-lab scenarios share. Sourced by
# every test/lab/scenarios/s_*.sh; test/lab/run.sh runs them (see
# docs/testing.md). A scenario can also run alone: bash test/lab/scenarios/s_1_kill_holder.sh
#
# Rules kept here so that scenarios need not repeat them: every wait is
# bounded polling (wait_for), never a fixed sleep; every client loop is
# recorded and ended by its process group; the lab (or the loopback ring)
# is taken down on every exit, failed or timed out (trap); the scenario's
# row of the results table goes to $LAB_RESULT.
#
# Environment: LAB_DIR (the scenario's dir; else a new temp dir, removed
# after a pass unless KEEP=1), LAB_RESULT (file for the table row),
# LAB_TIME_SCALE (stretches every wait bound, not the asserted bounds).

set -u
export LC_ALL=C

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
LAB=$ROOT/test/lab/lab.sh
RINGD=$ROOT/ring/ringd
RINGCTL=$ROOT/ring/ringctl
CLIENT=$ROOT/test/lab/scenarios/client.sh
NAME=$(basename "$0" .sh)
T0=$EPOCHREALTIME
LAB_TIME_SCALE=${LAB_TIME_SCALE:-1}

[[ -x $RINGD && -x $RINGCTL ]] || {
	echo "FAIL $NAME: build ring/ringd and ring/ringctl first (make)"
	exit 1
}
for tool in jq timeout ss; do
	command -v $tool >/dev/null || {
		echo "FAIL $NAME: $tool is missing (make deps)"
		exit 1
	}
done

OWN_DIR=0
if [[ -z ${LAB_DIR:-} ]]; then
	LAB_DIR=$(mktemp -d /tmp/ring-lab-s.XXXXXX) || exit 1
	OWN_DIR=1
fi
export LAB_DIR
OUT=$LAB_DIR/resource # the fenced file every client writes (FILE.fence, FILE.lock beside it)
LOOPBACK=0            # 1: members on 127.0.0.1 started by the scenario (s_8), no lab
CONF=                 # loopback: the ring's INI
LAB_UP=0              # a lab.sh up was attempted: down on exit
declare -A MEMBER_PID=() # loopback members
declare -A CLIENT_PID=() # member id -> its client loop (leads a process group)
BG_PIDS=()               # other background commands (each leads a process group)

# ---- time and reporting ----

now_us() { echo "${EPOCHREALTIME/./}"; }
now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
elapsed() { local t=${EPOCHREALTIME/./} t0=${T0/./}; printf '%d.%03d' $(((t - t0) / 1000000)) $(((t - t0) / 1000 % 1000)); }
say() { echo "[$(elapsed)s] $*"; }

# lab ARGS...: test/lab/lab.sh in this scenario's dir.
lab() { bash "$LAB" "$@"; }

# The non-hop events at the end of each member's log, and the clients' last
# lines: what a failure report needs.
dump_logs() {
	local f
	for f in "$LAB_DIR"/n*.log; do
		[[ -s $f ]] || continue
		echo "--- ${f##*/} (last events other than token hops)"
		grep -v -e '"event":"token_recv"' -e '"event":"token_pass"' "$f" | tail -n "${TAIL_LINES:-12}"
	done
	for f in "$LAB_DIR"/n*.err "$LAB_DIR"/c*.txt "$LAB_DIR"/c*.err "$LAB_DIR"/*.client; do
		[[ -s $f ]] || continue
		echo "--- ${f##*/} (tail)"
		tail -n 5 "$f"
	done
	[[ -s $LAB_DIR/faults.log ]] && { echo "--- faults.log"; cat "$LAB_DIR/faults.log"; }
	return 0
}

fail() {
	echo "FAIL $NAME: $*"
	dump_logs
	local stalls
	stalls=$(all_events pause_detected | jq -r '"member \(.node) stalled \(.ms) ms at \(.ts)"' 2>/dev/null)
	[[ -z $stalls ]] || echo "NOTE: pause_detected (one the scenario did not cause means the machine stalled):
$stalls"
	exit 1
}

pass() {
	echo "PASS $NAME${1:+: $1}"
	exit 0
}

# result KEY=VALUE...: the scenario's row of the results table (run.sh reads
# recovery_median_ms, recovery_max_ms, loss_timeout_ms, overlaps,
# stale_refused, verdict).
result() {
	local kv
	for kv in "$@"; do
		if [[ -n ${LAB_RESULT:-} ]]; then echo "$kv" >>"$LAB_RESULT"; else echo "result: $kv"; fi
	done
}

# ---- cleanup: clients, then the lab or the loopback members, by PID ----

# group_gone PGID: true once no process of that group is left but zombies
# (a group leader we started stays a zombie until we reap it).
group_gone() {
	local g=$1 f s
	for f in /proc/[0-9]*/stat; do
		read -r s 2>/dev/null <"$f" || continue
		s=${s##*) }
		# shellcheck disable=SC2086
		set -- $s # state ppid pgrp ...
		[[ $3 == "$g" && $1 != Z ]] && return 1
	done
	return 0
}

end_groups() { # PGID...: SIGTERM, then SIGKILL what is left after 3 s
	local p i left
	for p in "$@"; do kill -TERM -- "-$p" 2>/dev/null; done
	for ((i = 0; i < 60; i++)); do
		left=0
		for p in "$@"; do group_gone "$p" || left=1; done
		((left)) || break
		sleep 0.05
	done
	for p in "$@"; do kill -KILL -- "-$p" 2>/dev/null; done
}

cleanup() {
	local rc=$? p i
	trap - EXIT
	trap '' INT TERM HUP
	set +e
	exec 3>&2 2>/dev/null # no "Terminated" notices for what we end on purpose
	for i in "${!CLIENT_PID[@]}"; do touch "$LAB_DIR/c$i.stop"; done
	local groups=("${CLIENT_PID[@]}" "${BG_PIDS[@]}")
	((${#groups[@]})) && end_groups "${groups[@]}"
	if ((LAB_UP)); then
		lab down >"$LAB_DIR/down.out" 2>&1 || { echo "lab.sh down failed:"; cat "$LAB_DIR/down.out"; }
	fi
	if ((${#MEMBER_PID[@]})); then
		for p in "${MEMBER_PID[@]}"; do kill -TERM "$p"; done
		for ((i = 0; i < 100; i++)); do
			local left=0
			for p in "${MEMBER_PID[@]}"; do kill -0 "$p" && left=1; done
			((left)) || break
			sleep 0.05
		done
		for p in "${MEMBER_PID[@]}"; do kill -KILL "$p"; done
	fi
	for p in "${MEMBER_PID[@]}" "${CLIENT_PID[@]}" "${BG_PIDS[@]}"; do wait "$p"; done
	exec 2>&3 3>&-
	if ((rc == 0 && OWN_DIR)) && [[ ${KEEP:-0} != 1 ]]; then
		rm -rf "$LAB_DIR"
	elif ((OWN_DIR)); then
		echo "$NAME: files kept in $LAB_DIR"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'echo "$NAME: interrupted"; exit 130' INT
trap 'echo "$NAME: terminated (timeout?)"; dump_logs; exit 143' TERM
trap 'exit 129' HUP

# ---- polling ----

# wait_for MS CMD [ARG...]: runs CMD every 100 ms until it succeeds; false
# once MS milliseconds (times LAB_TIME_SCALE) have passed.
wait_for() {
	# (Locals carry a prefix: CMD may read the caller's variables, which
	# bash's dynamic scoping would otherwise shadow.)
	local _wf_limit=$1 _wf_t0 _wf_n
	shift
	_wf_limit=$(awk -v l="$_wf_limit" -v k="$LAB_TIME_SCALE" 'BEGIN { printf "%d", l * k }')
	_wf_t0=$(now_ms)
	for ((_wf_n = 0; _wf_n < 100000; _wf_n++)); do
		"$@" >/dev/null 2>&1 && return 0
		(($(now_ms) - _wf_t0 >= _wf_limit)) && return 1
		sleep 0.1
	done
	return 1
}

# wait_bounded MS FROM_US CMD [ARG...]: wait_for MS; when that fails and a
# member detected a stall of its own process since FROM_US (pause_detected:
# the loaded machine froze it), waits as much longer, once. The bound is on
# the ring's reaction, not on the machine's freezes.
wait_bounded() {
	local _wb_ms=$1 _wb_from=$2 _wb_stall
	shift 2
	wait_for "$_wb_ms" "$@" && return 0
	_wb_stall=$(stalled_ms "$_wb_from")
	((_wb_stall > 0)) || return 1
	say "a member's process stalled $_wb_stall ms meanwhile: waiting as much longer"
	wait_for "$_wb_stall" "$@"
}

# ---- the lab ----

# lab_up N [key=value ...]: lab.sh up in LAB_DIR; fails the scenario if it fails.
lab_up() {
	LAB_UP=1
	lab up "$@" >"$LAB_DIR/up.out" 2>&1 || {
		cat "$LAB_DIR/up.out"
		fail "lab.sh up $* failed"
	}
	tail -n 2 "$LAB_DIR/up.out" | head -n 1
}

# conf_value KEY: a [ring] key of the ring's INI (host 1's copy in a lab).
conf_value() { sed -n "s/^$1 *= *\([^ ;]*\).*/\1/p" "${CONF:-$LAB_DIR/h1/ring.ini}" | head -n 1; }

# status I: member I's status JSON, asked inside its host.
status() {
	if ((LOOPBACK)); then
		timeout 5 "$RINGCTL" -c "$CONF" -n "$1" status --json
	else
		timeout 5 bash "$LAB" ctl "$1" status --json
	fi
}

# ring_json [--from I]: every member's state (ringctl ring --json), one line.
ring_json() {
	if ((LOOPBACK)); then
		timeout 10 "$RINGCTL" -c "$CONF" ring --json
	else
		lab ring "$@" --json 2>/dev/null | tail -n 1
	fi
}

# ring_whole N: N members answer, each counts all N alive, all in one epoch,
# and one has the token (two neighbours, when the token was in flight
# between them while `ring` asked them one after the other).
ring_whole() {
	ring_json "${@:2}" | jq -e --argjson n "$1" '
		[.[] | select(.state != "down")] as $up
		| [.[] | select(.has_token == true)] as $h
		| ($up | length) == $n and all($up[]; (.alive | length) == $n)
		  and ([$up[].epoch] | unique | length) == 1
		  and (($h | length) == 1
		       or (($h | length) == 2
		           and ($h[0].successor == $h[1].node or $h[1].successor == $h[0].node)))' >/dev/null
}

# ---- clients ----

# start_clients I...: member I's client loop (client.sh), in host I (or on
# loopback), in its own process group; its record in $LAB_DIR/cI.txt.
start_clients() {
	local i
	for i in "$@"; do
		rm -f "$LAB_DIR/c$i.stop"
		set -m
		if ((LOOPBACK)); then
			env LAB_INI="$CONF" LAB_NODE="$i" PATH="$ROOT/ring:$PATH" \
				bash "$CLIENT" "$OUT" "$LAB_DIR/c$i.txt" "$LAB_DIR/c$i.stop" </dev/null >>"$LAB_DIR/c$i.err" 2>&1 &
		else
			bash "$LAB" exec "$i" bash "$CLIENT" "$OUT" "$LAB_DIR/c$i.txt" "$LAB_DIR/c$i.stop" \
				</dev/null >>"$LAB_DIR/c$i.err" 2>&1 &
		fi
		CLIENT_PID[$i]=$!
		set +m
	done
}

# stop_clients [I...]: asks the loops (all by default) to stop after their
# current iteration and waits for them (15 s at most: a run -t 5000 and a
# critical region), then ends what is left.
stop_clients() {
	local ids=("$@") i left t0
	((${#ids[@]})) || ids=("${!CLIENT_PID[@]}")
	for i in "${ids[@]}"; do touch "$LAB_DIR/c$i.stop"; done
	t0=$(now_ms)
	while (($(now_ms) - t0 < 15000)); do
		left=0
		for i in "${ids[@]}"; do group_gone "${CLIENT_PID[$i]}" || left=1; done
		((left)) || break
		sleep 0.1
	done
	for i in "${ids[@]}"; do
		group_gone "${CLIENT_PID[$i]}" || {
			say "client loop of member $i still running 15 s after its stop file: ending it"
			end_groups "${CLIENT_PID[$i]}" 2>/dev/null
		}
		wait "${CLIENT_PID[$i]}" 2>/dev/null
		unset "CLIENT_PID[$i]"
	done
}

# spawn OUTFILE CMD [ARG...]: CMD in the background, in its own process
# group, output to OUTFILE; its pid in BG_PID.
BG_PID=
spawn() {
	local f=$1
	shift
	set -m
	"$@" </dev/null >>"$f" 2>&1 &
	BG_PID=$!
	set +m
	BG_PIDS+=("$BG_PID")
}

# wait_pid PID MS: waits for a background job, bounded; its status in BG_RC.
BG_RC=
wait_pid() {
	local t0
	t0=$(now_ms)
	while kill -0 "$1" 2>/dev/null; do
		(($(now_ms) - t0 >= $2)) && {
			BG_RC=timeout
			return 1
		}
		# a zombie still answers kill -0: reap it if it is done
		[[ $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) == Z ]] && break
		sleep 0.05
	done
	wait "$1"
	BG_RC=$?
	return 0
}

# ---- the fenced file and the clients' records ----

# resource_fences: the fences in OUT, in the order they were accepted.
resource_fences() { sed -n 's/.* f=\([0-9][0-9]*\).*/\1/p' "$OUT" 2>/dev/null; }

# fences_never_back: true when OUT's accepted fences never decrease; else
# prints the first pair that does.
fences_never_back() {
	local prev=0 f n=0
	while read -r f; do
		n=$((n + 1))
		if ((f < prev)); then
			echo "line $n of $OUT: fence $f after $prev"
			return 1
		fi
		prev=$f
	done < <(resource_fences)
	return 0
}

# max_fence: the newest fence OUT accepted (0 if none).
max_fence() {
	local f max=0
	while read -r f; do ((f > max)) && max=$f; done < <(resource_fences)
	echo "$max"
}

# writes_above F [I]: how many lines OUT accepted with a fence above F (from member I).
# (Fences are compared as bash's 64-bit integers, not awk's doubles.)
writes_above() {
	local above=$1 who=${2:-[0-9]*} f n=0
	while read -r f; do
		((f > above)) && n=$((n + 1))
	done < <(sed -n "s/^n=$who f=\([0-9][0-9]*\).*/\1/p" "$OUT" 2>/dev/null)
	echo "$n"
}
# at_least N CMD...: true when CMD prints a number >= N.
at_least() { local _al_want=$1 _al_got; shift; _al_got=$("$@") && ((_al_got >= _al_want)); }

# stale_refused: the clients' fenced-appends refused with exit 3.
stale_refused() { cat "$LAB_DIR"/c*.txt 2>/dev/null | grep -c 'append=3'; }

fence_str() { echo "$(($1 >> 32)):$(($1 & 0xffffffff))"; } # epoch:counter, as the trace prints it

# ---- members' logs ----

# jq: .ts ("2026-01-02T03:04:05.123456Z", UTC) as microseconds since 1970,
# comparable with $(now_us) on this machine.
JQ_TS='def us: .ts | ((.[0:19] + "Z" | fromdateiso8601) * 1000000 + (.[20:26] | tonumber));'

# events I EVENT [JQ-CONDITION]: member I's log lines for EVENT, as JSON.
events() {
	local f=$LAB_DIR/n$1.log
	[[ -f $f ]] || return 0
	grep -F "\"event\":\"$2\"" "$f" | jq -cR "$JQ_TS fromjson? | select(.event == \"$2\") | select(${3:-true})"
}

# all_events EVENT [JQ-CONDITION]: the same, every member.
all_events() {
	local f i
	for f in "$LAB_DIR"/n*.log; do
		[[ -f $f ]] || continue
		i=${f##*/n}
		events "${i%.log}" "$@"
	done
}

# grants I FROM_US [TO_US]: member I's cs_enter events from FROM_US (to TO_US).
grants() { events "$1" cs_enter "us > $2 and us < ${3:-1e18}" | wc -l; }

# stalled_ms FROM_US [TO_US] [EXCEPT_NODE]: the longest stall a member
# detected (pause_detected) overlapping FROM_US..TO_US, not counting
# EXCEPT_NODE (a member the scenario paused itself); 0 if none.
stalled_ms() {
	all_events pause_detected "(us >= $1 and us - .ms * 1000 <= ${2:-1e18} and .node != ${3:-0})" |
		jq -s '[.[].ms] | max // 0'
}
stall_note() { (($1 > 0)) && echo " (a member's process stalled $1 ms meanwhile: the bound grows by that)"; }

# ---- the trace checker ----

TR_RC='' TR_JSON='{}'
# trace_check [--allow-overlap]: ringctl trace over every member's log and
# faults.log; prints its report; TR_RC is its exit status, TR_JSON its
# --json summary; tj FIELD reads it.
trace_check() {
	local files=("$LAB_DIR"/n*.log)
	[[ -f $LAB_DIR/faults.log ]] && files+=("$LAB_DIR/faults.log")
	"$RINGCTL" trace "$@" "${files[@]}" >"$LAB_DIR/trace.txt" 2>&1
	TR_RC=$?
	TR_JSON=$("$RINGCTL" trace --json "$@" "${files[@]}" 2>/dev/null | tail -n 1)
	jq -e . <<<"$TR_JSON" >/dev/null 2>&1 || TR_JSON='{}'
	echo "ringctl trace${*:+ $*} n*.log faults.log:"
	sed 's/^/  | /' "$LAB_DIR/trace.txt"
}
tj() { jq -r "$1" <<<"$TR_JSON"; }

# trace_strict: trace_check without --allow-overlap, for the scenarios where
# no overlap is expected. One exception, said out loud: when the only
# violations are overlaps and each began while one of its two members was
# stalled (pause_detected: a loaded machine froze that process past
# loss_timeout_ms, which is the pause of scenario 3 and is what fencing is
# for), TR_RC becomes 0 and TR_EXPLAINED 1. Anything else stays a violation.
TR_EXPLAINED=0
trace_strict() {
	trace_check
	TR_EXPLAINED=0
	((TR_RC != 0)) || return 0
	[[ $(tj '.duplicate_fences + .backward_fences + .stale_grants') == 0 ]] || return 0
	local listed
	listed=$(grep -c '^VIOLATION n[0-9]* fence .* overlaps ' "$LAB_DIR/trace.txt")
	((listed > 0 && listed == $(tj .overlaps))) || return 0
	overlaps_explained || return 0
	echo "NOTE: every overlap began while one of its members was stalled (pause_detected): a machine stall, not the protocol; counted as OK"
	TR_RC=0 TR_EXPLAINED=1
}

# overlaps_explained: true when each overlap line of trace.txt has one of
# its two members logging a stall (pause_detected: [ts - ms, ts]) that
# covers the moment the later grant began (50 ms of slack).
overlaps_explained() {
	local base line re g gs p
	# The trace's times are seconds since the first event of all its files.
	base=$(for f in "$LAB_DIR"/n*.log "$LAB_DIR/faults.log"; do head -n 1 "$f" 2>/dev/null; done |
		jq -sR "$JQ_TS [split(\"\\n\")[] | fromjson? | us] | min")
	[[ $base =~ ^[0-9]+$ ]] || return 1
	re='^VIOLATION n([0-9]+) fence [0-9:]+ \[([0-9.]+) \.\. [0-9.]+ s\] overlaps n([0-9]+) fence [0-9:]+ \[([0-9.]+) '
	while read -r line; do
		[[ $line =~ $re ]] || return 1
		g=${BASH_REMATCH[1]} gs=${BASH_REMATCH[2]} p=${BASH_REMATCH[3]}
		# (bash arithmetic: mawk's printf %d stops at 2^31)
		local at=$((base + ${gs%.*} * 1000000 + 10#${gs#*.} * 1000))
		[[ -n $({ events "$g" pause_detected; events "$p" pause_detected; } |
			jq -c "$JQ_TS select(us - .ms * 1000 <= $at + 50000 and us >= $at - 50000)" | head -n 1) ]] || return 1
	done < <(grep '^VIOLATION n[0-9]* fence .* overlaps ' "$LAB_DIR/trace.txt")
	return 0
}

# recoveries_ms: the trace's time from each fault to the next grant, in ms, one a line.
recoveries_ms() {
	sed -n 's/^fault at .* next grant \([0-9.]*\) s later.*/\1/p' "$LAB_DIR/trace.txt" |
		awk '{ printf "%d\n", $1 * 1000 + 0.5 }'
}

# trace_result [--allow-overlap] [STALE]: the table row from the last trace.
trace_result() {
	local allow=0 stale med max n
	[[ ${1:-} == --allow-overlap ]] && allow=1 && shift
	stale=${1:-$(stale_refused)}
	n=$(recoveries_ms | wc -l)
	if ((n > 0)); then
		med=$(recoveries_ms | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2) }')
		max=$(awk -v s="$(tj '.worst_recovery_s // 0')" 'BEGIN { printf "%d", s * 1000 + 0.5 }')
	else
		med=- max=-
	fi
	local verdict
	case $(tj '.verdict // "none"') in
	ok) verdict=OK ;;
	violation) verdict=VIOLATION ;;
	*) verdict="no trace" ;;
	esac
	((allow)) && [[ $verdict == OK ]] && verdict="OK (overlap allowed)"
	((TR_EXPLAINED)) && verdict="OK (overlap after a machine stall)"
	result "recovery_median_ms=$med" "recovery_max_ms=$max" "loss_timeout_ms=$(conf_value loss_timeout_ms)" \
		"overlaps=$(tj '.overlaps // "-"')" "stale_refused=$stale" "verdict=$verdict"
}

# fault_line WHAT START_US [DONE_US]: one line of faults.log, in lab.sh's
# shape, for faults a scenario makes itself (ringctl inject on loopback).
fault_line() {
	local s=$2 d=${3:-$2}
	printf '{"ts":"%s.%06dZ","node":0,"event":"fault","what":"%s","done":"%s.%06dZ"}\n' \
		"$(date -u -d "@$((s / 1000000))" +%Y-%m-%dT%H:%M:%S)" $((s % 1000000)) "$1" \
		"$(date -u -d "@$((d / 1000000))" +%Y-%m-%dT%H:%M:%S)" $((d % 1000000)) >>"$LAB_DIR/faults.log"
}

# grants_all FROM_US [TO_US]: every member's cs_enter events in that span.
grants_all() { all_events cs_enter "us > $1 and us < ${2:-1e18}" | wc -l; }
