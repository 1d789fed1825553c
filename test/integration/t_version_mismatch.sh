#!/bin/bash
# A mixed-version ring (docs/operations.md "Rolling restart / upgrade"): a
# peer at member 4's address speaks another wire version. Members 1 to 3
# (a quorum of 4) refuse every one of its datagrams: they log
# version_mismatch (from, theirs, ours), rate limited, count
# version_mismatches (status --json and the metrics), never count member 4
# alive, and go on granting.
source "$(dirname "$0")/lib.sh"
need_tools python3

# Keyless: the fake peer sends no MAC, and a keyed ring (a loopback ring is
# keyed by its own key) would refuse its datagrams as auth_fail before their
# version is read. The version check itself comes after authentication.
make_conf "$CONF" 4 authentication=off
start_ring 3
wait_until 10 any_log_has token_regen || fail "no token minted by members 1 to 3"
"$RINGCTL" -c "$CONF" -n 1 run -t 5000 -- true || fail "no grant at member 1 before the test"
ours=$(log_events 1 node_start | head -1 | jq -r .wire)
[[ $ours =~ ^[0-9]+$ ]] || fail "node_start does not say which wire version member 1 speaks"
theirs=$((ours + 1)) # "the next version"
v0=$(field 1 .version_mismatches)
[[ $v0 =~ ^[0-9]+$ ]] || fail "status --json has no version_mismatches counter: $(status 1)"

# The fake peer: member 4's address, 60 datagrams over ~1.5 s to each of 1
# and 2, with our magic and header layout but version $theirs, a token's
# length; then one STATUS_REQ of that version from another port (a
# stranger, as an old or new ringctl would be).
P4=$((PORT_BASE + 3)) P1=$PORT_BASE P2=$((PORT_BASE + 1))
python3 - "$P4" "$P1" "$P2" "$theirs" >"$T/peer.out" 2>&1 <<'EOF' || fail "the fake peer failed: $(cat "$T/peer.out")"
import socket, struct, sys, time
p4, p1, p2, v = (int(a) for a in sys.argv[1:5])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", p4))
for i in range(60):
    for to, port in ((1, p1), (2, p2)):
        hdr = b"RG" + bytes([v, 1]) + struct.pack(">HHQ", 4, to, 0x1234)
        s.sendto(hdr + bytes(52), ("127.0.0.1", port))
    time.sleep(0.025)
t = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
t.bind(("127.0.0.1", 0))
t.sendto(b"RG" + bytes([v, 8]) + struct.pack(">HHQ", 0, 0, 0) + bytes(8), ("127.0.0.1", p1))
print("sent")
EOF
grew() { echo $(($(field 1 .version_mismatches) - v0)); }
counted() { (($(grew) >= 61)); }
wait_until 10 counted || fail "member 1 counted $(grew) version mismatches, want 61"
c2=$(field 2 .version_mismatches)
((c2 >= 60)) || fail "member 2 counted $c2 version mismatches, want 60"
say "counted: member 1 +$(grew), member 2 $c2"

# The line: who, which version, ours; rate limited (60 datagrams in ~1.5 s
# make at most a few lines, the rest counted in version_mismatch_unlogged).
wait_until 5 log_has 1 version_mismatch ".from == 4 and .theirs == $theirs" ||
	fail "member 1 logged no version_mismatch from=4 theirs=$theirs"
line=$(log_events 1 version_mismatch '.from == 4' | head -1)
(($(jq -r .ours <<<"$line") == ours)) || fail "version_mismatch says ours=$(jq -r .ours <<<"$line"), node_start said wire=$ours: $line"
lines=$(log_count 1 version_mismatch)
((lines <= 4)) || fail "member 1 logged $lines version_mismatch lines for 61 datagrams in ~1.5 s: not rate limited"
say "member 1: $line ($lines lines)"
log_has 1 bad_packet '.from == 4' && fail "member 1 logged a version mismatch as bad_packet: $(log_events 1 bad_packet | head -1)"

# Never half-joined: 4 is in no alive list; the metrics show the count.
for id in 1 2 3; do alive_has $id 4 && fail "member $id counts member 4 alive: $(status $id)"; done
m=$("$RINGCTL" -c "$CONF" -n 1 metrics) || fail "ringctl metrics failed"
mv=$(sed -n 's/^ring_version_mismatches_total \([0-9]*\)$/\1/p' <<<"$m")
((${mv:-0} >= v0 + 61)) || fail "ring_version_mismatches_total is '$mv' in the metrics, want >= $((v0 + 61))"

# The ring goes on granting at every member.
for id in 1 2 3; do
	for i in 1 2; do
		"$RINGCTL" -c "$CONF" -n $id run -t 5000 -- true || fail "run at member $id after the mismatches: exit $?"
	done
done
pass "61 datagrams of version $theirs refused by members of version $ours: counted, logged $lines time(s), member 4 never alive, grants go on"
