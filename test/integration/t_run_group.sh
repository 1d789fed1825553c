#!/bin/bash
# A job must not outlive its grant (SPEC.md, `run`): CMD runs in its own
# process group, and when the grant ends first the whole group gets
# SIGTERM, then SIGKILL after --kill-after ms, and run exits 70. A
# grandchild dies with the group; processes CMD leaves behind are stopped
# before the release; SIGTERM to run stops the group too; `kill -9` of run
# takes every process of the job down at once; CMD is told its deadline
# (RING_DEADLINE_MS, Unix ms) and lease (RING_LEASE_MS).
source "$(dirname "$0")/lib.sh"
need_tools script

LEASE_MS=1000
KILL_MS=300
# How late past its due time a signal may land and a process die on a
# loaded 2-core machine (a stall the members saw is added where it applies).
BOUND_MS=400
# run renews while CMD runs: max_hold_ms ends every grant at one lease.
make_conf "$CONF" 2 lease_ms=$LEASE_MS max_hold_ms=$LEASE_MS
start_ring 2
wait_until 5 any_log_has token_regen || fail "no token minted"
ctl -n 1 run -t 5000 -- true || fail "a first run at member 1 exited $?"

# The job's process groups, ended by cleanup should a check fail midway
# (they are not in BG_PIDS: run put them in groups of their own).
JOB_GROUPS=()
end_jobs() { end_groups "${JOB_GROUPS[@]}"; }
CLEANUP_HOOKS+=(end_jobs)

# writer.sh FILE: a CMD that will not stop on SIGTERM. It writes its pid
# and fence beside FILE, then a time stamp (us) to FILE every 20 ms for at
# most 5 s; SIGTERM only adds the line "TERM <us>".
cat >"$T/writer.sh" <<'EOF'
f=$1
echo $$ >"$f.pid"
echo "$RING_FENCE" >"$f.fence"
trap 'echo "TERM ${EPOCHREALTIME/./}" >>"$f"' TERM
for ((i = 0; i < 250; i++)); do echo "${EPOCHREALTIME/./}" >>"$f"; sleep 0.02; done
EOF
last_write() { grep -E '^[0-9]+$' "$1" | tail -n 1; }
term_at() { sed -n 's/^TERM //p' "$1" | head -n 1; }
# job_gone PIDFILE: CMD, whose pid is in PIDFILE, is gone, and so is every
# process of the group it led.
job_gone() { pid_gone "$(cat "$1")" && groups_gone "$(cat "$1")"; }
# until_ms T: the seconds from now until T (ms), at least 0, for wait_until:
# how long to watch for a write that must never come.
until_ms() { local d=$(($1 - $(now_ms))); secs $((d > 0 ? d : 0)); }
job_of() { # TAG: the group of the job that wrote $T/TAG.pid, for cleanup
	wait_until 5 test -s "$T/$1.pid" || fail "$1: CMD did not start"
	JOB_GROUPS+=("$(cat "$T/$1.pid")")
}

# ---- 1. a CMD that ignores SIGTERM: SIGKILL after --kill-after ----
# Member 2 waits meanwhile: it is granted once member 1's lease ends, and
# nothing of the first job may write after the kill is due.
t0=$(now_ms)
SPAWN_OUT=$T/a.err spawn "$RINGCTL" -c "$CONF" -n 1 run --kill-after $KILL_MS -- bash "$T/writer.sh" "$T/a"
a_pid=$BG_PID
job_of a
SPAWN_OUT=$T/b.err spawn "$RINGCTL" -c "$CONF" -n 2 run -t 10000 -- \
	bash -c 'echo "${EPOCHREALTIME/./}" >"$0"' "$T/next.granted"
next_pid=$BG_PID
wait_bg "$a_pid" 6 || fail "run with a CMD ignoring SIGTERM still runs 6 s later: $(cat "$T/a.err")"
rc=$BG_RC
took=$(($(now_ms) - t0))
((rc == 70)) || fail "run whose lease ran out exited $rc, want 70: $(cat "$T/a.err")"
job_gone "$T/a.pid" || fail "a process of the first job outlived run: $(group_pids "$(cat "$T/a.pid")")"
fence=$(cat "$T/a.fence")
revoke_us=$(first_ts_us 1 lease_expired ".fence == $fence")
[[ -n $revoke_us ]] || fail "member 1 logged no lease_expired fence=$fence"
term_us=$(term_at "$T/a")
[[ -n $term_us ]] || fail "the job never got SIGTERM"
last_us=$(last_write "$T/a")
stall=$(stalled_ms $((t0 * 1000)))
to_term=$(((term_us - revoke_us) / 1000)) to_last=$(((last_us - revoke_us) / 1000))
((to_last <= KILL_MS + BOUND_MS + stall)) ||
	fail "the job wrote $to_last ms after its lease was revoked, want <= $KILL_MS + $BOUND_MS$(stall_note $stall)"
((last_us >= term_us)) || fail "the job did not outlive SIGTERM: SIGKILL came at once"
wait_bg "$next_pid" 5 || fail "member 2's client still runs"
((BG_RC == 0)) || fail "member 2's client exited $BG_RC: $(cat "$T/b.err")"
next_us=$(cat "$T/next.granted")
echo "| SIGTERM ignored: revoke->TERM $to_term ms, revoke->last write $to_last ms (kill-after $KILL_MS), run exited 70 after $took ms"
echo "| member 2 granted $(((next_us - revoke_us) / 1000)) ms after the revoke; the first job's last write $(((last_us - next_us) / 1000)) ms after that grant"

# ---- 2. --kill-after 0: SIGKILL at once, no SIGTERM ----
t0=$(now_ms)
SPAWN_OUT=$T/z.err spawn "$RINGCTL" -c "$CONF" -n 1 run -t 5000 --kill-after 0 -- bash "$T/writer.sh" "$T/z"
z_pid=$BG_PID
job_of z
wait_bg "$z_pid" 6 || fail "run --kill-after 0 still runs 6 s later"
rc=$BG_RC
((rc == 70)) || fail "run --kill-after 0 exited $rc, want 70: $(cat "$T/z.err")"
job_gone "$T/z.pid" || fail "a process of the --kill-after 0 job outlived run"
[[ -z $(term_at "$T/z") ]] || fail "--kill-after 0 sent SIGTERM first"
revoke_us=$(first_ts_us 1 lease_expired ".fence == $(cat "$T/z.fence")")
[[ -n $revoke_us ]] || fail "member 1 logged no lease_expired for the --kill-after 0 job"
to_last=$((($(last_write "$T/z") - revoke_us) / 1000))
stall=$(stalled_ms $((t0 * 1000)))
((to_last <= BOUND_MS + stall)) || fail "--kill-after 0: the job wrote $to_last ms after the revoke$(stall_note $stall)"
echo "| --kill-after 0: revoke->last write $to_last ms, no SIGTERM"

# ---- 3. a grandchild that ignores SIGTERM and outlives its parent ----
# CMD starts it and sleeps past the lease; the grandchild would write 2 s
# after the start, well after the lease (1 s) and the kill (+300 ms).
t0=$(now_ms)
"$RINGCTL" -c "$CONF" -n 1 run -t 5000 --kill-after $KILL_MS -- bash -c '
	echo $$ >"$0.pid"
	( trap "" TERM; sleep 2; echo late >>"$0" ) &
	echo $! >"$0.gpid"
	sleep 5' "$T/g" 2>"$T/g.err"
rc=$?
took=$(($(now_ms) - t0))
((rc == 70)) || fail "run with a grandchild past the lease exited $rc, want 70: $(cat "$T/g.err")"
JOB_GROUPS+=("$(cat "$T/g.pid")")
pid_gone "$(cat "$T/g.gpid")" || fail "the grandchild (pid $(cat "$T/g.gpid")) outlived run"
job_gone "$T/g.pid" || fail "a process of the grandchild's group outlived run"
! WAIT_QUIET=1 wait_until "$(until_ms $((t0 + 2000 + BOUND_MS)))" test -e "$T/g" ||
	fail "the grandchild wrote after run exited 70"
echo "| grandchild ignoring SIGTERM: killed with the group, run exited 70 after $took ms, no write"

# ---- 4. CMD exits at once, leaving a grandchild: stopped before the release ----
t0=$(now_ms)
"$RINGCTL" -c "$CONF" -n 1 run -t 5000 --kill-after $KILL_MS -- bash -c '
	echo $$ >"$0.pid"; echo "$RING_FENCE" >"$0.fence"
	( trap "" TERM; sleep 1.5; echo late >>"$0" ) &
	echo $! >"$0.gpid"
	exit 3' "$T/l" 2>"$T/l.err"
rc=$?
took=$(($(now_ms) - t0))
((rc == 3)) || fail "run of a CMD exiting 3 with a leftover grandchild exited $rc, want 3: $(cat "$T/l.err")"
JOB_GROUPS+=("$(cat "$T/l.pid")")
pid_gone "$(cat "$T/l.gpid")" || fail "CMD's leftover grandchild outlived run"
grep -q 'leaving processes' "$T/l.err" || fail "run said nothing of the leftover: $(cat "$T/l.err")"
fence=$(cat "$T/l.fence")
wait_until 2 log_has 1 cs_exit ".fence == $fence" || fail "member 1 logged no release of fence $fence"
! log_has 1 lease_expired ".fence == $fence" || fail "the leftover was stopped only when the lease ran out"
! WAIT_QUIET=1 wait_until "$(until_ms $((t0 + 1500 + BOUND_MS)))" test -e "$T/l" ||
	fail "CMD's leftover grandchild wrote after run released"
echo "| leftover grandchild: stopped (SIGTERM ignored, SIGKILL) and released, run exited 3 after $took ms"

# ---- 5. SIGTERM to run: passed on to the group, SIGKILL after the grace ----
t0=$(now_ms)
SPAWN_OUT=$T/s.err spawn "$RINGCTL" -c "$CONF" -n 1 run -t 5000 --kill-after $KILL_MS -- \
	bash "$T/writer.sh" "$T/s"
s_pid=$BG_PID
job_of s
wait_until 2 test -s "$T/s" || fail "the job of section 5 wrote nothing"
t_term=$(now_us)
kill -TERM "$s_pid"
wait_bg "$s_pid" 3 || fail "run still runs 3 s after SIGTERM"
took=$((($(now_us) - t_term) / 1000))
fence=$(cat "$T/s.fence")
if log_has 1 lease_expired ".fence == $fence and us < $t_term"; then
	say "the lease ran out before the SIGTERM (a stall): section 5 proves nothing this time"
else
	((BG_RC == 137)) || fail "run stopped by SIGTERM exited $BG_RC, want 137 (CMD killed): $(cat "$T/s.err")"
	[[ -n $(term_at "$T/s") ]] || fail "run did not pass SIGTERM on to its job"
	job_gone "$T/s.pid" || fail "a process of the job outlived run's SIGTERM"
	wait_until 2 log_has 1 cs_exit ".fence == $fence" || fail "run stopped by SIGTERM did not release"
	echo "| SIGTERM to run: TERM passed on, SIGKILL after $KILL_MS ms, run exited 137 after $took ms, released"
fi

# ---- 6. kill -9 of run: every process of the job dies at once ----
# CMD and a grandchild both write every 20 ms; the lease (1 s) is not over
# when run is killed, so only the guard can stop them.
SPAWN_OUT=$T/k.err spawn "$RINGCTL" -c "$CONF" -n 1 run -t 5000 --kill-after $KILL_MS -- bash -c '
	echo $$ >"$0.pid"; echo "$RING_FENCE" >"$0.fence"
	( trap "" TERM; for ((i = 0; i < 250; i++)); do echo "${EPOCHREALTIME/./}" >>"$0.g"; sleep 0.02; done ) &
	echo $! >"$0.gpid"
	for ((i = 0; i < 250; i++)); do echo "${EPOCHREALTIME/./}" >>"$0"; sleep 0.02; done' "$T/k"
k_pid=$BG_PID
job_of k
wait_until 2 test -s "$T/k.g" || fail "the grandchild of section 6 wrote nothing"
grep -q stopping "$T/k.err" && fail "setup: run stopped its job before the kill (a stall?): $(cat "$T/k.err")"
t_kill=$(now_us)
kill -KILL "$k_pid"
wait "$k_pid" 2>/dev/null
wait_until 2 job_gone "$T/k.pid" || fail "processes of the job outlived kill -9 of run: $(group_pids "$(cat "$T/k.pid")")"
gone_ms=$((($(now_us) - t_kill) / 1000))
pid_gone "$(cat "$T/k.gpid")" || fail "the grandchild outlived kill -9 of run"
wait_until 1 groups_gone "$k_pid" || fail "run's guard outlived it"
last=$(last_write "$T/k") last_g=$(last_write "$T/k.g")
((last_g > last)) && last=$last_g
after=$(((last - t_kill) / 1000))
stall=$(stalled_ms "$t_kill")
((gone_ms <= BOUND_MS + stall)) || fail "the job died $gone_ms ms after kill -9 of run$(stall_note $stall)"
((after <= BOUND_MS + stall)) || fail "the job wrote $after ms after kill -9 of run$(stall_note $stall)"
wait_until 2 log_has 1 cs_exit ".fence == $(cat "$T/k.fence")" || fail "member 1 did not release after run died"
grep -q 'killed process group' "$T/k.err" || fail "the guard said nothing: $(cat "$T/k.err")"
echo "| kill -9 of run: the job's group gone within $gone_ms ms, its last write $after ms after the kill"

# ---- 7. RING_DEADLINE_MS and RING_LEASE_MS ----
ctl -n 2 run -t 5000 -- bash -c 'echo "${EPOCHREALTIME/./} ${RING_DEADLINE_MS:-none} ${RING_LEASE_MS:-none}" >"$0"' "$T/d" ||
	fail "run of the environment check failed"
read -r now_us deadline lease <"$T/d"
[[ $deadline =~ ^[0-9]+$ ]] || fail "RING_DEADLINE_MS is '$deadline', want Unix milliseconds"
[[ $lease == "$LEASE_MS" ]] || fail "RING_LEASE_MS is '$lease', want $LEASE_MS"
now=$((now_us / 1000))
((deadline >= now && deadline <= now + LEASE_MS)) ||
	fail "RING_DEADLINE_MS $deadline is not within [$now, $now + $LEASE_MS] (CMD's clock)"
echo "| RING_DEADLINE_MS $((deadline - now)) ms ahead of CMD's start, RING_LEASE_MS $lease"

# ---- 8. on a terminal: the group is in the foreground ----
# Else an interactive CMD, in a group of its own, would be stopped by
# SIGTTIN as soon as it read the terminal. script(1) gives run a pty
# (-e: run's status); what we pipe into script is typed on it.
printf 'hello\n' | timeout 10 script -qefc "exec '$RINGCTL' -c '$CONF' -n 2 run -t 5000 -- \
	sh -c 'read -r x; echo \"got \$x\" >$T/tty.read'" /dev/null >"$T/tty.out" 2>&1
rc=$?
((rc == 0)) || fail "run of a CMD reading the terminal exited $rc: $(cat "$T/tty.out")"
[[ $(cat "$T/tty.read" 2>/dev/null) == "got hello" ]] || fail "CMD did not read its terminal: $(cat "$T/tty.out")"
# Ctrl-C on that terminal reaches the job (the foreground group).
{ wait_until 5 test -e "$T/tty.started"; printf '\003'; } |
	timeout 10 script -qefc "exec '$RINGCTL' -c '$CONF' -n 2 run -t 5000 -- \
	sh -c 'touch $T/tty.started; sleep 5'" /dev/null >"$T/tty2.out" 2>&1
rc=$?
((rc == 130)) || fail "run whose CMD got Ctrl-C exited $rc, want 130: $(cat "$T/tty2.out")"
echo "| on a pty: CMD read the terminal; Ctrl-C reached it (run exited 130)"

# ---- 9. a bad --kill-after ----
ctl -n 1 run --kill-after soon -- true 2>/dev/null
rc=$?
((rc == 2)) || fail "run --kill-after soon exited $rc, want 2"

pass "the whole group stops on revoke (SIGTERM, SIGKILL after $KILL_MS ms), with run's death, and knows its deadline"
