"""httpbin as the conformance suite's servers run it: under gunicorn (plain HTTP/1.1, `wsgi`) and
under hypercorn (HTTPS with HTTP/2 and HTTP/1.1, `app`), with a record of when it wrote.

    PYTHONPATH=scripts gunicorn httpbin_wsgi:wsgi
    PYTHONPATH=scripts hypercorn httpbin_wsgi:app

A record of when the server wrote, so that a timing case can tell a client's timer that fired
early from a server that held its bytes back: a request whose query has `courier-writes=KEY`
records, under KEY, when it arrived (under hypercorn, before it waits for a thread), when the app
started on it, when each body chunk was handed
to the connection, and when the body ended (or the client went away). `/courier/writes?key=KEY`
answers JSON {"events": [{"name": N, "at": SECONDS}, ...], "done": bool}, times on the server's
monotonic clock; `done` once the body ended. The records live as files in COURIER_WRITES_DIR (shared by
every worker process; `scripts/test` makes it), or in this process's memory without it.

A gate, so that a case can tell whether a call ended before the server answered without a
stopwatch: `/courier/gate?key=KEY` holds its response (before the head; with `head=N`, after the
head and N bytes) until `/courier/open?key=KEY` opens it, or for 60 s at most (a client that never
opens it must not hold a thread for ever). The record under KEY gets `held` when it starts
holding. `/courier/open` answers {"was": "held"} when it opened the gate itself, {"was":
"released"} when the 60 s ran out first, {"was": "unknown"} for a key no gate holds; a call that
ended "at once" finds the gate still held however busy the machine is.

Two things hypercorn 0.18 does that a timing case would otherwise measure:
- it runs a WSGI app on the event loop's default thread pool, min(32, cores + 4) threads: six
  here. HTTP/2 puts every request of a client on one connection, so on one worker, and a request
  the client gave up on (an 8 s delay, a 10 s drip) holds its thread until it ends: a few of
  those and the next request waits seconds for a thread before httpbin sees it. `app` gives each
  worker's loop 256 threads.
- its WSGI wrapper never starts a response whose body iterable yields nothing (httpbin's 401
  challenge, for one) and answers 500 instead, so every body here yields at least one (possibly
  empty) chunk.
"""

import asyncio
import concurrent.futures
import json
import os
import threading
import time
import urllib.parse

import httpbin
from hypercorn.middleware import AsyncioWSGIMiddleware

_RECORDS = {}
_LOCK = threading.Lock()
_DIRECTORY = os.environ.get("COURIER_WRITES_DIR")
_KEY_CHARACTERS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


def _key(query_string):
    values = urllib.parse.parse_qs(query_string).get("courier-writes", [])
    # A key names a file: letters, digits, '-' and '_' only.
    if values and 0 < len(values[0]) <= 100 and set(values[0]) <= _KEY_CHARACTERS:
        return values[0]
    return None


def _record(key, event):
    line = "%s %.6f\n" % (event, time.monotonic())
    if _DIRECTORY:
        with open(os.path.join(_DIRECTORY, key), "a") as file:
            file.write(line)
    else:
        with _LOCK:
            _RECORDS[key] = _RECORDS.get(key, "") + line


def _read(key):
    if _DIRECTORY:
        try:
            with open(os.path.join(_DIRECTORY, key)) as file:
                text = file.read()
        except FileNotFoundError:
            text = ""
    else:
        with _LOCK:
            text = _RECORDS.get(key, "")
    events = []
    for line in text.splitlines():
        name, _, seconds = line.partition(" ")
        events.append({"name": name, "at": float(seconds)})
    return {"events": events, "done": any(event["name"] in ("end", "closed") for event in events)}


GATE_LIMIT = 60.0
_OPENED = set()


def _flag(key, name):
    return os.path.join(_DIRECTORY, "%s.%s" % (key, name)) if _DIRECTORY else None


def _set_flag(key, name):
    path = _flag(key, name)
    if path:
        open(path, "a").close()
    else:
        with _LOCK:
            _OPENED.add((key, name))


def _has_flag(key, name):
    path = _flag(key, name)
    if path:
        return os.path.exists(path)
    with _LOCK:
        return (key, name) in _OPENED


def _hold(key):
    """Waits until the gate under `key` is opened or GATE_LIMIT passes."""
    _record(key, "held")
    _set_flag(key, "held")
    deadline = time.monotonic() + GATE_LIMIT
    while not _has_flag(key, "open"):
        if time.monotonic() >= deadline:
            _set_flag(key, "released")
            return
        time.sleep(0.01)


def _gate(key, head):
    if head is None:
        _hold(key)
    yield b"*" * (head or 0)
    if head is not None:
        _hold(key)
        yield b"*" * head


def _json(start_response, value, status="200 OK"):
    body = json.dumps(value).encode()
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]


def _courier(path, query, start_response):
    """The endpoints under /courier/."""
    key = _key("courier-writes=" + query.get("key", [""])[0])
    if key is None:
        return _json(start_response, {"error": "key: letters, digits, '-' and '_', at most 100"}, "400 Bad Request")
    if path == "/courier/writes":
        return _json(start_response, _read(key))
    if path == "/courier/open":
        if _has_flag(key, "released"):
            was = "released"
        elif _has_flag(key, "held"):
            was = "held"
        else:
            was = "unknown"
        _set_flag(key, "open")
        return _json(start_response, {"was": was})
    if path == "/courier/gate":
        head = query.get("head", [None])[0]
        head = min(max(int(head), 0), 1 << 20) if head is not None and head.isdigit() else None
        start = lambda: start_response("200 OK", [("Content-Type", "application/octet-stream")])
        if head is not None:
            start()
            return _chunks(_gate(key, head), key)
        # Before the head: hold first, then start the response.
        def held():
            _hold(key)
            start()
            yield b""
        return _chunks(held(), key)
    return _json(start_response, {"error": "no such endpoint"}, "404 Not Found")


def wsgi(environ, start_response):
    """httpbin, recording writes for a request that asks, with the /courier/ endpoints."""
    path = environ.get("PATH_INFO", "")
    if path.startswith("/courier/"):
        return _courier(path, urllib.parse.parse_qs(environ.get("QUERY_STRING", "")), start_response)
    key = _key(environ.get("QUERY_STRING", ""))
    if key is not None:
        _record(key, "started")
    return _chunks(httpbin.app(environ, start_response), key)


def _chunks(body, key):
    ended = False
    try:
        produced = False
        for chunk in body:
            produced = True
            yield chunk
            # The server asks for the next chunk once it has handed this one to the connection.
            if key is not None:
                _record(key, "wrote")
        if not produced:
            yield b""
        ended = True
    finally:
        if key is not None:
            _record(key, "end" if ended else "closed")
        if hasattr(body, "close"):
            body.close()


_wsgi_on_loop = AsyncioWSGIMiddleware(wsgi, max_body_size=16 * 1024 * 1024)
_LOOPS_WITH_POOLS = set()


async def app(scope, receive, send):
    """`wsgi` for hypercorn: each worker's event loop gets a pool of 256 threads before its first
    request, and a recorded request's arrival is recorded before it waits for a thread."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    loop = asyncio.get_running_loop()
    if id(loop) not in _LOOPS_WITH_POOLS:
        _LOOPS_WITH_POOLS.add(id(loop))
        loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(max_workers=256, thread_name_prefix="wsgi"))
    if scope["type"] == "http":
        key = _key(scope.get("query_string", b"").decode("latin-1"))
        if key is not None:
            _record(key, "arrived")
    await _wsgi_on_loop(scope, receive, send)
