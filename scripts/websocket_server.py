#!/usr/bin/env python3
"""WebSocket peers for the integration tests, on three ports of 127.0.0.1.

    scripts/websocket_server.py PORT RAW_PORT DEFLATE_PORT

PORT: Python's `websockets` (PyPI), a real RFC 6455 server:
  /echo                  echoes every message, text or binary; answers a close
  /close?code=C&reason=R closes at once with that code and reason
  /flood?count=N&size=S  sends N binary messages of S bytes, then closes with 1000
  /chat                  chooses the subprotocol chat.v2 when offered, then echoes
  /headers               sends the handshake's request headers back as one JSON text message
  /refuse                answers the handshake 403 with a text body

DEFLATE_PORT: the same paths, with permessage-deflate (RFC 7692) as `websockets` offers it by
default: zlib, server and client windows of 12 bits, the server's context taken over between
messages unless the client asks otherwise, every message compressed.

RAW_PORT: a server that completes the handshake by hand and then writes the frame named by the
path, however wrong (the rules a client must hold, RFC 6455 §5), then reads what the client
answers and reports it on /report?case=NAME (plain HTTP on the same port):
  /raw/NAME              NAME in CASES below
"""
import asyncio
import base64
import hashlib
import json
import struct
import sys
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Response

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


async def handler(ws):
    url = urlsplit(ws.request.path)
    query = parse_qs(url.query)
    if url.path in ("/echo", "/chat"):
        async for message in ws:
            await ws.send(message)
    elif url.path == "/close":
        await ws.close(int(query.get("code", ["1000"])[0]), query.get("reason", [""])[0])
    elif url.path == "/flood":
        count = int(query.get("count", ["100"])[0])
        size = int(query.get("size", ["1024"])[0])
        payload = b"\x00" * size
        try:
            for _ in range(count):
                await ws.send(payload)
        except ConnectionClosed:
            return  # a client that stopped reading and went (the soak cancels such readers)
        await ws.close(1000, "done")
    elif url.path == "/headers":
        await ws.send(json.dumps({name: value for name, value in ws.request.headers.raw_items()}))
        async for message in ws:
            pass


def process_request(connection, request):
    if urlsplit(request.path).path == "/refuse":
        body = b"no sockets for you"
        headers = Headers([("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
        return Response(403, "Forbidden", headers, body)
    return None


def select_subprotocol(connection, offered):
    return "chat.v2" if "chat.v2" in offered else None


def frame(first, payload=b"", length=None):
    """A server frame (never masked) with the given first byte."""
    n = len(payload) if length is None else length
    if n < 126:
        head = bytes([first, n])
    elif n < 65536:
        head = bytes([first, 126]) + struct.pack("!H", n)
    else:
        head = bytes([first, 127]) + struct.pack("!Q", n)
    return head + payload


CASES = {
    "masked": bytes([0x81, 0x80 | 1]) + b"\x01\x02\x03\x04" + bytes([ord("x") ^ 1]),
    "rsv1": frame(0xC1, b"x"),
    "rsv2": frame(0xA1, b"x"),
    "opcode3": frame(0x83),
    "opcode11": frame(0x8B),
    "long-ping": frame(0x89, b"p" * 126),
    "fragmented-ping": frame(0x09, b"p"),
    "lone-continuation": frame(0x80, b"x"),
    "nested-message": frame(0x01, b"a") + frame(0x81, b"b"),
    "bad-utf8": frame(0x81, b"\xc0\xaf"),
    "bad-utf8-split": frame(0x01, "κό".encode()) + frame(0x80, b"\xed\xa0\x80"),
    "bad-close-code": frame(0x88, struct.pack("!H", 1005)),
    "one-byte-close": frame(0x88, b"\x03"),
    "bad-close-reason": frame(0x88, struct.pack("!H", 1000) + b"\xff"),
    "huge": frame(0x82, length=1 << 40),
    "fragments": frame(0x01, "Hel".encode()) + frame(0x89, b"ping") + frame(0x80, "lo".encode()),
    "server-close": frame(0x88, struct.pack("!H", 4001) + "bye".encode()),
}
reports = {}


async def raw_client(reader, writer):
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        writer.close()
        return
    lines = head.decode("latin-1").split("\r\n")
    target = lines[0].split(" ")[1]
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    path = urlsplit(target)
    if path.path == "/report":
        name = parse_qs(path.query).get("case", [""])[0]
        body = json.dumps(reports.get(name)).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
        await writer.drain()
        writer.close()
        return
    name = path.path.rsplit("/", 1)[-1]
    key = headers.get("sec-websocket-key", "")
    accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
    writer.write(
        ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         "Sec-WebSocket-Accept: %s\r\n\r\n" % accept).encode() + CASES.get(name, b""))
    await writer.drain()
    # What the client sends back: its frames' opcodes and close codes, until it closes.
    answer = []
    try:
        while True:
            first, second = await reader.readexactly(2)
            n = second & 0x7F
            if n == 126:
                n = struct.unpack("!H", await reader.readexactly(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", await reader.readexactly(8))[0]
            mask = await reader.readexactly(4) if second & 0x80 else b"\0\0\0\0"
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(await reader.readexactly(n)))
            entry = {"opcode": first & 0x0F, "masked": bool(second & 0x80), "payload": data.hex()}
            if first & 0x0F == 8 and len(data) >= 2:
                entry["code"] = struct.unpack("!H", data[:2])[0]
            answer.append(entry)
            reports[name] = answer
            if first & 0x0F == 8:
                break
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    reports[name] = answer
    writer.close()


async def main():
    port, raw_port, deflate_port = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    async with serve(handler, "127.0.0.1", port, process_request=process_request, select_subprotocol=select_subprotocol,
                     max_size=None, compression=None):
        async with serve(handler, "127.0.0.1", deflate_port, process_request=process_request,
                         select_subprotocol=select_subprotocol, max_size=None, compression="deflate"):
            raw = await asyncio.start_server(raw_client, "127.0.0.1", raw_port)
            async with raw:
                await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main())
