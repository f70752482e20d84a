#!/usr/bin/env python3
"""Attacks kdesched's metrics port for test/e2e/serving.sh (Python 3 standard library only).

Two attacks at once, for --duration seconds:
  slowloris  --loris connections, each sending the start of a request head and then one more
             header byte every --dribble seconds, never finishing it; when the server closes one,
             it connects again (after --pause seconds);
  big head   --big (1) connections sending a header line as fast as they can, up to --big-bytes
             or until the server closes it, then the answer's status line is read; repeated on
             a new connection until the time is up.
Prints one JSON object: connections made, closed by the server, the longest a slowloris connection
stayed open, and per big-head connection the bytes sent and the status line received.
"""
import argparse
import json
import socket
import ssl
import threading
import time

HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.loris_connects = 0
        self.loris_failed_connects = 0
        self.loris_closed = 0
        self.loris_longest_open = 0.0
        self.big = []  # (bytes sent, status line)

    def add(self, **kw):
        with self.lock:
            for k, v in kw.items():
                setattr(self, k, getattr(self, k) + v)

    def closed_after(self, seconds):
        with self.lock:
            self.loris_closed += 1
            self.loris_longest_open = max(self.loris_longest_open, seconds)


def connect(args, timeout):
    raw = socket.create_connection((args.host, args.port), timeout=timeout)
    if not args.tls:
        return raw
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx.wrap_socket(raw)


def server_closed(sock, wait):
    """True when the server closed the connection within `wait` seconds."""
    sock.settimeout(wait)
    try:
        return sock.recv(1024) == b""  # an answer (a 4xx) counts as not closed yet
    except (socket.timeout, ssl.SSLWantReadError):
        return False
    except OSError:
        return True


def loris(args, stats, stop):
    while not stop.is_set():
        try:
            sock = connect(args, timeout=5)
        except OSError:
            stats.add(loris_failed_connects=1)
            stop.wait(args.pause)
            continue
        opened = time.monotonic()
        stats.add(loris_connects=1)
        try:
            sock.sendall(HEAD)
            while not stop.is_set():
                if server_closed(sock, args.dribble):
                    stats.closed_after(time.monotonic() - opened)
                    break
                sock.sendall(b"a")
        except OSError:
            stats.closed_after(time.monotonic() - opened)
        finally:
            sock.close()
        stop.wait(args.pause)


def big_head(args, stats, stop, first):
    chunk = b"a" * 65536
    while not stop.is_set():
        try:
            sock = connect(args, timeout=5)
        except OSError:
            first.set()
            stop.wait(args.pause)
            continue
        first.set()
        sent = 0
        try:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
            while sent < args.big_bytes and not stop.is_set():
                sock.sendall(chunk)
                sent += len(chunk)
        except OSError:
            pass
        status = ""
        try:
            sock.settimeout(1)
            status = sock.recv(256).split(b"\r\n", 1)[0].decode("latin-1")
        except OSError:
            pass
        finally:
            sock.close()
        with stats.lock:
            stats.big.append((sent, status))
        stop.wait(args.pause)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--tls", action="store_true", help="speak HTTPS (kdesched's default)")
    p.add_argument("--duration", type=float, default=30)
    p.add_argument("--loris", type=int, default=300)
    p.add_argument("--dribble", type=float, default=0.5)
    p.add_argument("--pause", type=float, default=0.05, help="before connecting again")
    p.add_argument("--big", type=int, default=1, help="connections sending an endless header (0: none)")
    p.add_argument("--big-bytes", type=int, default=2 << 30)
    args = p.parse_args()

    stats, stop, first = Stats(), threading.Event(), threading.Event()
    # The endless headers connect first: once 300 loris threads hold the GIL and the server's 64
    # slots, a TLS handshake of this process may never finish (a CI run saw 75,000 failed connects
    # and no endless header at all in 15 s).
    bigs = [threading.Thread(target=big_head, args=(args, stats, stop, first), daemon=True) for _ in range(args.big)]
    for t in bigs:
        t.start()
    if bigs:
        first.wait(5)
    threads = bigs + [threading.Thread(target=loris, args=(args, stats, stop), daemon=True) for _ in range(args.loris)]
    for t in threads[len(bigs):]:
        t.start()
    stop.wait(args.duration)
    stop.set()
    for t in threads:
        t.join(timeout=10)
    big_sent = [b for b, _ in stats.big]
    print(json.dumps({
        "loris_connects": stats.loris_connects,
        "loris_failed_connects": stats.loris_failed_connects,
        "loris_closed_by_server": stats.loris_closed,
        "loris_longest_open_s": round(stats.loris_longest_open, 3),
        "big_connections": len(stats.big),
        "big_max_bytes_per_connection": max(big_sent, default=0),
        "big_total_bytes": sum(big_sent),
        "big_statuses": sorted({s for _, s in stats.big}),
    }))


if __name__ == "__main__":
    main()
