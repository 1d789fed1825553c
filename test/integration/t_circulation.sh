#!/bin/bash
# Three members: one token is minted at start, by exactly one member, and
# circulates (every member passes it on); `ringctl ring` sees all three
# with at most one holder; `status --json` has every field SPEC lists.
source "$(dirname "$0")/lib.sh"

# The token rests 200 ms at each member so that a `ringctl ring` snapshot
# can tell one holder from two (a member in mid-pass reports the token too).
# The test asserts that nothing is ever regenerated after the start: a loss
# timeout of 1 s keeps a loaded machine's scheduling delays from faking a loss.
make_conf "$CONF" 3 idle_pass_ms=200 loss_timeout_ms=1000
start_ring 3
say "3 members up on ports $PORT_BASE.."

# The first token: one election, one regeneration, at one member.
wait_until 5 any_log_has token_regen || fail "no member minted a token"
# Grants need the epoch at a majority (PROTOCOL.md 4.4): let it go round twice.
passed() { field "$1" .tokens_passed; }
declare -A p0
for id in 1 2 3; do p0[$id]=$(passed $id); done
grows() { (($(passed "$1") >= ${p0[$1]} + 2)); }
for id in 1 2 3; do
	wait_until 5 grows $id || fail "member $id passed no token in 5 s (tokens_passed ${p0[$id]} -> $(passed $id))"
done
say "tokens_passed grows at every member: $(for id in 1 2 3; do printf '%s=%s ' $id "$(passed $id)"; done)"
first=$(all_logs token_regen | jq -sc 'sort_by(.ts)[0]')
minter=$(jq -r .node <<<"$first")
epoch=$(jq -r .epoch <<<"$first")
first_us=$(jq -r "$JQ_TS us" <<<"$first")
# Only a stall of the machine (logged as pause_detected) may explain another.
others=$(unexplained token_regen "us > $first_us")
[[ -z $others ]] || fail "expected exactly one token_regen at start, saw more: $(all_logs token_regen)"
say "member $minter minted epoch $epoch"
# Every member follows that token: one epoch everywhere, the minted one or,
# when a member started too late for the first election and joined
# afterwards, the epoch its rejoin gave the token (PROTOCOL.md 5.3).
one_epoch() {
	local e1 e2 e3
	e1=$(field 1 .epoch) e2=$(field 2 .epoch) e3=$(field 3 .epoch)
	((e1 == e2 && e2 == e3 && e1 >= epoch))
}
wait_until 5 one_epoch || fail "the members do not share one epoch >= $epoch"

# `ringctl ring`: every member answers, at most one holds. A snapshot that
# shows two is taken again at once: a hop may cross a snapshot (the sender
# reports the token until its successor acks), a second token would not go away.
for ((i = 0; i < 10; i++)); do
	j=$(ring_json) || fail "ringctl ring failed: $j"
	answering=$(jq '[.[] | select(.state != "down")] | length' <<<"$j")
	((answering == 3)) || fail "ringctl ring: $answering of 3 members answer: $j"
	h=$(jq '[.[] | select(.has_token)] | length' <<<"$j")
	if ((h > 1)); then
		j=$(ring_json)
		h=$(jq '[.[] | select(.has_token)] | length' <<<"$j")
		((h <= 1)) || fail "ringctl ring shows $h holders twice in a row: $j"
	fi
done
out=$(ctl ring) || fail "ringctl ring (text) failed"
grep -q '3 of 3 members answer' <<<"$out" || fail "ringctl ring text: $out"
say "ringctl ring: 3 of 3 answer, at most one holder in 10 snapshots"

# status --json: one object with every SPEC field, of the right kind.
for id in 1 2 3; do
	s=$(status $id) || fail "status of member $id failed"
	jq -e --argjson id $id '
		(.node == $id) and (.ring | type == "string") and (.epoch | type == "number") and
		(.state | IN("idle", "waiting", "holding", "electing", "no-quorum")) and
		(.fence | type == "number") and (.successor | type == "number") and
		(.alive | type == "array") and
		(.token_seen_ms_ago | type == "number" or . == null) and
		all(.tokens_passed, .cs_entries, .retransmits, .skips, .elections, .regenerations,
		    .stale_dropped, .bad_packets, .auth_failures; type == "number")' <<<"$s" >/dev/null ||
		fail "member $id status lacks a SPEC field or has a wrong type: $s"
	succ=$(jq .successor <<<"$s")
	((succ == id % 3 + 1)) || fail "member $id successor is $succ, want $((id % 3 + 1))"
	[[ $(jq -c .alive <<<"$s") == "[1,2,3]" ]] || fail "member $id alive list: $(jq -c .alive <<<"$s")"
done
# The human form too.
out=$(ctl -n 1 status) || fail "ringctl status (text) failed"
grep -q 'tokens_passed' <<<"$out" || fail "ringctl status text lacks tokens_passed: $out"

# Still exactly one regeneration: a quiet ring never needs another.
others=$(unexplained token_regen "us > $first_us")
[[ -z $others ]] || fail "a healthy ring regenerated again: $others"
others=$(unexplained loss_suspect '.epoch != 0')
[[ -z $others ]] || fail "loss suspected on a healthy ring: $others"
pass "one token minted by member $minter, circulating through 3 members"
