#!/bin/bash
# ringctl follow and ringctl timeline on a real ring: 3 members with JSON
# logs (-v), a few grants, member 2 killed -9 and restarted, everything
# stopped. Then follow --once shows a column per member and the events;
# timeline writes well-formed SVG (xmllint) with one lane per member, a
# critical region per grant, one crash, a regeneration; and headless
# Chromium renders it into a picture that is not blank.
source "$(dirname "$0")/lib.sh"
need_tools xmllint

RINGD_ARGS=(-v)
make_conf "$CONF" 3 loss_timeout_ms=400
start_ring 3
wait_until 10 any_log_has token_regen || fail "no token minted"

for id in 1 2 3 1; do
	"$RINGCTL" -c "$CONF" -n $id run -t 5000 -- true || fail "run at member $id: exit $?"
done
kill_member 2
say "member 2 killed with -9"
# The ring goes on without it (skip, or a regeneration if it held the token).
for id in 3 1; do
	"$RINGCTL" -c "$CONF" -n $id run -t 5000 -- true || fail "run at member $id after the kill: exit $?"
done
start_member 2
wait_until 10 alive_has 1 2 || fail "member 2 did not rejoin"
"$RINGCTL" -c "$CONF" -n 2 run -t 5000 -- true || fail "run at member 2 after its restart: exit $?"
for id in 1 2 3; do stop_member $id || fail "member $id did not stop"; done
LOGS=("$T"/n1.log "$T"/n2.log "$T"/n3.log)
# A half-written last line and a garbage line: both must be passed over.
printf 'not json at all\n{"ts":"2026-01-01T00:00:0' >>"$T/n3.log"

grants=$(cat "${LOGS[@]}" | grep -c '"event":"cs_enter"')
regens=$(cat "${LOGS[@]}" | grep -c '"event":"token_regen"')
say "logs: $grants grants, $regens regenerations"

# ---- follow ----
"$RINGCTL" follow --once --hops 5 "${LOGS[@]}" >"$T/follow.out" 2>"$T/follow.err" ||
	fail "follow --once exited $?: $(cat "$T/follow.err")"
head -n 1 "$T/follow.out" | grep -Eq '^ +time +1 2 3 +event$' ||
	fail "follow's header has no column per member: $(head -n 1 "$T/follow.out")"
n=$(grep -Ec '^ +[0-9.]+s +(1|\.) (2|\.) (3|\.) +cs_enter +fence=[0-9]+:[0-9]+$' "$T/follow.out")
((n == grants)) || fail "follow shows $n cs_enter lines in lanes, the logs have $grants"
grep -Eq '^ +[0-9.]+s +\. 2 \. +node_start' "$T/follow.out" || fail "follow shows no node_start in member 2's column"
grep -q 'token_pass .*(1 hop in 5)' "$T/follow.out" || fail "follow shows no sampled token hop"
grep -q $'\033' "$T/follow.out" && fail "follow wrote colours into a file"
grep -q 'skipped 2 line' "$T/follow.err" || fail "follow did not count the garbage and truncated lines: $(cat "$T/follow.err")"
say "follow --once: $(wc -l <"$T/follow.out") lines, $n grants in their lanes"

# ---- timeline ----
SVG=$T/ring.svg
"$RINGCTL" timeline "${LOGS[@]}" -o "$SVG" >"$T/timeline.out" 2>&1 || fail "timeline exited $?: $(cat "$T/timeline.out")"
xmllint --noout "$SVG" 2>"$T/xmllint.err" || fail "the SVG is not well-formed XML: $(head -3 "$T/xmllint.err")"
count() { grep -o "class=\"$1\"" "$SVG" | wc -l; }
(($(count lane) == 3)) || fail "want 3 lanes, the SVG has $(count lane)"
(($(count cs) == grants)) || fail "want $grants critical regions (class cs), the SVG has $(count cs)"
(($(count crash) == 1)) || fail "want 1 crash mark, the SVG has $(count crash)"
(($(count regen) == regens)) || fail "want $regens regen marks, the SVG has $(count regen)"
(($(count hold) >= grants)) || fail "want at least $grants holding spans, the SVG has $(count hold)"
(($(count join) >= 4)) || fail "want 4 starts (3 + the restart), the SVG has $(count join) join marks"
grep -q '<title>member 1: a client in the critical region, fence [0-9]*:[0-9]*' "$SVG" ||
	fail "no critical region tooltip with its fence"
grep -Eq 'https?://[^"]*"' <(grep -v 'xmlns="http://www.w3.org/2000/svg"' "$SVG") &&
	fail "the SVG refers to an external resource"
say "timeline: $(cat "$T/timeline.out")"

# A window: --from/--to in seconds after the first event draws fewer grants.
"$RINGCTL" timeline "${LOGS[@]}" -o "$T/zoom.svg" --from 0 --to 0.001 >/dev/null 2>&1 || fail "timeline --from/--to exited $?"
xmllint --noout "$T/zoom.svg" || fail "the zoomed SVG is not well-formed"
(($(grep -o 'class="cs"' "$T/zoom.svg" | wc -l) < grants)) || fail "--to 0.001 still draws every grant"

# ---- rendering in headless Chromium ----
CHROME=$(command -v chromium || command -v chromium-browser) || skip "chromium is not installed (make deps)"
command -v convert >/dev/null || skip "ImageMagick's convert is not installed (make deps)"
PNG=$T/ring.png
mkdir -p "$T/chrome"
spawn timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--user-data-dir="$T/chrome" --window-size=1200,400 --screenshot="$PNG" "file://$SVG"
chrome_pid=$BG_PID
t0=$(now_ms)
wait_bg "$chrome_pid" 70
rc=$BG_RC
took=$(($(now_ms) - t0))
if [[ ! -s $PNG ]]; then
	# Only a browser that cannot start at all is a reason to skip.
	"$CHROME" --version >/dev/null 2>&1 || skip "chromium cannot run here: $("$CHROME" --version 2>&1 | head -1)"
	fail "chromium (exit $rc) wrote no screenshot in $took ms: $(tail -n 3 "$T/bg.log" 2>/dev/null)"
fi
sd=$(convert "$PNG" -format '%[fx:standard_deviation]' info:) || fail "convert could not read the screenshot"
awk -v s="$sd" 'BEGIN { exit !(s > 0.05) }' || fail "the screenshot looks blank (standard deviation $sd)"
say "chromium rendered it in $took ms; screenshot standard deviation $sd"
pass "follow shows $n grants in 3 columns; the SVG ($(stat -c %s "$SVG") bytes) has 3 lanes, $grants regions, 1 crash, and renders"
