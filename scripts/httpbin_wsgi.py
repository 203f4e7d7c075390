"""httpbin for hypercorn (the HTTPS conformance servers): hypercorn 0.18's WSGI wrapper never
starts a response whose body iterable yields nothing (httpbin's 401 challenge, for one) and
answers 500 instead, so every body here yields at least one (possibly empty) chunk.

    PYTHONPATH=scripts hypercorn httpbin_wsgi:app
"""

import httpbin


def app(environ, start_response):
    body = httpbin.app(environ, start_response)
    try:
        produced = False
        for chunk in body:
            produced = True
            yield chunk
        if not produced:
            yield b""
    finally:
        if hasattr(body, "close"):
            body.close()
