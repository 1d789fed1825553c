#!/usr/bin/env python3
"""refusal_probe: a stranger's requests to one member, and what comes back.

Sends COUNT requests (STATUS_REQ or HOLD_REQ) to 127.0.0.1:PORT at RATE a
second, round-robin from SOURCES sockets of its own (a spoofed flood's many
source addresses, or one victim's), each with the fingerprint FP and, on a
keyed ring, a trailer: garbage (a stranger without the key), or sealed with
KEYFILE's first key (as ringctl seals, its timestamp SKEW_MS ahead: a
ringctl on a host whose clock runs fast). Collects every answer until
WAIT_MS after the last send, and prints one JSON object: what was sent and
received (datagrams, bytes), the most answers in any one second, which
sources were answered, the answers' flags and fingerprints. Driven by
t_refusal.sh; the wire is docs/PROTOCOL.md §2, auth.c's trailer.
"""
import argparse
import hashlib
import hmac
import json
import os
import select
import socket
import struct
import time

TYPES = {"status": 8, "hold": 16}
VERSION = 6  # ring/core/wire.h RING_WIRE_VERSION
TRAILER = 8 + 32


def key_of(path):
    """The first key of a key file: BLAKE2b-256 of its first non-empty line."""
    with open(path, "rb") as f:
        for line in f.read().split(b"\n"):
            line = line.split(b"\r")[0]
            if line:
                return hashlib.blake2b(line, digest_size=32).digest()
    raise SystemExit(f"{path}: no key")


def request(kind, fp, nonce, trailer, key, skew_us, last):
    body = struct.pack(">2sBBHHQQ", b"RG", VERSION, TYPES[kind], 0, 0, fp, nonce)
    if trailer == "none":
        return body, last
    if trailer == "garbage":
        return body + os.urandom(TRAILER), last
    ts = max(time.time_ns() // 1000 + skew_us, last + 1)
    msg = body + struct.pack(">Q", ts)
    mac = hmac.new(key, msg, hashlib.sha512).digest()[:32]  # crypto_auth
    return msg + mac, ts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--fp", required=True, help="fingerprint, 16 hex digits")
    ap.add_argument("--kind", choices=TYPES, default="status")
    ap.add_argument("--trailer", default="none", help="none, garbage or a key file")
    ap.add_argument("--skew-ms", type=int, default=0)
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--rate", type=float, default=1000)
    ap.add_argument("--sources", type=int, default=1)
    ap.add_argument("--wait-ms", type=int, default=300)
    a = ap.parse_args()
    fp = int(a.fp, 16)
    trailer = a.trailer if a.trailer in ("none", "garbage") else "sealed"
    key = key_of(a.trailer) if trailer == "sealed" else None
    socks = []
    for _ in range(a.sources):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        s.setblocking(False)
        socks.append(s)
    out = {"sent": 0, "sent_bytes": 0, "answers": 0, "answer_bytes": 0, "flags": {},
           "fingerprints": {}, "sources_answered": 0, "max_per_second": 0,
           "answer_types": {}}
    answered = set()
    per_second = {}
    t0 = time.monotonic()

    def drain(until):
        while True:
            left = until - time.monotonic()
            r, _, _ = select.select(socks, [], [], max(left, 0))
            if not r:
                return
            for s in r:
                try:
                    d = s.recv(4096)
                except BlockingIOError:
                    continue
                out["answers"] += 1
                out["answer_bytes"] += len(d)
                answered.add(s.getsockname()[1])
                sec = int(time.monotonic() - t0)
                per_second[sec] = per_second.get(sec, 0) + 1
                if len(d) >= 26:
                    t = str(d[3])
                    out["answer_types"][t] = out["answer_types"].get(t, 0) + 1
                    f = str(d[25]) if d[3] == 9 else "-"
                    out["flags"][f] = out["flags"].get(f, 0) + 1
                    h = "%016x" % struct.unpack(">Q", d[8:16])[0]
                    out["fingerprints"][h] = out["fingerprints"].get(h, 0) + 1

    last = 0
    for i in range(a.count):
        due = t0 + i / a.rate
        drain(due)
        dgram, last = request(a.kind, fp, 0x5EED0000 + i, trailer, key, a.skew_ms * 1000, last)
        s = socks[i % len(socks)]
        try:
            s.sendto(dgram, ("127.0.0.1", a.port))
            out["sent"] += 1
            out["sent_bytes"] += len(dgram)
        except BlockingIOError:
            pass
    drain(time.monotonic() + a.wait_ms / 1000)
    out["sources_answered"] = len(answered)
    out["max_per_second"] = max(per_second.values(), default=0)
    out["seconds"] = round(time.monotonic() - t0, 3)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
