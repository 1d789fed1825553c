#!/bin/bash
# ringd under systemd, with this script playing systemd: a Unix datagram
# socket per member as NOTIFY_SOCKET (a python3 receiver logging what
# arrives), WATCHDOG_USEC set. READY=1 comes only once the member has
# joined the ring (not for member 1 alone, short of a quorum); WATCHDOG=1
# comes every half interval and stops while `inject pause` wedges the loop;
# WATCHDOG_PID of another process gets no pings; SIGHUP brackets the key
# reload with RELOADING=1 and READY=1; SIGTERM says STOPPING=1.
source "$(dirname "$0")/lib.sh"
need_tools /usr/bin/python3

N=3 WD_US=400000 PAUSE_MS=1500
"$RINGCTL" keygen "$T/ring.key" >/dev/null || fail "ringctl keygen failed"
make_conf "$CONF" $N quorum=majority secret_file="$T/ring.key"

# The receiver: what systemd's side of the protocol reads, one line per
# datagram, "WALL_MS assignment|assignment...". Ends by itself after 100 s.
cat >"$T/sd_recv.py" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(0.5)
out = open(sys.argv[2], "a")
end = time.monotonic() + 100
while time.monotonic() < end:
    try:
        d = s.recv(4096)
    except socket.timeout:
        continue
    out.write("%d %s\n" % (time.time() * 1000, d.decode(errors="replace").replace("\n", "|")))
    out.flush()
EOF
for id in 1 2; do
	spawn /usr/bin/python3 "$T/sd_recv.py" "$T/notify.$id.sock" "$T/sd.$id.txt"
	wait_until 5 test -S "$T/notify.$id.sock" || fail "the receiver for member $id did not bind"
done

# sd_lines ID PATTERN: member ID's datagrams that match PATTERN (grep -E).
sd_lines() { grep -E "$2" "$T/sd.$1.txt" 2>/dev/null; }
sd_has() { [[ -n $(sd_lines "$@" | head -n 1) ]]; }
sd_count() { sd_lines "$@" | wc -l; }

# Member 1 is watched: WATCHDOG_PID is its own pid (set by the shell that
# becomes it). Member 2's WATCHDOG_PID is another process: it must not ping.
RINGD_WRAP=(env NOTIFY_SOCKET="$T/notify.1.sock" WATCHDOG_USEC=$WD_US sh -c 'WATCHDOG_PID=$$ exec "$@"' sh)
start_member 1
RINGD_WRAP=()

# ---- 1. alone, short of a quorum: no READY ----
# A 3-member ring with empty disks needs 2 others up to mint a token
# (PROTOCOL.md 5.3); member 1 says so in STATUS= and is not ready.
wait_until 10 sd_has 1 'STATUS=no quorum' || fail "member 1 alone never said 'no quorum' in STATUS=: $(cat "$T/sd.1.txt")"
wait_until 5 log_has 1 no_quorum || fail "member 1 alone did not log no_quorum"
! sd_has 1 'READY=1' || fail "member 1 said READY=1 alone, before any ring existed"
say "member 1 alone: $(sd_lines 1 STATUS= | tail -n 1 | cut -d' ' -f2-), no READY"

# ---- 2. the others start: READY ----
t_others=$(now_ms)
RINGD_WRAP=(env NOTIFY_SOCKET="$T/notify.2.sock" WATCHDOG_USEC=$WD_US WATCHDOG_PID=$$)
start_member 2
RINGD_WRAP=()
start_member 3
for id in 1 2; do
	wait_until 10 sd_has $id 'READY=1' || fail "member $id never said READY=1 once the ring was up"
	log_has $id systemd_ready || fail "member $id did not log systemd_ready"
done
ready_ms=$(sd_lines 1 'READY=1' | head -n 1 | cut -d' ' -f1)
((ready_ms >= t_others)) || fail "member 1's READY=1 came before the others started"
(($(sd_count 1 'READY=1') == 1)) || fail "member 1 said READY=1 more than once: $(sd_lines 1 READY)"
sd_has 1 'READY=1\|STATUS=in the ring' || fail "READY=1 came without 'in the ring' in STATUS=: $(sd_lines 1 READY)"
say "READY=1 at member 1 $((ready_ms - t_others)) ms after the others started"

# ---- 3. the watchdog's rate: every WD_US / 2 ----
pings() { sd_lines 1 '^[0-9]+ WATCHDOG=1$' | cut -d' ' -f1; }
n0=$(pings | wc -l)
enough() { (($(pings | wc -l) >= n0 + 10)); }
wait_until 10 enough || fail "fewer than 10 WATCHDOG=1 in 10 s ($(pings | wc -l) in all)"
# The median gap of the last ten: a loaded machine delays some, not most.
median=$(pings | tail -n 11 | awk 'NR > 1 { print $1 - p } { p = $1 }' | sort -n | sed -n 5p)
say "WATCHDOG=1 every $median ms (median of 10), WATCHDOG_USEC=$WD_US"
((median >= WD_US / 1000 / 2 - 50 && median <= WD_US / 1000 / 2 + 60)) ||
	fail "WATCHDOG=1 came every $median ms, want about $((WD_US / 2000)) (half of WATCHDOG_USEC)"

# ---- 4. a wedged loop stops the pings ----
t_before=$(now_ms)
"$RINGCTL" -c "$CONF" -n 1 inject pause $PAUSE_MS >/dev/null || fail "inject pause exited $?"
t_after=$(now_ms)
resumed() { [[ -n $(pings | awk -v t=$((t_after + PAUSE_MS)) '$1 > t' | head -n 1) ]]; }
wait_until 10 resumed || fail "WATCHDOG=1 did not resume after the pause"
gap=$(pings | awk -v a=$((t_before - 1000)) -v b=$((t_after + PAUSE_MS + 1000)) \
	'$1 >= a && $1 <= b { if (p) { g = $1 - p; if (g > m) m = g } p = $1 } END { print m + 0 }')
say "longest gap between pings around a $PAUSE_MS ms pause: $gap ms"
((gap >= PAUSE_MS - 300)) || fail "pings went on while the loop was paused (longest gap $gap ms, pause $PAUSE_MS ms)"

# ---- 5. another process's watchdog is not ours ----
(($(sd_count 2 'WATCHDOG=1') == 0)) ||
	fail "member 2 pinged although WATCHDOG_PID named another process"

# ---- 6. SIGHUP: RELOADING=1, the keys, READY=1 ----
kill -HUP "${PIDS[1]}"
reloaded() { log_has 1 keys_reloaded && sd_has 1 'RELOADING=1'; }
wait_until 5 reloaded || fail "SIGHUP: no keys_reloaded with RELOADING=1"
sd_has 1 'RELOADING=1\|MONOTONIC_USEC=[0-9]+$' || fail "RELOADING=1 came without MONOTONIC_USEC: $(sd_lines 1 RELOADING)"
ready_after() { sd_lines 1 'RELOADING=1|READY=1' | tail -n 1 | grep -q ' READY=1'; }
wait_until 5 ready_after || fail "no READY=1 after RELOADING=1: $(sd_lines 1 'RELOADING|READY')"

# ---- 7. SIGTERM: STOPPING=1, then the graceful leave ----
stop_member 1 || fail "member 1 still running after SIGTERM"
((STOP_RC == 0)) || fail "member 1 exited $STOP_RC after SIGTERM, want 0"
sd_has 1 'STOPPING=1' || fail "no STOPPING=1 at SIGTERM"
(($(sd_lines 1 'READY=1' | awk -v s="$(sd_lines 1 STOPPING=1 | cut -d' ' -f1)" '$1 > s' | wc -l) == 0)) ||
	fail "READY=1 after STOPPING=1"
log_has 1 leave_done || fail "member 1 did not leave gracefully"

pass "READY only once joined, WATCHDOG=1 every ${median} ms and silent ${gap} ms in a ${PAUSE_MS} ms pause, RELOADING, STOPPING"
