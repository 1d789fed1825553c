# test/security/metrics_flood.py PORT BULK SLOW SECONDS: the attacker of
# t_metrics_flood.sh, meant to run as an unprivileged user. It keeps BULK
# idle TCP connections to 127.0.0.1:PORT open (opening a new one for each the
# server closes, at most 100 new ones every 0.2 s), and SLOW slowloris clients
# that send a request one byte a second. Every 0.5 s, and when it ends (after
# SECONDS, or SIGTERM), one line on stdout:
#   open=N pending=N connects=N closed=N peak=N slow_open=N slow_oldest=S
#   slow_dropped=N slow_life=S
# open: connected and not closed by the server; pending: connect() not done
# yet (the server's backlog is full); connects: every connect that completed;
# closed: how many the server closed; peak: the most open at once;
# slow_oldest: seconds the oldest open slow client has lived; slow_life: the
# longest a slow client lived before the server dropped it.
import errno
import selectors
import signal
import socket
import sys
import time

PORT, BULK, SLOW, SECONDS = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
REQUEST = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slowloris\r\n" + b"X-a: b\r\n" * 1000
TOPUP = 100  # new connections per 0.2 s tick, at most

sel = selectors.DefaultSelector()
conns = {}  # socket -> state dict
stats = dict(connects=0, closed=0, peak=0, slow_dropped=0, slow_life=0.0)
stop = False


def on_term(_sig, _frame):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)


def open_one(slow):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    rc = s.connect_ex(("127.0.0.1", PORT))
    if rc not in (0, errno.EINPROGRESS):
        s.close()
        return False
    conns[s] = dict(slow=slow, up=False, t=time.monotonic(), sent=0)
    sel.register(s, selectors.EVENT_WRITE)
    return True


def close_one(s, by_server):
    c = conns.pop(s)
    sel.unregister(s)
    s.close()
    if by_server and c["up"]:
        stats["closed"] += 1
        if c["slow"]:
            stats["slow_dropped"] += 1
            stats["slow_life"] = max(stats["slow_life"], time.monotonic() - c["t"])


def report():
    now = time.monotonic()
    up = [c for c in conns.values() if c["up"]]
    slow = [now - c["t"] for c in up if c["slow"]]
    print("open=%d pending=%d connects=%d closed=%d peak=%d slow_open=%d slow_oldest=%.1f "
          "slow_dropped=%d slow_life=%.1f" %
          (len(up), len(conns) - len(up), stats["connects"], stats["closed"], stats["peak"],
           len(slow), max(slow, default=0.0), stats["slow_dropped"], stats["slow_life"]),
          flush=True)


end = time.monotonic() + SECONDS
next_tick = next_report = next_byte = 0.0
while not stop and time.monotonic() < end:
    now = time.monotonic()
    if now >= next_tick:
        next_tick = now + 0.2
        nslow = sum(1 for c in conns.values() if c["slow"])
        for _ in range(SLOW - nslow):
            open_one(True)
        budget = TOPUP
        while budget > 0 and len(conns) - SLOW < BULK and open_one(False):
            budget -= 1
    if now >= next_byte:  # one byte a second from each slow client
        next_byte = now + 1.0
        for s, c in list(conns.items()):
            if c["slow"] and c["up"] and c["sent"] < len(REQUEST):
                try:
                    c["sent"] += s.send(REQUEST[c["sent"]:c["sent"] + 1])
                except OSError:
                    close_one(s, True)
    if now >= next_report:
        next_report = now + 0.5
        report()
    for key, ev in sel.select(timeout=0.05):
        s = key.fileobj
        c = conns.get(s)
        if c is None:
            continue
        if not c["up"]:
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                close_one(s, False)
                continue
            c["up"], c["t"] = True, time.monotonic()
            stats["connects"] += 1
            stats["peak"] = max(stats["peak"], sum(1 for x in conns.values() if x["up"]))
            sel.modify(s, selectors.EVENT_READ)
            continue
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        if not data:  # the server closed it (or reset it)
            close_one(s, True)
report()
