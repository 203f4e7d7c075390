"""Listeners that record, byte for byte, what a client uploads: for the conformance cases on
request bodies that break their declared length (hostile_server.py serves them under
/upload-bounds/).

Each listener is a loopback port of its own, made for one case, so that every connection it
accepts is the case's. A connection reads HTTP/1.1 requests one after the other, as a keep-alive
server does: the head, then the body its Content-Length (or chunked coding) frames, then a 200,
then the next request. What a smuggled request would be is therefore seen as one: a second
request on the connection. Nothing is parsed leniently: bytes that do not make a head are counted
as bytes after the last request.

  open(hold)     a new listener; with hold, the first request's body is not read until release()
  release(port)  lets a held listener read its bodies
  state(port)    what it received: per connection the requests (method, target, declared length,
                 body bytes received, whether the body was complete), the bytes after them, and
                 whether the client has closed the connection. Connections the kernel has
                 accepted but the listener not yet are taken first, so a connection the client
                 made before asking is in the answer.
"""
import json
import socket
import threading
import time

LOCK = threading.Lock()
LISTENERS = {}
# A listener lives this long, then closes (with its connections): a case takes seconds.
LIFETIME = 300.0
MOST_LISTENERS = 64
HEAD_LIMIT = 64 << 10
BODY_LIMIT = 1 << 30


class Listener:
    def __init__(self, hold):
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if hold:
            # What a held connection can take before the client must stop is bounded here, not by
            # the kernel's autotuning (tcp_rmem lets a receive buffer grow to 32 MiB on this
            # machine): a fixed, small receive buffer, inherited by each accepted socket, so a
            # case's 16 MiB file cannot all leave the client while the listener holds.
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 16)
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(16)
        self.socket.setblocking(False)
        self.port = self.socket.getsockname()[1]
        self.released = threading.Event()
        if not hold:
            self.released.set()
        self.connections = []
        self.opened = time.monotonic()
        self.closed = False
        threading.Thread(target=self.accept_loop, daemon=True).start()

    def accept_pending(self):
        """Accepts every connection waiting in the kernel's queue (callers hold LOCK)."""
        while not self.closed:
            try:
                client, _ = self.socket.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            client.setblocking(True)
            record = {"requests": [], "after": 0, "closed": False}
            self.connections.append(record)
            threading.Thread(target=self.serve, args=(client, record), daemon=True).start()

    def accept_loop(self):
        import select
        while not self.closed and time.monotonic() - self.opened < LIFETIME:
            try:
                readable, _, _ = select.select([self.socket], [], [], 0.5)
            except (OSError, ValueError):
                return
            if readable:
                with LOCK:
                    self.accept_pending()
        self.close()

    def close(self):
        with LOCK:
            self.closed = True
            LISTENERS.pop(self.port, None)
        try:
            self.socket.close()
        except OSError:
            pass
        self.released.set()

    def serve(self, client, record):
        buffered = b""

        def receive():
            try:
                # While held, no more than a head's worth at a time: the body stays in the kernel.
                return client.recv(1 << 20 if self.released.is_set() else HEAD_LIMIT)
            except OSError:
                return b""

        try:
            client.settimeout(LIFETIME)
            while True:
                # A head: up to the blank line.
                while b"\r\n\r\n" not in buffered:
                    if len(buffered) > HEAD_LIMIT:
                        break
                    block = receive()
                    if not block:
                        with LOCK:
                            record["after"] += len(buffered)
                        return
                    buffered += block
                end = buffered.find(b"\r\n\r\n")
                if end < 0:
                    with LOCK:
                        record["after"] += len(buffered)
                    return
                head, buffered = buffered[:end].decode("latin-1"), buffered[end + 4 :]
                lines = head.split("\r\n")
                parts = lines[0].split(" ")
                if len(parts) != 3 or not parts[2].startswith("HTTP/"):
                    with LOCK:
                        record["after"] += end + 4 + len(buffered)
                    buffered = b""
                    continue
                fields = {}
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    fields[name.strip().lower()] = value.strip()
                declared = fields.get("content-length")
                chunked = "chunked" in fields.get("transfer-encoding", "").lower()
                request = {
                    "method": parts[0], "target": parts[1], "declared": int(declared) if declared and declared.isdigit() else None,
                    "chunked": chunked, "received": 0, "complete": False,
                }
                with LOCK:
                    record["requests"].append(request)
                first = len(record["requests"]) == 1
                if first:
                    self.released.wait()
                if chunked:
                    complete, buffered = self.read_chunked(buffered, receive, request)
                else:
                    remaining = min(request["declared"] or 0, BODY_LIMIT)
                    taken = min(remaining, len(buffered))
                    with LOCK:
                        request["received"] += taken
                    buffered = buffered[taken:]
                    remaining -= taken
                    while remaining > 0:
                        block = receive()
                        if not block:
                            break
                        taken = min(remaining, len(block))
                        with LOCK:
                            request["received"] += taken
                        buffered = block[taken:]
                        remaining -= taken
                    complete = remaining == 0
                if not complete:
                    return
                with LOCK:
                    request["complete"] = True
                body = json.dumps({"received": request["received"]}).encode()
                client.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        except OSError:
            pass
        finally:
            # Whatever else the client sent before it closed.
            with LOCK:
                record["closed"] = True
            try:
                client.close()
            except OSError:
                pass

    @staticmethod
    def read_chunked(buffered, receive, request):
        """Reads a chunked body; (complete, the bytes after it)."""

        def line():
            nonlocal buffered
            while b"\r\n" not in buffered:
                block = receive()
                if not block or len(buffered) > HEAD_LIMIT:
                    return None
                buffered += block
            text, _, buffered = buffered.partition(b"\r\n")
            return text

        while True:
            size_line = line()
            if size_line is None:
                return False, b""
            try:
                size = int(size_line.split(b";")[0].strip(), 16)
            except ValueError:
                return False, b""
            if size == 0:
                while True:
                    trailer = line()
                    if trailer is None:
                        return False, b""
                    if trailer == b"":
                        return True, buffered
            while len(buffered) < size + 2:
                block = receive()
                if not block:
                    with LOCK:
                        request["received"] += min(size, len(buffered))
                    return False, b""
                buffered += block
            with LOCK:
                request["received"] += size
            buffered = buffered[size + 2 :]


def open_listener(hold):
    with LOCK:
        if len(LISTENERS) >= MOST_LISTENERS:
            return None
    listener = Listener(hold)
    with LOCK:
        LISTENERS[listener.port] = listener
    return listener.port


def release(port):
    with LOCK:
        listener = LISTENERS.get(port)
    if listener is None:
        return False
    listener.released.set()
    return True


def state(port):
    with LOCK:
        listener = LISTENERS.get(port)
        if listener is None:
            return None
        listener.accept_pending()
        return json.loads(json.dumps({"connections": listener.connections, "held": not listener.released.is_set()}))


def close(port):
    with LOCK:
        listener = LISTENERS.get(port)
    if listener is None:
        return False
    listener.close()
    return True
