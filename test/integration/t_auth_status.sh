#!/bin/bash
# Whether a ring authenticates is visible where people look: a loopback ring
# without a key logs auth_off with why it was allowed, and `status` (JSON and
# text) and `ringctl ring` (JSON and text) say "not authenticated"; the same
# ring with a key says "authenticated" everywhere and logs no auth_off.
source "$(dirname "$0")/lib.sh"

# ask LABEL: the status and ring views of the running ring, into $T/LABEL.*
ask() {
	status 1 >"$T/$1.status.json" || fail "$1: status --json failed"
	ctl -n 1 status >"$T/$1.status.txt" || fail "$1: status failed"
	ring_json >"$T/$1.ring.json" || fail "$1: ring --json failed"
	ctl ring >"$T/$1.ring.txt" || fail "$1: ring failed"
}
both_answer() { [[ $(ring_json | jq '[.[] | select(.state != "down")] | length') == 2 ]]; }

# ---- without a key, on loopback ----
make_conf "$CONF" 2
start_ring 2
wait_until 10 both_answer || fail "the ring did not answer: $(ring_json)"
ask open
jq -e '.authenticated == false' "$T/open.status.json" >/dev/null ||
	fail "status --json without a key: $(cat "$T/open.status.json")"
grep -Eq '^  authenticated +false$' "$T/open.status.txt" || fail "status text: $(cat "$T/open.status.txt")"
jq -e 'length == 2 and all(.[]; .authenticated == false)' "$T/open.ring.json" >/dev/null ||
	fail "ring --json without a key: $(cat "$T/open.ring.json")"
head -n 1 "$T/open.ring.txt" | grep -q '2 of 2 members answer, datagrams NOT authenticated (allowed without a key: every member is on loopback)$' ||
	fail "ring text without a key: $(head -n 1 "$T/open.ring.txt")"
log_events 1 auth_off | jq -e '.reason == "allowed without a key: every member is on loopback"' >/dev/null ||
	fail "member 1's auth_off does not say why: $(log_events 1 auth_off)"
say "no key: auth_off ($(log_events 1 auth_off | jq -r .reason)); status and ring say not authenticated"
stop_member 1 && stop_member 2 || fail "the members did not stop"

# ---- the same ring with a key ----
"$RINGCTL" keygen "$T/ring.key" >/dev/null || fail "keygen failed"
rm -f "$T"/n*.log
make_conf "$CONF" 2 secret_file="$T/ring.key"
start_ring 2
wait_until 10 both_answer || fail "the keyed ring did not answer: $(ring_json)"
ask keyed
jq -e '.authenticated == true' "$T/keyed.status.json" >/dev/null ||
	fail "status --json with a key: $(cat "$T/keyed.status.json")"
grep -Eq '^  authenticated +true$' "$T/keyed.status.txt" || fail "status text: $(cat "$T/keyed.status.txt")"
jq -e 'length == 2 and all(.[]; .authenticated == true)' "$T/keyed.ring.json" >/dev/null ||
	fail "ring --json with a key: $(cat "$T/keyed.ring.json")"
head -n 1 "$T/keyed.ring.txt" | grep -qF "2 of 2 members answer, datagrams authenticated ($T/ring.key)" ||
	fail "ring text with a key: $(head -n 1 "$T/keyed.ring.txt")"
! log_has 1 auth_off || fail "a keyed member logged auth_off"
pass "status and ring say whether datagrams are authenticated, auth_off says why"
