#!/bin/bash
# Another local user against root's members and root's ringctl (issue 26;
# SPEC.md "Hostile input": ringd refuses a state_dir, socket or epoch file
# it does not own or that others may write, and never follows a link it did
# not expect; ringctl refuses a control socket not owned by the member's
# user). The attacker is `nobody` (setpriv, /usr/bin/python3), working in $T/pub, a folder
# everyone may write as /tmp:
#  a. it makes the ring's state_dir first: ringd refuses to start (78) and
#     says whose it is; --check says the same;
#  b. it plants links: a state_dir that is a link is refused; a link at the
#     epoch's temp name (in a folder root then owns) is replaced, its
#     target untouched; a regular file at the socket's name stops the start;
#  c. it listens where root's ringctl looks, in a state_dir it made, and
#     answers GRANTED with fence 2^64-1: ringctl refuses to talk to it
#     (69), and fenced-append never sees that fence;
#  d. a loopback ring without secret_file is keyed by the ring's own key:
#     the attacker cannot read it, and its unauthenticated datagrams are
#     refused (auth_fail) and answered by nobody.
source "$(dirname "$0")/lib.sh"

need_tools setpriv
PY=/usr/bin/python3 # the system one: nobody may run it, not a shim in root's home
[[ -x $PY ]] || skip "no /usr/bin/python3 for the attacker's listener"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
chmod 711 "$T" # the attacker may pass through, not list or write
PUB=$T/pub
mkdir -m 1777 "$PUB"
chmod 1777 "$PUB"
CONF_DEFAULT[secret_file]='' # (d) is about a ring without one

# run_ringd ID CONF: ringd in the foreground, bounded; its exit status in RC,
# stderr in $T/start.err.
run_ringd() {
	timeout 20 "$RINGD" -c "$2" -n "$1" >/dev/null 2>"$T/start.err"
	RC=$?
}

# ---- a. the attacker makes the state_dir first ----
make_conf "$CONF" 3 state_dir="$PUB/ring-demo"
as_nobody mkdir -m 700 "$PUB/ring-demo" || fail "nobody cannot make a folder in $PUB"
run_ringd 1 "$CONF"
((RC == 78)) || fail "(a) ringd in a state_dir nobody made exited $RC, want 78: $(cat "$T/start.err")"
grep -q "state_dir $PUB/ring-demo: owned by uid $(id -u nobody), not 0 (ringd's user); refusing (another local user could plant files in it)" "$T/start.err" ||
	fail "(a) the refusal does not say whose the state_dir is: $(cat "$T/start.err")"
[[ -z $(ls -A "$PUB/ring-demo") ]] || fail "(a) ringd wrote into the attacker's state_dir: $(ls -A "$PUB/ring-demo")"
timeout 20 "$RINGD" -c "$CONF" --check >/dev/null 2>"$T/check.err"
rc=$?
((rc == 78)) && grep -q "owned by uid $(id -u nobody)" "$T/check.err" ||
	fail "(a) --check of that state_dir exited $rc: $(cat "$T/check.err")"
# One the attacker may write, though root's: refused as well.
mkdir -m 777 "$T/open-state" && chmod 777 "$T/open-state"
make_conf "$T/open.ini" 3 state_dir="$T/open-state"
run_ringd 1 "$T/open.ini"
((RC == 78)) && grep -q "state_dir $T/open-state: mode 0777 lets others write it; refusing" "$T/start.err" ||
	fail "(a) a state_dir others may write: exit $RC: $(cat "$T/start.err")"
say "(a) a state_dir nobody made, or one others may write: refused (78), reason named; --check too"

# ---- b. planted links and files ----
echo "root's precious file" >"$T/victim"
cp "$T/victim" "$T/victim.orig"
as_nobody ln -s "$T/victim" "$PUB/link-state"
make_conf "$T/link.ini" 3 state_dir="$PUB/link-state"
run_ringd 1 "$T/link.ini"
((RC == 78)) && grep -q "state_dir $PUB/link-state: a symbolic link; refusing to follow it" "$T/start.err" ||
	fail "(b) a state_dir that is a link: exit $RC: $(cat "$T/start.err")"
# A folder root owns, with a link planted while it was open (an old
# state_dir, a member restored from a copy): at the epoch's temp name, at
# the epoch's own name, and a regular file at the socket's name.
mkdir -m 700 "$T/st-b"
ln -s "$T/victim" "$T/st-b/node-1.epoch.tmp"
make_conf "$T/b.ini" 3 state_dir="$T/st-b"
start_member 1 "$T/b.ini"
start_member 2 "$T/b.ini"
start_member 3 "$T/b.ini"
epoch_saved() { [[ -f $T/st-b/node-1.epoch && ! -L $T/st-b/node-1.epoch ]]; }
wait_until 10 epoch_saved || fail "(b) member 1 saved no epoch"
cmp -s "$T/victim" "$T/victim.orig" || fail "(b) ringd wrote through the link at node-1.epoch.tmp: $(cat "$T/victim")"
[[ ! -e $T/st-b/node-1.epoch.tmp ]] || fail "(b) the temp name is still taken"
for i in 1 2 3; do stop_member $i || fail "(b) member $i did not stop"; done
ln -sf "$T/victim" "$T/st-b/node-2.epoch"
run_ringd 2 "$T/b.ini"
((RC == 78)) && grep -q "node-2.epoch: a symbolic link; refusing to follow it" "$T/start.err" ||
	fail "(b) an epoch file that is a link: exit $RC: $(cat "$T/start.err")"
rm -f "$T/st-b/node-2.epoch"
echo "not a socket" >"$T/st-b/node-3.sock"
run_ringd 3 "$T/b.ini"
((RC == 78)) && grep -q "control socket $T/st-b/node-3.sock: a regular file, not a socket; refusing to remove it" "$T/start.err" ||
	fail "(b) a regular file at the socket's name: exit $RC: $(cat "$T/start.err")"
[[ $(cat "$T/st-b/node-3.sock") == "not a socket" ]] || fail "(b) the file at the socket's name was touched"
cmp -s "$T/victim" "$T/victim.orig" || fail "(b) the victim file changed"
say "(b) links at state_dir, the epoch and its temp name: refused or replaced, never followed; a file at the socket's name: refused, left alone"

# ---- c. a fake control socket where root's ringctl looks ----
# The attacker makes the state_dir in the open folder and listens in it:
# whoever connects is GRANTED the highest fence there is.
as_nobody mkdir -m 700 "$PUB/evil"
cat >"$PUB/fake.py" <<'EOF'
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
s.listen(4)
open(sys.argv[2], "w").write("up\n")
s.settimeout(60)
while True:
    c, _ = s.accept()
    c.settimeout(5)
    try:
        while True:
            line = c.recv(4096)
            if not line:
                break
            if line.startswith(b"ACQUIRE"):
                c.sendall(b"GRANTED 18446744073709551615 4294967295\n")
            elif line.startswith(b"STATUS"):
                c.sendall(b'{"node":1,"state":"holding"}\n')
            else:
                c.sendall(b"OK\n")
    except OSError:
        pass
    c.close()
EOF
chmod 644 "$PUB/fake.py"
SPAWN_OUT=$T/fake.out spawn as_nobody "$PY" "$PUB/fake.py" "$PUB/evil/node-1.sock" "$PUB/fake.up"
wait_until 10 test -s "$PUB/fake.up" || fail "(c) the attacker's listener did not start: $(cat "$T/fake.out")"
make_conf "$T/evil.ini" 3 state_dir="$PUB/evil"
J=$T/journal
"$RINGCTL" fenced-append "$J" "first" --fence 5 || fail "(c) fenced-append with fence 5 failed"
timeout 20 "$RINGCTL" -c "$T/evil.ini" -n 1 run -t 2000 -- "$RINGCTL" fenced-append "$J" "attacker's grant" \
	>"$T/c.out" 2>"$T/c.err"
rc=$?
((rc == 69)) || fail "(c) ringctl run against the attacker's socket exited $rc, want 69: $(cat "$T/c.err")"
grep -q "member 1: state_dir $PUB/evil: owned by uid $(id -u nobody) and in $PUB, which others may write, so anyone could have made it; refusing" "$T/c.err" ||
	fail "(c) ringctl does not say why it refused: $(cat "$T/c.err")"
timeout 20 "$RINGCTL" -c "$T/evil.ini" -n 1 status >/dev/null 2>"$T/c2.err"
rc=$?
((rc == 69)) || fail "(c) ringctl status against the attacker's socket exited $rc: $(cat "$T/c2.err")"
! grep -q "attacker" "$J" || fail "(c) the attacker's grant reached the journal: $(cat "$J")"
grep -q 18446744073709551615 "$J.fence" 2>/dev/null && fail "(c) the journal accepted fence 2^64-1"
"$RINGCTL" fenced-append "$J" "a real writer later" --fence 6 || fail "(c) the journal refuses fence 6 after the attack"
say "(c) the attacker's socket in its own state_dir: run and status refuse it (69), the journal never sees 2^64-1"

# ---- d. a loopback ring with no secret_file is keyed by its own key ----
rm -f "$T"/n*.log # (b)'s members' logs
make_conf "$CONF" 3 state_dir="$T/st-d"
for i in 1 2 3; do start_member $i; done
wait_until 10 any_log_has token_regen || fail "(d) no token minted"
[[ $(stat -c '%a %U' "$T/st-d/ring.key") == "600 root" ]] || fail "(d) the ring's own key: $(stat -c '%a %U' "$T/st-d/ring.key")"
[[ $(all_logs auth_key '.source == "auto-made"' | wc -l) == 1 ]] ||
	fail "(d) not exactly one member made the key: $(all_logs auth_key)"
! any_log_has auth_off || fail "(d) a member logged auth_off"
# The attacker reads the same file, with the same ports: it cannot read the
# key, and with authentication = off its requests go unsealed.
sed 's/^\[ring\]$/[ring]\nauthentication = off/' "$CONF" >"$PUB/open.ini"
chmod 644 "$PUB/open.ini"
cp "$CONF" "$PUB/same.ini" && chmod 644 "$PUB/same.ini"
as_nobody "$RINGCTL" -c "$PUB/same.ini" ring >"$T/d1.out" 2>&1
rc=$?
((rc != 0)) && grep -q "ring.key" "$T/d1.out" || fail "(d) nobody's ringctl ring with the ring's file: exit $rc: $(cat "$T/d1.out")"
before=$(status 1 | jq .auth_failures)
as_nobody timeout 20 "$RINGCTL" -c "$PUB/open.ini" ring >"$T/d2.out" 2>&1
rc=$?
((rc == 69)) || fail "(d) an unauthenticated ringctl ring got answers (exit $rc): $(cat "$T/d2.out")"
refused() { (($(status 1 | jq .auth_failures) > before)) && log_has 1 auth_fail; }
wait_until 5 refused || fail "(d) member 1 did not count the stranger's datagrams as auth_fail"
"$RINGCTL" -c "$CONF" ring >"$T/d3.out" || fail "(d) root's ringctl ring failed: $(cat "$T/d3.out")"
head -n 1 "$T/d3.out" | grep -qF "3 of 3 members answer, datagrams authenticated (the ring's own key $T/st-d/ring.key)" ||
	fail "(d) ringctl ring does not read the ring's own key: $(head -n 1 "$T/d3.out")"
say "(d) no secret_file on loopback: keyed by $T/st-d/ring.key (0600); nobody cannot read it, its datagrams: auth_fail ($before -> $(status 1 | jq .auth_failures))"
pass "another local user cannot plant a state_dir, a link or a socket, nor join a loopback ring"
