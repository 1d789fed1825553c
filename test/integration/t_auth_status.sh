#!/bin/bash
# Whether a ring authenticates is visible where people look: a loopback ring
# without secret_file is keyed by the ring's own key in state_dir (auth_key
# says which key, status and ring say "authenticated"); with
# authentication = off it logs auth_off with why, `status` (JSON and text)
# and `ringctl ring` (JSON and text) say "not authenticated" and --check
# warns; the same ring with a key says "authenticated" everywhere and logs
# no auth_off. A member with another key answers, and `ringctl ring` shows
# it as `auth fails` (not `down`), from either side's file.
source "$(dirname "$0")/lib.sh"

# ask LABEL: the status and ring views of the running ring, into $T/LABEL.*
ask() {
	status 1 >"$T/$1.status.json" || fail "$1: status --json failed"
	ctl -n 1 status >"$T/$1.status.txt" || fail "$1: status failed"
	ring_json >"$T/$1.ring.json" || fail "$1: ring --json failed"
	ctl ring >"$T/$1.ring.txt" || fail "$1: ring failed"
}
# says_authenticated LABEL BOOL: the status and ring views asked as LABEL
# (status --json and text, ring --json of both members) all say BOOL.
says_authenticated() {
	jq -e ".authenticated == $2" "$T/$1.status.json" >/dev/null ||
		fail "$1: status --json: $(cat "$T/$1.status.json")"
	grep -Eq "^  authenticated +$2\$" "$T/$1.status.txt" || fail "$1: status text: $(cat "$T/$1.status.txt")"
	jq -e "length == 2 and all(.[]; .authenticated == $2)" "$T/$1.ring.json" >/dev/null ||
		fail "$1: ring --json: $(cat "$T/$1.ring.json")"
}
both_answer() { [[ $(ring_json | jq '[.[] | select(.state != "down")] | length') == 2 ]]; }

# ---- no secret_file, on loopback: the ring's own key ----
# Loopback is not private on a shared host (any local user may bind a down
# member's port), so such a ring is keyed all the same, by the key the
# first member makes in state_dir (issue 26).
make_conf "$CONF" 2
start_ring 2
wait_until 10 both_answer || fail "the ring did not answer: $(ring_json)"
ask auto
says_authenticated auto true
head -n 1 "$T/auto.ring.txt" | grep -qF "2 of 2 members answer, datagrams authenticated (the ring's own key $T/state/ring.key)" ||
	fail "ring text with the ring's own key: $(head -n 1 "$T/auto.ring.txt")"
[[ $(stat -c %a "$T/state/ring.key") == 600 ]] || fail "the ring's own key is not mode 0600"
sources=$(for i in 1 2; do log_events $i auth_key | jq -r .source; done | sort | tr '\n' ' ')
[[ $sources == "auto auto-made " ]] || fail "auth_key sources: '$sources', want one member that made the key, one that found it"
! any_log_has auth_off || fail "a member keyed by the ring's own key logged auth_off"
say "no secret_file: keyed by $T/state/ring.key (auth_key: $sources)"
stop_member 1 && stop_member 2 || fail "the members did not stop"

# ---- authentication = off, on loopback ----
rm -f "$T"/n*.log
make_conf "$CONF" 2 authentication=off
start_ring 2
wait_until 10 both_answer || fail "the ring did not answer: $(ring_json)"
ask open
says_authenticated open false
head -n 1 "$T/open.ring.txt" | grep -q '2 of 2 members answer, datagrams NOT authenticated (authentication = off: anyone who can reach these ports can act as a member)$' ||
	fail "ring text without a key: $(head -n 1 "$T/open.ring.txt")"
log_events 1 auth_off | jq -e '.reason | test("authentication = off")' >/dev/null ||
	fail "member 1's auth_off does not say why: $(log_events 1 auth_off)"
"$RINGD" -c "$CONF" --check | grep -q '^warning: the ring has no key: any local user' ||
	fail "--check does not warn that any local user can join a keyless loopback ring"
say "off: auth_off ($(log_events 1 auth_off | jq -r .reason)); status and ring say not authenticated; --check warns"
stop_member 1 && stop_member 2 || fail "the members did not stop"

# ---- the same ring with a key ----
"$RINGCTL" keygen "$T/ring.key" >/dev/null || fail "keygen failed"
rm -f "$T"/n*.log
make_conf "$CONF" 2 secret_file="$T/ring.key"
start_ring 2
wait_until 10 both_answer || fail "the keyed ring did not answer: $(ring_json)"
ask keyed
says_authenticated keyed true
head -n 1 "$T/keyed.ring.txt" | grep -qF "2 of 2 members answer, datagrams authenticated ($T/ring.key)" ||
	fail "ring text with a key: $(head -n 1 "$T/keyed.ring.txt")"
! log_has 1 auth_off || fail "a keyed member logged auth_off"
log_events 1 auth_key | jq -e --arg k "$T/ring.key" '.source == "secret_file" and .secret_file == $k' >/dev/null ||
	fail "member 1's auth_key does not name secret_file: $(log_events 1 auth_key)"
stop_member 1 && stop_member 2 || fail "the members did not stop"

# ---- one member with another key ----
"$RINGCTL" keygen "$T/other.key" >/dev/null || fail "keygen failed"
rm -f "$T"/n*.log
make_conf "$CONF" 3 secret_file="$T/ring.key"
make_conf "$T/other.ini" 3 secret_file="$T/other.key"
start_member 1 && start_member 2 && start_member 3 "$T/other.ini"
two_answer() { [[ $(ring_json | jq '[.[] | select(.state != "down")] | length') == 2 ]]; }
wait_until 10 two_answer || fail "members 1 and 2 did not answer: $(ring_json)"
ctl ring >"$T/mixed.ring.txt"
grep -Eq '^ +3 +127\.0\.0\.1:[0-9]+ +auth fails *$' "$T/mixed.ring.txt" ||
	fail "ring does not show member 3 (another key) as 'auth fails': $(cat "$T/mixed.ring.txt")"
grep -q "member 3 answers from 127.0.0.1:$((PORT_BASE + 2)), but its answer does not authenticate" "$T/mixed.ring.txt" ||
	fail "ring does not say why member 3 fails: $(cat "$T/mixed.ring.txt")"
ring_json | jq -e '.[2].state == "down" and .[2].problem == "auth fails"' >/dev/null ||
	fail "ring --json for member 3: $(ring_json | jq -c '.[2]')"
# From member 3's file, the others are the ones whose key differs: they
# answer that our request does not authenticate there.
"$RINGCTL" -c "$T/other.ini" ring >"$T/other.ring.txt" 2>&1
for id in 1 2; do
	grep -Eq "^ +$id +127\.0\.0\.1:[0-9]+ +auth fails *\$" "$T/other.ring.txt" ||
		fail "ring with member 3's key does not show member $id as 'auth fails': $(cat "$T/other.ring.txt")"
done
say "another key: $(grep -A1 -E '^ +3 ' "$T/mixed.ring.txt" | tr -s ' ' | tr '\n' ' ')"
pass "status and ring say whether datagrams are authenticated, auth_off says why, a member with another key shows as 'auth fails'"
