"""HTTPS servers for the TLS tests, standard library only: one listener per case, each with the
certificate of its case (made at test time by scripts/tls_certs.py).

    python scripts/tls_server.py CERT_DIR valid=PORT expired=PORT future=PORT wronghost=PORT \
        unknown=PORT mtls=PORT chained=PORT smuggled=PORT

Every listener is on 127.0.0.1 and answers (HTTP/1.1):
  GET  /get                      200, JSON: method, path, headers
  POST /post                     200, JSON: method, path, headers, and the body's length
  ANY  /redirect?to=URL&status=N  N (307 by default) with Location: URL
  GET  /status/N                 N, empty body
  GET  /seen                     200, JSON: how many requests each listener has read so far
                                 (a listener whose handshakes all fail must show 0)
The `mtls` listener refuses a handshake without a client certificate issued by the test CA.
A `control=PORT` listener speaks plain HTTP on 127.0.0.1 and answers `/seen` only, for a client
that trusts no listener (URLSession on Linux trusts only the system's roots).
"""

import json
import os
import socket
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


SEEN = {}
SEEN_LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    case = "valid"

    def log_message(self, *args):
        pass

    def setup(self):
        # The handshake runs here, in the connection's thread, not in accept(): a refused one
        # (the mtls listener without a trusted client certificate) sends its alert, closes the
        # sending side and reads what the client already sent before closing. Closing with that
        # request unread would send a reset, which may destroy the alert before the client reads
        # it (TLS 1.3 clients finish their side of the handshake and send the request before
        # the server has checked their certificate).
        if not isinstance(self.request, ssl.SSLSocket):
            return super().setup()
        try:
            self.request.do_handshake()
        except (ssl.SSLError, OSError):
            raw = socket.socket(fileno=self.request.detach())
            try:
                raw.shutdown(socket.SHUT_WR)
                raw.settimeout(2)
                while raw.recv(65536):
                    pass
            except OSError:
                pass
            finally:
                raw.close()
            raise
        super().setup()

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def echo(self, received=None):
        document = {
            "method": self.command,
            "path": self.path,
            "headers": {name: value for name, value in self.headers.items()},
        }
        if received is not None:
            document["received"] = received
        self.answer(200, json.dumps(document).encode(), [("Content-Type", "application/json")])

    def route(self):
        parts = urlsplit(self.path)
        if parts.path == "/seen" or self.case == "control":
            with SEEN_LOCK:
                counts = dict(SEEN)
            return self.answer(200, json.dumps(counts).encode(), [("Content-Type", "application/json")])
        with SEEN_LOCK:
            SEEN[self.case] = SEEN.get(self.case, 0) + 1
        length = int(self.headers.get("Content-Length") or 0)
        received = len(self.rfile.read(length)) if length else 0
        if parts.path == "/redirect":
            query = parse_qs(parts.query)
            status = int(query.get("status", ["307"])[0])
            return self.answer(status, b"", [("Location", query.get("to", ["/get"])[0])])
        if parts.path.startswith("/status/"):
            return self.answer(int(parts.path.rsplit("/", 1)[1]))
        if parts.path == "/post":
            return self.echo(received)
        return self.echo()

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = route


def serve(directory, case, port):
    if case == "control":
        server = ThreadingHTTPServer(("127.0.0.1", port), type("Handler_control", (Handler,), {"case": "control"}))
        server.daemon_threads = True
        return server.serve_forever()
    stem = {"valid": "server", "mtls": "server"}.get(case, case)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(os.path.join(directory, stem + ".pem"), os.path.join(directory, stem + ".key"))
    if case == "mtls":
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(os.path.join(directory, "ca.pem"))
    with SEEN_LOCK:
        SEEN[case] = 0
    handler = type("Handler_" + case, (Handler,), {"case": case})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    server.handle_error = lambda request, address: None
    server.serve_forever()


def main():
    directory = sys.argv[1]
    threads = []
    for argument in sys.argv[2:]:
        case, port = argument.split("=")
        thread = threading.Thread(target=serve, args=(directory, case, int(port)), daemon=True)
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()


if __name__ == "__main__":
    main()
