#!/bin/bash
# control_group (docs/operations.md, "Let user X take the lock"): ringd, run
# as root, gives its control sockets (0660) and state_dir (g+x) to a group;
# a user in that group takes the lock with `ringctl run` and with the C and
# Python clients of docs/examples (acquire, fence, renew, release); a user
# outside it is refused with exit 1 and a message naming the group and the
# command that lets them in, never "unreachable" (69). Without control_group
# the sockets are 0600 again and the message says whose they are. The users
# and the group are made here and removed on every exit.
source "$(dirname "$0")/lib.sh"
[[ $(id -u) == 0 ]] || skip "needs root (useradd, runuser)"
need_tools useradd userdel groupadd groupdel runuser python3 stat
CLIENT_C=${CLIENT_C:-$ROOT/build/examples/client}
[[ -x $CLIENT_C ]] || fail "build the C client first: make build/examples/client"

G=ringcg$$ IN=ringcgin$$ OUT=ringcgout$$
drop_users() {
	userdel "$IN" 2>/dev/null
	userdel "$OUT" 2>/dev/null
	groupdel "$G" 2>/dev/null
}
CLEANUP_HOOKS+=(drop_users)
groupadd "$G" || fail "groupadd $G"
useradd -M -N -d /nonexistent -s /bin/sh -G "$G" "$IN" || fail "useradd $IN"
useradd -M -N -d /nonexistent -s /bin/sh "$OUT" || fail "useradd $OUT"

# What the users run is copied beside the ring's file, in a folder they
# may enter (the tree may live where they may not: /root). state_dir is
# made by ringd inside it; $T itself is closed to writers, not to readers.
chmod 0755 "$T"
mkdir -m 0755 "$T/bin"
cp "$RINGCTL" "$CLIENT_C" "$ROOT/docs/examples/client.py" "$T/bin/"
as() { # USER CMD...: CMD as USER, ringctl on its PATH, bounded
	local u=$1
	shift
	timeout 30 runuser -u "$u" -- env PATH="$T/bin:/usr/bin:/bin" "$@"
}

make_conf "$CONF" 2 control_group="$G"
chmod 0644 "$CONF"
"$RINGD" -c "$CONF" --check >"$T/check.out" 2>&1 || fail "ringd --check: $(cat "$T/check.out")"
grep -q "control sockets: mode 0660, group $G (gid $(getent group "$G" | cut -d: -f3))" "$T/check.out" ||
	fail "ringd --check does not say the sockets are the group's: $(grep 'control sockets' "$T/check.out")"
start_ring 2
S1=$T/state/node-1.sock
for id in 1 2; do
	s=$T/state/node-$id.sock
	[[ $(stat -c '%a %U %G' "$s") == "660 root $G" ]] || fail "member $id's socket is $(stat -c '%a %U %G' "$s"), want 660 root $G"
done
[[ $(stat -c '%a %G' "$T/state") == "710 $G" ]] || fail "state_dir is $(stat -c '%a %G' "$T/state"), want 710 $G (search, no list, no write)"
[[ $(stat -c %a "$T/state/ring.key") == 600 ]] || fail "the ring's key is $(stat -c %a "$T/state/ring.key"), want 600"
say "sockets 0660 root:$G, state_dir 0710, the ring's key still 0600"
wait_until 5 any_log_has token_regen || fail "no token minted"

# ---- a user in the group: ringctl ----
[[ $(as "$IN" ringctl -c "$CONF" -n 1 socket) == "$S1" ]] || fail "ringctl socket as $IN: not $S1"
out=$(as "$IN" ringctl -c "$CONF" -n 1 run -t 10000 -- sh -c 'echo "fence=$RING_FENCE"' 2>&1)
rc=$?
((rc == 0)) || fail "ringctl run as $IN (in $G) exited $rc: $out"
[[ $out =~ ^fence=([1-9][0-9]*)$ ]] || fail "ringctl run as $IN printed '$out', want fence=N"
fence=${BASH_REMATCH[1]}
wait_until 3 log_has 1 cs_exit ".fence == $fence" || fail "member 1 logged no cs_exit for $IN's fence $fence"
as "$IN" ringctl -c "$CONF" -n 2 status >/dev/null 2>&1 || fail "ringctl status as $IN failed"
say "$IN (in $G) took the lock: fence $fence"

# ---- a user in the group: the examples, acquire / fence / renew / release ----
# check_example OUTPUT MEMBER: granted, renewed with the same fence and a
# lease left, released; the member saw the release of that fence.
check_example() {
	local f
	[[ $1 =~ granted\ fence=([1-9][0-9]*)\ epoch=[1-9][0-9]* ]] || fail "no 'granted fence=N epoch=E' in: $1"
	f=${BASH_REMATCH[1]}
	[[ $1 =~ renewed\ fence=$f\ ms=([0-9]+) ]] && ((BASH_REMATCH[1] > 0 && BASH_REMATCH[1] <= 2000)) ||
		fail "no 'renewed fence=$f ms=1..2000' in: $1"
	[[ $1 == *"released fence=$f"* ]] || fail "no 'released fence=$f' in: $1"
	wait_until 3 log_has "$2" cs_exit ".fence == $f" || fail "member $2 logged no cs_exit for fence $f"
	EX_FENCE=$f
}
out=$(as "$IN" client "$S1" 10000 2>&1) || fail "the C client as $IN exited $?: $out"
check_example "$out" 1
c_fence=$EX_FENCE
out=$(as "$IN" python3 "$T/bin/client.py" -c "$CONF" -n 2 10000 2>&1) || fail "client.py as $IN exited $?: $out"
check_example "$out" 2
((EX_FENCE > c_fence)) || fail "client.py's fence $EX_FENCE is not above the C client's $c_fence"
say "the C client (fence $c_fence) and client.py (fence $EX_FENCE) acquired, renewed, released"

# ---- a user outside the group: a clear refusal, exit 1 ----
out=$(as "$OUT" ringctl -c "$CONF" -n 1 run -t 5000 -- true 2>&1)
rc=$?
((rc == 1)) || fail "ringctl run as $OUT (not in $G) exited $rc, want 1: $out"
want="ringctl: permission denied on $S1: you are not in group '$G' (control_group); ask an administrator to run: usermod -aG $G $OUT"
[[ $out == "$want" ]] || fail "ringctl as $OUT said '$out', want '$want'"
out=$(as "$OUT" ringctl -c "$CONF" -n 1 status 2>&1)
(($? == 1)) && [[ $out == *"not in group '$G'"* ]] || fail "ringctl status as $OUT: $out"
as "$OUT" client "$S1" 2000 >/dev/null 2>&1
rc=$?
((rc == 1)) || fail "the C client as $OUT exited $rc, want 1 (permission denied)"
as "$OUT" python3 "$T/bin/client.py" "$S1" 2000 >/dev/null 2>&1
rc=$?
((rc == 1)) || fail "client.py as $OUT exited $rc, want 1 (permission denied)"
say "$OUT (not in $G): exit 1, '$want'"

# ---- control_group unset again: 0600, ringd's alone, and the message says so ----
stop_member 1 && stop_member 2 || fail "the members did not stop"
make_conf "$CONF" 2 control_group=
start_ring 2
[[ $(stat -c %a "$S1") == 600 ]] || fail "without control_group the socket is $(stat -c %a "$S1"), want 600"
for u in "$IN" "$OUT"; do
	out=$(as "$u" ringctl -c "$CONF" -n 1 run -t 5000 -- true 2>&1)
	rc=$?
	((rc == 1)) || fail "ringctl run as $u without control_group exited $rc, want 1: $out"
	[[ $out == *"permission denied on $S1: without control_group the control socket is only for ringd's user (root) and root"* &&
		$out == *"set control_group = GROUP in [ring] of $CONF"* ]] ||
		fail "ringctl as $u without control_group said: $out"
done
say "without control_group: 0600, both users told whose it is and how to share it"

# ---- a group this host does not know: FILE:LINE, exit 78 ----
make_conf "$T/bad.ini" 2 control_group="nosuch$$"
out=$("$RINGD" -c "$T/bad.ini" --check 2>&1)
rc=$?
line=$(grep -n '^control_group' "$T/bad.ini" | cut -d: -f1)
((rc == 78)) && [[ $out == "$T/bad.ini:$line: control_group \"nosuch$$\": no such group"* ]] ||
	fail "an unknown group: exit $rc, '$out'"
pass "in-group user granted (ringctl, C, Python), outsider refused with exit 1 naming $G, 0600 without control_group, unknown group exit 78"
