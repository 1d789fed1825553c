#!/usr/bin/env python3
"""A client of ring's control socket in Python (standard library only):
takes the lock at one member, prints the fence, renews the grant once,
releases. Every line it sends and reads is in docs/control.md.

    client.py SOCKET [TIMEOUT_MS]
    client.py -c /etc/ring/ring.conf -n 1 [TIMEOUT_MS]   (asks `ringctl ... socket`)

Exit status as ringctl's: 0 done, 75 not granted within TIMEOUT_MS, 70 the
grant ended before it was released, 69 no member at SOCKET, 1 anything else
(permission denied: see docs/operations.md, "Let user X take the lock")."""
import socket
import subprocess
import sys


class Member:
    """One connection to a member: one client, one request at a time."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.lines = self.sock.makefile("r", encoding="ascii", newline="\n")

    def ask(self, line):
        """Sends one command and returns its reply line, without the newline."""
        self.sock.sendall(line.encode("ascii") + b"\n")
        reply = self.lines.readline()
        if not reply:
            raise ConnectionError("the member closed the connection")
        return reply.rstrip("\n")

    def close(self):
        self.lines.close()
        self.sock.close()


def socket_path(args):
    """SOCKET, or -c CONF -n ID: the path ringctl reads from the ring's file."""
    if len(args) >= 4 and args[0] == "-c" and args[2] == "-n":
        out = subprocess.run(["ringctl", "-c", args[1], "-n", args[3], "socket"],
                             check=True, capture_output=True, text=True)
        return out.stdout.strip(), args[4:]
    return args[0], args[1:]


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        path, rest = socket_path(argv)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"client.py: ringctl socket: {getattr(e, 'stderr', None) or e}", file=sys.stderr)
        return 1
    try:
        member = Member(path)
    except PermissionError as e:
        print(f"client.py: {path}: {e.strerror}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"client.py: {path}: {e.strerror}", file=sys.stderr)
        return 69
    try:
        # The wait may be long: GRANTED comes when the token does.
        reply = member.ask("ACQUIRE " + rest[0] if rest else "ACQUIRE")
        if reply == "TIMEOUT":
            print(f"client.py: not granted within {rest[0]} ms", file=sys.stderr)
            return 75
        words = reply.split()
        if len(words) != 3 or words[0] != "GRANTED":
            print(f"client.py: ACQUIRE: {reply}", file=sys.stderr)
            return 1
        fence, epoch = int(words[1]), int(words[2])
        print(f"granted fence={fence} epoch={epoch}", flush=True)

        # Here the work would be done, handing the fence to the resource.
        # A job longer than lease_ms renews, well before the lease ends.
        reply = member.ask("RENEW")
        words = reply.split()
        if reply.startswith("REVOKED "):
            print(f"client.py: the grant ended first: {reply}", file=sys.stderr)
            return 70
        if len(words) != 3 or words[0] != "RENEWED" or int(words[1]) != fence:
            print(f"client.py: RENEW: {reply}", file=sys.stderr)
            return 1
        print(f"renewed fence={fence} ms={int(words[2])}")

        reply = member.ask("RELEASE")
        if reply.startswith("REVOKED "):
            print(f"client.py: the grant ended first: {reply}", file=sys.stderr)
            return 70
        if reply != "OK":
            print(f"client.py: RELEASE: {reply}", file=sys.stderr)
            return 1
        print(f"released fence={fence}")
        return 0
    except ConnectionError as e:
        print(f"client.py: {e}", file=sys.stderr)
        return 70
    finally:
        member.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
