"""A misbehaving HTTP/2 server over TLS (ALPN h2 only), for the HTTP/2 tests: streams reset and
connections sent away at the moments a client must survive. Uses the `h2` package (installed
with hypercorn) and the certificates of scripts/tls_certs.py.

    python scripts/h2_hostile_server.py CERT_DIR PORT

Paths (every request on a connection of its own is answered by the path's rule):
  /ok                  200 with a 5-byte body
  /reset-mid-body      200 announcing 100000 bytes, 1000 of them, then RST_STREAM INTERNAL_ERROR
  /refused             RST_STREAM REFUSED_STREAM before any response: the request was not processed
  /goaway-unprocessed  GOAWAY (last stream 0, NO_ERROR) before any response: not processed either
  /goaway-once?key=K   the first request with key K: GOAWAY (last stream 0) before any response,
                       as /goaway-unprocessed; every later one: 200 with a 5-byte body
  /goaway-mid-body     200 announcing 100000 bytes, 1000 of them, then GOAWAY naming this stream
                       (it was processed) and the connection closed
  /status/CODE         a head whose :status is CODE exactly as given (042, 099, abc, 1000), no body
  /early-hints         a 103 head, then 200 with a 5-byte body
  /ping                a PING to the client, then 200 with a 5-byte body
  /resets              200 whose body is how many RST_STREAM frames the client has sent on this
                       connection so far (a whole exchange needs none)
  /settings            200 whose body is the client's settings and windows as this server sees
                       them: {"enable_push", "initial_window_size", "connection_window"}
  /megabyte            200 with 1 MiB sent at once: the client's windows must allow it (a
                       window too small is a flow-control error, and the connection breaks)
  /mark?key=K          200 with a 5-byte body; this connection is K's from now on
  /goodbyes?key=K      200 whose body is how many of K's connections have received a GOAWAY
                       from the client (it closed them saying so)
  /limit-streams       SETTINGS_MAX_CONCURRENT_STREAMS 1 on this connection (from the client's
                       ACK on, a stream beyond it is a protocol error that closes the
                       connection), then 200 with a 5-byte body
"""

import json
import os
import socket
import ssl
import sys
import threading

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings


def handle(connection_socket):
    # Heads are sent as the paths say, valid or not (the client is what is tested).
    config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8", validate_outbound_headers=False)
    conn = h2.connection.H2Connection(config=config)
    conn.initiate_connection()
    connection_socket.sendall(conn.data_to_send())
    frames = FrameCounter()
    key = None
    try:
        while True:
            data = connection_socket.recv(65535)
            if not data:
                return
            frames.feed(data)
            if key is not None and frames.goaways:
                with GOODBYES_LOCK:
                    GOODBYES[key] = GOODBYES.get(key, 0) + 1
                key = None
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    path = dict(event.headers).get(":path", "/")
                    if path.startswith("/mark?key=") or path.startswith("/goodbyes?key="):
                        if path.startswith("/mark"):
                            key = path.split("=", 1)[1]
                            body = b"hello"
                        else:
                            with GOODBYES_LOCK:
                                body = str(GOODBYES.get(path.split("=", 1)[1], 0)).encode()
                        conn.send_headers(event.stream_id, [(":status", "200"), ("content-length", str(len(body)))])
                        conn.send_data(event.stream_id, body, end_stream=True)
                        continue
                    if path.startswith("/resets"):
                        body = str(frames.resets).encode()
                        conn.send_headers(event.stream_id, [(":status", "200"), ("content-length", str(len(body)))])
                        conn.send_data(event.stream_id, body, end_stream=True)
                        continue
                    outcome = answer(conn, event.stream_id, path)
                    if outcome is not True:
                        connection_socket.sendall(conn.data_to_send())
                        if outcome == LINGER:
                            linger(connection_socket)
                        return
            connection_socket.sendall(conn.data_to_send())
    except (OSError, h2.exceptions.ProtocolError):
        return
    finally:
        try:
            connection_socket.close()
        except OSError:
            pass


class FrameCounter:
    """Counts the client's RST_STREAM frames from the raw bytes (the h2 package drops a reset of
    a stream that is already closed without an event, and that is the one to count), and notes
    its GOAWAY."""

    PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

    def __init__(self):
        self.pending = b""
        self.preface_left = len(self.PREFACE)
        self.resets = 0
        self.goaways = 0

    def feed(self, data):
        self.pending += data
        if self.preface_left:
            taken = min(self.preface_left, len(self.pending))
            self.pending = self.pending[taken:]
            self.preface_left -= taken
        # Each frame: a 24-bit length, a type (3 is RST_STREAM), flags, a stream ID, the payload.
        while len(self.pending) >= 9:
            length = int.from_bytes(self.pending[:3], "big")
            if len(self.pending) < 9 + length:
                break
            if self.pending[3] == 3:
                self.resets += 1
            elif self.pending[3] == 7:
                self.goaways += 1
            self.pending = self.pending[9 + length:]


# The connections marked with a key (/mark) that received the client's GOAWAY, by key.
GOODBYES = {}
GOODBYES_LOCK = threading.Lock()


# The /goaway-once paths already sent away.
SENT_AWAY = set()
SENT_AWAY_LOCK = threading.Lock()


# What `answer` returns when the connection is to close once the client has finished sending.
LINGER = "linger"


def linger(connection_socket):
    """Reads (and drops) what the client still sends until it closes, for at most 5 s, before
    the connection is closed: closing with unread bytes (a request body on its way) would send a
    reset that can make the client drop the frames just sent, GOAWAY among them."""
    connection_socket.settimeout(5)
    try:
        while connection_socket.recv(65535):
            pass
    except (OSError, ValueError):
        pass


def answer(conn, stream_id, path):
    """Answers one request; returns False when the connection is to be closed after this, LINGER
    when it is to be closed once the client stops sending, True otherwise."""
    announced = [(":status", "200"), ("content-type", "application/octet-stream"), ("content-length", "100000")]
    if path.startswith("/ok"):
        conn.send_headers(stream_id, [(":status", "200"), ("content-length", "5")])
        conn.send_data(stream_id, b"hello", end_stream=True)
        return True
    if path.startswith("/reset-mid-body"):
        conn.send_headers(stream_id, announced)
        conn.send_data(stream_id, b"x" * 1000)
        conn.reset_stream(stream_id, error_code=h2.errors.ErrorCodes.INTERNAL_ERROR)
        return True
    if path.startswith("/refused"):
        conn.reset_stream(stream_id, error_code=h2.errors.ErrorCodes.REFUSED_STREAM)
        return True
    if path.startswith("/goaway-once"):
        with SENT_AWAY_LOCK:
            first = path not in SENT_AWAY
            SENT_AWAY.add(path)
        if first:
            conn.close_connection(error_code=h2.errors.ErrorCodes.NO_ERROR, last_stream_id=0)
            return LINGER
        conn.send_headers(stream_id, [(":status", "200"), ("content-length", "5")])
        conn.send_data(stream_id, b"hello", end_stream=True)
        return True
    if path.startswith("/goaway-unprocessed"):
        conn.close_connection(error_code=h2.errors.ErrorCodes.NO_ERROR, last_stream_id=0)
        return LINGER
    if path.startswith("/goaway-mid-body"):
        conn.send_headers(stream_id, announced)
        conn.send_data(stream_id, b"x" * 1000)
        conn.close_connection(error_code=h2.errors.ErrorCodes.INTERNAL_ERROR, last_stream_id=stream_id)
        return False
    if path.startswith("/status/"):
        conn.send_headers(stream_id, [(":status", path[len("/status/"):]), ("content-length", "0")], end_stream=True)
        return True
    if path.startswith("/early-hints"):
        conn.send_headers(stream_id, [(":status", "103"), ("link", "</style.css>; rel=preload")])
        conn.send_headers(stream_id, [(":status", "200"), ("content-length", "5")])
        conn.send_data(stream_id, b"hello", end_stream=True)
        return True
    if path.startswith("/limit-streams"):
        conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 1})
        conn.send_headers(stream_id, [(":status", "200"), ("content-length", "5")])
        conn.send_data(stream_id, b"hello", end_stream=True)
        return True
    if path.startswith("/settings"):
        settings = conn.remote_settings
        body = json.dumps({
            "enable_push": settings.enable_push,
            "initial_window_size": settings.initial_window_size,
            "connection_window": conn.outbound_flow_control_window,
        }).encode()
        conn.send_headers(stream_id, [(":status", "200"), ("content-type", "application/json"), ("content-length", str(len(body)))])
        conn.send_data(stream_id, body, end_stream=True)
        return True
    if path.startswith("/megabyte"):
        size = 1 << 20
        conn.send_headers(stream_id, [(":status", "200"), ("content-length", str(size))])
        chunk = conn.max_outbound_frame_size
        for offset in range(0, size, chunk):
            piece = min(chunk, size - offset)
            conn.send_data(stream_id, b"m" * piece, end_stream=offset + piece == size)
        return True
    if path.startswith("/ping"):
        conn.ping(b"courier!")
        conn.send_headers(stream_id, [(":status", "200"), ("content-length", "5")])
        conn.send_data(stream_id, b"hello", end_stream=True)
        return True
    conn.send_headers(stream_id, [(":status", "404"), ("content-length", "0")], end_stream=True)
    return True


def main():
    directory, port = sys.argv[1], int(sys.argv[2])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(directory, "server.pem"), os.path.join(directory, "server.key"))
    context.set_alpn_protocols(["h2"])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    while True:
        raw, _ = listener.accept()
        try:
            secured = context.wrap_socket(raw, server_side=True)
        except (OSError, ssl.SSLError):
            raw.close()
            continue
        threading.Thread(target=handle, args=(secured,), daemon=True).start()


if __name__ == "__main__":
    main()
