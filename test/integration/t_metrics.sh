#!/bin/bash
# Metrics: `ringctl metrics` (the control socket's METRICS) on a 3-member
# ring after a few grants: cs_entries and both histograms' counts agree with
# the grants made there, tokens are counted in and out, every line is
# Prometheus text; the reply ends with its marker and the connection goes
# on; the HTTP listener (metrics_listen) answers GET /metrics and 404
# elsewhere; a non-loopback metrics_listen is refused (exit 78, FILE:LINE).
# Python's prometheus_client (prom_check.py) parses both, strictly: Debian's
# /usr/bin/python3, where python3-prometheus-client installs it; promtool
# (Debian's prometheus) lints the names, and the alert rules in
# conf/ring-alerts.yml may only name metrics that are really there.
source "$(dirname "$0")/lib.sh"
need_tools promtool

# Three UDP ports for the members and one more whose TCP twin is free, for
# the HTTP listener: reserved together against the other scripts.
pick_ports_with_http 4
make_conf "$CONF" 3 lease_ms=30000 node.1.metrics_listen=127.0.0.1:$HTTP
start_ring 3
wait_until 5 any_log_has token_regen || fail "no token minted"

metrics() { timeout 10 "$RINGCTL" -c "$CONF" -n "$1" metrics; }
# sample TEXT NAME[{LABELS}]: the value of that sample line, or empty.
sample() { awk -v n="$2" '$1 == n { print $2; exit }' <<<"$1"; }

# Every line is a HELP, a TYPE or name{labels} value; every family's HELP
# and TYPE come before its samples.
well_formed() {
	awk '
		/^# (HELP|TYPE) ring_[a-z0-9_]+ / { seen[$2 $3] = 1; next }
		/^ring_[a-z0-9_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [-+0-9.eEInf]+$/ {
			name = $1; sub(/\{.*/, "", name)
			base = name; sub(/_(bucket|sum|count)$/, "", base)
			if (!((seen["HELP" name] && seen["TYPE" name]) || (seen["HELP" base] && seen["TYPE" base]))) {
				print "sample before HELP/TYPE: " $0; bad = 1
			}
			next
		}
		{ print "not exposition: " $0; bad = 1 }
		END { exit bad }' <<<"$1"
}

before=$(metrics 1) || fail "ringctl metrics at member 1 failed"
well_formed "$before" || fail "member 1's metrics are not well formed"

# Grants at 1, then at 2, then at 1 again: the token must leave member 1
# and come back (member 2 is 1's successor; it returns through 3).
G1=0
for where in 1 1 2 1 1; do
	"$RINGCTL" -c "$CONF" -n $where run -t 20000 -- true || fail "run at member $where exited $?"
	[[ $where == 1 ]] && G1=$((G1 + 1))
done
after=$(metrics 1) || fail "ringctl metrics at member 1 failed after the grants"
well_formed "$after" || fail "member 1's metrics are not well formed after the grants"
# The same text through the parser Prometheus users' tools use: strict about
# the format, and every promised family with its type.
# The alert rules shipped in conf/ must name metrics that exist.
strict=$(/usr/bin/python3 "$(dirname "$0")/prom_check.py" --rules "$ROOT/conf/ring-alerts.yml" \
	<<<"$after") || fail "prometheus_client rejects member 1's metrics: $strict"
say "prometheus_client parses member 1's metrics: $strict; every metric in ring-alerts.yml exists"
# And Prometheus's own linter (promtool, Debian's prometheus): naming and help.
lint=$(promtool check metrics <<<"$after" 2>&1) || fail "promtool check metrics: $lint"

delta() { echo $(($(sample "$after" "$1") - $(sample "$before" "$1"))); }
for m in ring_cs_entries_total ring_grant_wait_seconds_count ring_hold_seconds_count \
	'ring_grant_wait_seconds_bucket{le="+Inf"}' 'ring_hold_seconds_bucket{le="+Inf"}'; do
	[[ $(delta "$m") == "$G1" ]] || fail "$m grew by $(delta "$m"), want the $G1 grants made at member 1"
done
cs=$(field 1 .cs_entries)
[[ $(sample "$after" ring_cs_entries_total) == "$cs" ]] ||
	fail "metrics say cs_entries $(sample "$after" ring_cs_entries_total), status says $cs"
tin=$(delta 'ring_datagrams_received_total{type="token"}')
tout=$(delta 'ring_datagrams_sent_total{type="token"}')
((tin >= 1 && tout >= 1)) || fail "member 1 counted tokens in $tin, out $tout; want both >= 1"
# Buckets cumulative, the last equal to the count.
for h in ring_grant_wait_seconds ring_hold_seconds; do
	grep "^${h}_bucket" <<<"$after" | awk -v c="$(sample "$after" "${h}_count")" '
		{ if ($2 < last) bad = 1; last = $2 } END { exit bad || last != c }' ||
		fail "$h: buckets not cumulative or +Inf != _count"
done
say "member 1: $G1 grants, cs_entries/grant_wait/hold counts agree; tokens in $tin, out $tout"

# ---- the control socket's framing ----
out=$(ctl_chat "$T/state/node-2.sock" 5000 '"node":2' 'METRICS\nSTATUS\n')
grep -qx '# EOF' <<<"$out" || fail "METRICS reply without its end marker"
[[ $(sed -n '/^# EOF$/{n;p}' <<<"$out") == '{"node":2'* ]] ||
	fail "STATUS after METRICS on one connection: not right after the marker"
out=$(ctl_chat "$T/state/node-2.sock" 2000 '\n' 'METRICS now\n')
[[ $out == ERR\ * ]] || fail "METRICS with an argument got '$out', want ERR"
say "METRICS ends with '# EOF', the connection goes on"

# ---- HTTP ----
# http_get PATH: the status line's code, then the headers and the body.
http_get() {
	if command -v curl >/dev/null; then
		curl -s -i --max-time 5 "http://127.0.0.1:$HTTP$1" | tr -d '\r' |
			sed '1s/^HTTP\/[0-9.]* \([0-9]*\).*/\1/'
	else
		timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/$0 &&
			printf "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" "$1" >&3 && cat <&3' "$HTTP" "$1" |
			tr -d '\r' | sed '1s/^HTTP\/[0-9.]* \([0-9]*\).*/\1/'
	fi
}
page=$(http_get /metrics)
[[ $(head -1 <<<"$page") == 200 ]] || fail "GET /metrics: $(head -1 <<<"$page")"
grep -qi '^content-type: text/plain; version=0.0.4' <<<"$page" || fail "GET /metrics: no 0.0.4 content type"
body=$(sed '1,/^$/d' <<<"$page")
well_formed "$body" || fail "the HTTP page is not well formed"
strict=$(/usr/bin/python3 "$(dirname "$0")/prom_check.py" <<<"$body") ||
	fail "prometheus_client rejects the HTTP page: $strict"
[[ $(sample "$body" ring_cs_entries_total) == "$(sample "$after" ring_cs_entries_total)" ]] ||
	fail "HTTP and ringctl disagree on cs_entries"
for p in / /metric /metrics/x /status; do
	[[ $(http_get "$p" | head -1) == 404 ]] || fail "GET $p: want 404"
done
ss -Htln | awk '{print $4}' | grep -qx "127.0.0.1:$HTTP" || fail "the listener is not on 127.0.0.1:$HTTP"
say "HTTP: GET /metrics 200 (text/plain; version=0.0.4), other paths 404"

# ---- a non-loopback listener is refused ----
for addr in 0.0.0.0:$HTTP 192.0.2.1:$HTTP '[::]:'$HTTP localhost:$HTTP 127.0.0.1:0 127.0.0.1; do
	make_conf "$T/bad.ini" 3 node.2.metrics_listen="$addr"
	"$RINGD" -c "$T/bad.ini" --check >/dev/null 2>"$T/bad.err"
	rc=$?
	((rc == 78)) || fail "metrics_listen = $addr: --check exited $rc, want 78"
	grep -q "^$T/bad.ini:[0-9]*: metrics_listen" "$T/bad.err" ||
		fail "metrics_listen = $addr: no FILE:LINE message: $(cat "$T/bad.err")"
done
say "non-loopback or malformed metrics_listen refused with exit 78 and FILE:LINE"
pass
