#!/bin/bash
# A rolling restart under load (docs/operations.md "Rolling restart /
# upgrade"): each of 5 members in turn gets SIGTERM and is started again
# from another copy of the binary ("old" -> "new"), while clients at every
# member ask for the critical region in a loop. Mutual exclusion holds over
# every region whose command finished within its grant, fences grow in
# region order, every member is granted again after its restart, and the
# ring keeps granting throughout. Prints the time of each step and the
# grants per second before, during and after.
source "$(dirname "$0")/lib.sh"

MEMBERS=5 CLIENTS=2
# A lease far longer than a command here (they hold 10-30 ms) and the
# default loss timeout: a loaded machine's stalls should not end grants.
make_conf "$CONF" $MEMBERS lease_ms=5000 loss_timeout_ms=1000

# The two binaries: the same build, copied, so that each restart is a real
# swap of the file a member runs.
mkdir -p "$T/old" "$T/new"
cp "$RINGD" "$T/old/ringd" && cp "$RINGD" "$T/new/ringd" || fail "cannot copy $RINGD"
OLD=$T/old/ringd NEW=$T/new/ringd

for ((id = 1; id <= MEMBERS; id++)); do RINGD=$OLD start_member $id; done
wait_until 10 any_log_has token_regen || fail "no token minted"
say "$MEMBERS members up on $OLD"

# The wall clock is what the regions are timed by (bash's $EPOCHREALTIME,
# as in t_mutex): one host, one clock. A step of it during the test would
# fake or hide an overlap, so the test compares it with CLOCK_BOOTTIME
# (/proc/uptime) at both ends.
uptime_cs() { local u; read -r u _ </proc/uptime; echo $((${u/./})); }
wall0=$(now_us) boot0=$(uptime_cs)

# ---- the load ----
# Each client appends to its own file, in order: "enter FENCE T" and
# "exit FENCE T" from inside the critical region, then "rc STATUS" once
# ringctl run returned. A run cut short (lease lost, member gone) has no
# exit line or a status other than 0.
export RINGCTL CONF
REGION='echo "enter $RING_FENCE ${EPOCHREALTIME/./}" >>"$0"
sleep 0.0$((RING_FENCE % 3 + 1))
echo "exit $RING_FENCE ${EPOCHREALTIME/./}" >>"$0"'
ctl_up() { "$RINGCTL" -c "$CONF" -n "$1" status --json >/dev/null 2>&1; }
client() { # member client-number: runs until $T/stop, at most 3000 runs or 100 s
	local i rc f=$T/c$1.$2 end=$((SECONDS + 100))
	for ((i = 0; i < 3000 && SECONDS < end; i++)); do
		[[ -e $T/stop ]] && break
		"$RINGCTL" -c "$CONF" -n "$1" run -t 5000 -- bash -c "$REGION" "$f" 2>>"$T/c$1.$2.err"
		rc=$?
		echo "rc $rc" >>"$f"
		# Its member is restarting: wait for it (bounded) rather than spin.
		((rc == 69)) && WAIT_QUIET=1 wait_until 15 ctl_up "$1"
	done
}
for ((m = 1; m <= MEMBERS; m++)); do
	for ((c = 1; c <= CLIENTS; c++)); do spawn client $m $c; done
done
# Regions entered so far, from the clients' files: cheap enough to poll on
# a loaded machine (the members' logs are read once, at the end).
entered() { cat "$T"/c*.[0-9] 2>/dev/null | grep -c '^enter'; }
at_least() { (($(entered) >= $1)); }
wait_until 15 at_least 10 || fail "the load made fewer than 10 grants in 15 s"
load_us=$(now_us)
# A steady stretch before the first restart, for the "before" rate.
wait_until 15 at_least $(($(entered) + 30)) || fail "fewer than 30 grants in 15 s before the restarts"
say "load running: $((MEMBERS * CLIENTS)) clients, $(entered) grants so far"

# ---- the rolling restart ----
# Per step: SIGTERM -> exit (the member's node_stop), start -> control
# socket up, start -> back in every other member's alive list, start ->
# first grant at the member.
in_all_alive() { local o; for ((o = 1; o <= MEMBERS; o++)); do ((o == $1)) || alive_has $o "$1" || return 1; done; }
enters_at() { grep -c '"event":"cs_enter"' "$T/n$1.log"; }
granted_since() { (($(enters_at "$1") > $2)); }
restart_from=$(now_us)
steps=()
for ((id = 1; id <= MEMBERS; id++)); do
	pid=${PIDS[$id]}
	[[ $(readlink "/proc/$pid/exe") == "$OLD" ]] || fail "member $id does not run $OLD before its restart"
	enters=$(enters_at $id)
	t_term=$(now_us)
	STOP_WAIT_S=10 stop_member $id || fail "member $id still running 10 s after SIGTERM"
	((STOP_RC == 0)) || fail "member $id exited $STOP_RC after SIGTERM, want 0"
	stop_us=$(log_events $id node_stop "us >= $t_term" | tail -1 | jq -r "$JQ_TS us")
	[[ -n $stop_us ]] || fail "member $id logged no node_stop after SIGTERM"
	t_start=$(now_us)
	RINGD=$NEW start_member $id
	[[ $(readlink "/proc/${PIDS[$id]}/exe") == "$NEW" ]] || fail "member $id did not restart from $NEW"
	t_up=$(now_us)
	wait_until 15 in_all_alive $id || fail "member $id not back in every alive list 15 s after its restart"
	t_alive=$(now_us)
	wait_until 15 granted_since $id "$enters" ||
		fail "member $id granted nothing in 15 s after its restart (keeps granting)"
	first_us=$(log_events $id cs_enter "us > $t_start" | head -1 | jq -r "$JQ_TS us")
	steps+=("$id $(((stop_us - t_term) / 1000)) $(((t_up - t_start) / 1000)) $(((t_alive - t_start) / 1000)) $(((first_us - t_start) / 1000))")
	say "member $id: SIGTERM -> exit $(((stop_us - t_term) / 1000)) ms; start -> socket $(((t_up - t_start) / 1000)) ms, -> alive everywhere $(((t_alive - t_start) / 1000)) ms, -> first grant $(((first_us - t_start) / 1000)) ms"
done
restart_to=$(now_us)
# A steady stretch after, for the "after" rate; then the load stops.
wait_until 15 at_least $(($(entered) + 30)) || fail "fewer than 30 grants in 15 s after the restarts"
after_to=$(now_us)
touch "$T/stop"
end_groups "${BG_PIDS[@]}"
BG_PIDS=()
wall1=$(now_us) boot1=$(uptime_cs)
drift_ms=$(((wall1 - wall0) / 1000 - (boot1 - boot0) * 10))
((drift_ms < 100 && drift_ms > -100)) || fail "the wall clock moved $drift_ms ms against CLOCK_BOOTTIME: the regions' times mean nothing"

# ---- the oracle ----
# One line per region: fence enter exit status member client. Status "-"
# when the client was stopped at the end before ringctl returned.
for f in "$T"/c*.*; do
	[[ $f == *.err ]] && continue
	mc=${f##*/c}
	awk -v m="${mc%.*}" -v c="${mc#*.}" '
		$1 == "enter" { if (fe != "") print fe, en, ex, "-", m, c; fe = $2; en = $3; ex = "-" }
		$1 == "exit" && $2 == fe { ex = $3 }
		$1 == "rc" { if (fe != "") print fe, en, ex, $2, m, c; fe = "" }
		END { if (fe != "") print fe, en, ex, "-", m, c }' "$f"
done | sort -k2,2n >"$T/regions"
total=$(wc -l <"$T/regions")
((total > 0)) || fail "no region was recorded"
# A region counts when its run exited 0 with both lines written and its
# member did not end the grant before the command did: the member's
# cs_exit for that fence comes after the command's exit line (a revocation,
# at a leave, that ringctl read only after the command had ended shows as
# a cs_exit before it; the run exits 0, but the command outlived its grant).
all_logs cs_exit | jq -r "$JQ_TS \"\(.fence) \(us)\"" >"$T/cs_exit"
# Overlaps the design allows, as in t_mutex: the earlier region's member
# stalled (pause_detected) and revoked, or its lease ran out.
{
	echo begin
	all_logs pause_detected | jq -r "$JQ_TS \"stall \(.node) \(us - .ms * 1000 - 50000) \(us + 50000)\""
	all_logs lease_expired | jq -r '"lease \(.fence)"'
} >"$T/excuses"
awk '
	FILENAME == ARGV[1] { if (!($1 in ce) || $2 < ce[$1]) ce[$1] = $2; next }
	FILENAME == ARGV[2] { if ($1 == "stall") { sn[++ns] = $2; slo[ns] = $3; shi[ns] = $4 } else if ($1 == "lease") lease[$2] = 1; next }
	{
		f = $1; en = $2; ex = $3; rc = $4; m = $5
		if (rc != "0" || ex == "-") { print "skipped", $0; next }
		if ((f in ce) && ce[f] < ex) { print "revoked", $0; next }
		if (k > 0 && f + 0 <= pf + 0) print "FENCE:", f, "entered after", pf
		for (i = 1; i <= k; i++) {
			if (px[i] <= en) continue
			ok = (pfs[i] in lease)
			for (j = 1; j <= ns && !ok; j++)
				ok = sn[j] == pm[i] && ((slo[j] <= en && en <= shi[j]) || (slo[j] <= px[i] && shi[j] >= pe[i] && shi[j] - 50000 <= en))
			print (ok ? "excused:" : "OVERLAP:"), "m=" pm[i], "f=" pfs[i], "[" pe[i] ".." px[i] "]", "and m=" m, "f=" f, "from", en
		}
		k++; pe[k] = en; px[k] = ex; pm[k] = m; pfs[k] = f; pf = f
		print "counted", $0
	}' "$T/cs_exit" "$T/excuses" "$T/regions" >"$T/oracle"
counted=$(grep -c '^counted' "$T/oracle")
skipped=$(grep -c '^skipped' "$T/oracle")
revoked=$(grep -c '^revoked' "$T/oracle")
excused=$(grep -c '^excused:' "$T/oracle")
grep -q '^OVERLAP:' "$T/oracle" && fail "critical regions overlapped: $(grep '^OVERLAP:' "$T/oracle" | head -5)"
grep -q '^FENCE:' "$T/oracle" && fail "fences not increasing in region order: $(grep '^FENCE:' "$T/oracle" | head -5)"
((excused == 0)) || say "$excused overlap(s) excused by a stall or an expired lease: $(grep '^excused:' "$T/oracle" | head -3)"
((counted >= 100)) || fail "only $counted of $total regions finished within their grant; too few to check anything"
bad=$(awk '$4 != "0" && $4 != "70" && $4 != "69" && $4 != "-"' "$T/regions" | head -3)
[[ -z $bad ]] || fail "granted runs that exited neither 0, 70 nor 69 (fence enter exit status member client): $bad"
say "oracle: $total regions, $counted counted, $skipped cut short (exit 70/69 or no exit line), $revoked revoked after their command ended"

# ---- keeps granting ----
all_logs cs_enter | jq -r "$JQ_TS us" | sort -n >"$T/grants"
rate() { # FROM_US TO_US: grants per second in that window, all members
	awk -v a="$1" -v b="$2" '$1 >= a && $1 < b { n++ } END { printf "%.1f", n * 1e6 / (b - a) }' "$T/grants"
}
before=$(rate "$load_us" "$restart_from") during=$(rate "$restart_from" "$restart_to") after=$(rate "$restart_to" "$after_to")
# The longest the ring went without a grant while the members restarted.
gap_ms=$(awk -v a="$restart_from" -v b="$restart_to" '$1 >= a && $1 < b { if ($1 - a > g) g = $1 - a; a = $1 }
	END { if (b - a > g) g = b - a; printf "%d", g / 1000 }' "$T/grants")
stall=$(stalled_ms "$restart_from" "$restart_to")
say "grants/s: before $before, during the restarts $during, after $after; longest gap without a grant during the restarts $gap_ms ms$(stall_note "$stall")"
((gap_ms < 5000 + stall)) || fail "no grant for $gap_ms ms during the rolling restart"
awk -v b="$before" -v d="$during" -v a="$after" 'BEGIN { exit !(b > 0 && d > 0 && a > 0) }' ||
	fail "a window without grants: before $before, during $during, after $after"
regens=$(all_logs token_regen "(us >= $restart_from and us < $restart_to)" | wc -l)
suspects=$(all_logs loss_suspect "(us >= $restart_from and us < $restart_to)" | wc -l)
say "during the restarts: $suspects loss_suspect, $regens token_regen"

echo "| step times, ms (member: SIGTERM->exit, start->socket, start->alive everywhere, start->first grant)"
for s in "${steps[@]}"; do
	read -r id a b c d <<<"$s"
	echo "| member $id: $a $b $c $d"
done
pass "5 restarts ($OLD -> $NEW) under $((MEMBERS * CLIENTS)) clients: $counted regions without overlap, fences increasing; grants/s $before / $during / $after; longest gap $gap_ms ms"
