# shellcheck shell=bash
# test/lab/scenarios/lib.sh: what only the fault-lab scenarios need, on top
# of test/lib.sh (waits, processes, logs, cleanup). Sourced by every
# test/lab/scenarios/s_*.sh; `test/run.sh test/lab/scenarios` (make lab) runs
# them (see docs/testing.md). A scenario can also run alone:
# bash test/lab/scenarios/s_1_kill_holder.sh
#
# The lab (or the loopback ring) is taken down on every exit, failed or
# timed out; every client loop is ended by its process group; the
# scenario's row of the results table goes to $RUN_RESULT (test/lab/report.sh
# prints the table). A scenario marked "# needs: netns" is skipped (exit 77)
# where `lab.sh check` says network namespaces cannot be made.
#
# Environment: LAB_DIR (the scenario's dir; else a new temp dir, removed
# after a pass unless KEEP=1), TEST_TIME_SCALE (stretches every wait bound,
# not the asserted bounds).

source "$(dirname "${BASH_SOURCE[0]}")/../../lib.sh"
export LC_ALL=C
LAB=$ROOT/test/lab/lab.sh
CLIENT=$ROOT/test/lab/scenarios/client.sh
need_ring
need_tools jq timeout ss xmllint

if grep -q '^# needs: netns' "$0"; then
	if ! check=$(bash "$LAB" check 2>&1); then
		reason=$(grep -E 'missing|fails|cannot|: no' <<<"$check" | grep -v 'labs cannot run here' |
			sed 's/^check: //' | paste -sd ';' | sed 's/;/; /g')
		skip "network namespaces unavailable: ${reason:-$(tail -n 1 <<<"$check")}"
	fi
fi

lib_init ring-lab-s "${LAB_DIR:-}"
LAB_DIR=$T
export LAB_DIR
OUT=$LAB_DIR/resource # the fenced file every client writes (FILE.fence, FILE.lock beside it)
LOOPBACK=0            # 1: members on 127.0.0.1 started by the scenario (s_8), no lab
LAB_UP=0              # a lab.sh up was attempted: down on exit
declare -A CLIENT_PID=() # member id -> its client loop (leads a process group)
SPAWN_OUT=$LAB_DIR/bg.out
CONF=$LAB_DIR/h1/ring.ini # host 1's copy of the lab's INI (s_8 writes its own ring's)

# lab ARGS...: test/lab/lab.sh in this scenario's dir.
lab() { bash "$LAB" "$@"; }

# result KEY=VALUE...: the scenario's row of the results table (report.sh
# reads recovery_median_ms, recovery_max_ms, loss_timeout_ms, overlaps,
# stale_refused, verdict).
result() {
	local kv
	for kv in "$@"; do
		if [[ -n ${RUN_RESULT:-} ]]; then echo "$kv" >>"$RUN_RESULT"; else echo "result: $kv"; fi
	done
}

# Cleanup, before test/lib.sh's: the client loops, then the lab.
lab_cleanup() {
	local i
	for i in "${!CLIENT_PID[@]}"; do touch "$LAB_DIR/c$i.stop"; done
	end_groups "${CLIENT_PID[@]}" "${BG_PIDS[@]}"
	if ((LAB_UP)); then
		lab down >"$LAB_DIR/down.out" 2>&1 || { echo "lab.sh down failed:"; cat "$LAB_DIR/down.out"; }
	fi
}
CLEANUP_HOOKS+=(lab_cleanup)

# wait_bounded SECONDS FROM_US CMD [ARG...]: wait_until SECONDS; when that
# fails and a member detected a stall of its own process since FROM_US
# (pause_detected: the loaded machine froze it), waits as much longer,
# once. The bound is on the ring's reaction, not on the machine's freezes.
wait_bounded() {
	local _wb_s=$1 _wb_from=$2 _wb_stall
	shift 2
	WAIT_QUIET=1 wait_until "$_wb_s" "$@" && return 0
	_wb_stall=$(stalled_ms "$_wb_from")
	((_wb_stall > 0)) || return 1
	say "a member's process stalled $_wb_stall ms meanwhile: waiting as much longer"
	wait_until "$(secs "$_wb_stall")" "$@"
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
	local ids=("$@") i groups=()
	((${#ids[@]})) || ids=("${!CLIENT_PID[@]}")
	for i in "${ids[@]}"; do
		touch "$LAB_DIR/c$i.stop"
		groups+=("${CLIENT_PID[$i]}")
	done
	if ! WAIT_QUIET=1 wait_until 15 groups_gone "${groups[@]}"; then
		say "client loops of members ${ids[*]} still running 15 s after their stop files: ending them"
	fi
	end_groups "${groups[@]}"
	for i in "${ids[@]}"; do unset "CLIENT_PID[$i]"; done
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

# ---- a client pinned in the critical region ----

# holds M F: member M says it holds the token, with fence F.
holds() { status "$1" | jq -e --argjson f "$2" '.has_token and .fence == $f'; }

# await_pinned M NAME: waits (15 s) for the client a scenario spawned at
# member M to be granted, which it says by writing its fence to
# $LAB_DIR/NAME.in, then (3 s) for member M to say it holds the token with
# that fence. The fence is left in PIN_FENCE. The client waits for
# $LAB_DIR/NAME.go before it leaves.
await_pinned() {
	local _ap_m=$1 _ap_in=$LAB_DIR/$2.in
	wait_until 15 test -s "$_ap_in" || fail "the client at member $_ap_m was not granted within 15 s"
	PIN_FENCE=$(cat "$_ap_in")
	wait_until 3 holds "$_ap_m" "$PIN_FENCE" ||
		fail "member $_ap_m does not say it holds the token with fence $PIN_FENCE: $(status "$_ap_m")"
}

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
	timeline_check
}

# timeline_check: every scenario leaves a picture of its run,
# $LAB_DIR/timeline.svg (ringctl timeline over the members' logs), and it
# must be one: well-formed XML, a lane per member log, and a critical-region
# mark per grant the logs have (fewer only where dense parts were aggregated);
# and follow.txt, the same run as text lanes, with every grant in a column.
timeline_check() {
	local files=("$LAB_DIR"/n*.log) svg=$LAB_DIR/timeline.svg out lanes cs want
	out=$("$RINGCTL" timeline "${files[@]}" -o "$svg" 2>&1) || fail "ringctl timeline exited $?: $out"
	xmllint --noout "$svg" 2>"$LAB_DIR/xmllint.err" ||
		fail "timeline.svg is not well-formed XML: $(head -3 "$LAB_DIR/xmllint.err")"
	lanes=$(grep -o 'class="lane"' "$svg" | wc -l)
	((lanes == ${#files[@]})) || fail "timeline.svg has $lanes lanes for ${#files[@]} member logs"
	want=$(all_logs cs_enter | wc -l)
	cs=$(grep -o 'class="cs"' "$svg" | wc -l)
	if [[ $out == *aggregated* ]]; then
		((cs <= want)) || fail "timeline.svg draws $cs critical regions, the logs have $want grants"
	else
		((cs == want)) || fail "timeline.svg draws $cs critical regions, the logs have $want grants"
	fi
	say "timeline.svg: $lanes lanes, $cs of $want grants drawn ($(stat -c %s "$svg") bytes)"
	# The same logs as lanes of text (ringctl follow): every grant in a column.
	"$RINGCTL" follow --once "${files[@]}" >"$LAB_DIR/follow.txt" 2>"$LAB_DIR/follow.err" ||
		fail "ringctl follow --once exited $?: $(head -3 "$LAB_DIR/follow.err")"
	cs=$(grep -Ec '^ +[0-9.]+s( [0-9.]+)+ +cs_enter +fence=[0-9]+:[0-9]+$' "$LAB_DIR/follow.txt")
	((cs == want)) || fail "follow.txt shows $cs grants in member columns, the logs have $want"
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
		[[ -n $({ log_events "$g" pause_detected; log_events "$p" pause_detected; } |
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

# grants I FROM_US [TO_US]: member I's cs_enter events from FROM_US (to TO_US).
grants() { log_events "$1" cs_enter "us > $2 and us < ${3:-1e18}" | wc -l; }

# grants_all FROM_US [TO_US]: every member's cs_enter events in that span.
grants_all() { all_logs cs_enter "us > $1 and us < ${2:-1e18}" | wc -l; }
