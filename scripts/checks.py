"""What the Python checks under scripts/ share: a check that prints its line and counts the
failures (the script exits non-zero when `failures` is not empty), and a free port of
127.0.0.1."""

import socket

failures = []


def check(cond, what):
    print(("  ok   " if cond else "  FAIL ") + what)
    if not cond:
        failures.append(what)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
