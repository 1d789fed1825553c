#!/bin/bash
# What ringd and ringctl say when something is wrong or missing (issue 15):
# a failed start says why and nothing misleading first (no auth_off), in
# JSON too with --log-format json; a missing -n is named; --help prints
# every key of the file; `status` reads as a table with the fence as
# epoch:count; `ring` with a key blames the key (auth_fail) when nobody
# answers; inject pause answers before it stalls.
source "$(dirname "$0")/lib.sh"

make_conf "$CONF" 3
start_ring 3
wait_until 10 any_log_has token_regen || fail "no token minted"

# ---- a start that fails: the port is taken by member 1 ----
sed "s#^state_dir = .*#state_dir = $T/other#" "$CONF" >"$T/other.ini"
timeout 30 "$RINGD" -c "$T/other.ini" -n 1 >/dev/null 2>"$T/text.err"
rc=$?
((rc == 1)) || fail "ringd on a taken port exited $rc, want 1: $(cat "$T/text.err")"
grep -q '^ringd: cannot bind' "$T/text.err" || fail "no 'ringd: cannot bind' line: $(cat "$T/text.err")"
! grep -q auth_off "$T/text.err" || fail "a failed start logs auth_off first: $(cat "$T/text.err")"
# JSON to a pipe: every line is JSON, the last one says why.
timeout 30 "$RINGD" -c "$T/other.ini" -n 1 --log-format json 2>"$T/json.err" >/dev/null
rc=$?
((rc == 1)) || fail "ringd --log-format json on a taken port exited $rc, want 1"
jq -e . "$T/json.err" >/dev/null 2>&1 || fail "with --log-format json stderr is not all JSON: $(cat "$T/json.err")"
jq -se 'last | .event == "fatal" and (.error | test("cannot bind")) and .node == 1' "$T/json.err" >/dev/null ||
	fail "the last JSON line is not the fatal error: $(cat "$T/json.err")"
! grep -q auth_off "$T/json.err" || fail "a failed start logs auth_off first (json)"
# JSON to a file: the event in the file, the plain line on stderr.
timeout 30 "$RINGD" -c "$T/other.ini" -n 1 --log-format json --log-file "$T/other.log" 2>"$T/file.err"
grep -q '^ringd: cannot bind' "$T/file.err" || fail "with --log-file stderr lacks the plain error"
jq -se 'last | .event == "fatal"' "$T/other.log" >/dev/null || fail "the log file lacks the fatal event"
say "a failed start: plain on stderr, JSON with --log-format json, no auth_off before it"

# ---- arguments ----
out=$(timeout 30 "$RINGD" -c "$CONF" 2>&1)
rc=$?
((rc == 2)) || fail "ringd without -n exited $rc, want 2"
grep -q -- '-n ID is missing' <<<"$out" || fail "ringd without -n does not say so: $out"
timeout 30 "$RINGD" --help >"$T/help.txt" || fail "ringd --help failed"
keys=$(sed -n 's/^| \(ring\|node\.ID\) | `\([a-z_]*\)` |.*/\2/p' "$ROOT/docs/configuration.md")
(($(wc -w <<<"$keys") >= 16)) || fail "found only $(wc -w <<<"$keys") keys in docs/configuration.md's table"
for k in $keys; do
	grep -Eq "^  $k +[^ ]" "$T/help.txt" || fail "ringd --help does not list the key $k"
done
say "ringd names a missing -n; --help lists all $(wc -w <<<"$keys") keys"

# ---- status for people ----
"$RINGCTL" -c "$CONF" -n 2 run -t 10000 -- true || fail "no grant at member 2"
"$RINGCTL" -c "$CONF" -n 2 status >"$T/status.txt" || fail "status failed"
sed 's/^/  | /' "$T/status.txt"
head -n 1 "$T/status.txt" | grep -q "^member 2 of ring \"$(conf_value name)\"$" || fail "status's first line"
! grep -Eq '^ +(ring|node) ' "$T/status.txt" || fail "status repeats the ring or the member"
grep -Eq '^  fence +[0-9]+:[0-9]+ \([0-9]+\)$' "$T/status.txt" || fail "status's fence is not epoch:count (integer)"
cols=$(tail -n +2 "$T/status.txt" | awk '{ match($0, /^  [a-z_]+ +/); print RLENGTH }' | sort -u)
[[ $cols == 21 ]] || fail "status's values do not start in one column: $cols"
say "status: one aligned column, fence as epoch:count"

# ---- ring with a key nobody has: the hint names auth_fail ----
"$RINGCTL" keygen "$T/k.key" >/dev/null || fail "keygen failed"
sed "s#^\[ring\]#[ring]\nsecret_file = $T/k.key#" "$CONF" >"$T/keyed.ini"
out=$(timeout 30 "$RINGCTL" -c "$T/keyed.ini" ring 2>&1 >/dev/null)
rc=$?
((rc == 69)) || fail "ring with a key nobody has exited $rc, want 69: $out"
grep -q 'auth_fail' <<<"$out" || fail "the hint for another key does not name auth_fail: $out"
# ---- inject pause answers at once, before the stall (docs/control.md) ----
t0=$(now_ms)
"$RINGCTL" -c "$CONF" -n 3 inject pause 4000 || fail "inject pause 4000 failed"
took=$(($(now_ms) - t0))
((took < 2500)) || fail "inject pause 4000 returned after $took ms: the OK waited for the stall"
say "inject pause 4000 answered after $took ms"
pass "failed start, missing -n, --help keys, status text and the ring hint say what is wrong"
