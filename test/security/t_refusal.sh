#!/bin/bash
# The status refusal (issue 30; security.md, *Refusals*) against a
# stranger, on real members: refusal_probe.py sends requests from ports of
# no member, as anyone on the host or a spoofed flood could.
#
# Keyed ring (3 members):
# - a request with a garbage MAC and the ring's fingerprint is refused
#   (UNAUTHENTICATED, the member's fingerprint, 232 bytes for 64);
# - a flood of them, 2000 a second for 2 s from 20 source ports, brings at
#   most 8 refusals a second in all (a fixed one-second window: at most 16
#   in any second, 8 per window started), whatever the sources;
# - a garbage MAC with another fingerprint, an unsealed request, and a
#   HOLD_REQ that is unsealed or has a garbage MAC get nothing: a stranger
#   learns neither the fingerprint nor who holds the lock;
# - one request sealed with the key 3 s ahead of this host's clock (a
#   ringctl on a fast host) makes the members refuse ours for about a
#   second: ring shows 'auth fails' and names that cause.
# Keyless ring (authentication = off): a refusal of another fingerprint is
# capped the same way.
# Figures go to "| " lines.
source "$(dirname "$0")/lib.sh"

PROBE=(python3 "$ROOT/test/security/refusal_probe.py")
need_tools python3
CAP=8

probe() { "${PROBE[@]}" --port "$PORT_BASE" "$@"; }
fingerprint() { "$RINGD" -c "$CONF" --check | head -n 1 | sed -n 's/.*fingerprint \([0-9a-f]\{16\}\).*/\1/p'; }
all_answer() { [[ $(ring_json | jq '[.[] | select(.state != "down")] | length') == 3 ]]; }
# capped FILE: FILE's flood got refusals, within the cap over its seconds.
capped() {
	jq -e --argjson cap $CAP '.answers > 0 and .max_per_second <= 2 * $cap and
		.answers <= $cap * ((.seconds | ceil) + 1)' "$1" >/dev/null
}

"$RINGCTL" keygen "$KEY" >/dev/null || fail "keygen failed"
make_conf "$CONF" 3
start_ring 3
wait_until 10 all_answer || fail "the ring did not answer: $(ring_json)"
FP=$(fingerprint)
[[ -n $FP ]] || fail "no fingerprint from ringd --check"
other=$(printf '%016x' $((0x$FP ^ 1)))

probe --fp "$FP" --trailer garbage >"$T/one.json"
jq -e --arg fp "$FP" '.answers == 1 and .flags == {"4": 1} and .fingerprints[$fp] == 1' \
	"$T/one.json" >/dev/null || fail "a garbage MAC was not refused once: $(cat "$T/one.json")"
say "one refusal: $(jq -c '{sent_bytes, answer_bytes}' "$T/one.json")"

probe --fp "$FP" --trailer garbage --count 4000 --rate 2000 --sources 20 >"$T/flood.json"
capped "$T/flood.json" || fail "refusals beyond $CAP a second: $(cat "$T/flood.json")"
echo "| keyed flood: $(jq -r '"\(.sent) requests (\(.sent_bytes) B) from 20 ports in \(.seconds) s: \(.answers) refusals (\(.answer_bytes) B, \(.sources_answered) ports), at most \(.max_per_second) in a second"' "$T/flood.json")"

for how in "--fp $other --trailer garbage" "--fp $FP --trailer none" \
	"--fp $FP --kind hold --trailer none" "--fp $FP --kind hold --trailer garbage"; do
	# shellcheck disable=SC2086 # the words of $how are the probe's options
	probe $how --count 50 --rate 500 >"$T/silent.json"
	jq -e '.answers == 0' "$T/silent.json" >/dev/null ||
		fail "a stranger's request ($how) was answered: $(cat "$T/silent.json")"
done
say "another fingerprint, unsealed, HOLD_REQ unsealed or forged: no answer"

# A ringctl whose clock is 3 s ahead, then ours: refused for about 1 s.
wait_until 3 all_answer || fail "the ring stopped answering: $(ring_json)"
probe --fp "$FP" --trailer "$KEY" --skew-ms 3000 >"$T/fast.json"
jq -e '.answers == 1 and .flags == {"0": 1}' "$T/fast.json" >/dev/null ||
	fail "the fast request was not answered: $(cat "$T/fast.json")"
ctl ring >"$T/after_fast.txt" 2>&1
grep -Eq '^ +1 +127\.0\.0\.1:[0-9]+ +auth fails *$' "$T/after_fast.txt" ||
	fail "ring after a fast ringctl does not show member 1 as 'auth fails': $(cat "$T/after_fast.txt")"
grep -q "a ringctl on a host whose clock runs ahead of this one's" "$T/after_fast.txt" ||
	fail "ring does not name the fast clock: $(cat "$T/after_fast.txt")"
wait_until 5 all_answer || fail "the ring did not answer again after the fast request: $(ring_json)"
say "after a request 3 s ahead: $(grep -c 'auth fails' "$T/after_fast.txt") members 'auth fails' (the fast clock named), then all answer"
for i in 1 2 3; do stop_member "$i" || fail "member $i did not stop"; done

# ---- keyless: another fingerprint, capped the same way ----
rm -f "$T"/n*.log
make_conf "$CONF" 3 secret_file= authentication=off
start_ring 3
wait_until 10 all_answer || fail "the keyless ring did not answer: $(ring_json)"
probe --fp 0 --count 4000 --rate 2000 --sources 20 >"$T/open.json"
capped "$T/open.json" || fail "keyless refusals beyond $CAP a second: $(cat "$T/open.json")"
jq -e --arg fp "$FP" '.flags == {"8": .answers} and .fingerprints[$fp] == .answers' "$T/open.json" >/dev/null ||
	fail "keyless refusals are not OTHER_CONFIG with the ring's fingerprint: $(cat "$T/open.json")"
echo "| keyless, fingerprint 0: $(jq -r '"\(.sent) requests (\(.sent_bytes) B): \(.answers) refusals (\(.answer_bytes) B), each with the ring'"'"'s fingerprint"' "$T/open.json")"
pass "refusals capped at $CAP a second from any number of sources; strangers learn nothing of a keyed ring; a fast ringctl's effect is named"
