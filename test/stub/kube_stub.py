#!/usr/bin/env python3
"""A scripted, fault-injecting HTTP(S) stub of the Kubernetes API server, for the faults a real
API server will not produce on demand: malformed JSON inside a watch stream, a connection cut in
the middle of a chunk, a 500 on LIST, 429 with Retry-After, 410 on a continue token.

Binds 127.0.0.1 on a free port and prints "PORT <n>" once listening. Exits when its stdin closes
(the test that started it finished or died) or after --lifetime seconds, whichever comes first.

The script (JSON) is a list of rules; a request is served by the first rule whose method, path
and query constraints match, and takes that rule's next response (the last one repeats):

  {"rules": [
    {"method": "GET", "path": "/api/v1/pods",
     "query": {"watch": "true", "continue": null},   # value must equal; null: must be absent
     "responses": [
       {"status": 200, "json": {...}},                  # a JSON body with Content-Length
       {"status": 429, "headers": {"Retry-After": "1"}, "body": "..."},
       {"status": 200, "stream": ["line", ...],         # chunked; a newline is added per line
        "delay_ms": 20,                                 # pause before each chunk
        "split": true,                                  # send each line as two chunks
        "together": true,                               # or all lines in one chunk
        "end": "close" | "cut" | "hang"}                # last chunk / cut mid-chunk / stay open
       {"status": 200, "json": {...}, "reset_after_ms": 100}  # then, as if restarted, reset the
     ]}]}                                               # kept-alive connection (RST) after 100 ms

GET /__stub/requests returns what was received so far: [{"method", "target", "authorization",
"sni"}] (sni: the TLS client's server name indication, null without TLS or without one).
GET /__stub/resets?atLeast=N waits (up to 10 s) until N connections were reset by reset_after_ms
and returns {"resets": count}: a test waits for the reset itself, not for a guess of how long it takes.
TLS: --tls-cert/--tls-key serve HTTPS; --tls-client-ca also requires a client certificate.
Only loopback traffic: the stub never connects anywhere.
"""

import argparse
import json
import select
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STOP = threading.Event()
LOCK = threading.Lock()
REQUESTS = []
RESETS = threading.Condition(LOCK)
RESET_COUNT = [0]


class Rule:
    def __init__(self, spec):
        self.method = spec.get("method", "GET")
        self.path = spec["path"]
        self.query = spec.get("query", {})
        self.responses = spec["responses"]
        self.next = 0

    def matches(self, method, path, query):
        if method != self.method or path != self.path:
            return False
        for key, want in self.query.items():
            got = query.get(key)
            if want is None:
                if got is not None:
                    return False
            elif got is None or got[0] != want:
                return False
        return True

    def take(self):
        response = self.responses[min(self.next, len(self.responses) - 1)]
        self.next += 1
        return response


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    rules = []
    resetting = False  # reset_after_ms: close with RST once the exchange is over

    def finish(self):
        super().finish()
        if not self.resetting:
            return
        # What the server's shutdown_request would do next (FIN, then close, which SO_LINGER 0
        # turns into an RST), done here so the reset can be counted once it has happened.
        try:
            self.connection.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        self.connection.close()
        with RESETS:
            RESET_COUNT[0] += 1
            RESETS.notify_all()

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        self.serve()

    def do_POST(self):
        self.serve()

    def do_PUT(self):
        self.serve()

    def do_PATCH(self):
        self.serve()

    def do_DELETE(self):
        self.serve()

    def serve(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/__stub/requests":
            with LOCK:
                body = json.dumps(REQUESTS)
            return self.send_body(200, {}, body.encode())
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        if url.path == "/__stub/resets":
            at_least = int(query.get("atLeast", ["0"])[0])
            with RESETS:
                RESETS.wait_for(lambda: RESET_COUNT[0] >= at_least, timeout=10)
                body = json.dumps({"resets": RESET_COUNT[0]})
            return self.send_body(200, {}, body.encode())
        with LOCK:
            REQUESTS.append({"method": self.command, "target": self.path,
                             "authorization": self.headers.get("Authorization", ""),
                             "sni": getattr(self.connection, "sni", None)})
            rule = next((r for r in self.rules if r.matches(self.command, url.path, query)), None)
            response = rule.take() if rule else None
        if response is None:
            status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404,
                      "reason": "NotFound", "message": "no stub rule for %s %s" % (self.command, self.path)}
            return self.send_body(404, {}, json.dumps(status).encode())
        if "stream" in response:
            return self.send_stream(response)
        if "json" in response:
            body = json.dumps(response["json"]).encode()
        else:
            body = response.get("body", "").encode()
        self.send_body(response.get("status", 200), response.get("headers", {}), body)
        if "reset_after_ms" in response:
            # The client keeps this connection in its pool (no "Connection: close"); the server
            # then goes away under it, as a restarted API server does.
            self.wfile.flush()
            time.sleep(response["reset_after_ms"] / 1000.0)
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.resetting = True
            self.close_connection = True

    def send_body(self, status, headers, body):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def chunk(self, data, delay):
        if delay:
            time.sleep(delay)
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def send_stream(self, response):
        self.send_response(response.get("status", 200))
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        for k, v in response.get("headers", {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.flush()
        delay = response.get("delay_ms", 0) / 1000.0
        try:
            if response.get("together"):
                # Every line in one chunk: the client reads many events from one buffer.
                self.chunk("".join(line + "\n" for line in response["stream"]).encode(), delay)
            for line in ([] if response.get("together") else response["stream"]):
                data = (line + "\n").encode()
                if response.get("split") and len(data) > 1:
                    half = len(data) // 2
                    self.chunk(data[:half], delay)
                    self.chunk(data[half:], delay)
                else:
                    self.chunk(data, delay)
            end = response.get("end", "close")
            if end == "close":
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            elif end == "cut":
                # Announce a chunk, send part of it, and drop the connection.
                self.wfile.write(b"400\r\n{\"type\":\"ADDED\",\"obj")
                self.wfile.flush()
                self.drop()
            elif end == "hang":
                self.hang()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            pass
        self.close_connection = True

    def hang(self):
        # Keep the watch open until the client goes away or the stub stops.
        while not STOP.is_set():
            readable, _, _ = select.select([self.connection], [], [], 0.1)
            if readable:
                try:
                    if not self.connection.recv(1):
                        return
                except (OSError, ssl.SSLError):
                    return

    def drop(self):
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.connection.close()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    tls = None

    def finish_request(self, request, client_address):
        if self.tls is not None:
            # The handshake runs on the request's thread, so a stalled client cannot block accept().
            try:
                request = self.tls.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError):
                return
        self.RequestHandlerClass(request, client_address, self)

    def handle_error(self, request, client_address):
        print("stub: error serving %s: %s" % (client_address, sys.exc_info()[1]), file=sys.stderr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", required=True)
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--tls-client-ca", help="require client certificates signed by this CA")
    parser.add_argument("--lifetime", type=float, default=60)
    args = parser.parse_args()

    with open(args.script) as f:
        Handler.rules = [Rule(r) for r in json.load(f)["rules"]]
    server = Server(("127.0.0.1", 0), Handler)
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        ctx.sni_callback = lambda sock, name, _ctx: setattr(sock, "sni", name)
        if args.tls_client_ca:
            ctx.verify_mode = ssl.CERT_REQUIRED
            ctx.load_verify_locations(args.tls_client_ca)
        server.tls = ctx

    def watch_stdin():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except OSError:
            pass
        STOP.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    print("PORT %d" % server.server_address[1], flush=True)
    STOP.wait(args.lifetime)
    STOP.set()
    server.shutdown()
    server.server_close()


if __name__ == "__main__":
    main()
