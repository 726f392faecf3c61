#!/usr/bin/env python3
"""Slow and oversized clients against one release server on 127.0.0.1, with its default
limits. Three phases, /healthz probed every 0.25 s throughout:

1. 600 connections each send the start of a 380 KB header and stop (unfinished). The
   server's RSS may grow by at most 60 MB while they are open.
2. 1000 slowloris connections trickle one header line every second. Each must be cut
   within 30 s.
3. After they are gone, RSS settles back to within 60 MB of idle.

Passes when every limit holds and every /healthz probe answered 200 within 2 s.
    cargo build --release && python3 benches/slow_clients.py
"""

import os
import resource
import socket
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BIN = os.path.join(ROOT, "target", "release", "gpu-advisor")
PORT = int(os.environ.get("PORT", "18093"))
HOLDERS = int(os.environ.get("HOLDERS", "600"))
LORIS = int(os.environ.get("LORIS", "1000"))
HEADER_BYTES = 380 * 1024
RSS_BUDGET_MB = 60
CUT_WITHIN_S = 30


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def connect():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
    s.setblocking(False)
    return s


class Health(threading.Thread):
    """Probes /healthz until stopped; records failures and the slowest answer."""

    def __init__(self):
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.failures = []
        self.slowest = 0.0
        self.probes = 0

    def run(self):
        while not self.stop.is_set():
            t0 = time.monotonic()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/healthz", timeout=2) as r:
                    if r.status != 200:
                        self.failures.append(f"status {r.status}")
            except Exception as e:  # noqa: BLE001 - any failure is a failed probe
                self.failures.append(repr(e))
            self.slowest = max(self.slowest, time.monotonic() - t0)
            self.probes += 1
            time.sleep(0.25)


def send_some(s, data):
    try:
        return s.send(data)
    except (BlockingIOError, InterruptedError):
        return 0
    except OSError:
        return -1


def closed(s):
    try:
        return s.recv(65536) == b""
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    env = dict(os.environ, GPU_ADVISOR_LISTEN=f"127.0.0.1:{PORT}")
    server = subprocess.Popen(
        [BIN, "serve"], cwd=ROOT, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    ok = True
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{PORT}/healthz", timeout=1)
                break
            except Exception:  # noqa: BLE001 - not up yet
                time.sleep(0.1)
        idle = rss_mb(server.pid)
        print(f"idle RSS {idle:.1f} MB")
        health = Health()
        health.start()

        # 1. Unfinished 380 KB headers.
        head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * HEADER_BYTES
        holders = [connect() for _ in range(HOLDERS)]
        for s in holders:
            send_some(s, head)
        time.sleep(2)
        peak = rss_mb(server.pid)
        grew = peak - idle
        print(f"{HOLDERS} unfinished {HEADER_BYTES // 1024} KB headers: RSS {peak:.1f} MB (+{grew:.1f} MB)")
        if grew > RSS_BUDGET_MB:
            print(f"FAIL: RSS grew by more than {RSS_BUDGET_MB} MB")
            ok = False
        for s in holders:
            s.close()

        # 2. Slowloris: one header line a second.
        loris = [connect() for _ in range(LORIS)]
        t0 = time.monotonic()
        alive = set(range(LORIS))
        for s in loris:
            send_some(s, b"GET /healthz HTTP/1.1\r\n")
        line = 0
        while alive and time.monotonic() - t0 < CUT_WITHIN_S + 5:
            time.sleep(1)
            line += 1
            for i in list(alive):
                if closed(loris[i]) or send_some(loris[i], f"X-{line}: {line}\r\n".encode()) < 0:
                    alive.discard(i)
        took = time.monotonic() - t0
        print(f"{LORIS} slowloris clients: {LORIS - len(alive)} cut, the last after {took:.1f} s")
        if alive or took > CUT_WITHIN_S:
            print(f"FAIL: {len(alive)} slowloris connections still open after {took:.1f} s")
            ok = False
        for s in loris:
            s.close()

        # 3. Back to idle.
        time.sleep(2)
        after = rss_mb(server.pid)
        print(f"after: RSS {after:.1f} MB")
        if after - idle > RSS_BUDGET_MB:
            print("FAIL: memory not returned")
            ok = False
        health.stop.set()
        health.join()
        print(f"/healthz: {health.probes} probes, {len(health.failures)} failed, slowest {health.slowest * 1000:.0f} ms")
        if health.failures:
            print(f"FAIL: /healthz failed: {health.failures[:3]}")
            ok = False
    finally:
        server.terminate()
        server.wait(timeout=15)
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
