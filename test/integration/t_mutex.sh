#!/bin/bash
# Mutual exclusion under contention: 5 members, 3 clients at each, 15 runs
# per client of a CMD that records its interval in the critical region and
# writes its fence to the reference fenced resource. No two intervals
# overlap (checked on every interval, whatever the machine does; only a
# member's own stall excuses one), every run granted and exiting 0 (70 for
# a grant revoked after a stall), fences strictly increasing, every member
# served.
source "$(dirname "$0")/lib.sh"

MEMBERS=5 CLIENTS=3 ITER=15
# A lease far longer than any CMD here: this test is about exclusion, and a
# CMD cut short by its lease on a crawling machine overlaps its successor
# by design (t_lease checks that).
make_conf "$CONF" $MEMBERS lease_ms=30000
start_ring $MEMBERS
wait_until 5 any_log_has token_regen || fail "no token minted"
say "$MEMBERS members up, token minted"

export DIR=$T/res RINGCTL
mkdir -p "$DIR/iv"
# The oracle: each run records its interval in the critical region (its
# start and end, microseconds; a run revoked by SIGTERM records its end
# too) in a file named by its fence, and writes its fence to the reference
# fenced resource. bash for $EPOCHREALTIME.
ORACLE='iv=$DIR/iv/$RING_FENCE
echo "${EPOCHREALTIME/./} $RING_NODE $RING_FENCE" > "$iv"
on_term() { echo "${EPOCHREALTIME/./}" >> "$iv"; exit 143; }
trap on_term TERM
"$RINGCTL" fenced-append "$DIR/out" "n=$RING_NODE f=$RING_FENCE" || echo "APPEND-FAILED n=$RING_NODE f=$RING_FENCE rc=$?" >> "$DIR/refused"
sleep 0.0$((RING_FENCE % 4 + 1))
echo "${EPOCHREALTIME/./}" >> "$iv"'

client() { # member client-number
	local i rc
	for ((i = 1; i <= ITER; i++)); do
		"$RINGCTL" -c "$CONF" -n "$1" run -t 10000 -- bash -c "$ORACLE"
		rc=$?
		echo "$1 $2 $i $rc" >>"$T/runs"
	done
}

clients=()
for ((m = 1; m <= MEMBERS; m++)); do
	for ((c = 1; c <= CLIENTS; c++)); do
		spawn client $m $c
		clients+=("$BG_PID")
	done
done
say "$((MEMBERS * CLIENTS)) clients started, $ITER runs each"
for pid in "${clients[@]}"; do
	wait_bg "$pid" 90 || fail "a client did not finish its $ITER runs in 90 s ($(wc -l <"$T/runs") runs done)"
done
say "clients done"

# Mutual exclusion, on every interval, stalls or not: sorted by start, no
# interval may begin before an earlier one ended. The one overlap the
# design allows (PROTOCOL.md 5.5) is that of a member whose own process
# stalled (pause_detected) while its client was inside: the ring moved on
# without it, and the stalled member revokes its grant when it wakes. So an
# overlap is excused only when the earlier interval's member logged a stall
# covering the moment the later interval began (50 ms of slack); or a stall
# that overlaps the earlier interval and ended, its grant revoked, before
# the later one began (the whole machine stalled: the client, stalled too,
# started its command after its member had revoked the grant, and fencing
# refuses its write); or a lease_expired for the earlier fence. Anything
# else fails.
# One line per run: start node fence end (end 0: none recorded).
ivs=("$DIR"/iv/*)
[[ -f ${ivs[0]} ]] || fail "no run recorded an interval"
awk 'FNR == 1 { if (NR > 1) print line, end; line = $0; end = 0 } FNR == 2 { end = $1 } END { print line, end }' \
	"${ivs[@]}" | sort -n >"$T/intervals"
{
	echo begin # never empty, so that awk tells the two files apart
	all_logs pause_detected | jq -r "$JQ_TS \"stall \(.node) \(us - .ms * 1000 - 50000) \(us + 50000)\""
	all_logs lease_expired | jq -r '"lease \(.node) \(.fence)"'
} >"$T/excuses"
overlaps=$(awk '
	FNR == NR { if ($1 == "begin") next; if ($1 == "stall") { sn[++ns] = $2; slo[ns] = $3; shi[ns] = $4 } else lease[$2 " " $3] = 1; next }
	{
		s = $1; n = $2; f = $3; e = ($4 == 0 ? 9e18 : $4)
		for (i = 1; i <= k; i++) {
			if (pe[i] <= s) continue
			ok = ((pn[i] " " pf[i]) in lease)
			for (j = 1; j <= ns && !ok; j++)
				ok = sn[j] == pn[i] && ((slo[j] <= s && s <= shi[j]) ||
							(slo[j] <= pe[i] && shi[j] >= ps[i] && shi[j] - 50000 <= s))
			printf "%s n=%s f=%s [%s..%s] overlaps n=%s f=%s from %s\n", ok ? "excused:" : "OVERLAP:", pn[i], pf[i], ps[i], pe[i], n, f, s
		}
		k++; ps[k] = s; pn[k] = n; pf[k] = f; pe[k] = e
	}' "$T/excuses" "$T/intervals")
excused=$(grep -c '^excused:' <<<"$overlaps")
[[ -n $overlaps ]] && say "overlaps: $(head -3 <<<"$overlaps")"
grep -q '^OVERLAP:' <<<"$overlaps" && fail "critical regions overlapped with no stall of the earlier member to explain it: $(grep '^OVERLAP:' <<<"$overlaps" | head -5)"
intervals=$(wc -l <"$T/intervals")
say "mutual exclusion checked over $intervals intervals: ${excused} overlap(s), each after a stall of its earlier member"

total=$((MEMBERS * CLIENTS * ITER))
runs=$(wc -l <"$T/runs")
((runs == total)) || fail "$runs runs recorded, want $total"
# Fences strictly increasing line by line (unique and growing): the
# resource's guarantee, which holds whatever happens.
notinc=$(sed 's/.* f=//' "$DIR/out" | awk 'NR > 1 && $1 <= prev { print NR": "$1" after "prev; exit } { prev = $1 }')
[[ -z $notinc ]] || fail "fences not strictly increasing at line $notinc"
lines=$(wc -l <"$DIR/out")
stall=$(stalled_ms 0)
expired=$(all_logs lease_expired | wc -l)
if ((stall > 0 || expired > 0)); then
	# A member that finds itself stalled past half a loss timeout revokes
	# its grant (PROTOCOL.md 5.5), and a lease that runs out moves the token
	# on: such runs exit 70, and their appends may come too late.
	say "the machine stalled up to $stall ms, $expired leases ran out: runs may exit 70"
	bad=$(awk '$4 != 0 && $4 != 70' "$T/runs" | head -5)
	[[ -z $bad ]] || fail "runs that exited neither 0 nor 70 (member client iteration status): $bad"
	ok=$(awk '$4 == 0' "$T/runs" | wc -l)
	refused=$(cat "$DIR/refused" 2>/dev/null | wc -l)
	((lines + refused >= ok)) || fail "$ok runs exited 0 but only $lines lines and $refused refusals"
	((intervals >= ok)) || fail "$ok runs exited 0 but only $intervals intervals were recorded"
	pass "$total runs under a stall of $stall ms ($expired leases ran out): $intervals intervals, $excused overlap(s) each after a stall, fences strictly increasing over $lines lines"
fi
((excused == 0)) || fail "$excused overlaps excused by stalls, yet no stall was logged"
bad=$(awk '$4 != 0' "$T/runs" | head -5)
[[ -z $bad ]] || fail "runs that did not exit 0 (member client iteration status): $bad"
[[ ! -s $DIR/refused ]] || fail "fenced appends refused without a stall: $(head -3 "$DIR/refused")"
((intervals == total)) || fail "$intervals intervals recorded, want $total"
((lines == total)) || fail "the resource has $lines lines, want $total"
for ((m = 1; m <= MEMBERS; m++)); do
	entries=$(grep -c "^n=$m " "$DIR/out")
	((entries == CLIENTS * ITER)) || fail "member $m got $entries entries, want $((CLIENTS * ITER))"
done
n=$(all_logs cs_enter | wc -l)
((n == total)) || fail "the logs show $n cs_enter, want $total"
pass "$total runs, no overlap in $intervals intervals, fences strictly increasing $(head -1 "$DIR/out" | sed 's/.* f=//')..$(tail -1 "$DIR/out" | sed 's/.* f=//')"
