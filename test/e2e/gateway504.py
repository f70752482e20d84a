#!/usr/bin/env python3
"""Two faults a real API server cannot produce on demand, for test/e2e/maybe.sh:

  proxy    a TLS-terminating gateway in front of the real kube-apiserver, as a load balancer or an
           API gateway is: every byte is passed through, except that an Eviction POST still
           unanswered after --after seconds gets "504 Gateway Timeout" from the gateway itself while
           the request goes on upstream (the gateway keeps the upstream connection and drains it).
           That is the 504 whose eviction is carried out after all.
  webhook  a validating admission webhook that holds each AdmissionReview --hold seconds, then
           allows it (--allow) or denies it (--deny), so the API server's handler is still at work
           when the gateway gives up.

Both log one line per request to --log. Stdlib only.
"""
import argparse
import http.server
import json
import select
import socket
import ssl
import threading
import time

LOCK = threading.Lock()


def log(path, line):
    with LOCK, open(path, "a", encoding="utf-8") as f:
        f.write(f"{time.time():.3f} {line}\n")


def status_504():
    body = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 504,
                       "reason": "Timeout", "message": "gateway timeout"}).encode()
    head = ("HTTP/1.1 504 Gateway Timeout\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    return head + body


class Conn:
    """One client connection and its own upstream connection, served by one thread: an SSL socket
    must not be read and written from two threads at once (a CI run hung so)."""

    def __init__(self, args, client, upstream):
        self.args, self.client, self.upstream = args, client, upstream
        self.pending = None  # when an Eviction POST went upstream without an answer yet
        self.gave_up = False

    def read(self, sock):
        """Bytes from sock; b"" when it closed; None when nothing whole has arrived yet."""
        try:
            return sock.recv(65536)
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
            return None
        except OSError:
            return b""

    def send(self, sock, data):
        view = memoryview(data)
        while view:
            try:
                n = sock.send(view)
                view = view[n:]
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                select.select([], [sock], [], 0.05)

    def from_client(self, data):
        line = data.split(b"\r\n", 1)[0]
        if line.startswith(b"POST ") and b"/eviction " in line:
            self.pending = time.monotonic()
            log(self.args.log, "eviction " + line.decode(errors="replace"))
        self.send(self.upstream, data)

    def from_upstream(self, data):
        if self.gave_up:
            log(self.args.log, "upstream answered after the 504: " + data.split(b"\r\n", 1)[0].decode(errors="replace"))
            return False
        self.pending = None
        self.send(self.client, data)
        return True

    def give_up(self):
        self.gave_up = True
        log(self.args.log, "504 sent")
        try:
            self.send(self.client, status_504())
            self.client.close()
        except OSError:
            pass

    def run(self):
        for s in (self.client, self.upstream):
            s.setblocking(False)
        try:
            while True:
                socks = [self.upstream] if self.gave_up else [self.client, self.upstream]
                ready = [s for s in socks if s.pending()] or select.select(socks, [], [], 0.05)[0]
                for sock in ready:
                    data = self.read(sock)
                    if data is None:
                        continue
                    if not data:
                        return
                    if sock is self.client:
                        self.from_client(data)
                    elif not self.from_upstream(data):
                        return
                if not self.gave_up and self.pending is not None and \
                        time.monotonic() - self.pending >= self.args.after:
                    self.give_up()
        except OSError:
            pass
        finally:
            for s in (self.client, self.upstream):
                try:
                    s.close()
                except OSError:
                    pass


def proxy(args):
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(args.cert, args.key)
    upstream_ctx = ssl.create_default_context(cafile=args.ca)
    upstream_ctx.load_cert_chain(args.client_cert, args.client_key)
    host, port = args.upstream.rsplit(":", 1)
    listener = socket.create_server(("127.0.0.1", args.listen))
    while True:
        raw, _ = listener.accept()

        def serve(raw=raw):
            try:
                client = server_ctx.wrap_socket(raw, server_side=True)
                up = upstream_ctx.wrap_socket(socket.create_connection((host, int(port))), server_hostname=host)
            except (OSError, ssl.SSLError) as e:
                log(args.log, f"connection failed: {e}")
                raw.close()
                return
            Conn(args, client, up).run()

        threading.Thread(target=serve, daemon=True).start()


def webhook(args):
    allow = args.mode == "allow"

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            review = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            req = review.get("request", {})
            log(args.log, f"review {req.get('namespace')}/{req.get('name')} holding {args.hold}s")
            time.sleep(args.hold)
            resp = {"uid": req.get("uid"), "allowed": allow}
            if not allow:
                resp["status"] = {"code": 403, "message": "denied by the e2e webhook"}
            body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                               "response": resp}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            log(args.log, f"review {req.get('namespace')}/{req.get('name')} {'allowed' if allow else 'denied'}")

        def log_message(self, *_):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.listen), Handler)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(args.cert, args.key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    server.serve_forever()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("role", choices=["proxy", "webhook"])
    p.add_argument("--listen", type=int, required=True)
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--upstream")
    p.add_argument("--ca")
    p.add_argument("--client-cert")
    p.add_argument("--client-key")
    p.add_argument("--after", type=float, default=2.0)
    p.add_argument("--hold", type=float, default=4.0)
    p.add_argument("--mode", choices=["allow", "deny"], default="allow")
    args = p.parse_args()
    (proxy if args.role == "proxy" else webhook)(args)


if __name__ == "__main__":
    main()
