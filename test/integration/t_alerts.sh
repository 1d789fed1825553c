#!/bin/bash
# The alert rules shipped in conf/ring-alerts.yml: promtool (Debian's
# prometheus) accepts the file, and its unit tests (alerts_test.yml) show each
# alert firing on the series a real fault leaves (a member down, the token
# silent, an election that never ends, a minority without quorum,
# regenerations, a pause, refused datagrams, slow grants) and staying quiet on
# a healthy ring and on blips shorter than its `for`. That every metric the
# rules name exists in a real member's exposition is t_metrics.sh's check.
source "$(dirname "$0")/../lib.sh"
need_tools promtool

RULES=$ROOT/conf/ring-alerts.yml
out=$(promtool check rules "$RULES" 2>&1) || fail "promtool check rules: $out"
say "$(grep -o '[0-9]* rules found' <<<"$out")"
out=$(promtool test rules "$(dirname "$0")/alerts_test.yml" 2>&1) || fail "promtool test rules: $out"
say "promtool test rules: every alert fires on its fault and not on a healthy ring"
pass
