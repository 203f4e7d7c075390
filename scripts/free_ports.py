#!/usr/bin/env python3
"""Prints COUNT distinct loopback ports, free when picked, for test servers:

    python3 scripts/free_ports.py COUNT [LOW-HIGH]

They are drawn at random from LOW-HIGH (by default 20000-32767: below the kernel's range for
outgoing connections, /proc/sys/net/ipv4/ip_local_port_range, 32768 and up), so that a client
connecting meanwhile (a test run beside this one) cannot take a port between its pick and its
server's start. All are held until all are found, so they differ. Used by scripts/test and
Benchmarks/soak.
"""
import random
import socket
import sys

count = int(sys.argv[1])
low, high = map(int, (sys.argv[2] if len(sys.argv) > 2 else "20000-32767").split("-"))
held = []
for port in random.sample(range(low, high + 1), high + 1 - low):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        s.close()
        continue
    held.append(s)
    if len(held) == count:
        break
if len(held) < count:
    sys.exit(f"free_ports: not {count} free ports in {low}-{high}")
print(" ".join(str(s.getsockname()[1]) for s in held))
for s in held:
    s.close()
