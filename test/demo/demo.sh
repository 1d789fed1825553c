#!/usr/bin/env bash
# make demo: a 5-member ring on 127.0.0.1 (conf/local5.ini). Every member runs a
# workload that enters the critical region in a loop (ringctl run) and appends
# one fenced line to a shared file (ringctl fenced-append). The merged JSON log of
# all members is shown live by ringctl follow, one column per member. Along the way the demo kills the
# token's holder with kill -9 (loss, election, regeneration), restarts it
# (rejoin), kills a member that does not hold the token (skip) and restarts it
# too; then it stops everything, prints a summary and draws the run with
# ringctl timeline (timeline.svg in the output folder).
#
#   DEMO_SECONDS=20 (default; at least 10) bounds the run; Ctrl-C ends it early.
#   DEMO_HOPS=10 shows every 10th token hop in the live view (0: none).
# The output folder (merged log, shared file, workloads' outcomes) is kept and
# named at the end; everything else it started or created is removed.
set -u

# test/lib.sh: pid_alive, wait_gone, wait_until (bounded polling, seconds).
# The demo keeps its own demo_cleanup: it shows its steps and keeps its output.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
CONF=$ROOT/conf/local5.ini
CS_MS=300 # how long each visit keeps the critical region (sleep after the append)

die() {
	echo "demo: $*" >&2
	exit 1
}

# ---- arguments and environment -------------------------------------------

SECS=${DEMO_SECONDS:-20}
[[ $SECS =~ ^[0-9]+$ ]] || { echo "demo: DEMO_SECONDS must be a whole number of seconds, not '$SECS'" >&2; exit 2; }
if ((SECS < 10)); then
	echo "demo: DEMO_SECONDS=$SECS is too short to show a crash and a recovery; running 10 s" >&2
	SECS=10
fi
HOPS=${DEMO_HOPS:-10}
[[ $HOPS =~ ^[0-9]+$ ]] || { echo "demo: DEMO_HOPS must be a whole number, not '$HOPS'" >&2; exit 2; }
[[ -x $RINGD && -x $RINGCTL ]] || die "build first: make ring/ringd ring/ringctl"
[[ -r $CONF ]] || die "cannot read $CONF"
[[ -r /proc/net/udp ]] || die "needs Linux's /proc/net/udp to check the ports"
command -v jq >/dev/null || die "needs jq (make deps)"

# ---- the ring's layout, from the same file the members read ----------------

CHECK=$("$RINGD" -c "$CONF" --check) || die "$CONF is refused by ringd --check"
# Member ids and ports in file order (the ring order: local5.ini has no
# successor keys), and state_dir. Comments: ';' at line start or after a blank.
mapfile -t MEMBERS < <(awk '
	{ sub(/^[ \t]*[;#].*/, ""); sub(/[ \t];.*/, "") }
	/^[ \t]*\[node\.[0-9]+\]/ { match($0, /[0-9]+/); id = substr($0, RSTART, RLENGTH) }
	/^[ \t]*\[ring\]/ { id = "" }
	id != "" && /^[ \t]*port[ \t]*[=:]/ { sub(/^[^=:]*[=:]/, ""); gsub(/[ \t]/, ""); print id, $0 }
' "$CONF")
# state_dir as ringd resolved it (relative to the file's folder): --check's
# "state_dir: PATH; inject: ..." line.
STATE_DIR=$(sed -n 's/^state_dir: \(.*\); inject: .*/\1/p' <<<"$CHECK")
((${#MEMBERS[@]} >= 2)) || die "found no members in $CONF"
[[ $STATE_DIR == /?* && $STATE_DIR != *..* ]] || die "ringd --check names no usable state_dir for $CONF: '$STATE_DIR'"
IDS=()
declare -A PORT
for m in "${MEMBERS[@]}"; do
	IDS+=("${m% *}")
	PORT[${m% *}]=${m#* }
done

# ---- nothing else may use the ring's ports ---------------------------------

busy=()
udp_tables=(/proc/net/udp)
[[ -r /proc/net/udp6 ]] && udp_tables+=(/proc/net/udp6)
for id in "${IDS[@]}"; do
	hex=$(printf '%04X' "${PORT[$id]}")
	if awk -v p="$hex" 'FNR > 1 { n = split($2, a, ":"); if (toupper(a[n]) == p) f = 1 } END { exit !f }' \
		"${udp_tables[@]}"; then
		busy+=("${PORT[$id]}")
	fi
done
if ((${#busy[@]})); then
	echo "demo: UDP port(s) ${busy[*]} of $CONF already in use (another ringd or demo running?)." >&2
	echo "demo: stop whatever holds them (ss -ulpn shows which process), then run make demo again." >&2
	exit 1
fi

# ---- everything the demo starts is recorded here, and stopped by PID -------

OUT=$(mktemp -d /tmp/ring-demo-out.XXXXXX) || die "cannot create an output folder"
LOG=$OUT/ring.log     # every member's JSON log (-v), merged by O_APPEND, plus the demo's own notes
SHARED=$OUT/shared.txt
declare -A RPID WPID  # ringd and workload PIDs by member id
VIEW_PID=''            # ringctl follow
STARTED=0 CLEANED=0 INTERRUPTED=0
now_ts() { date -u +%Y-%m-%dT%H:%M:%S.%6NZ; }
T0_US=${EPOCHREALTIME/./}
T0_TS=$(now_ts)
# The demo's own lines go to the merged log as JSON lines that name no member
# ("event":"note"), so that follow and timeline show them in time order.
note() {
	local what=$1
	shift
	jq -cn --arg ts "$(now_ts)" --arg what "$what" --arg text "$*" \
		'{ts: $ts, event: "note", what: $what, text: $text}' >>"$LOG"
}
# fence: a fence as the text log writes it, epoch:count (jq's numbers are
# exact below 2^53: epochs below 2^21, far more than a demo reaches).
JQ_FENCE='def fence: "\(. / 4294967296 | floor):\(. - (. / 4294967296 | floor) * 4294967296)";'
# The JSON log as text lines ("TS  node ID EVENT key=value ...", notes as
# "TS  demo  WHAT TEXT"), the shape the summary reads.
as_text() {
	jq -rR "$JQ_FENCE"' fromjson? | if .node then
		"\(.ts)  node \(.node) \(.event) " + ([to_entries[] | select(.key != "ts" and .key != "node" and .key != "event")
			| "\(.key)=\(if .key == "fence" then (.value | fence) else .value end)"] | join(" "))
		elif .event == "note" then "\(.ts)  demo  \(.what) \(.text)" else empty end' "$@"
}
elapsed_ms() { echo $(((${EPOCHREALTIME/./} - T0_US) / 1000)); }

alive() { [[ -n ${1:-} ]] && pid_alive "$1"; }

# ended PID SECONDS: true once PID has exited (then reaped), polling; false
# after SECONDS.
ended() {
	wait_gone "$1" "$2" || return 1
	wait "$1" 2>/dev/null
	return 0
}

start_demo_member() {
	local id=$1
	"$RINGD" -c "$CONF" -n "$id" -v --log-format json --log-file "$LOG" 2>>"$OUT/ringd-$id.err" &
	RPID[$id]=$!
}

# The workload of one member: enter the critical region, append one fenced line
# naming the grant to the shared file, keep the region CS_MS more, release;
# again, until told to stop (SIGTERM, which it passes on to its ringctl run).
workload() {
	local id=$1 child='' stop='' rc
	trap 'stop=1; alive "$child" && kill -TERM "$child" 2>/dev/null' TERM
	trap '' INT
	local cs='"$0" fenced-append "$1" "node=$RING_NODE epoch=$RING_EPOCH count=$((RING_FENCE & 4294967295)) fence=$RING_FENCE" && exec sleep "$2"'
	local hold
	hold=$(printf '%d.%03d' $((CS_MS / 1000)) $((CS_MS % 1000)))
	local n=0
	while [[ -z $stop ]] && ((n++ < SECS * 20 + 100)); do # at most 20 visits a second
		"$RINGCTL" -c "$CONF" -n "$id" run -t 5000 -- sh -c "$cs" "$RINGCTL" "$SHARED" "$hold" \
			>>"$OUT/work-$id.out" 2>&1 &
		child=$!
		wait "$child"
		rc=$?
		# wait returns early (>128) when our TERM trap ran; collect the real status.
		while alive "$child"; do wait "$child"; rc=$?; done
		child=''
		echo "$(now_ts) $rc" >>"$OUT/work-$id.rc"
		[[ -n $stop ]] && break
		case $rc in
		0) sleep 0.05 ;;
		69) sleep 0.3 ;; # member down: wait for it to come back
		*) sleep 0.1 ;;
		esac
	done
}

# ---- the live view ----------------------------------------------------------

# ringctl follow: one column per member of the config, the events people
# watch, every HOPS-th token hop; it follows the log until SIGTERM and then
# prints what was complete. Colour when stdout is a terminal.
start_view() {
	"$RINGCTL" -c "$CONF" follow --hops "$HOPS" "$LOG" 2>>"$OUT/.view.err" &
	VIEW_PID=$!
}

# ---- stopping, by PID, whatever the demo started ---------------------------

demo_cleanup() {
	((CLEANED)) && return
	CLEANED=1
	trap '' INT TERM
	local id pid
	for id in "${!WPID[@]}"; do alive "${WPID[$id]}" && kill -TERM "${WPID[$id]}" 2>/dev/null; done
	for id in "${!WPID[@]}"; do ended "${WPID[$id]}" 3 || kill -KILL "${WPID[$id]}" 2>/dev/null; done
	if ((STARTED && INTERRUPTED)); then
		note stop "Ctrl-C: members leave on SIGINT; SIGTERM to any still running"
	elif ((STARTED)); then
		note stop "SIGTERM to every member: each leaves gracefully (the last ones find no quorum left: expected)"
	fi
	for id in "${!RPID[@]}"; do alive "${RPID[$id]}" && kill -TERM "${RPID[$id]}" 2>/dev/null; done
	local left=0
	for id in "${!RPID[@]}"; do
		pid=${RPID[$id]}
		if ! ended "$pid" 5; then
			echo "demo: member $id (pid $pid) did not leave within 5 s; kill -9" >&2
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			left=1
		fi
	done
	# The members have stopped and their lines are written: on SIGTERM
	# follow prints the rest of them and exits.
	if alive "$VIEW_PID"; then
		kill -TERM "$VIEW_PID" 2>/dev/null
		ended "$VIEW_PID" 3 || kill -KILL "$VIEW_PID" 2>/dev/null
	fi
	wait "$VIEW_PID" 2>/dev/null
	rm -f "$OUT/.view.err"
	# The ring's state is the demo's own (wiped at every start); the
	# control sockets of a member killed -9 stay behind otherwise.
	((STARTED && left == 0)) && [[ -d $STATE_DIR ]] && rm -rf -- "$STATE_DIR"
	# The shared file's helpers are part of the resource, not results.
	rm -f "$SHARED.lock"
}

on_signal() {
	INTERRUPTED=1
	echo
	echo "demo: interrupted; stopping every process it started" >&2
	finish
	exit 130
}

# ---- the summary -----------------------------------------------------------

summary() {
	local ran_ms=$(($(elapsed_ms)))
	local LOG=$OUT/.ring.txt # the summary reads the JSON log as text lines
	as_text "$OUT/ring.log" >"$LOG"
	echo
	printf 'Summary (%d.%d s, %d members):\n' $((ran_ms / 1000)) $((ran_ms % 1000 / 100)) "${#IDS[@]}"
	local id grants lines stale lost down
	printf '  %6s %8s %10s %12s %11s %12s\n' member grants "lines" "stale-fence" "lease lost" "member down"
	for id in "${IDS[@]}"; do
		grants=$(grep -c "^[^ ]*  node $id  *cs_enter " "$LOG")
		lines=$(grep -c "^node=$id " "$SHARED" 2>/dev/null)
		stale=$(awk '$2 == 3' "$OUT/work-$id.rc" 2>/dev/null | wc -l)
		lost=$(awk '$2 == 70' "$OUT/work-$id.rc" 2>/dev/null | wc -l)
		down=$(awk '$2 == 69' "$OUT/work-$id.rc" 2>/dev/null | wc -l)
		printf '  %6s %8s %10s %12s %11s %12s\n' "$id" "$grants" "${lines:-0}" "$stale" "$lost" "$down"
	done
	echo "  (grants: cs_enter logged; lines: appended to shared.txt; the rest: ringctl run exits 3, 70, 69)"
	local refused
	refused=$(cat "$OUT"/work-*.rc 2>/dev/null | awk '$2 == 3' | wc -l)
	if ((refused > 0)); then
		echo "  the shared file refused $refused stale write(s): a member that was slow or stalled used an"
		echo "  old grant after the ring had moved on, and the fence check kept it out (see ring.log)"
	fi
	# Fences: every accepted line's fence must be above the one before it.
	awk '
		{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
		NR > 1 && (v["epoch"] + 0 < pe || (v["epoch"] + 0 == pe && v["count"] + 0 <= pc)) {
			bad++; if (!first) first = sprintf("line %d (%s:%s after %s:%s)", NR, v["epoch"], v["count"], pe, pc)
		}
		{ pe = v["epoch"] + 0; pc = v["count"] + 0 }
		END {
			printf "  fences in shared.txt: %d lines, strictly increasing: %s\n", NR, bad ? "NO, first at " first : "yes"
		}' "$SHARED" 2>/dev/null || echo "  fences in shared.txt: no lines"
	# Counted from the first grant (the start-up election made the first token)
	# to the demo's stop (members leaving at the end skip each other).
	awk '
		$2 == "demo" && $3 == "stop" { exit }
		$2 != "node" { next }
		$4 == "cs_enter" { on = 1 }
		!on { next }
		$4 == "token_regen" { regen++ } $4 == "successor_skip" { skip++ } $4 == "member_rejoin" { rejoin++ }
		$4 == "loss_suspect" { loss++ } $4 == "election_start" { elect++ }
		$4 == "token_stale_drop" { stale++ } $4 == "pause_detected" { pause++ }
		END {
			printf "  recoveries: %d regeneration(s), %d skip(s), %d rejoin(s)\n", regen, skip, rejoin
			printf "    (and %d loss suspicion(s), %d election(s) started, %d stale token(s) dropped, %d pause(s))\n", loss, elect, stale, pause
		}' "$LOG"
	# Recovery after the holder's crash: the kill, the first suspicion, the next grant.
	awk '
		function secs(ts,   t, h) { t = substr(ts, 12, 15); split(t, h, ":"); return h[1] * 3600 + h[2] * 60 + h[3] }
		function d(a, b,   r) { r = b - a; if (r < -43200) r += 86400; return r }
		$2 == "demo" && $3 == "kill-holder" { k = secs($1); kline = $0; sub(/^.*kill-holder +/, "", kline); s = g = ""; next }
		k == "" || $2 != "node" { next }
		$4 == "loss_suspect" && s == "" { s = d(k, secs($1)) }
		$4 == "cs_enter" && g == "" { g = d(k, secs($1)); gn = $3; gf = $5; sub(/fence=/, "", gf) }
		END {
			if (k == "") { print "  recovery: the holder was not killed in this run"; exit }
			if (g == "") { print "  recovery: no grant after the kill of the holder" (intr ? " (interrupted first)" : ""); exit }
			printf "  recovery: %.3f s from kill -9 of the holder to the next grant (member %s, fence %s)", g, gn, gf
			if (s != "") printf "; loss suspected after %.3f s\n", s
			else printf "; no loss suspected (the token had moved on)\n"
		}' intr="$INTERRUPTED" "$LOG"
	local stalls
	stalls=$(awk '$2 == "demo" && $3 == "stop" { exit } $2 == "node" && $4 == "pause_detected" { n++ } END { print n + 0 }' "$LOG")
	if ((stalls > 0)); then
		echo "  note: members found their own process stalled $stalls time(s) (pause_detected): this"
		echo "        machine was overloaded, and the times above say more about it than about ring"
	fi
	rm -f "$LOG"
	if "$RINGCTL" timeline "$OUT/ring.log" -o "$OUT/timeline.svg" \
		--title "ring demo: ${#IDS[@]} members, kill -9 of the holder and of another member, restarts" \
		>/dev/null 2>"$OUT/.timeline.err"; then
		echo "  timeline: $OUT/timeline.svg (open it in a browser; hover for details)"
	else
		echo "  timeline: not drawn: $(head -n 1 "$OUT/.timeline.err")"
	fi
	rm -f "$OUT/.timeline.err"
	echo "  output kept in $OUT: ring.log (every member's JSON log, -v), timeline.svg, shared.txt, work-N.out, work-N.rc"
}

finish() {
	demo_cleanup
	((STARTED)) && summary
}

# ---- the run ---------------------------------------------------------------

trap on_signal INT TERM
trap demo_cleanup EXIT
rm -rf -- "$STATE_DIR"
: >"$LOG"
cat <<EOF
ring demo: ${#IDS[@]} members on 127.0.0.1 ports ${PORT[${IDS[0]}]}..${PORT[${IDS[-1]}]} ($(realpath --relative-to="$PWD" "$CONF" 2>/dev/null || echo "$CONF")), $SECS s.
Each member's workload loops: ringctl run -- fenced-append one line to shared.txt, hold ${CS_MS} ms.
Shown: the members' log events (every ${HOPS}th token hop only), one lane per member.
Output and full logs: $OUT   (Ctrl-C stops early)

EOF
start_view

for id in "${IDS[@]}"; do start_demo_member "$id"; done
STARTED=1
# Every member must be up (answering on its control socket) before the work starts.
answers() { alive "${RPID[$1]}" && "$RINGCTL" -c "$CONF" -n "$1" status >/dev/null 2>&1; }
for id in "${IDS[@]}"; do
	if ! WAIT_QUIET=1 wait_until 5 answers "$id"; then
		echo "demo: member $id did not start:" >&2
		cat "$OUT/ringd-$id.err" >&2
		finish
		exit 1
	fi
done
for id in "${IDS[@]}"; do
	workload "$id" &
	WPID[$id]=$!
done

# The script: crash the holder, bring it back; crash a member that does not hold
# the token, bring it back. Times are shares of the run.
T_KILL1=$((SECS * 1000 / 4))
T_BACK1=$((SECS * 1000 * 40 / 100))
T_KILL2=$((SECS * 1000 * 55 / 100))
T_BACK2=$((SECS * 1000 * 70 / 100))
T_END=$((SECS * 1000))
VICTIM1='' VICTIM2='' step=0

# Waits (at most 3 s) for a member to enter the critical region and prints its
# id and fence within about 20 ms of its cs_enter line, or nothing.
fresh_grant() {
	local seen now k
	seen=$(wc -l <"$LOG")
	for ((k = 0; k < 150; k++)); do
		sleep 0.02
		now=$(wc -l <"$LOG")
		((now > seen)) || continue
		tail -n +$((seen + 1)) "$LOG" | head -n $((now - seen)) | as_text | awk '
			$2 == "node" && $4 == "cs_enter" { id = $3; f = $5; sub(/fence=/, "", f) }
			$2 == "node" && $4 == "cs_exit" && $3 == id { id = "" }
			END { if (id != "") print id, f; else exit 1 }' && return 0
		seen=$now
	done
	return 1
}

# Prints the id of the member holding the token (ringctl ring --json), or nothing.
holder() {
	"$RINGCTL" -c "$CONF" ring --json 2>/dev/null | grep -o '{[^}]*}' |
		grep '"state":"holding"' | head -n 1 | sed 's/.*"node":\([0-9]*\).*/\1/'
}

# Bounded in time (T_END) and in count (a tick every 100 ms, and slack).
for ((tick = 0; tick < SECS * 10 + 600; tick++)); do
	t=$(elapsed_ms)
	if ((t >= T_END)); then
		((step < 4)) && note late "time is up before the demo could run all its faults: this machine stalls (see pause_detected)"
		break
	fi
	case $step in
	0) if ((t >= T_KILL1)); then
		# Kill a member just after it entered its critical region: it keeps
		# the token CS_MS, so the token dies with it.
		read -r VICTIM1 fence < <(fresh_grant)
		if [[ -z $VICTIM1 ]]; then
			VICTIM1=$(holder) fence='?'
		fi
		if [[ -n $VICTIM1 ]] && alive "${RPID[$VICTIM1]}"; then
			note kill-holder "kill -9 member $VICTIM1 (pid ${RPID[$VICTIM1]}), in its critical region (fence $fence): expect loss_suspect, an election, token_regen"
			kill -KILL "${RPID[$VICTIM1]}"
			wait "${RPID[$VICTIM1]}" 2>/dev/null
		else
			note no-holder "no member reported holding the token; nothing killed"
		fi
		step=1
	fi ;;
	1) if ((t >= T_BACK1)); then
		if [[ -n $VICTIM1 ]]; then
			note restart "ringd -n $VICTIM1 again (its epoch file survived): expect member_rejoin"
			start_demo_member "$VICTIM1"
		fi
		step=2
	fi ;;
	2) if ((t >= T_KILL2)); then
		# A member that does not hold the token: its predecessor retransmits, then skips it.
		VICTIM2=''
		h=$(holder)
		for id in "${IDS[@]}"; do
			[[ $id != "$h" && $id != "$VICTIM1" ]] && alive "${RPID[$id]}" && VICTIM2=$id
		done
		if [[ -n $VICTIM2 ]]; then
			note kill-other "kill -9 member $VICTIM2 (pid ${RPID[$VICTIM2]}), which does not hold the token: expect retransmit, successor_skip"
			kill -KILL "${RPID[$VICTIM2]}"
			wait "${RPID[$VICTIM2]}" 2>/dev/null
		fi
		step=3
	fi ;;
	3) if ((t >= T_BACK2)); then
		if [[ -n $VICTIM2 ]]; then
			note restart "ringd -n $VICTIM2 again: expect member_rejoin"
			start_demo_member "$VICTIM2"
		fi
		step=4
	fi ;;
	esac
	sleep 0.1
done

finish
exit 0
