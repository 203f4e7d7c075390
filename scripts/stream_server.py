"""A small HTTP/1.1 server for Courier's streaming tests and benchmarks (loopback only, stdlib only).

  /sse?key=K&count=N&per_connection=M&retry=MS
        text/event-stream with events id 1..N (data "event <id>"), resuming after the request's
        Last-Event-ID; closes the connection after M events (so a client must reconnect) and
        records every Last-Event-ID it was sent under key K (read them at /log?key=K).
        After the last event it answers 204 to say "stop reconnecting".
  /sse-status?code=C           answers status C (for example 204 or 500) with an empty body
  /sse-wrong-type              200 with text/plain
  /ndjson?count=N              N JSON lines {"n": i}
  /file?size=N&etag=E&cut=K&ignore_range=1
        N deterministic bytes (byte i is i % 251) with ETag and Range / If-Range support
        (206 with Content-Range); cut=K closes the connection after K body bytes; ignore_range
        answers 200 with the whole body whatever the request asks.
  /bytes?size=N&key=K&block=B&pace=MS
                               N zero bytes, written in blocks of B bytes (1 MiB by default), MS
                               milliseconds apart (none by default: as fast as the client reads);
                               with a key, how many bytes the server could write before the client
                               hung up is recorded (read it at /sent?key=K, once the connection is
                               closed)
  /upload?delay=S&key=K&pace=MS (POST or PUT)
                               reads the body (Content-Length or chunked) and answers JSON
                               {"length": n, "crc32": c, "content_type": ..., "framing": F}
                               where F is "length", "chunked" or "none" (how the body was framed);
                               with delay, S seconds after the body is read; with a key, what
                               arrived is recorded: /uploaded?key=K says {"length": n, "complete":
                               true} once a body ends as its framing says (the last chunk, or all
                               of its Content-Length), "complete": false while it has not, and
                               "done": true once the server stopped reading it (either way); with
                               pace, the body is read 64 KiB at a time, MS milliseconds apart
  /gated?key=K&size=N          N bytes (byte i is i % 251): the head and the first 1000 bytes at
                               once, the rest only after /open?key=K is requested (or 30 s pass);
                               /opened?key=K then says {"by": "gate"} or {"by": "timeout"}
  /open?key=K                  releases the rest of /gated's body under K
  /auth?min=N                  200 {"ok": true} for `Authorization: Bearer tM` with M >= N, else 401
                               with `WWW-Authenticate: Bearer` (the soak's token refreshes)
  /log?key=K                   JSON list of the Last-Event-ID values /sse received under K
  /sent?key=K                  JSON {"sent": n, "done": bool} for /bytes under K
Usage: python3 stream_server.py PORT
"""
import http.server
import json
import sys
import threading
import time
import urllib.parse
import zlib

LOG = {}
SENT = {}
UPLOADS = {}
GATES = {}
OPENED = {}
LOCK = threading.Lock()
PATTERN = bytes(i % 251 for i in range(251 * 4096))


def pattern(start, end):
    out = bytearray()
    position = start
    while position < end:
        offset = position % 251
        take = min(end - position, len(PATTERN) - offset)
        out += PATTERN[offset:offset + take]
        position += take
    return bytes(out)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def query(self):
        url = urllib.parse.urlsplit(self.path)
        return url.path, {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}

    def send_body(self, status, body, content_type="application/json", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path, q = self.query()
        if path == "/sse":
            return self.sse(q)
        if path == "/sse-status":
            code = int(q.get("code", "204"))
            self.send_response(code)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if path == "/sse-wrong-type":
            return self.send_body(200, b"data: nope\n\n", "text/plain")
        if path == "/ndjson":
            count = int(q.get("count", "3"))
            body = b"".join(json.dumps({"n": i}).encode() + b"\n" for i in range(1, count + 1))
            return self.send_body(200, body, "application/x-ndjson")
        if path == "/file":
            return self.file(q)
        if path == "/bytes":
            size = int(q.get("size", "0"))
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            block = b"\0" * int(q.get("block", str(1 << 20)))
            pace = float(q.get("pace", "0")) / 1000
            remaining = size
            key = q.get("key")
            try:
                while remaining > 0:
                    n = min(remaining, len(block))
                    self.wfile.write(block[:n])
                    remaining -= n
                    if pace:
                        self.wfile.flush()
                        time.sleep(pace)
                    if key:
                        with LOCK:
                            SENT[key] = {"sent": size - remaining, "done": False}
            except (BrokenPipeError, ConnectionResetError):
                pass
            if key:
                with LOCK:
                    SENT[key] = {"sent": size - remaining, "done": True}
            return
        if path == "/gated":
            key = q.get("key", "")
            size = int(q.get("size", "10000"))
            with LOCK:
                gate = GATES.setdefault(key, threading.Event())
            body = pattern(0, size)
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            try:
                self.wfile.write(body[:1000])
                self.wfile.flush()
                opened = gate.wait(30)
                with LOCK:
                    OPENED[key] = "gate" if opened else "timeout"
                self.wfile.write(body[1000:])
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        if path == "/open":
            with LOCK:
                GATES.setdefault(q.get("key", ""), threading.Event()).set()
            return self.send_body(200, b"{}")
        if path == "/opened":
            with LOCK:
                by = OPENED.get(q.get("key", ""))
            return self.send_body(200, json.dumps({"by": by}).encode())
        if path == "/uploaded":
            with LOCK:
                seen = UPLOADS.get(q.get("key", ""))
            return self.send_body(200, json.dumps(seen).encode())
        if path == "/sent":
            with LOCK:
                seen = SENT.get(q.get("key", ""), {"sent": 0, "done": False})
            return self.send_body(200, json.dumps(seen).encode())
        if path == "/auth":
            token = self.headers.get("Authorization", "")
            generation = token[len("Bearer t"):] if token.startswith("Bearer t") else ""
            if generation.isdigit() and int(generation) >= int(q.get("min", "0")):
                return self.send_body(200, b'{"ok": true}')
            return self.send_body(401, b'{"ok": false}', headers=[("WWW-Authenticate", "Bearer")])
        if path == "/log":
            with LOCK:
                seen = list(LOG.get(q.get("key", ""), []))
            return self.send_body(200, json.dumps(seen).encode())
        self.send_body(404, b"{}")

    def sse(self, q):
        key = q.get("key", "")
        count = int(q.get("count", "5"))
        per_connection = int(q.get("per_connection", str(count)))
        retry = q.get("retry")
        last = self.headers.get("Last-Event-ID")
        with LOCK:
            LOG.setdefault(key, []).append(last)
        start = int(last) + 1 if last and last.isdigit() else 1
        if start > count:
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        lines = [": a comment the client ignores\n"]
        if retry:
            lines.append("retry: %s\n" % retry)
        for n in range(start, min(count, start + per_connection - 1) + 1):
            lines.append("id: %d\ndata: event %d\n\n" % (n, n))
        try:
            for line in lines:
                self.wfile.write(line.encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def file(self, q):
        size = int(q.get("size", "1000"))
        etag = '"%s"' % q.get("etag", "v1")
        cut = int(q["cut"]) if "cut" in q else None
        start, end = 0, size
        status = 200
        requested = self.headers.get("Range")
        if_range = self.headers.get("If-Range")
        if requested and "ignore_range" not in q and (if_range is None or if_range == etag):
            spec = requested.replace("bytes=", "").split("-")
            start = int(spec[0]) if spec[0] else 0
            if start >= size:
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % size)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("ETag", etag)
        self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end - 1, size))
        self.send_header("Content-Length", str(end - start))
        if cut is not None:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        body = pattern(start, end)
        if cut is not None:
            body = body[: max(0, cut - start)] if cut > start else b""
        try:
            self.wfile.write(body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_PUT(self):
        self.do_POST()

    def do_POST(self):
        path, q = self.query()
        if path != "/upload":
            return self.send_body(404, b"{}")
        key = q.get("key")

        def record(length, complete):
            if key:
                with LOCK:
                    UPLOADS[key] = {"length": length, "complete": complete, "done": False}

        record(0, False)
        try:
            self.read_upload(q, record)
        finally:
            with LOCK:
                if key in UPLOADS:
                    UPLOADS[key]["done"] = True

    def read_upload(self, q, record):
        length = 0
        crc = 0
        pace = float(q.get("pace", "0")) / 1000
        step = 65536 if pace else 1 << 20
        chunked = self.headers.get("Transfer-Encoding", "").lower() == "chunked"
        framing = "chunked" if chunked else "length" if self.headers.get("Content-Length") is not None else "none"
        if chunked:
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    break
                remaining = size
                while remaining > 0:
                    block = self.rfile.read(min(remaining, step))
                    if not block:
                        record(length, False)
                        return
                    if pace:
                        record(length + len(block), False)
                        time.sleep(pace)
                    crc = zlib.crc32(block, crc)
                    length += len(block)
                    remaining -= len(block)
                record(length, False)
                self.rfile.readline()
        else:
            remaining = int(self.headers.get("Content-Length", "0"))
            while remaining > 0:
                block = self.rfile.read(min(remaining, step))
                if not block:
                    record(length, False)
                    return
                if pace:
                    record(length + len(block), False)
                    time.sleep(pace)
                crc = zlib.crc32(block, crc)
                length += len(block)
                remaining -= len(block)
        record(length, True)
        if "delay" in q:
            time.sleep(float(q["delay"]))
        body = json.dumps({"length": length, "crc32": crc, "content_type": self.headers.get("Content-Type"), "framing": framing})
        try:
            self.send_body(200, body.encode())
        except (BrokenPipeError, ConnectionResetError):
            pass


class Server(http.server.ThreadingHTTPServer):
    # The default listen backlog (5) drops connections when many clients connect at once (the
    # concurrency tests open 64): a dropped SYN costs a second, a full queue a reset.
    request_queue_size = 256

    def handle_error(self, request, client_address):
        # Clients that go away mid-request (cancellation tests) are expected; anything else is
        # printed as usual.
        kind = sys.exc_info()[0]
        if kind is not None and issubclass(kind, (ConnectionError, ValueError)):
            return
        super().handle_error(request, client_address)


if __name__ == "__main__":
    server = Server(("127.0.0.1", int(sys.argv[1])), Handler)
    server.daemon_threads = True
    server.serve_forever()
